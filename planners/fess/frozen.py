"""Bipartite deadlocks with frozen boxes as walls (FESS paper, appendix, "Bipartite analysis").

The move generator's bipartite test matches boxes to targets over the distances of the empty
board. The paper's example (XSokoban 41) needs more: once some boxes are frozen on targets
they are walls for good, and the boxes of a room may then compete for fewer targets than there
are boxes. ``FrozenBipartite`` recomputes, for each set of frozen boxes, which squares can
still send a lone box to each free target with those boxes as walls (the other, movable boxes
are ignored, so every edge it drops is truly gone and a failed matching is a real deadlock),
and keeps the answer per frozen set: frozen sets change rarely along a search path.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from planners._kernels.fess import pull_closure
from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_INF, GOAL, SQUARE_DTYPE
from soko_gym.engine.lowerbound import bipartite_deadlock, mark_frozen_boxes
from soko_gym.engine.reach import new_stamps


class FrozenBipartite:
    """Per-position bipartite test with the position's frozen boxes as walls.

    Args:
        board: the level's static arrays.
        cache_size: most frozen sets whose reachability tables are kept (least recently used
            ones are dropped first).
    """

    def __init__(self, board: Board, cache_size: int = 2048) -> None:
        if cache_size < 1:
            raise ValueError(f"cache_size must be positive, got {cache_size!r}")
        self.board = board
        self.cache_size = cache_size
        n = board.n_cells
        self._goal = (board.cells & GOAL) != 0
        self._seen = np.zeros(n + 1, dtype=np.uint32)
        self._work = np.zeros((4, max(1, board.n_boxes)), dtype=SQUARE_DTYPE)
        self._walls = np.full(n, -1, dtype=BOX_AT_DTYPE)
        self._stamps = new_stamps(board.cells)
        self._stack = np.zeros(n, dtype=SQUARE_DTYPE)
        self._states = np.zeros(4 * n, dtype=np.uint8)
        self._queue = np.zeros(4 * n, dtype=SQUARE_DTYPE)
        self._tables: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self.tables_built = 0

    def frozen_squares(self, box_pos: np.ndarray) -> np.ndarray:
        """Squares of the boxes that can never move again (``mark_frozen_boxes``), increasing."""
        b = self.board
        if mark_frozen_boxes(b.cells, b.dead, box_pos, b.offsets, self._seen) == 0:
            return np.zeros(0, dtype=SQUARE_DTYPE)
        return self._marked(box_pos)

    def _marked(self, box_pos: np.ndarray) -> np.ndarray:
        """The squares the last ``mark_frozen_boxes`` call marked frozen, increasing."""
        squares = box_pos[self._seen[box_pos] == self._seen[-1]]
        return np.sort(squares).astype(SQUARE_DTYPE)

    def reach_table(self, frozen: np.ndarray) -> np.ndarray:
        """uint16[n_goals, n_cells]: 0 where a lone box can still reach the target, else DIST_INF.

        ``frozen`` (increasing squares) are walls; targets under them keep DIST_INF rows.
        """
        key = frozen.tobytes()
        table = self._tables.get(key)
        if table is not None:
            self._tables.move_to_end(key)
            return table
        b = self.board
        n = b.n_cells
        table = np.full((b.goals.shape[0], n), DIST_INF, dtype=np.uint16)
        self._walls[frozen] = 0
        for g, goal in enumerate(b.goals.tolist()):
            if self._walls[goal] >= 0:
                continue
            pull_closure(
                b.cells, self._walls, b.offsets, goal, self._stamps, self._stack,
                self._states, self._queue,
            )  # fmt: skip
            table[g, self._states.reshape(n, 4).any(axis=1)] = 0
        self._walls[frozen] = -1
        self._tables[key] = table
        self.tables_built += 1
        if len(self._tables) > self.cache_size:
            self._tables.popitem(last=False)
        return table

    def is_deadlock(self, box_pos: np.ndarray) -> bool:
        """True when the boxes cannot all reach distinct targets with frozen boxes as walls.

        Only positions with a box frozen on a target are tested: without one the move
        generator's empty-board test already covers it (and a box frozen off a target is a
        simple deadlock found there).
        """
        b = self.board
        if mark_frozen_boxes(b.cells, b.dead, box_pos, b.offsets, self._seen) == 0:
            return False  # no frozen box: settled in one kernel call
        frozen = self._marked(box_pos)
        if not self._goal[frozen].any():
            return False
        table = self.reach_table(frozen)
        return bool(
            bipartite_deadlock(b.cells, b.dead, b.goals, table, box_pos, b.offsets, self._seen,
                               self._work)
        )  # fmt: skip


__all__ = ["FrozenBipartite"]
