"""Training runs: SB3's MaskablePPO, PPO, DQN, behaviour cloning and DAgger, and RLlib's PPO.

``train(TrainConfig(...))`` (or ``soko train``) trains on the numba vector env through the SB3
adapter (``soko_gym.envs.sb3``), or with ``algo="rllib-ppo"`` through RLlib's env runners on a
local Ray or a cluster (``agents.rllib.ppo``: each runner steps the numba vector env, action masks
in the observations), and writes into its output folder:

- ``config.json``: the whole configuration, so a run can be repeated;
- ``progress.csv``: SB3's training metrics (losses, rolling episode reward and success rate);
- ``eval.csv``: every ``eval_every`` steps, the solve rate and mean pushes on held-out levels;
- ``checkpoints/model_<steps>_steps.zip``, ``best_model.zip`` and ``model.zip``, each with a
  sidecar ``.json`` naming the env id, env arguments and algorithm
  (``agents.playing.models.load_model`` reads both; ``MaskablePPO.load`` / ``PPO.load`` /
  ``DQN.load`` read the zip);
- ``learning_curve.png``: solve rate and episode reward against steps (``plot`` extra);
- ``bc.csv`` for behaviour cloning: loss and accuracy against gradient steps;
- ``dagger.csv`` for DAgger (``agents.training.dagger``): one row per iteration (beta, states
  visited, labelled, dead and failed, dataset size, accuracy, held-out solve rate, seconds).

An RLlib run writes the same files, its models being RLlib module checkpoint folders
(``model/``, ``best_model/``, ``checkpoints/model_<steps>_steps/``, each with its sidecar
``.json``; ``agents.playing.models.load_model`` reads them too), ``progress.csv`` having RLlib's
metrics under the SB3 column names the figure reads, and ``algorithm/`` holding RLlib's whole
final checkpoint (``Algorithm.from_checkpoint``).

Level sources are a bundled pack, file or selection (``boxoban-unfiltered-train``,
``microban:1-50``) or ``generated:WxH:N`` (fresh generated levels, W columns, H rows, N boxes);
``a+b`` mixes sources (``agents.training.env``). Configs live in ``agents.training.config``,
the run's bookkeeping in ``agents.training.tracker``, the held-out evaluation in
``agents.playing.evaluation``, behaviour cloning in ``agents.training.bc``, the figure in
``agents.training.learning_curve``, the flags in ``agents.training.cli``.
Held-out evaluation levels from a generated source are generated from a seed the training
levels never use. The same config and seed give the same SB3 run (an RLlib run is seeded too,
runner by runner, but not promised to repeat exactly). Needs the ``rl`` extra (``rllib-ppo``:
``rl`` and ``dist``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agents.playing.evaluation import EvalResult, make_eval_env
from agents.training.config import (
    TrainConfig,
    check_config,
    default_eval_source,
    env_kwargs_of,
    eval_level_list,
    frame_size,
)
from agents.training.env import make_train_env, require_rl
from agents.training.learning_curve import plot_learning_curve
from agents.training.resume import resume_point
from agents.training.tracker import RunTracker, sb3_callback

__all__ = [
    "TrainConfig",
    "TrainResult",
    "make_train_env",
    "plot_learning_curve",
    "require_rl",
    "train",
]


def policy_kind(config: TrainConfig, algo: str) -> str:
    """The network, "square" or "cnn", that ``config.network.policy`` asks for with ``algo``."""
    kind = config.network.policy
    if kind == "auto":
        push = config.env.env_id.startswith("Sokoban-Push")
        return "square" if push and algo in ("maskable-ppo", "ppo", "rllib-ppo") else "cnn"
    if kind == "square" and algo == "dqn":
        raise ValueError("network.policy 'square' is for PPO and MaskablePPO; use 'cnn' with DQN")
    return kind


def features_kwargs(config: TrainConfig, obs_size: tuple[int, int]) -> dict[str, Any]:
    """``BoardCNN`` arguments: the defaults for the board, with ``network``'s overrides."""
    from agents.features import default_features_kwargs

    fe_kwargs = default_features_kwargs(obs_size)
    if config.network.channels:
        fe_kwargs["channels"] = config.network.channels
    if config.network.n_layers:
        fe_kwargs["n_layers"] = config.network.n_layers
    if config.network.residual:
        fe_kwargs["residual"] = True
    if config.network.border != "wall":
        fe_kwargs["border"] = config.network.border
    return fe_kwargs


