"""The training env of a run: soko-gym's SB3 vector env over one level source or several mixed.

``make_train_env`` builds a ``SokobanVecEnv`` per source of a ``+``-joined spec
(``generated:10x10:4+boxoban-unfiltered-train``: half the envs on each), each seeded apart,
joins them in a ``MixedVecEnv`` when there are several, and wraps the result in SB3's
``VecMonitor`` (episode rewards, lengths and success rates for the logs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.training.config import TrainConfig, env_args
from soko_gym.levels.spec import split_sources

RL_HINT = 'pip install "soko-gym[rl]" (install torch first, e.g. pip install torch)'
SOURCE_SEED_STRIDE = 7919  # seed of source i: seed + i * this, so mixed sources never share one


def make_train_env(config: TrainConfig, env_kwargs: dict[str, Any]) -> Any:
    """The SB3 vector env of a run: ``VecMonitor`` over one or mixed ``SokobanVecEnv``, seeded.

    With several sources (``a+b``), ``config.n_envs`` is split as evenly as possible (the
    first sources get the remainder); each source needs at least one env.
    """
    rl = require_rl()
    sources = split_sources(config.env.levels)
    if config.n_envs < len(sources):
        raise ValueError(f"n_envs {config.n_envs} is fewer than the {len(sources)} level sources")
    share, extra = divmod(config.n_envs, len(sources))
    venvs = []
    for i, source in enumerate(sources):
        kwargs = env_args(env_kwargs)
        if config.env.max_episode_steps is not None:
            kwargs["max_episode_steps"] = config.env.max_episode_steps
        n = share + int(i < extra)
        seed = config.seed + i * SOURCE_SEED_STRIDE
        venvs.append(rl.SokobanVecEnv(config.env.env_id, n, seed=seed, levels=source, **kwargs))
    venv = venvs[0] if len(venvs) == 1 else mixed_vec_env_class()(venvs)
    return rl.VecMonitor(venv)


_MIXED: list[type] = []


def mixed_vec_env_class() -> type:
    """``MixedVecEnv``: SB3 vector envs side by side as one (built on first use: SB3 is lazy)."""
    if _MIXED:
        return _MIXED[0]
    from stable_baselines3.common.vec_env import VecEnv

    class MixedVecEnv(VecEnv):
        """Several SB3 vector envs with the same spaces, stepped as one (sub-envs in order).

        ``action_masks`` (and ``env_method("action_masks")``) concatenate the parts' masks,
        so MaskablePPO trains on the mix; ``seed(s)`` seeds part i with ``s + i * 7919``.
        """

        def __init__(self, venvs: Sequence[Any]) -> None:
            first = venvs[0]
            for v in venvs[1:]:
                if v.observation_space != first.observation_space:
                    raise ValueError(
                        "mixed level sources need one observation frame: "
                        f"{v.observation_space} != {first.observation_space} (set obs_size)"
                    )
            self.venvs = list(venvs)
            sizes = [v.num_envs for v in venvs]
            self.bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
            super().__init__(sum(sizes), first.observation_space, first.action_space)

        def reset(self) -> np.ndarray:
            obs = np.concatenate([v.reset() for v in self.venvs])
            self.reset_infos = [info for v in self.venvs for info in v.reset_infos]
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            actions = np.asarray(actions)
            for v, a, b in zip(self.venvs, self.bounds, self.bounds[1:], strict=False):
                v.step_async(actions[a:b])

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
            parts = [v.step_wait() for v in self.venvs]
            obs, rewards, dones = (np.concatenate([p[k] for p in parts]) for k in range(3))
            return obs, rewards, dones, [info for p in parts for info in p[3]]

        def seed(self, seed: int | None = None) -> list[int | None]:
            out: list[int | None] = []
            for i, v in enumerate(self.venvs):
                out += v.seed(None if seed is None else seed + i * SOURCE_SEED_STRIDE)
            return out

        def close(self) -> None:
            for v in self.venvs:
                v.close()

        def action_masks(self) -> np.ndarray:
            return np.concatenate([v.action_masks() for v in self.venvs])

        def _parts(self, indices: Any) -> list[tuple[Any, list[int]]]:
            """(part, local indices) for global sub-env ``indices``, in order."""
            out = []
            for v, a, b in zip(self.venvs, self.bounds, self.bounds[1:], strict=False):
                local = [i - a for i in self._get_indices(indices) if a <= i < b]
                if local:
                    out.append((v, local))
            return out

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return [x for v, loc in self._parts(indices) for x in v.get_attr(attr_name, loc)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            for v, loc in self._parts(indices):
                v.set_attr(attr_name, value, loc)

        def env_method(
            self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any
        ) -> list[Any]:
            return [
                x
                for v, loc in self._parts(indices)
                for x in v.env_method(method_name, *args, indices=loc, **kwargs)
            ]

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [
                x for v, loc in self._parts(indices) for x in v.env_is_wrapped(wrapper_class, loc)
            ]

        def get_images(self) -> Sequence[np.ndarray | None]:
            return [img for v in self.venvs for img in v.get_images()]

    _MIXED.append(MixedVecEnv)
    return MixedVecEnv


def require_rl() -> Any:
    """A namespace of the SB3 pieces used here, or an ImportError naming the ``rl`` extra."""
    try:
        import torch
        from sb3_contrib import MaskablePPO
        from stable_baselines3 import DQN, PPO
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.logger import configure
        from stable_baselines3.common.vec_env import VecMonitor

        from soko_gym.envs.sb3 import SokobanVecEnv
    except ImportError as err:
        raise ImportError(
            f"training needs torch, stable-baselines3 and sb3-contrib: {RL_HINT}"
        ) from err
    from types import SimpleNamespace

    classes = {"maskable-ppo": MaskablePPO, "ppo": PPO, "dqn": DQN}
    return SimpleNamespace(
        torch=torch,
        classes=classes,
        BaseCallback=BaseCallback,
        configure=configure,
        VecMonitor=VecMonitor,
        SokobanVecEnv=SokobanVecEnv,
    )
