"""The FESS search tree in arrays: its nodes, transposition table, cells and their heaps.

``FessTree`` holds one row per node (box squares, player, parent, the macro move that made
it, weight, features, cell, its slice of the move pool) and the counters of the search
(``C_*``). Positions are found by the transposition table (``tt_find``: open addressing on the
boxes' Zobrist hash mixed with the normalized player square); feature-space points by the cell
table (``cell_of``). Each active cell keeps its nodes in a skew heap threaded through the node
rows, keyed by each node's next move (``push_node``, ``pop_heap``). Dead marks go up the tree
(``mark_dead``). The loop that uses them is ``fess_search``.
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
    M_NORM,
    M_OOP,
    M_PACKED,
    M_PLAYER,
    M_ROOMS,
    M_SRC,
)
from planners._kernels.fess_order import N_ADVISORS

# the move columns a node keeps in the pool (int16), in this order
KEEP = (M_BOX, M_SRC, M_DST, M_PLAYER, M_NORM, M_OOP, M_PACKED, M_CONN, M_ROOMS, M_HOT, M_MOB)
K_BOX, K_SRC, K_DST, K_PLAYER, K_NORM, K_OOP, K_PACKED, K_CONN, K_ROOMS, K_HOT, K_MOB = range(11)
N_KEEP = 11


MS_LAZY = -1  # ``mstart`` of a node whose moves are not generated yet


# FessTree.ctr
C_NODES = 0
C_EXPANDED = 1
C_TRANSPOSITIONS = 2
C_CELLS = 3  # cells made active (a cell emptied and refilled counts again)
C_PI_CORRAL_NODES = 4
C_MOVES_USED = 5  # rows of the move pool in use
C_TICK = 6  # insertion counter of the cell heaps (ties in arrival order)
C_ROUND = 7  # round-robin position in the active list
C_ACTIVE = 8  # active cells
C_SOLVED = 9  # the solved node, -1 before
C_LABELLED = 10  # node whose corrals the corral scratch holds, -1 for none
C_ROOM_SEARCHES = 11
C_ROOM_MEMO_HITS = 12
C_LEARNED_HITS = 13
C_N_CELL_IDS = 14  # cell ids handed out
C_WMIN = 15  # the smaller move weight: a node not generated yet has no move cheaper than this
C_GENERATED = 16  # nodes whose moves were generated (the root included)
C_TESTED = 17  # nodes whose node-level deadlock tests ran
C_ADVISOR = 18  # N_ADVISORS slots: expanded moves each advisor picked
N_CTR = C_ADVISOR + N_ADVISORS


FessTree = namedtuple(
    "FessTree",
    [
        "box_pos",  # int16[cap, n_boxes]
        "hash",  # uint64[cap] Zobrist hash of the boxes
        "player",  # int32[cap] the player's square (after the move that made the node)
        "norm",  # int32[cap] its normalized square
        "parent",  # int32[cap] -1 for the root
        "moved",  # int32[cap, 2] the macro move that made the node: box, source square
        "weight",  # int64[cap]
        "feat",  # int32[cap, 6] oop, packed, conn, rooms, hot, mob
        "cell",  # int32[cap] cell id
        "mstart",  # int64[cap] first row of the node's moves in the pool; < 0: MS_* states
        "mcount",  # int32[cap] its moves
        "mnext",  # int32[cap] position in its order of the next move to expand
        "n_open",  # int32[cap] moves not expanded plus children not known dead
        "dead",  # uint8[cap]
        "lseen",  # int32[cap] learned patterns when the node's moves were generated
        "tick",  # int64[cap] when the node entered its cell's heap
        "left",  # int32[cap] skew heap links
        "right",  # int32[cap]
        "tt",  # int32[tcap] node per slot, -1 empty (tcap a power of two >= 2 cap)
        "rows",  # int16[mcap, N_KEEP] the move pool
        "mwts",  # int32[mcap] move weights
        "morder",  # int32[mcap] the node's move indices, first to expand first
        "advised",  # uint8[mcap] bits of the advisors that picked the move
        "cell_feat",  # int32[cap, 4] oop, -packed, conn, rooms (0 without the room axis)
        "cell_root",  # int32[cap] heap root per cell, -1 empty
        "cell_on",  # uint8[cap] 1 while the cell is in the active list
        "cell_tab",  # int32[tcap] cell id per slot, -1 empty
        "active",  # int32[cap] the active cells, in the order they became active
        "ctr",  # int64[N_CTR] (C_* slots)
    ],
)


_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True, _nrt=False)
def hash_slot(h, mask):
    h = (h ^ (h >> np.uint64(31))) * _MIX
    return np.int64((h ^ (h >> np.uint64(29))) & np.uint64(mask))


@njit(cache=True, nogil=True, _nrt=False)
def _tt_hash(h, norm):
    return h ^ (np.uint64(norm + 1) * np.uint64(0xBF58476D1CE4E5B9))


@njit(cache=True, nogil=True, _nrt=False)
def _holds_moved(tree, n, box_at, src, dst):
    """True when node ``n``'s boxes are ``box_at``'s with the box on ``src`` moved to ``dst``.

    Both box sets have as many distinct squares, so each of ``n``'s being one of the other's
    is equality (node rows keep box indices along their moves: one box set, many orders).
    """
    for b in range(tree.box_pos.shape[1]):
        sq = tree.box_pos[n, b]
        if sq != dst and (sq == src or box_at[sq] < 0):
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def tt_find(tree, h, norm, box_at, src, dst):
    """(node of a position or -1, its free slot): the transposition table's look-up.

    The position is ``box_at`` with the box on ``src`` moved to ``dst`` (-1, -1: as it is),
    its boxes' hash ``h`` and normalized player ``norm``. A node matches on its hash, norm and
    box squares: a hash collision alone would close a live position's move as a transposition.
    """
    mask = tree.tt.shape[0] - 1
    s = hash_slot(_tt_hash(h, norm), mask)
    while True:
        n = tree.tt[s]
        if n < 0:
            return -1, s
        if tree.hash[n] == h and tree.norm[n] == norm and _holds_moved(tree, n, box_at, src, dst):
            return n, s
        s = (s + 1) & mask


@njit(cache=True, nogil=True, _nrt=False)
def _cell_code(oop, packed, conn, rooms):
    return (np.int64(oop) << 48) | (np.int64(packed) << 32) | (np.int64(conn) << 16) | rooms


@njit(cache=True, nogil=True, _nrt=False)
def _cell_slot(tree, code):
    """(cell id with packed features ``code`` or -1, its free slot)."""
    mask = tree.cell_tab.shape[0] - 1
    s = hash_slot(np.uint64(code), mask)
    while True:
        c = tree.cell_tab[s]
        if c < 0:
            return -1, s
        cf = tree.cell_feat[c]
        if _cell_code(np.int64(cf[0]), -np.int64(cf[1]), np.int64(cf[2]), np.int64(cf[3])) == code:
            return c, s
        s = (s + 1) & mask


@njit(cache=True, nogil=True, _nrt=False)
def cell_of(tree, oop, packed, conn, rooms):
    """The id of the cell (oop, -packed, conn, rooms), made when new."""
    code = _cell_code(oop, packed, conn, rooms)
    c, s = _cell_slot(tree, code)
    if c >= 0:
        return c
    c = tree.ctr[C_N_CELL_IDS]
    tree.ctr[C_N_CELL_IDS] = c + 1
    tree.cell_tab[s] = c
    tree.cell_feat[c, 0] = oop
    tree.cell_feat[c, 1] = -packed
    tree.cell_feat[c, 2] = conn
    tree.cell_feat[c, 3] = rooms
    tree.cell_root[c] = -1
    tree.cell_on[c] = 0
    return c


@njit(cache=True, nogil=True, _nrt=False)
def cell_worse(tree, a, b, dominated):
    """True when cell ``a`` is worse than cell ``b``.

    Lexicographic on the features; with ``dominated``, better on no feature and worse on one.
    """
    if dominated:
        worse = False
        for i in range(4):
            if tree.cell_feat[a, i] < tree.cell_feat[b, i]:
                return False
            if tree.cell_feat[a, i] > tree.cell_feat[b, i]:
                worse = True
        return worse
    for i in range(4):
        if tree.cell_feat[a, i] != tree.cell_feat[b, i]:
            return tree.cell_feat[a, i] > tree.cell_feat[b, i]
    return False


@njit(cache=True, nogil=True, _nrt=False)
def rehash_tree(tree):
    """Fill ``tt`` and ``cell_tab`` (all -1) from the nodes and cells (after ``grow_tree``)."""
    mask = tree.tt.shape[0] - 1
    for n in range(tree.ctr[C_NODES]):
        s = hash_slot(_tt_hash(tree.hash[n], tree.norm[n]), mask)
        while tree.tt[s] >= 0:
            s = (s + 1) & mask
        tree.tt[s] = n
    for c in range(tree.ctr[C_N_CELL_IDS]):
        cf = tree.cell_feat[c]
        code = _cell_code(np.int64(cf[0]), -np.int64(cf[1]), np.int64(cf[2]), np.int64(cf[3]))
        _, s = _cell_slot(tree, code)
        tree.cell_tab[s] = c


# ---------------------------------------------------------------------- cell heaps


@njit(cache=True, nogil=True, _nrt=False)
def _less(tree, a, b):
    """True when node ``a``'s next move comes before node ``b``'s (weight, features, tick).

    A node whose moves are not generated yet stands for its cheapest possible move: its weight
    plus the smaller move weight, before a generated node of the same weight. So it is
    generated before any move that could come after its own first move is expanded, and the
    moves are expanded in the order eager generation gives them.
    """
    la = tree.mstart[a] < 0
    lb = tree.mstart[b] < 0
    wmin = tree.ctr[C_WMIN]
    ra = rb = np.int64(0)
    if la:
        wa = tree.weight[a] + wmin
    else:
        ra = tree.mstart[a] + tree.morder[tree.mstart[a] + tree.mnext[a]]
        wa = tree.weight[a] + tree.mwts[ra]
    if lb:
        wb = tree.weight[b] + wmin
    else:
        rb = tree.mstart[b] + tree.morder[tree.mstart[b] + tree.mnext[b]]
        wb = tree.weight[b] + tree.mwts[rb]
    if wa != wb:
        return wa < wb
    if la or lb:
        if la != lb:
            return la
        return tree.tick[a] < tree.tick[b]
    ma = tree.rows[ra]
    mb = tree.rows[rb]
    for col, sign in ((K_OOP, 1), (K_PACKED, -1), (K_CONN, 1), (K_ROOMS, 1), (K_HOT, 1),
                      (K_MOB, -1)):  # fmt: skip
        if ma[col] != mb[col]:
            return sign * (np.int64(ma[col]) - np.int64(mb[col])) < 0
    return tree.tick[a] < tree.tick[b]


@njit(cache=True, nogil=True, _nrt=False)
def _merge(tree, h1, h2):
    """Skew-heap merge of the heaps rooted at ``h1`` and ``h2`` (-1 empty); returns the root."""
    if h1 < 0:
        return h2
    if h2 < 0:
        return h1
    if _less(tree, np.int64(h2), np.int64(h1)):
        h1, h2 = h2, h1
    root = h1
    cur = h1
    other = h2
    while True:
        r = tree.right[cur]
        tree.right[cur] = tree.left[cur]
        if r < 0:
            tree.left[cur] = other
            return root
        if _less(tree, np.int64(other), np.int64(r)):
            r, other = other, r
        tree.left[cur] = r
        cur = r


@njit(cache=True, nogil=True, _nrt=False)
def push_node(tree, node):
    """Put the node's next move into its cell's heap (the cell made active when it is not).

    A node not generated yet (``mstart`` -1) goes in as its cheapest possible move.
    """
    if tree.mstart[node] >= 0 and tree.mnext[node] >= tree.mcount[node]:
        return
    tree.ctr[C_TICK] += 1
    tree.tick[node] = tree.ctr[C_TICK]
    enter_heap(tree, node)


@njit(cache=True, nogil=True, _nrt=False)
def enter_heap(tree, node):
    """Merge ``node`` into its cell's heap with the tick it has."""
    c = tree.cell[node]
    ctr = tree.ctr
    if not tree.cell_on[c]:
        tree.cell_on[c] = 1
        tree.cell_root[c] = -1
        tree.active[ctr[C_ACTIVE]] = c
        ctr[C_ACTIVE] += 1
        ctr[C_CELLS] += 1
    tree.left[node] = -1
    tree.right[node] = -1
    tree.cell_root[c] = _merge(tree, np.int64(tree.cell_root[c]), np.int64(node))


