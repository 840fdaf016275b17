"""Macro moves: a box's fewest-push paths, the plan of a move of a box to a square, the mask.

``box_paths`` is the macro env's and the planners' (packing order, FESS) breadth-first search
over (box square, player side) states; ``macro_plan`` and ``macro_mask`` are the macro kind's
building blocks of the per-env step (``engine.step``).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

from soko_gym.engine.actions import macro_action
from soko_gym.engine.constants import DIST_INF, FLOOR
from soko_gym.engine.reach import reach_player


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
def nearest_side(dist, dst):
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
    best = nearest_side(dist, dst)
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
