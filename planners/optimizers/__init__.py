"""Solution optimizers: ``planners.optimize(level, lurd, metric="moves")``, never worse.

Each method is a module of this package that defines ``METHOD`` (its name) and
``improve(ctx)``, which offers candidate push sequences to ``ctx.offer`` (``context.py``); the
scheduler here runs the methods in turn, in the order of ``_METHODS``, within the time limit
and keeps the best. Metrics: "moves" (fewest moves, then fewest pushes) or "pushes" (fewest
pushes, then fewest moves).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from planners.limits import SearchLimits
from planners.optimizers import (
    box_permutations,
    global_search,
    permutations,
    rearrange,
    vicinity,
)
from planners.optimizers.context import (
    METRICS,
    Evaluator,
    MethodStats,
    OptimizeContext,
    OptimizeResult,
    decode,
    encode,
    metric_key,
    path_positions,
)
from soko_gym.errors import SolutionError
from soko_gym.levels import Level, verify

__all__ = [
    "METRICS",
    "Evaluator",
    "MethodStats",
    "OptimizeContext",
    "OptimizeResult",
    "available_methods",
    "decode",
    "encode",
    "method_modules",
    "metric_key",
    "optimize",
    "path_positions",
]


# The methods, in schedule order: each module defines METHOD (its name) and improve(ctx).
# Rearrangement first: its cycle cutting works best before permutations reorder pushes.
_METHODS: tuple[ModuleType, ...] = (
    rearrange,
    permutations,
    box_permutations,
    vicinity,
    global_search,
)


def method_modules() -> dict[str, ModuleType]:
    """Every optimization method by name, in schedule order."""
    return {m.METHOD: m for m in _METHODS}


def available_methods() -> list[str]:
    """Method names in schedule order."""
    return list(method_modules())


def optimize(
    level: Level | str,
    lurd: str,
    metric: str = "moves",
    methods: list[str] | None = None,
    limits: SearchLimits | None = None,
    *,
    progress: Callable[[str, str, int, int], None] | None = None,
    options: dict[str, Any] | None = None,
) -> OptimizeResult:
    """Optimize a solution of ``level``; never returns a worse one.

    Args:
        level: a Level or XSB text.
        lurd: a valid solution.
        metric: "moves" (fewest moves, then pushes) or "pushes" (fewest pushes, then moves).
        methods: names from ``available_methods()`` to run (default: all), in schedule order.
        limits: ``max_seconds`` bounds the whole run (default 60 s).
        progress: called with (method, detail, moves, pushes) on every improvement.
        options: method options, e.g. ``{"vicinity": {"k1": 20, "k2": 10}}``.

    Raises:
        SolutionError: when ``lurd`` is not a solution (naming the first illegal step).
        ValueError: for an unknown metric or method.
    """
    if isinstance(level, str):
        level = Level.from_xsb(level)
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    known = method_modules()
    chosen = list(known) if methods is None else list(methods)
    unknown = [m for m in chosen if m not in known]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; available: {list(known)}")
    chosen = [m for m in known if m in chosen]  # schedule order
    limits = limits or SearchLimits(max_seconds=60)
    check = verify(level, lurd)
    if not check.ok:
        raise SolutionError(check.reason, check.index if check.index is not None else len(lurd))
    start = time.perf_counter()
    end = None if limits.max_seconds is None else start + limits.max_seconds
    evaluator = Evaluator(level)
    codes = encode(level, lurd)
    moves = evaluator.moves(codes)
    assert moves is not None  # verified above; shortest walks only shorten it
    stats = {m: MethodStats() for m in chosen}
    ctx = OptimizeContext(
        level, metric, evaluator, codes, moves, end, MethodStats(), progress, dict(options or {})
    )
    interrupted = False
    try:
        _schedule(ctx, chosen, known, stats, end)
    except KeyboardInterrupt:
        interrupted = True
    return _finish(level, lurd, check.moves, check.pushes, ctx, metric, start, interrupted, stats)


def _schedule(
    ctx: OptimizeContext,
    chosen: list[str],
    known: dict[str, ModuleType],
    stats: dict[str, MethodStats],
    end: float | None,
) -> None:
    """Run the methods in turn until a whole round finds nothing or time runs out."""
    while True:
        before = ctx.key()
        for i, name in enumerate(chosen):
            now = time.perf_counter()
            if end is not None and now >= end:
                return
            share = None if end is None else now + (end - now) / (len(chosen) - i)
            ctx.deadline = share
            ctx.stats = stats[name]
            ctx.method = name
            t0 = time.perf_counter()
            try:
                known[name].improve(ctx)
            finally:
                stats[name].seconds += time.perf_counter() - t0
                stats[name].rounds += 1
        if ctx.key() >= before:
            return


def _finish(
    level: Level,
    lurd: str,
    in_moves: int,
    in_pushes: int,
    ctx: OptimizeContext,
    metric: str,
    start: float,
    interrupted: bool,
    stats: dict[str, MethodStats],
) -> OptimizeResult:
    out = decode(level, ctx.best)
    check = verify(level, out)
    better = metric_key(metric, check.moves, check.pushes) <= metric_key(
        metric, in_moves, in_pushes
    )
    if not (check.ok and better):  # never return something worse or invalid
        out, check = lurd, verify(level, lurd)
    return OptimizeResult(
        out,
        check.moves,
        check.pushes,
        in_moves,
        in_pushes,
        metric,
        time.perf_counter() - start,
        interrupted,
        stats,
    )
