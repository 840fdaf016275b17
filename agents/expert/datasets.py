"""Expert datasets: the episode records and their npz and Minari files, written and read back.

``agents.expert.episodes`` produces the episodes; this module writes them (``write_npz`` from
memory, ``write_minari`` from any iterable of episodes; ``agents.expert.shards`` merges a
collection's shard files into either), reads them back (``load_dataset``) and replays one to
check it (``replay_episode``).

npz layout (one compressed npz file, a zip of ``.npy`` arrays, no extra dependency;
``load_dataset`` reads it). Episodes are in level order.
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

Minari datasets (``data`` extra) hold the same episodes, in level order:
``infos["action_mask"]`` per observation, episode options ``{"level_index": k}`` for fixed
level sources, episode metadata ``level_index``, ``level_xsb`` and ``solution``, and the env
spec, so ``minari.load_dataset(id).recover_environment()`` gives back the env.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from soko_gym.levels import Level

FORMATS = ("minari", "npz")
NPZ_FORMAT_VERSION = 1
MINARI_CHUNK = 64  # episodes per Minari write
# the per-step and per-observation arrays of an episode (npz keys and Episode attributes)
EPISODE_ARRAYS = (
    "observations",
    "action_masks",
    "actions",
    "rewards",
    "terminations",
    "truncations",
)
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
    """What a collection produced: counts, never the episodes (they go to disk as they arrive).

    Attributes:
        n_levels: levels in the selection (those found in the shards of a resumed run included).
        n_episodes: episodes in the written dataset (or collected, when nothing was written).
        n_steps: steps of those episodes.
        unsolved: levels with no episode, and why, in level order; a level whose task failed
            has status "error: <exception>".
        resumed: levels found done in the shard folder of a stopped run, not run again.
        interrupted: True when Ctrl-C stopped the collection (the levels done so far are kept).
        seconds: wall time of this run.
        out: dataset id (Minari) or file path (npz) written, or None.
        format: "npz" or "minari" when something was written.
        shards: the shard folder kept for ``resume`` (after Ctrl-C), or None.
    """

    n_levels: int = 0
    n_episodes: int = 0
    n_steps: int = 0
    unsolved: list[Unsolved] = field(default_factory=list)
    resumed: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    out: str | None = None
    format: str | None = None
    shards: str | None = None

    @property
    def episodes(self) -> list[Episode]:
        """The written dataset's episodes, read back with ``load_dataset`` (small datasets).

        Raises:
            ValueError: when episodes were collected but nothing was written (``out=None``).
        """
        if self.out is None:
            if self.n_episodes:
                raise ValueError("nothing was written (out=None): the episodes are not kept")
            return []
        return load_dataset(self.out, self.format).episodes


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


def episode_arrays(episodes: Sequence[Episode], unsolved: Sequence[Unsolved]) -> dict[str, Any]:
    """The npz layout's arrays (module docstring) of these episodes and unsolved levels, no meta."""
    arrays: dict[str, np.ndarray] = {
        "episode_lengths": np.array([len(e) for e in episodes], dtype=np.int64),
        "level_index": np.array([e.level_index for e in episodes], dtype=np.int64),
        "level_xsb": np.array([e.level.to_xsb() for e in episodes], dtype=str),
        "solution": np.array([e.solution for e in episodes], dtype=str),
        "unsolved_index": np.array([u.level_index for u in unsolved], dtype=np.int64),
        "unsolved_status": np.array([u.status for u in unsolved], dtype=str),
    }
    for name in EPISODE_ARRAYS:
        parts = [getattr(e, name) for e in episodes]
        arrays[name] = np.concatenate(parts) if parts else np.zeros(0)
    return arrays


def meta_array(meta: dict[str, Any]) -> np.ndarray:
    """The npz ``meta`` entry: the JSON of ``meta`` with the format version."""
    return np.array(json.dumps({**meta, "format_version": NPZ_FORMAT_VERSION}))


