"""Kernels matching learned deadlock patterns (``planners.fess.learned``) in positions and moves.

A pattern is a set of box squares and the player's normalized square on the board holding
only those boxes; a position containing every square of a pattern, with its player in that
region of the pattern's board, is dead.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from planners._kernels.common import sort_prefix
from soko_gym.engine.reach import reach_player

LearnedTables = namedtuple(
    "LearnedTables",
    [
        "squares",  # int32[...] the patterns' squares, increasing within a pattern
        "start",  # int32[cap + 1] pattern p owns squares[start[p]:start[p + 1]]
        "norm",  # int32[cap] the player's normalized square on each pattern's board
        "known",  # uint64[cap2] hash of each stored pattern by slot (0: empty; cap2 = 2^k)
        "known_pat",  # int32[cap2] the pattern in that slot
        "bit_of",  # int32[n_cells] each square's signature bit (-1: no box stands there)
        "square_of",  # int32[n_bits] the square of each bit when none is shared, else -1
        "sig",  # uint64[cap, n_words] each pattern's squares as signature bits
        "pos_sig",  # uint64[n_words] scratch: the signature of the position being matched
        "near_head",  # int32[n_cells] scratch: first pattern missing only this square
        "near_stamp",  # int64[n_cells] scratch: near_head is valid where this is count[3]
        "near_next",  # int32[cap] scratch: next pattern missing the same square, -1 at the end
        "anchor",  # int32[cap, 2] each pattern's two smallest squares (one square: n_cells, -1)
        "head",  # int32[2, n_cells + 1] newest pattern anchored (0: first, 1: second) per square
        "link",  # int32[cap, 2] next older pattern with the same anchor square, -1 at the end
        "count",  # int64[4] patterns stored, squares used, bits shared (0/1), near generation
    ],
)

MAX_WORDS = 4  # signature words: squares beyond 64 * MAX_WORDS share bits


def new_learned_tables(
    n_cells: int,
    max_patterns: int,
    max_squares: int,
    squares: np.ndarray | None = None,
    max_words: int = MAX_WORDS,
) -> LearnedTables:
    """An empty store for at most ``max_patterns`` patterns of ``max_squares`` squares in all.

    Fixed capacity, so kernels can add to it; the large arrays are left unwritten until used.
    ``squares``: the squares a box may stand on, those that most need a bit of their own first
    (default: every square); they get signature bits in that order, ``64 * max_words`` bits
    at most, shared beyond.
    """
    if squares is None:
        squares = np.arange(n_cells)
    squares = np.asarray(squares, dtype=np.int64)
    n_words = min(max_words, max(1, -(-squares.shape[0] // 64)))
    n_bits = 64 * n_words
    bit_of = np.full(n_cells, -1, dtype=np.int32)
    bit_of[squares] = np.arange(squares.shape[0]) % n_bits
    square_of = np.full(n_bits, -1, dtype=np.int32)
    shared = squares.shape[0] > n_bits
    if not shared:
        square_of[: squares.shape[0]] = squares
    cap2 = 1 << max(4, (2 * max_patterns - 1).bit_length())
    return LearnedTables(
        squares=np.zeros(max_squares, dtype=np.int32),
        start=np.zeros(max_patterns + 1, dtype=np.int32),
        norm=np.zeros(max_patterns, dtype=np.int32),
        known=np.zeros(cap2, dtype=np.uint64),
        known_pat=np.zeros(cap2, dtype=np.int32),
        bit_of=bit_of,
        square_of=square_of,
        sig=np.zeros((max_patterns, n_words), dtype=np.uint64),
        pos_sig=np.zeros(n_words, dtype=np.uint64),
        near_head=np.full(n_cells, -1, dtype=np.int32),
        near_stamp=np.zeros(n_cells, dtype=np.int64),
        near_next=np.full(max_patterns, -1, dtype=np.int32),
        anchor=np.full((max_patterns, 2), -1, dtype=np.int32),
        head=np.full((2, n_cells + 1), -1, dtype=np.int32),
        link=np.full((max_patterns, 2), -1, dtype=np.int32),
        count=np.array([0, 0, int(shared), 0], dtype=np.int64),
    )


@njit(cache=True, nogil=True, _nrt=False)
def _pattern_hash(squares, n, norm):
    """A non-zero hash of a pattern (increasing squares, then the player's square)."""
    h = np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(norm)
    for i in range(n):
        h = (h ^ np.uint64(squares[i])) * np.uint64(0x100000001B3)
        h ^= h >> np.uint64(29)
    return h | np.uint64(1)


@njit(cache=True, nogil=True, _nrt=False)
def learned_add(lt, squares, n, norm):
    """Store the pattern ``squares[:n]`` (distinct, any order; sorted in place) with ``norm``.

    Returns False when it is stored already or the store is full (patterns or squares).
    """
    p = lt.count[0]
    used = lt.count[1]
    if n == 0 or p >= lt.norm.shape[0] or used + n > lt.squares.shape[0]:
        return False
    sort_prefix(squares, np.int64(n))
    sq = squares[:n]
    h = _pattern_hash(sq, n, norm)
    mask = lt.known.shape[0] - 1
    slot = np.int64(h & np.uint64(mask))
    while lt.known[slot] != 0:
        if lt.known[slot] == h:  # a hash match only skips a duplicate, checked square by square
            q = lt.known_pat[slot]
            if lt.norm[q] == norm and lt.start[q + 1] - lt.start[q] == n:
                same = True
                for i in range(n):
                    if lt.squares[lt.start[q] + i] != sq[i]:
                        same = False
                        break
                if same:
                    return False
        slot = (slot + 1) & mask
    lt.known[slot] = h
    lt.known_pat[slot] = p
    sig = lt.sig[p]
    for w in range(sig.shape[0]):
        sig[w] = 0
    for i in range(n):
        lt.squares[used + i] = sq[i]
        bit = lt.bit_of[sq[i]]
        if bit < 0:
            lt.count[2] = 1  # a square without a bit: signatures no longer decide containment
        else:
            sig[bit >> 6] |= np.uint64(1) << np.uint64(bit & 63)
    lt.start[p + 1] = used + n
    lt.norm[p] = norm
    # anchor lists: a position holding all of p, or all but one square of it, holds its first
    # or its second square; a one-square pattern goes on the list of square n_cells
    a0 = np.int64(sq[0]) if n > 1 else np.int64(lt.head.shape[1] - 1)
    lt.anchor[p, 0] = a0
    lt.link[p, 0] = lt.head[0, a0]
    lt.head[0, a0] = p
    if n > 1:
        a1 = np.int64(sq[1])
        lt.anchor[p, 1] = a1
        lt.link[p, 1] = lt.head[1, a1]
        lt.head[1, a1] = p
    lt.count[0] = p + 1
    lt.count[1] = used + n
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _contained(lt, p, box_at):
    """True when every square of pattern ``p`` holds a box."""
    for i in range(lt.start[p], lt.start[p + 1]):
        if box_at[lt.squares[i]] < 0:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _region_matches(lt, p, player, offsets, sub_box_at, stamps, stack):
    """True when ``player`` is in pattern ``p``'s region of the board holding only its boxes."""
    for i in range(lt.start[p], lt.start[p + 1]):
        sub_box_at[lt.squares[i]] = 0
    _, where = reach_player(sub_box_at, offsets, np.int64(player), stamps, stack)
    for i in range(lt.start[p], lt.start[p + 1]):
        sub_box_at[lt.squares[i]] = -1
    return where == lt.norm[p]


@njit(cache=True, nogil=True, _nrt=False)
def _position_signature(lt, box_pos):
    """Write the signature of the box squares ``box_pos`` into ``lt.pos_sig``."""
    ps = lt.pos_sig
    for w in range(ps.shape[0]):
        ps[w] = 0
    for b in range(box_pos.shape[0]):
        bit = lt.bit_of[box_pos[b]]
        if bit >= 0:
            ps[bit >> 6] |= np.uint64(1) << np.uint64(bit & 63)


@njit(cache=True, nogil=True, _nrt=False)
def match_learned(lt, box_at, box_pos, player, offsets, sub_box_at, stamps, stack, first=0):
    """Index of a stored pattern from ``first`` on that the position contains, or -1.

    Only the one-square patterns and those whose first square holds a box are looked at
    (``lt.head``), through their signatures: a pattern with a bit the position lacks is not
    contained; squares are read only where bits are shared.

    Args:
        lt: ``LearnedTables``.
        box_at: int16[n_cells]; box_pos: int32[n_boxes]; player: the position.
        offsets: int32[4] flat index step per direction.
        sub_box_at: int16[n_cells] scratch, all -1 on entry and on return.
        stamps: uint32[n_cells + 1]; stack: int32[n_cells]: fill scratch.
        first: the patterns before it are not looked at.
    """
    # no hash decides a match (a prune): exact signature bits, squares read, region refilled
    n = lt.count[0]
    if n <= first:
        return -1
    _position_signature(lt, box_pos)
    shared = lt.count[2] != 0
    for b in range(box_pos.shape[0]):  # a contained pattern holds its first anchor
        p = lt.head[0, box_pos[b]]
        while p >= first:  # newest first: the older ones were looked at before
            if (
                p < n
                and _holds(lt, p, box_at, shared)
                and _region_matches(lt, p, player, offsets, sub_box_at, stamps, stack)
            ):
                return p
            p = lt.link[p, 0]
    p = lt.head[0, lt.head.shape[1] - 1]  # one-square patterns
    while p >= first:
        if (
            p < n
            and box_at[lt.squares[lt.start[p]]] >= 0
            and _region_matches(lt, p, player, offsets, sub_box_at, stamps, stack)
        ):
            return p
        p = lt.link[p, 0]
    return -1


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _holds(lt, p, box_at, shared):
    """True when the position (``lt.pos_sig``, ``box_at``) holds every square of pattern ``p``."""
    sig = lt.sig[p]
    ps = lt.pos_sig
    miss = np.uint64(0)
    for w in range(ps.shape[0]):
        miss |= sig[w] & ~ps[w]
    return miss == 0 and (not shared or _contained(lt, p, box_at))


# the index of a lone bit x: _DEBRUIJN_BIT[(x * _DEBRUIJN mod 2^64) >> 58]
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_BIT = np.zeros(64, dtype=np.int32)
for _i in range(64):
    _DEBRUIJN_BIT[((0x03F79D71B4CB0A89 << _i) % (1 << 64)) >> 58] = _i


@njit(cache=True, nogil=True, _nrt=False)
def _lone_missing(lt, p, box_at):
    """The one square of pattern ``p`` without a box, or -1 (none, or more than one)."""
    m = -1
    for i in range(lt.start[p], lt.start[p + 1]):
        q = lt.squares[i]
        if box_at[q] < 0:
            if m >= 0:
                return -1
            m = q
    return m


@njit(cache=True, nogil=True, _nrt=False)
def learned_near(lt, box_at, box_pos):
    """List, per square, the patterns the position holds all but that square of.

    A push of one box can complete only those patterns, on the square it ends on; read by
    ``move_matches_learned`` until the next call. Call on the position before its moves.
    Such a pattern holds a box on its first or its second square, so only the patterns
    anchored on the position's box squares (``lt.head``) and the one-square patterns are
    looked at, not the whole store: the store grows through a run (XSokoban 29: 5,948 patterns
    after 60 s, where a pass over all of them took a third of the generator's time in a replay).
    """
    n = lt.count[0]
    if n == 0:
        return
    lt.count[3] += 1
    gen = lt.count[3]
    _position_signature(lt, box_pos)
    for b in range(box_pos.shape[0]):  # all but one square held: one of the anchors is
        sq = box_pos[b]
        p = lt.head[0, sq]
        while p >= 0:
            if p < n:  # a store cut back by lowering count[0] (tests) has no newer ones
                _near_one(lt, p, box_at, gen)
            p = lt.link[p, 0]
        p = lt.head[1, sq]
        while p >= 0:
            if p < n and box_at[lt.anchor[p, 0]] < 0:  # else listed through its first anchor
                _near_one(lt, p, box_at, gen)
            p = lt.link[p, 1]
    p = lt.head[0, lt.head.shape[1] - 1]  # one-square patterns: near wherever it is free
    while p >= 0:
        m = lt.squares[lt.start[p]]
        if p < n and box_at[m] < 0:
            _list_near(lt, p, m, gen)
        p = lt.link[p, 0]


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _list_near(lt, p, m, gen):
    """Put pattern ``p`` on the near list of square ``m`` (generation ``gen``)."""
    if lt.near_stamp[m] != gen:
        lt.near_stamp[m] = gen
        lt.near_head[m] = -1
    lt.near_next[p] = lt.near_head[m]
    lt.near_head[m] = p


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _near_one(lt, p, box_at, gen):
    """List pattern ``p`` under its one missing square when exactly one is missing."""
    sig = lt.sig[p]
    ps = lt.pos_sig
    shared = lt.count[2] != 0
    word = -1
    lone = np.uint64(0)
    for w in range(ps.shape[0]):
        x = sig[w] & ~ps[w]
        if x != 0:
            if word >= 0 or (x & (x - np.uint64(1))) != 0:
                return  # two bits or more missing: two squares or more
            word = w
            lone = x
    if word == -1 and not shared:
        return  # contained already
    if shared:  # a missing square's bit may be set by a box elsewhere: read the squares
        m = _lone_missing(lt, p, box_at)
        if m < 0:
            return
    else:
        bit = _DEBRUIJN_BIT[((lone * _DEBRUIJN) >> np.uint64(58)) & np.uint64(63)]
        m = lt.square_of[64 * word + bit]
    _list_near(lt, p, m, gen)


@njit(cache=True, nogil=True, _nrt=False)
def move_matches_learned(lt, box_at, dst, player, offsets, sub_box_at, stamps, stack):
    """True when a box just moved to ``dst`` completes a stored pattern (the move is dead).

    Only the patterns ``learned_near`` listed for ``dst`` on the position before the move are
    looked at: a pattern without ``dst`` that the new position contains was contained in the
    position before the move as well.

    Args:
        lt: ``LearnedTables``.
        box_at: int16[n_cells] the position after the move; dst: the moved box's square.
        player: the player's square after the move.
        offsets, sub_box_at, stamps, stack: as in ``match_learned``.
    """
    if lt.count[0] == 0 or lt.near_stamp[dst] != lt.count[3]:
        return False
    p = lt.near_head[dst]
    while p >= 0:
        if _contained(lt, p, box_at) and _region_matches(
            lt, p, player, offsets, sub_box_at, stamps, stack
        ):
            return True
        p = lt.near_next[p]
    return False
