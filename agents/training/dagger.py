"""DAgger (Ross, Gordon, Bagnell 2011) with a planner as expert: ``soko train --algo dagger``.

Each iteration rolls out the current policy in the training vector env, executing the
expert's action instead with probability ``beta_i = beta0 * decay**i``, labels the states it
visited with the planner's action (a fresh plan from the position rebuilt from the observation
planes, as ``agents.expert.policy`` reads it), adds them to every earlier iteration's samples and
clones the aggregate into the policy again (``agents.training.bc.behaviour_clone``, warm-started).
With ranked labels (``DaggerConfig.targets="ranked"``, Push env) a position is labelled with
every legal push's cost to go instead (``agents.training.labels``, one plan per push) and
cloned toward a distribution over the pushes: the policy learns which pushes lose the level,
not only which one the expert took.
Iteration 0 clones a ``soko collect`` dataset when ``bc.dataset`` is set, else rolls out the
expert (``beta_0``, 1 by default). Positions are deduplicated by ``Position.key`` before
labelling, and a position labelled once is never sent to the planner again. A position the
planner proves unsolvable ("dead") or does not solve within its time limit ("failed") gets
no label; both are counted. Labels run through ``soko_gym.execution`` (in this process,
``--jobs`` local processes or Ray), in position order, so every backend gives the same labels.

Each iteration writes a row of ``dagger.csv`` and an evaluation row (phase "dagger",
``timesteps`` = the iteration) of ``eval.csv``, and rewrites ``dagger_samples.npz``: every
position the rollouts labelled so far (``save_samples``), since labels cost planner time and
an iteration's policy is only as good as the aggregate it was cloned from. A later run takes
them back (``DaggerConfig.samples``, ``--dagger-samples``): they join its aggregate before
iteration 0 and are never labelled again. ``agents.training.train`` runs the loop, saves a
checkpoint after each iteration (``checkpoints/model_dagger_<i>.zip``, unless
``checkpoint_every`` is 0), saves the model and fine-tunes it with RL afterwards when
``bc.finetune_steps`` is set.
"""

from __future__ import annotations

import csv
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from agents.expert.policy import PlannerPolicy, PositionKey, action_space_of, read_position
from agents.playing.act import act
from agents.training.bc import BCData, accuracy, behaviour_clone
from agents.training.config import DaggerConfig, TrainConfig
from agents.training.labels import Labeller, ranked_targets
from soko_gym.execution import connect_ray

DAGGER_COLUMNS = (
    "iteration",
    "beta",
    "visited",
    "new_states",
    "labelled",
    "dead",
    "failed",
    "dataset",
    "gradient_steps",
    "train_accuracy",
    "eval_solve_rate",
    "label_seconds",
    "seconds",
)
ROLLOUT_STEP_FACTOR = 20  # env steps of a rollout at most, per state of the label budget
ACCURACY_SAMPLES = 20_000  # training accuracy on a random sample, not every sample (minutes)
SAMPLES_FILE = "dagger_samples.npz"  # the run's labelled rollout positions (``save_samples``)
SAMPLES_FORMAT = "soko-gym dagger samples 1"


@dataclass
class Rollout:
    """States one rollout visited that no earlier iteration saw (one per position).

    Attributes:
        observations: uint8[N, C, H, W] the new positions' observations.
        action_masks: bool[N, n_actions] their legal actions.
        visited: env steps taken (every state acted in, repeats included).
        expert_steps: steps where the expert's action was executed.
    """

    observations: np.ndarray
    action_masks: np.ndarray
    visited: int
    expert_steps: int


