"""A* (push-optimal) and greedy best-first push search: drivers around ``_kernels.bestfirst``.

Both search positions right after a push, with the player normalized to the smallest square
it reaches; pushes onto dead squares and pushes that freeze a box off goal are pruned (neither
can be part of a solution), and a push into a one-wide tunnel with no goal runs on to its end
(the tunnel macro), as Junghanns' Rolling Stone does. Optional pruning, all push-optimal:
wall lines holding more boxes than goals, PI-corral pruning (only pushes into the corral)
and corral deadlocks found by a small bounded search (``soko_gym.engine.corral``).
"""

from __future__ import annotations

import time
from typing import ClassVar

import numpy as np

from planners._kernels import bestfirst as bf
from planners._kernels.heap import heap_push
from planners._kernels.table import new_table, rehash, table_put
from planners.base import Outcome, Planner, Push
from planners.limits import SearchLimits
from soko_gym.engine import deadlock
from soko_gym.engine.constants import BOX_AT_DTYPE, SQUARE_DTYPE, STAMP_DTYPE
from soko_gym.engine.corral import new_corral_scratch
from soko_gym.engine.lowerbound import matching_bound_full, new_match_state
from soko_gym.engine.reach import new_stamps, reach_player
from soko_gym.levels import Level

BOUNDS = ("matching", "simple")
PI_CORRALS_DEFAULT = True
CORRAL_DEADLOCKS_DEFAULT = False
WALL_LINES_DEFAULT = True
_CORRAL_MAX_BOXES = 12  # larger corrals are not searched (the answer would be unknown)


class _Store:
    """The growable arrays of one best-first search (nodes, table, heap)."""

    def __init__(self, n_boxes: int, capacity: int) -> None:
        self.n_boxes = n_boxes
        self.boxes = np.zeros((capacity, n_boxes), dtype=SQUARE_DTYPE)
        self.player = np.zeros(capacity, dtype=SQUARE_DTYPE)
        self.parent = np.zeros(capacity, dtype=SQUARE_DTYPE)
        self.push = np.zeros(capacity, dtype=np.int64)
        self.g = np.zeros(capacity, dtype=SQUARE_DTYPE)
        self.h = np.zeros(capacity, dtype=SQUARE_DTYPE)
        self.t_hash, self.t_player, self.t_value = new_table(2 * capacity)
        self.h_keys = np.zeros(capacity, dtype=np.int64)
        self.h_nodes = np.zeros(capacity, dtype=SQUARE_DTYPE)

    @staticmethod
    def bytes_for(n_boxes: int, nodes: int, table: int, heap: int) -> int:
        """Memory of stores of these capacities."""
        return nodes * (4 * n_boxes + 4 * 5 + 8) + table * 16 + heap * 12

    def nbytes(self) -> int:
        """Current memory of the arrays."""
        return self.bytes_for(
            self.n_boxes, self.player.shape[0], self.t_player.shape[0], self.h_keys.shape[0]
        )

    def grow(self, status: int, budget: int) -> bool:
        """Double the array ``status`` names; False when that would pass ``budget`` bytes."""
        nodes, table, heap = self.player.shape[0], self.t_player.shape[0], self.h_keys.shape[0]
        if status == bf.GROW_NODES:
            nodes *= 2
        elif status == bf.GROW_TABLE:
            table *= 2
        else:
            heap *= 2
        if self.bytes_for(self.n_boxes, nodes, table, heap) > budget:
            return False
        if status == bf.GROW_NODES:
            for name in ("boxes", "player", "parent", "push", "g", "h"):
                old = getattr(self, name)
                new = np.zeros((nodes, *old.shape[1:]), dtype=old.dtype)
                new[: old.shape[0]] = old
                setattr(self, name, new)
        elif status == bf.GROW_TABLE:
            new = new_table(table)
            rehash(self.t_hash, self.t_player, self.t_value, *new)
            self.t_hash, self.t_player, self.t_value = new
        else:
            for name in ("h_keys", "h_nodes"):
                old = getattr(self, name)
                new = np.zeros(heap, dtype=old.dtype)
                new[: old.shape[0]] = old
                setattr(self, name, new)
        return True


