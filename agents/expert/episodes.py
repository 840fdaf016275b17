"""Expert episodes: each level solved by a planner and the solution played in a soko-gym env.

Each level is solved with ``planners.solve`` and the solution is played in the env by a
``PlannerPolicy`` seeded with it (which replans if the env leaves the plan, as a macro move may),
recording observations, actions, rewards, terminations, truncations and action masks.
Levels the planner does not solve, whose episode hits the step limit, or whose task failed
("error: ..."), are listed in the result and on the terminal, never dropped silently.

The levels run through ``soko_gym.execution`` (this process, ``jobs`` local processes or Ray):
a task carries the level itself (a ``Level``, pickled as its rows), or for generated levels only
its index: level ``k`` of seed ``s`` is generated inside the task from its own generator seeded
``(s, k)``, so the driver does no generation (it would bound the throughput of a few workers
on small levels) and a resumed collection makes the same levels. ``collect_episodes`` streams
the episodes back in completion order; ``agents.expert.collect`` writes them into one dataset.
The episode records are ``agents.expert.datasets``'.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.expert.datasets import CollectResult, Episode, Unsolved, make_env
from agents.expert.policy import PlannerPolicy, action_space_of
from soko_gym.execution import Backend, Progress, run
from soko_gym.levels import Level


def check_positive(name: str, value: Any, allow_none: bool = True) -> None:
    """A ValueError naming ``name`` unless ``value`` is a positive number (or None)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")


def _check_seed(seed: Any) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")


def generated_level(seed: int, index: int, generator_kwargs: dict[str, Any]) -> Level:
    """Generated level number ``index`` of a collection seeded ``seed``.

    Each level has its own generator, seeded from ``(seed, index)``, so a task makes its level
    where it runs, in any order, and a resumed collection makes the same levels again.
    """
    from soko_gym.levels.generator import generate_level

    rng = np.random.default_rng([seed, index])
    return generate_level(rng, **generator_kwargs).level


@dataclass(frozen=True)
class _Job:
    """What every task of a collection shares (pickled with the function into each task).

    ``generator_kwargs`` is set for generated levels: the task generates its level itself.
    """

    env_id: str
    env_kwargs: dict[str, Any]
    planner: str
    seconds: float | None
    seed: int = 0
    generator_kwargs: dict[str, Any] | None = None


@dataclass
class CollectPlan:
    """A validated collection: its tasks' shared part, its levels and the dataset's env args."""

    job: _Job
    levels: list[Level] | None  # the fixed levels; None for generated ones
    n_levels: int
    spec_kwargs: dict[str, Any]

    def items(self, skip: set[int]) -> Iterator[tuple[int, tuple[int, Level | None]]]:
        """``(index, (index, level))`` for ``execution.run``; generated levels travel as None."""
        for index in range(self.n_levels):
            if index not in skip:
                yield index, (index, None if self.levels is None else self.levels[index])

    def title(self, index: int) -> str:
        """The title of level ``index`` ("" for generated levels)."""
        return "" if self.levels is None else self.levels[index].title

    def manifest(self) -> dict[str, Any]:
        """The arguments a resumed collection must share with the stopped one (JSON)."""
        import hashlib

        digest = None
        if self.levels is not None:
            text = "\n;;\n".join(level.to_xsb() for level in self.levels)
            digest = hashlib.sha256(text.encode()).hexdigest()
        return jsonable(
            {
                "env_id": self.job.env_id,
                "planner": self.job.planner,
                "time_limit": self.job.seconds,
                "seed": None if self.levels is not None else self.job.seed,
                "n_levels": self.n_levels,
                "levels_sha256": digest,
                "env_kwargs": self.spec_kwargs,
            }
        )


