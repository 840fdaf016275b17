"""The corral kernels' tables: the ``CorralTables`` bundle of a board, its slots, its builders."""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

import numpy as np

from soko_gym.engine.bounded_search import EMPTY
from soko_gym.engine.constants import BOX_AT_DTYPE, HASH_DTYPE, SQUARE_DTYPE
from soko_gym.engine.corral import N_INFO
from soko_gym.engine.reach import new_stamps

# Head of an exact corral key row (``key_row``): counts and K's smallest square, then squares.
KEY_BOXES = 0  # the corral's boxes (-1: the key is longer than the row, not stored)
KEY_LOWEST = 1  # the smallest square of K
KEY_HEAD = 2

# Slots of ``CorralTables.params`` (int64[N_PARAMS]), fixed when the tables are built.
PARAM_BUDGET = 0  # most positions one bounded corral search stores
PARAM_MEMO = 1  # memo slots (a power of two), 0 for no memo
PARAM_MIN_BUDGET = 2  # floor of the adaptive per-size budgets, 0: every search gets the budget
N_PARAMS = 3

# Slots of ``CorralTables.out`` (int64[N_OUT]), written by the kernels below.
OUT_N_CORRALS = 0  # corrals found by the latest ``corral_label``
OUT_PROOF_LEN = 1  # squares in ``proof`` when the latest ``corral_status`` search proved a
OUT_PROOF_NORM = 2  # deadlock (0: no proof), and the normalized player square of that proof
N_OUT = 3

# Slots of ``CorralTables.counters`` (int64[N_COUNTERS]), only ever added to.
COUNT_MEMO_HITS = 0  # corral answers taken from the memo
COUNT_SEARCHES = 1  # bounded corral searches run
COUNT_CUT = 2  # of them, cut short by their budget (answer unknown)
COUNT_EXPANDED = 3  # positions those searches expanded (their cost)
N_COUNTERS = 4


class CorralScratch(NamedTuple):
    """Scratch arrays of the corral kernels for one board (see ``new_corral_scratch``)."""

    cstamp: np.ndarray  # int32[n_cells + 1] corral labels
    region: np.ndarray  # int32[n_cells] corral squares
    barrier: np.ndarray  # int32[4 * n_boxes] barrier squares
    info: np.ndarray  # int32[4 * n_boxes, N_INFO] corral table
    sub_box_at: np.ndarray  # int16[n_cells], all -1
    sub_nodes: np.ndarray  # int32[budget, max_boxes + 2]
    sub_hash: np.ndarray  # uint64[table cap]
    sub_player: np.ndarray  # int32[table cap], all -1
    sub_row: np.ndarray  # int32[table cap] row of ``sub_nodes`` holding each slot's position
    sub_pos: np.ndarray  # int32[max_boxes]
    sub_pushes: np.ndarray  # int32[4 * max_boxes]


def new_corral_scratch(
    n_cells: int, n_boxes: int, budget: int = 256, max_boxes: int = 12
) -> CorralScratch:
    """Fresh scratch for ``label_corrals`` and the bounded ``corral_deadlock`` search.

    Args:
        n_cells: squares of the board.
        n_boxes: boxes of the level.
        budget: most positions one corral search stores.
        max_boxes: largest corral searched (larger ones answer unknown).
    """
    nb = max(1, n_boxes)
    mb = max(1, min(nb, max_boxes))
    cap = max(1, budget)
    table = 1 << max(2, (2 * cap - 1).bit_length())
    return CorralScratch(
        cstamp=np.zeros(n_cells + 1, dtype=np.int32),
        region=np.zeros(n_cells, dtype=SQUARE_DTYPE),
        barrier=np.zeros(4 * nb, dtype=SQUARE_DTYPE),
        info=np.zeros((4 * nb, N_INFO), dtype=np.int32),
        sub_box_at=np.full(n_cells, -1, dtype=BOX_AT_DTYPE),
        sub_nodes=np.zeros((cap, mb + 2), dtype=SQUARE_DTYPE),
        sub_hash=np.zeros(table, dtype=HASH_DTYPE),
        sub_player=np.full(table, EMPTY, dtype=np.int32),
        sub_row=np.zeros(table, dtype=np.int32),
        sub_pos=np.zeros(mb, dtype=SQUARE_DTYPE),
        sub_pushes=np.zeros(4 * mb, dtype=SQUARE_DTYPE),
    )


