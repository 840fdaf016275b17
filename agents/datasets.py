"""Expert datasets: the episode records and their npz and Minari files, written and read back.

``agents.trajectories`` produces the episodes; this module writes them (``write_npz``,
``write_minari``), reads them back (``load_dataset``) and replays one to check it
(``replay_episode``).

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

import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from soko_gym.levels import Level

FORMATS = ("minari", "npz")
NPZ_FORMAT_VERSION = 1
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


def make_env(env_id: str, levels: Any, env_kwargs: dict[str, Any]) -> gym.Env:
    """``gym.make(env_id, levels=levels, **env_kwargs)``: the env an episode is played in."""
    return gym.make(env_id, levels=levels, **env_kwargs)


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
    env = make_env(
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
    env = make_env(env_id, episode.level, kwargs)
    obs, _ = env.reset(seed=0)
    same = np.array_equal(obs, episode.observations[0])
    info: dict[str, Any] = {}
    for t, action in enumerate(episode.actions.tolist()):
        obs, _, _, _, info = env.step(action)
        same = same and np.array_equal(obs, episode.observations[t + 1])
    env.close()
    return bool(same and info.get("solved", False))