def build_model(config: TrainConfig, env: Any, algo: str) -> Any:
    """A fresh SB3 model of ``algo`` ("maskable-ppo", "ppo", "dqn") on ``env``, seeded."""
    from agents.features import BoardCNN, MaskableSquarePolicy, SquarePolicy

    rl = require_rl()
    net = config.network
    _, height, width = env.observation_space.shape
    fe_kwargs = features_kwargs(config, (height, width))
    kind = policy_kind(config, algo)
    if kind == "square":
        policy: Any = MaskableSquarePolicy if algo == "maskable-ppo" else SquarePolicy
        policy_kwargs: dict[str, Any] = {
            "features_extractor_kwargs": fe_kwargs,
            "value_hidden": net.value_hidden,
            "value_head": net.value_head,
        }
    else:
        policy = "MlpPolicy"
        fe_kwargs.update(pooling=net.pooling, features_dim=net.features_dim)
        policy_kwargs = {
            "features_extractor_class": BoardCNN,
            "features_extractor_kwargs": fe_kwargs,
            "net_arch": list(net.net_arch),
        }
        if algo != "dqn":
            policy_kwargs["activation_fn"] = rl.torch.nn.ReLU
    common = {"policy_kwargs": policy_kwargs, "seed": config.seed, "device": "cpu", "verbose": 0}
    if algo == "dqn":
        return rl.classes["dqn"](policy, env, **asdict(config.dqn), **common)
    ppo = asdict(config.ppo)
    lr_end = ppo.pop("lr_end")
    if lr_end is not None:
        from stable_baselines3.common.utils import LinearSchedule

        ppo["learning_rate"] = LinearSchedule(config.ppo.learning_rate, lr_end, 1.0)
    return rl.classes[algo](policy, env, **ppo, **common)


@dataclass
class TrainResult:
    """What ``train`` produced.

    Attributes:
        out: the output folder.
        model_path: the final model (``model.zip``).
        final_eval: the last evaluation (None without evaluation levels).
        timesteps: env steps trained (RL phases).
        seconds: wall time of the whole run.
        interrupted: True when Ctrl-C stopped it (the model so far is saved).
    """

    out: Path
    model_path: Path
    final_eval: EvalResult | None
    timesteps: int
    seconds: float
    interrupted: bool = False


def _prepare_out(out: Path, overwrite: bool, resume: bool = False) -> None:
    if resume:  # ``resume_point`` checks the run it continues
        return
    taken = [n for n in ("model.zip", "eval.csv", "progress.csv") if (out / n).exists()]
    if taken and not overwrite:
        raise ValueError(f"{out} already holds a run ({', '.join(taken)}); pass --overwrite")
    out.mkdir(parents=True, exist_ok=True)


def _logger(rl: Any, out: Path, resumed_at: int | None) -> Any:
    """SB3's CSV logger: ``progress.csv``, or ``progress_from_<t>.csv`` for a run resumed at t."""
    if resumed_at is None:
        return rl.configure(str(out), ["csv"])
    from stable_baselines3.common.logger import Logger, make_output_format

    return Logger(str(out), [make_output_format("csv", str(out), f"_from_{resumed_at}")])


def load_parameters(model: Any, path: str) -> None:
    """Put the parameters of the saved model at ``path`` into ``model`` (``--init-model``).

    A saved model may be narrower than ``model``: fewer observation planes (e.g. saved before
    ``--trail-plane``) or, for the square policies, fewer ``--channels``. Each saved tensor
    fills the leading block of the wider one and the weights from the new planes or channels
    into the old ones start at zero, so the wider model plays exactly as the saved one until
    training teaches it to use them: a bigger network continues a run instead of starting over.

    Raises:
        ValueError: naming ``--init-model`` when the saved network does not fit ``model``'s.
    """
    try:
        try:
            model.set_parameters(path, exact_match=True, device=model.device)
        except RuntimeError:
            model.set_parameters(_widened(model, path), exact_match=False, device=model.device)
    except (RuntimeError, ValueError, KeyError) as err:
        raise ValueError(
            f"init_model (--init-model): {path} does not fit this run's env and network "
            f"(same env id, observation, --layers/--residual/--border, no fewer --channels "
            f"...): {err}"
        ) from None


def _widened(model: Any, path: str) -> dict[str, Any]:
    """The saved parameters, each in the leading block of ``model``'s wider tensor of its name."""
    from stable_baselines3.common.save_util import load_from_zip_file

    from agents.features import SquareHeads

    _, params, _ = load_from_zip_file(path, device=model.device)
    if params is None or "policy" not in params:
        raise ValueError("the saved model holds no policy parameters")
    mine = model.policy.state_dict()
    # the square heads read channels through 1x1 convolutions, so new channels only append;
    # a pooled or flattened head would mix them into its inputs' order
    square = isinstance(model.policy.mlp_extractor, SquareHeads)
    policy = dict(params["policy"])
    for name, saved in policy.items():
        want = mine.get(name)
        if want is None or want.shape == saved.shape:
            continue
        if want.ndim != saved.ndim or any(
            w < s for w, s in zip(want.shape, saved.shape, strict=True)
        ):
            raise ValueError(f"{name} is {tuple(saved.shape)}, the network's {tuple(want.shape)}")
        if not square and (want.ndim < 4 or want.shape[0] != saved.shape[0]):
            raise ValueError(f"{name}: only the square policies (--policy square) widen channels")
        wide = want.detach().clone()  # new outputs keep their fresh initialisation
        wide[tuple(slice(0, n) for n in saved.shape)] = saved
        if saved.ndim > 1:
            wide[: saved.shape[0], saved.shape[1] :] = 0.0  # new inputs leave old outputs alone
        policy[name] = wide
    # the optimizer's state is for the old shapes: the run starts a fresh one
    return {"policy": policy}


