"""The FESS portfolio as data: each worker's stages, in one table.

``planners.solve(level, "fess", workers=W)`` runs W searches in parallel processes
(``planners.portfolio``); the first solution wins. Worker 0 runs ``MAIN``, odd workers
``STAGED``, even workers from 2 on ``OTHER``. A worker runs its stages one after another, each
from the start of the level, for its ``seconds`` (None: the time left) and only on levels that
meet its ``when``. A stage whose search would be the running search's (its options give this
level the same plan and search) lets that search go on instead of starting again. A stage's
``changes`` apply to the caller's options except the fields the caller set, which hold for
every stage; a stage with an ``unless`` field is dropped when the caller set that field. The
meet table a ``backward="meet"`` stage fills is kept for the worker's later stages on the
level (``FessPlanner``).
Workers after 0 break ties by the seed ``caller's seed (or 0) + worker index``.

``soko planners --describe fess`` prints this table (``describe``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from planners.fess.options import FessOptions, make_options

ALWAYS = "always"
NO_SINK_ROOM = "no sink room"  # targets in open rooms (most Microban levels)
FED_SINKS = "2+ fed sink rooms"  # targets fed from several areas
CONDITIONS = (ALWAYS, NO_SINK_ROOM, FED_SINKS)


@dataclass(frozen=True)
class Stage:
    """One stage of a portfolio worker (module docstring)."""

    name: str
    changes: Mapping[str, Any]
    seconds: float | None
    when: str = ALWAYS
    unless: str | None = None
    why: str = ""

    def __post_init__(self) -> None:
        if self.when not in CONDITIONS:
            raise ValueError(f"stage {self.name}: when must be one of {CONDITIONS}")
        make_options(self.changes)  # every change names a field and a valid value


# the configuration most unlike the default: the paper's 3-D space, its sink room, its cells
_OTHER: dict[str, Any] = {
    "pi_corrals": False,
    "sinkless": "unordered",
    "room_axis": False,
    "sink_choice": "paper",
    "cells": "lexicographic",
}

MAIN = (
    Stage("main", {}, 60.0, why="the default search"),
    Stage(
        "basin off",
        {"out_of_plan": False},
        None,
        FED_SINKS,
        unless="out_of_plan",
        why="one sink's basin leaves the other areas' boxes out of plan (XSokoban 29)",
    ),
)
STAGED = (
    Stage(
        "meet",
        {"pi_corrals": False, "sinkless": "unordered", "backward": "meet"},
        15.0,
        why="a third pulling towards the start, by walking and then by matching distance "
        "(alone it solves Sasquatch 27, 37, 42, 50, Microban IV 75, 100; its positions stay "
        "for the later stages to meet), then a probe: a corral need not be opened first "
        "(Sasquatch 34)",
    ),
    Stage(
        "waypoint",
        {"pi_corrals": False, "sinkless": "ordered", "backward": "waypoint", "seed": None},
        15.0,
        NO_SINK_ROOM,
        unless="backward",
        why="boxes and targets too interleaved for a packing order (Microban III 58)",
    ),
    Stage(
        "sinks",
        {**_OTHER, "plan": "sinks"},
        20.0,
        why="every fed sink room in one plan (Sasquatch 27, 38); elsewhere the next stage",
    ),
    Stage(
        "other",
        _OTHER,
        25.0,
        why="the paper's alternatives (XSokoban 40, 71; Sasquatch 33, 35; Microban III 47)",
    ),
    Stage(
        "targets",
        {**_OTHER, "plan": "targets", "pi_corrals": True},
        None,
        unless="plan",
        why="the sink assumption off: targets in backward order (XSokoban 85)",
    ),
)
OTHER = (Stage("other", _OTHER, None, why="the most different configuration, alone"),)


@dataclass(frozen=True)
class WorkerPlan:
    """One portfolio worker: its stages, each with the options it searches with."""

    index: int
    stages: tuple[tuple[Stage, FessOptions], ...] = field(default=())


def worker_table(index: int, workers: int) -> tuple[Stage, ...]:
    """The stage table worker ``index`` of ``workers`` runs."""
    if index == 0:
        return MAIN if workers > 1 else (Stage("main", {}, None),)
    return STAGED if index % 2 else OTHER


def worker_plans(workers: int, options: Mapping[str, Any]) -> list[WorkerPlan]:
    """Each worker's stages with their options, given the caller's ``options`` (module doc).

    Raises:
        ValueError: a bad option (naming it) or fewer than one worker.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    make_options(options)  # the caller's options are checked before any worker starts
    plans = []
    for i in range(workers):
        base = dict(options)
        if i > 0:
            base["seed"] = (options.get("seed") or 0) + i
        stages = []
        for stage in worker_table(i, workers):
            if stage.unless is not None and stage.unless in options:
                continue
            changes = {k: v for k, v in stage.changes.items() if k not in options}
            stages.append((stage, FessOptions(**{**base, **changes})))
        plans.append(WorkerPlan(i, tuple(stages)))
    return plans


def describe(workers: int = 2) -> str:
    """The portfolio's stage table as markdown: what ``soko planners --describe fess`` prints."""
    lines = [
        f"FESS portfolio with {workers} workers (`soko solve --planner fess --workers {workers}`):",
        "",
        "| worker | stage | seconds | on levels | options changed | why |",
        "|---|---|---:|---|---|---|",
    ]
    for plan in worker_plans(workers, {}):
        for stage, opts in plan.stages:
            changed = (
                ", ".join(f"{k}={v}" for k, v in opts.changed().items() if k != "seed")
                or "(defaults)"
            )
            seconds = "rest" if stage.seconds is None else f"{stage.seconds:g}"
            lines.append(
                f"| {plan.index} | {stage.name} | {seconds} | {stage.when} | {changed} "
                f"| {stage.why} |"
            )
    lines += [
        "",
        "Each stage starts from the level's start; a stage whose search is the running one's",
        "lets it go on. The meet stage's table (the positions its pull search stored) stays",
        "for the worker's later stages: each of them finishes on meeting one. Workers after 0",
        "break ties by seed (the caller's seed or 0, plus the worker index); the waypoint",
        "stage keeps board-order ties.",
    ]
    return "\n".join(lines)


__all__ = ["MAIN", "OTHER", "STAGED", "Stage", "WorkerPlan", "describe", "worker_plans"]
