"""FESS move generation: every macro move of a position with the features it leads to.

A *macro move* (FESS paper, Section 1) takes one box from square A to square B along any of its
push paths, the player walking between pushes; the other boxes stay put. Moves that end in the
same position are one move. The generator rejects moves into positions that a deadlock test
proves lost, and computes the feature values of each remaining move's position, which the
search needs to choose among moves. Its table's columns and bundles are ``fess_move_data``;
the box paths and the player regions a moved box leaves are ``fess_blocks``; the packing
plan's pull moves are ``fess_pulls``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planners._kernels.fess import count_out_of_plan, count_packed, count_regions
from planners._kernels.fess_blocks import (
    block_box_paths,
    edge_blocks,
    part_of,
    region_sums,
    split_part,
    subtree_sums,
)
from planners._kernels.fess_hotspots import count_hotspots, count_stuck
from planners._kernels.fess_learned import learned_near, move_matches_learned
from planners._kernels.fess_move_data import (
    DL_BIPARTITE,
    DL_FREEZE,
    DL_LEARNED,
    DL_PATTERN,
    FEAT_HOT,
    FEAT_KIND,
    FEAT_OOP,
    FEAT_PACKED,
    FEAT_ROOMS,
    FEAT_VALID,
    M_BOX,
    M_CONN,
    M_DST,
    M_FIRST_DIR,
    M_HOT,
    M_MOB,
    M_NEW_PUSHES,
    M_NORM,
    M_OOP,
    M_PACKED,
    M_PLAYER,
    M_PUSHES,
    M_ROOMS,
    M_SRC,
)
from planners._kernels.fess_room_count import count_rooms, recount_rooms
from soko_gym.engine.constants import DIST_INF, FLOOR, GOAL
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.lowerbound import bipartite_deadlock, bipartite_deadlock_from
from soko_gym.engine.patterns import is_pattern_deadlock


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
        region_sums(cells, dead, box_at, offsets, sc)
        dst_mark[n_cells] += 1
        mark = dst_mark[n_cells]
        tail = block_box_paths(cells, tables.dead_side, box_at, offsets, src, sc, mark, kinds, own)
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
            norm, n_mob, new_pushes = split_part(tables, sc, box_at, dst, sc.kids, 0, -1)
        else:  # the parts of the split region, from the DFS tree's subtree sums
            if n_kids < 0:
                if sc.dfs_info[1] == 0:
                    subtree_sums(offsets, sc)
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
            part = part_of(sc, kids, n_kids, stand)
            for t in range(4):
                nb = dst + offsets[t]
                if (cells[nb] & FLOOR) and box_at[nb] < 0 and part_of(sc, kids, n_kids, nb) == part:
                    covered |= 1 << t
            if (
                dst == src
                and sc.region[player] == sc.region[dst]
                and part_of(sc, kids, n_kids, player) == part
            ):
                continue  # back where it was, the player in its old region
            norm, n_mob, new_pushes = split_part(tables, sc, box_at, dst, kids, n_kids, part)
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
            if tables.flags[1]:  # the plan-free space: boxes no push can move
                feat[FEAT_HOT] = count_stuck(cells, tables.dead, offsets, box_at, box_pos)
            else:
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
