"""THE play loop: an agent plays levels, one episode each, and its caller records what it needs.

``play(model, env, levels, recorder)`` is the only loop that plays an agent for a record: the
held-out evaluation (``agents.playing.evaluation``), ``soko bench``
(``agents.benchmark.episodes``) and the scripts ``benchmarks/boxoban_protocol.py`` and
``benchmarks/agent_failures.py`` differ only in their ``Recorder``. The env is a native vector
env (``soko_gym.make_vec``: ``num_envs`` levels at a time) or a single gymnasium env, played as
a batch of one (``OneEnv``). Each batch of levels starts with one seeded reset
(``options={"level_index": ...}``); the policy is called through
``agents.playing.act.act_state`` (the env's masks for a maskable model, its memory passed back
with ``episode_start``) until every recorded episode of the batch has ended. A slot whose
episode ended plays on, unrecorded, in whatever level its env resets to, until the batch is
done (the vector env autoresets): seeding the reset keeps those steps, and a sampling policy's
draws in them, the same from run to run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.playing.act import act_state, uses_masks


@dataclass(frozen=True)
class Step:
    """One env step of a batch, as the recorder sees it (arrays over the ``k`` slots).

    Attributes:
        levels: int64[k], the level index each slot plays.
        active: bool[k], the slots whose episode is recorded at this step.
        actions: int64[k], the actions taken.
        rewards: float[k], the rewards.
        info: the env's info after the step (each value an array over the slots).
    """

    levels: np.ndarray
    active: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    info: dict[str, Any]


@dataclass(frozen=True)
class End:
    """A recorded episode's end.

    Attributes:
        level: its level index.
        slot: its slot in the batch, the index into ``info``'s arrays.
        length: the actions taken in the episode.
        info: the env's info after its last step; empty when ``stuck``.
        stuck: the episode ended before an action because its mask left none legal
            (``play(..., end_stuck=True)`` only).
    """

    level: int
    slot: int
    length: int
    info: dict[str, Any]
    stuck: bool = False


class Recorder:
    """The hook of ``play``: what its caller records. Both methods do nothing here."""

    def step(self, step: Step) -> None:
        """Called after every env step of a batch (recorded slots in ``step.active``)."""

    def end(self, end: End) -> None:
        """Called when a recorded episode ends, after that step's ``step`` call."""


class OneEnv:
    """A single gymnasium env as a batch of one: arrays in and out, as a vector env's.

    Info values become one-element object arrays (``info["solved"][0]``), so a recorder reads
    a single env's info as it reads a vector env's.
    """

    num_envs = 1

    def __init__(self, env: Any) -> None:
        self.env = env

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset the env; ``options["level_index"]`` may be a one-element array."""
        options = dict(options or {})
        if "level_index" in options:
            options["level_index"] = int(np.asarray(options["level_index"]).reshape(-1)[0])
        obs, info = self.env.reset(seed=seed, options=options)
        return np.asarray(obs)[None], _batch_of_one(info)

    def action_masks(self) -> np.ndarray:
        """bool[1, n_actions]: the env's action mask."""
        return np.asarray(self.env.get_wrapper_attr("action_masks")())[None]

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step with ``actions[0]``."""
        obs, reward, terminated, truncated, info = self.env.step(int(actions[0]))
        return (
            np.asarray(obs)[None],
            np.array([reward]),
            np.array([terminated]),
            np.array([truncated]),
            _batch_of_one(info),
        )


def _batch_of_one(info: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in info.items():
        cell = np.empty(1, dtype=object)
        cell[0] = value
        out[key] = cell
    return out


def play(
    model: Any,
    env: Any,
    levels: Iterable[int],
    recorder: Recorder,
    *,
    seed: int | None = 0,
    deterministic: bool = True,
    masked: bool | None = None,
    end_stuck: bool = False,
) -> None:
    """Play one episode of each level of ``levels`` (indices into the env's levels).

    Args:
        model: anything with SB3's ``predict`` (SB3 models, ``PlannerPolicy``, the wrappers of
            ``agents.playing``, RLlib's ``MaskedPolicy``).
        env: a native vector env, or a single gymnasium env (a batch of one, ``OneEnv``); its
            episode limit is the episodes' budget.
        levels: the level indices, played ``env.num_envs`` at a time in this order.
        recorder: the caller's hook, told every step and every episode's end.
        seed: the seed of each batch's reset.
        deterministic: the policy's most likely actions, else sampled ones.
        masked: give the model the env's action masks; None: when its ``predict`` takes them
            (``agents.playing.act.uses_masks``; a caller that knows, as ``soko bench`` from the
            loaded agent, says so, so a wrapped ``predict(*args, **kwargs)`` gets them too).
        end_stuck: end an episode, as ``End.stuck``, when its mask leaves no legal action
            (masked models only); otherwise the model is asked anyway.
    """
    import gymnasium as gym

    if isinstance(env, gym.Env):
        env = OneEnv(env)
    masked = uses_masks(model) if masked is None else masked
    order = np.fromiter(levels, dtype=np.int64)
    n, k = len(order), int(env.num_envs)
    for start in range(0, n, k):
        slots = order[(start + np.arange(k)) % n]
        obs, _ = env.reset(seed=seed, options={"level_index": slots})
        active = np.arange(k) < min(k, n - start)
        lengths = np.zeros(k, dtype=np.int64)
        state, starts = None, np.ones(k, dtype=bool)
        while active.any():
            masks = env.action_masks() if masked else None
            if end_stuck and masks is not None:
                stuck = active & ~np.asarray(masks, dtype=bool).reshape(k, -1).any(axis=1)
                for i in np.flatnonzero(stuck).tolist():
                    recorder.end(End(int(slots[i]), i, int(lengths[i]), {}, stuck=True))
                active &= ~stuck
                if not active.any():
                    break
            actions, state = act_state(model, obs, masks, deterministic, state, starts, masked)
            actions = actions.reshape(k)
            obs, rewards, terminated, truncated, info = env.step(actions)
            starts = np.asarray(terminated | truncated, dtype=bool)
            lengths[active] += 1
            recorder.step(Step(slots, active.copy(), actions, np.asarray(rewards), info))
            done = starts & active
            for i in np.flatnonzero(done).tolist():
                recorder.end(End(int(slots[i]), i, int(lengths[i]), info))
            active &= ~done
