"""Play a policy with a memory of the boards it has met this episode.

A greedy (deterministic) policy in a deterministic env that meets a board it has already
seen takes the same action again, and from there walks the same cycle until the step limit:
one board repeated is a lost episode, however solvable the board. The cloned Move agent
loses most of its unsolved levels this way (a short walk back and forth in a solvable
position). ``RepeatAware`` keeps, per episode, the boards seen and the actions taken from
each; on a board met before it does not repeat itself blindly but follows a rule:

- ``"sample"``: draw the action from the policy's own distribution (at ``temperature``),
  which leaves a cycle after a few tries where the policy is unsure;
- ``"untried"``: take the policy's most likely action not yet taken from this board this
  episode (sampling as ``"sample"`` once every action has been tried).

Elsewhere it plays the policy's most likely action, as SB3's ``deterministic=True`` does. The
memory is the SB3 recurrent ``state``: ``predict`` returns it and takes it back with
``episode_start`` flags, as ``stable_baselines3.common.evaluation.evaluate_policy`` and this
project's harnesses pass them; a call without ``state`` starts with an empty memory. Works
for SB3 actor-critic models (PPO, MaskablePPO) and ``agents.playing.symmetry.SymmetryAveraged``;
masked actions are never chosen. Needs torch (the ``rl`` extra).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from agents.playing.act import masked_log_probs, policy_log_probs, sample_action, uses_masks

RULES = ("sample", "untried")

Memory = list[dict[bytes, set[int]]]  # per batch slot: board -> actions taken from it


class RepeatAware:
    """A policy that does not repeat itself on a board it has met before (module docstring).

    Args:
        model: an SB3 actor-critic model, or a ``SymmetryAveraged`` one (anything with
            ``log_probs(obs)``).
        rule: what to do on a board met before this episode: ``"sample"`` or ``"untried"``.
        temperature: of the sampling on a repeated board (1: the policy's own distribution).
        seed: of that sampling (``set_random_seed`` reseeds it).

    Raises:
        ValueError: for an unknown rule, a temperature that is not positive, or a model
            without a categorical policy distribution.
    """

    def __init__(
        self, model: Any, rule: str = "sample", temperature: float = 1.0, seed: int | None = 0
    ) -> None:
        if rule not in RULES:
            raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature!r}")
        has_log_probs = hasattr(model, "log_probs")
        policy = getattr(model, "policy", None)
        if not has_log_probs and (policy is None or not hasattr(policy, "get_distribution")):
            raise ValueError(
                f"a repeat rule needs an actor-critic SB3 model (PPO, MaskablePPO), got "
                f"{type(model).__name__}"
            )
        self.model = model
        self.rule = rule
        self.temperature = float(temperature)
        self._masked = uses_masks(model)
        self.observation_space = model.observation_space
        self.action_space = model.action_space
        self._rng = np.random.default_rng(seed)

    def set_random_seed(self, seed: int | None = None) -> None:
        """Seed the sampling, as SB3 models do."""
        self._rng = np.random.default_rng(seed)

    def log_probs(self, obs: np.ndarray) -> np.ndarray:
        """float[n, n_actions]: the policy's log-probability of each action, per observation."""
        batch = np.asarray(obs)
        if hasattr(self.model, "log_probs"):
            return np.atleast_2d(self.model.log_probs(batch))
        return policy_log_probs(self.model.policy, batch).cpu().numpy()

    def predict(
        self,
        observation: np.ndarray,
        state: Memory | None = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
        action_masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray, Memory]:
        """Actions, and the memory to pass back with the next call (SB3's recurrent API).

        Args:
            observation: ``(C, H, W)`` planes or a batch ``(N, C, H, W)``.
            state: the memory the previous call returned; None starts an empty one.
            episode_start: bool[N], True where an episode starts (its memory is cleared).
            deterministic: True plays the rule above; False samples every step, as SB3.
            action_masks: for a model that takes them (MaskablePPO), as in its own
                ``predict``.
        """
        obs = np.asarray(observation)
        single = obs.ndim == len(self.observation_space.shape)
        batch = obs[None] if single else obs
        n = batch.shape[0]
        memory: Memory = state if state is not None and len(state) == n else [{} for _ in range(n)]
        if episode_start is not None:
            for i in np.flatnonzero(np.asarray(episode_start).reshape(-1)[:n]):
                memory[i] = {}
        lp = masked_log_probs(self.log_probs(batch), action_masks if self._masked else None)
        actions = np.zeros(n, dtype=np.int64)
        for i in range(n):
            key = batch[i].tobytes()
            taken = memory[i].setdefault(key, set())
            if not deterministic:
                a = self._sample(lp[i])
            elif not taken:
                a = int(np.argmax(lp[i]))
            elif self.rule == "untried":
                a = self._untried(lp[i], taken)
            else:
                a = self._sample(lp[i])
            taken.add(a)
            actions[i] = a
        return (actions[0].reshape(()) if single else actions), memory

    def _sample(self, row: np.ndarray) -> int:
        """An action drawn from softmax(row / temperature), masked actions (-inf) excluded."""
        return sample_action(row, self._rng, self.temperature)

    def _untried(self, row: np.ndarray, taken: set[int]) -> int:
        """The most likely unmasked action not in ``taken``; a sample when there is none."""
        for a in np.argsort(-row, kind="stable").tolist():
            if not np.isfinite(row[a]):
                break
            if a not in taken:
                return int(a)
        return self._sample(row)


def repeat_aware(agent: Any, rule: str = "sample", seed: int | None = 0) -> Any:
    """A copy of a loaded agent (``agents.playing.models.LoadedAgent``) that plays ``RepeatAware``.

    Raises:
        ValueError: as ``RepeatAware``.
    """
    return replace(agent, model=RepeatAware(agent.model, rule=rule, seed=seed))
