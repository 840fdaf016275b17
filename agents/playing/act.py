"""Calling a policy: actions for a batch of observations, masks to the models that take them.

SB3's ``predict`` convention throughout (``state`` and ``episode_start`` for a policy with a
memory; ``action_masks`` only for maskable models), plus the log-probability helpers the
policy wrappers (``agents.playing.symmetry``, ``agents.playing.repeat``) share.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np


def act(
    model: Any, obs: np.ndarray, masks: np.ndarray | None, deterministic: bool = True
) -> np.ndarray:
    """Actions of ``model`` for a batch of observations; masks go to maskable models only."""
    return act_state(model, obs, masks, deterministic)[0]


def act_state(
    model: Any,
    obs: np.ndarray,
    masks: np.ndarray | None,
    deterministic: bool = True,
    state: Any = None,
    episode_start: np.ndarray | None = None,
    masked: bool | None = None,
) -> tuple[np.ndarray, Any]:
    """``act`` carrying a policy's recurrent state (SB3's ``predict`` convention).

    Pass back the returned state with ``episode_start`` (True where an episode starts) on the
    next step; a policy with a memory (``agents.playing.repeat.RepeatAware``) needs both, the
    others ignore them. ``masked`` says whether ``masks`` go to the model (None: when its
    ``predict`` takes them, ``uses_masks``).
    """
    kwargs: dict[str, Any] = {"state": state, "episode_start": episode_start}
    if masks is not None and (uses_masks(model) if masked is None else masked):
        kwargs["action_masks"] = masks
    actions, state = model.predict(obs, deterministic=deterministic, **kwargs)
    return np.asarray(actions, dtype=np.int64), state


def policy_log_probs(policy: Any, batch: np.ndarray) -> Any:
    """An SB3 actor-critic policy's log-probabilities for a batch: torch float[n, n_actions].

    No gradient; ``batch`` is the observations as the policy takes them.
    """
    import torch

    with torch.no_grad():
        tensor, _ = policy.obs_to_tensor(batch)
        return torch.log_softmax(policy.get_distribution(tensor).distribution.logits, dim=-1)


def masked_log_probs(lp: np.ndarray, action_masks: np.ndarray | None) -> np.ndarray:
    """``lp`` with the actions ``action_masks`` leaves out at -inf (unchanged without masks)."""
    if action_masks is None:
        return lp
    return np.where(np.asarray(action_masks, dtype=bool).reshape(lp.shape), lp, -np.inf)


def sample_action(row: np.ndarray, rng: np.random.Generator, temperature: float = 1.0) -> int:
    """An action drawn from softmax(row / temperature); actions at -inf (masked) never."""
    finite = np.isfinite(row)
    if not finite.any():
        return int(np.argmax(row))
    z = np.where(finite, row / temperature, -np.inf)
    p = np.exp(z - z[finite].max())
    return int(rng.choice(len(row), p=p / p.sum()))


def uses_masks(model: Any) -> bool:
    """True for models whose ``predict`` takes ``action_masks`` (MaskablePPO)."""
    return "action_masks" in inspect.signature(model.predict).parameters