class BestFirstPlanner(Planner):
    """Shared driver of ``astar`` and ``greedy`` (options as in those classes)."""

    greedy: ClassVar[bool] = False

    def __init__(
        self,
        *,
        bound: str = "matching",
        tunnels: bool = True,
        pi_corrals: bool = PI_CORRALS_DEFAULT,
        corral_deadlocks: bool = CORRAL_DEADLOCKS_DEFAULT,
        wall_lines: bool = WALL_LINES_DEFAULT,
        corral_budget: int = 256,
        slice_nodes: int = 20_000,
        initial_capacity: int = 1 << 14,
    ) -> None:
        if bound not in BOUNDS:
            raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")
        for name, flag in (
            ("tunnels", tunnels),
            ("pi_corrals", pi_corrals),
            ("corral_deadlocks", corral_deadlocks),
            ("wall_lines", wall_lines),
        ):
            if not isinstance(flag, bool):
                raise ValueError(f"{name} must be True or False, got {flag!r}")
        for name, value in (
            ("slice_nodes", slice_nodes),
            ("initial_capacity", initial_capacity),
            ("corral_budget", corral_budget),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self.bound = bound
        self.tunnels = tunnels
        self.pi_corrals = pi_corrals
        self.corral_deadlocks = corral_deadlocks
        self.wall_lines = wall_lines
        self.corral_budget = corral_budget
        self.slice_nodes = slice_nodes
        self.initial_capacity = 1 << max(4, (initial_capacity - 1).bit_length())

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Best-first search; see the module docstring."""
        board = level.board
        nb, n = board.n_boxes, board.n_cells
        budget_bytes = limits.memory_bytes
        capacity = self.initial_capacity
        while (
            capacity > 16 and _Store.bytes_for(nb, capacity, 2 * capacity, capacity) > budget_bytes
        ):
            capacity //= 2
        if _Store.bytes_for(nb, capacity, 2 * capacity, capacity) > budget_bytes:
            return Outcome("memory_limit", stats={"reason": "the budget holds no search"})
        store = _Store(nb, capacity)
        root_boxes = board.start_boxes.astype(SQUARE_DTYPE)
        pmatch, work = new_match_state(nb)
        cmatch = pmatch.copy()
        if self.bound == "matching":
            h0 = int(matching_bound_full(board.goal_dist, root_boxes, pmatch, work))
        else:
            h0 = int(bf.simple_bound(board.nearest_goal_dist, root_boxes))
        if h0 >= bf.INF_BOUND:  # no assignment of boxes to distinct reachable goals exists
            return Outcome("unsolvable", stats={"reason": "the boxes cannot all reach goals"})
        if any(board.dead[root_boxes]):
            return Outcome("unsolvable", stats={"reason": "a box starts on a dead square"})
        box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        box_at[root_boxes] = np.arange(nb, dtype=BOX_AT_DTYPE)
        stamps = new_stamps(board.cells)
        stack = np.empty(n, dtype=SQUARE_DTYPE)
        _, norm = reach_player(box_at, board.offsets, int(board.start_player), stamps, stack)
        box_at[:] = -1
        store.boxes[0] = root_boxes
        store.player[0] = board.start_player
        store.parent[0] = -1
        store.g[0] = 0
        store.h[0] = h0
        root_hash = np.uint64(np.bitwise_xor.reduce(board.zobrist[root_boxes]))
        table_put(store.t_hash, store.t_player, store.t_value, root_hash, int(norm), 0)
        counters = np.zeros(bf.N_COUNTERS, dtype=np.int64)
        counters[bf.C_NODES] = counters[bf.C_TABLE] = 1
        counters[bf.C_PENDING] = -1
        counters[bf.C_HEAP] = heap_push(
            store.h_keys,
            store.h_nodes,
            0,
            np.int64(h0 if self.greedy else h0) << bf.KEY_SHIFT | h0,
            0,
        )
        box_pos = np.zeros(nb, dtype=SQUARE_DTYPE)
        pushes = np.zeros(4 * nb, dtype=SQUARE_DTYPE)
        seen = np.zeros(n + 1, dtype=STAMP_DTYPE)
        trail = np.empty(n, dtype=SQUARE_DTYPE)
        line_of, lines = deadlock.wall_lines(board.cells, board.offsets)
        corral = new_corral_scratch(n, nb, self.corral_budget, _CORRAL_MAX_BOXES)
        max_nodes = limits.max_nodes
        peak = store.nbytes()
        while True:
            slice_nodes = self.slice_nodes
            if max_nodes is not None:
                slice_nodes = max(1, min(slice_nodes, max_nodes - int(counters[bf.C_EXPANDED])))
            status = bf.run_best_first(
                board.cells,
                board.offsets,
                board.zobrist,
                board.dead,
                board.nearest_goal_dist,
                board.goal_dist,
                int(self.bound == "matching"),
                pmatch,
                cmatch,
                work,
                nb,
                self.greedy,
                self.tunnels,
                self.pi_corrals,
                self.corral_deadlocks,
                self.wall_lines,
                self.corral_budget,
                line_of,
                lines,
                *corral,
                store.boxes,
                store.player,
                store.parent,
                store.push,
                store.g,
                store.h,
                store.t_hash,
                store.t_player,
                store.t_value,
                store.h_keys,
                store.h_nodes,
                counters,
                box_pos,
                box_at,
                stamps,
                stack,
                pushes,
                seen,
                trail,
                slice_nodes,
            )
            if status == bf.FOUND:
                plan = self._plan(store, int(counters[bf.C_GOAL]), board.offsets)
                return self._outcome("solved", counters, peak, plan)
            if status == bf.EXHAUSTED:
                # complete: pruning only drops positions that cannot lead to a solution
                return self._outcome("unsolvable", counters, peak)
            if status in (bf.GROW_NODES, bf.GROW_TABLE, bf.GROW_HEAP):
                if not store.grow(status, budget_bytes):
                    return self._outcome("memory_limit", counters, peak)
                peak = max(peak, store.nbytes())
                continue
            if max_nodes is not None and counters[bf.C_EXPANDED] >= max_nodes:
                return self._outcome("node_limit", counters, peak)
            if deadline is not None and time.perf_counter() >= deadline:
                return self._outcome("timeout", counters, peak)

    @staticmethod
    def _plan(store: _Store, goal: int, offsets: np.ndarray) -> list[Push]:
        segments = []
        node = goal
        while store.parent[node] >= 0:
            segments.append(bf.expand_push_code(int(store.push[node]), offsets))
            node = int(store.parent[node])
        return [push for seg in reversed(segments) for push in seg]

    @staticmethod
    def _outcome(
        status: str, counters: np.ndarray, peak: int, plan: list[Push] | None = None
    ) -> Outcome:
        stats = {
            "expanded": int(counters[bf.C_EXPANDED]),
            "stored_nodes": int(counters[bf.C_NODES]),
            "pruned_dead_square": int(counters[bf.C_PRUNED_DEAD]),
            "pruned_frozen": int(counters[bf.C_PRUNED_FROZEN]),
            "duplicates": int(counters[bf.C_DUPLICATES]),
            "shortcut_expansions": int(counters[bf.C_SHORTCUTS]),
            "tunnel_pushes": int(counters[bf.C_TUNNEL]),
            "pruned_wall_line": int(counters[bf.C_PRUNED_WALL_LINE]),
            "pruned_corral": int(counters[bf.C_PRUNED_CORRAL]),
            "pi_corral_cuts": int(counters[bf.C_PI_CUTS]),
            "corral_unknown": int(counters[bf.C_CORRAL_UNKNOWN]),
            "peak_memory_mb": round(peak / 2**20, 1),
        }
        return Outcome(
            status, plan, int(counters[bf.C_EXPANDED]), int(counters[bf.C_GENERATED]), stats
        )


class AStarPlanner(BestFirstPlanner):
    """Push-optimal A* over push positions (``planners.solve(level, "astar")``).

    Args:
        bound: lower bound, "matching" (minimum-cost perfect matching of boxes to goals,
            default) or "simple" (each box to its nearest goal).
        tunnels: push boxes on through one-wide tunnels as one macro (default True).
        pi_corrals: in a position with a PI-corral, generate only the pushes into it
            (admissible: push-optimality holds). Stat ``pi_corral_cuts`` counts the legal
            pushes left out.
        corral_deadlocks: on each expanded node, run a bounded push search (at most
            ``corral_budget`` positions, corrals of at most 12 boxes) over the boxes of each
            corral next to the box pushed last; a corral that can neither be opened nor have its
            boxes put on goals makes the node a deadlock (stat ``pruned_corral``; searches cut
            short count in ``corral_unknown`` and prune nothing). Off by default: it cuts
            expanded nodes but slows each expansion more than it saves.
        wall_lines: drop pushes that leave more boxes than goals on a wall line (stat
            ``pruned_wall_line``). With the matching bound such a child already has no
            perfect matching; the line check only drops it before the bound is computed.
        corral_budget: positions per corral deadlock search (default 256).
        slice_nodes: expansions per kernel call between limit checks.
        initial_capacity: first size of the node store (it doubles as needed).
    """

    name = "astar"
    optimal = True


class GreedyPlanner(BestFirstPlanner):
    """Greedy best-first on the lower bound alone: fast on big levels, not optimal.

    Options as ``AStarPlanner``.
    """

    name = "greedy"
    optimal = False
    greedy = True
