"""FESS, feature-space search (Shoham, Sections 1, 3 and 7), registered as planner ``fess``.

Terms:

- *Search tree*: one node per position found, with its feature values, its weight and the list
  of its macro moves not yet expanded, each with the features of the position it leads to. A
  transposition table (box squares and normalized player) keeps positions unique.
- *Deadlock marking*: a node with no valid moves is dead; a node whose moves are all expanded
  and whose children are all dead is dead, and so on up to the root. A dead root means every
  reachable position was searched: the level is unsolvable.
- *Feature space*: the 4-D product (out-of-plan boxes, packed boxes, connectivity, room
  connectivity). A *cell* is one point of it. A new position goes to its own cell unless that
  cell is worse than its parent's; then it goes to the parent's cell, i.e. to the cell of its
  best ancestor. "Worse" is, by default, better on no feature and worse on one (a move that
  trades one feature for another opens its own cell); with ``cells="lexicographic"`` it is
  the feature ordering of Section 7.
- *Weight*: a node's weight is its parent's plus the weight of the move that made it: the
  advisor weight (default 0) for moves an advisor picked, the normal weight (default 1) for the
  others (Section 7's best setting).
- *The loop*: go round the active cells; in a cell, expand the least-weight unexpanded move of
  the positions projected there, ties broken by the feature ordering (out-of-plan, packed,
  connectivity, room connectivity, hotspots, mobility) of the position the move leads to. No
  move is ever pruned, so the search is complete.
- *Lazy generation* (default): a new position enters its cell as its cheapest possible move
  and gets its moves (the costly part of a node) only when its cell first reaches it, so the
  positions no cell reaches in the time cost neither. The moves are expanded in the order
  eager generation gives; only the learned patterns, which grow in between, can differ.

Deadlock tests on every generated move: dead squares, freeze, 4x4 patterns and bipartite
matching (in the move generator); on every new node: retrograde analysis, bipartite matching
with frozen boxes as walls (``planners._kernels.fess_frozen``), learned patterns, room
deadlocks and corral deadlocks. The advisors, weights and move order of a new node come from
one kernel (``planners._kernels.fess_order``). PI-corral pruning (paper, appendix) keeps, in a
position with a PI-corral, only the macro moves whose first push goes into it.

The loop, the tree, the cells and every test run in kernels (``planners._kernels.fess_search``);
this module builds the level's tables (rooms, packing plan, features), the root, calls the
kernels in slices of about 10 ms (deadline, memory and the portfolio's stop are checked between
slices), grows the tree's arrays when the kernels ask, and turns the solved node's macro moves
into pushes.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from planners._kernels.fess import room_areas, room_border_table
from planners._kernels.fess_frozen import new_frozen_tables
from planners._kernels.fess_learned import new_learned_tables
from planners._kernels.fess_moves import (
    DL_BIPARTITE,
    DL_CORRAL,
    DL_DEAD_SQUARE,
    DL_FREEZE,
    DL_LEARNED,
    DL_PATTERN,
    DL_RETROGRADE,
    DL_ROOM,
    N_MOVE_COLS,
    MoveTables,
    goal_bit_table,
    new_move_scratch,
    new_room_scratch,
)
from planners._kernels.fess_order import OrderTables
from planners._kernels.fess_search import (
    C_ADVISOR,
    C_CELLS,
    C_EXPANDED,
    C_GENERATED,
    C_LABELLED,
    C_MOVES_USED,
    C_NODES,
    C_PI_CORRAL_NODES,
    C_SOLVED,
    C_TESTED,
    C_TRANSPOSITIONS,
    N_CTR,
    N_KEEP,
    N_OPTS,
    O_ADAPTIVE,
    O_CORRALS,
    O_DOMINATED,
    O_FROZEN,
    O_LAZY,
    O_LAZY_TESTS,
    O_LEARNED,
    O_NODE_LIMIT,
    O_PI_CORRALS,
    O_RETROGRADE,
    O_ROOM_AXIS,
    O_ROOMS,
    O_SEEDED,
    S_GROW,
    S_NODE_LIMIT,
    S_SLICE,
    S_SOLVED,
    DeadlockTables,
    FessScratch,
    FessTables,
    FessTree,
    fess_run,
    generate_moves,
    node_deadlock,
    rehash_tree,
)
from planners.base import Outcome, Planner, Push
from planners.fess.advisors import ADVISORS, Features
from planners.fess.features import FeatureEvaluator
from planners.fess.learned import LearnedPatterns
from planners.fess.packing_plan import (
    SINKLESS,
    PackingPlan,
    compute_packing_plan,
    fed_sinks,
    sink_candidates,
    target_basins,
    unordered_plan,
    walk_distance_from,
)
from planners.fess.rooms import analyze_rooms
from planners.limits import SearchLimits
from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_INF, GOAL, HASH_DTYPE, SQUARE_DTYPE
from soko_gym.engine.corral import new_corral_tables
from soko_gym.engine.distance import dead_sides
from soko_gym.engine.patterns import level_patterns
from soko_gym.engine.reach import reach_player
from soko_gym.engine.step import box_paths
from soko_gym.levels import Level

DEADLOCK_NAMES = {
    DL_DEAD_SQUARE: "dead_square",
    DL_FREEZE: "freeze",
    DL_PATTERN: "pattern",
    DL_BIPARTITE: "bipartite",
    DL_RETROGRADE: "retrograde",
    DL_ROOM: "room",
    DL_CORRAL: "corral",
    DL_LEARNED: "learned",
}
PLANS = ("sink", "sinks", "targets", "unordered")
CELL_RULES = ("lexicographic", "dominated")  # FessPlanner(cells=...)
# seconds portfolio worker 1 searches before its "targets" stage, and of those its first stage
PORTFOLIO_FALLBACK_AFTER = 60.0
PORTFOLIO_PROBE_SECONDS = 10.0
PORTFOLIO_SINKS_SECONDS = 20.0  # worker 1's "sinks" stage, on levels where it changes the plan
# what portfolio worker 1's first stage changes from worker 0's options (portfolio_options)
_PORTFOLIO_PROBE: dict[str, Any] = {"pi_corrals": False, "sinkless": "unordered"}
# ... and its second stage (worker 2's whole search): the most different configuration
_PORTFOLIO_OTHER: dict[str, Any] = {
    **_PORTFOLIO_PROBE,
    "room_axis": False,
    "plan_sinks": 1,
    "cells": "lexicographic",
}
_MEMO_SIZE = 1 << 18  # room and corral answers remembered, each (direct-mapped slots)
_CORRAL_BUDGET_MIN = 64  # the smallest budget an adaptive corral search falls to
_FIRST_NODES = 1 << 12  # first capacity of the tree (doubled as needed)
_FIRST_MOVES = 1 << 16  # first capacity of the move pool


@dataclass(frozen=True)
class NodeMoves:
    """The moves of one position as a search node stores them (``_FessRun.node_moves``)."""

    features: Features
    box_pos: np.ndarray
    moves: np.ndarray  # int16[k, N_KEEP] the kept columns (K_* indices)
    full: np.ndarray  # int32[k, N_MOVE_COLS] every column of the move generator (M_*)
    wts: np.ndarray  # int64[k]
    order: np.ndarray  # int64[k] move indices, first to expand first
    advised: dict[int, int]  # per picked move, the bits of the advisors that picked it


@dataclass
class FessStats:
    """Figures of one FESS run (returned in ``SearchResult.stats``)."""

    nodes: int = 0
    expanded_moves: int = 0
    transpositions: int = 0
    generated_nodes: int = 0
    tested_nodes: int = 0
    cells: int = 0
    pi_corral_nodes: int = 0
    advisor_hits: dict[str, int] = field(default_factory=lambda: {k: 0 for k in ADVISORS})
    deadlocks: dict[str, int] = field(
        default_factory=lambda: {name: 0 for name in DEADLOCK_NAMES.values()}
    )
    plan_seconds: float = 0.0
    plan_steps: int = 0
    plan_complete: bool = False
    sink_room: int = -1
    sink_rooms: tuple[int, ...] = ()
    search_seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``SearchResult.stats``."""
        return {
            "nodes": self.nodes,
            "expanded_moves": self.expanded_moves,
            "generated_nodes": self.generated_nodes,
            "tested_nodes": self.tested_nodes,
            "transpositions": self.transpositions,
            "cells": self.cells,
            "pi_corral_nodes": self.pi_corral_nodes,
            "advisor_hits": dict(self.advisor_hits),
            "deadlocks": dict(self.deadlocks),
            "plan_seconds": round(self.plan_seconds, 4),
            "plan_steps": self.plan_steps,
            "plan_complete": self.plan_complete,
            "sink_room": self.sink_room,
            "sink_rooms": list(self.sink_rooms),
            "search_seconds": round(self.search_seconds, 4),
        }


