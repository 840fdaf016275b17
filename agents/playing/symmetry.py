"""The board's symmetries: rotations and reflections of samples, in training and in play.

Sokoban's rules do not care which way is up: a level turned by a quarter or mirrored is a
level of the same difficulty, and the expert's push turned with it is still the expert's push.
Cloning on every sample in a random one of the frame's symmetries (8 on a square frame, 4 on
a rectangular one: the half turn and the two mirrors) teaches the network what it would
otherwise have to learn eight times. A symmetry moves the observation planes, and permutes
the actions: a push action (``square * 4 + direction``) moves its square and turns its
direction; a move action turns its direction (the Move env's no-op stays). In play,
``SymmetryAveraged`` asks a trained policy about every view of the board at once and averages
its answers (``symmetry_averaged(agent)``; ``--symmetric`` in ``soko bench`` and the
benchmarks). Needs torch (the ``rl`` extra) for ``Symmetries.apply`` and ``SymmetryAveraged``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from agents.playing.act import masked_log_probs, policy_log_probs, sample_action, uses_masks
from soko_gym.engine.constants import DIRECTION_DELTAS, N_DIRECTIONS


@dataclass(frozen=True)
class Symmetry:
    """One symmetry of an ``H x W`` frame: ``k`` quarter turns (``np.rot90``), then a mirror.

    Attributes:
        turns: quarter turns counterclockwise, as ``np.rot90(planes, turns, axes=(-2, -1))``.
        mirror: then reverse the columns.
        actions: int64[n_actions]: the action a sample's action becomes.
    """

    turns: int
    mirror: bool
    actions: np.ndarray

    def planes(self, planes: np.ndarray) -> np.ndarray:
        """``planes`` (``[..., H, W]``) seen through the symmetry."""
        out = np.rot90(planes, self.turns, axes=(-2, -1))
        return out[..., ::-1] if self.mirror else out


MOVE_ACTION_COUNTS = (N_DIRECTIONS, N_DIRECTIONS + 1)  # the Move env's: 4 steps (+ the no-op)


def _turn_direction(direction: int, turns: int, mirror: bool) -> int:
    """The direction ``direction`` becomes under the symmetry."""
    dr, dc = DIRECTION_DELTAS[direction]
    for _ in range(
        turns
    ):  # np.rot90 takes (r, c) to (W - 1 - c, r): a vector (dr, dc) to (-dc, dr)
        dr, dc = -dc, dr
    if mirror:
        dc = -dc
    return DIRECTION_DELTAS.index((dr, dc))


def action_kind(height: int, width: int, n_actions: int) -> str:
    """The action space of an action count: "push" (``4 * H * W``) or "move" (4, or 5).

    Raises:
        ValueError: for any other action space (the Macro env's actions have no such symmetry
            here).
    """
    if n_actions == N_DIRECTIONS * height * width:
        return "push"
    if n_actions in MOVE_ACTION_COUNTS:
        return "move"
    raise ValueError(
        f"symmetry augmentation is for the Push env ({N_DIRECTIONS * height * width} actions on "
        f"a {height}x{width} frame) and the Move env (4 or 5 actions), got {n_actions} actions"
    )


def symmetries(height: int, width: int, n_actions: int) -> list[Symmetry]:
    """Every symmetry of the frame, the identity first: 8 when square, else 4.

    Raises:
        ValueError: for an action space without these symmetries (``action_kind``).
    """
    kind = action_kind(height, width, n_actions)
    grid = np.arange(height * width).reshape(height, width)
    out = []
    for turns in range(4) if height == width else (0, 2):
        for mirror in (False, True):
            moved = np.rot90(grid, turns)
            moved = moved[:, ::-1] if mirror else moved
            where = np.empty(height * width, dtype=np.int64)  # a square's index after the move
            where[moved.ravel()] = np.arange(height * width)
            turn = np.array([_turn_direction(d, turns, mirror) for d in range(N_DIRECTIONS)])
            if kind == "push":
                squares, dirs = np.divmod(np.arange(n_actions), N_DIRECTIONS)
                actions = where[squares] * N_DIRECTIONS + turn[dirs]
            else:
                actions = np.arange(n_actions)
                actions[:N_DIRECTIONS] = turn
            out.append(Symmetry(turns, mirror, actions.astype(np.int64)))
    return out


class Symmetries:
    """Random symmetries of torch minibatches (observations, actions, action masks).

    Args:
        obs_shape: ``(C, H, W)`` of the observations.
        n_actions: the action count (Push or Move env).

    Raises:
        ValueError: for an action space without these symmetries.
    """

    def __init__(self, obs_shape: tuple[int, ...], n_actions: int) -> None:
        import torch

        _, height, width = obs_shape
        self.all = symmetries(int(height), int(width), int(n_actions))
        self._actions = [torch.as_tensor(s.actions) for s in self.all]
        # mask after the move: column a' holds the old column a with actions[a] = a'
        self._inverse = [torch.as_tensor(np.argsort(s.actions)) for s in self.all]

    def apply(
        self, obs: Any, actions: Any, masks: Any, rng: np.random.Generator, soft: Any = None
    ) -> tuple:
        """Each sample under a symmetry drawn at random (the identity among them).

        Returns (obs, actions, masks, soft): ``soft`` (per-action labels, or None) is mapped
        as the masks are.
        """
        import torch

        pick = rng.integers(len(self.all), size=len(actions))
        obs, actions, masks = obs.clone(), actions.clone(), masks.clone()
        soft = None if soft is None else soft.clone()
        for j, sym in enumerate(self.all):
            rows = torch.as_tensor(np.flatnonzero(pick == j))
            if j == 0 or len(rows) == 0:
                continue
            planes = torch.rot90(obs[rows], sym.turns, dims=(-2, -1))
            obs[rows] = planes.flip(-1) if sym.mirror else planes
            actions[rows] = self._actions[j][actions[rows]]
            masks[rows] = masks[rows][:, self._inverse[j]]
            if soft is not None:
                soft[rows] = soft[rows][:, self._inverse[j]]
        return obs, actions, masks, soft


class SymmetryAveraged:
    """A policy played through every symmetry of its frame at once (test-time averaging).

    A network trained on random symmetries still answers a board and its turned copy a little
    differently; averaging its log-probabilities over the frame's 8 (or 4) views, each mapped
    back to the board's own actions, gives one answer that no single view's quirk decides.
    The wrapped model keeps its weights; only ``predict`` changes, and it costs one forward
    pass per view. Works for SB3 actor-critic models (PPO, MaskablePPO) on the Push and Move
    envs; masked actions are never chosen.

    Args:
        model: an SB3 model whose ``policy.get_distribution`` gives categorical logits; its
            observation space (``(C, H, W)`` planes) and action count give the symmetries.

    Raises:
        ValueError: for a model without a categorical policy distribution, or an action space
            without these symmetries (``action_kind``).
    """

    def __init__(self, model: Any) -> None:
        import torch

        policy = getattr(model, "policy", None)
        if policy is None or not hasattr(policy, "get_distribution"):
            raise ValueError(
                f"symmetry averaging needs an actor-critic SB3 model (PPO, MaskablePPO), got "
                f"{type(model).__name__}"
            )
        _, height, width = model.observation_space.shape
        self.model = model
        self._masked = uses_masks(model)
        self.all = symmetries(int(height), int(width), int(model.action_space.n))
        self._actions = [torch.as_tensor(s.actions) for s in self.all]
        self.observation_space = model.observation_space
        self.action_space = model.action_space
        self._rng = np.random.default_rng()

    def set_random_seed(self, seed: int | None = None) -> None:
        """Seed the sampling of actions (``deterministic=False``), as SB3 models do."""
        self._rng = np.random.default_rng(seed)
        self.model.set_random_seed(seed)

    def log_probs(self, obs: np.ndarray) -> np.ndarray:
        """float[n, n_actions]: the views' mean log-probability of each of the board's actions."""
        import torch

        policy = self.model.policy
        obs = np.asarray(obs)
        single = obs.ndim == 3
        batch = obs[None] if single else obs
        total = None
        with torch.no_grad():
            for sym, actions in zip(self.all, self._actions, strict=True):
                view = np.ascontiguousarray(sym.planes(batch))
                # the board's action a is the view's action actions[a]
                lp = policy_log_probs(policy, view)[:, actions]
                total = lp if total is None else total + lp
        out = (total / len(self.all)).cpu().numpy()
        return out[0] if single else out

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
        action_masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray, None]:
        """Actions as SB3's ``predict`` gives them: the most likely one, or a sample.

        ``action_masks`` count only for a model that takes them (MaskablePPO), as in its own
        ``predict``.
        """
        lp = self.log_probs(observation)
        lp = masked_log_probs(lp, action_masks if self._masked else None)
        if deterministic:
            return np.asarray(lp.argmax(axis=-1)), None
        picks = np.array([sample_action(row, self._rng) for row in np.atleast_2d(lp)])
        return (picks[0] if lp.ndim == 1 else picks), None


def symmetry_averaged(agent: Any) -> Any:
    """A copy of a loaded agent (``agents.playing.models.LoadedAgent``): ``SymmetryAveraged``.

    Raises:
        ValueError: as ``SymmetryAveraged``.
    """
    return replace(agent, model=SymmetryAveraged(agent.model))
