"""The table where FESS's backward and forward searches meet, in kernels.

Every position a backward (pull) search stores becomes an entry: its boxes' Zobrist hash, its
normalized player square, its box squares, the entry it was pulled from and the pull. A
forward search looks each new position up (``meet_find``); a hit is exact (hash, normalized
player and every box square compared), so the forward path plus the entry's pulls reversed
solve the level. ``planners.fess.meet`` runs the backward search and turns a hit into pushes.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from planners._kernels.fess_pulls import (
    P_BOX,
    P_CONN,
    P_DST,
    P_NORM,
    P_PLAYER,
    P_PUSHABLE,
    P_SCORE,
    P_SRC,
)
from planners._kernels.fess_tree import hash_slot

MeetTables = namedtuple(
    "MeetTables",
    [
        "tt",  # int32[2^k] entry of each slot, -1 empty (open addressing, load <= 1/2)
        "hash",  # uint64[cap] Zobrist hash of the entry's boxes
        "norm",  # int32[cap] normalized player square
        "boxes",  # int32[cap, n_boxes] box squares (box order of the backward search)
        "player",  # int32[cap] the player's square after the pull that made the entry
        "parent",  # int32[cap] the entry it was pulled from, -1 for a solved position
        "pull",  # int32[cap, 3] that pull: box square before, after, player before
        "score",  # int32[cap] the pull search's distance score
        "conn",  # int32[cap] player regions
        "depth",  # int32[cap] pulls from the solved position
        "count",  # int64[2] entries stored, the entry a forward search met (-1: none)
    ],
)


def new_meet_tables(cap: int, n_boxes: int) -> MeetTables:
    """An empty table for ``cap`` positions of ``n_boxes`` boxes (``cap`` >= 1)."""
    slots = 1 << max(1, (2 * cap - 1).bit_length())
    return MeetTables(
        tt=np.full(slots, -1, dtype=np.int32),
        hash=np.zeros(cap, dtype=np.uint64),
        norm=np.zeros(cap, dtype=np.int32),
        boxes=np.zeros((cap, max(1, n_boxes)), dtype=np.int32),
        player=np.zeros(cap, dtype=np.int32),
        parent=np.zeros(cap, dtype=np.int32),
        pull=np.zeros((cap, 3), dtype=np.int32),
        score=np.zeros(cap, dtype=np.int32),
        conn=np.zeros(cap, dtype=np.int32),
        depth=np.zeros(cap, dtype=np.int32),
        count=np.array([0, -1], dtype=np.int64),
    )


@njit(cache=True, nogil=True, _nrt=False)
def _key(h, norm):
    return h ^ (np.uint64(norm + 1) * np.uint64(0x9E3779B97F4A7C15))


@njit(cache=True, nogil=True, _nrt=False)
def _lookup(meet, h, norm, box_at):
    """(entry holding the position or -1, its free slot) for ``box_at`` with hash ``h``."""
    mask = meet.tt.shape[0] - 1
    s = hash_slot(_key(h, norm), mask)
    while True:
        e = meet.tt[s]
        if e < 0:
            return -1, s
        if meet.hash[e] == h and meet.norm[e] == norm:
            same = True
            for b in range(meet.boxes.shape[1]):
                if box_at[meet.boxes[e, b]] < 0:
                    same = False
                    break
            if same:
                return e, s
        s = (s + 1) & mask


@njit(cache=True, nogil=True, _nrt=False)
def meet_find(meet, h, norm, box_at):
    """The entry holding position ``box_at`` (boxes' hash ``h``, normalized player), or -1."""
    if meet.count[0] == 0:
        return -1
    e, _ = _lookup(meet, h, norm, box_at)
    return e


@njit(cache=True, nogil=True, _nrt=False)
def meet_add_root(meet, h, norm, box_at, box_pos, player):
    """Store a solved position (``box_at``/``box_pos``, player on ``player``); its entry or -1.

    -1: already stored, or the table is full.
    """
    e, s = _lookup(meet, h, norm, box_at)
    n = meet.count[0]
    if e >= 0 or n >= meet.hash.shape[0]:
        return -1
    meet.tt[s] = n
    meet.hash[n] = h
    meet.norm[n] = norm
    for b in range(box_pos.shape[0]):
        meet.boxes[n, b] = box_pos[b]
    meet.player[n] = player
    meet.parent[n] = -1
    meet.pull[n, 0] = -1
    meet.pull[n, 1] = -1
    meet.pull[n, 2] = -1
    meet.score[n] = 0
    meet.conn[n] = 0
    meet.depth[n] = 0
    meet.count[0] = n + 1
    return n


_FAR = np.int64(1_000_000)  # the cost of a box no start square's box can reach


@njit(cache=True, nogil=True, _nrt=False)
def match_cost(dist, boxes, work):
    """Least total cost of assigning the boxes to the start squares, one box each.

    ``dist[j, sq]``: the cost of the box on ``sq`` for start square ``j`` (negative: no box
    from there reaches it); ``boxes``: the box squares; ``work``: int64[6, n_boxes + 1]
    scratch. The Hungarian method by shortest augmenting paths with potentials, O(n^3).
    """
    n = boxes.shape[0]
    u = work[0]
    v = work[1]
    p = work[2]  # p[j]: the box (1-based) given start square j, 0 for none
    way = work[3]
    minv = work[4]
    used = work[5]
    inf = np.int64(1) << np.int64(62)
    for j in range(n + 1):
        u[j] = 0
        v[j] = 0
        p[j] = 0
        way[j] = 0
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        for j in range(n + 1):
            minv[j] = inf
            used[j] = 0
        while True:
            used[j0] = 1
            i0 = p[j0]
            sq = boxes[i0 - 1]
            delta = inf
            j1 = 0
            for j in range(1, n + 1):
                if used[j]:
                    continue
                c = np.int64(dist[j - 1, sq])
                cur = (c if c >= 0 else _FAR) - u[i0] - v[j]
                if cur < minv[j]:
                    minv[j] = cur
                    way[j] = j0
                if minv[j] < delta:
                    delta = minv[j]
                    j1 = j
            for j in range(n + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0 != 0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    total = np.int64(0)
    for j in range(1, n + 1):
        c = np.int64(dist[j - 1, boxes[p[j] - 1]])
        total += c if c >= 0 else _FAR
    return total


@njit(cache=True, nogil=True, _nrt=False)
def meet_add_pulls(meet, zobrist, box_at, parent, rows, k, keep, limit, dist, work):
    """Store the new positions of pull rows ``rows[:k]`` of entry ``parent`` (loaded in ``box_at``).

    A row is kept when its box stays on the board on a ``keep`` square the packing advisor may
    use (``P_PUSHABLE``). Returns the entries added (the last ones); stops when the table holds
    ``limit`` entries or is full. With rows in ``dist`` (``match_cost``'s costs, ``work`` its
    scratch) an entry's score is its boxes' matching cost, else the pull row's score.
    """
    cap = min(meet.hash.shape[0], limit)
    n0 = meet.count[0]
    h0 = meet.hash[parent]
    for i in range(k):
        dst = np.int64(rows[i, P_DST])
        if dst < 0 or not keep[dst] or rows[i, P_PUSHABLE] == 0:
            continue
        if meet.count[0] >= cap:
            break
        src = np.int64(rows[i, P_SRC])
        b = np.int64(rows[i, P_BOX])
        h = h0 ^ zobrist[src] ^ zobrist[dst]
        norm = rows[i, P_NORM]
        box_at[src] = -1
        box_at[dst] = b
        e, s = _lookup(meet, h, norm, box_at)
        box_at[dst] = -1
        box_at[src] = b
        if e >= 0:
            continue
        n = meet.count[0]
        meet.tt[s] = n
        meet.hash[n] = h
        meet.norm[n] = norm
        for j in range(meet.boxes.shape[1]):
            meet.boxes[n, j] = meet.boxes[parent, j]
        meet.boxes[n, b] = dst
        meet.player[n] = rows[i, P_PLAYER]
        meet.parent[n] = parent
        meet.pull[n, 0] = src
        meet.pull[n, 1] = dst
        meet.pull[n, 2] = meet.player[parent]
        if dist.shape[0] > 0:
            meet.score[n] = match_cost(dist, meet.boxes[n], work)
        else:
            meet.score[n] = rows[i, P_SCORE]
        meet.conn[n] = rows[i, P_CONN]
        meet.depth[n] = meet.depth[parent] + 1
        meet.count[0] = n + 1
    return meet.count[0] - n0


__all__ = [
    "MeetTables",
    "match_cost",
    "meet_add_pulls",
    "meet_add_root",
    "meet_find",
    "new_meet_tables",
]
