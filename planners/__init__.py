"""Classical Sokoban planners: ``planners.solve(level, planner="astar", limits=...)``.

Every planner is a ``Planner`` subclass listed by name in ``PLANNERS`` below (the one
registry; its module is imported when the planner is first asked for); ``available()`` lists
them. Results are verified with ``soko_gym.verify`` before they are returned.
"""

from __future__ import annotations

import importlib
from typing import Any

from planners.base import Planner
from planners.limits import SearchLimits
from planners.optimizers import optimize
from planners.result import SearchResult

__all__ = [
    "Planner",
    "SearchLimits",
    "SearchResult",
    "available",
    "get_planner",
    "planner_class",
    "optimize",
    "solve",
]

# name -> "module:class" of every planner
PLANNERS: dict[str, str] = {
    "astar": "planners.astar:AStarPlanner",
    "greedy": "planners.astar:GreedyPlanner",
    "idastar": "planners.idastar:IDAStarPlanner",
    "bfs": "planners.bfs:BreadthFirst",
    "dfs": "planners.dfs:DepthFirst",
    "zobrist-dfs": "planners.dfs:ZobristDepthFirst",
    "iddfs": "planners.dfs:IterativeDeepening",
    "iddfs-zobrist": "planners.dfs:IterativeDeepeningZobrist",
    "packing-order": "planners.packing:PackingOrderPlanner",
    "reverse-packing-order": "planners.packing:ReversePackingOrderPlanner",
    "fess": "planners.fess.search:FessPlanner",
    "lts": "planners.policy_search:LevinTreeSearch",  # policy= required
    "phs": "planners.policy_search:PolicyHeuristicSearch",  # policy= required
}


def planner_class(name: str) -> type[Planner]:
    """The planner class registered as ``name``.

    Raises:
        ValueError: for an unknown name.
    """
    if name not in PLANNERS:
        raise ValueError(f"unknown planner {name!r}; available: {', '.join(sorted(PLANNERS))}")
    module, cls = PLANNERS[name].split(":")
    return getattr(importlib.import_module(module), cls)


def available() -> list[str]:
    """Registry names of every planner, sorted."""
    return sorted(PLANNERS)


def get_planner(name: str, **options: Any) -> Planner:
    """A planner instance by registry name, with its options.

    Raises:
        ValueError: for an unknown name or option.
    """
    cls = planner_class(name)
    try:
        return cls(**options)
    except TypeError as err:
        raise ValueError(f"bad options for planner {name!r}: {err}") from None


def solve(
    level: Any,
    planner: str = "astar",
    limits: SearchLimits | None = None,
    workers: int = 1,
    **options: Any,
) -> SearchResult:
    """Solve one level (a ``Level`` or XSB text) with the named planner.

    ``workers`` > 1 runs the planner's portfolio (``planners.portfolio``): that many differently
    configured searches in parallel processes, stopped at the first solution; only planners
    that define one accept it (``fess``).
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    solver = get_planner(planner, **options)
    if workers == 1:
        return solver.solve(level, limits)
    from planners.portfolio import solve_portfolio
    from soko_gym.levels import Level

    if isinstance(level, str):
        level = Level.from_xsb(level)
    return solve_portfolio(level, planner, limits or SearchLimits(), workers, options)
