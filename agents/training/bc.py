"""Behaviour cloning, written in house: masked cross-entropy on an SB3 policy's action logits.

The expert's action at each observation is the target (or, for samples that carry one, a
distribution over the actions: ``BCData.soft``); illegal actions (from the dataset's action
masks) are removed from the softmax, so the loss only ranks legal actions. The value
head can learn the discounted returns of the expert episodes at the same time, so that PPO
fine-tuning starts with a critic that already knows solved positions are worth reaching.
Datasets come from ``soko collect`` (``agents.expert.datasets``: npz or Minari) or any arrays
``(observations, actions, action_masks)`` given as ``BCData``. Needs the ``rl`` extra.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.training.config import BCConfig

HISTORY_COLUMNS = ("step", "loss", "value_loss", "accuracy", "val_accuracy", "chance")


@dataclass
class BCData:
    """Expert samples.

    Attributes:
        observations: uint8[N, C, H, W] observations.
        actions: int64[N] the expert's action at each.
        action_masks: bool[N, n_actions] legal actions at each.
        returns: float32[N] discounted return from each observation on, or None.
        episodes: int64[N] episode of each sample (for the validation split), or None.
        soft: float32[M, n_actions] soft labels (distributions over the actions, e.g.
            ``agents.training.labels.ranked_targets``), or None; a sample with one is cloned toward
            it instead of toward its one action.
        soft_rows: int64[N] each sample's row of ``soft``, -1 for none (its action, one-hot).
    """

    observations: np.ndarray
    actions: np.ndarray
    action_masks: np.ndarray
    returns: np.ndarray | None = None
    episodes: np.ndarray | None = None
    soft: np.ndarray | None = None
    soft_rows: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.actions)
        if len(self.observations) != n or len(self.action_masks) != n:
            raise ValueError(
                f"BCData arrays differ in length: {len(self.observations)} observations, "
                f"{n} actions, {len(self.action_masks)} masks"
            )
        if n == 0:
            raise ValueError("BCData is empty: the dataset has no expert steps")
        if not self.action_masks[np.arange(n), self.actions].all():
            raise ValueError("BCData has expert actions that its action masks call illegal")
        if (self.soft is None) != (self.soft_rows is None):
            raise ValueError("BCData needs soft and soft_rows together")
        if self.soft is not None and self.soft_rows is not None:
            if self.soft.ndim != 2 or self.soft.shape[1] != self.action_masks.shape[1]:
                raise ValueError(
                    f"BCData soft labels must be [M, {self.action_masks.shape[1]}], "
                    f"got {self.soft.shape}"
                )
            rows = self.soft_rows
            if rows.shape != (n,) or rows.min() < -1 or rows.max() >= len(self.soft):
                raise ValueError("BCData soft_rows must give each sample a row of soft or -1")

    def targets(self, rows: np.ndarray) -> np.ndarray | None:
        """float32[len(rows), n_actions] label distributions of ``rows`` (None without soft)."""
        if self.soft is None or self.soft_rows is None:
            return None
        out = np.zeros((len(rows), self.action_masks.shape[1]), dtype=np.float32)
        out[np.arange(len(rows)), self.actions[rows]] = 1.0
        picked = self.soft_rows[rows]
        has = picked >= 0
        out[has] = self.soft[picked[has]]
        return out

    def subset(self, rows: np.ndarray) -> BCData:
        """The samples ``rows``."""

        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[rows]

        return BCData(
            self.observations[rows],
            self.actions[rows],
            self.action_masks[rows],
            pick(self.returns),
            pick(self.episodes),
            self.soft,
            pick(self.soft_rows),
        )


def bc_data_from_episodes(episodes: Sequence[Any], gamma: float = 0.97) -> BCData:
    """Samples of ``agents.expert.datasets.Episode``-like objects.

    Each episode's observations and masks have one more row than its actions (the last is
    dropped); its rewards give the discounted returns.
    """
    obs, actions, masks, returns, ids = [], [], [], [], []
    for k, ep in enumerate(episodes):
        t = len(ep.actions)
        if t == 0:
            continue
        obs.append(np.asarray(ep.observations[:t]))
        actions.append(np.asarray(ep.actions, dtype=np.int64))
        masks.append(np.asarray(ep.action_masks[:t], dtype=bool))
        rewards = np.asarray(ep.rewards, dtype=np.float64)
        ret = np.zeros(t)
        acc = 0.0
        for i in range(t - 1, -1, -1):
            acc = rewards[i] + gamma * acc
            ret[i] = acc
        returns.append(ret.astype(np.float32))
        ids.append(np.full(t, k, dtype=np.int64))
    if not actions:
        raise ValueError("the dataset has no expert steps")
    return BCData(
        np.concatenate(obs),
        np.concatenate(actions),
        np.concatenate(masks),
        np.concatenate(returns),
        np.concatenate(ids),
    )


def load_bc_data(
    dataset: str | Path, env_id: str, gamma: float = 0.97
) -> tuple[BCData, dict[str, Any]]:
    """Expert samples of ``soko collect`` datasets and the env settings they fix.

    Args:
        dataset: an npz path or Minari id, or several joined by commas (their episodes are
            pooled; they must share the observation frame).
        env_id: the env the policy is for; every dataset must come from that kind of env.
        gamma: discount of the returns the value head learns.

    Returns:
        (samples, ``{"obs_size": (H, W), "dead_plane": bool, "trail_plane": bool}``: the
        observation the policy must be built for).

    Raises:
        ValueError: when a dataset was collected in another kind of env than ``env_id``, or
            the datasets' observations differ in shape.
    """
    from agents.expert.datasets import load_dataset

    episodes: list[Any] = []
    shape = None
    for name in str(dataset).split(","):
        ds = load_dataset(name)
        if ds.env_id.replace("-Gen", "") != env_id.replace("-Gen", ""):
            raise ValueError(f"dataset {name} was collected in {ds.env_id}, not in {env_id}")
        if ds.episodes:
            this = tuple(np.asarray(ds.episodes[0].observations).shape[1:])
            if shape is not None and this != shape:
                raise ValueError(f"dataset {name} has observations {this}, the others {shape}")
            shape = this
        episodes += ds.episodes
    data = bc_data_from_episodes(episodes, gamma)
    from soko_gym.engine.constants import N_PLANES

    n_planes, height, width = data.observations.shape[1:]
    frame = {"obs_size": (int(height), int(width)), "dead_plane": n_planes > N_PLANES}
    return data, {**frame, "trail_plane": n_planes > N_PLANES + 1}


def policy_outputs(policy: Any, obs: Any) -> tuple[Any, Any]:
    """(action logits float[B, n_actions], values float[B]) of an SB3 actor-critic policy."""
    features = policy.extract_features(obs)
    if isinstance(features, tuple):
        latent_pi = policy.mlp_extractor.forward_actor(features[0])
        latent_vf = policy.mlp_extractor.forward_critic(features[1])
    else:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    return policy.action_net(latent_pi), policy.value_net(latent_vf).flatten()


def behaviour_clone(
    policy: Any,
    data: BCData,
    steps: int,
    config: BCConfig | None = None,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
    weights: np.ndarray | None = None,
) -> list[dict[str, float]]:
    """Train ``policy`` (SB3 ``ActorCriticPolicy`` or MaskablePPO's) on ``data`` in place.

    Args:
        policy: the policy; its parameters are updated by a fresh Adam optimizer.
        data: the expert samples (observation shape and action count must fit the policy).
        steps: gradient steps.
        config: batch size, learning rate (and its linear fall to ``lr_end``), value loss
            weight, validation share, log interval, symmetry augmentation.
        seed: seeds the validation split, the minibatches and the symmetries drawn.
        log: receives a progress line every ``config.log_every`` steps.
        weights: when given, float[N] non-negative sampling weights: minibatches are drawn
            with replacement in proportion to them instead of passing over the samples.

    Returns:
        One row per ``log_every`` steps: step, loss, value_loss, accuracy (training
        minibatches since the last row), val_accuracy (held-out episodes; nan without),
        chance (accuracy of a uniform choice among the legal actions).
    """
    import torch
    from torch.nn import functional as F

    config = config or BCConfig()
    obs_shape = tuple(policy.observation_space.shape)
    n_actions = int(policy.action_space.n)
    if data.observations.shape[1:] != obs_shape or data.action_masks.shape[1] != n_actions:
        raise ValueError(
            f"the dataset's observations {data.observations.shape[1:]} and "
            f"{data.action_masks.shape[1]} actions do not fit the policy's {obs_shape} and "
            f"{n_actions}"
        )
    rng = np.random.default_rng(seed)
    train_rows, val_rows = _split(data, config.val_fraction, rng)
    if len(val_rows):
        train, val = data.subset(train_rows), data.subset(val_rows)
    else:  # no copy of a dataset that may take gigabytes
        train, val = data, None
    cumulative = None
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (len(data.actions),) or not (weights >= 0).all() or not weights.sum():
            raise ValueError("weights must be one non-negative weight per sample, not all 0")
        cumulative = np.cumsum(weights[train_rows])
        if not cumulative[-1] > 0:
            raise ValueError("weights are 0 on every training sample (all weight held out)")
    augment = None
    if config.augment:
        from agents.playing.symmetry import Symmetries

        augment = Symmetries(obs_shape, n_actions)
    chance = float(np.mean(1.0 / train.action_masks.sum(axis=1)))
    use_value = config.value_coef > 0 and train.returns is not None
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate)
    schedule = None
    if config.lr_end is not None:
        lr0, lr1 = config.learning_rate, config.lr_end
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda i: 1.0 + (lr1 / lr0 - 1.0) * min(i / max(steps - 1, 1), 1.0)
        )
    policy.set_training_mode(True)
    history: list[dict[str, float]] = []
    order = np.zeros(0, dtype=np.int64)
    losses, vlosses, hits, seen = 0.0, 0.0, 0, 0
    n = len(train.actions)
    batch = min(config.batch_size, n)
    for step in range(1, steps + 1):
        if cumulative is not None:
            rows = np.searchsorted(cumulative, rng.random(batch) * cumulative[-1], side="right")
        else:
            if len(order) < batch:
                order = np.concatenate([order, rng.permutation(n)])
            rows, order = order[:batch], order[batch:]
        obs = torch.as_tensor(train.observations[rows])
        target = torch.as_tensor(train.actions[rows])
        mask = torch.as_tensor(train.action_masks[rows])
        soft = train.targets(rows)
        soft_t = None if soft is None else torch.as_tensor(soft)
        if augment is not None:
            obs, target, mask, soft_t = augment.apply(obs, target, mask, rng, soft_t)
        logits, values = policy_outputs(policy, obs)
        logits = logits.masked_fill(~mask, -1e9)
        if soft_t is None:
            loss = F.cross_entropy(logits, target)
        else:  # cross-entropy toward each sample's label distribution
            loss = -(soft_t * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
        vloss = torch.zeros(())
        if use_value:
            vloss = F.mse_loss(values, torch.as_tensor(train.returns[rows]))
        optimizer.zero_grad()
        (loss + config.value_coef * vloss).backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()
        if schedule is not None:
            schedule.step()
        losses += float(loss.detach()) * len(rows)
        vlosses += float(vloss.detach()) * len(rows)
        hits += _hits(logits, target, soft_t)
        seen += len(rows)
        if step % config.log_every == 0 or step == steps:
            row = {
                "step": step,
                "loss": losses / seen,
                "value_loss": vlosses / seen,
                "accuracy": hits / seen,
                "val_accuracy": accuracy(policy, val) if val is not None else float("nan"),
                "chance": chance,
            }
            history.append(row)
            if log is not None:
                log(
                    f"[bc {step}/{steps}] loss {row['loss']:.3f}, accuracy {row['accuracy']:.1%}"
                    f" (held out {row['val_accuracy']:.1%}, chance {chance:.1%})"
                )
            losses, vlosses, hits, seen = 0.0, 0.0, 0, 0
            policy.set_training_mode(True)
    policy.set_training_mode(False)
    return history


def accuracy(policy: Any, data: BCData, batch: int = 1024) -> float:
    """Share of ``data``'s samples where the policy's most likely legal action is the label's.

    With soft labels: an action the label weighs most (e.g. any of tied best pushes).
    """
    import torch

    policy.set_training_mode(False)
    hits = 0
    with torch.no_grad():
        for i in range(0, len(data.actions), batch):
            obs = torch.as_tensor(data.observations[i : i + batch])
            logits, _ = policy_outputs(policy, obs)
            logits = logits.masked_fill(~torch.as_tensor(data.action_masks[i : i + batch]), -1e9)
            soft = data.targets(np.arange(i, min(i + batch, len(data.actions))))
            target = torch.as_tensor(data.actions[i : i + batch])
            hits += _hits(logits, target, None if soft is None else torch.as_tensor(soft))
    return hits / len(data.actions)


def _hits(logits: Any, target: Any, soft: Any) -> int:
    """Rows whose argmax is the target action, or (soft labels) one the label weighs most."""
    chosen = logits.argmax(dim=1)
    if soft is None:
        return int((chosen == target).sum())
    weight = soft.gather(1, chosen[:, None])[:, 0]
    return int((weight >= soft.max(dim=1).values - 1e-6).sum())


def _split(
    data: BCData, fraction: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, validation rows): whole episodes held out, none when too few."""
    rows = np.arange(len(data.actions))
    if data.episodes is None or fraction <= 0:
        return rows, rows[:0]
    ids = np.unique(data.episodes)
    n_val = int(round(fraction * len(ids)))
    if n_val < 1 or n_val >= len(ids):
        return rows, rows[:0]
    val_ids = rng.permutation(ids)[:n_val]
    is_val = np.isin(data.episodes, val_ids)
    return rows[~is_val], rows[is_val]


def write_history(history: list[dict[str, float]], path: str | Path) -> Path:
    """Write ``behaviour_clone``'s rows as CSV."""
    path = Path(path)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=HISTORY_COLUMNS)
        writer.writeheader()
        writer.writerows(history)
    return path
