"""Depth-first push search: ``dfs``, ``zobrist-dfs``, ``iddfs`` and ``iddfs-zobrist``.

Without a table a position repeating one on the current path is skipped; with the table
(``zobrist-*``) a position is skipped when it was entered at the same or a smaller depth.
"""

from __future__ import annotations

import time
from typing import ClassVar

import numpy as np

from planners._kernels import uninformed as k
from planners.base import Outcome, Planner, Push
from planners.bfs import (
    CHUNK,
    FIRST_TABLE,
    MemoryBudget,
    Scratch,
    Table,
    check_bool,
    check_depth,
    grown,
    is_solved_start,
    stats_of,
)
from planners.limits import SearchLimits
from soko_gym.engine.board import Board
from soko_gym.engine.constants import GOAL, HASH_DTYPE, SQUARE_DTYPE
from soko_gym.levels import Level

FIRST_DEPTH = 64  # stack rows allocated at first; doubled when the search goes deeper
NO_BOUND = 1 << 62


class DepthFirstBase(Planner):
    """Shared driver of the depth-first planners (registers nothing itself).

    Subclasses set ``use_table`` (prune with a transposition table of depths) and ``iterative``
    (run with depth bounds 0, 1, 2 ... up to ``max_depth``).
    """

    use_table: ClassVar[bool] = False
    iterative: ClassVar[bool] = False
    bounded: ClassVar[bool] = False  # max_depth may not be None

    def __init__(self, max_depth: int | None = None, freeze: bool = True) -> None:
        self.max_depth = check_depth("max_depth", max_depth, allow_none=not self.bounded)
        self.freeze = check_bool("freeze", freeze)

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Run the search; see the class docstring."""
        board = level.board
        if is_solved_start(board):
            return Outcome("solved", [], 0, 0, {})
        run = _Run(self, board, limits, deadline)
        top = NO_BOUND if self.max_depth is None else self.max_depth
        bounds = range(top + 1) if self.iterative else (top,)
        status = "exhausted"
        for bound in bounds:
            status = run.iteration(bound)
            if status != "exhausted":
                break
        return run.outcome(status)


class _Run:
    """The arrays and counters of one depth-first search, growing under a memory budget."""

    def __init__(
        self, planner: DepthFirstBase, board: Board, limits: SearchLimits, deadline: float | None
    ) -> None:
        self.planner = planner
        self.board = board
        self.deadline = deadline
        self.max_nodes = limits.max_nodes
        self.budget = MemoryBudget(limits.memory_bytes)
        self.scratch = Scratch(board)
        self.state = board.initial_state()
        self.counters = np.zeros(k.N_COUNTERS, dtype=np.int64)
        self.iterations = 0
        self.bound = 0
        self.solution: list[Push] | None = None
        rows = FIRST_DEPTH
        if planner.max_depth is not None:
            rows = min(rows, planner.max_depth + 2)
        width = 4 * board.n_boxes
        self.stack = [
            np.empty((rows, width), dtype=SQUARE_DTYPE),  # moves
            np.zeros(rows, dtype=SQUARE_DTYPE),  # n_moves
            np.zeros(rows, dtype=SQUARE_DTYPE),  # next_move
            np.zeros(rows, dtype=SQUARE_DTYPE),  # path
            np.zeros(rows, dtype=SQUARE_DTYPE),  # players
            np.zeros(rows, dtype=HASH_DTYPE),  # hashes
            np.zeros(rows, dtype=SQUARE_DTYPE),  # norms
        ]
        self.table = Table(FIRST_TABLE if planner.use_table else 2)
        self.out_of_memory = not self.budget.fits(0, self._stack_bytes() + self.table.nbytes)
        if not self.out_of_memory:
            self.budget.swap(0, self._stack_bytes() + self.table.nbytes)

    def _stack_bytes(self) -> int:
        return sum(a.nbytes for a in self.stack)

    def _grow_stack(self) -> bool:
        old = self._stack_bytes()
        if not self.budget.fits(old, 2 * old):
            return False
        self.stack = [grown(a, 2 * a.shape[0]) for a in self.stack]
        self.budget.swap(old, 2 * old)
        return True

    def iteration(self, bound: int) -> str:
        """Search from the start with depth bound ``bound``; a status, "exhausted" if cut off."""
        if self.out_of_memory:
            return "memory_limit"
        self.iterations += 1
        self.bound = bound
        c = self.counters
        c[k.C_HEAD] = 0
        c[k.C_NODES] = 1
        c[k.C_FRONTIER] = 0
        c[k.C_TABLE] = 0
        c[k.C_GOAL] = int(np.count_nonzero(self.board.cells[self.state.box_pos] & GOAL))
        self.table.clear()
        self.stack[4][0] = self.state.player
        self.stack[5][0] = self.state.box_hash
        board, scratch = self.board, self.scratch
        while True:
            if self.deadline is not None and time.perf_counter() >= self.deadline:
                return "timeout"
            done = int(c[k.C_EXPANDED])
            if self.max_nodes is not None and done >= self.max_nodes:
                return "node_limit"
            stop_at = done + CHUNK
            if self.max_nodes is not None:
                stop_at = min(stop_at, self.max_nodes)
            code = k.dfs_advance(
                board.cells,
                board.dead,
                board.offsets,
                board.zobrist,
                self.state.box_pos,
                self.state.box_at,
                *self.stack,
                *self.table.arrays,
                scratch.stamps,
                scratch.stack,
                scratch.seen,
                scratch.trail,
                c,
                stop_at,
                bound,
                self.planner.use_table,
                self.planner.freeze,
            )
            if code == k.FOUND:
                self.solution = self._pushes(int(c[k.C_HEAD]))
                return "solved"
            if code == k.DONE:
                return "exhausted" if c[k.C_FRONTIER] else "unsolvable"
            if code == k.GROW_TABLE and not self.table.grow(self.budget):
                return "memory_limit"
            if code == k.GROW_NODES and not self._grow_stack():
                return "memory_limit"

    def _pushes(self, depth: int) -> list[Push]:
        """The current path as (box square, direction), replayed from the start squares."""
        squares = self.board.start_boxes.astype(np.int64)
        out: list[Push] = []
        for code in self.stack[3][:depth].tolist():
            b, d = code >> 2, code & 3
            out.append((int(squares[b]), d))
            squares[b] += self.board.offsets[d]
        return out

    def outcome(self, status: str) -> Outcome:
        """The planner's Outcome for a final ``status``."""
        c = self.counters
        extra = {"iterations": self.iterations, "depth_bound": self.bound}
        if self.bound == NO_BOUND:
            extra["depth_bound"] = None
        if self.planner.use_table:
            extra["table_entries"] = int(c[k.C_TABLE])
        return Outcome(
            status,
            self.solution if status == "solved" else None,
            int(c[k.C_EXPANDED]),
            int(c[k.C_GENERATED]),
            stats_of(c, self.budget, **extra),
        )


