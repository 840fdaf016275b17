"""IDA* (push-optimal iterative deepening A*): a driver around ``_kernels.idastar``.

Same positions, pruning and tunnel macros as ``astar``; memory grows with the transposition
table only, which stops taking new positions (without losing optimality) at the memory budget.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from planners._kernels import idastar as ik
from planners._kernels.bestfirst import INF_BOUND, expand_push_code, simple_bound
from planners._kernels.table import EMPTY, new_table, rehash
from planners.base import Outcome, Planner, Push
from planners.limits import SearchLimits
from soko_gym.engine.constants import BOX_AT_DTYPE, SQUARE_DTYPE, STAMP_DTYPE
from soko_gym.engine.lowerbound import INFINITE_BOUND, matching_bound_full, new_match_state
from soko_gym.engine.reach import new_stamps
from soko_gym.levels import Level

BOUNDS = {"simple": ik.BOUND_SIMPLE, "matching": ik.BOUND_MATCHING}  # lower bounds by name


class _Stack:
    """The per-depth arrays of the depth-first search (see ``run_idastar``)."""

    def __init__(self, n_boxes: int, depth_cap: int) -> None:
        self.codes = np.zeros((depth_cap, max(1, 4 * n_boxes)), dtype=SQUARE_DTYPE)
        self.count = np.zeros(depth_cap, dtype=SQUARE_DTYPE)
        self.next = np.zeros(depth_cap, dtype=SQUARE_DTYPE)
        self.g = np.zeros(depth_cap, dtype=SQUARE_DTYPE)
        self.h = np.zeros(depth_cap, dtype=SQUARE_DTYPE)
        self.hash = np.zeros(depth_cap, dtype=np.uint64)
        self.player = np.zeros(depth_cap, dtype=SQUARE_DTYPE)
        self.push = np.zeros(depth_cap, dtype=np.int64)
        self.match = np.zeros((depth_cap, 4, n_boxes), dtype=np.int64)

    @property
    def depth_cap(self) -> int:
        """Number of depths the arrays hold."""
        return int(self.g.shape[0])

    def nbytes(self) -> int:
        """Memory of the arrays."""
        return sum(a.nbytes for a in vars(self).values())


class IDAStarPlanner(Planner):
    """Push-optimal iterative deepening A* (``planners.solve(level, "idastar")``).

    Each iteration is a depth-first search of the positions with ``f = g + h`` up to a
    threshold, children ordered so that pushes toward a box's nearest goal come first. A
    transposition table holds the fewest pushes at which each position was reached in the
    iteration, and a child reached before with as few pushes is skipped. The next threshold is
    the smallest f that passed the current one, so thresholds that no node has are skipped;
    with a bound of constant ``f`` parity (a matching bound: each push flips the parity of
    every box's distance) that is every other one. An iteration that meets no f beyond its
    threshold and no solution proves the level unsolvable.

    Args:
        bound: lower bound ``h``: "matching" (default: minimum-cost matching of boxes to
            goals; tighter, and of constant f parity, so thresholds step by two) or "simple"
            (each box's pushes to its nearest goal).
        tunnels: push boxes on through one-wide tunnels as one macro (default True).
        slice_nodes: expansions per kernel call between limit checks.
        initial_table: first capacity of the transposition table (it doubles as needed).
    """

    name = "idastar"
    optimal = True

    def __init__(
        self,
        *,
        bound: str = "matching",
        tunnels: bool = True,
        slice_nodes: int = 20_000,
        initial_table: int = 1 << 14,
    ) -> None:
        if bound not in BOUNDS:
            raise ValueError(f"bound must be one of {', '.join(map(repr, BOUNDS))}, got {bound!r}")
        if not isinstance(tunnels, bool):
            raise ValueError(f"tunnels must be True or False, got {tunnels!r}")
        for name, value in (("slice_nodes", slice_nodes), ("initial_table", initial_table)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self.bound = bound
        self.tunnels = tunnels
        self.slice_nodes = slice_nodes
        self.initial_table = 1 << max(4, (initial_table - 1).bit_length())

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Iterative deepening on the f threshold; see the class docstring."""
        board = level.board
        nb, n = board.n_boxes, board.n_cells
        root_boxes = board.start_boxes.astype(SQUARE_DTYPE)
        counters = np.zeros(ik.N_COUNTERS, dtype=np.int64)
        thresholds: list[int] = []
        h0 = int(simple_bound(board.nearest_goal_dist, root_boxes))
        if h0 >= INF_BOUND:
            return self._outcome(
                "unsolvable", counters, thresholds, 0, reason="a box can reach no goal"
            )
        if any(board.dead[root_boxes]):
            return self._outcome(
                "unsolvable", counters, thresholds, 0, reason="a box starts on a dead square"
            )
        match, match_work = new_match_state(nb)
        if self.bound == "matching":
            h0 = int(matching_bound_full(board.goal_dist, root_boxes, match, match_work))
            if h0 >= INFINITE_BOUND:
                return self._outcome(
                    "unsolvable", counters, thresholds, 0, reason="no matching of boxes to goals"
                )
        if h0 == 0:
            return self._outcome("solved", counters, thresholds, 0, [])
        budget = limits.memory_bytes
        box_pos = root_boxes.copy()
        box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        box_at[box_pos] = np.arange(nb, dtype=BOX_AT_DTYPE)
        stamps = new_stamps(board.cells)
        stack = np.empty(n, dtype=SQUARE_DTYPE)
        pushes = np.zeros(max(1, 4 * nb), dtype=SQUARE_DTYPE)
        seen = np.zeros(n + 1, dtype=STAMP_DTYPE)
        trail = np.empty(n, dtype=SQUARE_DTYPE)
        table = new_table(self.initial_table)
        dfs = _Stack(nb, h0 + 2)
        peak = table[0].nbytes * 2 + dfs.nbytes()
        max_nodes = limits.max_nodes
        threshold = h0
        while True:
            thresholds.append(threshold)
            if dfs.depth_cap < threshold + 2:
                dfs = _Stack(nb, 2 * threshold + 2)
            table[1].fill(EMPTY)
            counters[ik.C_TABLE] = 0
            counters[ik.C_DEPTH] = -1
            counters[ik.C_THRESHOLD] = threshold
            counters[ik.C_NEXT] = INF_BOUND
            dfs.player[0] = board.start_player
            while True:
                slice_nodes = self.slice_nodes
                if max_nodes is not None:
                    slice_nodes = max(1, min(slice_nodes, max_nodes - int(counters[ik.C_EXPANDED])))
                status = ik.run_idastar(
                    board.cells,
                    board.offsets,
                    board.zobrist,
                    board.dead,
                    board.nearest_goal_dist,
                    board.goal_dist,
                    BOUNDS[self.bound],
                    self.tunnels,
                    *table,
                    counters,
                    box_pos,
                    box_at,
                    stamps,
                    stack,
                    pushes,
                    seen,
                    trail,
                    dfs.codes,
                    dfs.count,
                    dfs.next,
                    dfs.g,
                    dfs.h,
                    dfs.hash,
                    dfs.player,
                    dfs.push,
                    dfs.match,
                    match_work,
                    slice_nodes,
                )
                if status == ik.FOUND:
                    plan = self._plan(dfs, int(counters[ik.C_DEPTH]), board.offsets)
                    return self._outcome("solved", counters, thresholds, peak, plan)
                if status == ik.ITERATION_DONE:
                    break
                if status == ik.GROW_TABLE:
                    cap = table[1].shape[0]
                    if 2 * cap * 16 + dfs.nbytes() > budget:
                        counters[ik.C_TABLE_FULL] = 1  # search on without new entries
                    else:
                        bigger = new_table(2 * cap)
                        rehash(*table, *bigger)
                        table = bigger
                        peak = max(peak, 2 * cap * 16 + dfs.nbytes())
                    continue
                if status == ik.STACK_FULL:
                    raise RuntimeError("idastar: stack shorter than the threshold allows")
                if max_nodes is not None and counters[ik.C_EXPANDED] >= max_nodes:
                    return self._outcome("node_limit", counters, thresholds, peak)
                if deadline is not None and time.perf_counter() >= deadline:
                    return self._outcome("timeout", counters, thresholds, peak)
            if counters[ik.C_NEXT] >= INF_BOUND:
                # complete: nothing was cut off by the threshold, so no position is left
                return self._outcome("unsolvable", counters, thresholds, peak)
            threshold = int(counters[ik.C_NEXT])
            if max_nodes is not None and counters[ik.C_EXPANDED] >= max_nodes:
                return self._outcome("node_limit", counters, thresholds, peak)
            if deadline is not None and time.perf_counter() >= deadline:
                return self._outcome("timeout", counters, thresholds, peak)

    @staticmethod
    def _plan(dfs: _Stack, depth: int, offsets: np.ndarray) -> list[Push]:
        """The pushes on the stack from the root down to ``depth``, tunnel macros expanded."""
        plan: list[Push] = []
        for k in range(1, depth + 1):
            plan.extend(expand_push_code(int(dfs.push[k]), offsets))
        return plan

    def _outcome(
        self,
        status: str,
        counters: np.ndarray,
        thresholds: list[int],
        peak: int,
        plan: list[Push] | None = None,
        reason: str | None = None,
    ) -> Outcome:
        """The Outcome with this planner's stats (``reason``: why the root alone decided)."""
        stats: dict[str, Any] = {
            "bound": self.bound,
            "iterations": len(thresholds),
            "thresholds": list(thresholds),
            "expanded": int(counters[ik.C_EXPANDED]),
            "pruned_dead_square": int(counters[ik.C_PRUNED_DEAD]),
            "pruned_frozen": int(counters[ik.C_PRUNED_FROZEN]),
            "duplicates": int(counters[ik.C_DUPLICATES]),
            "pruned_no_matching": int(counters[ik.C_PRUNED_MATCHING]),
            "cutoffs": int(counters[ik.C_CUTOFFS]),
            "tunnel_pushes": int(counters[ik.C_TUNNEL]),
            "table_entries": int(counters[ik.C_TABLE]),
            "table_full": bool(counters[ik.C_TABLE_FULL]),
            "peak_memory_mb": round(peak / 2**20, 1),
        }
        if reason is not None:
            stats["reason"] = reason
        return Outcome(
            status, plan, int(counters[ik.C_EXPANDED]), int(counters[ik.C_GENERATED]), stats
        )
