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
matching (in the move generator); on every new node: retrograde analysis, locked boxes
(``locked``), bipartite matching with frozen or locked boxes as walls
(``planners._kernels.fess_frozen``), learned patterns, room
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
from dataclasses import replace
from typing import Any

from planners.base import Outcome, Planner
from planners.fess.advisors import ADVISORS
from planners.fess.packing_plan import (
    SINKLESS,
    ranked_sinks,
    target_basins,
)
from planners.fess.rooms import analyze_rooms
from planners.fess.run import FessRun, neutral_out_of_plan
from planners.fess.waypoint import find_waypoint, finish_pushes, waypoint_board
from planners.limits import SearchLimits
from soko_gym.engine.board import Board
from soko_gym.levels import Level

PLANS = ("sink", "sinks", "targets", "unordered")
CELL_RULES = ("lexicographic", "dominated")  # FessPlanner(cells=...)
# seconds portfolio worker 1 searches before its "targets" stage, and of those its first stage
PORTFOLIO_FALLBACK_AFTER = 60.0
PORTFOLIO_PROBE_SECONDS = 10.0
PORTFOLIO_SINKS_SECONDS = 20.0  # worker 1's "sinks" stage, on levels where it changes the plan
PORTFOLIO_VIA_SECONDS = 15.0  # worker 1's waypoint stage, on levels without a sink room
# what portfolio worker 1's first stage changes from worker 0's options (portfolio_options)
_PORTFOLIO_PROBE: dict[str, Any] = {"pi_corrals": False, "sinkless": "unordered"}
# ... and its second stage (worker 2's whole search): the most different configuration
_PORTFOLIO_OTHER: dict[str, Any] = {
    **_PORTFOLIO_PROBE,
    "room_axis": False,
    "plan_sinks": 1,
    "plan_first_nodes": None,
    "cells": "lexicographic",
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
        locked: on every new position, find the boxes no push can ever move given where the
            player can stand (``soko_gym.engine.lowerbound.mark_locked_boxes``: the frozen
            boxes, and those whose pushes all start from squares such boxes wall off, as in
            closed diagonals); one off a target is a deadlock, and with ``bipartite`` those
            on targets are the walls of its matching test instead of the frozen boxes alone.
            Off by default: at 60 s with the portfolio it solved the same XSokoban and
            Sasquatch levels in 15% less time and lost Microban IV 100 (benchmarks/RESULTS.md,
            item 47).
        room_deadlocks: run the room deadlock search on the room a move ends in.
        corral_deadlocks: run the corral deadlock search on every new position.
        frozen_walls: a corral too large to search is looked at again with the boxes that
            can never move as walls (``soko_gym.engine.corral``): a packed target area that
            shuts the player out of the boxes still to come then leaves a small corral that
            the search proves dead (XSokoban 29). Off by default: in the 60 s suites it
            gained no level and cost two, at 15% fewer nodes per second
            (benchmarks/RESULTS.md, item 44).
        exhaust: most positions of the exhaustion test (``soko_gym.engine.exhaust``: a
            bounded complete push search with PI-corral pruning, whose running dry proves the
            position dead) run on a new position that would open a cell, 0 for none. A cell
            takes a share of every round of the search, and a macro-move search marks a dead
            position only after every move below it: on XSokoban 29, 98% of the positions
            that would open a cell are dead and proven so in a few hundred pushes. Off by
            default: in the one-worker screen it solved nothing more and cost time
            (benchmarks/RESULTS.md, item 45).
        exhaust_all: with a value > 0, every other new position gets the test too, with a
            budget of at most this many positions (adapting as the corral searches' do with
            ``adaptive_budget``).
        pi_corrals: PI-corral pruning: where a PI-corral exists, keep only the macro moves whose
            first push goes into it (sound: the search stays complete).
        room_axis: room connectivity is the fourth axis of the feature space (the paper's
            choice: it helps levels with long solutions and slows some easy ones); False
            searches the 3-D space (out of plan, packed, connectivity), room connectivity
            still ranking moves.
        out_of_plan: the out-of-plan axis counts the boxes outside the plan's basin (Section
            6); False makes every floor square the basin, so the axis (and the out-of-plan
            advisor) is neutral; "fed" does so on levels with two or more fed sink rooms
            (targets fed from several areas, ``planners.fess.packing_plan``), where one sink's
            basin leaves the other areas' boxes out of plan. For levels whose basin points the
            wrong way: XSokoban 29, a goal room with two doors, whose sink basin holds the
            bottom corridor but not the top area, is solved with it off (one worker, 298.6 s)
            and not with it on (benchmarks/RESULTS.md, item 46).
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
        plan_nodes: most positions of the packing-plan search, per sink room tried.
        plan_first_nodes: most positions for the paper's sink room when its plan is
            incomplete at ``plan_nodes``: it searches on after the runners-up and its plan is
            taken when as good as theirs (``compute_packing_plan(first_nodes=...)``; XSokoban
            66 and Sasquatch 12 fall to it); None: ``plan_nodes`` for every sink room.
        sinkless_nodes: most positions of the backward search ordering the targets of a
            level without a sink room (``sinkless="ordered"``), None for ``plan_nodes``; see
            ``compute_packing_plan(sinkless_nodes=...)``.
        plan_seconds: time budget of the packing-plan search (and at most a fifth of the
            level's time limit).
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
        via: search through a waypoint (``planners.fess.waypoint``): a backward search pulls
            boxes off the targets to a loose position, this search solves the level with that
            position's box squares as targets, and the pulls, reversed, finish it. For levels
            that interleave boxes and targets so densely that no packing order fits (Microban
            III 58: a checkerboard). If the waypoint's level is proven unsolvable, or its
            solution leaves the player outside the waypoint's region, the plain search takes
            the time left. True: on every level; "sinkless": only on levels without a sink
            room (the portfolio's stage); False: never.
        via_nodes: most positions of the waypoint's backward search.
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
        locked: bool = False,
        room_deadlocks: bool = True,
        corral_deadlocks: bool = True,
        frozen_walls: bool = False,
        exhaust: int = 0,
        exhaust_all: int = 0,
        pi_corrals: bool = True,
        room_axis: bool = True,
        out_of_plan: bool | str = True,
        plan: str = "sink",
        deadlock_budget: int = 1024,
        plan_nodes: int = 3000,
        plan_first_nodes: int | None = 30000,
        plan_seconds: float = 15.0,
        sinkless_nodes: int | None = 30,
        plan_sinks: int = 4,
        sinkless: str = "ordered",
        adaptive_budget: bool = True,
        cells: str = "dominated",
        learned: bool = True,
        lazy: bool = True,
        lazy_tests: bool = False,
        via: bool | str = False,
        via_nodes: int = 3000,
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
        for name, value in (("exhaust", exhaust), ("exhaust_all", exhaust_all)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if plan_nodes < 1 or plan_seconds <= 0:
            raise ValueError("plan_nodes and plan_seconds must be positive")
        for name, value in (
            ("plan_first_nodes", plan_first_nodes),
            ("sinkless_nodes", sinkless_nodes),
        ):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
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
        if not isinstance(locked, bool):
            raise ValueError(f"locked must be True or False, got {locked!r}")
        self.locked = locked
        self.room_deadlocks = room_deadlocks
        self.corral_deadlocks = corral_deadlocks
        self.frozen_walls = frozen_walls
        self.exhaust = exhaust
        self.exhaust_all = exhaust_all
        self.pi_corrals = pi_corrals
        self.room_axis = room_axis
        if not (isinstance(out_of_plan, bool) or out_of_plan == "fed"):
            raise ValueError(f"out_of_plan must be True, False or 'fed', got {out_of_plan!r}")
        self.out_of_plan = out_of_plan
        self.plan = plan
        self.deadlock_budget = deadlock_budget
        self.plan_nodes = plan_nodes
        self.plan_first_nodes = plan_first_nodes
        self.sinkless_nodes = sinkless_nodes
        self.plan_seconds = plan_seconds
        self.plan_sinks = plan_sinks
        self.sinkless = sinkless
        self.adaptive_budget = adaptive_budget
        self.cells = cells
        self.learned = learned
        self.lazy = lazy
        self.lazy_tests = lazy_tests
        if not (isinstance(via, bool) or via == "sinkless"):
            raise ValueError(f"via must be True, False or 'sinkless', got {via!r}")
        self.via = via
        if isinstance(via_nodes, bool) or not isinstance(via_nodes, int) or via_nodes < 1:
            raise ValueError(f"via_nodes must be a positive integer, got {via_nodes!r}")
        self.via_nodes = via_nodes
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

        Worker 0 runs ``options``; on a level with two or more fed sink rooms it starts again
        after ``PORTFOLIO_FALLBACK_AFTER`` seconds with the out-of-plan axis neutral
        (``out_of_plan="fed"``: XSokoban 29 falls to it, item 46), unless ``options`` sets
        ``fallback`` or ``out_of_plan``; the 60 s suites never reach that switch, and in the
        600 s records worker 0 won no such level after it. Worker 1 runs up to five stages,
        each from the start:
        - for ``PORTFOLIO_PROBE_SECONDS``, worker 0's search without PI-corral pruning (sound,
          but it makes the search open a corral first; without it Sasquatch 34 and 42 fall
          in seconds, items 18 and 38);
        - on a level without a sink room, for ``PORTFOLIO_VIA_SECONDS``, the search through a
          waypoint (``via``, ``planners.fess.waypoint``) with board-order ties and the ordered
          plan (Microban III 58, a checkerboard of boxes and targets, falls to it, item 49);
        - on a level with several fed sink rooms, for ``PORTFOLIO_SINKS_SECONDS``, the next
          stage's configuration with the plan "sinks" (Sasquatch 27 and 38 fall to it);
        - until ``PORTFOLIO_FALLBACK_AFTER`` seconds in all, the most different
          configuration: the 3-D feature space (no room-connectivity axis, the paper's
          alternative), the paper's sink room even when its plan is incomplete (at
          ``plan_nodes``, not searched deeper), the lexicographic cell rule, no PI-corral
          pruning (XSokoban 40 and 71, Sasquatch 33 and 35, Microban III 47 and IV 69 fall to
          it);
        - then, on levels where that changes the plan, the plan "targets" (no sink room) with
          PI-corral pruning (XSokoban 85 in about 3 minutes, round 8).
        Every stage of worker 1 takes the unordered plan on a level without a sink room (the
        backward search's order is one guess among many there) and seeded tie-breaks.
        Further workers alternate the second stage's configuration alone and worker 1's
        stages, each worker with its own seed (the caller's seed plus its index). A
        ``room_axis``, ``plan_sinks``, ``sinkless``, ``pi_corrals``, ``cells``, ``plan``,
        ``locked``, ``via`` or ``fallback`` the caller set holds for every worker and stage (a
        caller's fallback replaces the stages; a caller's plan drops the "targets" stage; a
        caller's ``via`` drops the waypoint stage).
        """
        first = dict(options)
        if workers > 1 and "fallback" not in options and "out_of_plan" not in options:
            first.update(fallback={"out_of_plan": "fed"}, fallback_after=PORTFOLIO_FALLBACK_AFTER)
        out = [first]
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
                if "via" not in options:  # the waypoint stage, on levels without a sink room
                    stage: dict[str, Any] = {"via": "sinkless", **keep({"sinkless": "ordered"})}
                    if "seed" not in options:
                        stage["seed"] = None  # board-order ties, as worker 0's
                    later = {
                        **stage,
                        "fallback": {**later, "via": False, "seed": seed + i},
                        "fallback_after": PORTFOLIO_VIA_SECONDS,
                    }
                config["fallback"] = later
                config["fallback_after"] = PORTFOLIO_PROBE_SECONDS
            out.append(config)
        return out

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Run FESS on ``level`` (see ``Planner.search``), then its fallback if it has one."""
        return self._search_from(level, limits, deadline, None)

    def _search_from(
        self, level: Level, limits: SearchLimits, deadline: float | None, run: FessRun | None
    ) -> Outcome:
        """``search``, going on with ``run`` (a tree that searches as this planner would)."""
        if self.fallback is None:
            if run is None:
                return self._start(level, limits, deadline)[0]
            run.deadline = deadline
            return run.run()  # the tree and its counters go on from where they stopped
        if self.via == "sinkless" and not self._via_applies(level.board):
            # a waypoint stage on a level with a sink room hands over at once
            second = self._with(self.fallback)
            second.stop_check = self.stop_check
            if run is not None and not _same_search(self, second, level.board):
                run = None
            return second._search_from(level, limits, deadline, run)
        switch = time.perf_counter() + self.fallback_after
        stop = switch if deadline is None else min(deadline, switch)
        if run is None:
            out, run, stopped = self._start(level, limits, stop)
        else:
            run.deadline = stop
            out = run.run()
            stopped = run.stopped
        if (
            out.status != "timeout"
            or (deadline is not None and time.perf_counter() >= deadline)
            or stopped  # another worker solved it: asking again may not say so twice
        ):
            return out
        first = dict(out.stats or {})
        second = self._with(self.fallback)
        second.stop_check = self.stop_check
        switched = not _same_search(self, second, level.board)
        if not switched:  # nothing new to try: search on, up to the next stage's own switch
            then = second._search_from(level, limits, deadline, run)  # run None: from the start
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

    def _via_applies(self, board: Board) -> bool:
        """Whether this planner searches ``board`` through a waypoint (option ``via``)."""
        if self.via == "sinkless":
            fed, rest = _sink_rooms(board)
            return not fed and not rest
        return bool(self.via)

    def _start(
        self, level: Level, limits: SearchLimits, deadline: float | None
    ) -> tuple[Outcome, FessRun | None, bool]:
        """A search from the start: its outcome, tree (None if only a waypoint's) and stop.

        The third value is whether the portfolio's stop check ended the search.

        With ``via`` (on a level it applies to) the waypoint's level is searched first; the
        plain search takes the time left when that level is proven unsolvable or its solution
        leaves the player shut out of the waypoint's region.
        """
        board = level.board
        if not self._via_applies(board):
            run = FessRun(self, board, limits, deadline)
            return run.run(), run, run.stopped
        wp = find_waypoint(board, self.via_nodes, deadline)
        via: dict[str, Any] = {
            "regions": wp.regions,
            "score": wp.score,
            "pulls": len(wp.pulls),
            "backward_nodes": wp.nodes,
            "backward_seconds": round(wp.seconds, 4),
        }
        nodes = generated = 0
        if wp.pulls:  # else the waypoint is the solved position: nothing to gain
            sub = self._with({"via": False})
            sub.stop_check = self.stop_check
            sub_run = FessRun(sub, waypoint_board(board, wp), limits, deadline)
            out = sub_run.run()
            via["status"] = out.status
            nodes, generated = out.nodes, out.generated
            if out.status == "solved":
                assert out.pushes is not None
                player = out.pushes[-1][0] if out.pushes else board.start_player
                rest = finish_pushes(board, wp, player)
                via["finished"] = rest is not None
                if rest is not None:
                    stats = {**(out.stats or {}), "via": via}
                    return replace(out, pushes=[*out.pushes, *rest], stats=stats), None, False
            elif out.status != "unsolvable":  # out of time or memory, or stopped
                stats = {**(out.stats or {}), "via": via}
                return replace(out, stats=stats), None, sub_run.stopped
        run = FessRun(self, board, limits, deadline)
        out = run.run()
        stats = {**(out.stats or {}), "via": via}
        out = replace(out, nodes=out.nodes + nodes, generated=out.generated + generated)
        return replace(out, stats=stats), run, run.stopped

    def _with(self, changes: dict[str, Any]) -> FessPlanner:
        """A planner with this one's options (no fallback) changed by ``changes``."""
        names = inspect.signature(FessPlanner.__init__).parameters
        skip = ("self", "fallback", "fallback_after")
        options = {name: getattr(self, name) for name in names if name not in skip}
        return FessPlanner(**{**options, **changes})


def _sink_rooms(board: Board) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The level's fed sink rooms and the other sink candidates (``ranked_sinks``)."""
    return ranked_sinks(board, analyze_rooms(board), target_basins(board))


def _same_search(a: FessPlanner, b: FessPlanner, board: Board) -> bool:
    """True when planners ``a`` and ``b`` would search ``board`` the same way.

    Options that act during the search must be equal; the plan options matter as far as they
    give the level another plan (a level without a sink room gets its ``sinkless`` plan from
    "sink" and "targets" alike).
    """
    plan_options = (
        "plan", "plan_sinks", "plan_nodes", "plan_first_nodes", "plan_seconds", "sinkless",
        "sinkless_nodes",
    )  # fmt: skip
    for name, value in vars(a).items():
        if name in (
            *plan_options, "fallback", "fallback_after", "stop_check", "out_of_plan", "via",
            "via_nodes",
        ):  # fmt: skip
            continue
        if getattr(b, name) != value:
            return False
    fed, rest = _sink_rooms(board)
    has_sink = bool(fed or rest)
    many_fed = len(fed) >= 2
    if neutral_out_of_plan(a.out_of_plan, many_fed) != neutral_out_of_plan(b.out_of_plan, many_fed):
        return False
    via_a = a.via is True or (a.via == "sinkless" and not has_sink)
    via_b = b.via is True or (b.via == "sinkless" and not has_sink)
    if via_a != via_b or (via_a and a.via_nodes != b.via_nodes):
        return False

    def plan_of(p: FessPlanner) -> tuple:
        if p.plan == "unordered" or (not has_sink and p.sinkless == "unordered"):
            return ("unordered",)
        if not has_sink:
            return ("ordered", p.sinkless_nodes or p.plan_nodes, p.plan_seconds)
        if p.plan == "targets":
            return ("ordered", p.plan_nodes, p.plan_seconds)
        if p.plan == "sinks" and many_fed:
            return ("sinks", p.plan_nodes, p.plan_first_nodes, p.plan_seconds)
        return ("sink", p.plan_sinks, p.plan_nodes, p.plan_first_nodes, p.plan_seconds)

    return plan_of(a) == plan_of(b)


__all__ = ["FessPlanner"]
