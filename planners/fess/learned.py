"""Deadlock patterns learned during a search: what a bounded search proved dead, matched later.

The room and corral deadlock tests prove a position dead by a bounded push search on a subset
``S`` of its boxes (the corral's boxes, or the boxes on a room's area) with every other box
removed. What they prove is a fact about ``S`` alone: with only the boxes of ``S`` on the
board and the player in a given region of that board, no push sequence opens the corral or
the room. Any later position whose boxes include every square of ``S``, with its player in the
same region of the ``S``-only board, is therefore dead too: its other boxes can only block
pushes, never enable one.

``LearnedPatterns`` stores each proof as a pattern (the squares of ``S`` and the player's
normalized square on the ``S``-only board) and matches new positions against all of them:
a pattern is looked at only when a box stands on its smallest square, and the player's region
is computed only when every square of the pattern holds a box. This catches positions the
tests that made the pattern would miss: a room test runs only on the room a move ends in, a
corral test only when the corral has the same shape, and positions created before the
pattern was learned keep producing children that contain it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps, reach_player


@njit(cache=True, nogil=True)
def match_learned(
    box_at, box_pos, player, offsets, squares, start, norm, head, nxt, sub_box_at, stamps, stack
):
    """Index of a stored pattern the position contains, or -1.

    Args:
        box_at: int16[n_cells]; box_pos: int32[n_boxes]; player: the position.
        offsets: int32[4] flat index step per direction.
        squares: int32[...] the patterns' squares, increasing within a pattern.
        start: int32[n_patterns + 1] pattern ``p`` owns ``squares[start[p]:start[p + 1]]``.
        norm: int32[n_patterns] the player's normalized square on each pattern's board.
        head: int32[n_cells] first pattern whose smallest square is this square, -1 for none.
        nxt: int32[n_patterns] next pattern with the same smallest square, -1 at the end.
        sub_box_at: int16[n_cells] scratch, all -1 on entry and on return.
        stamps: uint32[n_cells + 1]; stack: int32[n_cells]: fill scratch.
    """
    for b in range(box_pos.shape[0]):
        p = head[box_pos[b]]
        while p >= 0:
            full = True
            for i in range(start[p] + 1, start[p + 1]):
                if box_at[squares[i]] < 0:
                    full = False
                    break
            if full:
                for i in range(start[p], start[p + 1]):
                    sub_box_at[squares[i]] = 0
                _, where = reach_player(sub_box_at, offsets, np.int64(player), stamps, stack)
                for i in range(start[p], start[p + 1]):
                    sub_box_at[squares[i]] = -1
                if where == norm[p]:
                    return p
            p = nxt[p]
    return -1


class LearnedPatterns:
    """Deadlock patterns learned during one search (module docstring).

    Args:
        board: the level's static arrays.
        max_patterns: most patterns kept; later proofs are not stored once it is reached.
    """

    def __init__(self, board: Board, max_patterns: int = 1 << 16) -> None:
        if max_patterns < 1:
            raise ValueError(f"max_patterns must be positive, got {max_patterns!r}")
        self.board = board
        self.max_patterns = max_patterns
        n = board.n_cells
        self.squares = np.zeros(256, dtype=SQUARE_DTYPE)
        self.start = np.zeros(65, dtype=SQUARE_DTYPE)
        self.norm = np.zeros(64, dtype=SQUARE_DTYPE)
        self.nxt = np.full(64, -1, dtype=SQUARE_DTYPE)
        self.head = np.full(n, -1, dtype=SQUARE_DTYPE)
        self.n_patterns = 0
        self.hits = 0
        self._known: set[tuple[bytes, int]] = set()
        self._sub_box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        self._stamps = new_stamps(board.cells)
        self._stack = np.zeros(n, dtype=SQUARE_DTYPE)

    def __len__(self) -> int:
        return self.n_patterns

    def add(self, squares: np.ndarray, norm: int) -> bool:
        """Store the pattern (box squares, player's normalized square on their board).

        Returns False when it is known already or the store is full.
        """
        sq = np.unique(np.asarray(squares, dtype=SQUARE_DTYPE))
        if sq.size == 0 or self.n_patterns >= self.max_patterns:
            return False
        key = (sq.tobytes(), int(norm))
        if key in self._known:
            return False
        self._known.add(key)
        p = self.n_patterns
        if p + 1 >= self.norm.shape[0]:
            grow = self.norm.shape[0] * 2
            self.norm = np.resize(self.norm, grow)
            self.nxt = np.resize(self.nxt, grow)
            self.start = np.resize(self.start, grow + 1)
        begin = int(self.start[p])
        end = begin + sq.size
        if end > self.squares.shape[0]:
            self.squares = np.resize(self.squares, max(2 * self.squares.shape[0], end))
        self.squares[begin:end] = sq
        self.start[p + 1] = end
        self.norm[p] = norm
        first = int(sq[0])
        self.nxt[p] = self.head[first]
        self.head[first] = p
        self.n_patterns = p + 1
        return True

    def match(self, box_at: np.ndarray, box_pos: np.ndarray, player: int) -> int:
        """Index of a stored pattern the position contains (it is dead), or -1."""
        if self.n_patterns == 0:
            return -1
        p = int(
            match_learned(
                box_at, box_pos, player, self.board.offsets, self.squares, self.start,
                self.norm, self.head, self.nxt, self._sub_box_at, self._stamps, self._stack,
            )
        )  # fmt: skip
        if p >= 0:
            self.hits += 1
        return p

    def pattern(self, p: int) -> tuple[np.ndarray, int]:
        """The squares and the player's normalized square of pattern ``p``."""
        if not 0 <= p < self.n_patterns:
            raise IndexError(f"no pattern {p}: {self.n_patterns} stored")
        return self.squares[self.start[p] : self.start[p + 1]].copy(), int(self.norm[p])


__all__ = ["LearnedPatterns", "match_learned"]
