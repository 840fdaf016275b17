"""IDA* (push-optimal iterative deepening A*): a planner around ``_kernels.idastar``.

Same positions, pruning and tunnel macros as ``astar``; memory grows with the transposition
table only, which stops taking new positions (without losing optimality) at the memory budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from planners._kernels import idastar as ik
from planners._kernels.common import (
    EXHAUSTED,
    FOUND,
    GROW_TABLE,
    expand_square_push,
    new_push_scratch,
    search_board,
)
from planners._kernels.table import EMPTY, new_table
from planners.base import Outcome, Push
from planners.driver import (
    SlicePlanner,
    SliceSearch,
    check_bool,
    check_choice,
    check_int,
    power_of_two,
)
from planners.limits import SearchLimits
from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, SQUARE_DTYPE
from soko_gym.engine.lowerbound import (
    INFINITE_BOUND,
    matching_bound_full,
    new_match_state,
    simple_bound,
)
from soko_gym.levels import Level

BOUNDS = ("matching", "simple")  # lower bounds by name


@dataclass(frozen=True)
class IdaStarOptions:
    """Options of ``idastar``.

    Attributes:
        bound: lower bound ``h``: "matching" (default: minimum-cost matching of boxes to
            goals; tighter, and of constant f parity, so thresholds step by two) or "simple"
            (each box's pushes to its nearest goal).
        tunnels: push boxes on through one-wide tunnels as one macro (default True).
        slice_nodes: expansions per kernel call between limit checks.
        initial_table: first capacity of the transposition table (it doubles as needed;
            rounded up to a power of two of at least 16).
    """

    bound: str = "matching"
    tunnels: bool = True
    slice_nodes: int = 20_000
    initial_table: int = 1 << 14

    def __post_init__(self) -> None:
        check_choice("bound", self.bound, BOUNDS)
        check_bool("tunnels", self.tunnels)
        check_int("slice_nodes", self.slice_nodes, 1)
        check_int("initial_table", self.initial_table, 1)


class _IdaSearch(SliceSearch):
    """Every iteration of one IDA* search: the table, the stack and the thresholds."""

    grows = {GROW_TABLE: "table"}

    def __init__(
        self,
        opts: IdaStarOptions,
        board: Board,
        limits: SearchLimits,
        deadline: float | None,
        h0: int,
        match_work: np.ndarray,
    ) -> None:
        super().__init__(limits, deadline, opts.slice_nodes, ik.N_COUNTERS)
        nb = board.n_boxes
        self.board = board
        self.bound = opts.bound
        self.params = ik.IdaParams(opts.bound == "matching", opts.tunnels)
        self.board_arrays = search_board(board)
        self.scratch = new_push_scratch(board)
        self.scratch.box_pos[:] = board.start_boxes
        self.scratch.box_at[board.start_boxes] = np.arange(nb, dtype=BOX_AT_DTYPE)
        self.match_work = match_work
        self.thresholds: list[int] = []
        self.store.put("table", new_table(power_of_two(opts.initial_table, 16)))
        self.store.put("stack", ik.new_ida_stack(nb, h0 + 2))

    def begin(self, threshold: int) -> None:
        """Start the iteration of f threshold ``threshold`` at the root."""
        self.thresholds.append(threshold)
        if self.store["stack"].g.shape[0] < threshold + 2:
            self.store.put("stack", ik.new_ida_stack(self.board.n_boxes, 2 * threshold + 2))
        self.store["table"].players.fill(EMPTY)
        c = self.counters
        c[ik.C_TABLE] = 0
        c[ik.C_DEPTH] = -1
        c[ik.C_THRESHOLD] = threshold
        c[ik.C_NEXT] = INFINITE_BOUND
        self.store["stack"].player[0] = self.board.start_player

    def step(self, budget: int) -> int:
        st = self.store
        return ik.run_idastar(
            self.board_arrays, self.params, st["table"], self.scratch, st["stack"],
            self.match_work, self.counters, budget,
        )  # fmt: skip

    def grow(self, status: int) -> bool:
        if not self.store.grow("table"):
            self.counters[ik.C_TABLE_FULL] = 1  # search on without new entries
        return True

    def finished(self, status: int) -> str | None:
        if status == FOUND:
            return "solved"
        if status == ik.STACK_FULL:
            raise RuntimeError("idastar: stack shorter than the threshold allows")
        if status != EXHAUSTED:
            return super().finished(status)
        if self.counters[ik.C_NEXT] >= INFINITE_BOUND:
            # complete: nothing was cut off by the threshold, so no position is left
            return "unsolvable"
        self.begin(int(self.counters[ik.C_NEXT]))
        return None

    def plan(self) -> list[Push]:
        """The pushes on the stack from the root down to the goal, tunnel macros expanded."""
        sq_push = self.store["stack"].sq_push
        plan: list[Push] = []
        for k in range(1, int(self.counters[ik.C_DEPTH]) + 1):
            plan.extend(expand_square_push(int(sq_push[k]), self.board.offsets))
        return plan

    def stats(self) -> dict[str, Any]:
        return idastar_stats(self.bound, self.counters, self.thresholds, self.store.peak)


def idastar_stats(
    bound: str, counters: np.ndarray, thresholds: list[int], peak: int, reason: str | None = None
) -> dict[str, Any]:
    """The stats of an IDA* search (``reason``: why the root alone decided)."""
    c = counters
    stats: dict[str, Any] = {
        "bound": bound,
        "iterations": len(thresholds),
        "thresholds": list(thresholds),
        "expanded": int(c[ik.C_EXPANDED]),
        "pruned_dead_square": int(c[ik.C_PRUNED_DEAD]),
        "pruned_frozen": int(c[ik.C_PRUNED_FROZEN]),
        "duplicates": int(c[ik.C_DUPLICATES]),
        "pruned_no_matching": int(c[ik.C_PRUNED_MATCHING]),
        "cutoffs": int(c[ik.C_CUTOFFS]),
        "tunnel_pushes": int(c[ik.C_TUNNEL]),
        "table_entries": int(c[ik.C_TABLE]),
        "table_full": bool(c[ik.C_TABLE_FULL]),
        "peak_memory_mb": round(peak / 2**20, 1),
    }
    if reason is not None:
        stats["reason"] = reason
    return stats


class IDAStarPlanner(SlicePlanner):
    """Push-optimal iterative deepening A* (``planners.solve(level, "idastar")``).

    Each iteration is a depth-first search of the positions with ``f = g + h`` up to a
    threshold, children ordered so that pushes toward a box's nearest goal come first. A
    transposition table holds the fewest pushes at which each position was reached in the
    iteration, and a child reached before with as few pushes is skipped. The next threshold is
    the smallest f that passed the current one, so thresholds that no node has are skipped;
    with a bound of constant ``f`` parity (a matching bound: each push flips the parity of
    every box's distance) that is every other one. An iteration that meets no f beyond its
    threshold and no solution proves the level unsolvable.

    Options: ``IdaStarOptions`` (``bound``, ``tunnels``, ``slice_nodes``, ``initial_table``).
    """

    name = "idastar"
    optimal = True
    options_type = IdaStarOptions

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Iterative deepening on the f threshold; see the class docstring."""
        board = level.board
        bound = self.options.bound
        root = board.start_boxes.astype(SQUARE_DTYPE)
        zeros = np.zeros(ik.N_COUNTERS, dtype=np.int64)

        def decided(status: str, reason: str | None = None) -> Outcome:
            plan: list[Push] | None = [] if status == "solved" else None
            return Outcome(status, plan, 0, 0, idastar_stats(bound, zeros, [], 0, reason))

        h0 = int(simple_bound(board.nearest_goal_dist, root))
        if h0 >= INFINITE_BOUND:
            return decided("unsolvable", "a box can reach no goal")
        if any(board.dead[root]):
            return decided("unsolvable", "a box starts on a dead square")
        match, match_work = new_match_state(board.n_boxes)
        if bound == "matching":
            h0 = int(matching_bound_full(board.goal_dist, root, match, match_work))
            if h0 >= INFINITE_BOUND:
                return decided("unsolvable", "no matching of boxes to goals")
        if h0 == 0:
            return decided("solved")
        run = _IdaSearch(self.options, board, limits, deadline, h0, match_work)
        run.begin(h0)
        return run.search()
