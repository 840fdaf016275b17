"""FESS room deadlocks: can a room's boxes leave it or all reach its targets? A bounded search.

One of the search's node-level deadlock tests (``fess_search.node_deadlock``), which
remembers the answers by ``room_key`` and adapts each room's budget.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from soko_gym.engine.bounded_search import load_queued, row_holds_boxes
from soko_gym.engine.constants import BOX_AT_DTYPE, GOAL
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import reach_player

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