def write_npz(
    episodes: Sequence[Episode],
    unsolved: Sequence[Unsolved],
    path: str | Path,
    meta: dict[str, Any],
) -> Path:
    """Write episodes held in memory to one npz file (layout in the module docstring).

    The file is written next to its final name and renamed, so it is never half-written.
    ``agents.expert.shards.merge_npz`` writes the same layout from shard files, for any size.
    """
    path = Path(path)
    arrays = {**episode_arrays(episodes, unsolved), "meta": meta_array(meta)}
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
    episodes: Iterable[Episode],
    dataset_id: str,
    env_id: str,
    spec_kwargs: dict[str, Any],
    *,
    planner: str,
    n_levels: int,
    unsolved: Sequence[Unsolved] = (),
    interrupted: bool = False,
    overwrite: bool = False,
    chunk: int = MINARI_CHUNK,
) -> str | None:
    """Write episodes as a Minari dataset (under ``MINARI_DATASETS_PATH`` if set).

    ``episodes`` is consumed ``chunk`` episodes at a time (a generator reading shards keeps the
    memory to one chunk). Nothing is written when it is empty.

    Returns:
        The dataset id, or None when there was no episode.

    Raises:
        ValueError: when the dataset exists and ``overwrite`` is False, or for a malformed id.
        ImportError: naming the ``data`` extra when minari is missing.
    """
    import inspect
    import itertools

    minari = import_minari()
    from minari.storage.datasets_root_dir import get_dataset_path

    stream = iter(episodes)
    first = list(itertools.islice(stream, chunk))
    if not first:
        return None
    if Path(get_dataset_path(dataset_id)).exists():
        if not overwrite:
            raise ValueError(
                f"Minari dataset {dataset_id!r} exists; pass --overwrite to replace it"
            )
        minari.delete_dataset(dataset_id)
    fixed = spec_kwargs["levels"] not in (None, "generated")
    env = make_env(
        env_id,
        spec_kwargs["levels"] or first[0].level,
        {k: v for k, v in spec_kwargs.items() if k != "levels"},
    )
    extra = {}
    if "jpeg_encoding" in inspect.signature(minari.create_dataset_from_buffers).parameters:
        extra["jpeg_encoding"] = False  # observations are exact planes or frames: no JPEG
    with warnings.catch_warnings():  # minari asks for an author and a code link: none here
        warnings.filterwarnings("ignore", message=r"`\w+` is set to None", category=UserWarning)
        dataset = minari.create_dataset_from_buffers(
            dataset_id,
            _episode_buffers(first, 0, fixed),
            env=env,
            eval_env=env,
            algorithm_name=f"soko-gym PlannerPolicy({planner})",
            description="(being written)",
            **extra,
        )
    env.close()
    storage = dataset.storage
    storage.update_episode_metadata(_episode_metadata(first), range(len(first)))
    written = len(first)
    while batch := list(itertools.islice(stream, chunk)):
        storage.update_episodes(_episode_buffers(batch, written, fixed))
        storage.update_episode_metadata(
            _episode_metadata(batch), range(written, written + len(batch))
        )
        written += len(batch)
    listed = ", ".join(f"{u.level_index}: {u.status}" for u in unsolved) or "none"
    storage.update_metadata(
        {
            "description": (
                f"Expert episodes of {env_id} on {spec_kwargs['levels']!r} by planner {planner}; "
                f"{written} of {n_levels} levels{' (interrupted)' if interrupted else ''}; "
                f"unsolved levels: {listed}"
            )
        }
    )
    return dataset_id


def _episode_buffers(episodes: Sequence[Episode], first_id: int, fixed: bool) -> list[Any]:
    from minari.data_collector.episode_buffer import EpisodeBuffer

    return [
        EpisodeBuffer(
            id=first_id + k,
            options={"level_index": e.level_index} if fixed else None,
            observations=e.observations,
            actions=e.actions,
            rewards=e.rewards,
            terminations=e.terminations,
            truncations=e.truncations,
            infos={"action_mask": e.action_masks},
        )
        for k, e in enumerate(episodes)
    ]


def _episode_metadata(episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    return [
        {"level_index": e.level_index, "level_xsb": e.level.to_xsb(), "solution": e.solution}
        for e in episodes
    ]


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
