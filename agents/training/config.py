"""Training configuration: dataclasses for ``agents.training.train`` runs, level-source specs.

``TrainConfig`` nests ``EnvConfig``, ``NetworkConfig``, ``PPOConfig``, ``DQNConfig``,
``BCConfig``, ``DaggerConfig`` and ``RLlibConfig``; ``asdict(config)`` is what a run writes to
``config.json`` and ``TrainConfig.from_dict`` reads it back. A level source is a pack, file or
selection (``boxoban-unfiltered-train``, ``microban:1-50``) or ``generated:WxH:N`` (fresh
generated levels, W columns, H rows, N boxes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from soko_gym.levels.spec import parse_source, parse_sources

ALGOS = ("maskable-ppo", "ppo", "dqn", "bc", "dagger", "rllib-ppo")
DAGGER_TARGETS = ("action", "ranked", "walk", "ranked-walk")  # DaggerConfig.targets
BC_TARGETS = ("action", "walk")  # BCConfig.targets
POLICIES = ("auto", "square", "cnn")
SCALED_BOXOBAN = "-0.01,0.1,-0.1,1"  # Boxoban's rewards / 10
EVAL_SEED_OFFSET = 1_000_003  # generated evaluation levels: seed + this, never a training seed


# -- configuration ------------------------------------------------------------------------------


@dataclass
class EnvConfig:
    """The env trained on and evaluated in.

    Attributes:
        env_id: a soko-gym id ("Sokoban-Push-v0", "Sokoban-Macro-v0", "Sokoban-Move-v0").
        levels: training levels: a pack, file or selection, or ``generated:WxH:N``; several
            joined by ``+`` are mixed (the envs split between them).
        eval_levels: held-out levels; None: the (first) training generator with another
            seed, no evaluation when training on fixed levels only.
        obs_size: observation frame (rows, cols); None: the largest level of both sources.
        max_episode_steps: episode step limit in training (None: the id's registered limit).
        eval_max_steps: step limit in evaluation (None: ``max_episode_steps``).
        reward_scheme: "boxoban", "sparse", or four numbers "step,box_on,box_off,solved";
            the default is Boxoban's divided by 10, which keeps the value loss from swamping
            the network the policy shares (see benchmarks/RESULTS.md).
        dead_plane: add the dead-square plane to the observations.
        trail_plane: Move env, with ``dead_plane``: add the plane of the player's square one
            action before (the env's ``trail_plane``), one step of memory for the policy.
        deadlock_termination: end an episode when a box is pushed into a simple deadlock.
        deadlock_mask: leave the actions that push a box into a simple deadlock out of the
            action mask (the env's ``deadlock_mask``).
        deadlock_search: also leave out the actions after which a search of at most this
            many positions proves the level lost (the env's ``deadlock_search``; 0: none).
    """

    env_id: str = "Sokoban-Push-v0"
    levels: str = "generated:7x7:2"
    eval_levels: str | None = None
    obs_size: tuple[int, int] | None = None
    max_episode_steps: int | None = None
    eval_max_steps: int | None = None
    reward_scheme: str = SCALED_BOXOBAN
    dead_plane: bool = True
    trail_plane: bool = False
    deadlock_termination: bool = True
    deadlock_mask: bool = False
    deadlock_search: int = 0


@dataclass
class NetworkConfig:
    """The policy network (see ``agents.features``).

    Attributes:
        policy: "square" (Push env: per-square push logits), "cnn" (BoardCNN and SB3's heads),
            or "auto" (square for the Push env with PPO or MaskablePPO, else cnn).
        channels: feature maps per convolution; 0: ``default_features_kwargs`` for the board.
        n_layers: 3x3 convolutions; 0: the default for the board.
        features_dim: "cnn" only: linear features after the convolutions (0: none).
        pooling: "cnn" only: "flatten" or "mean-max".
        net_arch: "cnn" only: hidden layers of the policy and value heads (DQN: Q head).
        value_hidden: "square" only: width of the value head.
        value_head: "square" only: "conv" (per-square maps, flattened) or "pool" (mean-max).
        residual: add each convolution's input to its output (from the second layer on), so
            deeper networks train as easily as shallow ones.
        border: "wall" (a ring of wall per layer, every convolution "valid") or "same" (one
            ring of wall, then size-keeping convolutions: cheaper for deep networks).
    """

    policy: str = "auto"
    channels: int = 0
    n_layers: int = 0
    features_dim: int = 256
    pooling: str = "flatten"
    net_arch: list[int] = field(default_factory=list)
    value_hidden: int = 64
    value_head: str = "conv"
    residual: bool = False
    border: str = "wall"


@dataclass
class PPOConfig:
    """PPO, MaskablePPO and RLlib PPO hyperparameters (SB3's names; per update: n_envs * n_steps).

    ``rllib-ppo`` reads them under RLlib's names (``agents.rllib.ppo.ppo_config``); its update
    size is ``rllib.train_batch_size`` when set.

    Attributes:
        learning_rate: Adam step size.
        n_steps: steps per env per rollout.
        batch_size: minibatch size.
        n_epochs: passes over each rollout.
        gamma: discount.
        gae_lambda: GAE lambda.
        clip_range: PPO clip range.
        ent_coef: entropy bonus.
        vf_coef: value loss weight.
        max_grad_norm: gradient clipping.
        target_kl: stop an update's epochs early past this KL (None: never).
        lr_end: when set, the learning rate falls linearly from ``learning_rate`` to this over
            the run's ``steps`` (None: constant).
    """

    learning_rate: float = 2e-3
    n_steps: int = 64
    batch_size: int = 256
    n_epochs: int = 4
    gamma: float = 0.97
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    lr_end: float | None = None


@dataclass
class DQNConfig:
    """DQN hyperparameters (SB3's names).

    Attributes:
        learning_rate: Adam step size.
        buffer_size: replay buffer transitions.
        learning_starts: steps before the first update.
        batch_size: minibatch size.
        train_freq: env steps (per env) between updates.
        gradient_steps: gradient steps per update.
        target_update_interval: steps between target network copies.
        exploration_fraction: share of the run over which epsilon falls.
        exploration_final_eps: final epsilon.
        gamma: discount.
    """

    learning_rate: float = 2.5e-4
    buffer_size: int = 100_000
    learning_starts: int = 1_000
    batch_size: int = 128
    train_freq: int = 4
    gradient_steps: int = 1
    target_update_interval: int = 2_000
    exploration_fraction: float = 0.3
    exploration_final_eps: float = 0.05
    gamma: float = 0.97


@dataclass
class BCConfig:
    """Behaviour cloning (``algo="bc"``): the run's ``steps`` are gradient steps.

    Attributes:
        dataset: an npz path or Minari id from ``soko collect``.
        batch_size: samples per gradient step.
        learning_rate: Adam step size.
        value_coef: weight of the value loss (discounted returns of the expert episodes), so
            fine-tuning starts with a useful critic; 0 to clone the policy alone.
        val_fraction: share of the episodes held out for validation accuracy.
        log_every: gradient steps between ``bc.csv`` rows.
        finetune_algo: "maskable-ppo" or "ppo": the model built, cloned and fine-tuned.
        finetune_steps: env steps of RL fine-tuning after cloning (0: none).
        augment: clone each sample in a random symmetry of the board (quarter turns and
            mirrors, ``agents.playing.symmetry``; Push and Move envs).
        lr_end: when set, the learning rate falls linearly from ``learning_rate`` to this over
            each cloning's gradient steps (None: constant).
        targets: what the dataset's samples are cloned toward. "action": the expert's action.
            "walk" (Move env): every step of a shortest walk to the expert's next push, alike
            (``agents.training.walks``), so ties between equally short walks teach no
            tie-break.
    """

    dataset: str | None = None
    batch_size: int = 256
    learning_rate: float = 1e-3
    value_coef: float = 0.5
    val_fraction: float = 0.1
    log_every: int = 100
    finetune_algo: str = "maskable-ppo"
    finetune_steps: int = 0
    augment: bool = False
    lr_end: float | None = None
    targets: str = "action"


@dataclass
class DaggerConfig:
    """DAgger (``algo="dagger"``, ``agents.training.dagger``) with a planner as the expert.

    The run's ``steps`` are gradient steps per retrain; cloning uses the ``bc`` section (batch
    size, learning rate, fine-tuning), and ``bc.dataset``, when set, is iteration 0's data
    instead of expert rollouts.

    Attributes:
        iterations: rollout, label and retrain rounds (iteration 0 included).
        labels: label budget: new positions labelled per iteration (the rollout stops there).
        initial_labels: iteration 0's budget when it rolls out the expert (0: ``labels``).
        beta0: the expert's share of executed actions in iteration 0 (1: expert rollouts).
        decay: iteration i executes the expert's action with probability beta0 * decay**i.
        sample: roll out actions sampled from the policy (False: its greedy actions).
        planner: the expert: a planner's registry name (``soko planners``).
        time_limit: planner seconds per labelled position.
        epochs: when > 0, passes over the aggregate per retrain instead of ``steps``.
        jobs: worker processes that label positions (1: this process); ``--ray`` (the
            ``rllib.ray_address`` field: "local", "auto" or an address) labels on Ray.
        retrain_steps: gradient steps of each retrain after iteration 0 (0: the run's
            ``steps``, or ``epochs`` passes).
        new_share: when > 0 and iteration 0 cloned a dataset (``bc.dataset``), this share of
            each retrain's minibatches is drawn from the positions the rollouts labelled, the
            rest from that dataset (0: every sample alike), so a large initial dataset does not
            drown the policy's own positions.
        targets: what a rollout position is labelled with. "action": the expert's action
            (one-hot). "ranked" (Push env only): the planner solves the position after every
            legal push, and the label is a distribution over the pushes by their cost to go,
            ``exp(-(cost - best) / temperature)``; pushes after which the level is proven
            unsolvable get none, so the policy learns which pushes lose the level and that
            tied best pushes are equally right (one planner call per legal push). "walk" (Move
            env only): every step that starts a shortest walk to the square of the plan's first
            push, alike (``agents.training.labels.walk_observation``). "ranked-walk" (Move
            env only): the steps toward the nearest cheapest push (``nearest_best_label``).
        temperature: the "ranked" distribution's temperature in pushes (smaller: nearer to
            uniform over the best pushes only).
        samples: ``dagger_samples.npz`` files of earlier runs (comma-separated): their
            labelled positions join the aggregate in iteration 0 (after ``bc.dataset``'s) and
            are never labelled again, so a run continues another's without paying for its
            labels twice (with ``init_model`` set to that run's model).
        teacher: Move env: a Push-env model (``pretrained:NAME`` or a ``.zip``) labels the
            rollout positions instead of the planner, with walk labels toward the push it picks
            (``agents.training.teacher``): one forward pass a position, no search, and the same
            push for every position of a walk.
    """

    iterations: int = 5
    labels: int = 2000
    initial_labels: int = 0
    beta0: float = 1.0
    decay: float = 0.5
    sample: bool = True
    planner: str = "astar"
    time_limit: float = 5.0
    epochs: float = 0.0
    jobs: int = 1
    retrain_steps: int = 0
    new_share: float = 0.0
    targets: str = "action"
    temperature: float = 0.5
    samples: str | None = None
    teacher: str | None = None


@dataclass
class RLlibConfig:
    """RLlib runs (``algo="rllib-ppo"``): where they run and how they sample.

    The PPO hyperparameters are the ``ppo`` section's (learning rate, minibatch size, epochs,
    gamma ...); the network is the ``network`` section's.

    Attributes:
        env_runners: RLlib env runners (Ray actors, one CPU each) sampling in parallel; 0:
            sample in the driver process.
        envs_per_runner: sub-envs of each runner's vector env; 0: ``n_envs`` split over the
            runners (rounded up).
        train_batch_size: env steps per update; 0: runners x envs per runner x
            ``ppo.n_steps``.
        ray_address: None (or "local") starts a local Ray; "auto" joins the running
            cluster (``ray start --head``); else a cluster address ("10.0.0.5:6379").
            ``algo="dagger"``: where positions are labelled (None: no Ray, ``dagger.jobs``).
    """

    env_runners: int = 2
    envs_per_runner: int = 0
    train_batch_size: int = 0
    ray_address: str | None = None


@dataclass
class TrainConfig:
    """One training run.

    Attributes:
        algo: "maskable-ppo", "ppo", "dqn", "bc", "dagger" (``agents.training.dagger``) or
            "rllib-ppo" (RLlib's PPO with action masking, ``agents.rllib.ppo``).
        out: output folder.
        steps: env steps (RL) or gradient steps (bc; dagger: per retrain).
        seed: seeds the levels, the network, SB3 and the evaluation.
        n_envs: parallel envs of the vector env (rllib-ppo: over all env runners).
        eval_every: env steps between evaluations (0: only at the end).
        eval_episodes: held-out levels per evaluation (generated: how many to generate).
        checkpoint_every: env steps between checkpoints (0: none); DAgger saves one after
            each iteration (``checkpoints/model_dagger_<i>.zip``) unless it is 0.
        torch_threads: torch CPU threads (0: torch's default; 1 is fastest on a busy 2-core
            machine, where the env, the learner and other processes share the cores).
        max_seconds: stop RL training after this much wall time (0: no limit); the run
            then evaluates and saves as at its end. DAgger starts no iteration after it.
        overwrite: allow an output folder that already holds a run.
        init_model: start from this saved model's parameters (a ``model.zip`` of the same env
            and network, e.g. a shipped ``pretrained_models/NAME/model.zip``, or a narrower
            one: ``agents.training.train.load_parameters``) instead of a fresh network; with
            ``algo="dagger"`` and a dataset, iteration 0 only adds the dataset to the aggregate
            (the loaded policy has learned it) and evaluates.
        resume: continue the run in ``out`` from its latest checkpoint (maskable-ppo, ppo, dqn,
            dagger; ``agents.training.resume``): a larger ``steps`` or ``dagger.iterations``
            goes on where it stopped, and its seconds add to the earlier sessions'.
        quiet: no progress lines on stderr.
        env: the env.
        network: the policy network.
        ppo: PPO / MaskablePPO settings.
        dqn: DQN settings.
        bc: behaviour cloning settings (dagger's cloning too).
        dagger: DAgger settings (``algo="dagger"``).
        rllib: RLlib settings (``algo="rllib-ppo"``).
    """

    algo: str = "maskable-ppo"
    out: str = "runs/train"
    steps: int = 100_000
    seed: int = 0
    n_envs: int = 32
    eval_every: int = 50_000
    eval_episodes: int = 200
    checkpoint_every: int = 100_000
    torch_threads: int = 1
    max_seconds: float = 0.0
    overwrite: bool = False
    init_model: str | None = None
    resume: bool = False
    quiet: bool = False
    env: EnvConfig = field(default_factory=EnvConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    dqn: DQNConfig = field(default_factory=DQNConfig)
    bc: BCConfig = field(default_factory=BCConfig)
    dagger: DaggerConfig = field(default_factory=DaggerConfig)
    rllib: RLlibConfig = field(default_factory=RLlibConfig)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        """A config from ``asdict`` output (``config.json``)."""
        parts = {"env": EnvConfig, "network": NetworkConfig, "ppo": PPOConfig}
        parts.update(dqn=DQNConfig, bc=BCConfig, dagger=DaggerConfig, rllib=RLlibConfig)
        kwargs = {k: v for k, v in data.items() if k not in parts}
        for name, kind in parts.items():
            kwargs[name] = kind(**data.get(name, {}))
        if kwargs["env"].obs_size is not None:
            kwargs["env"].obs_size = tuple(kwargs["env"].obs_size)
        return cls(**kwargs)


def check_config(config: TrainConfig) -> None:
    """Raise ValueError naming the first bad field of ``config``."""
    if config.algo not in ALGOS:
        raise ValueError(f"algo must be one of {ALGOS}, got {config.algo!r}")
    if config.network.policy not in POLICIES:
        raise ValueError(f"network.policy must be one of {POLICIES}, got {config.network.policy!r}")
    for name in ("steps", "n_envs", "eval_episodes"):
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    for name in ("eval_every", "checkpoint_every", "torch_threads"):
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an int >= 0, got {value!r}")
    kind = config.env.env_id.removeprefix("Sokoban-").split("-")[0]  # Push, Move or Macro
    if config.algo == "bc" and not config.bc.dataset:
        raise ValueError("algo 'bc' needs a dataset (--dataset PATH_OR_MINARI_ID)")
    if config.algo in ("bc", "dagger"):
        if config.bc.finetune_algo not in ("maskable-ppo", "ppo"):
            raise ValueError(
                f"bc.finetune_algo must be 'maskable-ppo' or 'ppo', got {config.bc.finetune_algo!r}"
            )
        if config.bc.augment and kind == "Macro":
            raise ValueError(
                "bc.augment (--bc-augment) is for the Push and Move envs: the Macro env's "
                "actions have no symmetry here"
            )
        if config.bc.targets not in BC_TARGETS:
            raise ValueError(
                f"bc.targets (--bc-targets) must be one of {BC_TARGETS}, got {config.bc.targets!r}"
            )
        if config.bc.targets == "walk" and kind != "Move":
            raise ValueError(
                "bc.targets 'walk' (--bc-targets) labels player steps: it needs a Sokoban-Move "
                f"env, got {config.env.env_id!r}"
            )
        lr_end = config.bc.lr_end
        if lr_end is not None and (isinstance(lr_end, bool) or not lr_end >= 0):
            raise ValueError(f"bc.lr_end (--bc-lr-end) must be >= 0, got {lr_end!r}")
    if config.env.trail_plane and not (kind == "Move" and config.env.dead_plane):
        raise ValueError(
            "env.trail_plane (--trail-plane) is a Move-env plane after the dead plane: it needs "
            f"a Sokoban-Move env and --dead-plane, got {config.env.env_id!r}"
        )
    if config.algo == "rllib-ppo":
        check_rllib(config.rllib)
    if config.algo == "dagger":
        check_dagger(config.dagger, config.rllib.ray_address)
        if config.dagger.targets == "ranked" and kind != "Push":
            raise ValueError(
                "dagger.targets 'ranked' (--dagger-targets) ranks pushes: it needs a "
                f"Sokoban-Push env, got {config.env.env_id!r}"
            )
        if config.dagger.teacher and (
            config.dagger.targets in ("ranked", "ranked-walk") or kind != "Move"
        ):
            raise ValueError(
                "dagger.teacher (--dagger-teacher) gives walk labels in a Sokoban-Move env, got "
                f"{config.env.env_id!r} with --dagger-targets {config.dagger.targets!r}"
            )
        if config.dagger.targets in ("walk", "ranked-walk") and kind != "Move":
            raise ValueError(
                f"dagger.targets {config.dagger.targets!r} (--dagger-targets) labels player "
                f"steps: it needs a Sokoban-Move env, got {config.env.env_id!r}"
            )
    if config.resume:
        if config.algo not in ("maskable-ppo", "ppo", "dqn", "dagger"):
            raise ValueError("resume (--resume) is for maskable-ppo, ppo, dqn and dagger runs")
        if config.overwrite or config.init_model is not None:
            raise ValueError("resume (--resume) excludes overwrite and init_model")
    if config.init_model is not None:
        if config.algo == "rllib-ppo":
            raise ValueError("init_model (--init-model) is for the stable-baselines3 algos")
        if not Path(config.init_model).is_file():
            raise ValueError(f"init_model (--init-model): no file {config.init_model!r}")
    search = config.env.deadlock_search
    if isinstance(search, bool) or not isinstance(search, int) or search < 0:
        raise ValueError(
            f"env.deadlock_search (--deadlock-search) must be an int >= 0, got {search!r}"
        )
    if not config.max_seconds >= 0:
        raise ValueError(f"max_seconds must be >= 0, got {config.max_seconds!r}")
    parse_reward(config.env.reward_scheme)
    parse_sources(config.env.levels)
    if config.env.eval_levels is not None:
        parse_source(config.env.eval_levels)


def check_dagger(dagger: DaggerConfig, ray: str | None = None) -> None:
    """Raise ValueError naming the flag of the first bad field of the ``dagger`` section."""
    for name, flag in (("iterations", "--dagger-iterations"), ("labels", "--dagger-labels")):
        value = getattr(dagger, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"dagger.{name} ({flag}) must be an int >= 1, got {value!r}")
    value = dagger.initial_labels
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"dagger.initial_labels (--dagger-initial-labels) must be an int >= 0, got {value!r}"
        )
    for name in ("beta0", "decay"):
        value = getattr(dagger, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ValueError(f"dagger.{name} (--dagger-{name}) must be in [0, 1], got {value!r}")
    if not isinstance(dagger.time_limit, int | float) or not dagger.time_limit > 0:
        raise ValueError(
            "dagger.time_limit (--dagger-time-limit) must be > 0 seconds, "
            f"got {dagger.time_limit!r}"
        )
    if not isinstance(dagger.epochs, int | float) or not dagger.epochs >= 0:
        raise ValueError(f"dagger.epochs (--dagger-epochs) must be >= 0, got {dagger.epochs!r}")
    value = dagger.retrain_steps
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"dagger.retrain_steps (--dagger-retrain-steps) must be an int >= 0, got {value!r}"
        )
    if not isinstance(dagger.new_share, int | float) or not 0 <= dagger.new_share < 1:
        raise ValueError(
            f"dagger.new_share (--dagger-new-share) must be in [0, 1), got {dagger.new_share!r}"
        )
    if isinstance(dagger.jobs, bool) or not isinstance(dagger.jobs, int) or dagger.jobs < 1:
        raise ValueError(f"dagger.jobs (--jobs) must be an int >= 1, got {dagger.jobs!r}")
    if dagger.targets not in DAGGER_TARGETS:
        raise ValueError(
            f"dagger.targets (--dagger-targets) must be one of {DAGGER_TARGETS}, "
            f"got {dagger.targets!r}"
        )
    value = dagger.temperature
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"dagger.temperature (--dagger-temperature) must be > 0, got {value!r}")
    for name in dagger.samples.split(",") if dagger.samples else ():
        if not Path(name).is_file():
            raise ValueError(f"dagger.samples (--dagger-samples): no file {name!r}")
    if ray is not None and (not isinstance(ray, str) or not ray.strip()):
        raise ValueError(f"--ray must be 'local', 'auto' or a cluster address, got {ray!r}")
    import planners

    if dagger.planner not in planners.available():
        raise ValueError(
            f"dagger.planner (--dagger-planner) must be one of {planners.available()}, "
            f"got {dagger.planner!r}"
        )


def check_rllib(rllib: RLlibConfig) -> None:
    """Raise ValueError naming the first bad field of the ``rllib`` section."""
    for name in ("env_runners", "envs_per_runner", "train_batch_size"):
        value = getattr(rllib, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"rllib.{name} must be an int >= 0, got {value!r}")
    address = rllib.ray_address
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise ValueError(f"--ray must be 'auto' or a cluster address, got {address!r}")


# -- levels and envs ----------------------------------------------------------------------------


def parse_reward(scheme: str) -> Any:
    """The env's ``reward_scheme`` argument for "boxoban", "sparse" or "step,on,off,solved"."""
    if scheme in ("boxoban", "sparse"):
        return scheme
    from soko_gym.envs.rewards import RewardScheme

    try:
        values = [float(x) for x in str(scheme).split(",")]
    except ValueError:
        values = []
    if len(values) != 4:
        raise ValueError(
            f"reward_scheme must be 'boxoban', 'sparse' or 'step,box_on,box_off,solved', "
            f"got {scheme!r}"
        )
    return RewardScheme(*values)


def default_eval_source(config: EnvConfig) -> str | None:
    """``eval_levels``, else the first generated training source (other seed), else None."""
    if config.eval_levels is not None:
        return config.eval_levels
    generated = [s.text for s in parse_sources(config.levels) if s.generated]
    return generated[0] if generated else None


def eval_level_list(spec: str, n: int, seed: int) -> list[Any]:
    """The held-out levels of an eval source: ``n`` generated from ``seed``, or the first n."""
    from soko_gym.levels import load_levels
    from soko_gym.levels.generator import generate_levels

    source = parse_source(spec)
    if source.generated:
        return [
            g.level for g in generate_levels(n, seed + EVAL_SEED_OFFSET, **source.generator_kwargs)
        ]
    return load_levels(spec)[:n]


def frame_size(config: EnvConfig, eval_levels: list[Any] | None) -> tuple[int, int]:
    """The observation frame that fits the training sources and the evaluation levels."""
    if config.obs_size is not None:
        return (int(config.obs_size[0]), int(config.obs_size[1]))
    from soko_gym.levels import load_levels

    sizes = []
    for source in parse_sources(config.levels):
        if source.generated:
            sizes.append(source.size)
        else:
            sizes += [(lv.height, lv.width) for lv in load_levels(source.text)]
    sizes += [(lv.height, lv.width) for lv in eval_levels or ()]
    return (max(h for h, _ in sizes), max(w for _, w in sizes))


def env_kwargs_of(config: EnvConfig, obs_size: tuple[int, int]) -> dict[str, Any]:
    """Env arguments shared by training, evaluation and the saved model's sidecar."""
    kwargs: dict[str, Any] = {
        "obs_size": [int(obs_size[0]), int(obs_size[1])],
        "dead_plane": bool(config.dead_plane),
        "reward_scheme": config.reward_scheme,
        "deadlock_termination": bool(config.deadlock_termination),
        "deadlock_mask": bool(config.deadlock_mask),
        "deadlock_search": int(config.deadlock_search),
    }
    if config.trail_plane:  # only the Move env takes it
        kwargs["trail_plane"] = True
    return kwargs


def env_args(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Env constructor arguments of ``env_kwargs_of`` output (tuples and reward objects)."""
    out = dict(kwargs)
    out["obs_size"] = tuple(out["obs_size"])
    out["reward_scheme"] = parse_reward(out["reward_scheme"])
    return out
