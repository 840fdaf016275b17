"""Simple deadlocks: a box pushed onto a dead square, or frozen off a goal.

A box is *frozen* when it can never move again. Along an axis (vertical or horizontal) a box
is blocked by a wall on either side, by simple dead squares on both sides, or by a frozen box
on either side. The frozen boxes around a pushed box are the largest set of boxes in its
cluster (boxes touching it, transitively) that are each blocked on both axes when the other
boxes of the set count as walls; it is found by removing unblocked boxes until none is left to
remove. Iterative on purpose: numba cannot link a cached recursive kernel into other kernels.
"""

from __future__ import annotations

from numba import njit

from soko_gym.engine.constants import FLOOR, GOAL


@njit(cache=True, nogil=True)
def _blocked(cells, dead, offsets, sq, axis, seen, mark):
    """Whether the box on ``sq`` cannot move along ``axis`` (0 vertical, 1 horizontal)."""
    a = sq + offsets[2 * axis]
    b = sq + offsets[2 * axis + 1]
    if not (cells[a] & FLOOR) or not (cells[b] & FLOOR):
        return True
    if seen[a] == mark or seen[b] == mark:  # a box of the frozen candidate set
        return True
    return dead[a] != 0 and dead[b] != 0


@njit(cache=True, nogil=True)
def is_simple_deadlock(cells, dead, box_at, offsets, sq, seen, trail):
    """True when the box just pushed onto ``sq`` makes the position unsolvable (simple test).

    The position is lost if ``sq`` is a simple dead square, or if the frozen set around the
    box holds at least one box that is off goal.

    Args:
        cells: uint8[n_cells] cell flags.
        dead: uint8[n_cells] nonzero on simple dead squares.
        box_at: int16[n_cells] box index per square, -1 for none.
        offsets: int32[4] flat index step per direction (up, down, left, right).
        sq: square of the box that just moved.
        seen: uint32[n_cells + 1] scratch stamps; ``seen[n_cells]`` holds the last mark used.
        trail: int32[n_cells] scratch: the cluster's squares.
    """
    if dead[sq]:
        return True
    n = seen.shape[0] - 1
    mark = seen[n] + 1
    if mark == 0:  # wrapped: start over
        seen[:] = 0
        mark = 1
    seen[n] = mark
    # the cluster of boxes connected to sq; all start in the candidate set
    seen[sq] = mark
    trail[0] = sq
    size = 1
    head = 0
    while head < size:
        cur = trail[head]
        head += 1
        for d in range(4):
            nb = cur + offsets[d]
            if box_at[nb] >= 0 and seen[nb] != mark:
                seen[nb] = mark
                trail[size] = nb
                size += 1
    # drop boxes that can move along some axis until the set is stable
    changed = True
    while changed:
        changed = False
        for i in range(size):
            box = trail[i]
            if seen[box] != mark:
                continue
            if not (
                _blocked(cells, dead, offsets, box, 0, seen, mark)
                and _blocked(cells, dead, offsets, box, 1, seen, mark)
            ):
                seen[box] = 0
                changed = True
    for i in range(size):
        box = trail[i]
        if seen[box] == mark and not (cells[box] & GOAL):
            return True
    return False
