"""Rooms for random levels: a connected room carved into an all-wall grid, goals placed in it.

The first steps of a generated level (``engine.generate``); the boxes are then pulled away
from the goals by reverse play.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import DIRECTION_DELTAS, FLOOR, GOAL, WALL
from soko_gym.engine.xorshift import random_below, random_unit

# Room shapes (the ``shape`` argument of ``carve_room``).
ROOM_RANDOM = 0  # a blob carved by a random walk of a 1x1 .. 2x2 brush
ROOM_OPEN = 1  # a rectangle with scattered single walls that keep the floor connected

_ROW_STEP = np.array([dr for dr, _ in DIRECTION_DELTAS], dtype=np.int64)
_COL_STEP = np.array([dc for _, dc in DIRECTION_DELTAS], dtype=np.int64)


@njit(cache=True, nogil=True)
def _count_connected(cells, offsets, start, seen, mark, stack):
    """Floor squares connected to ``start``; marks them with ``mark`` in ``seen``."""
    seen[start] = mark
    stack[0] = start
    top = 1
    count = 1
    while top > 0:
        top -= 1
        sq = stack[top]
        for d in range(4):
            nb = sq + offsets[d]
            if (cells[nb] & FLOOR) and seen[nb] != mark:
                seen[nb] = mark
                stack[top] = nb
                top += 1
                count += 1
    return count


@njit(cache=True, nogil=True)
def carve_room(cells, height, width, n_floor, shape, rng, order, seen, stack):
    """Carve a connected room into an all-wall grid, in place.

    ``ROOM_RANDOM`` walks a brush of 1x1, 1x2, 2x1 or 2x2 squares through the interior, turning
    now and then, until ``n_floor`` squares are floor (up to three more, from the last brush).
    ``ROOM_OPEN`` clears the whole interior and then walls up random squares, skipping any that
    would cut the floor in two, until ``n_floor`` remain or no square can be walled.

    Args:
        cells: uint8[height * width] receives WALL or FLOOR per square; the border stays wall.
        height: rows of the grid, outer walls included (>= 3).
        width: columns of the grid, outer walls included (>= 3).
        n_floor: floor squares wanted, 1 .. (height - 2) * (width - 2).
        shape: ROOM_RANDOM or ROOM_OPEN.
        rng: uint64[2] generator state; advanced in place.
        order: int32[height * width] scratch.
        seen: int32[height * width] scratch.
        stack: int32[height * width] scratch.

    Returns:
        Number of floor squares carved.
    """
    inner_h = height - 2
    inner_w = width - 2
    cells[:] = WALL
    if shape == ROOM_OPEN:
        n_inner = inner_h * inner_w
        for i in range(n_inner):
            sq = (1 + i // inner_w) * width + 1 + i % inner_w
            cells[sq] = FLOOR
            order[i] = sq
        for i in range(n_inner - 1, 0, -1):  # shuffle: the order walls are tried in
            j = random_below(rng, i + 1)
            tmp = order[i]
            order[i] = order[j]
            order[j] = tmp
        offsets = np.array([-width, width, -1, 1], dtype=np.int64)
        seen[:] = 0
        count = n_inner
        mark = 0
        for i in range(n_inner):
            if count <= n_floor:
                break
            sq = order[i]
            cells[sq] = WALL
            start = -1
            for d in range(4):
                if cells[sq + offsets[d]] & FLOOR:
                    start = sq + offsets[d]
                    break
            mark += 1
            if start >= 0 and _count_connected(cells, offsets, start, seen, mark, stack) == (
                count - 1
            ):
                count -= 1
            else:
                cells[sq] = FLOOR
        return count
    row = 1 + random_below(rng, inner_h)
    col = 1 + random_below(rng, inner_w)
    d = random_below(rng, np.int64(4))
    count = 0
    guard = 0
    limit = 64 * inner_h * inner_w
    while count < n_floor and guard < limit:
        guard += 1
        brush = random_below(rng, np.int64(8))  # 0-2: 1x1, 3-4: 1x2, 5-6: 2x1, 7: 2x2
        bh = 2 if brush >= 5 else 1
        bw = 2 if brush == 3 or brush == 4 or brush == 7 else 1
        for r in range(row, min(row + bh, height - 1)):
            for c in range(col, min(col + bw, width - 1)):
                sq = r * width + c
                if cells[sq] & WALL:
                    cells[sq] = FLOOR
                    count += 1
        if random_unit(rng) < 0.3:
            d = random_below(rng, np.int64(4))
        nr = row + _ROW_STEP[d]
        nc = col + _COL_STEP[d]
        if 1 <= nr <= inner_h and 1 <= nc <= inner_w:
            row = nr
            col = nc
        else:
            d = random_below(rng, np.int64(4))
    return count


@njit(cache=True, nogil=True)
def place_goals(cells, rng, floor, goals):
    """Pick distinct random floor squares as goals and flag them GOAL in ``cells``.

    Args:
        cells: uint8[n_cells] WALL / FLOOR flags; GOAL is added on the chosen squares.
        rng: uint64[2] generator state; advanced in place.
        floor: int32[n_cells] scratch.
        goals: int32[n_goals] receives the goal squares, in the order drawn.

    Returns:
        Number of floor squares (the goals are placed only when it exceeds ``n_goals``).
    """
    n = 0
    for sq in range(cells.shape[0]):
        if cells[sq] & FLOOR:
            floor[n] = sq
            n += 1
    k = goals.shape[0]
    if n <= k:
        return n
    for i in range(k):  # partial Fisher-Yates shuffle of the floor list
        j = i + random_below(rng, n - i)
        tmp = floor[i]
        floor[i] = floor[j]
        floor[j] = tmp
        goals[i] = floor[i]
        cells[floor[i]] |= GOAL
    return n