def plan_collection(
    env_id: str,
    levels: Any,
    planner: str,
    *,
    limit: int | None,
    time_limit: float | None,
    seed: int,
    generator_kwargs: dict[str, Any] | None,
    env_kwargs: dict[str, Any] | None,
) -> CollectPlan:
    """Validate a collection's arguments and resolve its levels (ValueError naming them)."""
    import planners
    from soko_gym.levels.spec import generated_source

    action_space_of(env_id)
    if planner not in planners.available():
        raise ValueError(f"planner must be one of {planners.available()}, got {planner!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be an int >= 1 or None, got {limit!r}")
    check_positive("time_limit", time_limit)
    _check_seed(seed)
    env_kwargs = dict(env_kwargs or {})
    for reserved in ("levels", "generator_kwargs"):
        if reserved in env_kwargs:
            raise ValueError(f"env_kwargs must not set {reserved!r}; pass it as an argument")
    gen_kwargs = dict(generator_kwargs or {})
    spec = generated_source(levels)
    if spec is not None:
        if limit is None:
            raise ValueError('limit is needed with levels="generated" (the generator never ends)')
        from soko_gym.envs.sources import LevelSource

        gen_kwargs = spec.with_generator_kwargs(gen_kwargs)  # recorded in the dataset
        LevelSource._check_generator_kwargs(gen_kwargs)
        # bad generator arguments: a ValueError now, not one error per level later; a level
        # with no room found is not that (its task reports it as an error)
        with contextlib.suppress(RuntimeError):
            generated_level(seed, 0, gen_kwargs)
        size = (int(gen_kwargs.get("height", 10)), int(gen_kwargs.get("width", 10)))
        fixed, n_levels, recorded = None, limit, "generated"
    else:
        if gen_kwargs:
            raise ValueError('generator_kwargs is only used with levels="generated[:WxH][:N]"')
        from soko_gym.envs.sources import _resolve_levels

        fixed = _resolve_levels(levels)
        if limit is not None:
            fixed = fixed[:limit]
        size = (max(lv.height for lv in fixed), max(lv.width for lv in fixed))
        n_levels, recorded = len(fixed), levels if isinstance(levels, str) else None
    env_kwargs.setdefault("obs_size", size)
    spec_kwargs = {"levels": recorded, **env_kwargs}
    if recorded == "generated":
        spec_kwargs["generator_kwargs"] = gen_kwargs
    job = _Job(env_id, env_kwargs, planner, time_limit, seed, gen_kwargs if fixed is None else None)
    return CollectPlan(job, fixed, n_levels, spec_kwargs)


def resolve_backend(backend: Backend | None, jobs: int | None) -> Backend:
    """The backend of ``backend=`` or its shorthand ``jobs=`` (ValueError naming a bad one)."""
    if jobs is not None:
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"jobs must be an int >= 1, got {jobs!r}")
        if backend is not None:
            raise ValueError("pass jobs or backend, not both (jobs=K is backend=Backend(jobs=K))")
        return Backend(jobs=jobs)
    if backend is None:
        return Backend()
    if not isinstance(backend, Backend):
        raise ValueError(f"backend must be a soko_gym.execution.Backend, got {backend!r}")
    return backend


@dataclass(frozen=True)
class _Task:
    env_id: str
    env_kwargs: dict[str, Any]
    planner: str
    seconds: float | None
    index: int
    level: Level


def rollout_level(task: _Task) -> Episode | Unsolved:
    """Solve one level and play the solution in the env (runs in worker processes too)."""
    import planners

    limits = planners.SearchLimits(max_seconds=task.seconds)
    result = planners.solve(task.level, task.planner, limits)
    if not result.solved:
        return Unsolved(task.index, task.level.title, result.status)
    env = make_env(task.env_id, task.level, {**task.env_kwargs, "disable_env_checker": True})
    policy = PlannerPolicy(task.planner, limits, action_space_of(task.env_id))
    core = env.unwrapped
    obs, info = env.reset(seed=0)
    policy.add_plan(core.planes(), result.lurd)
    observations, masks = [obs], [info["action_mask"]]
    actions, rewards, terms, truncs, lurd = [], [], [], [], []
    done = False
    while not done:
        action, _ = policy.predict(core.planes(), episode_start=np.array([not actions]))
        obs, reward, terminated, truncated, info = env.step(action)
        observations.append(obs)
        masks.append(info["action_mask"])
        actions.append(int(action))
        rewards.append(float(reward))
        terms.append(bool(terminated))
        truncs.append(bool(truncated))
        lurd.append(info["last_lurd"])
        done = terminated or truncated
    env.close()
    if not terms[-1]:
        return Unsolved(task.index, task.level.title, f"truncated after {len(actions)} steps")
    return Episode(
        observations=np.stack(observations),
        actions=np.asarray(actions, dtype=np.int64),
        rewards=np.asarray(rewards, dtype=np.float32),
        terminations=np.asarray(terms, dtype=bool),
        truncations=np.asarray(truncs, dtype=bool),
        action_masks=np.stack(masks).astype(bool),
        level_index=task.index,
        level=task.level,
        solution="".join(lurd),
    )


def _rollout_item(job: _Job, payload: tuple[int, Level | None]) -> Episode | Unsolved:
    """One task item (``execution.run``): make a generated level if needed, then roll it out."""
    index, level = payload
    if level is None:
        assert job.generator_kwargs is not None
        level = generated_level(job.seed, index, job.generator_kwargs)
    return rollout_level(_Task(job.env_id, job.env_kwargs, job.planner, job.seconds, index, level))