def rollout(
    model: Any,
    env: Any,
    expert: Any,
    beta: float,
    budget: int,
    seen: set[PositionKey],
    rng: np.random.Generator,
    sample: bool = True,
) -> Rollout:
    """Play ``model`` in ``env``, each action the expert's with probability ``beta``.

    The policy's actions are sampled from its distribution (``sample``), else its greedy ones.

    Whole episodes are played: once ``budget`` positions outside ``seen`` were visited, each
    env plays its episode to its end and stops collecting, so late positions of an episode
    are as likely to be kept as early ones; ``budget`` of the new positions are then drawn
    at random (and added to ``seen``). Solved positions are never collected. A rollout stops
    after ``ROLLOUT_STEP_FACTOR * budget`` env steps whatever it holds.
    """
    n = env.num_envs
    obs = env.reset()
    starts = np.ones(n, dtype=bool)
    collecting = np.ones(n, dtype=bool)
    new: dict[PositionKey, tuple[np.ndarray, np.ndarray]] = {}
    visited = expert_steps = 0
    max_steps = ROLLOUT_STEP_FACTOR * budget
    while collecting.any() and visited < max_steps:
        masks = np.asarray(env.action_masks(), dtype=bool)
        for i in np.flatnonzero(collecting).tolist():
            position = read_position(obs[i])
            key = expert.key(position)
            if key not in seen and key not in new and not position.solved:
                new[key] = (obs[i].copy(), masks[i].copy())
        actions = np.asarray(act(model, obs, masks, not sample), dtype=np.int64)
        actions = actions.reshape(n)
        pick = rng.random(n) < beta
        if pick.any():
            expert_actions, _ = expert.predict(obs[pick], episode_start=starts[pick])
            actions[pick] = expert_actions
            expert_steps += int(pick[collecting].sum())
        visited += int(collecting.sum())
        obs, _, dones, _ = env.step(actions)
        starts = np.asarray(dones, dtype=bool)
        if len(new) >= budget:
            collecting &= ~starts  # an env whose episode ended stops collecting
    keys = list(new)
    if len(keys) > budget:
        keys = [keys[j] for j in np.sort(rng.choice(len(keys), budget, replace=False))]
    seen.update(keys)
    shape = (0, *env.observation_space.shape)
    return Rollout(
        np.stack([new[k][0] for k in keys]) if keys else np.zeros(shape, dtype=np.uint8),
        np.stack([new[k][1] for k in keys])
        if keys
        else np.zeros((0, env.action_space.n), dtype=bool),
        visited,
        expert_steps,
    )


@dataclass
class Aggregate:
    """The samples of every iteration so far (observations, expert actions, legal actions)."""

    observations: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    targets: list[np.ndarray | None] = field(default_factory=list)  # soft labels, or None
    initial: int = 0  # samples of iteration 0's dataset (the first ``initial`` rows)

    def add(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        masks: np.ndarray,
        initial: bool = False,
        targets: np.ndarray | None = None,
    ) -> None:
        """Append samples (``initial``: iteration 0's dataset; ``targets``: soft labels)."""
        if len(actions):
            self.observations.append(observations)
            self.actions.append(np.asarray(actions, dtype=np.int64))
            self.masks.append(np.asarray(masks, dtype=bool))
            self.targets.append(None if targets is None else np.asarray(targets, np.float32))
            if initial:
                self.initial += len(actions)

    def __len__(self) -> int:
        return sum(len(a) for a in self.actions)

    def weights(self, new_share: float) -> np.ndarray | None:
        """Sampling weights giving the rollouts' samples ``new_share`` of each minibatch.

        None (every sample alike) when ``new_share`` is 0 or either part is empty.
        """
        n = len(self)
        new = n - self.initial
        if new_share <= 0 or new == 0 or self.initial == 0:
            return None
        w = np.full(n, (1.0 - new_share) / self.initial)
        w[self.initial :] = new_share / new
        return w

    def data(self, rollouts_only: bool = False) -> BCData:
        """The aggregate as ``BCData`` (no returns: the labels carry no episode rewards).

        ``rollouts_only``: without iteration 0's dataset (the first ``initial`` rows).
        """
        first, row = 0, 0
        if rollouts_only:  # the dataset's chunks come first (``add(..., initial=True)``)
            while row < self.initial:
                row += len(self.actions[first])
                first += 1
        chunks = range(first, len(self.actions))
        soft = [self.targets[i] for i in chunks if self.targets[i] is not None]
        n = sum(len(self.actions[i]) for i in chunks)
        soft_rows = None
        if soft:
            soft_rows = np.full(n, -1, dtype=np.int64)
            row = used = 0
            for i in chunks:
                size, targets = len(self.actions[i]), self.targets[i]
                if targets is not None:
                    soft_rows[row : row + size] = np.arange(used, used + size)
                    used += size
                row += size
        if not n:
            raise ValueError(
                "the aggregate holds no samples" + (" from rollouts" if rollouts_only else "")
            )
        return BCData(
            np.concatenate([self.observations[i] for i in chunks]),
            np.concatenate([self.actions[i] for i in chunks]),
            np.concatenate([self.masks[i] for i in chunks]),
            soft=np.concatenate(soft) if soft else None,
            soft_rows=soft_rows,
        )

    def add_data(self, data: BCData) -> None:
        """Append labelled rollout samples (``load_samples``), soft labels kept."""
        if data.soft is None or data.soft_rows is None:
            self.add(data.observations, data.actions, data.action_masks)
            return
        has = data.soft_rows >= 0
        for rows, soft in ((np.flatnonzero(has), True), (np.flatnonzero(~has), False)):
            if not len(rows):  # every sample soft (or none): the other part is empty
                continue
            part = data.subset(rows)
            targets = part.targets(np.arange(len(rows))) if soft else None
            self.add(part.observations, part.actions, part.action_masks, targets=targets)


