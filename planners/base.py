"""Planner: the base class every registered planner derives from, and the planner registry.

A planner searches for a push sequence; the base class turns it into LURD with shortest
player walks and checks it with ``soko_gym.verify`` before anything is returned, so a result
marked solved is always a valid solution.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from planners.limits import SearchLimits
from planners.result import SearchResult
from soko_gym.errors import SolutionError
from soko_gym.levels import Level, pushes_to_lurd, verify

Push = tuple[int, int]  # (box square on level.board before the push, direction)


@dataclass
class Outcome:
    """What a planner's ``search`` found.

    Attributes:
        status: one of ``result.STATUSES``.
        pushes: the push sequence when solved (squares on ``level.board``).
        nodes: expanded nodes.
        generated: generated nodes.
        stats: planner-specific figures.
    """

    status: str
    pushes: list[Push] | None = None
    nodes: int = 0
    generated: int = 0
    stats: dict[str, Any] | None = None


class Planner(ABC):
    """A Sokoban planner: ``Planner(**options).solve(level, limits)``.

    Subclasses set ``name`` (their key in the registry of ``planners/__init__.py``, where
    every planner is listed) and ``optimal`` (whether a finished search guarantees the fewest
    pushes) and implement ``search``.
    """

    name: ClassVar[str] = ""
    optimal: ClassVar[bool] = False

    @classmethod
    def portfolio(cls, workers: int, options: dict[str, Any]) -> list[Planner]:
        """One planner per worker of a ``workers``-process portfolio (``planners.portfolio``).

        Worker 0 runs the caller's ``options``; planners that gain from a portfolio override
        this to give the others differently configured searches.

        Raises:
            ValueError: the planner has no portfolio (the base class: running the same search
                twice gains nothing), or a bad option.
        """
        raise ValueError(f"planner {cls.name!r} has no portfolio; use workers=1")

    @classmethod
    def describe(cls) -> str:
        """What ``soko planners --describe NAME`` prints: the docstring's summary line."""
        doc = (cls.__doc__ or "").strip().splitlines()
        return f"{cls.name}: {doc[0] if doc else ''}"

    def summary(self) -> dict[str, Any]:
        """What a result's stats say of this planner's configuration (JSON-ready)."""
        return {}

    @abstractmethod
    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Search ``level`` within ``limits``; ``deadline`` is a ``time.perf_counter`` value."""

    def solve(self, level: Level | str, limits: SearchLimits | None = None) -> SearchResult:
        """Solve ``level`` (a Level or XSB text) and return a verified result."""
        if isinstance(level, str):
            level = Level.from_xsb(level)
        limits = limits or SearchLimits()
        start = time.perf_counter()
        deadline = None if limits.max_seconds is None else start + limits.max_seconds
        out = self.search(level, limits, deadline)
        seconds = time.perf_counter() - start
        stats = dict(out.stats or {})
        if out.status != "solved":
            return SearchResult(
                self.name,
                out.status,
                nodes=out.nodes,
                generated=out.generated,
                seconds=seconds,
                stats=stats,
            )
        assert out.pushes is not None
        try:
            lurd = pushes_to_lurd(level, out.pushes)
        except SolutionError as err:  # a planner bug: never return an unchecked solution
            raise RuntimeError(f"{self.name} produced an illegal push sequence: {err}") from err
        check = verify(level, lurd)
        if not check.ok:
            raise RuntimeError(
                f"{self.name} produced a non-solution ({check.reason} at step {check.index})"
            )
        return SearchResult(
            self.name,
            "solved",
            lurd,
            check.pushes,
            check.moves,
            out.nodes,
            out.generated,
            seconds,
            self.optimal,
            stats,
        )
