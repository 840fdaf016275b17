"""FESS move generation: every macro move of a position with the features it leads to.

A *macro move* (FESS paper, Section 1) takes one box from square A to square B along any of its
push paths (pull paths in the packing-plan search), the player walking between pushes; the
other boxes stay put. Moves that end in the same position are one move. The generator rejects
moves into positions that a deadlock test proves lost, and computes the feature values of each
remaining move's position, which the search needs to choose among moves.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from planners._kernels.fess import (
    count_hotspots,
    count_out_of_plan,
    count_packed,
    count_regions,
    count_rooms,
    new_room_count,
    recount_rooms,
)
from planners._kernels.fess_learned import learned_near, move_matches_learned
from planners._kernels.packing import pull_paths
from soko_gym.engine.bounded_search import load_queued, row_holds_boxes
from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_INF, FLOOR, GOAL
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.lowerbound import bipartite_deadlock, bipartite_deadlock_from
from soko_gym.engine.patterns import is_pattern_deadlock
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import new_stamps, reach_player

# columns of the forward move table (``push_moves``)
M_BOX = 0  # index of the moved box
M_SRC = 1  # its square before the move
M_DST = 2  # its square after the move
M_PLAYER = 3  # the player's square after the move (next to M_DST)
M_NORM = 4  # normalized player square (smallest reachable) after the move
M_OOP = 5  # out-of-plan boxes
M_PACKED = 6  # packed boxes (plan steps realised)
M_CONN = 7  # connectivity (player regions)
M_ROOMS = 8  # room connectivity (broken room-graph edges)
M_HOT = 9  # hotspot boxes
M_MOB = 10  # mobility (pushes the player can make, dead-square pushes left out)
M_NEW_PUSHES = 11  # pushes from squares the player could not reach before the move
M_PUSHES = 12  # pushes the move takes
M_FIRST_DIR = 13  # direction of the move's first push (PI-corral pruning keeps moves by it)
N_MOVE_COLS = 14

# deadlock kinds counted by the generators (index into the ``kinds`` counter array)
DL_DEAD_SQUARE = 0
DL_FREEZE = 1
DL_PATTERN = 2
DL_BIPARTITE = 3
DL_RETROGRADE = 4
DL_ROOM = 5
DL_CORRAL = 6
DL_LEARNED = 7  # a pattern learned from an earlier room or corral proof (planners.fess.learned)
N_DEADLOCK_KINDS = 8


MoveTables = namedtuple(
    "MoveTables",
    [
        "cells",  # uint8[n_cells] cell flags
        "dead",  # uint8[n_cells] simple dead squares
        "dead_side",  # uint8[4 * n_cells] 1 on lone-box dead states (square * 4 + player side)
        "offsets",  # int32[4] up, down, left, right (offsets[d ^ 1] == -offsets[d])
        "floor",  # int32[n_floor] floor squares
        "floor_index",  # int32[n_cells] index into floor, -1 off the floor
        "goals",  # int32[n_goals]
        "goal_dist",  # uint16[n_goals, n_cells] lone-box push distances (bipartite test)
        "goal_bits",  # uint64[n_cells, n_words] bit g: a lone box there can reach goal g
        "plan_src",  # int32[n_steps] the packing plan (``count_packed``)
        "plan_dst",  # int32[n_steps]
        "basin",  # uint8[n_cells] 1 on the sink basin
        "room_id",  # int32[n_cells] the room graph (``planners.fess.rooms``)
        "passage_id",  # int32[n_cells]
        "edges",  # int32[n_edges, 2]
        "hot",  # uint8[n_floor, n_floor] hotspot pair table
        "pat_start",  # the level's placed deadlock patterns (``engine.patterns``)
        "pat_instance",
        "pat_boxes",
        "flags",  # int64[1]: 1 runs the bipartite test on every move
        "zobrist",  # uint64[n_cells] Zobrist key per square (the feature cache's keys)
        "room_border",  # uint8[n_cells] passages and room squares next to one or another room
        "room_areas",  # RoomAreas (``planners._kernels.fess``): the rooms a square's box affects
    ],
)

MoveScratch = namedtuple(
    "MoveScratch",
    [
        "stamps",  # uint32[n_cells + 1]
        "stack",  # int32[n_cells]
        "dist",  # uint16[4 * n_cells] pushes per (square, side) state of the moving box
        "first",  # uint8[4 * n_cells] direction of the first push of each state's path
        "queue",  # int32[4 * n_cells]
        "label",  # int32[n_cells]
        "seen",  # uint32[n_cells + 1]
        "trail",  # int32[n_cells]
        "work",  # int32[4, n_boxes]
        "mark",  # int32[n_cells], all 0
        "hot_out",  # int32[n_boxes] receives the position's per-box hotspot counts
        "before",  # uint8[n_cells] squares known before the move (reached, or a box)
        "disc",  # int32[n_cells] depth-first numbers (``edge_blocks``), -1 before any
        "low",  # int32[n_cells]
        "next_dir",  # int32[n_cells]
        "in_dir",  # int32[n_cells]
        "dfs",  # int32[n_cells]
        "edge_stack",  # int32[4 * n_cells]
        "block",  # int32[4 * n_cells] biconnected block of each (square, direction) edge
        "kinds",  # int64[N_DEADLOCK_KINDS] rejected moves per deadlock kind (added to)
        "sub_box_at",  # int16[n_cells], all -1: boxes of a learned pattern's board
        "feat",  # int32[N_FEAT] the features of the destination at hand (FEAT_* slots)
        "cache_key",  # uint64[cap] feature cache (cap a power of two): box-set hash per slot
        "cache_val",  # int32[cap, N_FEAT] its entry; FEAT_KIND -2 marks an empty slot
        "cache_boxes",  # uint64[cap, n_words] its box set, a bit per floor square (exact key)
        "pos_bits",  # uint64[n_words] the box set of the position whose moves are generated
        "region",  # int32[n_cells] a tag per square: the region ``edge_blocks`` last numbered
        "contrib",  # int32[n_cells] pushes the player could make from each free square
        "reg_mob",  # int32[1] that region's pushes from its squares (dead squares left out)
        "reg_new",  # int32[1] the same, from squares not reached before the move
        "reg_min",  # int32[1, 2] its two smallest squares
        "rooms0",  # int64[1] broken room-graph edges of the position (before any move)
        "dsts",  # int32[n_cells] the squares a box can be pushed to, increasing
        "dst_mark",  # int64[n_cells + 1] last slot: the current mark; a square holding it is listed
        "intact0",  # uint8[n_rooms, n_rooms] the room searches' result on the position
        "rooms",  # RoomCount (``planners._kernels.fess``): room counts' scratch and memo
        "match0",  # int32[n_boxes] the position's box-goal matching (-1: none), as work[0]
        "order",  # int32[n_cells] the region's squares by depth-first number (``edge_blocks``)
        "sub_mob",  # int32[n_cells] per free square: ``contrib`` summed over its DFS subtree
        "sub_new",  # int32[n_cells] the same, squares not reached before the move only
        "sub_min",  # int32[n_cells] the smallest square of its DFS subtree
        "sub_last",  # int32[n_cells] the last depth-first number in its DFS subtree
        "dfs_info",  # int64[3]: squares numbered; 1 when the sub_* sums are filled; next number
        "pos_label",  # int32[n_cells] the position's player regions (``count_regions``)
        "pos_min",  # int32[n_cells] each of those regions' smallest square
        "kids",  # int32[4] children of a cut square whose subtrees split off (``_part_of``)
    ],
)


# slots of a feature-cache entry and of ``MoveScratch.feat``: what a box set alone decides
FEAT_KIND = 0  # deadlock kind that rejects the box set, -1 for none (-2: empty cache slot)
FEAT_VALID = 1  # 1 when the features below are filled
FEAT_PACKED = 2
FEAT_OOP = 3
FEAT_ROOMS = 4
FEAT_HOT = 5
N_FEAT = 6


def new_move_scratch(
    cells: np.ndarray, n_boxes: int, n_rooms: int, cache_bits: int = 18
) -> MoveScratch:
    """Fresh scratch for ``push_moves`` on a board with cell flags ``cells``.

    ``cache_bits``: the feature cache holds ``2 ** cache_bits`` entries (about 32 bytes each,
    and a bit per floor square: each entry's exact box set).
    """
    n = cells.shape[0]
    cap = 1 << cache_bits
    stack = np.zeros(n, dtype=np.int32)
    label = np.full(n, -1, dtype=np.int32)
    cache_val = np.zeros((cap, N_FEAT), dtype=np.int32)
    cache_val[:, FEAT_KIND] = -2
    n_words = max(1, -(-int(np.count_nonzero(cells & FLOOR)) // 64))
    return MoveScratch(
        stamps=new_stamps(cells),
        stack=stack,
        dist=np.zeros(4 * n, dtype=np.uint16),
        first=np.zeros(4 * n, dtype=np.uint8),
        queue=np.zeros(4 * n, dtype=np.int32),
        label=label,
        seen=np.zeros(n + 1, dtype=np.uint32),
        trail=np.zeros(n, dtype=np.int32),
        work=np.zeros((4, max(1, n_boxes)), dtype=np.int32),
        mark=np.zeros(n, dtype=np.int32),
        hot_out=np.zeros(max(1, n_boxes), dtype=np.int32),
        before=np.zeros(n, dtype=np.uint8),
        disc=np.full(n, -1, dtype=np.int32),
        low=np.zeros(n, dtype=np.int32),
        next_dir=np.zeros(n, dtype=np.int32),
        in_dir=np.zeros(n, dtype=np.int32),
        dfs=np.zeros(n, dtype=np.int32),
        edge_stack=np.zeros(4 * n, dtype=np.int32),
        block=np.full(4 * n, -1, dtype=np.int32),
        kinds=np.zeros(N_DEADLOCK_KINDS, dtype=np.int64),
        sub_box_at=np.full(n, -1, dtype=BOX_AT_DTYPE),
        feat=np.zeros(N_FEAT, dtype=np.int32),
        cache_key=np.zeros(cap, dtype=np.uint64),
        cache_val=cache_val,
        cache_boxes=np.zeros((cap, n_words), dtype=np.uint64),
        pos_bits=np.zeros(n_words, dtype=np.uint64),
        region=np.full(n, -1, dtype=np.int32),
        contrib=np.zeros(n, dtype=np.int32),
        reg_mob=np.zeros(1, dtype=np.int32),
        reg_new=np.zeros(1, dtype=np.int32),
        reg_min=np.zeros((1, 2), dtype=np.int32),
        rooms0=np.zeros(1, dtype=np.int64),
        dsts=np.zeros(n, dtype=np.int32),
        dst_mark=np.zeros(n + 1, dtype=np.int64),
        intact0=np.zeros((n_rooms, n_rooms), dtype=np.uint8),
        rooms=new_room_count(label, stack, n_rooms),
        match0=np.zeros(max(1, n_boxes), dtype=np.int32),
        order=np.zeros(n, dtype=np.int32),
        sub_mob=np.zeros(n, dtype=np.int32),
        sub_new=np.zeros(n, dtype=np.int32),
        sub_min=np.zeros(n, dtype=np.int32),
        sub_last=np.zeros(n, dtype=np.int32),
        dfs_info=np.zeros(3, dtype=np.int64),
        pos_label=np.full(n, -1, dtype=np.int32),
        pos_min=np.zeros(n, dtype=np.int32),
        kids=np.zeros(4, dtype=np.int32),
    )


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def edge_blocks(cells, box_at, offsets, root, sc):
    """Biconnected blocks, by edge, of the player region (free squares) holding ``root``.

    ``sc.block[v * 4 + d]`` receives the block of the edge from free square ``v`` to its free
    neighbour in direction ``d`` (both directions of an edge get the same block). Two free
    neighbours ``s``, ``t`` of a square ``q`` stay connected when a box stands on ``q`` exactly
    when the edges ``q-s`` and ``q-t`` share a block, so box paths need no flood fill per
    state, and a box put on ``q`` splits its region into as many regions as there are distinct
    blocks among ``q``'s edges. Iterative Tarjan over the grid graph, rooted at ``root`` (the
    region's smallest square, for ``_split_part``).

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
def _block_box_paths(cells, dead_side, box_at, offsets, src, sc, mark, kinds, own):
    """Fewest pushes of the box on ``src`` to every live state (``engine.macro.box_paths``).

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


@njit(cache=True, nogil=True, _nrt=False)
def _box_bits(floor_index, box_pos, bits):
    """Write the box set ``box_pos`` into ``bits``: bit ``floor_index[sq]`` per box square."""
    for w in range(bits.shape[0]):
        bits[w] = 0
    for b in range(box_pos.shape[0]):
        f = floor_index[box_pos[b]]
        bits[f >> 6] |= np.uint64(1) << np.uint64(f & 63)


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _moved_bits(floor_index, pos_bits, src, dst, row, write):
    """Compare (or, with ``write``, set) ``row`` with the box set ``pos_bits`` after src -> dst.

    Returns True when ``row`` holds that box set (always, after writing it).
    """
    fs = floor_index[src]
    fd = floor_index[dst]
    for w in range(row.shape[0]):
        x = pos_bits[w]
        if w == fs >> 6:
            x ^= np.uint64(1) << np.uint64(fs & 63)
        if w == fd >> 6:
            x ^= np.uint64(1) << np.uint64(fd & 63)
        if write:
            row[w] = x
        elif row[w] != x:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def push_moves(tables, sc, learned, box_at, box_pos, player, moves):
    """Write every macro push move of a position and its features into ``moves``.

    Rejected moves (the box on a simple dead square, frozen off goal, in a deadlock pattern, a
    bipartite deadlock when ``tables.flags[0]``, or completing a learned pattern with the
    player in its region) are counted per kind in ``sc.kinds``.

    Args:
        tables: ``MoveTables`` of the search; sc: ``MoveScratch``.
        learned: ``LearnedTables`` of the search's learned patterns (``count[0]`` 0: none).
        box_at: int16[n_cells] box index per square (restored on return).
        box_pos: int32[n_boxes] box squares (restored on return).
        player: player square (int64).
        moves: int32[cap, N_MOVE_COLS] receives one row per move (cap >= 4 * n_boxes * n_floor).

    Returns:
        Number of moves written.
    """
    cells = tables.cells
    dead = tables.dead
    offsets = tables.offsets
    floor = tables.floor
    stack = sc.stack
    dist = sc.dist
    before = sc.before
    kinds = sc.kinds
    n_cells = cells.shape[0]
    count_hotspots(box_pos, tables.floor_index, tables.hot, sc.hot_out)
    # the position's regions: lifting a box merges those around it, the others stay apart;
    # the player's is the explorer advisor's reference (the squares reached before the move)
    n_pos_regions = count_regions(cells, box_at, offsets, floor, sc.pos_label, stack)
    own = sc.pos_label[player]
    nxt = 0
    for i in range(floor.shape[0]):
        sq = floor[i]
        lab = sc.pos_label[sq]
        if lab == nxt:  # a region's first square in board order is its smallest
            sc.pos_min[nxt] = sq
            nxt += 1
        # a box square counts as known: the square a moved box leaves is no new access
        before[sq] = 1 if (lab == own or box_at[sq] >= 0) else 0
    sc.rooms0[0] = 0
    if tables.edges.shape[0] > 0:
        sc.rooms0[0] = count_rooms(
            box_at, box_pos, offsets, tables.room_areas, tables.zobrist, sc.rooms
        )
        for r in range(sc.intact0.shape[0]):
            for s in range(sc.intact0.shape[1]):
                sc.intact0[r, s] = sc.rooms.intact[r, s]
    learned_near(learned, box_at, box_pos)
    n_moves = 0
    n_boxes = box_pos.shape[0]
    h0 = np.uint64(0)
    for b in range(n_boxes):
        h0 ^= tables.zobrist[box_pos[b]]
    _box_bits(tables.floor_index, box_pos, sc.pos_bits)
    feat = sc.feat
    mask = np.uint64(sc.cache_key.shape[0] - 1)
    dst_mark = sc.dst_mark
    matched = False
    for b in range(n_boxes):
        src = np.int64(box_pos[b])
        # a box no push moves from the player's region makes no move: skip its analysis
        movable = False
        for d in range(4):
            ahead = src + offsets[d]
            if (
                sc.pos_label[src - offsets[d]] == own
                and (cells[ahead] & FLOOR)
                and box_at[ahead] < 0
            ):
                movable = True
                break
        if not movable:
            continue
        box_at[src] = -1
        # the region the box leaves: src and the regions next to it, rooted at its smallest
        root = src
        n_regions = n_pos_regions + 1
        for d in range(4):
            nb = src + offsets[d]
            if not (cells[nb] & FLOOR) or box_at[nb] >= 0:
                continue
            lab = sc.pos_label[nb]
            seen = False
            for e in range(d):
                ne = src + offsets[e]
                if (cells[ne] & FLOOR) and box_at[ne] < 0 and sc.pos_label[ne] == lab:
                    seen = True
                    break
            if not seen:
                n_regions -= 1
                if sc.pos_min[lab] < root:
                    root = np.int64(sc.pos_min[lab])
        edge_blocks(cells, box_at, offsets, root, sc)
        _region_sums(cells, dead, box_at, offsets, sc)
        dst_mark[n_cells] += 1
        mark = dst_mark[n_cells]
        tail = _block_box_paths(cells, tables.dead_side, box_at, offsets, src, sc, mark, kinds, own)
        # the live squares the box reaches, in board order (the order of the moves)
        for qi in range(tail):
            dst_mark[sc.queue[qi] >> 2] = mark
        n_dst = 0
        for i in range(floor.shape[0]):  # floor squares come in increasing order
            q = floor[i]
            if dst_mark[q] == mark:
                sc.dsts[n_dst] = q
                n_dst += 1
        for i in range(n_dst):
            dst = np.int64(sc.dsts[i])
            first = -1
            for s in range(4):
                if dist[dst * 4 + s] != DIST_INF:
                    first = s
                    break
            if first < 0:
                continue
            # the box moves; each player region around it is one move
            box_at[dst] = b
            box_pos[b] = dst
            # what the box set alone decides (deadlocks, features) may be cached: positions
            # recur as children of many parents
            feat[FEAT_KIND] = -1
            feat[FEAT_VALID] = 0
            slot = np.int64(0)
            if dst != src:
                h = h0 ^ tables.zobrist[src] ^ tables.zobrist[dst]
                slot = np.int64((h ^ (h >> np.uint64(31))) & mask)
                key = sc.cache_boxes[slot]
                if (
                    sc.cache_key[slot] == h
                    and sc.cache_val[slot, FEAT_KIND] != -2
                    and _moved_bits(tables.floor_index, sc.pos_bits, src, dst, key, False)
                ):  # the exact box set too: a colliding hash would reject a live move as dead
                    for j in range(feat.shape[0]):  # a loop: slice copies compile shape errors
                        feat[j] = sc.cache_val[slot, j]
                else:
                    sc.cache_key[slot] = h
                    _moved_bits(tables.floor_index, sc.pos_bits, src, dst, key, True)
                    if is_simple_deadlock(cells, dead, box_at, offsets, dst, sc.seen, sc.trail):
                        feat[FEAT_KIND] = DL_FREEZE
                    elif is_pattern_deadlock(
                        box_at, dst, tables.pat_start, tables.pat_instance, tables.pat_boxes
                    ):
                        feat[FEAT_KIND] = DL_PATTERN
                    elif tables.flags[0] and _may_break_matching(cells, tables.goal_bits, src, dst):
                        if not matched:  # the position's own matching, once
                            box_pos[b] = src
                            _position_matching(tables, sc, box_pos)
                            box_pos[b] = dst
                            matched = True
                        if bipartite_deadlock_from(
                            cells, dead, tables.goals, tables.goal_dist, box_pos, offsets,
                            sc.seen, sc.work, sc.match0, b,
                        ):  # fmt: skip
                            feat[FEAT_KIND] = DL_BIPARTITE
            if feat[FEAT_KIND] >= 0:
                kinds[feat[FEAT_KIND]] += 1
            else:
                n_moves = _emit_moves(
                    tables, sc, learned, box_at, box_pos, player, moves, n_moves, src, dst,
                    n_regions,
                )  # fmt: skip
            if dst != src:  # features filled by _emit_moves are kept for the next time
                for j in range(feat.shape[0]):
                    sc.cache_val[slot, j] = feat[j]
            box_at[dst] = -1
            box_pos[b] = src
        box_at[src] = b
    return n_moves


@njit(cache=True, nogil=True, _nrt=False)
def _position_matching(tables, sc, box_pos):
    """``sc.match0``: the box-goal matching of ``box_pos`` (all -1 when it has none).

    The bipartite test of each move starts from it (``bipartite_deadlock_from``).
    """
    work = sc.work
    dead = bipartite_deadlock(
        tables.cells, tables.dead, tables.goals, tables.goal_dist, box_pos, tables.offsets,
        sc.seen, work,
    )  # fmt: skip
    for i in range(box_pos.shape[0]):
        sc.match0[i] = -1 if dead else work[0, i]


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _region_sums(cells, dead, box_at, offsets, sc):
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
def _subtree_sums(offsets, sc):
    """``sc.sub_*`` of every free square: sums over its subtree of ``edge_blocks``' DFS tree.

    Needs ``_region_sums`` first (``sc.contrib``). A box put on a cut square splits its region
    into the subtrees of the children that cannot reach above it, plus the rest: each part's
    pushes and smallest square follow from these sums (``_split_part``) without a fill.
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
def _part_of(sc, kids, n_kids, x):
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
def _split_part(tables, sc, box_at, dst, kids, n_kids, part):
    """(normalized square, mobility, new pushes) of one part of the region a box on ``dst`` splits.

    As a fill of that part would give them: the part's ``contrib`` sums (``_subtree_sums``),
    corrected for the pushes the box on ``dst`` adds or takes away next to it. With no
    ``kids`` (``n_kids`` 0, ``part`` -1): the region less ``dst``, for a box whose free
    neighbours stay connected (``_region_sums`` alone, no subtree sums needed).
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
            if _part_of(sc, kids, n_kids, v) == part:  # the player can push the new box from v
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
                and _part_of(sc, kids, n_kids, w) == part
            ):
                n_mob -= 1
                if not sc.before[w]:
                    new_pushes -= 1
    return norm, n_mob, new_pushes


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _emit_moves(tables, sc, learned, box_at, box_pos, player, moves, n_moves, src, dst, n_regions):
    """Write the moves of the box moved from ``src`` to ``dst`` (already moved): one per region.

    ``n_regions``: the player regions with the box off the board (``edge_blocks``); the box on
    ``dst`` splits its region into as many as there are distinct blocks among its edges.
    """
    cells = tables.cells
    offsets = tables.offsets
    stamps = sc.stamps
    dist = sc.dist
    b = np.int64(box_at[dst])
    # regions once the box stands on dst: dst's region splits along its blocks
    n_split = 0
    for s in range(4):
        nb = dst + offsets[s]
        if not (cells[nb] & FLOOR) or box_at[nb] >= 0:
            continue
        fresh = True
        for t in range(s):
            nt = dst + offsets[t]
            if (
                (cells[nt] & FLOOR)
                and box_at[nt] < 0
                and sc.block[dst * 4 + t] == sc.block[dst * 4 + s]
            ):
                fresh = False
                break
        if fresh:
            n_split += 1
    conn = n_regions - 1 + n_split
    covered = 0
    kids = sc.kids  # children of dst whose subtrees split off (filled on first need)
    n_kids = -1
    feat = sc.feat  # position features: the same for every player region (maybe cached)
    for s in range(4):  # sides no push path reaches are skipped
        if dist[dst * 4 + s] == DIST_INF or (covered >> s) & 1:
            continue
        stand = np.int64(dst + offsets[s])
        # mobility: pushes from the player's region, dead squares left out; the explorer's
        # count: those of them made from squares the player could not reach before the move
        if n_split == 1:
            covered = 15
            if dst == src and sc.region[player] == sc.region[dst]:
                continue  # back where it was, the player in its old region
            norm, n_mob, new_pushes = _split_part(tables, sc, box_at, dst, sc.kids, 0, -1)
        else:  # the parts of the split region, from the DFS tree's subtree sums
            if n_kids < 0:
                if sc.dfs_info[1] == 0:
                    _subtree_sums(offsets, sc)
                n_kids = 0
                for t in range(4):
                    nb = dst + offsets[t]
                    if (
                        (cells[nb] & FLOOR)
                        and box_at[nb] < 0
                        and sc.in_dir[nb] == t
                        and sc.low[nb] >= sc.disc[dst]
                    ):
                        kids[n_kids] = nb
                        n_kids += 1
            part = _part_of(sc, kids, n_kids, stand)
            for t in range(4):
                nb = dst + offsets[t]
                if (
                    (cells[nb] & FLOOR)
                    and box_at[nb] < 0
                    and _part_of(sc, kids, n_kids, nb) == part
                ):
                    covered |= 1 << t
            if (
                dst == src
                and sc.region[player] == sc.region[dst]
                and _part_of(sc, kids, n_kids, player) == part
            ):
                continue  # back where it was, the player in its old region
            norm, n_mob, new_pushes = _split_part(tables, sc, box_at, dst, kids, n_kids, part)
        if dst != src and move_matches_learned(
            learned, box_at, dst, stand, offsets, sc.sub_box_at, stamps, sc.stack
        ):  # the fill is spent: this check may overwrite it
            sc.kinds[DL_LEARNED] += 1
            continue
        if not feat[FEAT_VALID]:
            feat[FEAT_VALID] = 1
            packed = count_packed(box_at, tables.plan_src, tables.plan_dst)
            feat[FEAT_PACKED] = packed
            feat[FEAT_OOP] = count_out_of_plan(
                box_pos, tables.basin, tables.plan_src, tables.plan_dst, packed, sc.mark
            )
            # only passages and room squares next to them or to another room decide which
            # room-graph edges are broken: a move inside rooms keeps the position's count
            feat[FEAT_ROOMS] = sc.rooms0[0]
            if tables.edges.shape[0] > 0 and (tables.room_border[src] or tables.room_border[dst]):
                feat[FEAT_ROOMS] = recount_rooms(
                    box_at, offsets, tables.room_areas, tables.zobrist, src, dst, sc.intact0,
                    sc.rooms,
                )  # fmt: skip
            feat[FEAT_HOT] = _moved_hotspots(
                box_pos, tables.floor_index, tables.hot, sc.hot_out, b, src, dst
            )
        row = moves[n_moves]
        row[M_BOX] = b
        row[M_SRC] = src
        row[M_DST] = dst
        row[M_PLAYER] = stand
        row[M_NORM] = norm
        row[M_NEW_PUSHES] = new_pushes
        row[M_PUSHES] = dist[dst * 4 + s]
        row[M_MOB] = n_mob
        row[M_PACKED] = feat[FEAT_PACKED]
        row[M_OOP] = feat[FEAT_OOP]
        row[M_CONN] = conn
        row[M_ROOMS] = feat[FEAT_ROOMS]
        row[M_HOT] = feat[FEAT_HOT]
        row[M_FIRST_DIR] = sc.first[dst * 4 + s]
        n_moves += 1
    return n_moves


def goal_bit_table(goal_dist: np.ndarray) -> np.ndarray:
    """Goals a lone box can reach from each square, as bits: uint64[n_cells, n_words].

    Bit ``g`` of a square's words is set when ``goal_dist[g, square]`` is finite; the move
    generator's bipartite shortcut (``_may_break_matching``) reads it.
    """
    n_goals, n_cells = goal_dist.shape
    n_words = max(1, (n_goals + 63) // 64)
    bits = np.zeros((n_cells, n_words), dtype=np.uint64)
    for g in range(n_goals):
        reach = goal_dist[g] != DIST_INF
        bits[reach, g // 64] |= np.uint64(1) << np.uint64(g % 64)
    return bits


@njit(cache=True, nogil=True, _nrt=False)
def _may_break_matching(cells, goal_bits, src, dst):
    """False when moving a box from ``src`` to ``dst`` cannot create a bipartite deadlock.

    The parent position passed the test. A box that lands off goal (not frozen there: the
    freeze test ran first) and can still reach every goal it could reach from ``src`` keeps
    its matched goal, and no box freezes onto a goal, so the parent's perfect matching stands.
    """
    if cells[dst] & GOAL:
        return True
    for w in range(goal_bits.shape[1]):
        if goal_bits[src, w] & ~goal_bits[dst, w]:
            return True
    return False


@njit(cache=True, nogil=True, _nrt=False)
def keep_first_pushes(moves, n_moves, sq_pushes):
    """Compact ``moves`` in place to the moves whose first push is one of ``sq_pushes``.

    Args:
        moves: int32[cap, N_MOVE_COLS] a move table (first ``n_moves`` rows).
        n_moves: number of moves.
        sq_pushes: int64[n] allowed first pushes as square pushes (``box square * 4 +
            direction``).

    Returns:
        Number of moves kept (at the front of ``moves``, in their order).
    """
    kept = 0
    for i in range(n_moves):
        sq_push = np.int64(moves[i, M_SRC]) * 4 + moves[i, M_FIRST_DIR]
        for j in range(sq_pushes.shape[0]):
            if sq_pushes[j] == sq_push:
                if kept != i:
                    for col in range(moves.shape[1]):
                        moves[kept, col] = moves[i, col]
                kept += 1
                break
    return kept


@njit(cache=True, nogil=True, _nrt=False)
def _moved_hotspots(box_pos, floor_index, hot, counts, b, src, dst):
    """Hotspot boxes after box ``b`` moved from ``src`` to ``dst`` (``box_pos`` already moved).

    ``counts`` holds the position's per-box counts before the move (``count_hotspots``); only
    the pairs with the moved box change, so this costs O(n_boxes), not O(n_boxes ** 2).
    """
    fs = floor_index[src]
    fd = floor_index[dst]
    n_hot = 0
    own = 0
    for y in range(box_pos.shape[0]):
        if y == b:
            continue
        fy = floor_index[box_pos[y]]
        k = counts[y] - hot[fs, fy] + hot[fd, fy]
        if k > 0:
            n_hot += 1
        own += hot[fy, fd]
    if own > 0:
        n_hot += 1
    return n_hot


# columns of the backward move table (``pull_moves``)
P_BOX = 0  # index of the pulled box
P_SRC = 1  # its square before the pull
P_DST = 2  # its square after the pull, or -1 when it is pulled into the sink and removed
P_PLAYER = 3  # the player's square after the move
P_NORM = 4  # normalized player square after the move
P_ON_BOARD = 5  # boxes left on the board
P_ON_TARGET = 6  # boxes on targets
P_SCORE = 7  # distance score: sum of the boxes' distances to their nearest target
P_CONN = 8  # connectivity
P_PUSHABLE = 9  # 1 when the packing-plan advisor may park a box there (see ``pull_moves``)
N_PULL_COLS = 10


PullTables = namedtuple(
    "PullTables",
    [
        "cells",  # uint8[n_cells] cell flags
        "dead",  # uint8[n_cells] forward dead squares
        "offsets",  # int32[4]
        "floor",  # int32[n_floor] floor squares
        "near_dist",  # int32[n_cells] walking distance of each square to its nearest target
        "sink",  # uint8[n_cells] 1 on squares of the sink room (all 0 without a sink)
        "start_box",  # uint8[n_cells] 1 on squares holding a box in the level's initial position
    ],
)

PullScratch = namedtuple(
    "PullScratch",
    [  # as the fields of the same names in MoveScratch
        "stamps",  # uint32[n_cells + 1]
        "stack",  # int32[n_cells]
        "dist",  # uint16[4 * n_cells]
        "parent",  # int32[4 * n_cells]
        "queue",  # int32[4 * n_cells]
        "label",  # int32[n_cells]
        "seen",  # uint32[n_cells + 1]
        "trail",  # int32[n_cells]
    ],
)


def new_pull_scratch(cells: np.ndarray) -> PullScratch:
    """Fresh scratch for ``pull_moves`` on a board with cell flags ``cells``."""
    n = cells.shape[0]
    return PullScratch(
        stamps=new_stamps(cells),
        stack=np.zeros(n, dtype=np.int32),
        dist=np.zeros(4 * n, dtype=np.uint16),
        parent=np.zeros(4 * n, dtype=np.int32),
        queue=np.zeros(4 * n, dtype=np.int32),
        label=np.full(n, -1, dtype=np.int32),
        seen=np.zeros(n + 1, dtype=np.uint32),
        trail=np.zeros(n, dtype=np.int32),
    )


@njit(cache=True, nogil=True, _nrt=False)
def pull_moves(tables, sc, box_at, box_pos, on_board, player, moves):
    """Write the macro pull moves of a packing-plan position (FESS paper, Section 6).

    Rule 1: when some box can be pulled into the sink room, only such moves are written, one
    per box, and the box leaves the board. Otherwise every pull of every box on the board to
    any square its pull paths reach, one move per player region around the box.

    Args:
        tables: ``PullTables`` of the level; sc: ``PullScratch``.
        box_at: int16[n_cells] box index per square, -1 for none (restored on return).
        box_pos: int32[n_boxes] box squares; on_board: uint8[n_boxes] 1 for boxes still on it.
        player: player square (int64).
        moves: int32[cap, N_PULL_COLS] receives the moves (cap >= 4 * n_boxes * n_floor).

    Returns:
        Number of moves written.

    The ``P_PUSHABLE`` column holds the packing-plan advisor's restrictions 2 and 3: the box
    ends on a square holding a box in the initial position, or on a square a box can be pushed
    to and stay movable (not a dead square, not frozen off target).
    """
    cells = tables.cells
    dead = tables.dead
    offsets = tables.offsets
    floor = tables.floor
    near_dist = tables.near_dist
    sink = tables.sink
    start_box = tables.start_box
    stamps = sc.stamps
    stack = sc.stack
    dist = sc.dist
    label = sc.label
    n_cells = cells.shape[0]
    n_boxes = box_pos.shape[0]
    board_count = 0
    on_target = 0
    score = 0
    for b in range(n_boxes):
        if on_board[b]:
            board_count += 1
            if cells[box_pos[b]] & GOAL:
                on_target += 1
            score += near_dist[box_pos[b]]
    n_moves = 0
    for phase in range(2):  # 0: removals into the sink (rule 1); 1: every other pull
        if phase == 1 and n_moves > 0:
            break
        for b in range(n_boxes):
            if not on_board[b]:
                continue
            src = np.int64(box_pos[b])
            pull_paths(
                cells, box_at, offsets, player, src, stamps, stack, dist, sc.parent, sc.queue
            )
            for i in range(floor.shape[0]):
                dst = np.int64(floor[i])
                if dst == src or (phase == 0 and not sink[dst]):
                    continue
                first = -1
                for s in range(4):
                    if dist[dst * 4 + s] != DIST_INF:
                        first = s
                        break
                if first < 0:
                    continue
                box_at[src] = -1
                if phase == 0:  # the box leaves the board
                    stand = np.int64(dst + offsets[first])
                    _, norm = reach_player(box_at, offsets, stand, stamps, stack)
                    row = moves[n_moves]
                    row[P_BOX] = b
                    row[P_SRC] = src
                    row[P_DST] = -1
                    row[P_PLAYER] = stand
                    row[P_NORM] = norm
                    row[P_ON_BOARD] = board_count - 1
                    row[P_ON_TARGET] = on_target - (1 if cells[src] & GOAL else 0)
                    row[P_SCORE] = score - near_dist[src]
                    row[P_CONN] = count_regions(cells, box_at, offsets, floor, label, stack)
                    row[P_PUSHABLE] = 1
                    n_moves += 1
                    box_at[src] = b
                    break  # one removal per box
                box_at[dst] = b
                pushable = 1 if start_box[dst] else 0
                if not pushable and not dead[dst]:
                    if not is_simple_deadlock(cells, dead, box_at, offsets, dst, sc.seen, sc.trail):
                        pushable = 1
                conn = count_regions(cells, box_at, offsets, floor, label, stack)
                covered = 0
                for s in range(first, 4):
                    if dist[dst * 4 + s] == DIST_INF or (covered >> s) & 1:
                        continue
                    stand = np.int64(dst + offsets[s])
                    _, norm = reach_player(box_at, offsets, stand, stamps, stack)
                    mk = stamps[n_cells]
                    for t in range(4):
                        if stamps[dst + offsets[t]] == mk:
                            covered |= 1 << t
                    row = moves[n_moves]
                    row[P_BOX] = b
                    row[P_SRC] = src
                    row[P_DST] = dst
                    row[P_PLAYER] = stand
                    row[P_NORM] = norm
                    row[P_ON_BOARD] = board_count
                    row[P_ON_TARGET] = (
                        on_target
                        - (1 if cells[src] & GOAL else 0)
                        + (1 if cells[dst] & GOAL else 0)
                    )
                    row[P_SCORE] = score - near_dist[src] + near_dist[dst]
                    row[P_CONN] = conn
                    row[P_PUSHABLE] = pushable
                    n_moves += 1
                box_at[dst] = -1
                box_at[src] = b
    return n_moves


@njit(cache=True, nogil=True, _nrt=False)
def retrograde_deadlock(cells, dead, offsets, goals, box_at, box_pos, seen, trail, sub_box_at):
    """Retrograde analysis (FESS paper, appendix): boxes packed and immobilized too soon.

    Frozen boxes on targets become walls; every other target gets a box; boxes are then pulled
    off their targets and removed for as long as some box can be pulled (a pull needs two free
    floor squares in a row beside the box; the player's access is relaxed, which keeps the test
    sound). A target whose box can never leave must hold a box already; if it does not, the
    position is unsolvable.

    Args:
        cells, dead, offsets: the board's arrays; goals: int32[n_goals].
        box_at: int16[n_cells]; box_pos: int32[n_boxes]: the position (unchanged).
        seen: uint32[n_cells + 1], trail: int32[n_cells]: scratch.
        sub_box_at: int16[n_cells] scratch, all -1 on entry and on return.

    Returns:
        True when the position is proven a deadlock.
    """
    n_goals = goals.shape[0]
    # frozen boxes: is_simple_deadlock leaves the frozen set stamped with the latest mark
    n_frozen = 0
    for b in range(box_pos.shape[0]):
        sq = box_pos[b]
        if not (cells[sq] & GOAL):
            continue
        if _is_frozen(cells, dead, box_at, offsets, np.int64(sq), seen, trail):
            sub_box_at[sq] = -2  # a wall for good
            n_frozen += 1
    if n_frozen == 0:
        return False
    for g in range(n_goals):
        if sub_box_at[goals[g]] == -1:
            sub_box_at[goals[g]] = 0
    changed = True
    while changed:
        changed = False
        for g in range(n_goals):
            sq = goals[g]
            if sub_box_at[sq] != 0:
                continue
            for d in range(4):
                a = sq + offsets[d]
                c = a + offsets[d]
                if (cells[a] & FLOOR) and (cells[c] & FLOOR) and sub_box_at[a] == -1:
                    if sub_box_at[c] == -1:
                        sub_box_at[sq] = -1
                        changed = True
                        break
    lost = False
    for g in range(n_goals):
        sq = goals[g]
        if sub_box_at[sq] == 0 and box_at[sq] < 0:
            lost = True
        sub_box_at[sq] = -1
    for b in range(box_pos.shape[0]):
        sub_box_at[box_pos[b]] = -1
    return lost


@njit(cache=True, nogil=True, _nrt=False)
def _is_frozen(cells, dead, box_at, offsets, sq, seen, trail):
    """True when the box on ``sq`` can never move: blocked on both axes by walls or frozen boxes.

    Uses ``is_simple_deadlock``'s frozen-set computation with goals ignored: a frozen cluster
    all on goals is not a deadlock there, but its boxes are still immobile.
    """
    is_simple_deadlock(cells, dead, box_at, offsets, sq, seen, trail)
    mark = seen[seen.shape[0] - 1]
    return seen[sq] == mark


ROOM_DEADLOCK = 1  # the room's boxes can neither leave it nor all reach its targets
ROOM_OPEN = 0  # some box can leave, or all can be packed
ROOM_UNKNOWN = 2  # the bounded search ran out of budget


RoomScratch = namedtuple(
    "RoomScratch",
    [  # scratch of room_deadlock, for a search of at most ``budget`` positions
        "box_at",  # int16[n_cells] the area's boxes, all -1 on entry and on return
        "nodes",  # int32[budget, max_boxes + 1] box squares and player per position
        "key",  # uint64[cap] table of positions seen (cap a power of two >= 2 * budget)
        "player",  # int32[cap] its normalized players, all -1 on entry and on return
        "row",  # int32[cap] the row of ``nodes`` holding each slot's position
        "pos",  # int32[max_boxes]
        "pushes",  # int32[4 * max_boxes]
        "used",  # int64[budget] the table slots filled, to empty the table on return
    ],
)


def new_room_scratch(n_cells: int, budget: int, max_boxes: int = 10) -> RoomScratch:
    """Scratch of ``room_deadlock``: searches of ``budget`` positions, ``max_boxes`` boxes."""
    return RoomScratch(
        box_at=np.full(n_cells, -1, dtype=BOX_AT_DTYPE),
        nodes=np.zeros((budget, max_boxes + 1), dtype=np.int32),
        key=np.zeros(2 * budget, dtype=np.uint64),
        player=np.full(2 * budget, -1, dtype=np.int32),
        row=np.zeros(2 * budget, dtype=np.int32),
        pos=np.zeros(max_boxes, dtype=np.int32),
        pushes=np.zeros(4 * max_boxes, dtype=np.int32),
        used=np.zeros(budget, dtype=np.int64),
    )


@njit(cache=True, nogil=True, _nrt=False)
def room_deadlock(tables, sc, rs, box_at, area, area_squares, player, limit):
    """Room deadlock detection (FESS paper, appendix), by a bounded push search.

    Only the boxes on the room's *area* (the room and the corridor squares next to it) stay on
    the board. The search pushes them until a box leaves the area or all of them stand on
    targets (the room is open); when it runs out of positions first, the position is lost:
    boxes removed outside can only have blocked pushes, never enabled one.

    Args:
        tables: ``MoveTables`` (cells, dead, offsets and zobrist are read).
        sc: ``MoveScratch`` (stamps, stack, seen and trail are used).
        rs: ``RoomScratch`` (``new_room_scratch``).
        box_at: int16[n_cells] the full position (unchanged).
        area: uint8[n_cells] 1 on the area's squares; area_squares: int32[n_area] the same.
        player: the player's square (int64).
        limit: most positions this search stores (int64; at most the scratch's budget).

    Returns:
        ROOM_DEADLOCK, ROOM_OPEN or ROOM_UNKNOWN.
    """
    cells = tables.cells
    dead = tables.dead
    offsets = tables.offsets
    zobrist = tables.zobrist
    stamps = sc.stamps
    stack = sc.stack
    seen = sc.seen
    trail = sc.trail
    sub_box_at = rs.box_at
    sub_nodes = rs.nodes
    table_key = rs.key
    table_player = rs.player
    sub_pos = rs.pos
    sub_pushes = rs.pushes
    used = rs.used
    max_boxes = sub_nodes.shape[1] - 1
    budget = min(sub_nodes.shape[0], limit)
    cap_mask = table_key.shape[0] - 1
    m = 0
    off_goal = 0
    for i in range(area_squares.shape[0]):
        sq = area_squares[i]
        if box_at[sq] >= 0:
            if m == max_boxes:
                return ROOM_UNKNOWN
            sub_nodes[0, m] = sq
            m += 1
            if not (cells[sq] & GOAL):
                off_goal += 1
    if off_goal == 0:
        return ROOM_OPEN
    n_boxes = np.int64(m)
    sub_nodes[0, max_boxes] = player
    status = ROOM_DEADLOCK
    tail = 1
    head = 0
    h0 = np.uint64(0)
    for i in range(m):
        h0 ^= zobrist[sub_nodes[0, i]]
        sub_box_at[sub_nodes[0, i]] = i
    _, norm = reach_player(sub_box_at, offsets, np.int64(player), stamps, stack)
    for i in range(m):
        sub_box_at[sub_nodes[0, i]] = -1
    slot = np.int64((h0 ^ np.uint64(norm)) & np.uint64(cap_mask))
    table_key[slot] = h0
    table_player[slot] = norm
    rs.row[slot] = 0
    used[0] = slot
    while status == ROOM_DEADLOCK and head < tail:
        h = load_queued(sub_nodes, np.int64(head), np.int64(m), sub_pos, sub_box_at, zobrist)
        box_pos = sub_pos[:m]
        reach_player(sub_box_at, offsets, np.int64(sub_nodes[head, max_boxes]), stamps, stack)
        n_push = legal_pushes(cells, sub_box_at, box_pos, offsets, stamps, sub_pushes)
        for i in range(n_push):
            code = np.int64(sub_pushes[i])
            dest = np.int64(box_pos[code >> 2] + offsets[code & 3])
            if dead[dest]:
                continue
            if not area[dest]:
                status = ROOM_OPEN
                break
            child_player, h2 = apply_push(box_pos, sub_box_at, offsets, zobrist, h, code)
            if not is_simple_deadlock(cells, dead, sub_box_at, offsets, dest, seen, trail):
                on = 0
                for j in range(m):
                    if cells[box_pos[j]] & GOAL:
                        on += 1
                if on == m:
                    status = ROOM_OPEN
                else:
                    _, norm = reach_player(
                        sub_box_at, offsets, np.int64(child_player), stamps, stack
                    )
                    slot = np.int64((h2 ^ np.uint64(norm)) & np.uint64(cap_mask))
                    while table_player[slot] != -1 and not (  # a hash match needs the boxes too
                        table_key[slot] == h2
                        and table_player[slot] == norm
                        and row_holds_boxes(sub_nodes, np.int64(rs.row[slot]), n_boxes, sub_box_at)
                    ):
                        slot = (slot + 1) & cap_mask
                    if table_player[slot] == -1:
                        if tail == budget:
                            status = ROOM_UNKNOWN
                        else:
                            table_key[slot] = h2
                            table_player[slot] = norm
                            rs.row[slot] = tail
                            used[tail] = slot
                            for j in range(m):
                                sub_nodes[tail, j] = box_pos[j]
                            sub_nodes[tail, max_boxes] = child_player
                            tail += 1
            undo_push(box_pos, sub_box_at, offsets, zobrist, h2, code)
            if status != ROOM_DEADLOCK:
                break
        for i in range(m):
            sub_box_at[sub_pos[i]] = -1
        head += 1
    for i in range(tail):
        table_player[used[i]] = -1
    return status


@njit(cache=True, nogil=True, _nrt=False)
def room_key(offsets, zobrist, box_at, area_squares, player, sub_box_at, stamps, stack):
    """The sub-problem ``room_deadlock`` solves, as a key.

    Two positions with equal keys (for the same area) pose the same bounded search, so its
    answer can be reused. Returns (Zobrist hash of the boxes on the area, the player's
    normalized square with only those boxes on the board). ``sub_box_at`` is all -1 on entry
    and on return.
    """
    h = np.uint64(0)
    for i in range(area_squares.shape[0]):
        sq = area_squares[i]
        if box_at[sq] >= 0:
            h ^= zobrist[sq]
            sub_box_at[sq] = 0
    _, norm = reach_player(sub_box_at, offsets, np.int64(player), stamps, stack)
    for i in range(area_squares.shape[0]):
        sub_box_at[area_squares[i]] = -1
    return h, norm