def save_samples(aggregate: Aggregate, path: Path) -> int:
    """Write the aggregate's rollout samples (not iteration 0's dataset) to ``path``.

    The file (npz) is replaced whole, so an interrupted write leaves the previous one.
    Returns the number of samples written (0: nothing written).
    """
    if len(aggregate) == aggregate.initial:
        return 0
    data = aggregate.data(rollouts_only=True)
    n_actions = data.action_masks.shape[1]
    soft = data.soft if data.soft is not None else np.zeros((0, n_actions), np.float32)
    rows = data.soft_rows if data.soft_rows is not None else np.full(len(data.actions), -1)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as f:
        np.savez(
            f,
            format=np.array(SAMPLES_FORMAT),
            observations=data.observations,
            actions=data.actions,
            action_masks=data.action_masks,
            soft=soft,
            soft_rows=np.asarray(rows, dtype=np.int64),
        )
    os.replace(tmp, path)
    return len(data.actions)


def add_initial(aggregate: Aggregate, initial: BCData) -> None:
    """Add iteration 0's dataset to ``aggregate``, with its soft labels when it has them."""
    targets = None
    if initial.soft is not None:
        targets = initial.targets(np.arange(len(initial.actions)))
    aggregate.add(
        initial.observations, initial.actions, initial.action_masks, initial=True, targets=targets
    )


def load_samples(paths: str, obs_shape: tuple[int, ...], n_actions: int) -> BCData:
    """The samples of ``save_samples`` files (comma-separated paths), pooled.

    Raises:
        ValueError: naming ``--dagger-samples`` for a missing or foreign file, or samples
            whose observations or actions do not fit this run's env.
    """
    parts: list[BCData] = []
    for name in paths.split(","):
        try:
            with np.load(name, allow_pickle=False) as f:
                arrays = {k: f[k] for k in f.files}
        except (OSError, ValueError, EOFError) as err:
            msg = f"dagger.samples (--dagger-samples): cannot read {name}: {err}"
            raise ValueError(msg) from None
        keys = ("observations", "actions", "action_masks", "soft", "soft_rows")
        if str(arrays.get("format", "")) != SAMPLES_FORMAT or any(k not in arrays for k in keys):
            raise ValueError(
                f"dagger.samples (--dagger-samples): {name} is not a {SAMPLES_FILE} written by "
                "soko train --algo dagger"
            )
        rows = arrays["soft_rows"]
        has_soft = bool((rows >= 0).any())
        data = BCData(
            arrays["observations"],
            arrays["actions"],
            arrays["action_masks"],
            soft=arrays["soft"] if has_soft else None,
            soft_rows=rows if has_soft else None,
        )
        got = (tuple(data.observations.shape[1:]), int(data.action_masks.shape[1]))
        if got != (tuple(obs_shape), int(n_actions)):
            raise ValueError(
                f"dagger.samples (--dagger-samples): {name} holds observations {got[0]} with "
                f"{got[1]} actions; this run's env has {tuple(obs_shape)} and {n_actions} "
                "(same env id, --obs-size, --dead-plane)"
            )
        parts.append(data)
    if len(parts) == 1:
        return parts[0]
    pooled = Aggregate()
    for data in parts:
        pooled.add_data(data)
    return pooled.data()


