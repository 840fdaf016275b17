"""Classical Sokoban planners: ``planners.solve(level, planner="astar", limits=...)``.

Every planner is a ``Planner`` subclass registered under its name; ``available()`` lists them.
Results are verified with ``soko_gym.verify`` before they are returned.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Any

from planners import optimize  # a callable module: planners.optimize(level, lurd, ...)
from planners.base import REGISTRY, Planner
from planners.limits import SearchLimits
from planners.result import SearchResult

__all__ = [
    "Planner",
    "SearchLimits",
    "SearchResult",
    "available",
    "get_planner",
    "optimize",
    "solve",
]

# modules that define no planner
_SUPPORT_MODULES = {"base", "limits", "result", "cli", "optimize", "portfolio"}


@functools.cache
def _load_all() -> None:
    """Import every planner module once, which registers its planners (``Planner.name``)."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_") and info.name not in _SUPPORT_MODULES:
            importlib.import_module(f"planners.{info.name}")


def available() -> list[str]:
    """Registry names of every planner, sorted."""
    _load_all()
    return sorted(REGISTRY)


def get_planner(name: str, **options: Any) -> Planner:
    """A planner instance by registry name, with its options.

    Raises:
        ValueError: for an unknown name or option.
    """
    _load_all()
    if name not in REGISTRY:
        raise ValueError(f"unknown planner {name!r}; available: {', '.join(sorted(REGISTRY))}")
    try:
        return REGISTRY[name](**options)
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
