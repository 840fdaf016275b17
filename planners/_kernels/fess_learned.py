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
        "occ_head",  # int32[n_cells] first occurrence entry of this square, -1 for none
        "occ_next",  # int32[...] next occurrence entry of the same square, -1 at the end
        "occ_pat",  # int32[...] the pattern of each occurrence entry
        "known",  # uint64[cap2] hash of each stored pattern by slot (0: empty; cap2 = 2^k)
        "known_pat",  # int32[cap2] the pattern in that slot
        "count",  # int64[2] patterns stored, squares used
    ],
)


def new_learned_tables(n_cells: int, max_patterns: int, max_squares: int) -> LearnedTables:
    """An empty store for at most ``max_patterns`` patterns of ``max_squares`` squares in all.

    Fixed capacity, so kernels can add to it; the large arrays are left unwritten until used.
    """
    cap2 = 1 << max(4, (2 * max_patterns - 1).bit_length())
    return LearnedTables(
        squares=np.zeros(max_squares, dtype=np.int32),
        start=np.zeros(max_patterns + 1, dtype=np.int32),
        norm=np.zeros(max_patterns, dtype=np.int32),
        occ_head=np.full(n_cells, -1, dtype=np.int32),
        occ_next=np.zeros(max_squares, dtype=np.int32),
        occ_pat=np.zeros(max_squares, dtype=np.int32),
        known=np.zeros(cap2, dtype=np.uint64),
        known_pat=np.zeros(cap2, dtype=np.int32),
        count=np.zeros(2, dtype=np.int64),
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
        if lt.known[slot] == h:
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
    for i in range(n):
        e = used + i
        lt.squares[e] = sq[i]
        lt.occ_pat[e] = p
        lt.occ_next[e] = lt.occ_head[sq[i]]
        lt.occ_head[sq[i]] = e
    lt.start[p + 1] = used + n
    lt.norm[p] = norm
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
def match_learned(lt, box_at, box_pos, player, offsets, sub_box_at, stamps, stack):
    """Index of a stored pattern the position contains, or -1.

    Each pattern is looked at from its smallest square only, so once per position.

    Args:
        lt: ``LearnedTables``.
        box_at: int16[n_cells]; box_pos: int32[n_boxes]; player: the position.
        offsets: int32[4] flat index step per direction.
        sub_box_at: int16[n_cells] scratch, all -1 on entry and on return.
        stamps: uint32[n_cells + 1]; stack: int32[n_cells]: fill scratch.
    """
    if lt.count[0] == 0:
        return -1
    for b in range(box_pos.shape[0]):
        sq = box_pos[b]
        e = lt.occ_head[sq]
        while e >= 0:
            p = lt.occ_pat[e]
            if (
                lt.squares[lt.start[p]] == sq  # from its smallest square only
                and _contained(lt, p, box_at)
                and _region_matches(lt, p, player, offsets, sub_box_at, stamps, stack)
            ):
                return p
            e = lt.occ_next[e]
    return -1


@njit(cache=True, nogil=True, _nrt=False)
def move_matches_learned(lt, box_at, dst, player, offsets, sub_box_at, stamps, stack):
    """True when a box just moved to ``dst`` completes a stored pattern (the move is dead).

    Only patterns holding ``dst`` are looked at: a pattern without it that the new position
    contains was contained in the position before the move as well.

    Args:
        lt: ``LearnedTables``.
        box_at: int16[n_cells] the position after the move; dst: the moved box's square.
        player: the player's square after the move.
        offsets, sub_box_at, stamps, stack: as in ``match_learned``.
    """
    if lt.count[0] == 0:
        return False
    e = lt.occ_head[dst]
    while e >= 0:
        p = lt.occ_pat[e]
        if _contained(lt, p, box_at) and _region_matches(
            lt, p, player, offsets, sub_box_at, stamps, stack
        ):
            return True
        e = lt.occ_next[e]
    return False
