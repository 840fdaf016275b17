"""Depth-first push search: ``dfs``, ``zobrist-dfs``, ``iddfs`` and ``iddfs-zobrist``.

Without a table a position repeating one on the current path is skipped; with the table
(``zobrist-*``) a position is skipped when it was entered at the same or a smaller depth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from planners._kernels import dfs as dk
from planners._kernels.common import (
    EXHAUSTED,
    FOUND,
    GROW_NODES,
    GROW_TABLE,
    new_push_scratch,
    search_board,
)
from planners._kernels.table import EMPTY, new_table
from planners.base import Outcome, Push
from planners.driver import SlicePlanner, SliceSearch, check_bool, check_int
from planners.limits import SearchLimits
from soko_gym.engine.board import Board, State
from soko_gym.engine.constants import GOAL
from soko_gym.levels import Level

SLICE_NODES = 8192  # expansions per kernel call between checks of the clock and the node limit
FIRST_DEPTH = 64  # stack rows allocated at first; doubled when the search goes deeper
FIRST_TABLE = 8192
NO_BOUND = 1 << 62


@dataclass(frozen=True)
class DepthFirstOptions:
    """Options of ``zobrist-dfs``, ``iddfs`` and ``iddfs-zobrist``.

    Attributes:
        max_depth: the largest number of pushes tried (iterative deepening: the largest
            bound), None for no bound.
        freeze: also prune pushes that freeze a box off goal (safe; on by default).
    """

    max_depth: int | None = None
    freeze: bool = True

    def __post_init__(self) -> None:
        check_int("max_depth", self.max_depth, 0, allow_none=True)
        check_bool("freeze", self.freeze)


@dataclass(frozen=True)
class BoundedDepthFirstOptions(DepthFirstOptions):
    """Options of ``dfs``: as ``DepthFirstOptions``, with ``max_depth`` an int (default 200)."""

    max_depth: int = 200

    def __post_init__(self) -> None:
        check_int("max_depth", self.max_depth, 0)
        check_bool("freeze", self.freeze)


class _DfsSearch(SliceSearch):
    """One depth-first search (every iteration of it): the stack, the table and the bound."""

    grows = {GROW_NODES: "stack", GROW_TABLE: "table"}

    def __init__(
        self,
        planner: DepthFirstBase,
        board: Board,
        start: State,
        limits: SearchLimits,
        deadline: float | None,
    ) -> None:
        super().__init__(limits, deadline, SLICE_NODES, dk.N_COUNTERS)
        opts: DepthFirstOptions = planner.options
        self.board = board
        self.freeze = opts.freeze
        self.use_table = planner.use_table
        self.iterative = planner.iterative
        self.top = NO_BOUND if opts.max_depth is None else opts.max_depth
        self.board_arrays = search_board(board)
        self.scratch = new_push_scratch(board)
        self.state = start
        self.scratch.box_pos[:] = self.state.box_pos
        self.scratch.box_at[:] = self.state.box_at
        self.iterations = 0
        self.bound = 0
        rows = FIRST_DEPTH
        if opts.max_depth is not None:
            rows = min(rows, opts.max_depth + 2)
        self.store.put("stack", dk.new_dfs_stack(board.n_boxes, rows))
        self.store.put("table", new_table(FIRST_TABLE if self.use_table else 2))

    def begin(self, bound: int) -> None:
        """Start an iteration from the start position with depth bound ``bound``."""
        self.iterations += 1
        self.bound = bound
        c = self.counters
        c[dk.C_DEPTH] = 0
        c[dk.C_ENTER] = 1
        c[dk.C_FRONTIER] = 0
        c[dk.C_TABLE] = 0
        c[dk.C_ON_GOAL] = int(np.count_nonzero(self.board.cells[self.state.box_pos] & GOAL))
        self.store["table"].players.fill(EMPTY)
        stack = self.store["stack"]
        stack.players[0] = self.state.player
        stack.hashes[0] = self.state.box_hash

    def step(self, budget: int) -> int:
        st = self.store
        return dk.run_dfs(
            self.board_arrays, self.scratch, st["stack"], st["table"], self.counters, budget,
            self.bound, self.use_table, self.freeze,
        )  # fmt: skip

    def finished(self, status: int) -> str | None:
        if status == FOUND:
            return "solved"
        if status != EXHAUSTED:
            return super().finished(status)
        if not self.counters[dk.C_FRONTIER]:
            return "unsolvable"  # nothing was cut off by the bound
        if self.iterative and self.bound < self.top:
            self.begin(self.bound + 1)
            return None
        return "exhausted"

    def plan(self) -> list[Push]:
        """The current path as (box square, direction), replayed from the start squares."""
        squares = self.board.start_boxes.astype(np.int64)
        out: list[Push] = []
        depth = int(self.counters[dk.C_DEPTH])
        for code in self.store["stack"].path[:depth].tolist():
            b, d = code >> 2, code & 3
            out.append((int(squares[b]), d))
            squares[b] += self.board.offsets[d]
        return out

    def stats(self) -> dict[str, Any]:
        c = self.counters
        stats = {
            "pruned_deadlock": int(c[dk.C_PRUNED_DEAD]),
            "duplicates": int(c[dk.C_DUPLICATES]),
            "peak_memory_bytes": self.store.peak,
            "iterations": self.iterations,
            "depth_bound": None if self.bound == NO_BOUND else self.bound,
        }
        if self.use_table:
            stats["table_entries"] = int(c[dk.C_TABLE])
        return stats


class DepthFirstBase(SlicePlanner):
    """Shared planner of the depth-first searches (registers nothing itself).

    Subclasses set ``use_table`` (prune with a transposition table of depths) and ``iterative``
    (run with depth bounds 0, 1, 2 ... up to ``max_depth``).
    """

    options_type: ClassVar[type] = DepthFirstOptions
    use_table: ClassVar[bool] = False
    iterative: ClassVar[bool] = False

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Run the search; see the class docstring."""
        board = level.board
        start = board.initial_state()
        if start.is_solved(board):
            return Outcome("solved", [], 0, 0, {})
        run = _DfsSearch(self, board, start, limits, deadline)
        if not run.store.fits():
            return run.outcome("memory_limit")
        run.begin(0 if self.iterative else run.top)
        return run.search()


