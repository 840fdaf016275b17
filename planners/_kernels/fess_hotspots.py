"""FESS hotspots: the pair table of squares whose box cuts another's way to the goals, its count.

A square is a hotspot for a box when a wall there lowers the number of goals the lone box can
be pushed to (``planners.fess.features``). The table is filled once per level from pull
closures (``fess_pull_closure``); a position's count reads it.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from planners._kernels.fess_pull_closure import forget_parts, pull_closure_parts
from soko_gym.engine.constants import BOX_AT_DTYPE, FLOOR, GOAL, SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps

HotspotScratch = namedtuple(
    "HotspotScratch",
    [  # scratch of fill_hotspot_table
        "box_at",  # int16[n_cells] all -1 (left all -1)
        "stamps",  # uint32[n_cells + 1] stamp buffer
        "stack",  # int32[n_cells]
        "seen",  # uint8[4 * n_cells] pull_closure's states
        "queue",  # int32[4 * n_cells]
        "parts",  # int8[4 * n_cells] pull_closure_parts' side partitions
        "parts_gen",  # int32[n_cells + 1] their generations (forget_parts)
        "base",  # uint8[n_goals, n_floor] goals reached per square, no wall
        "walled",  # uint8[n_goals, n_floor] goals reached per square, one wall
    ],
)


def new_hotspot_scratch(cells: np.ndarray, n_goals: int, n_floor: int) -> HotspotScratch:
    """Scratch of ``fill_hotspot_table`` on a board with cell flags ``cells``."""
    n = cells.shape[0]
    return HotspotScratch(
        box_at=np.full(n, -1, dtype=BOX_AT_DTYPE),
        stamps=new_stamps(cells),
        stack=np.zeros(n, dtype=SQUARE_DTYPE),
        seen=np.zeros(4 * n, dtype=np.uint8),
        queue=np.zeros(4 * n, dtype=SQUARE_DTYPE),
        parts=np.full(4 * n, -1, dtype=np.int8),
        parts_gen=np.zeros(n + 1, dtype=np.int32),
        base=np.zeros((n_goals, n_floor), dtype=np.uint8),
        walled=np.zeros((n_goals, n_floor), dtype=np.uint8),
    )


@njit(cache=True, nogil=True, _nrt=False)
def _count_reachable_goals(cells, offsets, floor, goals, sc, out):
    """Per floor square, the goals a lone box there can reach; ``sc.box_at`` walls as given.

    Args:
        out: uint8[n_goals, n_floor] receives 1 where the box on ``floor[i]`` reaches goal ``g``.
        (others as in ``fill_hotspot_table``)
    """
    seen = sc.seen
    out[:, :] = 0
    forget_parts(sc.parts_gen)  # the walls are new
    for g in range(goals.shape[0]):
        pull_closure_parts(
            cells, sc.box_at, offsets, np.int64(goals[g]), sc.stamps, sc.stack, sc.parts,
            sc.parts_gen, seen, sc.queue,
        )  # fmt: skip
        for i in range(floor.shape[0]):
            sq = floor[i]
            if seen[sq * 4] or seen[sq * 4 + 1] or seen[sq * 4 + 2] or seen[sq * 4 + 3]:
                out[g, i] = 1


@njit(cache=True, nogil=True, _nrt=False)
def fill_hotspot_table(cells, offsets, floor, goals, sc, hot):
    """Fill the pair table of hotspot squares (see ``planners.fess.features``).

    ``hot[x, y] = 1`` when a wall on ``floor[y]`` lowers the number of goals other than
    ``floor[y]`` that a lone box on ``floor[x]`` can reach.

    Args:
        cells: uint8[n_cells] cell flags.
        offsets: int32[4] flat index step per direction.
        floor: int32[n_floor] floor squares.
        goals: int32[n_goals] goal squares.
        sc: ``HotspotScratch`` (``new_hotspot_scratch``).
        hot: uint8[n_floor, n_floor] receives the table.

    Returns:
        Number of hot pairs.
    """
    n_floor = floor.shape[0]
    n_goals = goals.shape[0]
    base = sc.base
    walled = sc.walled
    _count_reachable_goals(cells, offsets, floor, goals, sc, base)
    hot[:, :] = 0
    n_hot = 0
    for y in range(n_floor):
        wall_sq = floor[y]
        sc.box_at[wall_sq] = 1
        _count_reachable_goals(cells, offsets, floor, goals, sc, walled)
        sc.box_at[wall_sq] = -1
        for x in range(n_floor):
            if x == y:
                continue
            before = 0
            after = 0
            for g in range(n_goals):
                if goals[g] != wall_sq:
                    before += base[g, x]
                    after += walled[g, x]
            if after < before:
                hot[x, y] = 1
                n_hot += 1
    return n_hot


@njit(cache=True, nogil=True, _nrt=False)
def count_hotspots(box_pos, floor_index, hot, out):
    """Number of boxes that are hotspots for at least one other box.

    Args:
        box_pos: int32[n_boxes] square of each box.
        floor_index: int32[n_cells] position of a square in the board's floor array.
        hot: uint8[n_floor, n_floor] pair table from ``fill_hotspot_table``.
        out: int32[n_boxes] receives, per box, the number of other boxes it is a hotspot for.

    Returns:
        Number of hotspot boxes.
    """
    n = box_pos.shape[0]
    n_hot = 0
    for y in range(n):
        fy = floor_index[box_pos[y]]
        k = 0
        for x in range(n):
            if x != y and hot[floor_index[box_pos[x]], fy]:
                k += 1
        out[y] = k
        if k > 0:
            n_hot += 1
    return n_hot


@njit(cache=True, nogil=True, _nrt=False)
def count_stuck(cells, dead, offsets, box_at, box_pos):
    """Boxes off the targets that no single push can move (the plan-free space's hotspots).

    A box is movable along a direction when the square ahead is free floor that is not dead
    and the square behind is free floor for the player; player reachability is not asked, so
    the count depends on the box squares alone (the feature cache keys on them).
    """
    n = 0
    for b in range(box_pos.shape[0]):
        sq = box_pos[b]
        if cells[sq] & GOAL:
            continue
        stuck = True
        for d in range(4):
            ahead = sq + offsets[d]
            behind = sq - offsets[d]
            if (
                (cells[ahead] & FLOOR)
                and box_at[ahead] < 0
                and not dead[ahead]
                and (cells[behind] & FLOOR)
                and box_at[behind] < 0
            ):
                stuck = False
                break
        if stuck:
            n += 1
    return n