@njit(cache=True, nogil=True, _nrt=False)
def pop_heap(tree, c):
    """Remove and return the first node of cell ``c``'s heap (not empty)."""
    root = tree.cell_root[c]
    tree.cell_root[c] = _merge(tree, np.int64(tree.left[root]), np.int64(tree.right[root]))
    tree.left[root] = -1
    tree.right[root] = -1
    return root


# ---------------------------------------------------------------------- dead marking


@njit(cache=True, nogil=True, _nrt=False)
def mark_dead(tree, node):
    while node >= 0 and not tree.dead[node]:
        tree.dead[node] = 1
        parent = tree.parent[node]
        if parent < 0:
            return
        tree.n_open[parent] -= 1
        if tree.n_open[parent] > 0:
            return
        node = parent


@njit(cache=True, nogil=True, _nrt=False)
def close_move(tree, node):
    """A move of ``node`` led nowhere new: one fewer open move."""
    tree.n_open[node] -= 1
    if tree.n_open[node] == 0 and tree.mnext[node] >= tree.mcount[node]:
        mark_dead(tree, node)


# ---------------------------------------------------------------------- positions


@njit(cache=True, nogil=True, _nrt=False)
def load_node(tree, w, node):
    """Put ``node``'s position into ``w.box_at`` and ``w.box_pos`` (clearing the last one)."""
    for b in range(w.box_pos.shape[0]):
        w.box_at[w.box_pos[b]] = -1
    for b in range(w.box_pos.shape[0]):
        sq = tree.box_pos[node, b]
        w.box_pos[b] = sq
        w.box_at[sq] = b