class DepthFirst(DepthFirstBase):
    """Depth-first search without a table, to a fixed depth (not optimal).

    Positions repeating one on the current path are skipped. Finishing without any position cut
    off at ``max_depth`` proves the level unsolvable; otherwise a failed search is "exhausted".

    Options: ``BoundedDepthFirstOptions`` (``max_depth``, default 200; ``freeze``).
    """

    name = "dfs"
    options_type = BoundedDepthFirstOptions


class ZobristDepthFirst(DepthFirstBase):
    """Depth-first search with a transposition table of depths (not optimal).

    A position is skipped when the table holds it at the same or a smaller depth. Without
    ``max_depth`` every reachable position is entered, so a failed search proves the level
    unsolvable.

    Options: ``DepthFirstOptions`` (``max_depth``, default None: no bound; ``freeze``).
    """

    name = "zobrist-dfs"
    use_table = True


class IterativeDeepening(DepthFirstBase):
    """Iterative deepening depth-first search without a table: push-optimal when it finishes.

    Depth bounds 0, 1, 2 ...; the first bound that finds a goal gives the fewest pushes.
    Positions repeating one on the current path are skipped, so an iteration that cuts off no
    position proves the level unsolvable.

    Options: ``DepthFirstOptions`` (``max_depth``: the largest bound tried, default None;
    "exhausted" beyond it; ``freeze``).
    """

    name = "iddfs"
    optimal = True
    iterative = True


class IterativeDeepeningZobrist(DepthFirstBase):
    """Iterative deepening with a transposition table of depths: push-optimal when it finishes.

    Each iteration starts with an empty table; a position is skipped when the table holds it at
    the same or a smaller depth, which keeps each iteration complete up to its bound. An
    iteration that cuts off no position proves the level unsolvable.

    Options: ``DepthFirstOptions`` (``max_depth``: the largest bound tried, default None;
    "exhausted" beyond it; ``freeze``).
    """

    name = "iddfs-zobrist"
    optimal = True
    use_table = True
    iterative = True