def train(config: TrainConfig) -> TrainResult:
    """Run ``config``: train, evaluate, checkpoint, and write logs and plots (module docstring).

    Raises:
        ValueError: naming a bad setting; ImportError naming the ``rl`` extra.
    """
    check_config(config)
    rl = require_rl()
    if config.algo == "rllib-ppo":
        import agents.rllib.ppo  # noqa: F401  (an ImportError naming the extras comes first)
    out = Path(config.out)
    _prepare_out(out, config.overwrite, config.resume)
    if config.torch_threads:
        rl.torch.set_num_threads(config.torch_threads)
    data = None
    if config.algo == "bc" or (config.algo == "dagger" and config.bc.dataset):
        from agents.training.bc import load_bc_data

        data, ds_env = load_bc_data(config.bc.dataset, config.env.env_id, config.ppo.gamma)
        config = replace(config, env=replace(config.env, **ds_env))
        if config.bc.targets == "walk":
            from agents.training.walks import walk_targets

            soft = walk_targets(data.observations, data.actions, data.episodes)
            data = replace(data, soft=soft, soft_rows=np.arange(len(soft)))
    resumed = resume_point(out, config) if config.resume else None  # the config as it was saved
    eval_spec = default_eval_source(config.env)
    eval_levels = eval_level_list(eval_spec, config.eval_episodes, config.seed) if eval_spec else []
    obs_size = frame_size(config.env, eval_levels)
    env_kwargs = env_kwargs_of(config.env, obs_size)
    algo = config.bc.finetune_algo if config.algo in ("bc", "dagger") else config.algo
    meta = {
        "env_id": config.env.env_id,
        # what any player of the model passes to the env (a custom reward is not an env
        # argument in JSON form, so it is recorded beside them)
        "env_kwargs": {
            k: v
            for k, v in env_kwargs.items()
            if k != "reward_scheme" or v in ("boxoban", "sparse")
        },
        "reward_scheme": config.env.reward_scheme,
        "algo": algo,
        "trained_with": config.algo,
        "max_episode_steps": config.env.max_episode_steps,
        "levels": config.env.levels,
        "eval_levels": eval_spec,
        "seed": config.seed,
    }
    with (out / "config.json").open("w", encoding="utf-8") as f:
        json.dump(
            {**asdict(config), "resolved": {"obs_size": list(obs_size), "eval_levels": eval_spec}},
            f,
            indent=2,
        )
    eval_env = None
    if eval_levels:
        max_steps = config.env.eval_max_steps or config.env.max_episode_steps
        eval_env = make_eval_env(config.env.env_id, eval_levels, env_kwargs, max_steps)
    if config.algo == "rllib-ppo":
        run_args = (out, meta, eval_env, len(eval_levels))
        return _train_rllib(config, run_args, env_kwargs, obs_size)
    env = make_train_env(config, env_kwargs)
    at = 0  # env steps a resumed RL run has made (a DAgger run counts iterations instead)
    if resumed is not None and config.algo != "dagger":  # the model with its optimizer and steps
        from agents.playing.models import sb3_classes

        model = sb3_classes()[algo].load(str(resumed.path), env=env)
        at = int(model.num_timesteps)
    else:
        model = build_model(config, env, algo)
        start_from = resumed.path if resumed is not None else config.init_model
        if start_from is not None:
            load_parameters(model, str(start_from))
    model.set_logger(_logger(rl, out, at if resumed is not None else None))
    run = RunTracker(
        config,
        out,
        meta,
        eval_env,
        len(eval_levels),
        resumed=None if resumed is None else (at, resumed.seconds),
    )
    if resumed is not None:
        run.log(f"resuming {resumed.path} ({run.seconds():.0f} s so far)")
    rl_steps = config.bc.finetune_steps if config.algo in ("bc", "dagger") else config.steps - at
    interrupted = False
    try:
        if config.algo == "dagger":
            from agents.training.dagger import run_dagger

            dagger = config.dagger
            expert_name = f"teacher {dagger.teacher}" if dagger.teacher else dagger.planner
            run.log(f"DAgger: {dagger.iterations} iterations, expert {expert_name}")
            run_dagger(
                config,
                model,
                env,
                data,
                lambda m, i: run.evaluate(m, i, "dagger"),
                out,
                run.log,
                (lambda m, i: run.save(m, out / "checkpoints" / f"model_dagger_{i}", 0))
                if config.checkpoint_every
                else None,
                first_iteration=resumed.at + 1 if resumed is not None else 0,
            )
            run.save(model, out / "dagger_model.zip", 0)
        elif data is not None:
            from agents.training.bc import behaviour_clone, write_history

            run.log(
                f"behaviour cloning: {len(data.actions)} samples, {config.steps} gradient steps"
            )
            history = behaviour_clone(
                model.policy, data, config.steps, config.bc, config.seed, run.log
            )
            write_history(history, out / "bc.csv")
            run.evaluate(model, 0, "bc")
            run.save(model, out / "bc_model.zip", 0)
        if rl_steps > 0:
            callback = sb3_callback(rl, run, rl_steps + at)
            cloned = data is not None or config.algo == "dagger" or resumed is not None
            model.learn(rl_steps, callback=callback, reset_num_timesteps=not cloned)
    except KeyboardInterrupt:
        interrupted = True
        run.log("interrupted: saving the model so far")
    t = int(model.num_timesteps)
    if config.algo == "dagger" and not rl_steps and not interrupted:
        final = run.final  # the last iteration's evaluation
    else:
        final = run.evaluate(model, t, "rl" if rl_steps else config.algo)
    model_path = run.save(model, out / "model.zip", t)
    env.close()
    if eval_env is not None:
        eval_env.close()
    try:
        plot_learning_curve(out)
    except ImportError as err:
        run.log(f"no learning_curve.png: {err}")
    return TrainResult(out, model_path, final, t, run.seconds(), interrupted)


