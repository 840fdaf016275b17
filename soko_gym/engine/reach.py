"""Player reachability with stamp counters, the normalized player square, and player walks.

A stamp array replaces a visited set: a square is reached in the latest fill when its stamp
equals the current mark, so nothing is cleared between calls. Layout of ``stamps``
(uint32[n_cells + 1]): walls hold 0xFFFFFFFF forever, ``stamps[n_cells]`` holds the current mark,
a reached square holds the mark, and a box next to a reached square holds mark + 1.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import STAMP_DTYPE, WALL

WALL_STAMP = np.uint32(0xFFFFFFFF)
_WRAP_AT = np.uint32(0xFFFFFFF0)


def new_stamps(cells: np.ndarray) -> np.ndarray:
    """Return a fresh stamp buffer for a board: uint32[n_cells + 1], walls pre-stamped."""
    stamps = np.zeros(cells.shape[0] + 1, dtype=STAMP_DTYPE)
    stamps[:-1][(cells & WALL) != 0] = WALL_STAMP
    return stamps


@njit(cache=True, nogil=True)
def reset_stamps(cells, stamps):
    """Re-initialise ``stamps`` in place for a board's ``cells`` (as ``new_stamps`` builds it).

    Args:
        cells: uint8[n_cells] cell flags of the board now played.
        stamps: uint32[n_cells + 1] stamp buffer; walls get WALL_STAMP, the rest and the mark 0.
    """
    n = cells.shape[0]
    for i in range(n):
        stamps[i] = WALL_STAMP if cells[i] & WALL else np.uint32(0)
    stamps[n] = 0


@njit(cache=True, nogil=True, _nrt=False)
def next_mark(stamps):
    """Advance the stamp mark by two and return it, clearing the buffer on wrap-around.

    Args:
        stamps: uint32[n_cells + 1] stamp buffer (see module docstring); updated in place.
    """
    n = stamps.shape[0] - 1
    mark = stamps[n]
    if mark >= _WRAP_AT:
        for i in range(n):
            if stamps[i] != WALL_STAMP:
                stamps[i] = 0
        mark = np.uint32(0)
    mark += np.uint32(2)
    stamps[n] = mark
    return mark


@njit(cache=True, nogil=True, _nrt=False)
def reach_player(box_at, offsets, start, stamps, stack):
    """Flood-fill the squares the player reaches from ``start`` without pushing.

    Args:
        box_at: int16[n_cells] box index on each square, -1 for none.
        offsets: int32[4] flat index step per direction (up, down, left, right).
        start: player square; must be a floor square without a box.
        stamps: uint32[n_cells + 1] stamp buffer; receives this fill (see module docstring).
        stack: int32[n_cells] scratch.

    Returns:
        (number of reached squares, smallest reached square = normalized player square).
    """
    mark = next_mark(stamps)
    box_mark = mark + np.uint32(1)
    stamps[start] = mark
    stack[0] = start
    top = 1
    count = 1
    lowest = start
    while top > 0:
        top -= 1
        sq = stack[top]
        for d in range(4):
            nb = sq + offsets[d]
            if stamps[nb] < mark:
                if box_at[nb] < 0:
                    stamps[nb] = mark
                    stack[top] = nb
                    top += 1
                    count += 1
                    if nb < lowest:
                        lowest = nb
                else:
                    stamps[nb] = box_mark
    return count, lowest


@njit(cache=True, nogil=True)
def is_reached(stamps, square):
    """True when ``square`` was reached by the latest ``reach_player`` on this buffer."""
    return stamps[square] == stamps[stamps.shape[0] - 1]


@njit(cache=True, nogil=True)
def reachable_box_sides(box_pos, offsets, stamps, out):
    """Write, per box, a 4-bit mask of the sides the player reached in the latest fill.

    Args:
        box_pos: int32[n_boxes] square of each box.
        offsets: int32[4] flat index step per direction.
        stamps: uint32[n_cells + 1] stamp buffer holding a fill of the current state.
        out: uint8[n_boxes]; bit d set when the square next to the box in direction d was reached.

    Returns:
        Number of boxes with at least one reached side.
    """
    mark = stamps[stamps.shape[0] - 1]
    n_touched = 0
    for b in range(box_pos.shape[0]):
        mask = 0
        for d in range(4):
            if stamps[box_pos[b] + offsets[d]] == mark:
                mask |= 1 << d
        out[b] = mask
        if mask:
            n_touched += 1
    return n_touched


@njit(cache=True, nogil=True)
def walk_distances(box_at, offsets, start, stamps, queue, dist):
    """Fewest player steps from ``start`` to every square it reaches without pushing.

    Args:
        box_at: int16[n_cells] box index per square, -1 for none.
        offsets: int32[4] flat index step per direction.
        start: player square.
        stamps: uint32[n_cells + 1] stamp buffer; the reached squares get the returned mark.
        queue: int32[n_cells] scratch.
        dist: int32[n_cells] receives the walk length of every reached square.

    Returns:
        (mark of the reached squares in ``stamps``, smallest reached square = normalized
        player square).
    """
    mark = next_mark(stamps)
    stamps[start] = mark
    dist[start] = 0
    queue[0] = start
    head = 0
    tail = 1
    lowest = start
    while head < tail:
        sq = queue[head]
        head += 1
        for d in range(4):
            nb = sq + offsets[d]
            if stamps[nb] < mark and box_at[nb] < 0:
                stamps[nb] = mark
                dist[nb] = dist[sq] + 1
                queue[tail] = nb
                tail += 1
                if nb < lowest:
                    lowest = nb
    return mark, lowest


@njit(cache=True, nogil=True)
def player_path(box_at, offsets, start, target, stamps, queue, parent, out):
    """Shortest walk of the player from ``start`` to ``target`` without pushing.

    Args:
        box_at: int16[n_cells] box index on each square, -1 for none.
        offsets: int32[4] flat index step per direction.
        start: player square.
        target: square to walk to.
        stamps: uint32[n_cells + 1] stamp buffer (scratch; its latest fill is overwritten).
        queue: int32[n_cells] scratch.
        parent: int8[n_cells] scratch: direction of the step that entered each square.
        out: int8[n_cells] receives the directions of the walk.

    Returns:
        Length of the walk written to ``out``, or -1 when ``target`` cannot be reached.
    """
    if start == target:
        return 0
    mark = next_mark(stamps)
    stamps[start] = mark
    queue[0] = start
    head = 0
    tail = 1
    found = False
    while head < tail and not found:
        sq = queue[head]
        head += 1
        for d in range(4):
            nb = sq + offsets[d]
            if stamps[nb] < mark and box_at[nb] < 0:
                stamps[nb] = mark
                parent[nb] = d
                if nb == target:
                    found = True
                    break
                queue[tail] = nb
                tail += 1
    if not found:
        return -1
    length = 0
    sq = target
    while sq != start:
        d = parent[sq]
        out[length] = d
        length += 1
        sq -= offsets[d]
    # reverse in place: the walk was collected from target back to start
    for i in range(length // 2):
        tmp = out[i]
        out[i] = out[length - 1 - i]
        out[length - 1 - i] = tmp
    return length