class DepthFirst(DepthFirstBase):
    """Depth-first search without a table, to a fixed depth (not optimal).

    Positions repeating one on the current path are skipped. Finishing without any position cut
    off at ``max_depth`` proves the level unsolvable; otherwise a failed search is "exhausted".

    Args:
        max_depth: the largest number of pushes tried (default 200).
        freeze: also prune pushes that freeze a box off goal (safe; on by default).
    """

    name = "dfs"
    bounded = True

    def __init__(self, max_depth: int = 200, freeze: bool = True) -> None:
        super().__init__(max_depth, freeze)


class ZobristDepthFirst(DepthFirstBase):
    """Depth-first search with a transposition table of depths (not optimal).

    A position is skipped when the table holds it at the same or a smaller depth. Without
    ``max_depth`` every reachable position is entered, so a failed search proves the level
    unsolvable.

    Args:
        max_depth: the largest number of pushes tried (default None: no bound).
        freeze: also prune pushes that freeze a box off goal (safe; on by default).
    """

    name = "zobrist-dfs"
    use_table = True


class IterativeDeepening(DepthFirstBase):
    """Iterative deepening depth-first search without a table: push-optimal when it finishes.

    Depth bounds 0, 1, 2 ...; the first bound that finds a goal gives the fewest pushes.
    Positions repeating one on the current path are skipped, so an iteration that cuts off no
    position proves the level unsolvable.

    Args:
        max_depth: the largest bound tried (default None: no bound); "exhausted" beyond it.
        freeze: also prune pushes that freeze a box off goal (safe; on by default).
    """

    name = "iddfs"
    optimal = True
    iterative = True


class IterativeDeepeningZobrist(DepthFirstBase):
    """Iterative deepening with a transposition table of depths: push-optimal when it finishes.

    Each iteration starts with an empty table; a position is skipped when the table holds it at
    the same or a smaller depth, which keeps each iteration complete up to its bound. An
    iteration that cuts off no position proves the level unsolvable.

    Args:
        max_depth: the largest bound tried (default None: no bound); "exhausted" beyond it.
        freeze: also prune pushes that freeze a box off goal (safe; on by default).
    """

    name = "iddfs-zobrist"
    optimal = True
    use_table = True
    iterative = True
