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
- *Lazy generation*: a new position enters its cell as its cheapest possible move and gets its
  moves (the costly part of a node) only when its cell first reaches it, so the positions no
  cell reaches in the time cost neither.

Deadlock tests on every generated move: dead squares, freeze, 4x4 patterns and bipartite
matching (in the move generator); on every new node: diagonal deadlocks
(``planners._kernels.fess_diagonal``), retrograde analysis, bipartite matching with frozen
boxes as walls (``planners._kernels.fess_frozen``), learned patterns, room deadlocks and
corral deadlocks (``FessOptions.deadlocks`` chooses among them). The advisors,
weights and move order of a new node come from one kernel (``planners._kernels.fess_order``).
PI-corral pruning (paper, appendix) keeps, in a position with a PI-corral, only the macro moves
whose first push goes into it.

The loop, the tree, the cells and every test run in kernels (``planners._kernels.fess_search``);
``planners.fess.run`` builds the level's tables (rooms, packing plan, features) and the root,
calls the kernels in slices of about 10 ms (deadline, memory and the portfolio's stop are checked
between slices), grows the tree's arrays when the kernels ask, and turns the solved node's macro
moves into pushes. This module holds the planner: its options (``planners.fess.options``), the
waypoint search and the portfolio worker's stages (``planners.fess.stages``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

from planners.base import Outcome, Planner
from planners.fess.basins import ranked_sinks, target_basins
from planners.fess.meet import (
    MEET_SHARE,
    WALK_PART,
    BackwardStats,
    MeetTable,
    backward_search,
)
from planners.fess.options import VIA_NODES, FessOptions, make_options
from planners.fess.rooms import analyze_rooms
from planners.fess.run import FessRun
from planners.fess.stages import FED_SINKS, NO_SINK_ROOM, Stage, worker_plans
from planners.fess.stages import describe as describe_stages
from planners.fess.waypoint import find_waypoint, finish_pushes, waypoint_board
from planners.limits import SearchLimits
from soko_gym.cli import field_docs
from soko_gym.engine.board import Board
from soko_gym.levels import Level