class EpisodeStream:
    """A collection's episodes and unsolved levels as they finish (``collect_episodes``).

    Iterating runs the levels on the backend and yields each ``Episode`` or ``Unsolved`` in
    completion order (``level_index`` tells which level); nothing is kept. ``result`` counts
    them; Ctrl-C ends the iteration with ``result.interrupted`` set (a caller that catches the
    interrupt in its own loop sets it and calls ``close``, which cancels the outstanding tasks).

    Attributes:
        result: the counts so far (``n_episodes``, ``n_steps``, ``unsolved`` ...).
        spec_kwargs: the env arguments of the dataset's env (``levels``, ``obs_size`` ...).
    """

    def __init__(
        self, plan: CollectPlan, backend: Backend, skip: set[int], progress: bool = True
    ) -> None:
        self.plan = plan
        self.spec_kwargs = plan.spec_kwargs
        done = sum(1 for i in skip if 0 <= i < plan.n_levels)
        self.result = CollectResult(n_levels=plan.n_levels, resumed=done)
        self._items = self._run(backend, skip, plan.n_levels - done, progress)

    def __iter__(self) -> Iterator[Episode | Unsolved]:
        return self._items

    def close(self) -> None:
        """Stop: cancel the outstanding tasks (what was yielded is the caller's)."""
        self._items.close()

    def _run(
        self, backend: Backend, skip: set[int], total: int, progress: bool
    ) -> Iterator[Episode | Unsolved]:
        result, plan = self.result, self.plan
        bar = Progress(total, enabled=progress, good_label="solved")
        start = time.perf_counter()
        fn = functools.partial(_rollout_item, plan.job)
        outcomes = run(fn, plan.items(skip), backend, total=total)
        try:
            for outcome in outcomes:
                if outcome.ok:
                    item = outcome.value
                else:
                    status = f"error: {outcome.error}"
                    item = Unsolved(outcome.key, plan.title(outcome.key), status)
                if isinstance(item, Episode):
                    result.n_episodes += 1
                    result.n_steps += len(item)
                else:
                    result.unsolved.append(item)
                bar.update(isinstance(item, Episode), error=not outcome.ok)
                result.seconds = time.perf_counter() - start
                yield item
        except KeyboardInterrupt:
            result.interrupted = True
        finally:
            outcomes.close()
            result.seconds = time.perf_counter() - start
            bar.draw(final=True)


def collect_episodes(
    env_id: str,
    levels: Any,
    planner: str = "astar",
    *,
    limit: int | None = None,
    time_limit: float | None = 10.0,
    backend: Backend | None = None,
    jobs: int | None = None,
    seed: int = 0,
    generator_kwargs: dict[str, Any] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = True,
    skip: set[int] | None = None,
) -> EpisodeStream:
    """Solve each level and play it in the env; the episodes stream back as they finish.

    Args:
        env_id: "Sokoban-Push-v0", "Sokoban-Macro-v0" or "Sokoban-Move-v0" (or a -Gen- id).
        levels: a level source (pack selection, path, Level list) or "generated[:WxH][:N]".
        planner: registry name of the planner.
        limit: at most this many levels (needed for "generated").
        time_limit: planner seconds per level (None: no limit).
        backend: where the levels run (``soko_gym.execution.Backend``; None: this process).
        jobs: shorthand for ``backend=Backend(jobs=jobs)``.
        seed: seed of the generated levels: level ``k`` comes from its own generator seeded
            ``(seed, k)`` (the same levels whatever the backend or a resume).
        generator_kwargs: ``generate_level`` arguments (width, height, n_boxes ...) for
            "generated".
        env_kwargs: further env arguments (``max_episode_steps``, ``reward_scheme`` ...).
        progress: show the progress line (done/total, rate, ETA) on stderr.
        skip: level indexes not to run (done by a stopped collection).

    Returns:
        The stream: iterate it for the episodes; ``result`` and ``spec_kwargs`` beside them.

    Raises:
        ValueError: naming the bad argument.
    """
    plan = plan_collection(
        env_id,
        levels,
        planner,
        limit=limit,
        time_limit=time_limit,
        seed=seed,
        generator_kwargs=generator_kwargs,
        env_kwargs=env_kwargs,
    )
    return EpisodeStream(plan, resolve_backend(backend, jobs), set(skip or ()), progress)


def jsonable(value: Any) -> Any:
    """``value`` with its tuples as lists, as JSON writes and reads it back."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value
