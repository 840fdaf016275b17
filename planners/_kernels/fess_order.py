"""FESS move ordering in one kernel: the seven advisors, the move weights and the move order.

Everything a new search node needs after its macro moves are generated (``fess_moves.
push_moves``): each advisor marks at most one move (FESS paper, Section 5; definitions in
``planners.fess.advisors``, which stays the readable reference and is tested against this
kernel), marked moves get the advisor weight, the others the normal weight, and the moves are
sorted by (weight, Section 7's feature order, the caller's tie-break key).

Arguments come in two named bundles (module-level namedtuples, one compiled signature each):
``OrderTables`` holds what is fixed for a search, ``OrderNode`` what belongs to one position.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from planners._kernels.fess_move_data import (
    M_BOX,
    M_CONN,
    M_DST,
    M_HOT,
    M_MOB,
    M_NEW_PUSHES,
    M_OOP,
    M_PACKED,
    M_ROOMS,
    M_SRC,
)

# advisor bits of ``OrderTables.enabled`` and of the ``picked`` output, in ADVISORS' order
A_PACKING = 0
A_CONNECTIVITY = 1
A_ROOM_CONNECTIVITY = 2
A_HOTSPOTS = 3
A_EXPLORER = 4
A_OPENER = 5
A_OUT_OF_PLAN = 6
A_BEST = 7
N_ADVISORS = 8
NEARBY = 2  # Manhattan distance of a "nearby" box (opener and out-of-plan advisors)

OrderTables = namedtuple(
    "OrderTables",
    [
        "basin",  # uint8[n_cells] 1 on the sink basin
        "basin_dist",  # int32[n_cells] walking distance to the basin
        "holes",  # uint8[n_cells] 1 on target holes (``target_holes``): the best advisor's
        "plan_src",  # int32[n_steps] packing plan sources (-1: from outside)
        "plan_dst",  # int32[n_steps] packing plan destinations
        "weights",  # int64[3]: advisor weight, normal weight, enabled advisor bits
        "width",  # int64[1] board width
        "mark",  # int32[n_cells] scratch, all 0 on entry and return
        "idx",  # int64[cap] scratch (cap: the most moves a node can have)
        "tmp",  # int64[cap] scratch
        "rank",  # int64[cap] scratch
        "ok",  # bool[cap] scratch
    ],
)

OrderNode = namedtuple(
    "OrderNode",
    [
        "features",  # int64[6] the position's oop, packed, conn, rooms, hot, mob
        "box_pos",  # int32[n_boxes] box squares
        "hot_counts",  # int32[n_boxes] per box, boxes it is a hotspot for
        "tiebreak",  # int64[n_moves] last sort key (zeros, or a seeded permutation)
    ],
)


@njit(cache=True, nogil=True, _nrt=False)
def _manhattan(a, b, width):
    return abs(a // width - b // width) + abs(a % width - b % width)


@njit(cache=True, nogil=True, _nrt=False)
def _best_beyond(moves, k, col, base, sign, ok, rank):
    """The best-ranked move whose column ``col`` lies beyond ``base`` in direction ``sign``."""
    for i in range(k):
        ok[i] = sign * (np.int64(moves[i, col]) - base) > 0
    return _pick(ok, rank)


@njit(cache=True, nogil=True, _nrt=False)
def _pick(ok, rank):
    """The best-ranked move with ``ok`` set, or -1."""
    best = -1
    for i in range(ok.shape[0]):
        if ok[i] and (best < 0 or rank[i] < rank[best]):
            best = i
    return best


@njit(cache=True, nogil=True, _nrt=False)
def order_moves(moves, n_moves, tables, node, wts, order, picked):
    """Weights, advisor picks and order of a node's moves.

    Args:
        moves: int32[cap, N_MOVE_COLS] the node's move table (first ``n_moves`` rows).
        n_moves: number of moves.
        tables: ``OrderTables`` of the search.
        node: ``OrderNode`` of the position.
        wts: int64[>= n_moves] receives each move's weight.
        order: int64[>= n_moves] receives the move indices, first to expand first.
        picked: int64[>= n_moves] receives per move the bits of the advisors that picked it.

    Returns:
        Number of moves some advisor picked.
    """
    k = n_moves
    advisor_w = tables.weights[0]
    normal_w = tables.weights[1]
    enabled = tables.weights[2]
    width = tables.width[0]
    f = node.features
    # feature rank of every move (0 = best), ties by the tie-break key then by index
    idx = tables.idx
    _sort_by_features(moves, k, node.tiebreak, idx, tables.tmp)
    rank = tables.rank[:k]
    for i in range(k):
        rank[idx[i]] = i
    ok = tables.ok[:k]
    for i in range(k):
        wts[i] = normal_w
        picked[i] = 0
    n_picked = 0
    for a in range(N_ADVISORS):
        if not (enabled >> a) & 1:
            continue
        choice = -1
        # np.int64 columns and signs, not literals: one compiled _best_beyond, not five
        if a == A_PACKING:  # more packed boxes
            choice = _best_beyond(moves, k, np.int64(M_PACKED), f[1], np.int64(1), ok, rank)
        elif a == A_CONNECTIVITY:  # fewer player regions
            choice = _best_beyond(moves, k, np.int64(M_CONN), f[2], np.int64(-1), ok, rank)
        elif a == A_ROOM_CONNECTIVITY:  # fewer broken room edges
            choice = _best_beyond(moves, k, np.int64(M_ROOMS), f[3], np.int64(-1), ok, rank)
        elif a == A_HOTSPOTS:  # fewer hotspots
            choice = _best_beyond(moves, k, np.int64(M_HOT), f[4], np.int64(-1), ok, rank)
        elif a == A_EXPLORER:  # a new push from a newly reached square
            choice = _best_beyond(
                moves, k, np.int64(M_NEW_PUSHES), np.int64(0), np.int64(1), ok, rank
            )
        elif a == A_OPENER:
            choice = _opener(moves, k, f, node, width, ok, rank)
        elif a == A_OUT_OF_PLAN:
            choice = _out_of_plan(moves, k, f, tables, node, width, ok, rank)
        elif k > 0:  # A_BEST: a push into a target hole, else the first in the feature order
            for i in range(k):
                ok[i] = tables.holes[moves[i, M_DST]] != 0
            choice = _pick(ok, rank)
            if choice < 0:
                choice = idx[0]
        if choice >= 0:
            if picked[choice] == 0:
                n_picked += 1
            picked[choice] |= 1 << a
            wts[choice] = advisor_w
    # by weight, feature rank within a weight (two weights: a stable partition)
    first = min(advisor_w, normal_w)
    n = 0
    for i in range(k):
        if wts[idx[i]] == first:
            order[n] = idx[i]
            n += 1
    for i in range(k):
        if wts[idx[i]] != first:
            order[n] = idx[i]
            n += 1
    return n_picked


@njit(cache=True, nogil=True, _nrt=False)
def _before(moves, tb, a, b):
    """True when move ``a`` comes before move ``b`` in Section 7's feature order.

    Fewer out-of-plan boxes, more packed, fewer regions, fewer broken room edges, fewer
    hotspots, more mobility, then the tie-break key, then the index.
    """
    for col, sign in ((M_OOP, 1), (M_PACKED, -1), (M_CONN, 1), (M_ROOMS, 1), (M_HOT, 1),
                      (M_MOB, -1)):  # fmt: skip
        va = sign * np.int64(moves[a, col])
        vb = sign * np.int64(moves[b, col])
        if va != vb:
            return va < vb
    if tb[a] != tb[b]:
        return tb[a] < tb[b]
    return a < b


@njit(cache=True, nogil=True, _nrt=False)
def _sort_by_features(moves, k, tb, idx, tmp):
    """Write into ``idx[:k]`` the moves ``0..k-1`` in feature order (bottom-up merge sort)."""
    for i in range(k):
        idx[i] = i
    width = 1
    src = idx
    dst = tmp
    in_idx = True  # whether ``src`` is ``idx``
    while width < k:
        lo = 0
        while lo < k:
            mid = min(lo + width, k)
            hi = min(lo + 2 * width, k)
            a = lo
            b = mid
            o = lo
            while a < mid and b < hi:
                if _before(moves, tb, src[b], src[a]):
                    dst[o] = src[b]
                    b += 1
                else:
                    dst[o] = src[a]
                    a += 1
                o += 1
            while a < mid:
                dst[o] = src[a]
                a += 1
                o += 1
            while b < hi:
                dst[o] = src[b]
                b += 1
                o += 1
            lo = hi
        src, dst = dst, src
        in_idx = not in_idx
        width *= 2
    if not in_idx:
        for i in range(k):
            idx[i] = src[i]


@njit(cache=True, nogil=True, _nrt=False)
def _opener(moves, k, f, node, width, ok, rank):
    """Push the hottest hotspot, or a box near it away from it, not worsening connectivity."""
    counts = node.hot_counts
    if counts.shape[0] == 0:
        return -1
    hottest = 0
    for i in range(counts.shape[0]):
        if counts[i] > counts[hottest]:
            hottest = i
    if counts[hottest] == 0:
        return -1
    for i in range(k):
        ok[i] = moves[i, M_CONN] <= f[2] and moves[i, M_BOX] == hottest
    choice = _pick(ok, rank)
    if choice >= 0:
        return choice
    sq = node.box_pos[hottest]
    for i in range(k):
        src = moves[i, M_SRC]
        near = _manhattan(src, sq, width) <= NEARBY
        away = _manhattan(moves[i, M_DST], sq, width) > _manhattan(src, sq, width)
        ok[i] = moves[i, M_CONN] <= f[2] and moves[i, M_BOX] != hottest and near and away
    return _pick(ok, rank)


@njit(cache=True, nogil=True, _nrt=False)
def _out_of_plan(moves, k, f, tables, node, width, ok, rank):
    """Push the out-of-plan box nearest the basin into it, or a nearby box in to make room."""
    basin = tables.basin
    mark = tables.mark
    n_done = f[1]
    for s in range(n_done):
        mark[tables.plan_dst[s]] += 1
        if tables.plan_src[s] >= 0:
            mark[tables.plan_src[s]] -= 1
    target = -1
    box_pos = node.box_pos
    for b in range(box_pos.shape[0]):
        sq = box_pos[b]
        if basin[sq] == 0 and mark[sq] <= 0:
            if target < 0 or tables.basin_dist[sq] < tables.basin_dist[box_pos[target]]:
                target = b
    for s in range(n_done):
        mark[tables.plan_dst[s]] = 0
        if tables.plan_src[s] >= 0:
            mark[tables.plan_src[s]] = 0
    if target < 0:
        return -1
    for i in range(k):
        ok[i] = (
            moves[i, M_CONN] <= f[2] and basin[moves[i, M_DST]] != 0 and moves[i, M_BOX] == target
        )
    choice = _pick(ok, rank)
    if choice >= 0:
        return choice
    sq = box_pos[target]
    for i in range(k):
        ok[i] = (
            moves[i, M_CONN] <= f[2]
            and basin[moves[i, M_DST]] != 0
            and moves[i, M_BOX] != target
            and _manhattan(moves[i, M_SRC], sq, width) <= NEARBY
        )
    return _pick(ok, rank)
