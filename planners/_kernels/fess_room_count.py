"""FESS room connectivity: the room-graph edges boxes break, counted in full or after one move.

A room's search walks its own free squares and the passages it reaches; an edge of the room
graph (``planners.fess.rooms``) is broken when neither room's searches touch the other. The
move generator counts a position once (``count_rooms``) and each move from it again only for
the rooms whose area the moved box touches (``recount_rooms``), remembering rooms' answers.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, _nrt=False)
def _search_room(box_at, offsets, room_id, passage_id, r, start, seen, stack, intact):
    """From the free square ``start`` of room ``r``: mark what the room's search touches."""
    seen[start] = r
    stack[0] = start
    top = 1
    while top > 0:
        top -= 1
        sq = stack[top]
        for d in range(4):
            nb = sq + offsets[d]
            if box_at[nb] >= 0 or seen[nb] == r:
                continue
            s = room_id[nb]
            if s == r or (s < 0 and passage_id[nb] >= 0):
                seen[nb] = r
                stack[top] = nb
                top += 1
            elif s >= 0:
                intact[r, s] = 1


@njit(cache=True, nogil=True, _nrt=False)
def _broken_edges(edges, intact):
    n_broken = 0
    for e in range(edges.shape[0]):
        r = edges[e, 0]
        s = edges[e, 1]
        if intact[r, s] == 0 and intact[s, r] == 0:
            n_broken += 1
    return n_broken


@njit(cache=True, nogil=True, _nrt=False)
def count_broken_room_edges(
    box_at, offsets, floor, room_id, passage_id, edges, seen, stack, intact
):
    """Number of room-graph edges that boxes break (the room connectivity feature).

    From the free squares of each room ``r`` a search walks through free squares of ``r`` and of
    passages, never entering another room; every room whose free square it steps on is touched.
    An edge ``(r, s)`` is intact when the searches from ``r`` touch ``s``, broken otherwise.

    Args:
        box_at: int16[n_cells] box index on each square, -1 for none.
        offsets: int32[4] flat index step per direction.
        floor: int32[n_floor] the floor squares, increasing (only they are searched).
        room_id: int32[n_cells] room of each square, -1 for walls and passages.
        passage_id: int32[n_cells] passage of each floor square in no room, -1 elsewhere.
        edges: int32[n_edges, 2] room pairs of the room graph.
        seen: int32[n_cells] scratch (the room whose search visited a square last; only floor
            squares are read).
        stack: int32[n_cells] scratch.
        intact: uint8[n_rooms, n_rooms] receives 1 where a room's search touched the other.

    Returns:
        Number of broken edges.
    """
    for i in range(floor.shape[0]):
        seen[floor[i]] = -1
    intact[:, :] = 0
    for i in range(floor.shape[0]):
        start = floor[i]
        r = room_id[start]
        if r < 0 or box_at[start] >= 0 or seen[start] == r:
            continue
        _search_room(box_at, offsets, room_id, passage_id, r, start, seen, stack, intact)
    return _broken_edges(edges, intact)


RoomAreas = namedtuple(
    "RoomAreas",
    [  # which rooms' searches (``count_broken_room_edges``) a box on a square can change
        "room_id",  # int32[n_cells] room of each square, -1 outside rooms (as in the full count)
        "passage_id",  # int32[n_cells] passage of each square, -1 outside passages
        "edges",  # int32[n_edges, 2] the room graph's edges
        "room_start",  # int32[n_rooms + 1] room r's squares: room_sq[room_start[r]:...]
        "room_sq",  # int32[...] increasing within a room
        "reach_start",  # int32[n_rooms + 1] squares room r's search may mark (room, passages)
        "reach_sq",  # int32[...]
        "aff_start",  # int32[n_cells + 1] rooms whose touches a box on a square can change
        "aff_room",  # int32[...]
        "floor",  # int32[n_floor] the floor squares, increasing
        "salt",  # uint64[max(1, n_rooms)] per room, mixed into its memo keys (``RoomCount``)
    ],
)


