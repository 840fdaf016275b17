"""Evaluation of SB3 models on fixed held-out levels: each level played once, greedily.

Runs on soko-gym's native vector env (``make_eval_env``) through THE play loop
(``agents.playing.loop``): maskable models (MaskablePPO) get the env's action masks, other
models none; ``EvalRecorder`` is what the evaluation records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.playing.loop import End, Recorder, Step, play
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


class EvalRecorder(Recorder):
    """What ``evaluate`` records of each level's episode: solved, pushes, return and length."""

    def __init__(self, n_levels: int) -> None:
        self.solved = np.zeros(n_levels, dtype=bool)
        self.pushes = np.zeros(n_levels)
        self.rewards = np.zeros(n_levels)
        self.lengths = np.zeros(n_levels)

    def step(self, step: Step) -> None:
        """Add the recorded slots' rewards to their levels' returns."""
        self.rewards[step.levels[step.active]] += step.rewards[step.active]

    def end(self, end: End) -> None:
        """Keep the episode's outcome under its level."""
        self.solved[end.level] = bool(end.info["solved"][end.slot])
        self.pushes[end.level] = end.info["pushes"][end.slot]
        self.lengths[end.level] = end.length

    def result(self) -> EvalResult:
        """The levels' figures so far."""
        n, solved = len(self.solved), self.solved
        return EvalResult(
            n_levels=n,
            solve_rate=float(solved.mean()) if n else float("nan"),
            mean_pushes=float(self.pushes[solved].mean()) if solved.any() else float("nan"),
            mean_reward=float(self.rewards.mean()),
            mean_length=float(self.lengths.mean()),
            solved=solved,
        )


def evaluate(model: Any, venv: Any, n_levels: int, deterministic: bool = True) -> EvalResult:
    """Play levels ``0 .. n_levels - 1`` of ``venv`` (from ``make_eval_env``) once each.

    The play loop (``agents.playing.loop.play``) resets every batch with seed 0.
    """
    recorder = EvalRecorder(n_levels)
    play(model, venv, range(n_levels), recorder, seed=0, deterministic=deterministic)
    return recorder.result()
