"""A trained Push-env model as the policy of the policy-guided planners ("lts", "phs").

``planners.policy_search`` takes any callable ``policy(observations, masks) -> probabilities``
and imports nothing from the agents; this module makes that callable from a stable-baselines3
PPO or MaskablePPO model (``model_policy``) and runs a planner with it (``solve_with_model``),
with the frame the model was trained on (read from its observation space), so the planner shows
the model exactly the observations it saw in ``Sokoban-Push-v0``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from soko_gym.engine.constants import N_PLANES

POLICY_PLANNERS = ("lts", "phs")


def push_frame(model: Any) -> dict[str, Any]:
    """The planner options that frame levels as ``model``'s env: ``obs_size``, ``dead_plane``.

    Raises:
        ValueError: naming ``model`` when its spaces are not a Push env's planes spaces.
    """
    shape = tuple(getattr(getattr(model, "observation_space", None), "shape", None) or ())
    n = int(getattr(getattr(model, "action_space", None), "n", 0) or 0)
    if len(shape) != 3 or shape[0] not in (N_PLANES, N_PLANES + 1):
        raise ValueError(
            f"model must take planes observations uint8[C, H, W] (C = 5 or 6), got {shape}"
        )
    _, height, width = shape
    if n != 4 * height * width:
        raise ValueError(
            f"model must act in Sokoban-Push-v0 (Discrete({4 * height * width}) on a "
            f"{height}x{width} frame), got Discrete({n})"
        )
    return {"obs_size": (int(height), int(width)), "dead_plane": shape[0] > N_PLANES}


def model_policy(model: Any) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The planners' policy callable of an SB3 (Maskable)PPO model acting in the Push env.

    The callable runs the model's policy network without gradients on a batch of observations
    and returns the softmax of its action logits over the legal actions of each row (zero on
    illegal actions, zero rows where nothing is legal): ``float32[N, A]`` probabilities.

    Args:
        model: a loaded ``MaskablePPO`` or ``PPO`` model (``agents.playing.models.load_model``)
            whose env is ``Sokoban-Push-v0``.

    Raises:
        ValueError: naming ``model`` when it is not a Push-env actor-critic model.
        ImportError: naming the ``rl`` extra when torch is missing.
    """
    push_frame(model)
    policy = getattr(model, "policy", None)
    if policy is None or not hasattr(policy, "get_distribution"):
        raise ValueError(
            "model must be a stable-baselines3 PPO or MaskablePPO model, "
            f"got {type(model).__name__}"
        )
    try:
        import torch
    except ImportError as err:
        from agents.playing.models import RL_HINT

        raise ImportError(RL_HINT) from err

    def probabilities(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations)
        legal = torch.as_tensor(np.asarray(masks, dtype=bool))
        with torch.no_grad():
            tensor = policy.obs_to_tensor(obs)[0]
            logits = policy.get_distribution(tensor).distribution.logits
            logits = logits.reshape(legal.shape).masked_fill(~legal, float("-inf"))
            probs = torch.softmax(logits, dim=1)
        out = probs.cpu().numpy().astype(np.float32)
        out[~np.asarray(masks, dtype=bool).any(axis=1)] = 0.0  # no legal action: NaN rows
        return out

    return probabilities


def solve_with_model(
    level: Any,
    model: Any,
    planner: str = "lts",
    limits: Any = None,
    **options: Any,
) -> Any:
    """Solve ``level`` with a policy-guided planner guided by ``model``.

    Args:
        level: a ``Level`` or XSB text.
        model: a loaded model, or the path of a saved one (``.zip`` or ``pretrained:NAME``).
        planner: "lts" or "phs".
        limits: a ``planners.SearchLimits`` (None: no limits).
        **options: more planner options (``batch_size``); the frame comes from the model.

    Returns:
        The planner's ``SearchResult`` (a solution is verified).

    Raises:
        ValueError: naming ``planner`` or ``model`` when they are not usable here.
    """
    import planners

    if planner not in POLICY_PLANNERS:
        raise ValueError(f"planner must be one of {POLICY_PLANNERS}, got {planner!r}")
    if isinstance(model, str | Path):
        from agents.playing.models import load_model

        model = load_model(model)[0]
    frame = push_frame(model)
    return planners.solve(level, planner, limits, policy=model_policy(model), **frame, **options)