def room_border_table(
    room_id: np.ndarray, passage_id: np.ndarray, offsets: np.ndarray
) -> np.ndarray:
    """uint8[n_cells]: 1 on passages and on room squares next to a passage or another room.

    The room-connectivity feature depends on which of these squares hold boxes, never on the
    others: a search from a room leaves it only through such squares.
    """
    border = (passage_id >= 0).astype(np.uint8)
    for o in offsets.tolist():
        nb = np.roll(room_id, -o)
        nb_passage = np.roll(passage_id, -o) >= 0
        border |= ((room_id >= 0) & (nb_passage | ((nb >= 0) & (nb != room_id)))).astype(np.uint8)
    return border


MAX_BIT_ROOMS = 64  # rooms the one-pass count (``_count_by_bits``) can hold in a uint64


def room_areas(
    room_id: np.ndarray,
    passage_id: np.ndarray,
    edges: np.ndarray,
    offsets: np.ndarray,
    floor: np.ndarray,
    border: np.ndarray | None = None,
) -> RoomAreas:
    """Each room's search area on the empty board, for ``count_rooms`` and ``recount_rooms``.

    A room's search walks its own squares and the passages it reaches and touches the other
    rooms' squares next to them; which rooms it touches can change only with a box on one of
    those squares that is also a border square (``room_border_table``): every free square of
    a room starts a search, so a path out of it may as well start at its last room square.
    ``floor``: the level's floor squares, increasing; ``border``: ``room_border_table``'s
    answer when the caller has it already.
    """
    n = room_id.shape[0]
    n_rooms = int(room_id.max()) + 1 if n and room_id.max() >= 0 else 0
    offs = [int(o) for o in offsets]
    if border is None:
        border = room_border_table(room_id, passage_id, offsets)
    rooms, reaches = [], []
    affected: list[list[int]] = [[] for _ in range(n)]
    for r in range(n_rooms):
        own = np.flatnonzero(room_id == r)
        seen = set(own.tolist())
        stack = list(seen)
        touched = set()
        while stack:
            sq = stack.pop()
            for o in offs:
                nb = sq + o
                if nb in seen or nb in touched:
                    continue
                if room_id[nb] < 0 and passage_id[nb] >= 0:
                    seen.add(nb)
                    stack.append(nb)
                elif room_id[nb] >= 0 and room_id[nb] != r:
                    touched.add(nb)
        rooms.append(own)
        reaches.append(np.array(sorted(seen), dtype=np.int64))
        for q in seen | touched:
            if border[q]:
                affected[q].append(r)

    def csr(lists):
        start = np.zeros(len(lists) + 1, dtype=np.int32)
        start[1:] = np.cumsum([len(x) for x in lists])
        flat = np.concatenate([np.asarray(x, dtype=np.int32) for x in lists]) if lists else []
        return start, np.asarray(flat, dtype=np.int32).reshape(-1)

    room_start, room_sq = csr(rooms)
    reach_start, reach_sq = csr(reaches)
    aff_start, aff_room = csr(affected)
    salt = np.random.default_rng(0x5A17).integers(1, 2**63, size=max(1, n_rooms), dtype=np.int64)
    return RoomAreas(
        room_id, passage_id, edges, room_start, room_sq, reach_start, reach_sq, aff_start,
        aff_room, np.asarray(floor, dtype=np.int32),
        salt.astype(np.uint64),
    )  # fmt: skip


