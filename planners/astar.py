"""A* (push-optimal) and greedy best-first push search: planners around ``_kernels.astar``.

Both search positions right after a push, with the player normalized to the smallest square
it reaches; pushes onto dead squares and pushes that freeze a box off goal are pruned (neither
can be part of a solution), and a push into a one-wide tunnel with no goal runs on to its end
(the tunnel macro), as Junghanns' Rolling Stone does. Optional pruning, all push-optimal:
wall lines holding more boxes than goals, PI-corral pruning (only pushes into the corral)
and corral deadlocks found by a small bounded search (``soko_gym.engine.corral_search``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from planners._kernels import astar as ak
from planners._kernels.common import expand_square_push, new_push_scratch, search_board
from planners._kernels.heap import heap_push, new_heap
from planners._kernels.table import new_table, table_put
from planners.base import Outcome, Push
from planners.driver import (
    SlicePlanner,
    SliceSearch,
    check_bool,
    check_choice,
    check_int,
    group_bytes,
    power_of_two,
)
from planners.limits import SearchLimits
from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, SQUARE_DTYPE
from soko_gym.engine.corral_tables import new_corral_tables
from soko_gym.engine.lowerbound import INFINITE_BOUND, matching_bound_full, simple_bound
from soko_gym.engine.reach import reach_player
from soko_gym.levels import Level

BOUNDS = ("matching", "simple")
_CORRAL_MAX_BOXES = 12  # larger corrals are not searched (the answer would be unknown)
_LEAST_CAPACITY = 16  # the node store never starts smaller


@dataclass(frozen=True)
class AStarOptions:
    """Options of ``astar`` and ``greedy``.

    Attributes:
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
        initial_capacity: first size of the node store (it doubles as needed; rounded up to
            a power of two of at least 16, and halved while the memory budget cannot hold it).
    """

    bound: str = "matching"
    tunnels: bool = True
    pi_corrals: bool = True
    corral_deadlocks: bool = False
    wall_lines: bool = True
    corral_budget: int = 256
    slice_nodes: int = 20_000
    initial_capacity: int = 1 << 14

    def __post_init__(self) -> None:
        check_choice("bound", self.bound, BOUNDS)
        for name in ("tunnels", "pi_corrals", "corral_deadlocks", "wall_lines"):
            check_bool(name, getattr(self, name))
        for name in ("slice_nodes", "initial_capacity", "corral_budget"):
            check_int(name, getattr(self, name), 1)


class _BestFirstSearch(SliceSearch):
    """One best-first search: the kernel's arrays, its root and its statistics."""

    def __init__(
        self,
        opts: AStarOptions,
        greedy: bool,
        board: Board,
        limits: SearchLimits,
        deadline: float | None,
    ) -> None:
        super().__init__(limits, deadline, opts.slice_nodes, ak.N_COUNTERS)
        nb = board.n_boxes
        self.board = board
        self.greedy = greedy
        self.params = ak.AStarParams(
            opts.bound == "matching",
            greedy,
            opts.tunnels,
            opts.pi_corrals,
            opts.corral_deadlocks,
            opts.wall_lines,
        )
        self.board_arrays = search_board(board)
        self.scratch = new_push_scratch(board)
        self.tables = ak.new_astar_tables(board)
        # the corral kernels work on the search's own reach fill and scratch
        s = self.scratch
        self.corral = new_corral_tables(board, opts.corral_budget, _CORRAL_MAX_BOXES)._replace(
            stamps=s.stamps, stack=s.stack, seen=s.seen, trail=s.trail
        )
        capacity = power_of_two(opts.initial_capacity, _LEAST_CAPACITY)
        while True:
            groups = {
                "nodes": ak.new_astar_nodes(nb, capacity),
                "table": new_table(2 * capacity),
                "heap": new_heap(capacity),
            }
            used = sum(group_bytes(g) for g in groups.values())
            if capacity <= _LEAST_CAPACITY or used <= self.store.budget:
                break
            capacity //= 2
        for name, group in groups.items():
            self.store.put(name, group)

    def root_bound(self) -> int:
        """The lower bound of the start position."""
        root = self.board.start_boxes.astype(SQUARE_DTYPE)
        if self.params.matching:
            t = self.tables
            return int(matching_bound_full(self.board.goal_dist, root, t.match, t.match_work))
        return int(simple_bound(self.board.nearest_goal_dist, root))

    def start(self, h0: int) -> None:
        """Store the root (lower bound ``h0``) and queue it."""
        board, s, nodes, c = self.board, self.scratch, self.store["nodes"], self.counters
        root = board.start_boxes.astype(SQUARE_DTYPE)
        s.box_at[root] = np.arange(board.n_boxes, dtype=BOX_AT_DTYPE)
        _, norm = reach_player(s.box_at, board.offsets, int(board.start_player), s.stamps, s.stack)
        s.box_at[:] = -1
        nodes.boxes[0] = root
        nodes.player[0] = board.start_player
        nodes.parent[0] = -1
        nodes.g[0] = 0
        nodes.h[0] = h0
        root_hash = np.uint64(np.bitwise_xor.reduce(board.zobrist[root]))
        table_put(*self.store["table"], root_hash, int(norm), 0)
        c[ak.C_NODES] = c[ak.C_TABLE] = 1
        c[ak.C_PENDING] = -1
        heap = self.store["heap"]
        c[ak.C_HEAP] = heap_push(heap.keys, heap.nodes, 0, np.int64(h0) << ak.KEY_SHIFT | h0, 0)

    def step(self, budget: int) -> int:
        st = self.store
        return ak.run_astar(
            self.board_arrays, self.params, self.tables, self.corral, self.scratch, st["nodes"],
            st["table"], st["heap"], self.counters, budget,
        )  # fmt: skip

    def plan(self) -> list[Push]:
        nodes = self.store["nodes"]
        segments = []
        node = int(self.counters[ak.C_GOAL])
        while nodes.parent[node] >= 0:
            segments.append(expand_square_push(int(nodes.sq_push[node]), self.board.offsets))
            node = int(nodes.parent[node])
        return [push for seg in reversed(segments) for push in seg]

    def stats(self) -> dict[str, Any]:
        c = self.counters
        return {
            "expanded": int(c[ak.C_EXPANDED]),
            "stored_nodes": int(c[ak.C_NODES]),
            "pruned_dead_square": int(c[ak.C_PRUNED_DEAD]),
            "pruned_frozen": int(c[ak.C_PRUNED_FROZEN]),
            "duplicates": int(c[ak.C_DUPLICATES]),
            "shortcut_expansions": int(c[ak.C_SHORTCUTS]),
            "tunnel_pushes": int(c[ak.C_TUNNEL]),
            "pruned_wall_line": int(c[ak.C_PRUNED_WALL_LINE]),
            "pruned_corral": int(c[ak.C_PRUNED_CORRAL]),
            "pi_corral_cuts": int(c[ak.C_PI_CUTS]),
            "corral_unknown": int(c[ak.C_CORRAL_UNKNOWN]),
            "peak_memory_mb": round(self.store.peak / 2**20, 1),
        }


