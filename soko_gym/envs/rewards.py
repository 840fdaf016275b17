"""Reward schemes: named coefficient sets ("boxoban", "sparse"), custom coefficients, callables.

A coefficient scheme is evaluated inside the step kernels (so vector envs stay fast); a callable
receives a ``StepOutcome`` (scalars in single envs, arrays in vector envs) and returns the reward.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class RewardScheme:
    """Linear reward: step + box_on * boxes onto goals + box_off * boxes off goals + solved.

    Attributes:
        step: paid on every action, legal or not (negative: a penalty).
        box_on: per box pushed onto a goal.
        box_off: per box pushed off a goal.
        solved: when the level becomes solved.
    """

    step: float
    box_on: float
    box_off: float
    solved: float

    def as_array(self) -> np.ndarray:
        """float64[4] coefficients in field order, for the kernels."""
        return np.array([self.step, self.box_on, self.box_off, self.solved], dtype=np.float64)


REWARD_SCHEMES = {
    # Boxoban / gym-sokoban values, so results compare with published ones
    "boxoban": RewardScheme(step=-0.1, box_on=1.0, box_off=-1.0, solved=10.0),
    "sparse": RewardScheme(step=0.0, box_on=0.0, box_off=0.0, solved=1.0),
}


@dataclass(frozen=True)
class StepOutcome:
    """What one action did, as a custom reward callable sees it.

    Attributes:
        boxes_on_goal_before: boxes on goals before the action.
        boxes_on_goal: boxes on goals after it.
        n_boxes: boxes in the level.
        solved: whether the level is solved after it.
        moves: player moves the action made (walks and pushes).
        pushes: pushes the action made.
        illegal_action: whether the action was illegal (and so changed nothing).
        deadlock: whether a simple deadlock was detected (only with deadlock_termination).
    """

    boxes_on_goal_before: Any
    boxes_on_goal: Any
    n_boxes: Any
    solved: Any
    moves: Any
    pushes: Any
    illegal_action: Any
    deadlock: Any


RewardFn = Callable[[StepOutcome], Any]


def resolve_reward(scheme: str | RewardScheme | RewardFn) -> tuple[np.ndarray, RewardFn | None]:
    """Coefficients for the kernels and the callable, if any, for a ``reward_scheme`` argument.

    A callable gets all-zero coefficients: its value replaces the kernel's reward.

    Raises:
        ValueError: for an unknown scheme name or another type.
    """
    if isinstance(scheme, str):
        if scheme not in REWARD_SCHEMES:
            raise ValueError(
                f"reward_scheme {scheme!r} is unknown; use one of {sorted(REWARD_SCHEMES)}, "
                "a RewardScheme or a callable"
            )
        return REWARD_SCHEMES[scheme].as_array(), None
    if isinstance(scheme, RewardScheme):
        return scheme.as_array(), None
    if callable(scheme):
        return np.zeros(4, dtype=np.float64), scheme
    raise ValueError(f"reward_scheme must be a name, a RewardScheme or a callable, got {scheme!r}")