@njit(cache=True, nogil=True, _nrt=False)
def _count_by_bits(box_at, offsets, areas, comp, stack, intact, bits):
    """``count_broken_room_edges`` in one pass over the floor, for at most 64 rooms.

    Every free square of a room starts one of its searches, so room ``r`` touches room ``s``
    exactly when a free square of ``s`` lies next to a free square of ``r`` or next to a
    component of free passage squares next to one: the passage components are labelled once,
    each with the rooms it borders as bits, instead of walked once per room.
    ``comp``: int32[n_cells] scratch; ``bits``: uint64[n_cells + 64] scratch (a component's
    rooms, then each room's touches); ``intact`` receives the rooms' touches as in the full
    count.
    """
    room_id = areas.room_id
    passage_id = areas.passage_id
    floor = areas.floor
    n_rooms = intact.shape[0]
    n_cells = room_id.shape[0]
    one = np.uint64(1)
    for i in range(floor.shape[0]):
        comp[floor[i]] = -1
    n_comp = 0
    for i in range(floor.shape[0]):
        start = floor[i]
        if room_id[start] >= 0 or passage_id[start] < 0 or box_at[start] >= 0 or comp[start] >= 0:
            continue
        rooms = np.uint64(0)
        comp[start] = n_comp
        stack[0] = start
        top = 1
        while top > 0:
            top -= 1
            sq = stack[top]
            for d in range(4):
                nb = sq + offsets[d]
                if box_at[nb] >= 0:
                    continue
                s = room_id[nb]
                if s >= 0:
                    rooms |= one << np.uint64(s)
                elif passage_id[nb] >= 0 and comp[nb] < 0:
                    comp[nb] = n_comp
                    stack[top] = nb
                    top += 1
        bits[n_comp] = rooms
        n_comp += 1
    for r in range(n_rooms):
        bits[n_cells + r] = 0
    for k in range(areas.room_sq.shape[0]):
        sq = areas.room_sq[k]
        if box_at[sq] >= 0:
            continue
        r = room_id[sq]
        touch = bits[n_cells + r]
        for d in range(4):
            nb = sq + offsets[d]
            if box_at[nb] >= 0:
                continue
            s = room_id[nb]
            if s >= 0:
                if s != r:
                    touch |= one << np.uint64(s)
            elif passage_id[nb] >= 0:
                touch |= bits[comp[nb]]
        bits[n_cells + r] = touch
    for r in range(n_rooms):
        touch = bits[n_cells + r]
        for s in range(n_rooms):
            intact[r, s] = 1 if s != r and (touch >> np.uint64(s)) & one else 0
    return _broken_edges(areas.edges, intact)


RoomCount = namedtuple(
    "RoomCount",
    [  # scratch of the move generator's room counts (``count_rooms``, ``recount_rooms``)
        "seen",  # int32[n_cells] room searches' scratch (may be shared with other fills)
        "stack",  # int32[n_cells]
        "intact",  # uint8[n_rooms, n_rooms] receives the rooms' touches, as the full count
        "pick",  # uint8[n_rooms] rooms to work out
        "bits",  # uint64[n_cells + 64] scratch of the one-pass count
        "area_hash",  # uint64[max(1, n_rooms)] per room: Zobrist key of the boxes on its area
        "key",  # uint64[max(1, n_rooms)] per room to work out: its memo key
        "memo_key",  # uint64[cap] remembered room rows (cap a power of two; 0: empty slot)
        "memo_row",  # uint64[cap] the rooms a room's searches touch, as bits
    ],
)


def new_room_count(
    seen: np.ndarray, stack: np.ndarray, n_rooms: int, memo_bits: int = 16
) -> RoomCount:
    """Scratch of the room counts, sharing the int32[n_cells] arrays ``seen`` and ``stack``.

    Rooms' rows are remembered in ``2 ** memo_bits`` slots (16 bytes each) on boards of at
    most ``MAX_BIT_ROOMS`` rooms; ``memo_bits=0`` remembers nothing.
    """
    n = seen.shape[0]
    cap = 1 << memo_bits if 0 < n_rooms <= MAX_BIT_ROOMS else 1
    return RoomCount(
        seen=seen,
        stack=stack,
        intact=np.zeros((n_rooms, n_rooms), dtype=np.uint8),
        pick=np.zeros(n_rooms, dtype=np.uint8),
        bits=np.zeros(n + MAX_BIT_ROOMS, dtype=np.uint64),
        area_hash=np.zeros(max(1, n_rooms), dtype=np.uint64),
        key=np.zeros(max(1, n_rooms), dtype=np.uint64),
        memo_key=np.zeros(cap, dtype=np.uint64),
        memo_row=np.zeros(cap, dtype=np.uint64),
    )