class FessPlanner(Planner):
    """Feature-space search (Shoham): a packing plan, advisors, a search over feature space.

    ``FessPlanner(**options)`` takes the fields of ``FessOptions``. Not optimal: solutions are
    found fast, not short (``planners.optimize`` shortens them). With ``workers`` > 1,
    ``planners.solve`` runs the portfolio of ``planners.fess.stages``.
    """

    name = "fess"
    optimal = False

    def __init__(self, **options: Any) -> None:
        self.options: FessOptions = make_options(options)
        # a portfolio worker's stages (``planners.fess.stages``); empty: one plain search
        self.stages: tuple[tuple[Stage, FessOptions], ...] = ()
        # set by a portfolio (planners.portfolio): polled during the search, True stops it
        self.stop_check: Callable[[], bool] | None = None
        # the level's meet table, once a search with backward="meet" filled it: every later
        # stage's forward search on the same level meets it too
        self._meet: tuple[MeetTable, tuple[BackwardStats, ...]] | None = None

    @classmethod
    def portfolio(cls, workers: int, options: dict[str, Any]) -> list[Planner]:
        """One planner per worker, each running its stages (``planners.fess.stages``)."""
        out: list[Planner] = []
        for plan in worker_plans(workers, options):
            planner = cls(**options)
            planner.options = plan.stages[0][1]
            planner.stages = plan.stages if len(plan.stages) > 1 else ()
            out.append(planner)
        return out

    @classmethod
    def describe(cls) -> str:
        """The summary line, every option with its default and help, the portfolio's stages."""
        docs = field_docs(FessOptions)
        lines = [
            super().describe(),
            "",
            "Options (`soko solve --fess-OPTION`, or keywords of `planners.solve`):",
        ]
        for f in fields(FessOptions):
            shown = " ".join(f.default) if isinstance(f.default, tuple) else f.default
            lines.append(f"  --fess-{f.name.replace('_', '-')} (default {shown}): {docs[f.name]}")
        return "\n".join([*lines, "", describe_stages(2)])

    def summary(self) -> dict[str, Any]:
        """The options changed from the defaults, and the stages when a portfolio worker."""
        out: dict[str, Any] = {"options": self.options.changed()}
        if self.stages:
            out["stages"] = [
                {"name": s.name, "seconds": s.seconds, "when": s.when, "options": o.changed()}
                for s, o in self.stages
            ]
        return out

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Run FESS on ``level`` (see ``Planner.search``): its stages, or one search."""
        self._meet = None
        try:
            return self._search(level, limits, deadline)
        finally:
            self._meet = None  # the table is the level's: freed with it

    def _search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        if not self.stages:
            return self._start(self.options, level, limits, deadline)[0]
        return self._search_stages(level, limits, deadline)

    def _search_stages(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Run the stages that apply to ``level`` in turn (``planners.fess.stages``)."""
        board = level.board
        sinks = _sink_rooms(board)
        fed, rest = sinks
        met = {NO_SINK_ROOM: not fed and not rest, FED_SINKS: len(fed) >= 2}
        todo = [(s, o) for s, o in self.stages if met.get(s.when, True)]
        run: FessRun | None = None
        current: FessOptions | None = None
        out: Outcome | None = None
        spent_nodes = spent_generated = 0  # of the searches already left behind
        spent_seconds = 0.0
        report: list[dict[str, Any]] = []
        for k, (stage, opts) in enumerate(todo):
            stop = deadline
            if stage.seconds is not None and k < len(todo) - 1:
                switch = time.perf_counter() + stage.seconds
                stop = switch if deadline is None else min(deadline, switch)
            went_on = (
                run is not None
                and current is not None
                and _same_search(current, opts, board, sinks)
            )
            if went_on:
                assert run is not None
                run.deadline = stop
                out = run.run()  # the tree and its counters go on from where they stopped
                stopped = run.stopped
            else:
                if out is not None:
                    spent_nodes += out.nodes
                    spent_generated += out.generated
                    spent_seconds += (out.stats or {}).get("search_seconds", 0.0)
                run = None  # the last tree is not needed again: free it first
                left = limits
                if limits.max_nodes is not None:
                    left = replace(limits, max_nodes=max(1, limits.max_nodes - spent_generated))
                out, run, stopped = self._start(opts, level, left, stop)
                current = opts
            report.append({"name": stage.name, "went_on": went_on, "status": out.status})
            if (
                out.status != "timeout"
                or (deadline is not None and time.perf_counter() >= deadline)
                or stopped  # another worker solved it: asking again may not say so twice
            ):
                break
        assert out is not None
        stats = dict(out.stats or {})
        stats["stages"] = report
        stats["nodes"] = out.generated + spent_generated
        stats["search_seconds"] = stats.get("search_seconds", 0.0) + spent_seconds
        return replace(
            out,
            nodes=out.nodes + spent_nodes,
            generated=out.generated + spent_generated,
            stats=stats,
        )

    def _start(
        self, opts: FessOptions, level: Level, limits: SearchLimits, deadline: float | None
    ) -> tuple[Outcome, FessRun | None, bool]:
        """A search with ``opts`` from the start: its outcome, tree (None if a waypoint's), stop.

        The third value is whether the portfolio's stop check ended the search.

        With the waypoint the waypoint's level is searched first; the plain search takes the time
        left when that level is proven unsolvable or its solution leaves the player shut out
        of the waypoint's region.
        """
        board = level.board
        if opts.backward == "meet":
            return self._start_meet(opts, level, limits, deadline)
        if opts.backward != "waypoint":
            run = FessRun(opts, board, limits, deadline, self.stop_check, meet=self._table())
            return self._with_meet(run.run()), run, run.stopped
        wp = find_waypoint(board, VIA_NODES, deadline)
        via: dict[str, Any] = {
            "regions": wp.regions,
            "score": wp.score,
            "pulls": len(wp.pulls),
            "backward_nodes": wp.nodes,
            "backward_seconds": round(wp.seconds, 4),
        }
        nodes = generated = 0
        if wp.pulls:  # else the waypoint is the solved position: nothing to gain
            sub = replace(opts, backward="none")
            sub_run = FessRun(sub, waypoint_board(board, wp), limits, deadline, self.stop_check)
            out = sub_run.run()
            via["status"] = out.status
            nodes, generated = out.nodes, out.generated
            if out.status == "solved":
                assert out.pushes is not None
                player = out.pushes[-1][0] if out.pushes else board.start_player
                finish = finish_pushes(board, wp, player)
                via["finished"] = finish is not None
                if finish is not None:
                    stats = {**(out.stats or {}), "via": via}
                    return replace(out, pushes=[*out.pushes, *finish], stats=stats), None, False
            elif out.status != "unsolvable":  # out of time or memory, or stopped
                stats = {**(out.stats or {}), "via": via}
                return replace(out, stats=stats), None, sub_run.stopped
        run = FessRun(opts, board, limits, deadline, self.stop_check, meet=self._table())
        out = self._with_meet(run.run())
        stats = {**(out.stats or {}), "via": via}
        out = replace(out, nodes=out.nodes + nodes, generated=out.generated + generated)
        return replace(out, stats=stats), run, run.stopped

    def _start_meet(
        self, opts: FessOptions, level: Level, limits: SearchLimits, deadline: float | None
    ) -> tuple[Outcome, FessRun | None, bool]:
        """The backward searches for their share of the time (once a level), then the forward one.

        The walking-distance ranking first, for ``WALK_PART`` of the share; unless it reached
        the start, the matching one for the rest, in a table of its own. The table kept is
        the one that reached the start, else the first.
        """
        board = level.board
        if self._meet is None:
            now = time.perf_counter()
            until = split = None
            if deadline is not None:
                until = now + MEET_SHARE * max(0.0, deadline - now)
                split = now + WALK_PART * (until - now)
            table = MeetTable(board)
            runs = [backward_search(board, table, split, ranking="walk")]
            if runs[0].stop != "start" and (until is None or time.perf_counter() < until):
                other = MeetTable(board)
                runs.append(backward_search(board, other, until, ranking="match"))
                if runs[1].stop == "start":
                    table = other
                del other
            self._meet = (table, tuple(runs))
        run = FessRun(opts, board, limits, deadline, self.stop_check, meet=self._table())
        return self._with_meet(run.run()), run, run.stopped

    def _table(self) -> MeetTable | None:
        return None if self._meet is None else self._meet[0]

    def _with_meet(self, out: Outcome) -> Outcome:
        """``out`` with the backward search's figures, when one ran on this level."""
        if self._meet is None:
            return out
        runs = [b.as_dict() for b in self._meet[1]]
        return replace(out, stats={**(out.stats or {}), "backward": runs})