def _train_rllib(
    config: TrainConfig,
    run_args: tuple[Path, dict[str, Any], Any, int],
    env_kwargs: dict[str, Any],
    obs_size: tuple[int, int],
) -> TrainResult:
    """``rllib-ppo``: RLlib's PPO on Ray, evaluated, checkpointed and saved as the SB3 runs are.

    ``run_args`` are ``RunTracker``'s (out, meta, eval env, evaluation levels). Each
    ``algo.train()`` samples one batch on the env runners and updates; the learner's weights
    then go into a local copy of the module, which ``RunTracker`` evaluates and saves. A Ray this
    started is shut down at the end (one joined or already running is left alone).
    """
    from agents.rllib import env as rllib_env
    from agents.rllib import ppo as rllib

    out, meta = run_args[0], run_args[1]
    progress = rllib.ProgressLog(out / "progress.csv")
    run = RunTracker(
        config,
        *run_args,
        suffix="",
        saver=rllib.save_policy,
        train_stats=lambda _model: progress.train_stats(),
    )
    kind = policy_kind(config, "rllib-ppo")
    features = features_kwargs(config, obs_size)
    if kind == "cnn":
        features.update(pooling=config.network.pooling, features_dim=config.network.features_dim)
    net = config.network
    model_config = {"kind": kind, "features": features, "net_arch": list(net.net_arch)}
    model_config.update(value_hidden=net.value_hidden, value_head=net.value_head)
    env_config = rllib_env.runner_env_config(config, env_kwargs)
    policy = rllib.build_policy(env_config, model_config)  # bad settings fail here, not on Ray
    started = rllib.connect_ray(config.rllib.ray_address, config.rllib.env_runners, config.quiet)
    algo = None
    t = 0
    interrupted = False
    try:
        algo = rllib.ppo_config(config, env_config, model_config).build_algo()
        rllib.track_sampling_time(algo)
        envs = rllib_env.check_runner_envs(algo)
        run.log(
            f"RLlib PPO on {len(envs)} env runner(s), each stepping a {envs[0]} of "
            f"{rllib_env.envs_per_runner(config)} envs"
        )
        try:
            while t < config.steps:
                t = progress.record(algo.train(), run.seconds())
                policy.module.set_state(rllib.learner_weights(algo))
                if not run.on_step(policy, t, config.steps):
                    break
        except KeyboardInterrupt:
            interrupted = True
            run.log("interrupted: saving the model so far")
        policy.module.set_state(rllib.learner_weights(algo))
        rllib.save_algorithm(algo, out / "algorithm", {**meta, "timesteps": t})
    finally:
        if algo is not None:
            algo.stop()
        if started:
            import ray

            ray.shutdown()
    final = run.evaluate(policy, t, "rl")
    model_path = run.save(policy, out / "model", t)
    if run.eval_env is not None:
        run.eval_env.close()
    try:
        plot_learning_curve(out)
    except ImportError as err:
        run.log(f"no learning_curve.png: {err}")
    return TrainResult(out, model_path, final, t, run.seconds(), interrupted)
