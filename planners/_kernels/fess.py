"""FESS feature kernels: player regions, broken room edges, mobility, hotspots, packing progress.

The Python side (``planners.fess.features``) defines the features and owns the buffers; these
kernels only count. Paper terms (connectivity, room connectivity, hotspot, packed boxes, out of
plan) are defined in ``planners/fess/features.py`` and ``planners/fess/rooms.py``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from soko_gym.engine.constants import BOX_AT_DTYPE, FLOOR, SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps, reach_player

HotspotScratch = namedtuple(
    "HotspotScratch",
    [  # scratch of fill_hotspot_table
        "box_at",  # int16[n_cells] all -1 (left all -1)
        "stamps",  # uint32[n_cells + 1] stamp buffer
        "stack",  # int32[n_cells]
        "seen",  # uint8[4 * n_cells] pull_closure's states
        "queue",  # int32[4 * n_cells]
        "parts",  # int8[4 * n_cells] pull_closure_parts' side partitions
        "parts_gen",  # int32[n_cells + 1] their generations (forget_parts)
        "base",  # uint8[n_goals, n_floor] goals reached per square, no wall
        "walled",  # uint8[n_goals, n_floor] goals reached per square, one wall
    ],
)


def new_hotspot_scratch(cells: np.ndarray, n_goals: int, n_floor: int) -> HotspotScratch:
    """Scratch of ``fill_hotspot_table`` on a board with cell flags ``cells``."""
    n = cells.shape[0]
    return HotspotScratch(
        box_at=np.full(n, -1, dtype=BOX_AT_DTYPE),
        stamps=new_stamps(cells),
        stack=np.zeros(n, dtype=SQUARE_DTYPE),
        seen=np.zeros(4 * n, dtype=np.uint8),
        queue=np.zeros(4 * n, dtype=SQUARE_DTYPE),
        parts=np.full(4 * n, -1, dtype=np.int8),
        parts_gen=np.zeros(n + 1, dtype=np.int32),
        base=np.zeros((n_goals, n_floor), dtype=np.uint8),
        walled=np.zeros((n_goals, n_floor), dtype=np.uint8),
    )


@njit(cache=True, nogil=True, _nrt=False)
def count_regions(cells, box_at, offsets, floor, label, stack):
    """Number of 4-connected areas of floor squares free of boxes (the connectivity feature).

    Args:
        cells: uint8[n_cells] cell flags.
        box_at: int16[n_cells] box index on each square, -1 for none.
        offsets: int32[4] flat index step per direction.
        floor: int32[n_floor] floor squares.
        label: int32[n_cells] receives the region index of each free floor square, -1 on boxes
            (walls keep whatever they held).
        stack: int32[n_cells] scratch.

    Returns:
        Number of regions.
    """
    for i in range(floor.shape[0]):
        label[floor[i]] = -1
    n = 0
    for i in range(floor.shape[0]):
        start = floor[i]
        if box_at[start] >= 0 or label[start] >= 0:
            continue
        label[start] = n
        stack[0] = start
        top = 1
        while top > 0:
            top -= 1
            sq = stack[top]
            for d in range(4):
                nb = sq + offsets[d]
                if (cells[nb] & FLOOR) and label[nb] < 0 and box_at[nb] < 0:
                    label[nb] = n
                    stack[top] = nb
                    top += 1
        n += 1
    return n


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


@njit(cache=True, nogil=True, _nrt=False)
def count_mobility(cells, box_at, box_pos, offsets, dead, player, stamps, stack):
    """Pushes the player can make now, and the boxes they move (the mobility feature).

    A push counts when the player reaches the square behind the box and the square ahead is a
    free floor square that is not a simple dead square.

    Args:
        cells: uint8[n_cells] cell flags.
        box_at: int16[n_cells] box index on each square, -1 for none.
        box_pos: int32[n_boxes] square of each box.
        offsets: int32[4] flat index step per direction.
        dead: uint8[n_cells] 1 on simple dead squares.
        player: player square.
        stamps: uint32[n_cells + 1] stamp buffer; receives the player's fill.
        stack: int32[n_cells] scratch.

    Returns:
        (number of such pushes, number of boxes with at least one).
    """
    reach_player(box_at, offsets, player, stamps, stack)
    return count_pushes_from_fill(cells, box_at, box_pos, offsets, dead, stamps)


@njit(cache=True, nogil=True, _nrt=False)
def count_pushes_from_fill(cells, box_at, box_pos, offsets, dead, stamps):
    """``count_mobility`` for the player fill already in ``stamps`` (its latest mark)."""
    mark = stamps[stamps.shape[0] - 1]
    n_pushes = 0
    n_boxes = 0
    for b in range(box_pos.shape[0]):
        sq = np.int64(box_pos[b])
        k = 0
        for d in range(4):
            dest = sq + offsets[d]
            if (
                stamps[sq - offsets[d]] == mark
                and (cells[dest] & FLOOR)
                and box_at[dest] < 0
                and dead[dest] == 0
            ):
                k += 1
        n_pushes += k
        if k > 0:
            n_boxes += 1
    return n_pushes, n_boxes


@njit(cache=True, nogil=True, _nrt=False)
def pull_closure(cells, box_at, offsets, goal, stamps, stack, seen, queue):
    """Mark the (square, side) states from which a lone box can be pushed onto ``goal``.

    Breadth-first pulls from the box on ``goal`` with the player on any side; squares holding a
    box in ``box_at`` act as walls. State ``square * 4 + side``: box on ``square``, player on
    ``square + offsets[side]`` (or anywhere in that square's region). ``box_at`` is restored.

    Args:
        cells: uint8[n_cells] cell flags.
        box_at: int16[n_cells] -1 on free squares, >= 0 on squares that act as walls.
        offsets: int32[4] flat index step per direction.
        goal: the target square.
        stamps: uint32[n_cells + 1] stamp buffer (scratch).
        stack: int32[n_cells] scratch.
        seen: uint8[4 * n_cells] receives 1 on every state from which the goal is reachable.
        queue: int32[4 * n_cells] scratch.

    Returns:
        Number of states marked.
    """
    seen[:] = 0
    if box_at[goal] >= 0:
        return 0
    tail = 0
    n_marked = 0
    box_at[goal] = 0
    for s in range(4):
        side = goal + offsets[s]
        if (cells[side] & FLOOR) and box_at[side] < 0 and seen[goal * 4 + s] == 0:
            seen[goal * 4 + s] = 1
            n_marked += 1
            queue[tail] = goal * 4 + s
            tail += 1
    box_at[goal] = -1
    head = 0
    while head < tail:
        code = queue[head]
        head += 1
        q = code >> 2
        box_at[q] = 0
        reach_player(box_at, offsets, q + offsets[code & 3], stamps, stack)
        mark = stamps[stamps.shape[0] - 1]
        for t in range(4):  # sides in the same region are the same state
            if stamps[q + offsets[t]] == mark and seen[q * 4 + t] == 0:
                seen[q * 4 + t] = 1
                n_marked += 1
        for d in range(4):
            stand = q + offsets[d]
            beyond = stand + offsets[d]
            if stamps[stand] != mark or not (cells[beyond] & FLOOR) or box_at[beyond] >= 0:
                continue
            nxt = stand * 4 + d
            if seen[nxt] == 0:
                seen[nxt] = 1
                n_marked += 1
                queue[tail] = nxt
                tail += 1
        box_at[q] = -1
    return n_marked


@njit(cache=True, nogil=True, _nrt=False)
def forget_parts(parts_gen):
    """The walls changed: every square's ``parts`` (``pull_closure_parts``) is out of date."""
    g = parts_gen[parts_gen.shape[0] - 1] + 1
    if g >= (1 << 30):  # the stamps would overflow: clear them and start again
        parts_gen[:] = 0
        g = 1
    parts_gen[parts_gen.shape[0] - 1] = g


@njit(cache=True, nogil=True, _nrt=False)
def _square_parts(cells, walls, offsets, stamps, stack, parts, q):
    """``parts[4q + s]``: the smallest side of q in side s's player region with a box on q.

    -1 where s is a wall or off the floor, or q holds no box (``walls`` >= 0 are walls).
    """
    for s in range(4):
        parts[q * 4 + s] = -1
    if not (cells[q] & FLOOR) or walls[q] >= 0:
        return
    walls[q] = 0
    for s in range(4):
        side = q + offsets[s]
        if parts[q * 4 + s] >= 0 or not (cells[side] & FLOOR) or walls[side] >= 0:
            continue
        parts[q * 4 + s] = s
        if s < 3:  # the last side's region need not be filled
            reach_player(walls, offsets, np.int64(side), stamps, stack)
            mark = stamps[stamps.shape[0] - 1]
            for t in range(s + 1, 4):
                if stamps[q + offsets[t]] == mark:
                    parts[q * 4 + t] = s
    walls[q] = -1


@njit(cache=True, nogil=True, _nrt=False)
def pull_closure_parts(cells, walls, offsets, goal, stamps, stack, parts, parts_gen, seen, queue):
    """``pull_closure``'s states, with one player fill per box square instead of per state.

    Which sides of a lone box the player can walk between depends on the box's square and the
    walls only, so it is worked out once per square (``parts``, kept while ``parts_gen`` says
    so: call ``forget_parts`` whenever ``walls`` change) and shared by every pull search over
    the same walls. ``seen`` receives exactly what ``pull_closure`` marks.

    Args:
        cells: uint8[n_cells] cell flags.
        walls: int16[n_cells] >= 0 on squares that act as walls (restored on return).
        offsets: int32[4] flat index step per direction.
        goal: the target square.
        stamps: uint32[n_cells + 1] stamp buffer (scratch); stack: int32[n_cells] scratch.
        parts: int8[4 * n_cells] per-square side partitions; parts_gen: int32[n_cells + 1]
            the generation each square's was made in, the current one last.
        seen: uint8[4 * n_cells] receives the states; queue: int32[4 * n_cells] scratch.

    Returns:
        Number of states marked.
    """
    gen = parts_gen[parts_gen.shape[0] - 1]
    seen[:] = 0
    if walls[goal] >= 0:
        return 0
    if parts_gen[goal] != gen:
        _square_parts(cells, walls, offsets, stamps, stack, parts, goal)
        parts_gen[goal] = gen
    tail = 0
    n_marked = 0
    for s in range(4):
        if parts[goal * 4 + s] >= 0:
            seen[goal * 4 + s] = 1
            n_marked += 1
            queue[tail] = goal * 4 + s
            tail += 1
    head = 0
    while head < tail:
        code = queue[head]
        head += 1
        q = code >> 2
        if parts_gen[q] != gen:
            _square_parts(cells, walls, offsets, stamps, stack, parts, q)
            parts_gen[q] = gen
        part = parts[code]
        for t in range(4):  # sides in the same region are the same state
            if parts[q * 4 + t] == part and seen[q * 4 + t] == 0:
                seen[q * 4 + t] = 1
                n_marked += 1
        for d in range(4):
            if parts[q * 4 + d] != part:
                continue
            stand = q + offsets[d]
            beyond = stand + offsets[d]
            if not (cells[beyond] & FLOOR) or walls[beyond] >= 0:
                continue
            nxt = stand * 4 + d
            if seen[nxt] == 0:
                seen[nxt] = 1
                n_marked += 1
                queue[tail] = nxt
                tail += 1
    return n_marked


@njit(cache=True, nogil=True, _nrt=False)
def _count_reachable_goals(cells, offsets, floor, goals, sc, out):
    """Per floor square, the goals a lone box there can reach; ``sc.box_at`` walls as given.

    Args:
        out: uint8[n_goals, n_floor] receives 1 where the box on ``floor[i]`` reaches goal ``g``.
        (others as in ``fill_hotspot_table``)
    """
    seen = sc.seen
    out[:, :] = 0
    forget_parts(sc.parts_gen)  # the walls are new
    for g in range(goals.shape[0]):
        pull_closure_parts(
            cells, sc.box_at, offsets, np.int64(goals[g]), sc.stamps, sc.stack, sc.parts,
            sc.parts_gen, seen, sc.queue,
        )  # fmt: skip
        for i in range(floor.shape[0]):
            sq = floor[i]
            if seen[sq * 4] or seen[sq * 4 + 1] or seen[sq * 4 + 2] or seen[sq * 4 + 3]:
                out[g, i] = 1


@njit(cache=True, nogil=True, _nrt=False)
def fill_hotspot_table(cells, offsets, floor, goals, sc, hot):
    """Fill the pair table of hotspot squares (see ``planners.fess.features``).

    ``hot[x, y] = 1`` when a wall on ``floor[y]`` lowers the number of goals other than
    ``floor[y]`` that a lone box on ``floor[x]`` can reach.

    Args:
        cells: uint8[n_cells] cell flags.
        offsets: int32[4] flat index step per direction.
        floor: int32[n_floor] floor squares.
        goals: int32[n_goals] goal squares.
        sc: ``HotspotScratch`` (``new_hotspot_scratch``).
        hot: uint8[n_floor, n_floor] receives the table.

    Returns:
        Number of hot pairs.
    """
    n_floor = floor.shape[0]
    n_goals = goals.shape[0]
    base = sc.base
    walled = sc.walled
    _count_reachable_goals(cells, offsets, floor, goals, sc, base)
    hot[:, :] = 0
    n_hot = 0
    for y in range(n_floor):
        wall_sq = floor[y]
        sc.box_at[wall_sq] = 1
        _count_reachable_goals(cells, offsets, floor, goals, sc, walled)
        sc.box_at[wall_sq] = -1
        for x in range(n_floor):
            if x == y:
                continue
            before = 0
            after = 0
            for g in range(n_goals):
                if goals[g] != wall_sq:
                    before += base[g, x]
                    after += walled[g, x]
            if after < before:
                hot[x, y] = 1
                n_hot += 1
    return n_hot


@njit(cache=True, nogil=True, _nrt=False)
def count_hotspots(box_pos, floor_index, hot, out):
    """Number of boxes that are hotspots for at least one other box.

    Args:
        box_pos: int32[n_boxes] square of each box.
        floor_index: int32[n_cells] position of a square in the board's floor array.
        hot: uint8[n_floor, n_floor] pair table from ``fill_hotspot_table``.
        out: int32[n_boxes] receives, per box, the number of other boxes it is a hotspot for.

    Returns:
        Number of hotspot boxes.
    """
    n = box_pos.shape[0]
    n_hot = 0
    for y in range(n):
        fy = floor_index[box_pos[y]]
        k = 0
        for x in range(n):
            if x != y and hot[floor_index[box_pos[x]], fy]:
                k += 1
        out[y] = k
        if k > 0:
            n_hot += 1
    return n_hot


UNORDERED = -2  # plan_src of every step of an unordered plan (``count_packed``)


@njit(cache=True, nogil=True, _nrt=False)
def count_packed(box_at, plan_src, plan_dst):
    """Steps of a packing plan that the boxes already realise (the packed boxes feature).

    After step ``k`` the plan expects boxes on ``S_k``: the step destinations so far minus the
    sources they left. The result is the largest ``k`` with a box on every square of ``S_k``.

    Args:
        box_at: int16[n_cells] box index on each square, -1 for none.
        plan_src: int32[n_steps] square a step takes its box from: a square an earlier step
            filled (a parked box moves on), or -1 for a box from outside the plan.
        plan_dst: int32[n_steps] square a step fills: a target, or a parking square.

    Returns:
        Number of plan steps realised (0 to n_steps). A plan whose sources are all
        ``UNORDERED`` has no order: the result is the number of its squares holding a box.
    """
    if plan_src.shape[0] > 0 and plan_src[0] == UNORDERED:
        filled = 0
        for k in range(plan_dst.shape[0]):
            if box_at[plan_dst[k]] >= 0:
                filled += 1
        return filled
    missing = 0
    best = 0
    for k in range(plan_dst.shape[0]):
        if box_at[plan_dst[k]] < 0:
            missing += 1
        src = plan_src[k]
        if src >= 0 and box_at[src] < 0:
            missing -= 1
        if missing == 0:
            best = k + 1
    return best


@njit(cache=True, nogil=True, _nrt=False)
def count_out_of_plan(box_pos, basin, plan_src, plan_dst, n_done, mark):
    """Boxes neither in the basin nor packed or parked by the plan's first ``n_done`` steps.

    Args:
        box_pos: int32[n_boxes] square of each box.
        basin: uint8[n_cells] 1 on squares of the sink basin.
        plan_src: int32[n_steps] as in ``count_packed``.
        plan_dst: int32[n_steps] as in ``count_packed``.
        n_done: number of plan steps realised (``count_packed``).
        mark: int32[n_cells] scratch, all 0; left all 0 on return.

    Returns:
        Number of out-of-plan boxes.
    """
    for k in range(n_done):
        mark[plan_dst[k]] += 1
        if plan_src[k] >= 0:
            mark[plan_src[k]] -= 1
    n_oop = 0
    for b in range(box_pos.shape[0]):
        sq = box_pos[b]
        if basin[sq] == 0 and mark[sq] <= 0:
            n_oop += 1
    for k in range(n_done):
        mark[plan_dst[k]] = 0
        if plan_src[k] >= 0:
            mark[plan_src[k]] = 0
    return n_oop
