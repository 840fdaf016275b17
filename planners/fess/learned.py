"""Deadlock patterns learned during a search: what a bounded search proved dead, matched later.

The room and corral deadlock tests prove a position dead by a bounded push search on a subset
``S`` of its boxes (the corral's boxes, or the boxes on a room's area) with every other box
removed. What they prove is a fact about ``S`` alone: with only the boxes of ``S`` on the
board and the player in a given region of that board, no push sequence opens the corral or
the room. Any later position whose boxes include every square of ``S``, with its player in the
same region of the ``S``-only board, is therefore dead too: its other boxes can only block
pushes, never enable one.

``LearnedPatterns`` stores each proof as a pattern (the squares of ``S`` and the player's
normalized square on the ``S``-only board). New positions are matched against them (each
pattern is filed under its two smallest squares; a position holding a pattern, or all of it
but one square, holds one of those two, so only the patterns filed under its box squares are
compared, as bit sets, and the player's region is computed only for those it holds; the search
tests a new position only on the patterns stored since its parent's moves were made), and the
move generator drops every move whose box completes a pattern, before it becomes a position:
per position it lists the patterns it holds all but one square of, by that square
(``planners._kernels.fess_learned``).
This catches positions the tests that made the pattern would miss: a room test runs only on
the room a move ends in, a corral test only when the corral has the same shape, and positions
created before the pattern was learned keep producing children that contain it.
"""

from __future__ import annotations

import numpy as np

from planners._kernels.fess_learned import learned_add, match_learned, new_learned_tables
from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps


class LearnedPatterns:
    """Deadlock patterns learned during one search (module docstring).

    ``tables`` is the kernels' view of the store (``LearnedTables``, fixed capacity): the
    search kernel adds to it directly (``learned_add``), this class is its Python face.

    Args:
        board: the level's static arrays.
        max_patterns: most patterns kept; later proofs are not stored once it is reached.
        max_squares: most squares of all patterns together (default 16 per pattern).
    """

    def __init__(
        self, board: Board, max_patterns: int = 1 << 16, max_squares: int | None = None
    ) -> None:
        if max_patterns < 1:
            raise ValueError(f"max_patterns must be positive, got {max_patterns!r}")
        if max_squares is None:
            max_squares = 16 * max_patterns
        if max_squares < 1:
            raise ValueError(f"max_squares must be positive, got {max_squares!r}")
        self.board = board
        self.max_patterns = max_patterns
        n = board.n_cells
        self.hits = 0
        floor = board.floor
        live = board.dead[floor] == 0  # squares where boxes stand most: a bit of their own
        self.tables = new_learned_tables(
            n, max_patterns, max_squares, np.concatenate([floor[live], floor[~live]])
        )
        self._sub_box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        self._stamps = new_stamps(board.cells)
        self._stack = np.zeros(n, dtype=SQUARE_DTYPE)

    def __len__(self) -> int:
        return int(self.tables.count[0])

    def add(self, squares: np.ndarray, norm: int) -> bool:
        """Store the pattern (box squares, player's normalized square on their board).

        Returns False when it is known already or the store is full.
        """
        sq = np.unique(np.asarray(squares, dtype=SQUARE_DTYPE))
        return bool(learned_add(self.tables, sq, sq.size, int(norm)))

    def match(self, box_at: np.ndarray, box_pos: np.ndarray, player: int) -> int:
        """Index of a stored pattern the position contains (it is dead), or -1."""
        p = int(
            match_learned(
                self.tables, box_at, box_pos, player, self.board.offsets, self._sub_box_at,
                self._stamps, self._stack,
            )
        )  # fmt: skip
        if p >= 0:
            self.hits += 1
        return p

    def pattern(self, p: int) -> tuple[np.ndarray, int]:
        """The squares and the player's normalized square of pattern ``p``."""
        if not 0 <= p < len(self):
            raise IndexError(f"no pattern {p}: {len(self)} stored")
        t = self.tables
        return t.squares[t.start[p] : t.start[p + 1]].copy(), int(t.norm[p])


__all__ = ["LearnedPatterns"]
