"""Portfolio solving: differently configured searches in parallel, the first solution wins.

``planners.solve(level, "fess", limits, workers=2)`` runs the planner's portfolio
(``Planner.portfolio``: one planner per worker): worker 0 (the caller's own configuration)
searches in the calling process, so an easy level costs no more than with one worker; workers
1.. search in child processes. Worker 0 polls for their results while it searches (planners with a
portfolio accept a ``stop_check``); the first solution wins and every other worker is stopped.
When nobody solves the level, worker 0's result is returned. A solution from a child is
checked again with ``soko_gym.verify`` in the calling process.

Children start from a fork server on Linux (no re-import of the planner modules; each still
loads its compiled kernels, about a second) and by ``spawn`` elsewhere; a parent that has
loaded threaded libraries is never forked.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import sys
import time
from dataclasses import replace
from typing import Any

from planners.base import Planner
from planners.limits import SearchLimits
from planners.result import SearchResult
from soko_gym.levels import Level, verify

_CONTEXT: Any = None


def _context() -> Any:
    """The multiprocessing context children start from (module docstring)."""
    global _CONTEXT
    if _CONTEXT is None:
        if sys.platform.startswith("linux"):
            _CONTEXT = mp.get_context("forkserver")
            _CONTEXT.set_forkserver_preload(["planners", "planners.fess.search"])
        else:
            _CONTEXT = mp.get_context("spawn")
    return _CONTEXT


def _worker(index: int, planner: Planner, xsb: str, limits: SearchLimits, out) -> None:
    """Solve in a child process and report ``(index, result, error text)``."""
    try:
        result = planner.solve(Level.from_xsb(xsb), limits)
        out.put((index, result, None))
    except Exception as err:  # reported to the parent
        out.put((index, None, f"{type(err).__name__}: {err}"))


class _Inbox:
    """Results of the child workers, gathered without blocking."""

    def __init__(self, out, procs: list) -> None:
        self.out = out
        self.procs = procs  # index i + 1 -> process of worker i + 1
        self.results: dict[int, SearchResult] = {}
        self.errors: dict[int, str] = {}

    def poll(self, timeout: float = 0.0) -> int | None:
        """Take what has arrived; returns the index of a worker that solved, if any."""
        while True:
            try:
                index, result, error = (
                    self.out.get(timeout=timeout) if timeout else (self.out.get_nowait())
                )
            except queue.Empty:
                return None
            timeout = 0.0
            if error is not None:
                self.errors[index] = error
                continue
            self.results[index] = result
            if result.solved:
                return index

    def any_solved(self) -> bool:
        """Whether a worker has solved, polling first: stays True once it is."""
        self.poll()
        return any(r.solved for r in self.results.values())

    def pending(self) -> list[int]:
        """Child workers that have neither reported nor died."""
        done = set(self.results) | set(self.errors)
        return [i + 1 for i, p in enumerate(self.procs) if i + 1 not in done and p.is_alive()]


def solve_portfolio(
    level: Level, name: str, limits: SearchLimits, workers: int, options: dict[str, Any]
) -> SearchResult:
    """Run ``workers`` configurations of planner ``name`` on ``level`` in parallel.

    Args:
        level: the level to solve.
        name: registry name of a planner with a portfolio (``Planner.portfolio``).
        limits: budgets of each worker; the memory budget is shared out between them.
        workers: number of searches, at least 2.
        options: the caller's planner options (worker 0 runs them unchanged).

    Returns:
        The first verified solution, with ``stats["portfolio"]`` naming the winner, each
        worker's configuration (``Planner.summary``) and the workers that reported; otherwise
        worker 0's result.

    Raises:
        ValueError: bad ``workers`` or a planner without a portfolio.
        RuntimeError: a child returned a non-solution (a planner bug).
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 2:
        raise ValueError(f"workers must be an integer >= 2 for a portfolio, got {workers!r}")
    from planners import planner_class

    planners_ = planner_class(name).portfolio(workers, options)  # bad options fail here
    share = SearchLimits(
        limits.max_seconds, limits.max_nodes, limits.memory_bytes / 2**20 / workers
    )
    ctx = _context()
    out = ctx.Queue()
    xsb = level.to_xsb()
    start = time.perf_counter()
    procs = [
        ctx.Process(target=_worker, args=(i, planners_[i], xsb, share, out), daemon=True)
        for i in range(1, workers)
    ]
    inbox = _Inbox(out, procs)
    winner: int | None = None
    try:
        for p in procs:
            p.start()
        own = planners_[0]
        own.stop_check = inbox.any_solved
        mine = own.solve(level, share)
        inbox.results[0] = mine
        if mine.solved:
            winner = 0
        else:
            winner = next((i for i, r in inbox.results.items() if r.solved), None)
            while winner is None and inbox.pending():
                winner = inbox.poll(timeout=0.2)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            if p.pid is not None:
                p.join(timeout=5)
        out.close()
    chosen = inbox.results[winner] if winner is not None else inbox.results[0]
    if winner not in (None, 0):
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
        "configs": [p.summary() for p in planners_],
        "finished": sorted(inbox.results),
        "errors": {str(i): e for i, e in sorted(inbox.errors.items())},
    }
    return replace(chosen, seconds=time.perf_counter() - start, stats=stats)


__all__ = ["solve_portfolio"]
