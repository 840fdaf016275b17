"""Bipartite deadlocks with frozen boxes as walls (FESS paper, appendix, "Bipartite analysis").

The move generator's bipartite test matches boxes to targets over the distances of the empty
board. The paper's example (XSokoban 41) needs more: once some boxes are frozen on targets
they are walls for good, and the boxes of a room may then compete for fewer targets than there
are boxes. The test recomputes, for each set of frozen boxes, which squares can still send a
lone box to each free target with those boxes as walls (the other, movable boxes are ignored,
so every edge it drops is truly gone and a failed matching is a real deadlock), and keeps the
answer per frozen set: frozen sets change rarely along a search path. The work is done by the
kernel ``planners._kernels.fess_frozen.frozen_bipartite_deadlock``; ``FrozenBipartite`` is its
Python wrapper.
"""

from __future__ import annotations

import numpy as np

from planners._kernels.fess_frozen import (
    FC_BUILT,
    FC_HITS,
    FrozenTables,
    frozen_bipartite_deadlock,
    frozen_reach_slot,
    new_frozen_tables,
)
from soko_gym.engine.board import Board
from soko_gym.engine.constants import SQUARE_DTYPE
from soko_gym.engine.lowerbound import mark_frozen_boxes


class FrozenBipartite:
    """Per-position bipartite test with the position's frozen boxes as walls.

    Args:
        board: the level's static arrays.
        cache_size: slots of the direct-mapped reach-table cache (rounded up to a power of
            two; a frozen set landing on a taken slot replaces its table); None for the
            default of ``new_frozen_tables``.
    """

    def __init__(self, board: Board, cache_size: int | None = None) -> None:
        self.board = board
        self.tables: FrozenTables = new_frozen_tables(board, cache_size)
        self.cache_size = int(self.tables.cache_len.shape[0])

    @property
    def tables_built(self) -> int:
        """Reach tables built so far (cache misses)."""
        return int(self.tables.counters[FC_BUILT])

    @property
    def cache_hits(self) -> int:
        """Reach tables found in the cache so far."""
        return int(self.tables.counters[FC_HITS])

    def frozen_squares(self, box_pos: np.ndarray) -> np.ndarray:
        """Squares of the boxes that can never move again (``mark_frozen_boxes``), increasing."""
        t = self.tables
        if mark_frozen_boxes(t.cells, t.dead, box_pos, t.offsets, t.seen) == 0:
            return np.zeros(0, dtype=SQUARE_DTYPE)
        squares = box_pos[t.seen[box_pos] == t.seen[-1]]
        return np.sort(squares).astype(SQUARE_DTYPE)

    def reach_table(self, frozen: np.ndarray) -> np.ndarray:
        """uint16[n_goals, n_cells]: 0 where a lone box can still reach the target, else DIST_INF.

        ``frozen`` (squares, at most n_boxes of them) are walls; targets under them keep
        DIST_INF rows. Returns a copy: the cached table may be replaced by a later lookup.
        """
        squares = np.sort(np.asarray(frozen, dtype=SQUARE_DTYPE))
        if squares.shape[0] > self.tables.frozen.shape[0]:
            raise ValueError(f"more frozen squares than boxes: {squares.shape[0]}")
        return self.tables.cache_reach[frozen_reach_slot(self.tables, squares)].copy()

    def is_deadlock(self, box_pos: np.ndarray) -> bool:
        """True when the boxes cannot all reach distinct targets with frozen boxes as walls.

        Only positions with a box frozen on a target are tested: without one the move
        generator's empty-board test already covers it (and a box frozen off a target is a
        simple deadlock found there).
        """
        return bool(frozen_bipartite_deadlock(self.tables, box_pos))


__all__ = ["FrozenBipartite"]
