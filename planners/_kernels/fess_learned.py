"""Kernels matching learned deadlock patterns (``planners.fess.learned``) in positions and moves.

A pattern is a set of box squares and the player's normalized square on the board holding
only those boxes; a position containing every square of a pattern, with its player in that
region of the pattern's board, is dead.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

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
        "count",  # int64[1] patterns stored
    ],
)


@njit(cache=True, nogil=True)
def _contained(lt, p, box_at):
    """True when every square of pattern ``p`` holds a box."""
    for i in range(lt.start[p], lt.start[p + 1]):
        if box_at[lt.squares[i]] < 0:
            return False
    return True


@njit(cache=True, nogil=True)
def _region_matches(lt, p, player, offsets, sub_box_at, stamps, stack):
    """True when ``player`` is in pattern ``p``'s region of the board holding only its boxes."""
    for i in range(lt.start[p], lt.start[p + 1]):
        sub_box_at[lt.squares[i]] = 0
    _, where = reach_player(sub_box_at, offsets, np.int64(player), stamps, stack)
    for i in range(lt.start[p], lt.start[p + 1]):
        sub_box_at[lt.squares[i]] = -1
    return where == lt.norm[p]


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
