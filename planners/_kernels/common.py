"""What every search kernel shares: statuses, the first counter slots, board and scratch bundles.

A search kernel runs one slice of a search (at most ``budget`` expansions) and returns a status
to its driver (``planners.driver``), which grows full arrays and checks the limits between
slices. Its counters live in an int64 array whose first slots are C_EXPANDED and C_GENERATED.

Also the *square push* of the searches that store pushes by square: ``square * 4 + direction``
(the box's square before the push) plus ``(pushes - 1) << STEPS_SHIFT`` for a tunnel macro, a
push run on through a one-wide tunnel. A *push code* (``box_index * 4 + direction``) is what
``engine.push.legal_pushes`` lists.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from soko_gym.engine.board import Board
from soko_gym.engine.constants import (
    BOX_AT_DTYPE,
    FLOOR,
    GOAL,
    SQUARE_DTYPE,
    STAMP_DTYPE,
)
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.reach import new_stamps

# Statuses a kernel returns to the driver.
RUNNING = 0  # the slice's expansion budget is spent: call again
FOUND = 1  # a goal was reached
EXHAUSTED = 2  # nothing is left to search (in an iterative search: in this iteration)
GROW_NODES = 3  # the node store (or depth stack) is full
GROW_TABLE = 4  # the transposition table would pass half full
GROW_HEAP = 5  # the heap is full

# Counter slots every kernel keeps; each kernel numbers its own slots from N_SHARED on.
C_EXPANDED = 0  # expanded nodes
C_GENERATED = 1  # generated nodes
N_SHARED = 2

STEPS_SHIFT = 20  # a square push holds square * 4 + direction below this bit, extra pushes above
_STEP_MASK = (1 << STEPS_SHIFT) - 1

# The static board arrays a push search reads, as one kernel argument.
SearchBoard = namedtuple(
    "SearchBoard",
    [
        "cells",  # uint8[n_cells] cell flags
        "offsets",  # int32[4] flat index step per direction
        "zobrist",  # uint64[n_cells] Zobrist key per square
        "dead",  # uint8[n_cells] 1 on simple dead squares
        "nearest",  # uint16[n_cells] pushes to the nearest goal (DIST_INF: none)
        "goal_dist",  # uint16[n_goals, n_cells] lone-box pushes to each goal
    ],
)

# Per-search scratch of a push search, as one kernel argument.
PushScratch = namedtuple(
    "PushScratch",
    [
        "box_pos",  # int32[n_boxes] box squares (the current position, in depth-first kernels)
        "box_at",  # int16[n_cells] box index per square, -1 for none
        "pushes",  # int32[4 * n_boxes] push codes of one position
        "stamps",  # uint32[n_cells + 1] reachability stamps (``engine.reach``)
        "stack",  # int32[n_cells] flood-fill stack
        "seen",  # uint32[n_cells + 1] freeze-test stamps
        "trail",  # int32[n_cells] freeze-test scratch
    ],
)


def search_board(board: Board) -> SearchBoard:
    """The ``SearchBoard`` of ``board`` (its own arrays, not copies)."""
    return SearchBoard(
        board.cells, board.offsets, board.zobrist, board.dead, board.nearest_goal_dist,
        board.goal_dist,
    )  # fmt: skip


def new_push_scratch(board: Board) -> PushScratch:
    """Fresh scratch for a search of ``board``: no box placed (``box_at`` all -1)."""
    n = board.n_cells
    return PushScratch(
        box_pos=np.zeros(board.n_boxes, dtype=SQUARE_DTYPE),
        box_at=np.full(n, -1, dtype=BOX_AT_DTYPE),
        pushes=np.zeros(max(1, 4 * board.n_boxes), dtype=SQUARE_DTYPE),
        stamps=new_stamps(board.cells),
        stack=np.empty(n, dtype=SQUARE_DTYPE),
        seen=np.zeros(n + 1, dtype=STAMP_DTYPE),
        trail=np.empty(n, dtype=SQUARE_DTYPE),
    )


def expand_square_push(sq_push: int, offsets: np.ndarray) -> list[tuple[int, int]]:
    """The single pushes (square before the push, direction) of a square push.

    The pushes of a tunnel macro move the same box on in the same direction.
    """
    steps = (sq_push >> STEPS_SHIFT) + 1
    square, d = divmod(sq_push & _STEP_MASK, 4)
    off = int(offsets[d])
    return [(square + k * off, d) for k in range(steps)]


@njit(cache=True, nogil=True, _nrt=False)
def sort_prefix(a, n):
    """Sort ``a[:n]`` in place (insertion sort: short runs, and no runtime needed to call it).

    ``array.sort()`` needs numba's runtime, which the search kernels are compiled without.
    """
    for i in range(1, n):
        v = a[i]
        j = i - 1
        while j >= 0 and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v


@njit(cache=True, nogil=True)
def square_push(square, d, steps):
    """The square push of ``steps`` pushes in direction ``d`` of the box on ``square``."""
    return square * 4 + d + ((steps - 1) << STEPS_SHIFT)


@njit(cache=True, nogil=True)
def tunnel_end(cells, box_at, offsets, dest, d):
    """Square where a box pushed onto ``dest`` in direction ``d`` stops, tunnel macro included.

    The push runs on while box and player are in a one-wide tunnel (walls on both sides across
    ``d``), the box is off goal and the square ahead is free floor.
    """
    side_a = offsets[(d + 2) & 3] if d < 2 else offsets[(d - 2) & 3]
    side_b = -side_a
    sq = dest
    while True:
        if cells[sq] & GOAL:
            return sq
        if (cells[sq + side_a] & FLOOR) or (cells[sq + side_b] & FLOOR):
            return sq
        # the player stands behind the box inside the tunnel too: both walls must hold there
        back = sq - offsets[d]
        if (cells[back + side_a] & FLOOR) or (cells[back + side_b] & FLOOR):
            return sq
        nxt = sq + offsets[d]
        if not (cells[nxt] & FLOOR) or box_at[nxt] >= 0:
            return sq
        sq = nxt


@njit(cache=True, nogil=True)
def is_pruned_push(cells, dead, box_at, offsets, sq, freeze, seen, trail):
    """Whether a box just pushed onto ``sq`` leaves an unsolvable position.

    True on a simple dead square and, with ``freeze``, when the push freezes a box off goal
    (``seen`` and ``trail``: ``is_simple_deadlock`` scratch). Hot helpers like this one take
    arrays, not bundles: a call that is not inlined copies every array of a bundle.
    """
    if dead[sq]:
        return True
    return freeze and is_simple_deadlock(cells, dead, box_at, offsets, sq, seen, trail)