def beta_of(dagger: DaggerConfig, iteration: int) -> float:
    """The expert's share of actions in iteration ``iteration``: ``beta0 * decay**iteration``."""
    return float(dagger.beta0 * dagger.decay**iteration)


def gradient_steps(config: TrainConfig, n_samples: int, iteration: int = 0) -> int:
    """Gradient steps of one retrain.

    ``steps`` (``dagger.retrain_steps`` after iteration 0 when set), or ``dagger.epochs``
    passes when set.
    """
    if iteration > 0 and config.dagger.retrain_steps > 0:
        return config.dagger.retrain_steps
    if config.dagger.epochs > 0:
        batch = min(config.bc.batch_size, n_samples)
        return max(1, math.ceil(config.dagger.epochs * n_samples / batch))
    return config.steps


def run_dagger(
    config: TrainConfig,
    model: Any,
    env: Any,
    initial: BCData | None,
    evaluate: Callable[[Any, int], Any],
    out: Path,
    log: Callable[[str], None] | None = None,
    checkpoint: Callable[[Any, int], Any] | None = None,
    first_iteration: int = 0,
) -> list[dict[str, Any]]:
    """The DAgger loop on ``model``'s policy (in place), writing ``out / "dagger.csv"``.

    Args:
        config: the run (``dagger`` and ``bc`` sections, ``steps``, ``seed``, the env id).
        model: an SB3 MaskablePPO or PPO model (``agents.training.train.build_model``).
        env: the training vector env (SB3 ``VecEnv`` with ``action_masks``).
        initial: iteration 0's samples (a ``soko collect`` dataset), or None to roll out the
            expert in iteration 0.
        evaluate: ``evaluate(model, iteration)`` gives an ``EvalResult`` or None.
        out: the run's folder (``dagger.csv``, ``SAMPLES_FILE``).
        log: receives one progress line per iteration.
        checkpoint: ``checkpoint(model, iteration)`` after each iteration's retrain.
        first_iteration: where to start (``--resume``: after the checkpoint's); the aggregate is
            rebuilt from ``initial``, ``dagger.samples`` and the run's own ``SAMPLES_FILE``,
            and ``dagger.csv`` is continued.

    Returns:
        The ``dagger.csv`` rows.
    """
    dagger = config.dagger
    action_space = action_space_of(config.env.env_id)
    labeller = Labeller(dagger, action_space, config.rllib.ray_address)
    expert: Any = PlannerPolicy(dagger.planner, dagger.time_limit, action_space)
    if labeller.teacher is not None:
        from agents.training.teacher import TeacherPolicy

        expert = TeacherPolicy(labeller)  # its labels cached for the labelling step
    rng = np.random.default_rng(config.seed)
    bc_config = replace(config.bc, val_fraction=0.0, log_every=max(1, config.steps))
    aggregate = Aggregate()
    seen: set[PositionKey] = set()
    previous = None
    if dagger.samples:
        previous = load_samples(dagger.samples, env.observation_space.shape, env.action_space.n)
        seen.update(labeller.key(o) for o in previous.observations)
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    path = out / "dagger.csv"
    if first_iteration == 0 or not path.exists():
        with path.open("w", newline="") as f:
            csv.writer(f).writerow(DAGGER_COLUMNS)
    if first_iteration > 0:  # resumed: iteration 0's data, then every rollout sample so far
        if initial is not None:
            add_initial(aggregate, initial)
        if previous is not None:
            aggregate.add_data(previous)
        own = out / SAMPLES_FILE
        if own.exists():
            shape, n = env.observation_space.shape, env.action_space.n
            ours = load_samples(str(own), shape, n)
            aggregate.add_data(ours)
            seen.update(labeller.key(o) for o in ours.observations)

    def iterate(iteration: int) -> dict[str, Any]:
        row: dict[str, Any] = {"iteration": iteration}
        label_start = labeller.seconds
        if iteration == 0 and initial is not None:
            add_initial(aggregate, initial)
            row.update(beta=float("nan"), visited=0, new_states=0, labelled=len(initial.actions))
            row.update(dead=0, failed=0)
        if iteration == 0 and previous is not None:  # after the dataset: its rows come first
            aggregate.add_data(previous)
        if iteration > 0 or initial is None:
            beta = beta_of(dagger, iteration)
            budget = dagger.initial_labels if iteration == 0 and dagger.initial_labels else None
            got = rollout(
                model, env, expert, beta, budget or dagger.labels, seen, rng, dagger.sample
            )
            labels = (
                labeller.label(got.observations, got.action_masks) if len(got.observations) else []
            )
            ok = np.array([label[0] == "ok" for label in labels], dtype=bool)
            actions = np.array([label[1] for label in labels], dtype=np.int64)
            if ok.any():
                legal = got.action_masks[np.flatnonzero(ok), actions[ok]]
                if not legal.all():
                    raise RuntimeError("the planner's label is illegal in the env's action mask")
            targets = None
            if labeller.soft and ok.any():
                rows = np.stack([label[2] for label, good in zip(labels, ok, strict=True) if good])
                targets = ranked_targets(rows, dagger.temperature) if labeller.ranked else rows
            aggregate.add(got.observations[ok], actions[ok], got.action_masks[ok], targets=targets)
            row.update(beta=beta, visited=got.visited, new_states=len(labels))
            row.update(labelled=int(ok.sum()))
            row.update(dead=sum(label[0] == "dead" for label in labels))
            row.update(failed=sum(label[0] == "failed" for label in labels))
        row["label_seconds"] = labeller.seconds - label_start
        row["dataset"] = len(aggregate)
        loaded = iteration == 0 and initial is not None and config.init_model is not None
        if len(aggregate) and not loaded:  # a loaded policy has learned iteration 0's data
            data = aggregate.data()
            steps = gradient_steps(config, len(data.actions), iteration)
            weights = aggregate.weights(dagger.new_share)
            behaviour_clone(
                model.policy, data, steps, bc_config, config.seed + iteration, weights=weights
            )
            row["gradient_steps"] = steps
            row["train_accuracy"] = accuracy(model.policy, _sample(data, ACCURACY_SAMPLES, rng))
        else:
            row["gradient_steps"], row["train_accuracy"] = 0, float("nan")
        save_samples(aggregate, out / SAMPLES_FILE)
        if checkpoint is not None:
            checkpoint(model, iteration)
        result = evaluate(model, iteration)
        row["eval_solve_rate"] = result.solve_rate if result is not None else float("nan")
        row["seconds"] = time.perf_counter() - start
        with path.open("a", newline="") as f:
            csv.writer(f).writerow([_cell(row[c]) for c in DAGGER_COLUMNS])
        if log is not None:
            log(
                f"[dagger {iteration + 1}/{dagger.iterations}] beta {row['beta']:.2f}: "
                f"{row['new_states']} new states, {row['labelled']} labelled ({row['dead']} "
                f"dead, {row['failed']} failed), dataset {row['dataset']}, accuracy "
                f"{row['train_accuracy']:.1%}, held out solved {row['eval_solve_rate']:.1%}"
            )
        return row

    # one Ray for the whole run (each iteration's runner would start and stop its own)
    started = labeller.backend.ray is not None and connect_ray(labeller.backend)
    try:
        for iteration in range(first_iteration, dagger.iterations):
            if (
                iteration > first_iteration
                and config.max_seconds
                and time.perf_counter() - start > config.max_seconds
            ):
                if log is not None:
                    log(f"[dagger] --max-seconds {config.max_seconds:g} spent: stopping")
                break  # the wall-time budget: no iteration starts after it
            rows.append(iterate(iteration))
    finally:
        if started:
            import ray

            ray.shutdown()
    return rows


def _sample(data: BCData, n: int, rng: np.random.Generator) -> BCData:
    """At most ``n`` of ``data``'s samples, drawn without replacement (all when fewer)."""
    if len(data.actions) <= n:
        return data
    return data.subset(np.sort(rng.choice(len(data.actions), n, replace=False)))


def _cell(value: Any) -> Any:
    """A CSV cell: floats rounded to 4 places."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return value
