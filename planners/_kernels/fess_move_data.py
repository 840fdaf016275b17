"""FESS move generation's data: the move table's columns, the deadlock kinds, the bundles.

Shared by the generator (``fess_moves``), its region geometry (``fess_blocks``), the move
order (``fess_order``), the search (``fess_search``, ``fess_tree``) and the Python side that
builds the tables (``planners.fess.run``) or reads the moves (``planners.fess.advisors``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from planners._kernels.fess_room_count import new_room_count
from soko_gym.engine.constants import BOX_AT_DTYPE, FLOOR
from soko_gym.engine.reach import new_stamps

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
DL_DIAGONAL = 8  # a closed diagonal of void squares (``fess_diagonal``)
N_DEADLOCK_KINDS = 9


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
        "flags",  # int64[2]: [0] 1: the bipartite test on every move; [1] 1: stuck boxes as hot
        "zobrist",  # uint64[n_cells] Zobrist key per square (the feature cache's keys)
        "room_border",  # uint8[n_cells] passages and room squares next to one or another room
        "room_areas",  # RoomAreas (``fess_room_count``): the rooms a square's box affects
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
        "rooms",  # RoomCount (``fess_room_count``): room counts' scratch and memo
        "match0",  # int32[n_boxes] the position's box-goal matching (-1: none), as work[0]
        "order",  # int32[n_cells] the region's squares by depth-first number (``edge_blocks``)
        "sub_mob",  # int32[n_cells] per free square: ``contrib`` summed over its DFS subtree
        "sub_new",  # int32[n_cells] the same, squares not reached before the move only
        "sub_min",  # int32[n_cells] the smallest square of its DFS subtree
        "sub_last",  # int32[n_cells] the last depth-first number in its DFS subtree
        "dfs_info",  # int64[3]: squares numbered; 1 when the sub_* sums are filled; next number
        "pos_label",  # int32[n_cells] the position's player regions (``count_regions``)
        "pos_min",  # int32[n_cells] each of those regions' smallest square
        "kids",  # int32[4] children of a cut square whose subtrees split off (``part_of``)
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
