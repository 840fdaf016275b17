"""The planners' side of ``soko bench``: each planner on each level, on ``soko_gym.execution``.

A planner runs through ``planners.solve`` with a time budget per level, in this process, in
``--jobs`` worker processes or on Ray. The policy-guided planners "lts" and "phs"
(``planners.policy_search``) take their policy from ``--policy MODEL`` (loaded once per
worker); a level larger than that model's frame gets status "does_not_fit".
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import closing
from typing import Any

from agents.benchmark.config import BenchConfig
from soko_gym.execution import Backend, run
from soko_gym.levels import Level

_WARMUP_LEVEL = "#####\n#@$.#\n#####"


@functools.cache
def policy_options(path: str) -> dict[str, Any]:
    """Options of "lts"/"phs" guided by the model at ``path`` (loaded once per process)."""
    from agents.playing.models import load_model
    from agents.playing.policy_search import model_policy, push_frame

    model = load_model(path)[0]
    return {"policy": model_policy(model), **push_frame(model)}


def _planner_options(name: str, policy: str | None) -> dict[str, Any]:
    """Options a planner runs with in the benchmark: a policy for the policy-guided ones."""
    from agents.playing.policy_search import POLICY_PLANNERS

    if name in POLICY_PLANNERS and policy is not None:
        return policy_options(policy)
    return {}


@functools.cache
def _warm_up_planner(name: str, policy: str | None = None) -> None:
    """Solve a one-push level once per process, so compile and cache loading are not timed."""
    from planners import solve

    solve(_WARMUP_LEVEL, planner=name, **_planner_options(name, policy))


def _run_planner(time_limit: float, policy: str | None, payload: tuple[str, str]) -> dict[str, Any]:
    """One planner on one level, ``(planner name, XSB text)`` (a task); its CSV fields.

    ``policy`` is the model path guiding "lts" and "phs" (None when neither runs).
    """
    from planners import SearchLimits, solve

    name, text = payload
    options = _planner_options(name, policy)
    level = Level.from_xsb(text)
    if "obs_size" in options:
        height, width = options["obs_size"]
        if level.height > height or level.width > width:
            return {**_EMPTY_RESULT, "status": "does_not_fit", "lurd": ""}
    _warm_up_planner(name, policy)
    res = solve(level, planner=name, limits=SearchLimits(max_seconds=time_limit), **options)
    return {
        "solved": res.solved,
        "status": res.status,
        "pushes": res.pushes if res.solved else "",
        "moves": res.moves if res.solved else "",
        "seconds": round(res.seconds, 6),
        "env_steps": "",
        "nodes": res.nodes,
        "lurd": res.lurd if res.solved else "",  # for --record; not a CSV column
    }


def planner_rows(
    config: BenchConfig, items: list[tuple[int, Level]], done: set[tuple[str, int, int]]
) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(planner, level number, result) for every planner and level not ``done``, as they finish.

    A level whose every attempt raised or lost its worker gets status "error: <text>".
    """
    tasks = [
        ((name, number), (name, level.to_xsb(with_title=False)))
        for name in config.planners
        for number, level in items
        if (name, number, 0) not in done
    ]
    backend = Backend(jobs=config.jobs, ray=config.ray)
    task = functools.partial(_run_planner, config.time_limit, config.policy)
    with closing(run(task, tasks, backend, total=len(tasks))) as outcomes:
        for outcome in outcomes:
            name, number = outcome.key
            if outcome.ok:
                yield name, number, outcome.value
            else:
                yield name, number, {**_EMPTY_RESULT, "status": f"error: {outcome.error}"}


_EMPTY_RESULT = {
    "solved": False,
    "status": "",
    "pushes": "",
    "moves": "",
    "seconds": 0.0,
    "env_steps": "",
    "nodes": "",
}
