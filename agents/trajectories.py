"""Expert trajectories: planner solutions played in a soko-gym env, saved as Minari or npz datasets.

Each level is solved with ``planners.solve`` and the solution is played in the env by a
``PlannerPolicy`` seeded with it (which replans if the env leaves the plan, as a macro move may),
recording observations, actions, rewards, terminations, truncations and action masks.
Levels the planner does not solve, or whose episode hits the step limit, are listed in the result
and on the terminal, never dropped silently.

npz layout (one ``numpy.savez_compressed`` file, no extra dependency; ``load_dataset`` reads it).
Episode ``k`` has ``T_k`` steps and ``T_k + 1`` observations (the last one after the last step):

========================  ==================================  ================================
key                       dtype, shape                        meaning
========================  ==================================  ================================
``observations``          uint8[sum(T_k + 1), *obs_shape]     every episode's observations
``action_masks``          bool[sum(T_k + 1), n_actions]       legal actions at each observation
``actions``               int64[sum(T_k)]                     actions taken
``rewards``               float32[sum(T_k)]                   rewards received
``terminations``          bool[sum(T_k)]                      ``terminated`` after each step
``truncations``           bool[sum(T_k)]                      ``truncated`` after each step
``episode_lengths``       int64[n_episodes]                   ``T_k``
``level_index``           int64[n_episodes]                   level of each episode (0-based)
``level_xsb``             str[n_episodes]                     the level itself, XSB text
``solution``              str[n_episodes]                     the LURD the env played
``unsolved_index``        int64[n_unsolved]                   levels with no episode ...
``unsolved_status``       str[n_unsolved]                     ... and why (planner status ...)
``meta``                  str[]                               JSON: env_id, env_kwargs, planner,
                                                              levels, format_version
========================  ==================================  ================================

Minari datasets (``data`` extra) hold the same episodes: ``infos["action_mask"]`` per
observation, episode options ``{"level_index": k}`` for fixed level sources, episode metadata
``level_index``, ``level_xsb`` and ``solution``, and the env spec, so
``minari.load_dataset(id).recover_environment()`` gives back the env.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agents.expert import PlannerPolicy
from soko_gym.levels import Level

FORMATS = ("minari", "npz")
NPZ_FORMAT_VERSION = 1
ENV_ACTION_SPACES = {"Push": "push", "Macro": "macro", "Move": "move"}
MINARI_HINT = 'minari is needed for Minari datasets: pip install "soko-gym[data]"'


@dataclass
class Episode:
    """One expert episode.

    Attributes:
        observations: observations, ``T + 1`` of them (the last after the last step).
        actions: int64[T] actions.
        rewards: float32[T] rewards.
        terminations: bool[T] ``terminated`` after each step.
        truncations: bool[T] ``truncated`` after each step.
        action_masks: bool[T + 1, n_actions] legal actions at each observation.
        level_index: 0-based index of the level in the collected selection (or the generated
            level's number).
        level: the level played.
        solution: the LURD the env played (walks and pushes).
    """

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    terminations: np.ndarray
    truncations: np.ndarray
    action_masks: np.ndarray
    level_index: int
    level: Level
    solution: str

    def __len__(self) -> int:
        return int(self.actions.shape[0])

    @property
    def solved(self) -> bool:
        """True when the episode ends terminated (every box on a goal)."""
        return bool(len(self) and self.terminations[-1])


@dataclass(frozen=True)
class Unsolved:
    """A level without an episode in the dataset.

    Attributes:
        level_index: 0-based index of the level in the selection.
        title: the level's title.
        status: the planner's status ("timeout", "unsolvable" ...) or "truncated after N steps".
    """

    level_index: int
    title: str
    status: str


@dataclass
class CollectResult:
    """What a collection produced.

    Attributes:
        episodes: the episodes, in level order.
        unsolved: levels with no episode, and why.
        n_levels: levels attempted.
        interrupted: True when Ctrl-C stopped the collection (the episodes so far are kept).
        seconds: wall time.
        out: dataset id (Minari) or file path (npz) written, or None.
    """

    episodes: list[Episode] = field(default_factory=list)
    unsolved: list[Unsolved] = field(default_factory=list)
    n_levels: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    out: str | None = None


@dataclass
class Dataset:
    """A dataset read back by ``load_dataset``.

    Attributes:
        episodes: the episodes.
        unsolved: the levels listed as unsolved when it was collected.
        env_id: the env it was collected in.
        env_kwargs: the env's arguments (``levels``, ``obs_size`` ...).
    """

    episodes: list[Episode]
    unsolved: list[Unsolved]
    env_id: str
    env_kwargs: dict[str, Any]


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
    if isinstance(levels, str) and levels == "generated":
        if limit is None:
            raise ValueError('limit is needed with levels="generated" (the generator never ends)')
        from soko_gym.envs.sources import LevelSource
        from soko_gym.levels.generator import generate_level

        LevelSource._check_generator_kwargs(generator_kwargs)
        size = (int(generator_kwargs.get("height", 10)), int(generator_kwargs.get("width", 10)))
        rng = np.random.default_rng(seed)
        made = (generate_level(rng, **generator_kwargs).level for _ in range(limit))
        return made, limit, size, "generated"
    if generator_kwargs:
        raise ValueError('generator_kwargs is only used with levels="generated"')
    from soko_gym.envs.sources import _resolve_levels

    fixed = _resolve_levels(levels)
    if limit is not None:
        fixed = fixed[:limit]
    size = (max(lv.height for lv in fixed), max(lv.width for lv in fixed))
    recorded = levels if isinstance(levels, str) else None
    return iter(fixed), len(fixed), size, recorded


def _make_env(env_id: str, levels: Any, env_kwargs: dict[str, Any]) -> gym.Env:
    return gym.make(env_id, levels=levels, **env_kwargs)


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
    env = _make_env(task.env_id, task.level, {**task.env_kwargs, "disable_env_checker": True})
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


# -- writing and reading ---------------------------------------------------------------------


def write_npz(result: CollectResult, path: str | Path, meta: dict[str, Any]) -> Path:
    """Write the episodes to one npz file (layout in the module docstring); returns its path.

    The file is written next to its final name and renamed, so it is never half-written.
    """
    path = Path(path)
    eps = result.episodes
    arrays: dict[str, np.ndarray] = {
        "episode_lengths": np.array([len(e) for e in eps], dtype=np.int64),
        "level_index": np.array([e.level_index for e in eps], dtype=np.int64),
        "level_xsb": np.array([e.level.to_xsb() for e in eps], dtype=str),
        "solution": np.array([e.solution for e in eps], dtype=str),
        "unsolved_index": np.array([u.level_index for u in result.unsolved], dtype=np.int64),
        "unsolved_status": np.array([u.status for u in result.unsolved], dtype=str),
        "meta": np.array(json.dumps({**meta, "format_version": NPZ_FORMAT_VERSION})),
    }
    names = ("observations", "action_masks", "actions", "rewards", "terminations", "truncations")
    for name in names:
        parts = [getattr(e, name) for e in eps]
        arrays[name] = np.concatenate(parts) if parts else np.zeros(0)
    tmp = path.with_name(path.name + ".partial.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)
    return path


def load_npz(path: str | Path) -> Dataset:
    """Read a dataset written by ``write_npz``."""
    with np.load(path, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
    meta = json.loads(str(data["meta"]))
    lengths = data["episode_lengths"]
    ends = np.cumsum(lengths)
    episodes = []
    for k, (end, t) in enumerate(zip(ends.tolist(), lengths.tolist(), strict=True)):
        s0 = end - t  # steps of episode k: [s0, end); observations: [s0 + k, end + k + 1)
        level = Level.from_xsb(str(data["level_xsb"][k]))
        episodes.append(
            Episode(
                observations=data["observations"][s0 + k : end + k + 1],
                actions=data["actions"][s0:end],
                rewards=data["rewards"][s0:end],
                terminations=data["terminations"][s0:end],
                truncations=data["truncations"][s0:end],
                action_masks=data["action_masks"][s0 + k : end + k + 1],
                level_index=int(data["level_index"][k]),
                level=level,
                solution=str(data["solution"][k]),
            )
        )
    unsolved = [
        Unsolved(int(i), "", str(s))
        for i, s in zip(data["unsolved_index"], data["unsolved_status"], strict=True)
    ]
    return Dataset(episodes, unsolved, meta["env_id"], meta["env_kwargs"])


def import_minari():
    """The ``minari`` module, or an ImportError naming the ``data`` extra."""
    try:
        import minari
    except ImportError as err:
        raise ImportError(MINARI_HINT) from err
    return minari


def write_minari(
    result: CollectResult,
    dataset_id: str,
    env_id: str,
    spec_kwargs: dict[str, Any],
    *,
    planner: str,
    overwrite: bool = False,
) -> str:
    """Write the episodes as a Minari dataset (under ``MINARI_DATASETS_PATH`` if set).

    Raises:
        ValueError: when the dataset exists and ``overwrite`` is False, or for a malformed id.
        ImportError: naming the ``data`` extra when minari is missing.
    """
    import inspect

    minari = import_minari()
    from minari.data_collector.episode_buffer import EpisodeBuffer
    from minari.storage.datasets_root_dir import get_dataset_path

    if Path(get_dataset_path(dataset_id)).exists():
        if not overwrite:
            raise ValueError(
                f"Minari dataset {dataset_id!r} exists; pass --overwrite to replace it"
            )
        minari.delete_dataset(dataset_id)
    fixed = spec_kwargs["levels"] not in (None, "generated")
    buffers = [
        EpisodeBuffer(
            id=k,
            options={"level_index": e.level_index} if fixed else None,
            observations=e.observations,
            actions=e.actions,
            rewards=e.rewards,
            terminations=e.terminations,
            truncations=e.truncations,
            infos={"action_mask": e.action_masks},
        )
        for k, e in enumerate(result.episodes)
    ]
    env = _make_env(
        env_id,
        spec_kwargs["levels"] or result.episodes[0].level,
        {k: v for k, v in spec_kwargs.items() if k != "levels"},
    )
    unsolved = ", ".join(f"{u.level_index}: {u.status}" for u in result.unsolved) or "none"
    extra = {}
    if "jpeg_encoding" in inspect.signature(minari.create_dataset_from_buffers).parameters:
        extra["jpeg_encoding"] = False  # observations are exact planes or frames: no JPEG
    with warnings.catch_warnings():  # minari asks for an author and a code link: none here
        warnings.filterwarnings("ignore", message=r"`\w+` is set to None", category=UserWarning)
        dataset = minari.create_dataset_from_buffers(
            dataset_id,
            buffers,
            env=env,
            eval_env=env,
            algorithm_name=f"soko-gym PlannerPolicy({planner})",
            description=(
                f"Expert episodes of {env_id} on {spec_kwargs['levels']!r} by planner {planner}; "
                f"{len(result.episodes)} of {result.n_levels} levels"
                f"{' (interrupted)' if result.interrupted else ''}; unsolved levels: {unsolved}"
            ),
            **extra,
        )
    env.close()
    if buffers:
        dataset.storage.update_episode_metadata(
            [
                {
                    "level_index": e.level_index,
                    "level_xsb": e.level.to_xsb(),
                    "solution": e.solution,
                }
                for e in result.episodes
            ],
            range(len(buffers)),
        )
    return dataset_id


def load_minari(dataset_id: str) -> Dataset:
    """Read a Minari dataset written by ``write_minari`` into ``Episode`` objects."""
    minari = import_minari()
    dataset = minari.load_dataset(dataset_id)
    n = dataset.total_episodes
    metas = list(dataset.storage.get_episode_metadata(range(n)))
    episodes = []
    for data, meta in zip(dataset.iterate_episodes(), metas, strict=True):
        episodes.append(
            Episode(
                observations=np.asarray(data.observations),
                actions=np.asarray(data.actions, dtype=np.int64),
                rewards=np.asarray(data.rewards, dtype=np.float32),
                terminations=np.asarray(data.terminations, dtype=bool),
                truncations=np.asarray(data.truncations, dtype=bool),
                action_masks=np.asarray(data.infos["action_mask"], dtype=bool),
                level_index=int(meta["level_index"]),
                level=Level.from_xsb(str(meta["level_xsb"])),
                solution=str(meta["solution"]),
            )
        )
    spec = dataset.env_spec
    return Dataset(episodes, [], spec.id, dict(spec.kwargs))


def load_dataset(dataset: str | Path, format: str | None = None) -> Dataset:
    """Read a collected dataset: an npz file path or a Minari dataset id.

    Args:
        dataset: the npz path or the Minari id.
        format: "npz" or "minari"; None guesses from the name (an existing file or a name
            ending in ".npz" is npz).
    """
    if format is None:
        format = "npz" if str(dataset).endswith(".npz") or Path(dataset).is_file() else "minari"
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    return load_npz(dataset) if format == "npz" else load_minari(str(dataset))


def replay_episode(env_id: str, episode: Episode, **env_kwargs: Any) -> bool:
    """Play ``episode``'s actions in a fresh env on its level and check them.

    ``env_kwargs`` are the dataset's env arguments (``Dataset.env_kwargs``, which hold the
    ``obs_size`` frame); ``levels`` is replaced by the episode's own level.

    Returns:
        True when every observation matches the recorded one and the episode ends solved.
    """
    kwargs = {k: v for k, v in env_kwargs.items() if k not in ("levels", "generator_kwargs")}
    env = _make_env(env_id, episode.level, kwargs)
    obs, _ = env.reset(seed=0)
    same = np.array_equal(obs, episode.observations[0])
    info: dict[str, Any] = {}
    for t, action in enumerate(episode.actions.tolist()):
        obs, _, _, _, info = env.step(action)
        same = same and np.array_equal(obs, episode.observations[t + 1])
    env.close()
    return bool(same and info.get("solved", False))


# -- the whole collection, and ``soko collect`` ------------------------------------------------


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


def add_collect_parser(sub: Any, source_help: str) -> None:
    """Add the ``collect`` subcommand to the ``soko`` argument parser."""
    p = sub.add_parser("collect", help="expert episodes from a planner, as a Minari or npz dataset")
    p.add_argument("--env", default="Sokoban-Push-v0", help="env id (default Sokoban-Push-v0)")
    p.add_argument("--levels", required=True, help=source_help + ', or "generated"')
    p.add_argument("--planner", default="astar", help="registry name of the planner (astar)")
    p.add_argument(
        "--out", required=True, help="Minari dataset id (e.g. sokoban/push-v0) or npz path"
    )
    p.add_argument("--format", choices=FORMATS, default="minari", help="dataset format (minari)")
    p.add_argument("--jobs", type=int, default=1, metavar="K", help="worker processes (1)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="at most N levels")
    p.add_argument(
        "--time-limit", type=float, default=10.0, metavar="S", help="planner seconds per level (10)"
    )
    p.add_argument(
        "--max-episode-steps",
        type=int,
        default=None,
        metavar="N",
        help="episode step limit (default: the env's registered limit)",
    )
    p.add_argument("--width", type=int, default=None, help="generated levels: columns (10)")
    p.add_argument("--height", type=int, default=None, help="generated levels: rows (10)")
    p.add_argument("--boxes", type=int, default=None, help="generated levels: boxes (4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated levels (0)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=run_collect)


def run_collect(args: argparse.Namespace) -> int:
    """Run ``soko collect``; exit code 0 all collected, 1 some unsolved, 130 on Ctrl-C."""
    gen = {
        key: value
        for key, value in (("width", args.width), ("height", args.height), ("n_boxes", args.boxes))
        if value is not None
    }
    if gen and args.levels != "generated":
        raise ValueError("--width, --height and --boxes are for --levels generated")
    env_kwargs = {}
    if args.max_episode_steps is not None:
        _check_positive("--max-episode-steps", args.max_episode_steps)
        env_kwargs["max_episode_steps"] = args.max_episode_steps
    if args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
    result = collect_dataset(
        args.env,
        args.levels,
        args.planner,
        args.out,
        format=args.format,
        overwrite=args.overwrite,
        limit=args.limit,
        time_limit=args.time_limit,
        jobs=args.jobs,
        seed=args.seed,
        generator_kwargs=gen or None,
        env_kwargs=env_kwargs,
        progress=not args.quiet,
    )
    report(result)
    if result.interrupted:
        return 130
    return 1 if result.unsolved else 0
