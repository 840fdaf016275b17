"""The per-env step's argument bundles and their builders.

The step kernels (``engine.step``, ``engine.batch``) take bundles of arrays with a leading env
axis (``i`` picks the env): ``EnvOptions`` (what kind of env, rewards, limits), ``EnvTables``
(the framed levels), ``EnvState`` (positions, counters, observations, masks) and ``EnvScratch``
(work buffers, with the exhaustion test's ``EnvSearch`` tables or None), built by
``new_env_options``, ``env_tables``, ``new_env_state`` and ``new_env_scratch``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from soko_gym.engine.actions import KIND_MACRO, KIND_MOVE, KIND_PUSH
from soko_gym.engine.constants import (
    BOX_AT_DTYPE,
    DIST_DTYPE,
    HASH_DTYPE,
    SQUARE_DTYPE,
    STAMP_DTYPE,
)
from soko_gym.engine.corral import N_INFO
from soko_gym.engine.exhaust import N_COUNTERS, N_PARAMS, PARAM_BUDGET, PARAM_MAX_BUDGET
from soko_gym.engine.zobrist import zobrist_table

EnvOptions = namedtuple(
    "EnvOptions",
    [
        "kind",
        "rewards",
        "max_steps",
        "deadlock_termination",
        "noop_action",
        "deadlock_mask",
        "deadlock_search",
    ],
)
EnvOptions.__doc__ = """What kind of env steps and how (the same for every env of a batch).

Fields:
    kind: ``actions.KIND_MOVE``, ``KIND_PUSH`` or ``KIND_MACRO`` (int).
    rewards: float64[4] step, box_on, box_off and solved rewards (``RewardScheme`` order).
    max_steps: truncate an episode after this many actions; 0: never (int).
    deadlock_termination: end an episode on a simple deadlock (bool).
    noop_action: the move env's ``NOOP_ACTION`` is legal (bool).
    deadlock_mask: the mask leaves out actions whose push makes a simple deadlock, unless
        every legal action does (bool).
    deadlock_search: with a value > 0, the mask also leaves out the actions after which the
        exhaustion test (``deadlock_mask.mask_searched_deadlocks``), storing at most this many
        positions, proves the level lost, unless every action left does; 0: no search (int).
"""

EnvTables = namedtuple(
    "EnvTables", ["cells", "dead", "start_boxes", "n_boxes", "start_player", "offsets"]
)
EnvTables.__doc__ = """The framed levels the envs play, by table slot, and the frame's steps.

Fields:
    cells: uint8[L, n_cells] table cell flags (engine flags plus DEAD and DRAWN_WALL).
    dead: uint8[L, n_cells] 1 on simple dead squares.
    start_boxes: int32[L, B] start box squares (the first ``n_boxes[slot]`` used).
    n_boxes: int64[L] boxes per slot.
    start_player: int64[L] start player square.
    offsets: int32[4] flat index step per direction.
"""

EnvState = namedtuple(
    "EnvState",
    [
        "slot",
        "player",
        "n_boxes",
        "on_goal",
        "steps",
        "moves",
        "pushes",
        "box_at",
        "box_pos",
        "obs",
        "masks",
    ],
)
EnvState.__doc__ = """The position and episode counters of N envs (row ``i``: env ``i``).

Fields:
    slot: int64[N] table slot played (-1: none yet, or a slot whose level was replaced).
    player, n_boxes, on_goal: int64[N] player square, boxes, boxes on goals.
    steps, moves, pushes: int64[N] actions, player moves and pushes of the episode.
    box_at: int16[N, n_cells] box index per square, -1 for none.
    box_pos: int32[N, B] box squares.
    obs: uint8[N, C * n_cells] observation planes.
    masks: bool[N, n_actions] legal actions.
"""

EnvScratch = namedtuple(
    "EnvScratch",
    "stamps seen stack queue parent dist plan parent8 walk trail lurd search",
)
EnvScratch.__doc__ = """Work buffers of N envs (row ``i``: env ``i``); only ``lurd`` is read back.