class FessPlanner(Planner):
    """FESS (module docstring): packing plan, advisors and a search over feature space.

    Not optimal: solutions are found fast, not short (``planners.optimize`` shortens them).

    Args:
        advisor_weight: weight of a move an advisor picked (paper: 0).
        move_weight: weight of every other move (paper: 1).
        advisors: names of the advisors to consult (default: all of ``ADVISORS``).
        bipartite: run the bipartite deadlock test on every generated move (empty-board
            distances) and on every new position with frozen boxes on targets (those boxes as
            walls, ``planners.fess.frozen``).
        retrograde: run retrograde analysis on every new position.
        room_deadlocks: run the room deadlock search on the room a move ends in.
        corral_deadlocks: run the corral deadlock search on every new position.
        pi_corrals: PI-corral pruning: where a PI-corral exists, keep only the macro moves whose
            first push goes into it (sound: the search stays complete).
        room_axis: room connectivity is the fourth axis of the feature space (the paper's
            choice: it helps levels with long solutions and slows some easy ones); False
            searches the 3-D space (out of plan, packed, connectivity), room connectivity
            still ranking moves.
        plan: "sink" (Section 6: boxes pulled into the sink room leave the board, parking
            squares included), "sinks" (every fed sink room at once, on a level with several:
            a level whose targets are fed from several areas, ``planners.fess.packing_plan``;
            other levels get the "sink" plan), "targets" (no sink: the targets in the order
            the backward search vacates them, every target's basin; for levels the sink plan
            misleads) or "unordered" (every target in any order: packed boxes are the boxes
            on targets, the paper's reading for simple levels).
        deadlock_budget: most positions each room or corral deadlock search stores (a power
            of two); a search that runs out proves nothing.
        adaptive_budget: each room's deadlock search halves its budget after a search that
            ran out and doubles it (up to ``deadlock_budget``) after one that proved a
            deadlock, so searches that only burn positions become cheap (Microban levels
            whose rooms hold their own targets spent 70-90% of the time there); corral
            searches do the same per corral size (number of boxes), not below 64 (on
            XSokoban 29 nine tenths of their positions went to searches that ran out); False
            keeps ``deadlock_budget`` throughout.
        cells: which new positions join their parent's cell instead of their own (Section
            3, "Restricting the number of cells"): "lexicographic", those whose cell is worse
            in the feature order (out of plan, packed, connectivity, room connectivity);
            "dominated", only those whose cell is better on no feature and worse on one, so
            a move that trades one feature for another opens its own cell.
        plan_nodes: most positions of the packing-plan search.
        plan_seconds: time budget of the packing-plan search.
        plan_sinks: most sink rooms the packing plan tries when the paper's choice leaves
            boxes on the board (1: the paper's choice only).
        sinkless: with plan "sink" or "targets", the plan of a level that has no sink room
            (targets in open rooms, as in most Microban levels): "ordered" (the targets in
            the order the backward search vacates them) or "unordered" (as plan "unordered").
        learned: store what each room or corral deadlock proof proved as a pattern and test
            every new position against the patterns (``planners.fess.learned``).
        lazy: generate a new position's moves (and their features, the costly part of a
            node) when its cell first reaches it rather than when it is made. Without learned
            patterns the same moves are expanded in the same order; with them, a position
            generated later meets more patterns. The positions no cell reaches in the time
            (a fifth to a half of them on the hard levels) cost neither the time nor the
            memory of their moves.
        lazy_tests: with ``lazy``, a new position whose cell is open already also gets its
            node-level deadlock tests (retrograde, frozen bipartite, learned patterns, room
            and corral searches) when its cell first reaches it. A position they would kill
            would not have opened a cell, so the cells are visited as if it had been tested
            at once; the positions never reached cost no tests. Off by default: 0-24% less
            time per position, but the room and corral budgets adapt to other tests and the
            learned patterns come later, and in the 60 s suites it solved no more levels
            (benchmarks/RESULTS.md, item 33).
        seed: None keeps ties between equal moves in board order; an integer breaks them by a
            random permutation drawn from it (the same seed gives the same search).
        fallback: options of a second configuration (for example ``{"plan": "targets"}``)
            that searches again from the start when this one has not solved the level after
            ``fallback_after`` seconds, for the time left; the options not named stay this
            planner's. A switch that would search the same way (a plan option on a level whose
            plan it does not change, such as ``"targets"`` on a level without a sink room)
            does not happen. None: no switch. The switch goes by the clock, so a search with
            a fallback repeats itself only up to the switch. A fallback may hold its own
            ``fallback`` and ``fallback_after``: a later stage, timed from its own start.
        fallback_after: seconds of this configuration before the fallback takes over.
    """

    name = "fess"
    optimal = False

    def __init__(
        self,
        advisor_weight: int = 0,
        move_weight: int = 1,
        advisors: tuple[str, ...] | list[str] | None = None,
        bipartite: bool = True,
        retrograde: bool = True,
        room_deadlocks: bool = True,
        corral_deadlocks: bool = True,
        pi_corrals: bool = True,
        room_axis: bool = True,
        plan: str = "sink",
        deadlock_budget: int = 1024,
        plan_nodes: int = 3000,
        plan_seconds: float = 5.0,
        plan_sinks: int = 4,
        sinkless: str = "ordered",
        adaptive_budget: bool = True,
        cells: str = "dominated",
        learned: bool = True,
        lazy: bool = True,
        lazy_tests: bool = False,
        seed: int | None = None,
        fallback: dict[str, Any] | None = None,
        fallback_after: float = 10.0,
    ) -> None:
        for name, value in (("advisor_weight", advisor_weight), ("move_weight", move_weight)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if advisor_weight == 0 and move_weight == 0:
            raise ValueError("advisor_weight and move_weight cannot both be 0")
        names = tuple(ADVISORS) if advisors is None else tuple(advisors)
        unknown = [a for a in names if a not in ADVISORS]
        if unknown:
            raise ValueError(f"unknown advisors {unknown}; known: {', '.join(ADVISORS)}")
        if plan not in PLANS:
            raise ValueError(f"plan must be one of {', '.join(PLANS)}, got {plan!r}")
        if (
            isinstance(deadlock_budget, bool)
            or not isinstance(deadlock_budget, int)
            or deadlock_budget < 16
            or deadlock_budget & (deadlock_budget - 1)
        ):
            raise ValueError(
                f"deadlock_budget must be a power of two >= 16, got {deadlock_budget!r}"
            )
        if plan_nodes < 1 or plan_seconds <= 0:
            raise ValueError("plan_nodes and plan_seconds must be positive")
        if cells not in CELL_RULES:
            raise ValueError(f"cells must be one of {', '.join(CELL_RULES)}, got {cells!r}")
        if sinkless not in SINKLESS:
            raise ValueError(f"sinkless must be one of {', '.join(SINKLESS)}, got {sinkless!r}")
        if isinstance(plan_sinks, bool) or not isinstance(plan_sinks, int) or plan_sinks < 1:
            raise ValueError(f"plan_sinks must be a positive integer, got {plan_sinks!r}")
        self.advisor_weight = advisor_weight
        self.move_weight = move_weight
        self.advisors = names
        self.bipartite = bipartite
        self.retrograde = retrograde
        self.room_deadlocks = room_deadlocks
        self.corral_deadlocks = corral_deadlocks
        self.pi_corrals = pi_corrals
        self.room_axis = room_axis
        self.plan = plan
        self.deadlock_budget = deadlock_budget
        self.plan_nodes = plan_nodes
        self.plan_seconds = plan_seconds
        self.plan_sinks = plan_sinks
        self.sinkless = sinkless
        self.adaptive_budget = adaptive_budget
        self.cells = cells
        self.learned = learned
        self.lazy = lazy
        self.lazy_tests = lazy_tests
        self.seed = seed
        if (
            isinstance(fallback_after, bool)
            or not isinstance(fallback_after, int | float)
            or not fallback_after > 0
        ):
            raise ValueError(f"fallback_after must be a positive number, got {fallback_after!r}")
        self.fallback_after = float(fallback_after)
        self.fallback: dict[str, Any] | None = None
        if fallback is not None:
            if not isinstance(fallback, dict):
                raise ValueError(f"fallback must be a dict of FESS options, got {fallback!r}")
            try:
                self._with(fallback)  # its options are checked now, not at the switch
            except TypeError as err:
                raise ValueError(f"fallback has an unknown option: {err}") from None
            self.fallback = dict(fallback)
        # set by a portfolio (planners.portfolio): polled during the search, True stops it
        self.stop_check: Callable[[], bool] | None = None

    @classmethod
    def portfolio_options(cls, workers: int, options: dict[str, Any]) -> list[dict[str, Any]]:
        """Worker options of a FESS portfolio (``planners.portfolio``).

        Worker 0 runs ``options``. Worker 1 runs up to four stages, each from the start:
        - for ``PORTFOLIO_PROBE_SECONDS``, worker 0's search without PI-corral pruning (sound,
          but it makes the search open a corral first; without it Sasquatch 34 and 42 fall
          in seconds, items 18 and 38);
        - on a level with several fed sink rooms, for ``PORTFOLIO_SINKS_SECONDS``, the next
          stage's configuration with the plan "sinks" (Sasquatch 27 and 38 fall to it);
        - until ``PORTFOLIO_FALLBACK_AFTER`` seconds in all, the most different
          configuration: the 3-D feature space (no room-connectivity axis, the paper's
          alternative), the paper's sink room even when its plan is incomplete, the
          lexicographic cell rule, no PI-corral pruning (XSokoban 40 and 71, Sasquatch 33
          and 35, Microban III 47 and IV 69 fall to it);
        - then, on levels where that changes the plan, the plan "targets" (no sink room) with
          PI-corral pruning (XSokoban 85 in about 3 minutes, round 8).
        Every stage of worker 1 takes the unordered plan on a level without a sink room (the
        backward search's order is one guess among many there) and seeded tie-breaks.
        Further workers alternate the second stage's configuration alone and worker 1's
        stages, each worker with its own seed (the caller's seed plus its index). A
        ``room_axis``, ``plan_sinks``, ``sinkless``, ``pi_corrals``, ``cells``, ``plan`` or
        ``fallback`` the caller set holds for every worker and stage (a caller's fallback
        replaces the stages; a caller's plan drops the "targets" stage).
        """
        out = [dict(options)]
        seed = options.get("seed") or 0

        def keep(changes: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in changes.items() if k not in options}

        for i in range(1, workers):
            if i % 2 == 0:
                out.append({**options, **keep(_PORTFOLIO_OTHER), "seed": seed + i})
                continue
            config = {**options, **keep(_PORTFOLIO_PROBE), "seed": seed + i}
            if "fallback" in options:
                config.update(keep(_PORTFOLIO_OTHER))
            else:
                later = keep(_PORTFOLIO_OTHER)
                other_seconds = PORTFOLIO_FALLBACK_AFTER - PORTFOLIO_PROBE_SECONDS
                if "plan" not in options:
                    later["fallback"] = keep({"plan": "targets", "pi_corrals": True})
                    later["fallback_after"] = other_seconds - PORTFOLIO_SINKS_SECONDS
                    later["plan"] = "sink"  # a stage keeps the options its fallback names not
                    later = {
                        **keep(_PORTFOLIO_OTHER),
                        "plan": "sinks",
                        "fallback": later,
                        "fallback_after": PORTFOLIO_SINKS_SECONDS,
                    }
                config["fallback"] = later
                config["fallback_after"] = PORTFOLIO_PROBE_SECONDS
            out.append(config)
        return out

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Run FESS on ``level`` (see ``Planner.search``), then its fallback if it has one."""
        return self._search_from(level, limits, deadline, None)

    def _search_from(
        self, level: Level, limits: SearchLimits, deadline: float | None, run: _FessRun | None
    ) -> Outcome:
        """``search``, going on with ``run`` (a tree that searches as this planner would)."""
        if self.fallback is None:
            if run is None:
                return _FessRun(self, level.board, limits, deadline).run()
            run.deadline = deadline
            return run.run()  # the tree and its counters go on from where they stopped
        switch = time.perf_counter() + self.fallback_after
        stop = switch if deadline is None else min(deadline, switch)
        if run is None:
            run = _FessRun(self, level.board, limits, stop)
        else:
            run.deadline = stop
        out = run.run()
        if (
            out.status != "timeout"
            or (deadline is not None and time.perf_counter() >= deadline)
            or (self.stop_check is not None and self.stop_check())
        ):
            return out
        first = dict(out.stats or {})
        second = self._with(self.fallback)
        second.stop_check = self.stop_check
        switched = not _same_search(self, second, level.board)
        if not switched:  # nothing new to try: search on, up to the next stage's own switch
            then = second._search_from(level, limits, deadline, run)
            nodes, generated = then.nodes, then.generated
        else:
            del run  # the first tree is not needed again: free it before the second grows
            rest = limits
            if limits.max_nodes is not None:
                rest = replace(limits, max_nodes=max(1, limits.max_nodes - out.generated))
            then = second._search_from(level, rest, deadline, None)  # with its own fallback
            nodes, generated = then.nodes + out.nodes, then.generated + out.generated
        stats = dict(then.stats or {})
        stats["fallback"] = {
            "after_seconds": self.fallback_after,
            "options": self.fallback,
            "switched": switched,
            "first_nodes": first.get("nodes", 0),
        }
        if then.stats and "fallback" in then.stats:
            stats["fallback"]["then"] = then.stats["fallback"]  # the next stage's switch
        stats["nodes"] = generated
        stats["search_seconds"] = stats.get("search_seconds", 0.0) + first.get(
            "search_seconds", 0.0
        )
        return replace(then, nodes=nodes, generated=generated, stats=stats)

    def _with(self, changes: dict[str, Any]) -> FessPlanner:
        """A planner with this one's options (no fallback) changed by ``changes``."""
        names = inspect.signature(FessPlanner.__init__).parameters
        skip = ("self", "fallback", "fallback_after")
        options = {name: getattr(self, name) for name in names if name not in skip}
        return FessPlanner(**{**options, **changes})


def _same_search(a: FessPlanner, b: FessPlanner, board: Board) -> bool:
    """True when planners ``a`` and ``b`` would search ``board`` the same way.

    Options that act during the search must be equal; the plan options matter as far as they
    give the level another plan (a level without a sink room gets its ``sinkless`` plan from
    "sink" and "targets" alike).
    """
    plan_options = ("plan", "plan_sinks", "plan_nodes", "plan_seconds", "sinkless")
    for name, value in vars(a).items():
        if name in (*plan_options, "fallback", "fallback_after", "stop_check"):
            continue
        if getattr(b, name) != value:
            return False
    rooms = analyze_rooms(board)
    basins = target_basins(board)
    has_sink = bool(sink_candidates(board, rooms, basins))
    many_fed = len(fed_sinks(board, rooms, basins)) >= 2

    def plan_of(p: FessPlanner) -> tuple:
        if p.plan == "unordered" or (not has_sink and p.sinkless == "unordered"):
            return ("unordered",)
        if p.plan == "targets" or not has_sink:
            return ("ordered", p.plan_nodes, p.plan_seconds)
        if p.plan == "sinks" and many_fed:
            return ("sinks", p.plan_nodes, p.plan_seconds)
        return ("sink", p.plan_sinks, p.plan_nodes, p.plan_seconds)

    return plan_of(a) == plan_of(b)


class _FessRun:
    """One FESS search: the level's tables and the kernels' state (``fess_search``)."""

    def __init__(self, cfg: FessPlanner, board: Board, limits: SearchLimits, deadline):
        self.cfg = cfg
        self.board = board
        self.limits = limits
        self.deadline = deadline
        self.stats = FessStats()
        t0 = time.perf_counter()
        self.rooms = analyze_rooms(board)
        plan_deadline = cfg.plan_seconds
        if deadline is not None:
            plan_deadline = min(plan_deadline, max(0.05, 0.2 * (deadline - t0)))
        self.plan: PackingPlan
        if cfg.plan == "unordered":
            self.plan = unordered_plan(board)
        else:
            self.plan = compute_packing_plan(
                board,
                self.rooms,
                max_nodes=cfg.plan_nodes,
                max_seconds=plan_deadline,
                use_sink=cfg.plan in ("sink", "sinks"),
                max_sinks=cfg.plan_sinks,
                sinkless=cfg.sinkless,
                sinks="all" if cfg.plan == "sinks" else "one",
            )
        self.stats.plan_seconds = time.perf_counter() - t0
        self.stats.plan_steps = self.plan.n_steps
        self.stats.plan_complete = self.plan.complete
        self.stats.sink_room = self.plan.sink_room
        self.stats.sink_rooms = self.plan.sink_rooms
        self.features = FeatureEvaluator(board, self.rooms)
        patterns = level_patterns(board)
        basin_squares = np.flatnonzero(self.plan.basin)
        if basin_squares.size:
            self.basin_dist = walk_distance_from(board, basin_squares)
        else:
            self.basin_dist = np.zeros(board.n_cells, dtype=np.int32)
        n = board.n_cells
        nb = board.n_boxes
        nf = board.floor.shape[0]
        # Python's view of a position (root features, the solution's push paths, tests)
        self.box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        self.scratch = new_move_scratch(board.cells, nb, self.rooms.n_rooms)
        self.kinds = self.scratch.kinds
        border = room_border_table(self.rooms.room_id, self.rooms.passage_id, board.offsets)
        self.move_tables = MoveTables(
            board.cells, board.dead, dead_sides(board.push_dist), board.offsets,
            board.floor, board.floor_index, board.goals,
            board.goal_dist, goal_bit_table(board.goal_dist), self.plan.src, self.plan.dst,
            self.plan.basin, self.rooms.room_id, self.rooms.passage_id, self.rooms.edges,
            self.features.hot, patterns.square_start, patterns.square_instance,
            patterns.instance_boxes,
            np.array([1 if cfg.bipartite else 0], dtype=np.int64), board.zobrist,
            border,
            room_areas(
                self.rooms.room_id, self.rooms.passage_id, self.rooms.edges, board.offsets,
                board.floor, border,
            ),
        )  # fmt: skip
        enabled = sum(1 << i for i, name in enumerate(ADVISORS) if name in cfg.advisors)
        cap = max(1, 4 * nb * nf)  # the most moves a node can have
        order_tables = OrderTables(
            self.plan.basin,
            self.basin_dist.astype(np.int32),
            self.plan.src,
            self.plan.dst,
            np.array([cfg.advisor_weight, cfg.move_weight, enabled], dtype=np.int64),
            np.array([board.width], dtype=np.int64),
            np.zeros(n, dtype=np.int32),
            np.zeros(cap, dtype=np.int64),
            np.zeros(cap, dtype=np.int64),
            np.zeros(cap, dtype=np.int64),
            np.zeros(cap, dtype=np.bool_),
        )
        opts = np.zeros(N_OPTS, dtype=np.int64)
        opts[O_RETROGRADE] = cfg.retrograde
        opts[O_FROZEN] = cfg.bipartite
        opts[O_LEARNED] = cfg.learned
        opts[O_ROOMS] = cfg.room_deadlocks
        opts[O_CORRALS] = cfg.corral_deadlocks
        opts[O_PI_CORRALS] = cfg.pi_corrals
        opts[O_ROOM_AXIS] = cfg.room_axis
        opts[O_SEEDED] = cfg.seed is not None
        opts[O_NODE_LIMIT] = -1 if limits.max_nodes is None else limits.max_nodes
        opts[O_ADAPTIVE] = cfg.adaptive_budget
        opts[O_DOMINATED] = cfg.cells == "dominated"
        opts[O_LAZY] = cfg.lazy
        opts[O_LAZY_TESTS] = cfg.lazy_tests
        room_area, room_sq, room_start = self._room_areas()
        self.tables = FessTables(
            self.move_tables, order_tables, ((board.cells & GOAL) != 0).astype(np.uint8),
            room_area, room_sq, room_start, opts,
        )  # fmt: skip
        budget = cfg.deadlock_budget
        seed = 0 if cfg.seed is None else int(cfg.seed)
        self.work = FessScratch(
            box_at=np.full(n, -1, dtype=BOX_AT_DTYPE),
            box_pos=np.zeros(nb, dtype=SQUARE_DTYPE),
            moves=np.zeros((cap, N_MOVE_COLS), dtype=np.int32),
            wts=np.zeros(cap, dtype=np.int64),
            order=np.zeros(cap, dtype=np.int64),
            picked=np.zeros(cap, dtype=np.int64),
            tiebreak=np.zeros(cap, dtype=np.int64),
            features=np.zeros(6, dtype=np.int64),
            pi_sq_pushes=np.zeros(4 * max(1, nb), dtype=np.int64),
            proof=np.zeros(max(1, nb), dtype=SQUARE_DTYPE),
            sub_box_at=np.full(n, -1, dtype=BOX_AT_DTYPE),
            room=new_room_scratch(n, budget),
            memo_hash=np.zeros(_MEMO_SIZE, dtype=HASH_DTYPE),
            memo_info=np.zeros(_MEMO_SIZE, dtype=np.int64),
            memo_status=np.full(_MEMO_SIZE, -1, dtype=np.int8),
            rng=np.array([(seed * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) % 2**64 or 1],
                         dtype=np.uint64),
            room_budget=np.full(max(1, self.rooms.n_rooms), budget, dtype=np.int64),
        )  # fmt: skip
        self.corrals = new_corral_tables(
            board, budget, memo=_MEMO_SIZE,
            min_budget=min(budget, _CORRAL_BUDGET_MIN) if cfg.adaptive_budget else 0,
        )  # fmt: skip
        self.frozen = new_frozen_tables(board)
        self.learned = LearnedPatterns(board) if cfg.learned else None
        self._learned_tables = (
            self.learned.tables if self.learned is not None else new_learned_tables(n, 1, 1)
        )
        self.deadlock_tables = DeadlockTables(self._learned_tables, self.frozen, self.corrals)
        self.tree = _new_tree(nb, _FIRST_NODES, max(_FIRST_MOVES, 2 * cap))

    def _room_areas(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per room its area (the room and the passage squares next to it): mask, squares."""
        r = self.rooms
        n = self.board.n_cells
        offsets = [int(o) for o in self.board.offsets]
        mask = np.zeros((max(1, r.n_rooms), n), dtype=np.uint8)
        squares: list[int] = []
        start = [0]
        for room in range(r.n_rooms):
            area = mask[room]
            area[r.room_id == room] = 1
            for sq in np.flatnonzero(r.room_id == room).tolist():
                for o in offsets:
                    if r.passage_id[sq + o] >= 0:
                        area[sq + o] = 1
            squares.extend(np.flatnonzero(area).tolist())
            start.append(len(squares))
        return mask, np.array(squares, dtype=SQUARE_DTYPE), np.array(start, dtype=SQUARE_DTYPE)

    # ------------------------------------------------------------------ Python's view

    def _load(self, box_pos: np.ndarray) -> None:
        """Put a position into ``box_at`` (Python's view) and the kernels' ``work`` arrays."""
        self.box_at[:] = -1
        self.box_at[box_pos] = np.arange(box_pos.shape[0], dtype=BOX_AT_DTYPE)
        w = self.work
        w.box_at[:] = self.box_at
        w.box_pos[:] = box_pos

    def _node_deadlock(self, box_pos: np.ndarray, player: int, dst: int) -> int:
        """The node-level deadlock tests on a position (``_load``-ed); the DL_* kind or -1."""
        return int(
            node_deadlock(
                self.tables, self.scratch, self.work, self.tree, self.deadlock_tables, -1,
                int(player), int(dst),
            )
        )  # fmt: skip

    def node_moves(self, box_pos: np.ndarray, player: int) -> NodeMoves:
        """The moves a node of this position gets, as the search stores them (for tests)."""
        self._load(box_pos)
        f = self._features_of(box_pos, int(player))
        tree = _new_tree(self.board.n_boxes, 2, self.work.moves.shape[0])
        tree.box_pos[0] = box_pos
        tree.player[0] = int(player)
        tree.feat[0] = f
        tree.ctr[C_LABELLED] = -1
        k = generate_moves(self.tables, self.scratch, self.work, tree, self.deadlock_tables, 0)
        return NodeMoves(
            features=Features(*(int(x) for x in f)),
            box_pos=box_pos,
            moves=tree.rows[:k].copy(),
            full=self.work.moves[:k].copy(),
            wts=tree.mwts[:k].astype(np.int64),
            order=tree.morder[:k].astype(np.int64),
            advised={i: int(a) for i, a in enumerate(tree.advised[:k].tolist()) if a},
        )

    def positions(self) -> list[tuple[np.ndarray, int]]:
        """(box squares, player square) of every node of the tree, in the order made."""
        tr = self.tree
        k = int(tr.ctr[C_NODES])
        return [(tr.box_pos[i].astype(SQUARE_DTYPE), int(tr.player[i])) for i in range(k)]

    # ------------------------------------------------------------------ the loop

    def _grow(self) -> None:
        """Double the tree's node or move capacity (whichever ``fess_run`` ran short of)."""
        tr = self.tree
        nodes = tr.cell.shape[0]
        moves = tr.rows.shape[0]
        if tr.ctr[C_NODES] + 1 >= nodes:
            nodes *= 2
        if tr.ctr[C_MOVES_USED] + self.work.moves.shape[0] > moves:
            moves *= 2
        self.tree = _grow_tree(tr, nodes, moves)

    def _used_bytes(self) -> int:
        """Memory the tree uses: node rows, table slots and move rows in use."""
        tr = self.tree
        per_node = sum(
            a.itemsize * (a.size // a.shape[0]) for a in tr[:-1] if a.shape[0] == tr.cell.shape[0]
        ) + 2 * (tr.tt.itemsize + tr.cell_tab.itemsize)
        per_move = sum(
            a.itemsize * (a.size // a.shape[0]) for a in (tr.rows, tr.mwts, tr.morder, tr.advised)
        )
        return int(tr.ctr[C_NODES]) * per_node + int(tr.ctr[C_MOVES_USED]) * per_move

    def run(self) -> Outcome:
        t0 = time.perf_counter()
        b = self.board
        box_pos = b.start_boxes.astype(SQUARE_DTYPE).copy()
        self._load(box_pos)
        if bool(self.tables.goal[box_pos].all()):
            return self._finish("solved", t0, [])
        stamps, stack = self.scratch.stamps, self.scratch.stack
        _, norm = reach_player(self.box_at, b.offsets, int(b.start_player), stamps, stack)
        f = self._features_of(box_pos, int(b.start_player))
        tr = self.tree
        tr.box_pos[0] = box_pos
        tr.hash[0] = np.bitwise_xor.reduce(b.zobrist[box_pos]) if box_pos.size else 0
        tr.player[0] = int(b.start_player)
        tr.norm[0] = norm
        tr.weight[0] = 0
        tr.feat[0] = f
        self.work.box_at[:] = -1
        mem_budget = self.limits.memory_bytes
        budget = 16
        polls = 0
        while True:
            if self.deadline is not None and time.perf_counter() > self.deadline:
                return self._finish("timeout", t0, None)
            polls += 1
            if self.cfg.stop_check is not None and polls & 3 == 0 and self.cfg.stop_check():
                return self._finish("timeout", t0, None)  # another worker solved it
            if self._used_bytes() > mem_budget:
                return self._finish("memory_limit", t0, None)
            t1 = time.perf_counter()
            status = fess_run(
                self.tables, self.scratch, self.work, self.tree, self.deadlock_tables, budget
            )
            spent = time.perf_counter() - t1
            if status == S_SLICE:  # about 10 ms a slice: deadlines are kept to that
                budget = max(1, min(4 * budget, int(budget * 0.01 / max(spent, 1e-5))))
            elif status == S_GROW:
                self._grow()
            elif status == S_SOLVED:
                return self._finish("solved", t0, self._solution(int(self.tree.ctr[C_SOLVED])))
            elif status == S_NODE_LIMIT:
                return self._finish("node_limit", t0, None)
            else:
                return self._finish("unsolvable", t0, None)

    def _features_of(self, box_pos: np.ndarray, player: int) -> np.ndarray:
        """Features of the root (``box_at`` loaded): oop, packed, conn, rooms, hot, mob."""
        f = self.features
        p = self.plan
        packed = f.packed(self.box_at, p.src, p.dst)
        return np.array(
            [
                f.out_of_plan(box_pos, p.basin, p.src, p.dst, packed),
                packed,
                f.connectivity(self.box_at),
                f.room_connectivity(self.box_at),
                f.hotspots(box_pos),
                f.mobility(self.box_at, box_pos, player)[0],
            ],
            dtype=np.int32,
        )

    # ------------------------------------------------------------------ results

    def _solution(self, goal: int) -> list[Push]:
        """The pushes from the root to node ``goal``, each macro move by its fewest pushes."""
        tr = self.tree
        chain = []
        node = goal
        while tr.parent[node] >= 0:
            chain.append(node)
            node = int(tr.parent[node])
        chain.reverse()
        b = self.board
        sc = self.scratch
        pushes: list[Push] = []
        links = np.zeros(4 * b.n_cells, dtype=np.int32)  # each state's push path link
        for child in chain:
            parent = int(tr.parent[child])
            box, src = int(tr.moved[child, 0]), int(tr.moved[child, 1])
            dst = int(tr.box_pos[child, box])
            player_after = int(tr.player[child])
            parent_pos = tr.box_pos[parent].astype(SQUARE_DTYPE)
            self.box_at[:] = -1
            self.box_at[parent_pos] = np.arange(parent_pos.shape[0], dtype=BOX_AT_DTYPE)
            box_paths(
                b.cells, self.box_at, b.offsets, int(tr.player[parent]), src, sc.stamps,
                sc.stack, sc.dist, links, sc.queue,
            )  # fmt: skip
            side = next(s for s in range(4) if dst + int(b.offsets[s]) == player_after)
            code = dst * 4 + side
            if sc.dist[code] == DIST_INF:
                raise RuntimeError("FESS lost a macro move's push path")
            dirs = []
            for _ in range(int(sc.dist[code])):
                link = int(links[code])
                dirs.append(link & 3)
                code = link >> 2
            dirs.reverse()
            sq = src
            for d in dirs:
                pushes.append((sq, d))
                sq += int(b.offsets[d])
        return pushes

    def _finish(self, status: str, t0: float, pushes: list[Push] | None) -> Outcome:
        st = self.stats
        ctr = self.tree.ctr
        st.search_seconds = time.perf_counter() - t0
        st.nodes = max(1, int(ctr[C_NODES]))
        st.expanded_moves = int(ctr[C_EXPANDED])
        st.transpositions = int(ctr[C_TRANSPOSITIONS])
        st.generated_nodes = int(ctr[C_GENERATED])
        st.tested_nodes = int(ctr[C_TESTED])
        st.cells = int(ctr[C_CELLS])
        st.pi_corral_nodes = int(ctr[C_PI_CORRAL_NODES])
        for a, name in enumerate(ADVISORS):
            st.advisor_hits[name] = int(ctr[C_ADVISOR + a])
        for kind, name in DEADLOCK_NAMES.items():
            st.deadlocks[name] = int(self.kinds[kind])
        return Outcome(
            status,
            pushes,
            nodes=st.expanded_moves,
            generated=st.nodes,
            stats=st.as_dict(),
        )


def _new_tree(n_boxes: int, nodes: int, moves: int) -> FessTree:
    """An empty tree for ``nodes`` nodes and ``moves`` pooled moves."""
    tcap = 1 << (2 * nodes - 1).bit_length()
    return FessTree(
        box_pos=np.zeros((nodes, max(1, n_boxes)), dtype=BOX_AT_DTYPE),
        hash=np.zeros(nodes, dtype=HASH_DTYPE),
        player=np.zeros(nodes, dtype=np.int32),
        norm=np.zeros(nodes, dtype=np.int32),
        parent=np.full(nodes, -1, dtype=np.int32),
        moved=np.zeros((nodes, 2), dtype=np.int32),
        weight=np.zeros(nodes, dtype=np.int64),
        feat=np.zeros((nodes, 6), dtype=np.int32),
        cell=np.zeros(nodes, dtype=np.int32),
        mstart=np.zeros(nodes, dtype=np.int64),
        mcount=np.zeros(nodes, dtype=np.int32),
        mnext=np.zeros(nodes, dtype=np.int32),
        n_open=np.zeros(nodes, dtype=np.int32),
        dead=np.zeros(nodes, dtype=np.uint8),
        lseen=np.zeros(nodes, dtype=np.int32),
        tick=np.zeros(nodes, dtype=np.int64),
        left=np.full(nodes, -1, dtype=np.int32),
        right=np.full(nodes, -1, dtype=np.int32),
        tt=np.full(tcap, -1, dtype=np.int32),
        rows=np.zeros((moves, N_KEEP), dtype=np.int16),
        mwts=np.zeros(moves, dtype=np.int32),
        morder=np.zeros(moves, dtype=np.int32),
        advised=np.zeros(moves, dtype=np.uint8),
        cell_feat=np.zeros((nodes, 4), dtype=np.int32),
        cell_root=np.full(nodes, -1, dtype=np.int32),
        cell_on=np.zeros(nodes, dtype=np.uint8),
        cell_tab=np.full(tcap, -1, dtype=np.int32),
        active=np.zeros(nodes, dtype=np.int32),
        ctr=np.zeros(N_CTR, dtype=np.int64),
    )


def _grow_tree(tree: FessTree, nodes: int, moves: int) -> FessTree:
    """A copy of ``tree`` with room for ``nodes`` nodes and ``moves`` pooled moves."""
    grown = _new_tree(tree.box_pos.shape[1], nodes, moves)
    n_old = tree.cell.shape[0]
    m_old = tree.rows.shape[0]
    for name, old in tree._asdict().items():
        new = getattr(grown, name)
        if name in ("tt", "cell_tab"):
            continue  # rebuilt by rehash_tree
        if name == "ctr":
            new[:] = old
        elif old.shape[0] == m_old and name in ("rows", "mwts", "morder", "advised"):
            new[:m_old] = old
        else:
            new[:n_old] = old
    rehash_tree(grown)
    return grown


__all__ = ["FessPlanner", "FessStats"]
