"""Simple deadlocks: a box pushed onto a dead square, frozen off a goal, or a full wall line.

A box is *frozen* when it can never move again. Along an axis (vertical or horizontal) a box
is blocked by a wall on either side, by simple dead squares on both sides, or by a frozen box
on either side. The frozen boxes around a pushed box are the largest set of boxes in its
cluster (boxes touching it, transitively) that are each blocked on both axes when the other
boxes of the set count as walls; it is found by removing unblocked boxes until none is left to
remove. Iterative on purpose: numba cannot link a cached recursive kernel into other kernels.

A *wall line* is a maximal run of floor squares along a row (or column) with a wall at both
ends, where every square has a wall on at least one side across the run (the common case: a
run along a wall). A box on it can never leave it: a push across needs the target or the
player's square to be that wall, and the ends are walls. More boxes than goals on a wall line
is therefore a deadlock. Lines without goals are left out (their squares are dead squares).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import FLOOR, GOAL, SQUARE_DTYPE

# Columns of the wall-line table ``lines`` (int32[n_lines, N_LINE]).
LINE_START = 0  # first square of the line
LINE_STEP = 1  # flat index step along it (offset of right or down)
LINE_LEN = 2  # number of squares
LINE_GOALS = 3  # goals on it
N_LINE = 4


@njit(cache=True, nogil=True, _nrt=False)
def _blocked(cells, dead, offsets, sq, axis, seen, mark):
    """Whether the box on ``sq`` cannot move along ``axis`` (0 vertical, 1 horizontal)."""
    a = sq + offsets[2 * axis]
    b = sq + offsets[2 * axis + 1]
    if not (cells[a] & FLOOR) or not (cells[b] & FLOOR):
        return True
    if seen[a] == mark or seen[b] == mark:  # a box of the frozen candidate set
        return True
    return dead[a] != 0 and dead[b] != 0


@njit(cache=True, nogil=True, _nrt=False)
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
            # int64 axes, not literals: numba would compile _blocked once per literal
            if not (
                _blocked(cells, dead, offsets, box, np.int64(0), seen, mark)
                and _blocked(cells, dead, offsets, box, np.int64(1), seen, mark)
            ):
                seen[box] = 0
                changed = True
    for i in range(size):
        box = trail[i]
        if seen[box] == mark and not (cells[box] & GOAL):
            return True
    return False


def wall_lines(cells: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Precompute a board's wall lines that hold at least one goal (see the module docstring).

    Args:
        cells: uint8[n_cells] cell flags (``Board.cells``; the border is wall).
        offsets: int32[4] flat index step per direction (up, down, left, right).

    Returns:
        ``(line_of, lines)``: ``line_of`` int32[2, n_cells], the line through each square along
        rows (0) and columns (1), -1 for none; ``lines`` int32[n_lines, N_LINE], one row per
        line with the ``LINE_*`` columns. Only lines that can hold more boxes than goals are
        kept.
    """
    n = cells.shape[0]
    floor = (cells & FLOOR) != 0
    goal = (cells & GOAL) != 0
    line_of = np.full((2, n), -1, dtype=SQUARE_DTYPE)
    rows: list[tuple[int, int, int, int]] = []
    for axis, (step, across) in enumerate(((offsets[3], offsets[0]), (offsets[1], offsets[2]))):
        step, across = int(step), int(across)
        for sq in range(n):
            if not floor[sq] or floor[sq - step]:  # not the first square of a run
                continue
            run = []
            cur = sq
            while floor[cur]:
                run.append(cur)
                cur += step
            if not all(not floor[x + across] or not floor[x - across] for x in run):
                continue
            n_goals = int(goal[run].sum())
            if n_goals == 0 or len(run) <= n_goals:
                continue
            line_of[axis, run] = len(rows)
            rows.append((sq, step, len(run), n_goals))
    lines = np.array(rows, dtype=SQUARE_DTYPE).reshape(len(rows), N_LINE)
    return line_of, lines


@njit(cache=True, nogil=True)
def is_wall_line_deadlock(line_of, lines, box_at, sq):
    """True when a wall line through ``sq`` holds more boxes than goals.

    Args:
        line_of: int32[2, n_cells] line index per square and axis, -1 for none
            (``wall_lines``).
        lines: int32[n_lines, N_LINE] the lines (``LINE_*`` columns).
        box_at: int16[n_cells] box index per square, -1 for none.
        sq: square of the box that just moved.
    """
    for axis in range(2):
        line = line_of[axis, sq]
        if line < 0:
            continue
        cur = np.int64(lines[line, LINE_START])
        step = lines[line, LINE_STEP]
        boxes = 0
        for _ in range(lines[line, LINE_LEN]):
            if box_at[cur] >= 0:
                boxes += 1
            cur += step
        if boxes > lines[line, LINE_GOALS]:
            return True
    return False