Fields:
    stamps: uint32[N, n_cells + 1] reachability stamps (reset when the env's level changes).
    seen: uint32[N, n_cells + 1] deadlock-test stamps.
    stack: int32[N, 4 * n_cells] flood fill stack, walk queue.
    queue, parent: int32[N, M]; dist: uint16[N, M]; plan: int8[N, M]: box path search, with
        ``M = 4 * n_cells`` for the macro kind (1 otherwise: unused).
    parent8, walk: int8[N, n_cells] walk search and the walk found.
    trail: int32[N, n_cells] deadlock-test cluster.
    lurd: uint8[N, R] receives the LURD letters (ASCII) of the last action when ``R > 0``; ``R =
        lurd_capacity(kind, n_cells)`` holds any action's letters; ``R = 0`` records nothing.
    search: the ``EnvSearch`` tables of ``EnvOptions.deadlock_search``, or None without a
        search: the kernels are then compiled without the search's code (``step._search_mask``).
"""

EnvSearch = namedtuple(
    "EnvSearch",
    "zobrist box_at nodes hashes players rows pos pushes cstamp region barrier info params "
    "counters cleared",
)
EnvSearch.__doc__ = """The exhaustion test's tables of N envs (``EnvOptions.deadlock_search``).

Fields: those of ``engine.exhaust.ExhaustTables`` of the same name, with a leading env axis
(row ``i``: env ``i``), except ``zobrist``: uint64[n_cells], one table for all. ``nodes`` is
int32[N, budget, B + 2] for ``B`` boxes at most; the searches share the envs' ``stamps``,
``stack``, ``seen`` and ``trail``. ``cleared``: int32[N, A], the actions one mask search
cleared (``A``: the most legal actions a position of the kind has).
"""


def lurd_capacity(kind: int, n_cells: int) -> int:
    """Most LURD letters one action of ``kind`` makes on a frame of ``n_cells`` squares.

    A move is one letter; a push, a walk (under ``n_cells`` steps) and the push; a macro move,
    at most ``4 * n_cells`` pushes (a fewest-push path visits each box square and player side at
    most once), each a walk and a push.
    """
    if kind == KIND_MOVE:
        return 1
    if kind == KIND_PUSH:
        return n_cells
    return 4 * n_cells * n_cells


def new_env_options(
    kind: int,
    rewards: np.ndarray,
    max_steps: int = 0,
    deadlock_termination: bool = False,
    noop_action: bool = False,
    deadlock_mask: bool = False,
    deadlock_search: int = 0,
) -> EnvOptions:
    """An ``EnvOptions`` bundle with the exact field types the kernels are compiled for."""
    return EnvOptions(
        int(kind),
        np.array(rewards, dtype=np.float64).reshape(4),
        int(max_steps),
        bool(deadlock_termination),
        bool(noop_action),
        bool(deadlock_mask),
        int(deadlock_search),
    )


def env_tables(
    cells: np.ndarray,
    dead: np.ndarray,
    start_boxes: np.ndarray,
    n_boxes: np.ndarray,
    start_player: np.ndarray,
    offsets: np.ndarray,
) -> EnvTables:
    """An ``EnvTables`` bundle over existing arrays (no copy: later slot fills are seen).

    Raises:
        TypeError: when an array has another dtype than ``EnvTables`` documents.
    """
    tables = EnvTables(cells, dead, start_boxes, n_boxes, start_player, offsets)
    dtypes = (np.uint8, np.uint8, SQUARE_DTYPE, np.int64, np.int64, SQUARE_DTYPE)
    for name, array, dtype in zip(EnvTables._fields, tables, dtypes, strict=True):
        if array.dtype != dtype:
            raise TypeError(f"EnvTables.{name} must be {np.dtype(dtype)}, got {array.dtype}")
    return tables


def new_env_state(
    n_env: int, n_cells: int, max_boxes: int, n_planes: int, n_actions: int
) -> EnvState:
    """A zeroed ``EnvState`` for ``n_env`` envs (every slot -1: reset before stepping)."""
    return EnvState(
        np.full(n_env, -1, dtype=np.int64),
        np.zeros(n_env, dtype=np.int64),
        np.zeros(n_env, dtype=np.int64),
        np.zeros(n_env, dtype=np.int64),
        np.zeros(n_env, dtype=np.int64),
        np.zeros(n_env, dtype=np.int64),
        np.zeros(n_env, dtype=np.int64),
        np.full((n_env, n_cells), -1, dtype=BOX_AT_DTYPE),
        np.zeros((n_env, max(1, max_boxes)), dtype=SQUARE_DTYPE),
        np.zeros((n_env, n_planes * n_cells), dtype=np.uint8),
        np.zeros((n_env, n_actions), dtype=bool),
    )


def new_env_scratch(
    n_env: int,
    n_cells: int,
    kind: int,
    record_lurd: bool,
    max_boxes: int = 1,
    deadlock_search: int = 0,
) -> EnvScratch:
    """``EnvScratch`` for ``n_env`` envs of ``kind``; ``record_lurd``: keep each action's LURD.

    ``deadlock_search`` > 0 sizes the exhaustion test's tables for that many positions and
    ``max_boxes`` boxes (``EnvOptions.deadlock_search``).
    """
    n = n_cells
    big = 4 * n if kind == KIND_MACRO else 1  # box path buffers only where they are used
    search = None
    if deadlock_search > 0:
        search = new_env_search(n_env, n, kind, max_boxes, deadlock_search)
    return EnvScratch(
        np.zeros((n_env, n + 1), dtype=STAMP_DTYPE),
        np.zeros((n_env, n + 1), dtype=np.uint32),
        np.empty((n_env, 4 * n), dtype=SQUARE_DTYPE),
        np.empty((n_env, big), dtype=SQUARE_DTYPE),
        np.empty((n_env, big), dtype=SQUARE_DTYPE),
        np.empty((n_env, big), dtype=DIST_DTYPE),
        np.empty((n_env, big), dtype=np.int8),
        np.empty((n_env, n), dtype=np.int8),
        np.empty((n_env, n), dtype=np.int8),
        np.empty((n_env, n), dtype=SQUARE_DTYPE),
        np.zeros((n_env, lurd_capacity(kind, n) if record_lurd else 0), dtype=np.uint8),
        search,
    )


def new_env_search(n_env: int, n_cells: int, kind: int, max_boxes: int, budget: int) -> EnvSearch:
    """``EnvSearch`` for ``n_env`` envs of ``kind``: searches of at most ``budget`` positions."""
    n = n_cells
    nb = max(1, max_boxes)
    most_actions = nb * n if kind == KIND_MACRO else 4 * nb
    cap = 1 << max(2, (2 * budget - 1).bit_length())  # as ``new_exhaust_tables`` sizes it
    params = np.zeros((n_env, N_PARAMS), dtype=np.int64)
    params[:, PARAM_BUDGET] = budget
    params[:, PARAM_MAX_BUDGET] = budget
    return EnvSearch(
        zobrist_table(n),
        np.full((n_env, n), -1, dtype=BOX_AT_DTYPE),
        np.zeros((n_env, budget, nb + 2), dtype=SQUARE_DTYPE),
        np.zeros((n_env, cap), dtype=HASH_DTYPE),
        np.full((n_env, cap), -1, dtype=np.int32),
        np.zeros((n_env, cap), dtype=np.int32),
        np.zeros((n_env, nb), dtype=SQUARE_DTYPE),
        np.zeros((n_env, 4 * nb), dtype=SQUARE_DTYPE),
        np.zeros((n_env, n + 1), dtype=np.int32),
        np.zeros((n_env, n), dtype=SQUARE_DTYPE),
        np.zeros((n_env, 4 * nb), dtype=SQUARE_DTYPE),
        np.zeros((n_env, 4 * nb, N_INFO), dtype=np.int32),
        params,
        np.zeros((n_env, N_COUNTERS), dtype=np.int64),
        np.zeros((n_env, most_actions), dtype=np.int32),
    )
