"""The vector env of an RLlib env runner: soko-gym's numba vector envs, masks in the observation.

RLlib's action masking reads a Dict observation ``{"action_mask": ..., "observations": ...}``;
``make_runner_env`` builds soko-gym's native vector env (N envs per numba call; the sources of
an ``a+b`` mix side by side in a ``MixedVectorEnv``) inside ``ActionMaskObservations``, which
gives that layout. ``check_runner_envs`` proves that every runner of an algorithm steps one of
these. Only gymnasium and numpy: no Ray or torch import here (``agents.rllib.ppo`` has those).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper
from gymnasium.vector.utils import batch_space

from agents.training.config import TrainConfig, env_args
from soko_gym.levels.spec import split_sources

MASK_KEY = "action_mask"
OBS_KEY = "observations"
KEPT_INFO = ("solved", "pushes")  # RLlib stores every info of every step: keep these only
SOURCE_SEED_STRIDE = 7919  # as agents.training.env: part i of a mix is seeded seed + i * this


class MixedVectorEnv(VectorEnv):
    """Native vector envs of one env id and frame side by side, as one (an ``a+b`` mix).

    Each part keeps its own next-step autoreset; ``reset(seed=s)`` seeds part i with
    ``s + i * SOURCE_SEED_STRIDE`` (as the stable-baselines3 path's mixed env does), and
    ``action_masks()`` and the infos concatenate the parts'.
    """

    def __init__(self, parts: Sequence[Any]) -> None:
        first = parts[0]
        self.parts = list(parts)
        self.bounds = np.cumsum([0] + [p.num_envs for p in parts]).tolist()
        self.num_envs = self.bounds[-1]
        self.metadata = dict(first.metadata)
        self.render_mode = None
        self.single_observation_space = first.single_observation_space
        self.single_action_space = first.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every part (``options`` are not supported on a mix)."""
        if options:
            raise ValueError("options: a mixed vector env takes no reset options")
        if isinstance(seed, list | tuple):
            seed = seed[0] if seed else None
        results = [
            p.reset(seed=None if seed is None else seed + i * SOURCE_SEED_STRIDE)
            for i, p in enumerate(self.parts)
        ]
        return np.concatenate([r[0] for r in results]), _join_infos([r[1] for r in results])

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step each part with its slice of ``actions``."""
        acts = np.asarray(actions)
        results = [
            p.step(acts[a:b])
            for p, a, b in zip(self.parts, self.bounds, self.bounds[1:], strict=False)
        ]
        obs, rewards, terminated, truncated = (
            np.concatenate([r[k] for r in results]) for k in range(4)
        )
        return obs, rewards, terminated, truncated, _join_infos([r[4] for r in results])

    def action_masks(self) -> np.ndarray:
        """Legal actions of every sub-env: bool[num_envs, n_actions]."""
        return np.concatenate([p.action_masks() for p in self.parts])

    def close_extras(self, **kwargs: Any) -> None:
        """Close the parts."""
        for part in self.parts:
            part.close()


def _join_infos(infos: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-key concatenation of the parts' info dicts (keys every part has)."""
    keys = [k for k in infos[0] if all(k in info for info in infos)]
    return {k: np.concatenate([np.asarray(info[k]) for info in infos]) for k in keys}


class ActionMaskObservations(VectorWrapper):
    """Observations as RLlib's action masking expects: a Dict of the mask and the planes.

    ``{"action_mask": uint8[num_envs, n_actions] (1 = legal), "observations": the env's
    planes}``; the mask is the env's ``action_masks()`` after each reset and step. Infos keep
    only ``solved`` and ``pushes`` (with their ``_key`` masks), as RLlib keeps every info of
    every step in its episodes.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        n_actions = int(env.single_action_space.n)
        self.single_observation_space = gym.spaces.Dict(
            {
                MASK_KEY: gym.spaces.Box(0, 1, (n_actions,), np.uint8),
                OBS_KEY: env.single_observation_space,
            }
        )
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Reset the env; observations with their masks."""
        obs, info = self.env.reset(seed=seed, options=options)
        return self._observe(obs), self._keep(info)

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step the env; observations with their masks."""
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        return self._observe(obs), rewards, terminated, truncated, self._keep(info)

    def _observe(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        masks = self.env.action_masks()
        return {MASK_KEY: masks.view(np.uint8), OBS_KEY: obs}

    @staticmethod
    def _keep(info: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in info.items() if k.lstrip("_") in KEPT_INFO}


def runner_env_config(config: TrainConfig, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The ``env_config`` RLlib hands to ``make_runner_env`` (plain data: it goes to workers)."""
    sources = split_sources(config.env.levels)
    n_envs = envs_per_runner(config)
    if n_envs < len(sources):
        raise ValueError(
            f"rllib.envs_per_runner {n_envs} is fewer than the {len(sources)} level sources"
        )
    return {
        "env_id": config.env.env_id,
        "sources": list(sources),
        "env_kwargs": dict(env_kwargs),
        "max_episode_steps": config.env.max_episode_steps,
    }


def make_runner_env(env_config: dict[str, Any]) -> ActionMaskObservations:
    """The vector env of one RLlib env runner: native soko-gym vector envs, masks in the obs.

    ``env_config`` is ``runner_env_config`` output plus RLlib's ``num_envs``; with several
    sources (``a+b``) the envs are split as evenly as possible, the first sources getting the
    remainder, as in ``agents.training.env``.
    """
    from soko_gym.envs.vector import make_vec

    sources = list(env_config["sources"])
    num_envs = int(env_config.get("num_envs", 1))
    if num_envs < len(sources):
        raise ValueError(f"num_envs {num_envs} is fewer than the {len(sources)} level sources")
    kwargs = env_args(env_config["env_kwargs"])
    if env_config.get("max_episode_steps") is not None:
        kwargs["max_episode_steps"] = int(env_config["max_episode_steps"])
    share, extra = divmod(num_envs, len(sources))
    parts = [
        make_vec(env_config["env_id"], share + int(i < extra), levels=source, **kwargs)
        for i, source in enumerate(sources)
    ]
    for part in parts:
        if part.metadata["autoreset_mode"] != AutoresetMode.NEXT_STEP:
            raise ValueError("RLlib's env runners need next-step autoreset")
    return ActionMaskObservations(parts[0] if len(parts) == 1 else MixedVectorEnv(parts))


def envs_per_runner(config: TrainConfig) -> int:
    """Sub-envs of each env runner: ``rllib.envs_per_runner``, else ``n_envs`` split up."""
    if config.rllib.envs_per_runner:
        return int(config.rllib.envs_per_runner)
    runners = max(1, config.rllib.env_runners)
    return max(1, -(-config.n_envs // runners))


def _runner_env_name(runner: Any) -> str:
    """The class of the vector env an env runner steps, "" when it is not soko-gym's own."""
    from soko_gym.envs.vector import SokobanVectorEnv

    env = runner.env.unwrapped
    parts = env.parts if isinstance(env, MixedVectorEnv) else [env]
    names = [type(p).__name__ if isinstance(p, SokobanVectorEnv) else "" for p in parts]
    return "" if not all(names) else "+".join(names)


def check_runner_envs(algo: Any) -> list[str]:
    """The vector env class of every env runner that samples, checked to be a native one.

    Raises:
        RuntimeError: when a runner steps anything but soko-gym's numba vector envs (an RLlib
            version that stopped honouring ``gym_env_vectorize_mode``).
    """
    group = algo.env_runner_group
    remote = group.num_remote_env_runners() > 0
    names = list(group.foreach_env_runner(_runner_env_name, local_env_runner=not remote))
    if not names or not all(names):
        raise RuntimeError(
            "RLlib's env runners do not step soko-gym's native vector envs "
            f"({names}); the env creator was bypassed"
        )
    return names