def _sink_rooms(board: Board) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The level's fed sink rooms and the other sink candidates (``ranked_sinks``)."""
    return ranked_sinks(board, analyze_rooms(board), target_basins(board))


_PLAN_FIELDS = ("plan", "sinkless", "sink_choice")


def _same_search(
    a: FessOptions,
    b: FessOptions,
    board: Board,
    sinks: tuple[list[tuple[int, int]], list[tuple[int, int]]] | None = None,
) -> bool:
    """True when options ``a`` and ``b`` would search ``board`` the same way.

    Every field that acts during the search must be equal; the plan fields matter as far as
    they give the level another plan (a level without a sink room gets its ``sinkless`` plan
    from "sink" and "targets" alike). ``sinks``: ``_sink_rooms(board)``, when known already.
    """
    for f in fields(FessOptions):
        if f.name not in _PLAN_FIELDS and getattr(a, f.name) != getattr(b, f.name):
            return False
    fed, rest = sinks if sinks is not None else _sink_rooms(board)
    has_sink = bool(fed or rest)
    many_fed = len(fed) >= 2

    def plan_of(o: FessOptions) -> tuple:
        if not has_sink:
            return (o.sinkless,)
        if o.plan == "targets":
            return ("targets",)
        if o.plan == "sinks" and many_fed:
            return ("sinks", o.sink_choice)
        return ("sink", o.sink_choice)

    return plan_of(a) == plan_of(b)


__all__ = ["FessPlanner"]
