"""FESS feature counts: connectivity, mobility, packed and out-of-plan boxes.

The Python side (``planners.fess.features``) defines the features and owns the buffers; these
kernels only count. Paper terms (connectivity, room connectivity, hotspot, packed boxes, out of
plan) are defined in ``planners/fess/features.py`` and ``planners/fess/rooms.py``. The other
features have modules of their own: room connectivity (``fess_room_count``) and hotspots
(``fess_hotspots``, on the pull closures of ``fess_pull_closure``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import FLOOR
from soko_gym.engine.reach import reach_player


@njit(cache=True, nogil=True, _nrt=False)
def count_regions(cells, box_at, offsets, floor, label, stack):
    """Number of 4-connected areas of floor squares free of boxes (the connectivity feature).

    Args:
        cells: uint8[n_cells] cell flags.
        box_at: int16[n_cells] box index on each square, -1 for none.
        offsets: int32[4] flat index step per direction.
        floor: int32[n_floor] floor squares.
        label: int32[n_cells] receives the region index of each free floor square, -1 on boxes
            (walls keep whatever they held).
        stack: int32[n_cells] scratch.

    Returns:
        Number of regions.
    """
    for i in range(floor.shape[0]):
        label[floor[i]] = -1
    n = 0
    for i in range(floor.shape[0]):
        start = floor[i]
        if box_at[start] >= 0 or label[start] >= 0:
            continue
        label[start] = n
        stack[0] = start
        top = 1
        while top > 0:
            top -= 1
            sq = stack[top]
            for d in range(4):
                nb = sq + offsets[d]
                if (cells[nb] & FLOOR) and label[nb] < 0 and box_at[nb] < 0:
                    label[nb] = n
                    stack[top] = nb
                    top += 1
        n += 1
    return n


@njit(cache=True, nogil=True, _nrt=False)
def count_mobility(cells, box_at, box_pos, offsets, dead, player, stamps, stack):
    """Pushes the player can make now, and the boxes they move (the mobility feature).

    A push counts when the player reaches the square behind the box and the square ahead is a
    free floor square that is not a simple dead square.

    Args:
        cells: uint8[n_cells] cell flags.
        box_at: int16[n_cells] box index on each square, -1 for none.
        box_pos: int32[n_boxes] square of each box.
        offsets: int32[4] flat index step per direction.
        dead: uint8[n_cells] 1 on simple dead squares.
        player: player square.
        stamps: uint32[n_cells + 1] stamp buffer; receives the player's fill.
        stack: int32[n_cells] scratch.

    Returns:
        (number of such pushes, number of boxes with at least one).
    """
    reach_player(box_at, offsets, player, stamps, stack)
    return count_pushes_from_fill(cells, box_at, box_pos, offsets, dead, stamps)


@njit(cache=True, nogil=True, _nrt=False)
def count_pushes_from_fill(cells, box_at, box_pos, offsets, dead, stamps):
    """``count_mobility`` for the player fill already in ``stamps`` (its latest mark)."""
    mark = stamps[stamps.shape[0] - 1]
    n_pushes = 0
    n_boxes = 0
    for b in range(box_pos.shape[0]):
        sq = np.int64(box_pos[b])
        k = 0
        for d in range(4):
            dest = sq + offsets[d]
            if (
                stamps[sq - offsets[d]] == mark
                and (cells[dest] & FLOOR)
                and box_at[dest] < 0
                and dead[dest] == 0
            ):
                k += 1
        n_pushes += k
        if k > 0:
            n_boxes += 1
    return n_pushes, n_boxes


UNORDERED = -2  # plan_src of every step of an unordered plan (``count_packed``)


@njit(cache=True, nogil=True, _nrt=False)
def count_packed(box_at, plan_src, plan_dst):
    """Steps of a packing plan that the boxes already realise (the packed boxes feature).

    After step ``k`` the plan expects boxes on ``S_k``: the step destinations so far minus the
    sources they left. The result is the largest ``k`` with a box on every square of ``S_k``.

    Args:
        box_at: int16[n_cells] box index on each square, -1 for none.
        plan_src: int32[n_steps] square a step takes its box from: a square an earlier step
            filled (a parked box moves on), or -1 for a box from outside the plan.
        plan_dst: int32[n_steps] square a step fills: a target, or a parking square.

    Returns:
        Number of plan steps realised (0 to n_steps). A plan whose sources are all
        ``UNORDERED`` has no order: the result is the number of its squares holding a box.
    """
    if plan_src.shape[0] > 0 and plan_src[0] == UNORDERED:
        filled = 0
        for k in range(plan_dst.shape[0]):
            if box_at[plan_dst[k]] >= 0:
                filled += 1
        return filled
    missing = 0
    best = 0
    for k in range(plan_dst.shape[0]):
        if box_at[plan_dst[k]] < 0:
            missing += 1
        src = plan_src[k]
        if src >= 0 and box_at[src] < 0:
            missing -= 1
        if missing == 0:
            best = k + 1
    return best


@njit(cache=True, nogil=True, _nrt=False)
def count_out_of_plan(box_pos, basin, plan_src, plan_dst, n_done, mark):
    """Boxes neither in the basin nor packed or parked by the plan's first ``n_done`` steps.

    Args:
        box_pos: int32[n_boxes] square of each box.
        basin: uint8[n_cells] 1 on squares of the sink basin.
        plan_src: int32[n_steps] as in ``count_packed``.
        plan_dst: int32[n_steps] as in ``count_packed``.
        n_done: number of plan steps realised (``count_packed``).
        mark: int32[n_cells] scratch, all 0; left all 0 on return.

    Returns:
        Number of out-of-plan boxes.
    """
    for k in range(n_done):
        mark[plan_dst[k]] += 1
        if plan_src[k] >= 0:
            mark[plan_src[k]] -= 1
    n_oop = 0
    for b in range(box_pos.shape[0]):
        sq = box_pos[b]
        if basin[sq] == 0 and mark[sq] <= 0:
            n_oop += 1
    for k in range(n_done):
        mark[plan_dst[k]] = 0
        if plan_src[k] >= 0:
            mark[plan_src[k]] = 0
    return n_oop