@njit(cache=True, nogil=True, _nrt=False)
def _room_rows(box_at, offsets, areas, rc):
    """Fill the ``intact`` rows of the rooms ``rc.pick`` marks (keys in ``rc.key``).

    A room's row depends only on the boxes on its area (``RoomAreas``), which its key names:
    remembered rows are copied; the others are searched, in one pass over the floor where
    their searches would walk over twice its squares (``_count_by_bits``: the factor of two
    allows for its dearer pass), and remembered.
    """
    n_rooms = rc.intact.shape[0]
    intact = rc.intact
    memo = rc.memo_key.shape[0] > 1
    mask = np.uint64(rc.memo_key.shape[0] - 1)
    one = np.uint64(1)
    cost = 0
    for r in range(n_rooms):
        if rc.pick[r] == 0:
            continue
        if memo:
            key = rc.key[r]
            slot = np.int64(key & mask)
            if rc.memo_key[slot] == key:  # a collision misstates a feature, never prunes
                row = rc.memo_row[slot]
                for s in range(n_rooms):
                    intact[r, s] = 1 if (row >> np.uint64(s)) & one else 0
                rc.pick[r] = 0
                continue
        cost += areas.reach_start[r + 1] - areas.reach_start[r]
    if cost == 0:
        return
    if n_rooms <= MAX_BIT_ROOMS and cost > 2 * areas.floor.shape[0]:
        _count_by_bits(box_at, offsets, areas, rc.seen, rc.stack, intact, rc.bits)
    else:
        seen = rc.seen
        for r in range(n_rooms):
            if rc.pick[r] == 0:
                continue
            for s in range(n_rooms):
                intact[r, s] = 0
            for k in range(areas.reach_start[r], areas.reach_start[r + 1]):
                seen[areas.reach_sq[k]] = -1
            for k in range(areas.room_start[r], areas.room_start[r + 1]):
                start = areas.room_sq[k]
                if box_at[start] >= 0 or seen[start] == r:
                    continue
                _search_room(
                    box_at, offsets, areas.room_id, areas.passage_id, r, start, seen, rc.stack,
                    intact,
                )  # fmt: skip
    if memo:
        for r in range(n_rooms):
            if rc.pick[r] == 0:
                continue
            row = np.uint64(0)
            for s in range(n_rooms):
                if intact[r, s]:
                    row |= one << np.uint64(s)
            slot = np.int64(rc.key[r] & mask)
            rc.memo_key[slot] = rc.key[r]
            rc.memo_row[slot] = row


@njit(cache=True, nogil=True, _nrt=False)
def count_rooms(box_at, box_pos, offsets, areas, zobrist, rc):
    """``count_broken_room_edges`` of a position, remembering rooms' rows (``RoomCount``).

    Also keys each room's area for ``recount_rooms`` (``zobrist``: uint64[n_cells]).
    """
    n_rooms = rc.intact.shape[0]
    for r in range(n_rooms):
        rc.area_hash[r] = 0
    for b in range(box_pos.shape[0]):
        sq = box_pos[b]
        for k in range(areas.aff_start[sq], areas.aff_start[sq + 1]):
            rc.area_hash[areas.aff_room[k]] ^= zobrist[sq]
    for r in range(n_rooms):
        rc.pick[r] = 1
        rc.key[r] = rc.area_hash[r] ^ areas.salt[r]
    _room_rows(box_at, offsets, areas, rc)
    return _broken_edges(areas.edges, rc.intact)


@njit(cache=True, nogil=True, _nrt=False)
def recount_rooms(box_at, offsets, areas, zobrist, a, b, intact0, rc):
    """``count_broken_room_edges`` after a box moved from square ``a`` to ``b`` (or none: a == b).

    The position before the move is the one ``count_rooms`` last keyed, its rooms' rows
    ``intact0``; only rooms whose area (``RoomAreas``) holds ``a`` or ``b`` are worked out again.
    """
    n_rooms = intact0.shape[0]
    pick = rc.pick
    for r in range(n_rooms):
        pick[r] = 0
    for k in range(areas.aff_start[a], areas.aff_start[a + 1]):
        pick[areas.aff_room[k]] = 1
    for k in range(areas.aff_start[b], areas.aff_start[b + 1]):
        pick[areas.aff_room[k]] = 1
    for r in range(n_rooms):
        if pick[r]:
            rc.key[r] = rc.area_hash[r] ^ areas.salt[r]
        else:
            for s in range(n_rooms):
                rc.intact[r, s] = intact0[r, s]
    for k in range(areas.aff_start[a], areas.aff_start[a + 1]):
        rc.key[areas.aff_room[k]] ^= zobrist[a]
    for k in range(areas.aff_start[b], areas.aff_start[b + 1]):
        rc.key[areas.aff_room[k]] ^= zobrist[b]
    _room_rows(box_at, offsets, areas, rc)
    return _broken_edges(areas.edges, rc.intact)