# Everything the corral kernels of one board read and write, as one argument (numba takes a
# module-level namedtuple of arrays as a single value): board arrays, the ``CorralScratch``
# arrays, reachability scratch, parameters, the memo, per-call outputs and counters.
CorralTables = namedtuple(
    "CorralTables",
    [
        "cells",  # uint8[n_cells] cell flags
        "dead",  # uint8[n_cells] simple dead squares
        "offsets",  # int32[4] flat index step per direction
        "zobrist",  # uint64[n_cells] Zobrist key per square
        *CorralScratch._fields,  # cstamp ... sub_pushes (see ``CorralScratch``)
        "stamps",  # uint32[n_cells + 1] reachability stamps
        "stack",  # int32[n_cells]
        "seen",  # uint32[n_cells + 1] ``is_simple_deadlock`` scratch
        "trail",  # int32[n_cells]
        "pushes",  # int32[4 * n_boxes] legal push codes
        "params",  # int64[N_PARAMS] (PARAM_* slots)
        "size_budget",  # int64[max_boxes + 1] budget per corral size (adaptive budgets)
        "memo_boxes",  # uint64[memo cap] corral_key of each memo slot: boxes hash,
        "memo_region",  # uint64[memo cap] squares hash,
        "memo_norm",  # int32[memo cap] normalized player square,
        "memo_status",  # int8[memo cap] and the search's answer, -1 for an empty slot
        "memo_key",  # int16[memo cap, key width] each slot's exact key (``key_row``)
        "key_probe",  # int16[key width] scratch: the exact key of a corral being looked up
        "out",  # int64[N_OUT] per-call outputs (OUT_* slots)
        "proof",  # int32[n_boxes] squares of the latest proof's corral boxes
        "counters",  # int64[N_COUNTERS] (COUNT_* slots)
    ],
)


def new_corral_tables(
    board,
    budget: int = 256,
    max_boxes: int = 12,
    memo: int = 0,
    min_budget: int = 0,
) -> CorralTables:
    """Fresh ``CorralTables`` for the corral kernels on ``board`` (a ``soko_gym.engine.Board``).

    Args:
        board: the board.
        budget: most positions each bounded corral search stores.
        max_boxes: largest corral (barrier and interior boxes) searched.
        memo: most remembered corral answers, rounded up to a power of two; 0 remembers none.
        min_budget: with a value > 0 the budget adapts per corral size (``engine.corral_search``),
            never below this; 0 gives every search ``budget``.

    Raises:
        ValueError: when ``memo`` is negative, or ``min_budget`` negative or above ``budget``.
    """
    if memo < 0:
        raise ValueError(f"memo must be >= 0, got {memo}")
    if not 0 <= min_budget <= budget:
        raise ValueError(f"min_budget must be in [0, budget={budget}], got {min_budget}")
    n = board.n_cells
    nb = max(1, board.n_boxes)
    cap = 0 if memo == 0 else 1 << (memo - 1).bit_length()
    slots = max(1, cap)
    params = np.zeros(N_PARAMS, dtype=np.int64)
    params[PARAM_BUDGET] = budget
    params[PARAM_MEMO] = cap
    params[PARAM_MIN_BUDGET] = min_budget
    scratch = new_corral_scratch(n, board.n_boxes, budget, max_boxes)
    # room for the key of every corral a search takes; a longer key's answer is "unknown"
    width = KEY_HEAD + scratch.sub_pos.shape[0]
    return CorralTables(
        cells=board.cells,
        dead=board.dead,
        offsets=board.offsets,
        zobrist=board.zobrist,
        **scratch._asdict(),
        stamps=new_stamps(board.cells),
        stack=np.empty(n, dtype=SQUARE_DTYPE),
        seen=np.zeros(n + 1, dtype=np.uint32),
        trail=np.empty(n, dtype=SQUARE_DTYPE),
        pushes=np.zeros(4 * nb, dtype=SQUARE_DTYPE),
        params=params,
        size_budget=np.full(max_boxes + 1, budget, dtype=np.int64),
        memo_boxes=np.zeros(slots, dtype=HASH_DTYPE),
        memo_region=np.zeros(slots, dtype=HASH_DTYPE),
        memo_norm=np.zeros(slots, dtype=np.int32),
        memo_status=np.full(slots, -1, dtype=np.int8),
        memo_key=np.zeros((slots, width), dtype=np.int16),
        key_probe=np.zeros(width, dtype=np.int16),
        out=np.zeros(N_OUT, dtype=np.int64),
        proof=np.zeros(nb, dtype=SQUARE_DTYPE),
        counters=np.zeros(N_COUNTERS, dtype=np.int64),
    )
