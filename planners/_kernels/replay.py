"""Score a push sequence: replay it with shortest player walks and count the moves.

Optimizers rearrange pushes and need the cost of each candidate fast; a push sequence's fewest
moves is its pushes plus the shortest walk before each push, which is what this replay adds up.
Pushes are *square pushes*, ``square * 4 + direction`` with the box's square before the push.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from soko_gym.engine.constants import BOX_AT_DTYPE, FLOOR, GOAL, SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps, next_mark

WalkScratch = namedtuple(
    "WalkScratch",
    [
        "box_at",  # int16[n_cells] all -1 on entry and on return (the replay's boxes)
        "stamps",  # uint32[n_cells + 1] stamp buffer, walls pre-stamped (``reach.new_stamps``)
        "queue",  # int32[n_cells]
        "dist",  # int32[n_cells]
    ],
)


def new_walk_scratch(cells: np.ndarray) -> WalkScratch:
    """Scratch of the replay kernels on a board with cell flags ``cells``."""
    n = cells.shape[0]
    return WalkScratch(
        box_at=np.full(n, -1, dtype=BOX_AT_DTYPE),
        stamps=new_stamps(cells),
        queue=np.empty(n, dtype=SQUARE_DTYPE),
        dist=np.empty(n, dtype=SQUARE_DTYPE),
    )


@njit(cache=True, nogil=True)
def _walk_length(box_at, offsets, start, target, stamps, queue, dist):
    """Fewest player steps from ``start`` to ``target`` without pushing, or -1."""
    if start == target:
        return 0
    mark = next_mark(stamps)
    stamps[start] = mark
    dist[start] = 0
    queue[0] = start
    head = 0
    tail = 1
    while head < tail:
        sq = queue[head]
        head += 1
        for d in range(4):
            nb = sq + offsets[d]
            if stamps[nb] < mark and box_at[nb] < 0:
                stamps[nb] = mark
                dist[nb] = dist[sq] + 1
                if nb == target:
                    return dist[nb]
                queue[tail] = nb
                tail += 1
    return -1


@njit(cache=True, nogil=True)
def replay_pushes(
    cells, offsets, start_boxes, start_player, sq_pushes, box_at, stamps, queue, dist
):
    """Replay ``sq_pushes`` from the start and total the moves of shortest walks plus pushes.

    Args:
        cells: uint8[n_cells] cell flags of ``level.board``.
        offsets: int32[4] flat index step per direction.
        start_boxes: int32[n_boxes] box squares at the start.
        start_player: player square at the start.
        sq_pushes: int32[k] square pushes (module docstring).
        box_at, stamps, queue, dist: scratch as the fields of ``WalkScratch``.

    Returns:
        (moves, index of the first illegal push or -1, 1 if every box ends on a goal else 0).
    """
    for b in range(start_boxes.shape[0]):
        box_at[start_boxes[b]] = b
    player = start_player
    moves = 0
    bad = -1
    for i in range(sq_pushes.shape[0]):
        sq = sq_pushes[i] >> 2
        d = sq_pushes[i] & 3
        dest = sq + offsets[d]
        stand = sq - offsets[d]
        if box_at[sq] < 0 or not (cells[dest] & FLOOR) or box_at[dest] >= 0:
            bad = i
            break
        walk = _walk_length(box_at, offsets, player, stand, stamps, queue, dist)
        if walk < 0:
            bad = i
            break
        moves += walk + 1
        box_at[dest] = box_at[sq]
        box_at[sq] = -1
        player = sq
    solved = 1
    for sq in range(cells.shape[0]):
        if box_at[sq] >= 0:
            if bad < 0 and not (cells[sq] & GOAL):
                solved = 0
            box_at[sq] = -1
    return moves, bad, solved
