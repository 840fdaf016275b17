"""One environment step on a framed board: the per-env step kernel and its building blocks.

The environments frame every level in a fixed ``H x W`` grid, so a square index is also the
cell index of an observation plane. ``_env_step`` and ``_env_reset`` are THE implementation of
one env's transition: action decoding, the move, reward, episode end, the illegal-action no-op
and the action mask. The single envs call them for their one env, the batch kernels
(``engine.batch``) loop over them, so both behave identically by construction.

Each env kind gets kernels of its own (``env_kernels(kind)``: ``env_reset_push`` and
``env_step_push`` for the push kind, and so on): the kind is a constant inside them, so numba
drops the other kinds' branches before typing and a push env never compiles the macro or move
code (a third of an env's cold start).

Their arguments are bundles of arrays with a leading env axis (``i`` picks the env):
``EnvOptions`` (what kind of env, rewards, limits), ``EnvTables`` (the framed levels),
``EnvState`` (positions, counters, observations, masks) and ``EnvScratch`` (work buffers),
built by ``new_env_options``, ``env_tables``, ``new_env_state`` and ``new_env_scratch``.

Observation ``obs``: uint8[C * n_cells], plane ``p`` at ``[p * n_cells, (p + 1) * n_cells)`` in the
order of ``constants.PLANE_*``. Table cells (``cells``) carry the engine flags plus ``DEAD`` and
``DRAWN_WALL`` for the static planes.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import njit, types
from numba.extending import overload, register_jitable

from soko_gym.engine.actions import (
    KIND_MACRO,
    KIND_MOVE,
    KIND_PUSH,
    NOOP_ACTION,
    macro_action,
    macro_parts,
    square_push_action,
    square_push_parts,
)
from soko_gym.engine.constants import (
    BOX_AT_DTYPE,
    DEAD,
    DIST_DTYPE,
    DIST_INF,
    DRAWN_WALL,
    FLOOR,
    GOAL,
    HASH_DTYPE,
    PLANE_BOX,
    PLANE_DEAD,
    PLANE_FLOOR,
    PLANE_GOAL,
    PLANE_PLAYER,
    PLANE_WALL,
    SQUARE_DTYPE,
    STAMP_DTYPE,
)
from soko_gym.engine.corral import N_INFO
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.exhaust import (
    EXHAUST_DEADLOCK,
    N_COUNTERS,
    N_PARAMS,
    PARAM_BUDGET,
    PARAM_MAX_BUDGET,
    ExhaustTables,
    exhaust_deadlock,
)
from soko_gym.engine.reach import player_path, reach_player, reset_stamps
from soko_gym.engine.zobrist import zobrist_table

# What an action did (returned by the step kernels).
ACT_MOVE = 0  # the player stepped (or walked) without pushing
ACT_PUSH = 1  # at least one box moved
ACT_ILLEGAL = 2  # nothing changed
ACT_NOOP = 3  # the explicit no-op action of the move env


@njit(cache=True, nogil=True)
def write_planes(cells, box_pos, n_boxes, player, obs):
    """Write every observation plane of one position.

    Args:
        cells: uint8[n_cells] table cell flags (engine flags plus DEAD and DRAWN_WALL).
        box_pos: int32[>= n_boxes] box squares.
        n_boxes: number of boxes in use.
        player: player square.
        obs: uint8[C * n_cells] receives the planes; C is 5, or 6 with the dead-square plane.
    """
    n = cells.shape[0]
    n_planes = obs.shape[0] // n
    obs[:] = 0
    for sq in range(n):
        c = cells[sq]
        if c & DRAWN_WALL:
            obs[PLANE_WALL * n + sq] = 1
        if c & FLOOR:
            obs[PLANE_FLOOR * n + sq] = 1
            if c & GOAL:
                obs[PLANE_GOAL * n + sq] = 1
            if n_planes > PLANE_DEAD and c & DEAD:
                obs[PLANE_DEAD * n + sq] = 1
    for b in range(n_boxes):
        obs[PLANE_BOX * n + box_pos[b]] = 1
    obs[PLANE_PLAYER * n + player] = 1


@njit(cache=True, nogil=True)
def place_boxes(box_at, box_pos, start_boxes, n_boxes):
    """Reset occupancy to a start position.

    Args:
        box_at: int16[n_cells] receives the box index per square, -1 for none.
        box_pos: int32[>= n_boxes] receives the box squares.
        start_boxes: int32[>= n_boxes] start squares.
        n_boxes: number of boxes.

    Returns:
        Number of boxes.
    """
    box_at[:] = -1
    for b in range(n_boxes):
        box_pos[b] = start_boxes[b]
        box_at[start_boxes[b]] = b
    return n_boxes


@njit(cache=True, nogil=True)
def count_on_goal(cells, box_pos, n_boxes):
    """Number of boxes standing on goals (``cells``: uint8[n_cells], ``box_pos``: int32[>= n])."""
    k = 0
    for b in range(n_boxes):
        if cells[box_pos[b]] & GOAL:
            k += 1
    return k


@njit(cache=True, nogil=True)
def _move_box(cells, box_at, box_pos, obs, b, src, dst):
    """Move box ``b`` from ``src`` to ``dst`` and its plane bit; returns the on-goal change."""
    n = cells.shape[0]
    box_at[src] = -1
    box_at[dst] = b
    box_pos[b] = dst
    obs[PLANE_BOX * n + src] = 0
    obs[PLANE_BOX * n + dst] = 1
    return (1 if cells[dst] & GOAL else 0) - (1 if cells[src] & GOAL else 0)


@njit(cache=True, nogil=True)
def _move_player(obs, n, src, dst):
    obs[PLANE_PLAYER * n + src] = 0
    obs[PLANE_PLAYER * n + dst] = 1


@njit(cache=True, nogil=True)
def move_step(cells, box_at, box_pos, offsets, obs, player, d):
    """One player step in direction ``d``; a box in front is pushed when the square beyond is free.

    Args:
        cells: uint8[n_cells] table cell flags.
        box_at: int16[n_cells] box index per square; updated.
        box_pos: int32[n_boxes] box squares; updated.
        offsets: int32[4] flat index step per direction (up, down, left, right).
        obs: uint8[C * n_cells] observation planes; updated.
        player: player square.
        d: direction 0..3.

    Returns:
        (ACT_* status, new player square, change in boxes on goal, square the box moved to or -1).
    """
    n = cells.shape[0]
    nxt = player + offsets[d]
    if not (cells[nxt] & FLOOR):
        return ACT_ILLEGAL, player, 0, -1
    b = box_at[nxt]
    if b < 0:
        _move_player(obs, n, player, nxt)
        return ACT_MOVE, nxt, 0, -1
    dest = nxt + offsets[d]
    if not (cells[dest] & FLOOR) or box_at[dest] >= 0:
        return ACT_ILLEGAL, player, 0, -1
    delta = _move_box(cells, box_at, box_pos, obs, b, nxt, dest)
    _move_player(obs, n, player, nxt)
    return ACT_PUSH, nxt, delta, dest


@njit(cache=True, nogil=True)
def move_mask(cells, box_at, offsets, player, mask):
    """Write which of the four steps change the position (``mask``: bool[>= 4]; rest untouched)."""
    for d in range(4):
        nxt = player + offsets[d]
        ok = False
        if cells[nxt] & FLOOR:
            if box_at[nxt] < 0:
                ok = True
            else:
                dest = nxt + offsets[d]
                ok = (cells[dest] & FLOOR) != 0 and box_at[dest] < 0
        mask[d] = ok


@njit(cache=True, nogil=True)
def push_step(cells, box_at, box_pos, offsets, obs, player, square, d, stamps, queue, parent, walk):
    """Walk to the push side of the box on ``square`` by a shortest path and push it once.

    Args:
        cells, box_at, box_pos, offsets, obs: as in ``move_step``.
        player: player square.
        square: square of the box to push.
        d: direction the box moves.
        stamps: uint32[n_cells + 1] stamp buffer (scratch).
        queue: int32[n_cells] scratch.
        parent: int8[n_cells] scratch.
        walk: int8[n_cells] receives the directions of the walk before the push.

    Returns:
        (ACT_PUSH or ACT_ILLEGAL, new player square, walk length, change in boxes on goal).
    """
    n = cells.shape[0]
    if square < 0 or square >= n:
        return ACT_ILLEGAL, player, 0, 0
    b = box_at[square]
    if b < 0:
        return ACT_ILLEGAL, player, 0, 0
    dest = square + offsets[d]
    if not (cells[dest] & FLOOR) or box_at[dest] >= 0:
        return ACT_ILLEGAL, player, 0, 0
    stand = square - offsets[d]
    if not (cells[stand] & FLOOR):
        return ACT_ILLEGAL, player, 0, 0
    k = player_path(box_at, offsets, player, stand, stamps, queue, parent, walk)
    if k < 0:
        return ACT_ILLEGAL, player, 0, 0
    delta = _move_box(cells, box_at, box_pos, obs, b, square, dest)
    _move_player(obs, n, player, square)
    return ACT_PUSH, square, k, delta


@njit(cache=True, nogil=True)
def push_mask(cells, box_at, box_pos, n_boxes, offsets, player, stamps, stack, mask):
    """Write the legal push actions (``actions.square_push_action``) of a position.

    Args:
        cells, box_at, box_pos, offsets: as in ``move_step``.
        n_boxes: number of boxes in ``box_pos``.
        player: player square.
        stamps: uint32[n_cells + 1] stamp buffer; left holding the player's reach.
        stack: int32[n_cells] scratch.
        mask: bool[4 * n_cells] receives the mask.

    Returns:
        Number of legal pushes.
    """
    mask[:] = False
    reach_player(box_at, offsets, player, stamps, stack)
    mark = stamps[stamps.shape[0] - 1]
    k = 0
    for b in range(n_boxes):
        sq = box_pos[b]
        for d in range(4):
            dest = sq + offsets[d]
            if stamps[sq - offsets[d]] == mark and (cells[dest] & FLOOR) and box_at[dest] < 0:
                mask[square_push_action(sq, d)] = True
                k += 1
    return k


@njit(cache=True, nogil=True)
def box_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue):
    """Fewest pushes that bring the box on ``src`` to each square, other boxes fixed.

    Breadth-first over (box square, player side) states; the player walks freely between
    pushes. Sides the player reaches in the same fill are one state, so each box square costs at
    most one flood fill per player region around it. ``box_at`` is restored on return.

    Args:
        cells: uint8[n_cells] cell flags.
        box_at: int16[n_cells] box index per square (the box on ``src`` included).
        offsets: int32[4] flat index step per direction.
        player: player square.
        src: square of the box to move.
        stamps: uint32[n_cells + 1] stamp buffer (scratch).
        stack: int32[n_cells] scratch.
        dist: uint16[4 * n_cells] receives pushes per state ``square * 4 + side``, DIST_INF if
            unreached; ``side`` is the direction from the box to the player.
        parent: int32[4 * n_cells] receives, per reached state, ``previous state * 4 + direction
            of the push that arrived``, or -1 for the start states.
        queue: int32[4 * n_cells] scratch.

    Returns:
        Number of states reached (0 when no box is on ``src``).
    """
    b = box_at[src]
    dist[:] = DIST_INF
    if b < 0:
        return 0
    reach_player(box_at, offsets, player, stamps, stack)
    mark = stamps[stamps.shape[0] - 1]
    tail = 0
    for s in range(4):
        if stamps[src + offsets[s]] == mark:
            dist[src * 4 + s] = 0
            parent[src * 4 + s] = -1
    # one queue entry per box square: the first side reached stands for its whole region
    for s in range(4):
        if dist[src * 4 + s] == 0:
            queue[tail] = src * 4 + s
            tail += 1
            break
    box_at[src] = -1
    head = 0
    while head < tail:
        code = queue[head]
        head += 1
        q = code >> 2
        s = code & 3
        box_at[q] = b
        reach_player(box_at, offsets, q + offsets[s], stamps, stack)
        mark = stamps[stamps.shape[0] - 1]
        here = dist[code]
        for t in range(4):  # sides in the same region share the state's distance
            side = q + offsets[t]
            if stamps[side] == mark and dist[q * 4 + t] == DIST_INF:
                dist[q * 4 + t] = here
                parent[q * 4 + t] = parent[code]
        for d in range(4):
            dest = q + offsets[d]
            if stamps[q - offsets[d]] != mark or not (cells[dest] & FLOOR) or box_at[dest] >= 0:
                continue
            nxt = dest * 4 + (d ^ 1)  # the player ends on the opposite side (up^1 = down ...)
            if dist[nxt] == DIST_INF:
                dist[nxt] = here + 1
                parent[nxt] = code * 4 + d
                queue[tail] = nxt
                tail += 1
        box_at[q] = -1
    box_at[src] = b
    return tail


@register_jitable
def _nearest_side(dist, dst):
    """The fewest-push ``box_paths`` state of ``dst`` (``dst * 4 + side``), or -1.

    The first side wins a tie; -1 when the box never reached ``dst``.
    """
    best = -1
    for s in range(4):
        code = dst * 4 + s
        if dist[code] != DIST_INF and (best < 0 or dist[code] < dist[best]):
            best = code
    return best


@njit(cache=True, nogil=True)
def macro_plan(cells, box_at, offsets, player, src, dst, stamps, stack, dist, parent, queue, plan):
    """The push directions of a fewest-push path of the box on ``src`` to ``dst``.

    Args:
        cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue: as in
            ``box_paths``.
        dst: target square.
        plan: int8[4 * n_cells] receives the directions, first push first.

    Returns:
        Number of pushes, or -1 when no box is on ``src``, ``dst == src`` or ``dst`` is
        unreachable.
    """
    n = cells.shape[0]
    if src < 0 or src >= n or dst < 0 or dst >= n or src == dst or box_at[src] < 0:
        return -1
    box_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue)
    best = _nearest_side(dist, dst)
    if best < 0:
        return -1
    k = dist[best]
    code = best
    for i in range(k - 1, -1, -1):
        link = parent[code]
        plan[i] = link & 3
        code = link >> 2
    return k


@njit(cache=True, nogil=True)
def macro_mask(
    cells, box_at, box_pos, n_boxes, offsets, player, stamps, stack, dist, parent, queue, mask
):
    """Write the legal macro moves (``actions.macro_action``) of a position.

    Args:
        cells, box_at, box_pos, offsets, stamps, stack, dist, parent, queue: as in ``box_paths``.
        n_boxes: number of boxes in ``box_pos``.
        player: player square.
        mask: bool[n_cells * n_cells] receives the mask.

    Returns:
        Number of legal macro moves.
    """
    n = cells.shape[0]
    mask[:] = False
    k = 0
    for b in range(n_boxes):
        src = np.int64(box_pos[b])
        box_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue)
        for sq in range(n):
            if sq == src:
                continue
            if (
                dist[sq * 4] != DIST_INF
                or dist[sq * 4 + 1] != DIST_INF
                or dist[sq * 4 + 2] != DIST_INF
                or dist[sq * 4 + 3] != DIST_INF
            ):
                mask[macro_action(src, sq, n)] = True
                k += 1
    return k


@njit(cache=True, nogil=True, _nrt=False)
def push_is_dead(cells, dead, box_at, offsets, src, dst, seen, trail):
    """Whether moving the box on ``src`` to the free square ``dst`` makes a simple deadlock.

    ``box_at`` is changed for the test and restored. Other arguments as ``is_simple_deadlock``.
    """
    b = box_at[src]
    box_at[src] = -1
    box_at[dst] = b
    lost = is_simple_deadlock(cells, dead, box_at, offsets, dst, seen, trail)
    box_at[dst] = -1
    box_at[src] = b
    return lost


@register_jitable
def _pushed_box(kind, action, player, box_at, offsets, n_cells):
    """``(src, dst)`` of the box ``action`` pushes (macro: its whole move); (-1, -1) for none."""
    if kind == KIND_MOVE:
        if action < 4:
            nxt = player + offsets[action]
            if box_at[nxt] >= 0:
                return nxt, nxt + offsets[action]
        return -1, -1
    if kind == KIND_PUSH:
        sq, d = square_push_parts(action)
        return sq, sq + offsets[d]
    return macro_parts(action, n_cells)


@njit(cache=True, nogil=True, _nrt=False)
def mask_dead_actions(kind, cells, dead, box_at, offsets, player, seen, trail, mask):
    """Clear the legal actions of ``mask`` whose push makes a simple deadlock (``push_is_dead``).

    Args:
        kind: ``KIND_MOVE``, ``KIND_PUSH`` or ``KIND_MACRO``.
        cells, box_at, offsets: as in ``move_step``; ``dead``: uint8[n_cells] dead squares.
        player: player square.
        seen, trail: ``is_simple_deadlock`` scratch.
        mask: the legal actions of ``kind`` (changed in place).

    Returns:
        ``(kept, cleared)``: legal actions left and cleared.
    """
    n = cells.shape[0]
    kept = 0
    cleared = 0
    for a in range(mask.shape[0]):
        if not mask[a]:
            continue
        src, dst = _pushed_box(kind, a, player, box_at, offsets, n)
        if src >= 0 and push_is_dead(cells, dead, box_at, offsets, src, dst, seen, trail):
            mask[a] = False
            cleared += 1
        else:
            kept += 1
    return kept, cleared


@njit(cache=True, nogil=True, _nrt=False)
def mask_searched_deadlocks(
    kind, et, box_at, box_pos, n_boxes, player, budget, dist, parent, queue, mask, cleared
):
    """Clear the actions of ``mask`` after which the exhaustion test proves the level lost.

    When it proves every action of ``mask`` lost, the position is lost whatever is played, and
    ``mask`` is left as it was (a mask without a legal action breaks masked policies).

    Each action that pushes is played on a copy of the position in the search's tables: its
    box moved, the player where the action leaves it (a macro move: beside the box on the side
    its fewest-push path ends, as the step plays it). ``engine.exhaust.exhaust_deadlock`` then
    searches every push from there storing at most ``budget`` positions; the action is cleared
    only when that search runs dry without a solution, a proof, so no action on a solution's
    path is ever cleared. A step that pushes nothing leaves the box set and the player's region
    as they were and is kept.

    Args:
        kind: ``KIND_MOVE``, ``KIND_PUSH`` or ``KIND_MACRO``.
        et: ``engine.exhaust.ExhaustTables`` of the env's level (tables sized for the most boxes
            of its table serve every level of it).
        box_at, box_pos, n_boxes, player: the position (``box_pos`` is changed and restored).
        budget: most positions one search stores.
        dist, parent, queue: ``box_paths`` buffers (macro kind only).
        mask: the legal actions of ``kind`` (changed in place).
        cleared: int32[>= actions in ``mask``] receives the actions cleared.

    Returns:
        The number of actions cleared.
    """
    cells = et.cells
    offsets = et.offsets
    n = cells.shape[0]
    boxes = box_pos[:n_boxes]
    kept = 0
    n_cleared = 0
    last_src = -1
    for a in range(mask.shape[0]):
        if not mask[a]:
            continue
        src, dst = _pushed_box(kind, a, player, box_at, offsets, n)
        if src < 0:
            kept += 1
            continue
        after = src  # a push leaves the player where the box was
        if kind == KIND_MACRO:
            if src != last_src:  # a box's macro actions come one after another
                box_paths(
                    cells, box_at, offsets, player, src, et.stamps, et.stack, dist, parent, queue
                )  # fmt: skip
                last_src = src
            after = dst + offsets[_nearest_side(dist, dst) & 3]  # as ``macro_plan`` ends
        b = box_at[src]
        boxes[b] = dst
        status = exhaust_deadlock(et, boxes, np.int64(after), np.int64(budget))
        boxes[b] = src
        if status == EXHAUST_DEADLOCK:
            mask[a] = False
            cleared[n_cleared] = a
            n_cleared += 1
        else:
            kept += 1
    if kept == 0:  # lost whatever is played: the mask stays whole
        for j in range(n_cleared):
            mask[cleared[j]] = True
        return 0
    return n_cleared


# ---------------------------------------------------------------------------------------------
# The per-env step: bundles and kernels
# ---------------------------------------------------------------------------------------------

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
        exhaustion test (``mask_searched_deadlocks``), storing at most this many positions,
        proves the level lost, unless every action left does; 0: no search (int).
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
        search: the kernels are then compiled without the search's code (``_search_mask``).
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

LURD_ASCII = np.frombuffer(b"udlrUDLR", dtype=np.uint8).copy()  # direction + 4 * is_push

# How the per-env kernels below (and the batch loop over them) are compiled:
# - ``_nrt=False``: they never allocate or keep an array, and without numba's runtime no
#   reference counting is emitted for the arrays inside the bundles; with it, a step costs
#   4 to 10 times more (every use of a bundle counts every array it holds).
# - ``inline="always"`` on ``_env_step`` and its parts: the batch loop gets the step's body
#   instead of a call that passes every bundle per env, and the kind-constant ``kind`` argument
#   of the per-kind kernels reaches every branch on it, which numba then prunes before typing.


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


def compiled(kernel: Any, *args: Any) -> Callable[..., Any]:
    """``kernel`` compiled (or loaded from the cache) for the types of ``args``.

    ``Dispatcher.compile`` returns the compiled function itself: calling it skips numba's
    per-call typing of the arguments, which costs microseconds for bundles of arrays. Call it
    only with arguments of exactly these types (the same bundles, or bundles built alike).
    """
    return kernel.compile(tuple(numba.typeof(a) for a in args))


@njit(cache=True, nogil=True, _nrt=False)
def _record(lurd, at, walk, length, d):
    """Write ``walk[:length]`` and the push ``d`` as LURD letters at ``lurd[at:]``, if they fit."""
    if at + length < lurd.shape[0]:
        for j in range(length):
            lurd[at + j] = LURD_ASCII[walk[j]]
        lurd[at + length] = LURD_ASCII[d + 4]


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _act(kind, cells, offsets, state, scratch, i, action):
    """Decode and apply env i's ``action``.

    Returns:
        (ACT_* status, moves, pushes, change in boxes on goal, square the last moved box ended
        on or -1); an illegal action changes nothing and returns zeros.
    """
    box_at = state.box_at[i]
    box_pos = state.box_pos[i]
    obs = state.obs[i]
    lurd = scratch.lurd[i]
    if kind == KIND_MOVE:
        if action == NOOP_ACTION:
            return ACT_NOOP, 0, 0, 0, -1
        status, p, delta, moved_to = move_step(
            cells, box_at, box_pos, offsets, obs, state.player[i], action
        )
        if status == ACT_ILLEGAL:
            return ACT_ILLEGAL, 0, 0, 0, -1
        state.player[i] = p
        pushes = 1 if status == ACT_PUSH else 0
        if lurd.shape[0] > 0:
            lurd[0] = LURD_ASCII[action + 4 * pushes]
        return status, 1, pushes, delta, moved_to
    stamps = scratch.stamps[i]
    stack = scratch.stack[i]
    parent8 = scratch.parent8[i]
    walk = scratch.walk[i]
    if kind == KIND_PUSH:
        square, d = square_push_parts(action)
        status, p, w, delta = push_step(
            cells,
            box_at,
            box_pos,
            offsets,
            obs,
            state.player[i],
            square,
            d,
            stamps,
            stack,
            parent8,
            walk,
        )
        if status == ACT_ILLEGAL:
            return ACT_ILLEGAL, 0, 0, 0, -1
        state.player[i] = p
        _record(lurd, np.int64(0), walk, w, d)  # int64, not a literal: one compilation
        return ACT_PUSH, w + 1, 1, delta, square + offsets[d]
    src, dst = macro_parts(action, cells.shape[0])
    plan = scratch.plan[i]
    k = np.int64(
        macro_plan(
            cells,
            box_at,
            offsets,
            state.player[i],
            src,
            dst,
            stamps,
            stack,
            scratch.dist[i],
            scratch.parent[i],
            scratch.queue[i],
            plan,
        )
    )
    if k < 0:
        return ACT_ILLEGAL, 0, 0, 0, -1
    p = state.player[i]
    moves = 0
    delta = 0
    sq = src
    for j in range(k):
        d = np.int64(plan[j])
        _, p, w, gd = push_step(
            cells, box_at, box_pos, offsets, obs, p, sq, d, stamps, stack, parent8, walk
        )
        _record(lurd, moves, walk, w, d)
        moves += w + 1
        delta += gd
        sq += offsets[d]
    state.player[i] = p
    return ACT_PUSH, moves, k, delta, dst


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _write_mask(kind, opts, cells, dead, offsets, state, scratch, i):
    """Write env i's action mask into ``state.masks[i]`` (``dead``: the level's dead squares).

    With ``opts.deadlock_mask`` the actions whose push makes a simple deadlock are left out,
    unless every legal action does: the position is lost either way, and a mask without a
    legal action breaks masked policies. With ``opts.deadlock_search`` those too, then the
    ones the exhaustion test proves lose (``mask_searched_deadlocks``), under the same rule.
    """
    _legal_mask(kind, opts, cells, offsets, state, scratch, i)
    if opts.deadlock_mask or opts.deadlock_search > 0:
        kept, cleared = mask_dead_actions(
            np.int64(kind),  # not the literal: one compiled kernel for the three kinds
            cells,
            dead,
            state.box_at[i],
            offsets,
            state.player[i],
            scratch.seen[i],
            scratch.trail[i],
            state.masks[i],
        )
        if kept == 0 and cleared > 0:
            _legal_mask(kind, opts, cells, offsets, state, scratch, i)
        elif opts.deadlock_search > 0:
            _search_mask(
                np.int64(kind), opts.deadlock_search, cells, dead, offsets, state, scratch,
                scratch.search, i,
            )  # fmt: skip


def _search_mask(kind, budget, cells, dead, offsets, state, scratch, search, i):
    """``mask_searched_deadlocks`` on env i's mask: the actions cleared (0 without a search).

    Compiled through its overload below, which picks the body by the type of ``search``: a
    kernel given no ``EnvSearch`` never compiles the search (half an env's cold start).
    """
    if search is None:
        return 0
    return _run_search_mask(kind, budget, cells, dead, offsets, state, scratch, search, i)


@overload(_search_mask, inline="always")
def _search_mask_overload(kind, budget, cells, dead, offsets, state, scratch, search, i):
    if isinstance(search, types.NoneType):
        return lambda kind, budget, cells, dead, offsets, state, scratch, search, i: 0
    return _run_search_mask


@register_jitable
def _run_search_mask(kind, budget, cells, dead, offsets, state, scratch, search, i):
    et = ExhaustTables(
        cells, dead, offsets, search.zobrist, search.box_at[i], search.nodes[i],
        search.hashes[i], search.players[i], search.rows[i], search.pos[i], search.pushes[i],
        scratch.stamps[i], scratch.stack[i], scratch.seen[i], scratch.trail[i],
        search.cstamp[i], search.region[i], search.barrier[i], search.info[i],
        search.params[i], search.counters[i],
    )  # fmt: skip
    return mask_searched_deadlocks(
        kind, et, state.box_at[i], state.box_pos[i], state.n_boxes[i], state.player[i],
        np.int64(budget), scratch.dist[i], scratch.parent[i], scratch.queue[i], state.masks[i],
        search.cleared[i],
    )  # fmt: skip


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _legal_mask(kind, opts, cells, offsets, state, scratch, i):
    """Write env i's legal actions into ``state.masks[i]``."""
    mask = state.masks[i]
    if kind == KIND_MOVE:
        move_mask(cells, state.box_at[i], offsets, state.player[i], mask)
        if opts.noop_action:
            mask[NOOP_ACTION] = True
    elif kind == KIND_PUSH:
        push_mask(
            cells,
            state.box_at[i],
            state.box_pos[i],
            state.n_boxes[i],
            offsets,
            state.player[i],
            scratch.stamps[i],
            scratch.stack[i],
            mask,
        )
    else:
        macro_mask(
            cells,
            state.box_at[i],
            state.box_pos[i],
            state.n_boxes[i],
            offsets,
            state.player[i],
            scratch.stamps[i],
            scratch.stack[i],
            scratch.dist[i],
            scratch.parent[i],
            scratch.queue[i],
            mask,
        )


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _env_reset(kind, opts, tables, state, scratch, i, slot):
    """Start env i's episode on table slot ``slot``: position, planes, counters and mask."""
    cells = tables.cells[slot]
    if slot != state.slot[i]:  # another level: its walls go into the reachability stamps
        reset_stamps(cells, scratch.stamps[i])
    state.slot[i] = slot
    state.n_boxes[i] = place_boxes(
        state.box_at[i], state.box_pos[i], tables.start_boxes[slot], tables.n_boxes[slot]
    )
    state.player[i] = tables.start_player[slot]
    write_planes(cells, state.box_pos[i], state.n_boxes[i], state.player[i], state.obs[i])
    state.on_goal[i] = count_on_goal(cells, state.box_pos[i], state.n_boxes[i])
    state.steps[i] = 0
    state.moves[i] = 0
    state.pushes[i] = 0
    _write_mask(kind, opts, cells, tables.dead[slot], tables.offsets, state, scratch, i)


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _env_step(kind, opts, tables, state, scratch, i, action):
    """Step env i with ``action`` (in range for ``kind``): THE env transition.

    Decodes the action, moves, counts, tests for a simple deadlock after a push (with
    ``opts.deadlock_termination``), pays the reward, ends the episode when solved, deadlocked
    or out of steps, and writes the new mask (without deadlocking pushes with
    ``opts.deadlock_mask``). An illegal action changes nothing but the step
    count: it pays the step reward and leaves the mask as it was. With a nonzero-width
    ``scratch.lurd``, the action's LURD letters go to ``scratch.lurd[i, :moves]``.

    Returns:
        (reward, terminated, truncated, illegal, deadlock, moves, pushes) of this action.
    """
    s = state.slot[i]
    cells = tables.cells[s]
    offsets = tables.offsets
    status, moves, pushes, delta, moved_to = _act(kind, cells, offsets, state, scratch, i, action)
    state.steps[i] += 1
    state.moves[i] += moves
    state.pushes[i] += pushes
    state.on_goal[i] += delta
    solved = state.on_goal[i] == state.n_boxes[i]
    deadlock = False
    if opts.deadlock_termination and pushes > 0 and not solved:
        deadlock = is_simple_deadlock(
            cells,
            tables.dead[s],
            state.box_at[i],
            offsets,
            moved_to,
            scratch.seen[i],
            scratch.trail[i],
        )
    rewards = opts.rewards
    reward = rewards[0]
    if delta > 0:
        reward += rewards[1] * delta
    elif delta < 0:
        reward -= rewards[2] * delta
    if solved:
        reward += rewards[3]
    # as gymnasium.wrappers.TimeLimit: the limit truncates even a step that terminates
    truncated = opts.max_steps > 0 and state.steps[i] >= opts.max_steps
    illegal = status == ACT_ILLEGAL
    if not illegal:  # an illegal action moved nothing: the mask stands
        _write_mask(kind, opts, cells, tables.dead[s], offsets, state, scratch, i)
    return reward, solved or deadlock, truncated, illegal, deadlock, moves, pushes


# The per-kind kernels: ``_env_reset`` / ``_env_step`` with the kind as a constant. Arguments
# and results as theirs (``kind`` left out); ``env_kernels`` picks the pair of a kind.


@njit(cache=True, nogil=True, _nrt=False)
def env_reset_move(opts, tables, state, scratch, i, slot):
    """``_env_reset`` of a move env."""
    _env_reset(KIND_MOVE, opts, tables, state, scratch, i, slot)


@njit(cache=True, nogil=True, _nrt=False)
def env_step_move(opts, tables, state, scratch, i, action):
    """``_env_step`` of a move env."""
    return _env_step(KIND_MOVE, opts, tables, state, scratch, i, action)


@njit(cache=True, nogil=True, _nrt=False)
def env_reset_push(opts, tables, state, scratch, i, slot):
    """``_env_reset`` of a push env."""
    _env_reset(KIND_PUSH, opts, tables, state, scratch, i, slot)


@njit(cache=True, nogil=True, _nrt=False)
def env_step_push(opts, tables, state, scratch, i, action):
    """``_env_step`` of a push env."""
    return _env_step(KIND_PUSH, opts, tables, state, scratch, i, action)


@njit(cache=True, nogil=True, _nrt=False)
def env_reset_macro(opts, tables, state, scratch, i, slot):
    """``_env_reset`` of a macro env."""
    _env_reset(KIND_MACRO, opts, tables, state, scratch, i, slot)


@njit(cache=True, nogil=True, _nrt=False)
def env_step_macro(opts, tables, state, scratch, i, action):
    """``_env_step`` of a macro env."""
    return _env_step(KIND_MACRO, opts, tables, state, scratch, i, action)


def env_kernels(kind: int) -> tuple[Any, Any]:
    """The ``(env_reset_*, env_step_*)`` kernels of env kind ``kind`` (``actions.KIND_*``).

    Raises:
        ValueError: for an unknown kind.
    """
    kernels = {
        KIND_MOVE: (env_reset_move, env_step_move),
        KIND_PUSH: (env_reset_push, env_step_push),
        KIND_MACRO: (env_reset_macro, env_step_macro),
    }
    if kind not in kernels:
        raise ValueError(f"kind must be one of {sorted(kernels)}, got {kind!r}")
    return kernels[kind]