class BestFirstPlanner(SlicePlanner):
    """Shared planner of ``astar`` and ``greedy`` (options: ``AStarOptions``)."""

    options_type = AStarOptions
    greedy: ClassVar[bool] = False

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Best-first search; see the module docstring."""
        board = level.board
        run = _BestFirstSearch(self.options, self.greedy, board, limits, deadline)
        if not run.store.fits():
            return Outcome("memory_limit", stats={"reason": "the budget holds no search"})
        h0 = run.root_bound()
        if h0 >= INFINITE_BOUND:  # no assignment of boxes to distinct reachable goals exists
            return Outcome("unsolvable", stats={"reason": "the boxes cannot all reach goals"})
        if any(board.dead[board.start_boxes]):
            return Outcome("unsolvable", stats={"reason": "a box starts on a dead square"})
        run.start(h0)
        # EXHAUSTED is "unsolvable": pruning only drops positions that cannot lead to a solution
        return run.search()


class AStarPlanner(BestFirstPlanner):
    """Push-optimal A* over push positions (``planners.solve(level, "astar")``).

    Options: ``AStarOptions`` (``bound``, ``tunnels``, ``pi_corrals``, ``corral_deadlocks``,
    ``wall_lines``, ``corral_budget``, ``slice_nodes``, ``initial_capacity``).
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
