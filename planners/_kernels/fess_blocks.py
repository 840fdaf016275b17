"""The player regions around a box the move generator lifts: blocks, box paths, region sums.

With the moving box off the board, one depth-first search numbers the free region it leaves
and splits its edges into biconnected blocks (``edge_blocks``). From them, without a flood
fill per state or per move: the box's push paths (``block_box_paths``), and for each square
the box may be put on, the regions it splits the area into with their normalized squares and
mobility (``region_sums``, ``subtree_sums``, ``part_of``, ``split_part``). Inlined into the
move generator (``fess_moves``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planners._kernels.fess_move_data import DL_DEAD_SQUARE
from soko_gym.engine.constants import DIST_INF, FLOOR


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def edge_blocks(cells, box_at, offsets, root, sc):
    """Biconnected blocks, by edge, of the player region (free squares) holding ``root``.

    ``sc.block[v * 4 + d]`` receives the block of the edge from free square ``v`` to its free
    neighbour in direction ``d`` (both directions of an edge get the same block). Two free
    neighbours ``s``, ``t`` of a square ``q`` stay connected when a box stands on ``q`` exactly
    when the edges ``q-s`` and ``q-t`` share a block, so box paths need no flood fill per
    state, and a box put on ``q`` splits its region into as many regions as there are distinct
    blocks among ``q``'s edges. Iterative Tarjan over the grid graph, rooted at ``root`` (the
    region's smallest square, for ``split_part``).

    Only the region's squares are touched: depth-first numbers go on from the last call's
    (``sc.dfs_info[2]``), so older ones read as unvisited and nothing is cleared per call.
    ``sc.region`` receives the call's first number on each square of the region (a square
    holds it exactly when it is in the region), ``sc.order`` the squares by depth-first
    number from 0, ``sc.dfs_info[0]`` their count.
    """
    disc = sc.disc
    low = sc.low
    next_dir = sc.next_dir
    in_dir = sc.in_dir
    dfs = sc.dfs
    estack = sc.edge_stack
    block = sc.block
    base = sc.dfs_info[2]
    if base > (1 << 30):  # numbers would overflow: clear them and start again
        disc[:] = -1
        sc.region[:] = -1
        base = 0
    t = base
    tag = base
    n_blocks = 0
    sc.region[root] = tag
    disc[root] = t
    low[root] = t
    sc.order[0] = root
    t += 1
    next_dir[root] = 0
    in_dir[root] = -1
    dfs[0] = root
    top = 1
    etop = 0
    while top > 0:
        v = dfs[top - 1]
        d = next_dir[v]
        if d < 4:
            next_dir[v] = d + 1
            w = v + offsets[d]
            if not (cells[w] & FLOOR) or box_at[w] >= 0:
                continue
            if disc[w] < base:
                estack[etop] = v * 4 + d
                etop += 1
                sc.region[w] = tag
                disc[w] = t
                low[w] = t
                sc.order[t - base] = w
                t += 1
                next_dir[w] = 0
                in_dir[w] = d
                dfs[top] = w
                top += 1
            elif disc[w] < disc[v] and (in_dir[v] < 0 or d != (in_dir[v] ^ 1)):
                estack[etop] = v * 4 + d  # a back edge to an ancestor
                etop += 1
                if disc[w] < low[v]:
                    low[v] = disc[w]
        else:
            top -= 1
            if top == 0:
                break
            u = dfs[top - 1]
            if low[v] < low[u]:
                low[u] = low[v]
            if low[v] >= disc[u]:  # u separates v's subtree: its edges form a block
                while True:
                    etop -= 1
                    e = estack[etop]
                    a = e >> 2
                    dd = e & 3
                    block[a * 4 + dd] = n_blocks
                    block[(a + offsets[dd]) * 4 + (dd ^ 1)] = n_blocks
                    if a == u and dd == in_dir[v]:
                        break
                n_blocks += 1
    sc.dfs_info[0] = t - base
    sc.dfs_info[1] = 0
    sc.dfs_info[2] = t


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def block_box_paths(cells, dead_side, box_at, offsets, src, sc, mark, kinds, own):
    """Fewest pushes of the box on ``src`` to every live state (``engine.step.box_paths``).

    The box's square must already be free in ``box_at`` and ``sc.block`` hold its blocks
    (``edge_blocks``); the player stands before the move in region ``own`` of ``sc.pos_label``
    (the position's regions, the box still on ``src``). Same
    ``dist`` encoding as ``box_paths``; instead of its state links, ``sc.first`` receives the
    direction of each reached state's first push (all the moves need of the path). Paths stop
    at states from which a lone box reaches no goal (``dead_side``, which covers simple dead
    squares): other boxes only take pushes away, so every state reached from a dead one is dead
    too and a position with the box in one is lost. Each square where a push is stopped so is
    counted once in ``kinds`` (its ``sc.dst_mark`` set to ``-mark``).
    """
    dist = sc.dist
    first = sc.first
    queue = sc.queue
    block = sc.block
    dist[:] = DIST_INF
    tail = 0
    for s in range(4):
        side = src + offsets[s]
        if sc.pos_label[side] == own:
            dist[src * 4 + s] = 0
            first[src * 4 + s] = 0
            if tail == 0:
                queue[0] = src * 4 + s
                tail = 1
    head = 0
    while head < tail:
        code = queue[head]
        head += 1
        q = code >> 2
        s = code & 3
        here = dist[code]
        grp = block[q * 4 + s]
        for t in range(4):  # sides in the same region share the state's distance
            nb = q + offsets[t]
            if (cells[nb] & FLOOR) and box_at[nb] < 0 and block[q * 4 + t] == grp:
                if dist[q * 4 + t] == DIST_INF:
                    dist[q * 4 + t] = here
                    first[q * 4 + t] = first[code]
        for d in range(4):
            behind = d ^ 1  # the player pushes from the opposite side
            stand = q + offsets[behind]
            if not (cells[stand] & FLOOR) or box_at[stand] >= 0 or block[q * 4 + behind] != grp:
                continue
            dest = q + offsets[d]
            if not (cells[dest] & FLOOR) or box_at[dest] >= 0:
                continue
            nxt = dest * 4 + behind
            if dead_side[nxt]:
                if sc.dst_mark[dest] != -mark:
                    sc.dst_mark[dest] = -mark
                    kinds[DL_DEAD_SQUARE] += 1
                continue
            if dist[nxt] == DIST_INF:
                dist[nxt] = here + 1
                first[nxt] = d if here == 0 else first[code]
                queue[tail] = nxt
                tail += 1
    return tail


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def region_sums(cells, dead, box_at, offsets, sc):
    """Over the region ``edge_blocks`` numbered: its pushes and its two smallest squares.

    Fills ``sc.reg_mob[0]`` (pushes from the region's squares, dead squares left out),
    ``sc.reg_new[0]`` (those from squares not reached before the move), ``sc.reg_min[0]`` and,
    per square of the region, ``sc.contrib`` (its pushes). A box put on a square whose free
    neighbours stay connected (one block) leaves the region whole but for that square: the
    child's region, its normalized square and its mobility follow from these sums and the
    squares around the box, without a fill.
    """
    big = np.int32(cells.shape[0])
    mob = 0
    new = 0
    second = big
    root = sc.order[0]  # the region's smallest square
    for t in range(sc.dfs_info[0]):
        v = sc.order[t]
        c = 0
        for d in range(4):
            q = v + offsets[d]
            if box_at[q] >= 0:
                a = q + offsets[d]
                if (cells[a] & FLOOR) and box_at[a] < 0 and dead[a] == 0:
                    c += 1
        sc.contrib[v] = c
        mob += c
        if not sc.before[v]:
            new += c
        if v != root and v < second:
            second = v
    sc.reg_mob[0] = mob
    sc.reg_new[0] = new
    sc.reg_min[0, 0] = root
    sc.reg_min[0, 1] = second


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def subtree_sums(offsets, sc):
    """``sc.sub_*`` of every free square: sums over its subtree of ``edge_blocks``' DFS tree.

    Needs ``region_sums`` first (``sc.contrib``). A box put on a cut square splits its region
    into the subtrees of the children that cannot reach above it, plus the rest: each part's
    pushes and smallest square follow from these sums (``split_part``) without a fill.
    """
    n = sc.dfs_info[0]
    for t in range(n):
        v = sc.order[t]
        c = sc.contrib[v]
        sc.sub_mob[v] = c
        sc.sub_new[v] = 0 if sc.before[v] else c
        sc.sub_min[v] = v
        sc.sub_last[v] = sc.disc[v]
    for t in range(n - 1, 0, -1):  # children after their parents: sums complete upwards
        v = sc.order[t]
        d = sc.in_dir[v]
        if d < 0:
            continue
        p = v - offsets[d]
        sc.sub_mob[p] += sc.sub_mob[v]
        sc.sub_new[p] += sc.sub_new[v]
        if sc.sub_min[v] < sc.sub_min[p]:
            sc.sub_min[p] = sc.sub_min[v]
        if sc.sub_last[v] > sc.sub_last[p]:
            sc.sub_last[p] = sc.sub_last[v]
    sc.dfs_info[1] = 1


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def part_of(sc, kids, n_kids, x):
    """Which part of a split region the free square ``x`` (of that region) falls in.

    ``kids``: the children of the cut square whose subtrees become parts of their own; the
    result is an index into them, or -1 for the part holding the tree's root.
    """
    dx = sc.disc[x]
    for i in range(n_kids):
        c = kids[i]
        if sc.disc[c] <= dx and dx <= sc.sub_last[c]:
            return i
    return -1


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def split_part(tables, sc, box_at, dst, kids, n_kids, part):
    """(normalized square, mobility, new pushes) of one part of the region a box on ``dst`` splits.

    As a fill of that part would give them: the part's ``contrib`` sums (``subtree_sums``),
    corrected for the pushes the box on ``dst`` adds or takes away next to it. With no
    ``kids`` (``n_kids`` 0, ``part`` -1): the region less ``dst``, for a box whose free
    neighbours stay connected (``region_sums`` alone, no subtree sums needed).
    """
    cells = tables.cells
    dead = tables.dead
    offsets = tables.offsets
    r = sc.region[dst]
    if part >= 0:
        c = kids[part]
        norm = sc.sub_min[c]
        n_mob = sc.sub_mob[c]
        new_pushes = sc.sub_new[c]
    else:  # the region less the cut square and the separated subtrees; its root is smallest
        norm = sc.reg_min[0, 0]
        if norm == dst:  # no subtree splits off the root: the rest is all but the root
            norm = sc.reg_min[0, 1]
        n_mob = sc.reg_mob[0] - sc.contrib[dst]
        new_pushes = sc.reg_new[0]
        if not sc.before[dst]:
            new_pushes -= sc.contrib[dst]
        for i in range(n_kids):
            n_mob -= sc.sub_mob[kids[i]]
            new_pushes -= sc.sub_new[kids[i]]
    for d in range(4):
        v = dst - offsets[d]
        if not (cells[v] & FLOOR):
            continue
        if box_at[v] < 0:
            if part_of(sc, kids, n_kids, v) == part:  # the player can push the new box from v
                a = dst + offsets[d]
                if (cells[a] & FLOOR) and box_at[a] < 0 and dead[a] == 0:
                    n_mob += 1
                    if not sc.before[v]:
                        new_pushes += 1
        else:  # the box on v can no longer be pushed onto dst
            w = v - offsets[d]
            if (
                (cells[w] & FLOOR)
                and box_at[w] < 0
                and sc.region[w] == r
                and part_of(sc, kids, n_kids, w) == part
            ):
                n_mob -= 1
                if not sc.before[w]:
                    new_pushes -= 1
    return norm, n_mob, new_pushes
