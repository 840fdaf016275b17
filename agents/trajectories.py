"""Expert trajectories: planner solutions played in a soko-gym env, collected as datasets.

Each level is solved with ``planners.solve`` and the solution is played in the env by a
``PlannerPolicy`` seeded with it (which replans if the env leaves the plan, as a macro move may),
recording observations, actions, rewards, terminations, truncations and action masks.
Levels the planner does not solve, or whose episode hits the step limit, are listed in the result
and on the terminal, never dropped silently.

The episode records and their npz and Minari files (layout, writers, ``load_dataset``,
``replay_episode``) are in ``agents.datasets``; the names are importable from here as well.
``soko collect`` is ``agents.collect_cli``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.datasets import (
    FORMATS,
    MINARI_HINT,
    NPZ_FORMAT_VERSION,
    CollectResult,
    Dataset,
    Episode,
    Unsolved,
    import_minari,
    load_dataset,
    load_minari,
    load_npz,
    make_env,
    replay_episode,
    write_minari,
    write_npz,
)
from agents.expert import PlannerPolicy
from soko_gym.levels import Level

__all__ = [
    "FORMATS",
    "MINARI_HINT",
    "NPZ_FORMAT_VERSION",
    "CollectResult",
    "Dataset",
    "Episode",
    "Unsolved",
    "action_space_of",
    "collect_dataset",
    "collect_episodes",
    "import_minari",
    "load_dataset",
    "load_minari",
    "load_npz",
    "replay_episode",
    "report",
    "rollout_level",
    "write_minari",
    "write_npz",
]

ENV_ACTION_SPACES = {"Push": "push", "Macro": "macro", "Move": "move"}


# -- levels and envs -------------------------------------------------------------------------


def action_space_of(env_id: str) -> str:
    """The ``PlannerPolicy`` action space of a soko-gym env id ("Sokoban-Push-v0" -> "push").

    Raises:
        ValueError: naming ``env_id`` when it is not a soko-gym env.
    """
    import soko_gym

    if env_id not in soko_gym.ENV_IDS:
        raise ValueError(f"env_id must be one of {sorted(soko_gym.ENV_IDS)}, got {env_id!r}")
    return ENV_ACTION_SPACES[env_id.split("-")[1]]


def _check_positive(name: str, value: Any, allow_none: bool = True) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")


def _levels_to_collect(
    levels: Any, limit: int | None, generator_kwargs: dict[str, Any], seed: int
) -> tuple[Iterator[Level], int, tuple[int, int], Any]:
    """(levels, how many, obs_size, the ``levels`` argument recorded in the env spec)."""
    from soko_gym.levels.spec import generated_source

    spec = generated_source(levels)
    if spec is not None:
        if limit is None:
            raise ValueError('limit is needed with levels="generated" (the generator never ends)')
        from soko_gym.envs.sources import LevelSource
        from soko_gym.levels.generator import generate_level

        generator_kwargs.update(spec.with_generator_kwargs(generator_kwargs))  # recorded
        LevelSource._check_generator_kwargs(generator_kwargs)
        size = (int(generator_kwargs.get("height", 10)), int(generator_kwargs.get("width", 10)))
        rng = np.random.default_rng(seed)
        made = (generate_level(rng, **generator_kwargs).level for _ in range(limit))
        return made, limit, size, "generated"
    if generator_kwargs:
        raise ValueError('generator_kwargs is only used with levels="generated[:WxH][:N]"')
    from soko_gym.envs.sources import _resolve_levels

    fixed = _resolve_levels(levels)
    if limit is not None:
        fixed = fixed[:limit]
    size = (max(lv.height for lv in fixed), max(lv.width for lv in fixed))
    recorded = levels if isinstance(levels, str) else None
    return iter(fixed), len(fixed), size, recorded


# -- one level -------------------------------------------------------------------------------


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


def _run_tasks(tasks: Iterator[_Task], jobs: int) -> Iterator[Episode | Unsolved]:
    """Results in task order, from this process or ``jobs`` worker processes."""
    if jobs <= 1:
        for task in tasks:
            yield rollout_level(task)
        return
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    # spawn: workers load the numba cache; no fork of a threaded parent
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        pending = []
        try:
            for task in tasks:
                pending.append(pool.submit(rollout_level, task))
                while len(pending) >= 2 * jobs:
                    yield pending.pop(0).result()
            while pending:
                yield pending.pop(0).result()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


class _Progress:
    """One stderr line: levels done, solved, rate (redrawn on a terminal, else every ~5 s)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled
        self.start = time.perf_counter()
        self.last = self.start
        self.tty = sys.stderr.isatty()

    def update(self, done: int, solved: int, final: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not (self.tty or final or now - self.last >= 5.0):
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        line = f"[{done}/{self.total}] solved {solved}, {rate:.1f} levels/s"
        if self.tty:
            sys.stderr.write("\r" + line + ("\n" if final else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def collect_episodes(
    env_id: str,
    levels: Any,
    planner: str = "astar",
    *,
    limit: int | None = None,
    time_limit: float | None = 10.0,
    jobs: int = 1,
    seed: int = 0,
    generator_kwargs: dict[str, Any] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = True,
) -> tuple[CollectResult, dict[str, Any]]:
    """Solve each level and play it in the env; Ctrl-C stops early and keeps what is done.

    Args:
        env_id: "Sokoban-Push-v0", "Sokoban-Macro-v0" or "Sokoban-Move-v0" (or a -Gen- id).
        levels: a level source (pack selection, path, Level list) or "generated".
        planner: registry name of the planner.
        limit: at most this many levels (needed for "generated").
        time_limit: planner seconds per level (None: no limit).
        jobs: worker processes (1: this process).
        seed: seed of the generated levels.
        generator_kwargs: ``generate_level`` arguments (width, height, n_boxes ...) for
            "generated".
        env_kwargs: further env arguments (``max_episode_steps``, ``reward_scheme`` ...).
        progress: show the progress line on stderr.

    Returns:
        The result and the env arguments of the dataset's env (``levels``, ``obs_size`` ...).

    Raises:
        ValueError: naming the bad argument.
    """
    import planners

    action_space_of(env_id)
    if planner not in planners.available():
        raise ValueError(f"planner must be one of {planners.available()}, got {planner!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an int >= 1, got {jobs!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be an int >= 1 or None, got {limit!r}")
    _check_positive("time_limit", time_limit)
    env_kwargs = dict(env_kwargs or {})
    for reserved in ("levels", "generator_kwargs"):
        if reserved in env_kwargs:
            raise ValueError(f"env_kwargs must not set {reserved!r}; pass it as an argument")
    gen_kwargs = dict(generator_kwargs or {})
    todo, total, size, recorded = _levels_to_collect(levels, limit, gen_kwargs, seed)
    env_kwargs.setdefault("obs_size", size)
    spec_kwargs = {"levels": recorded, **env_kwargs}
    if recorded == "generated":
        spec_kwargs["generator_kwargs"] = gen_kwargs
    tasks = (
        _Task(env_id, env_kwargs, planner, time_limit, i, level) for i, level in enumerate(todo)
    )
    result = CollectResult(n_levels=total)
    bar = _Progress(total, progress)
    start = time.perf_counter()
    done = 0
    try:
        for item in _run_tasks(tasks, jobs):
            done += 1
            if isinstance(item, Episode):
                result.episodes.append(item)
            else:
                result.unsolved.append(item)
            bar.update(done, len(result.episodes))
    except KeyboardInterrupt:
        result.interrupted = True
    result.seconds = time.perf_counter() - start
    bar.update(done, len(result.episodes), final=True)
    return result, spec_kwargs


# -- the whole collection --------------------------------------------------------------------


def collect_dataset(
    env_id: str,
    levels: Any,
    planner: str = "astar",
    out: str | Path | None = None,
    *,
    format: str = "minari",
    overwrite: bool = False,
    **options: Any,
) -> CollectResult:
    """Collect expert episodes (``collect_episodes``) and write them (Minari or npz).

    Args:
        env_id: the soko-gym env id.
        levels: a level source or "generated".
        planner: registry name of the planner.
        out: the Minari dataset id, or the npz path (".npz" is appended when missing); None
            to write nothing.
        format: "minari" (``data`` extra) or "npz".
        overwrite: replace an existing dataset (otherwise that is a ValueError).
        **options: the keyword arguments of ``collect_episodes``.

    Raises:
        ValueError: naming the bad argument; ImportError naming the extra for Minari.
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    if out is not None and format == "npz":
        out = Path(out) if str(out).endswith(".npz") else Path(f"{out}.npz")
        if out.exists() and not overwrite:
            raise ValueError(f"{out} exists; pass --overwrite to replace it")
    if out is not None and format == "minari":
        import_minari()
        from minari.dataset.minari_dataset import parse_dataset_id
        from minari.storage.datasets_root_dir import get_dataset_path

        if not isinstance(levels, str):
            raise ValueError(
                "levels must be a source name or path for Minari datasets (the env spec is "
                "saved as JSON); use format='npz' for Level objects"
            )
        parse_dataset_id(str(out))  # a malformed id: ValueError before any work
        if Path(get_dataset_path(str(out))).exists() and not overwrite:
            raise ValueError(f"Minari dataset {str(out)!r} exists; pass --overwrite to replace it")
    result, spec_kwargs = collect_episodes(env_id, levels, planner, **options)
    if out is None:
        return result
    if format == "npz":
        meta = {"env_id": env_id, "env_kwargs": spec_kwargs, "planner": planner}
        result.out = str(write_npz(result, out, _jsonable(meta)))
    elif result.episodes:
        result.out = write_minari(
            result, str(out), env_id, spec_kwargs, planner=planner, overwrite=overwrite
        )
    return result


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def report(result: CollectResult, out: Callable[[str], None] = print) -> None:
    """Print the summary and every unsolved level."""
    stop = " (interrupted: the dataset holds the levels done so far)" if result.interrupted else ""
    out(
        f"{len(result.episodes)}/{result.n_levels} levels collected in {result.seconds:.1f} s{stop}"
    )
    if result.unsolved:
        out(f"unsolved ({len(result.unsolved)}):")
        for u in result.unsolved:
            title = f" {u.title!r}" if u.title else ""
            out(f"  level {u.level_index + 1}{title}: {u.status}")
    if result.out:
        out(f"written: {result.out}")
    elif result.n_levels and not result.episodes:
        out("nothing written: no episode was collected")
