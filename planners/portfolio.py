"""Portfolio solving: differently configured searches in parallel processes, first solution wins.

``planners.solve(level, "fess", limits, workers=2)`` runs the planner's portfolio
(``Planner.portfolio_options``) with one process per worker. The first worker to return a
solution wins and the others are stopped at once; when no worker solves the level, the result
of worker 0 (the caller's own configuration) is returned. Every returned solution is checked
again with ``soko_gym.verify`` here, in the caller's process.

Workers start from a fork server on Linux (the planner modules are imported there once, so a
worker starts in milliseconds, not in a numba cache load) and by ``spawn`` elsewhere; a parent
that has loaded threaded libraries is never forked.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import sys
import time
from dataclasses import replace
from typing import Any

from planners.base import REGISTRY
from planners.limits import SearchLimits
from planners.result import SearchResult
from soko_gym.levels import Level, verify

_CONTEXT: Any = None


def _context() -> Any:
    """The multiprocessing context workers start from (module docstring)."""
    global _CONTEXT
    if _CONTEXT is None:
        if sys.platform.startswith("linux"):
            _CONTEXT = mp.get_context("forkserver")
            _CONTEXT.set_forkserver_preload(["planners", "planners.fess.search"])
        else:
            _CONTEXT = mp.get_context("spawn")
    return _CONTEXT


def _worker(index: int, name: str, options: dict, xsb: str, limits: SearchLimits, out) -> None:
    """Solve in a worker process and report ``(index, result)`` (or the error text)."""
    import planners  # noqa: F401  (registers the planners in a spawned process)

    try:
        result = REGISTRY[name](**options).solve(Level.from_xsb(xsb), limits)
        out.put((index, result, None))
    except Exception as err:  # reported to the parent, which raises it
        out.put((index, None, f"{type(err).__name__}: {err}"))


def solve_portfolio(
    level: Level, name: str, limits: SearchLimits, workers: int, options: dict[str, Any]
) -> SearchResult:
    """Run ``workers`` configurations of planner ``name`` on ``level`` in parallel processes.

    Args:
        level: the level to solve.
        name: registry name of a planner with a portfolio (``Planner.portfolio_options``).
        limits: budgets of each worker; the memory budget is shared out between them.
        workers: number of processes, at least 2.
        options: the caller's planner options (worker 0 runs them unchanged).

    Returns:
        The first verified solution, with ``stats["portfolio"]`` naming the winner and each
        worker's options; otherwise worker 0's result.

    Raises:
        ValueError: bad ``workers`` or a planner without a portfolio.
        RuntimeError: a worker failed (its error text is included).
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 2:
        raise ValueError(f"workers must be an integer >= 2 for a portfolio, got {workers!r}")
    cls = REGISTRY[name]
    configs = cls.portfolio_options(workers, options)
    for config in configs:  # bad options fail here, before any process starts
        cls(**config)
    share = SearchLimits(
        limits.max_seconds, limits.max_nodes, limits.memory_bytes / 2**20 / workers
    )
    ctx = _context()
    out = ctx.Queue()
    xsb = level.to_xsb()
    start = time.perf_counter()
    procs = [
        ctx.Process(target=_worker, args=(i, name, configs[i], xsb, share, out), daemon=True)
        for i in range(workers)
    ]
    results: dict[int, SearchResult] = {}
    winner = None
    try:
        for p in procs:
            p.start()
        while len(results) < workers:
            try:
                index, result, error = out.get(timeout=0.2)
            except queue.Empty:
                dead = [i for i, p in enumerate(procs) if not p.is_alive() and i not in results]
                if dead and out.empty():
                    time.sleep(0.2)  # a result may still be in flight
                    if out.empty():
                        raise RuntimeError(
                            f"portfolio worker {dead[0]} of {name} exited without a result"
                        ) from None
                continue
            if error is not None:
                raise RuntimeError(f"portfolio worker {index} of {name} failed: {error}")
            results[index] = result
            if result.solved:
                winner = index
                break
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5)
        out.close()
    chosen = results[winner] if winner is not None else results[0]
    if chosen.solved:
        check = verify(level, chosen.lurd)
        if not check.ok:
            raise RuntimeError(
                f"portfolio worker {winner} of {name} returned a non-solution "
                f"({check.reason} at step {check.index})"
            )
    stats = dict(chosen.stats)
    stats["portfolio"] = {
        "workers": workers,
        "winner": winner,
        "options": configs,
        "finished": sorted(results),
    }
    return replace(chosen, seconds=time.perf_counter() - start, stats=stats)


__all__ = ["solve_portfolio"]
