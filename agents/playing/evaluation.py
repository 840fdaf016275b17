"""Evaluation of SB3 models on fixed held-out levels: each level played once, greedily.

Runs on soko-gym's native vector env (``make_eval_env``); ``act`` gives maskable models
(MaskablePPO) the env's action masks and other models none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.playing.act import act_state, uses_masks
from agents.training.config import env_args


@dataclass
class EvalResult:
    """Greedy play of each held-out level once.

    Attributes:
        n_levels: levels played.
        solve_rate: share solved within the step limit.
        mean_pushes: mean pushes of the solved episodes (nan when none).
        mean_reward: mean episode return.
        mean_length: mean episode length (actions).
        solved: bool[n_levels] per level.
    """

    n_levels: int
    solve_rate: float
    mean_pushes: float
    mean_reward: float
    mean_length: float
    solved: np.ndarray


def make_eval_env(
    env_id: str,
    levels: list[Any],
    env_kwargs: dict[str, Any],
    max_steps: int | None,
    n_envs: int = 100,
) -> Any:
    """A native vector env over fixed ``levels`` for ``evaluate``."""
    from soko_gym.envs.vector import make_vec

    kwargs = env_args(env_kwargs)
    if max_steps is not None:
        kwargs["max_episode_steps"] = max_steps
    return make_vec(env_id, min(n_envs, len(levels)), levels=levels, **kwargs)


def evaluate(model: Any, venv: Any, n_levels: int, deterministic: bool = True) -> EvalResult:
    """Play levels ``0 .. n_levels - 1`` of ``venv`` (from ``make_eval_env``) once each."""
    k = venv.num_envs
    masked = uses_masks(model)
    solved = np.zeros(n_levels, dtype=bool)
    pushes = np.zeros(n_levels)
    rewards = np.zeros(n_levels)
    lengths = np.zeros(n_levels)
    for start in range(0, n_levels, k):
        n_real = min(k, n_levels - start)
        idx = (start + np.arange(k)) % n_levels
        # seeded: slots whose episode ended play on in levels the env draws, and a sampling
        # policy's draws there would otherwise change the recorded episodes from run to run
        obs, _ = venv.reset(seed=0, options={"level_index": idx})
        active = np.arange(k) < n_real
        ret = np.zeros(k)
        length = np.zeros(k)
        state, starts = None, np.ones(k, dtype=bool)
        while active.any():
            masks = venv.action_masks() if masked else None
            actions, state = act_state(model, obs, masks, deterministic, state, starts)
            obs, r, term, trunc, info = venv.step(actions)
            starts = term | trunc
            ret[active] += r[active]
            length[active] += 1
            done = (term | trunc) & active
            for i in np.flatnonzero(done).tolist():
                j = start + i
                solved[j] = bool(info["solved"][i])
                pushes[j] = info["pushes"][i]
                rewards[j], lengths[j] = ret[i], length[i]
            active &= ~done
    return EvalResult(
        n_levels=n_levels,
        solve_rate=float(solved.mean()) if n_levels else float("nan"),
        mean_pushes=float(pushes[solved].mean()) if solved.any() else float("nan"),
        mean_reward=float(rewards.mean()),
        mean_length=float(lengths.mean()),
        solved=solved,
    )
