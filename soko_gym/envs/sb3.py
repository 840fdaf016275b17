"""stable-baselines3 adapter: a soko-gym native vector env as an SB3 ``VecEnv``.

SB3 and MaskablePPO then train on the numba fast path directly:
``SokobanVecEnv("Sokoban-Push-v0", 64)`` resets finished sub-envs in the same step and puts
the last observation in ``info["terminal_observation"]``, as SB3 expects. Needs the ``rl``
extra.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as err:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'stable-baselines3 is needed for soko_gym.envs.sb3: pip install "soko-gym[rl]" '
        "(install torch first, e.g. pip install torch)"
    ) from err

from soko_gym.envs.vector import SokobanVectorEnv, make_vec


class SokobanVecEnv(VecEnv):
    """An SB3 ``VecEnv`` over a soko-gym native vector env (same-step autoreset).

    Args:
        env_id: a soko-gym id ("Sokoban-Push-v0" ...) or an already built native vector env
            whose autoreset mode is SAME_STEP.
        num_envs: number of sub-envs (ignored when ``env_id`` is a vector env).
        seed: seed of the first reset (``VecEnv.seed`` sets the next one too).
        **kwargs: arguments of the env (``levels``, ``reward_scheme`` ...).

    ``env_method("action_masks")`` returns one mask per sub-env, which is what MaskablePPO
    asks for. Infos carry ``terminal_observation``, ``TimeLimit.truncated`` and, at an
    episode's end, ``is_success`` (solved).
    """

    def __init__(
        self,
        env_id: str | SokobanVectorEnv,
        num_envs: int = 1,
        *,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(env_id, SokobanVectorEnv):
            if kwargs:
                raise ValueError("pass env kwargs to the vector env, not to SokobanVecEnv")
            venv = env_id
            if venv.metadata["autoreset_mode"] != gym.vector.AutoresetMode.SAME_STEP:
                raise ValueError("the vector env must use AutoresetMode.SAME_STEP")
        else:
            venv = make_vec(
                env_id, num_envs, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP, **kwargs
            )
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self.render_mode = venv.render_mode
        self._first_seed = seed
        self._actions = np.zeros(venv.num_envs, dtype=np.int64)

    def reset(self) -> np.ndarray:
        """Reset every sub-env; uses the seed given to ``seed()`` (or the constructor) once."""
        seed = self._seeds[0] if self._seeds[0] is not None else self._first_seed
        self._first_seed = None
        options = self._options[0] or None
        obs, info = self.venv.reset(seed=seed, options=options)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions for ``step_wait``."""
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64, copy=False)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step every sub-env; finished ones are reset at once."""
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final_obs = info["final_obs"]
            final_info = info["final_info"]
            for i in np.flatnonzero(dones).tolist():
                infos[i] = {
                    "terminal_observation": final_obs[i],
                    "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                    "is_success": bool(final_info["solved"][i]),
                    "pushes": int(final_info["pushes"][i]),
                    "moves": int(final_info["moves"][i]),
                }
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        """Close the vector env."""
        self.venv.close()

    def action_masks(self) -> np.ndarray:
        """Legal actions of every sub-env: bool[num_envs, n_actions]."""
        return self.venv.action_masks()

    def get_images(self) -> Sequence[np.ndarray | None]:
        """One RGB frame per sub-env (needs ``render_mode="rgb_array"``)."""
        if self.venv.render_mode != "rgb_array":
            return [None] * self.num_envs
        return list(self.venv.render() or ())

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """Attribute of the (identical) sub-envs; ``action_masks`` gives per-env callables."""
        idx = self._indices(indices)
        if attr_name == "action_masks":
            return [self._mask_of(i) for i in idx]
        value = getattr(self.venv._template, attr_name)
        return [value for _ in idx]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Sub-envs share one configuration: setting attributes is not supported."""
        raise AttributeError(
            f"cannot set {attr_name!r}: the sub-envs of a soko-gym vector env share one "
            "configuration; build a new env instead"
        )

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call a method on each sub-env: ``action_masks`` is answered from the batch."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            masks = self.venv.action_masks()
            return [masks[i] for i in idx]
        raise AttributeError(
            f"{method_name!r} cannot be called per sub-env on a soko-gym vector env; "
            "use SokobanVecEnv.venv for the batched API"
        )

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: Any = None) -> list[bool]:
        """Sub-envs are never wrapped."""
        return [False for _ in self._indices(indices)]

    def _indices(self, indices: Any) -> Iterable[int]:
        return list(self._get_indices(indices))

    def _mask_of(self, i: int):
        return lambda: self.venv.action_masks()[i]
