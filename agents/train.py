"""Training runs: SB3's MaskablePPO, PPO, DQN, behaviour cloning and DAgger, and RLlib's PPO.

``train(TrainConfig(...))`` (or ``soko train``) trains on the numba vector env through the SB3
adapter (``soko_gym.envs.sb3``), or with ``algo="rllib-ppo"`` through RLlib's env runners on a
local Ray or a cluster (``agents.rllib``: each runner steps the numba vector env, action masks
in the observations), and writes into its output folder:

- ``config.json``: the whole configuration, so a run can be repeated;
- ``progress.csv``: SB3's training metrics (losses, rolling episode reward and success rate);
- ``eval.csv``: every ``eval_every`` steps, the solve rate and mean pushes on held-out levels;
- ``checkpoints/model_<steps>_steps.zip``, ``best_model.zip`` and ``model.zip``, each with a
  sidecar ``.json`` naming the env id, env arguments and algorithm (``agents.models.load_model``
  reads both; ``MaskablePPO.load`` / ``PPO.load`` / ``DQN.load`` read the zip);
- ``learning_curve.png``: solve rate and episode reward against steps (``plot`` extra);
- ``bc.csv`` for behaviour cloning: loss and accuracy against gradient steps;
- ``dagger.csv`` for DAgger (``agents.dagger``): one row per iteration (beta, states visited,
  labelled, dead and failed, dataset size, accuracy, held-out solve rate, seconds).

An RLlib run writes the same files, its models being RLlib module checkpoint folders
(``model/``, ``best_model/``, ``checkpoints/model_<steps>_steps/``, each with its sidecar
``.json``; ``agents.models.load_model`` reads them too), ``progress.csv`` having RLlib's
metrics under the SB3 column names the figure reads, and ``algorithm/`` holding RLlib's whole
final checkpoint (``Algorithm.from_checkpoint``).

Level sources are a bundled pack, file or selection (``boxoban-unfiltered-train``,
``microban:1-50``) or ``generated:WxH:N`` (fresh generated levels, W columns, H rows, N boxes);
``a+b`` mixes sources (``agents.train_env``). Configs live in ``agents.train_config``, the
held-out evaluation in ``agents.evaluation``, behaviour cloning in ``agents.bc``, the figure in
``agents.learning_curve``.
Held-out evaluation levels from a generated source are generated from a seed the training
levels never use. The same config and seed give the same SB3 run (an RLlib run is seeded too,
runner by runner, but not promised to repeat exactly). Needs the ``rl`` extra (``rllib-ppo``:
``rl`` and ``dist``).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation import EvalResult, evaluate, make_eval_env
from agents.learning_curve import plot_learning_curve
from agents.train_config import (
    ALGOS,
    POLICIES,
    BCConfig,
    DaggerConfig,
    DQNConfig,
    EnvConfig,
    NetworkConfig,
    PPOConfig,
    RLlibConfig,
    TrainConfig,
    check_config,
    default_eval_source,
    env_kwargs_of,
    eval_level_list,
    frame_size,
)
from agents.train_env import make_train_env, require_rl
from soko_gym.cli import add_dataclass_options, dataclass_kwargs

__all__ = [
    "TrainConfig",
    "TrainResult",
    "add_train_parser",
    "make_train_env",
    "plot_learning_curve",
    "require_rl",
    "save_model",
    "train",
]


# -- models -------------------------------------------------------------------------------------


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


def save_model(model: Any, path: Path, meta: dict[str, Any]) -> Path:
    """Save ``model`` to ``path`` (.zip) with ``meta`` in the zip and in a sidecar .json."""
    model.soko_meta = meta  # saved with the model's data; back as an attribute after load
    model.save(str(path))
    with path.with_suffix(".json").open("w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
    return path


# -- a run --------------------------------------------------------------------------------------

EVAL_COLUMNS = (
    "phase",
    "timesteps",
    "seconds",
    "solve_rate",
    "mean_pushes",
    "mean_reward",
    "mean_length",
    "n_levels",
    "train_success_rate",
    "train_reward",
)


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


class _Run:
    """Checkpoints, evaluations, eval.csv and progress lines of one run.

    ``saver(model, path, meta)`` saves a model to ``path`` (``<name><suffix>``) and
    ``train_stats(model)`` gives the recent training episodes' (success rate, mean reward):
    SB3's by default, the RLlib path's own for ``rllib-ppo``.
    """

    def __init__(
        self,
        config: TrainConfig,
        out: Path,
        meta: dict[str, Any],
        eval_env: Any,
        n_eval: int,
        *,
        suffix: str = ".zip",
        saver: Callable[[Any, Path, dict[str, Any]], Path] | None = None,
        train_stats: Callable[[Any], tuple[float, float]] | None = None,
    ) -> None:
        self.config = config
        self.suffix = suffix
        self.saver = saver or save_model
        self.train_stats = train_stats or _train_stats
        self.out = out
        self.meta = meta
        self.eval_env = eval_env
        self.n_eval = n_eval
        self.start = time.perf_counter()
        self.next_eval = config.eval_every or None
        self.next_ckpt = config.checkpoint_every or None
        self.last_eval_at = -1
        self.last_line = self.start
        self.best = -1.0
        self.final: EvalResult | None = None
        (out / "checkpoints").mkdir(parents=True, exist_ok=True)
        with (out / "eval.csv").open("w", newline="") as f:
            csv.writer(f).writerow(EVAL_COLUMNS)

    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def log(self, line: str) -> None:
        if not self.config.quiet:
            print(line, file=sys.stderr, flush=True)

    def on_step(self, model: Any, t: int, total: int) -> bool:
        """Checkpoint, evaluate or report when due; False when the time budget is spent."""
        if self.next_ckpt is not None and t >= self.next_ckpt:
            self.save(model, self.out / "checkpoints" / f"model_{t}_steps{self.suffix}", t)
            self.next_ckpt = (t // self.config.checkpoint_every + 1) * self.config.checkpoint_every
        if self.next_eval is not None and t >= self.next_eval:
            self.evaluate(model, t, "rl")
            self.next_eval = (t // self.config.eval_every + 1) * self.config.eval_every
        elif time.perf_counter() - self.last_line > 30:
            self.last_line = time.perf_counter()
            success, reward = self.train_stats(model)
            self.log(
                f"[{t}/{total}] {t / max(self.seconds(), 1e-9):.0f} steps/s, training "
                f"episodes solved {success:.1%}, reward {reward:.2f}, {self.seconds():.0f} s"
            )
        if self.config.max_seconds and self.seconds() >= self.config.max_seconds:
            self.log(f"time budget of {self.config.max_seconds:.0f} s spent at {t} steps")
            return False
        return True

    def save(self, model: Any, path: Path, t: int) -> Path:
        return self.saver(model, path, {**self.meta, "timesteps": int(t)})

    def evaluate(self, model: Any, t: int, phase: str) -> EvalResult | None:
        if self.eval_env is None or t == self.last_eval_at:
            return self.final
        res = evaluate(model, self.eval_env, self.n_eval)
        self.final, self.last_eval_at = res, t
        success, reward = self.train_stats(model)
        row = [phase, t, f"{self.seconds():.1f}", f"{res.solve_rate:.4f}", f"{res.mean_pushes:.3f}"]
        row += [f"{res.mean_reward:.4f}", f"{res.mean_length:.2f}", res.n_levels]
        row += [f"{success:.4f}", f"{reward:.4f}"]
        with (self.out / "eval.csv").open("a", newline="") as f:
            csv.writer(f).writerow(row)
        if res.solve_rate > self.best:
            self.best = res.solve_rate
            self.save(model, self.out / f"best_model{self.suffix}", t)
        self.last_line = time.perf_counter()
        self.log(
            f"[{t} steps, {self.seconds():.0f} s] eval: solved {res.solve_rate:.1%} of "
            f"{res.n_levels}, mean pushes {res.mean_pushes:.2f}; training episodes solved "
            f"{success:.1%}"
        )
        return res


def _train_stats(model: Any) -> tuple[float, float]:
    """(success rate, mean reward) of the recent training episodes (nan before any)."""
    succ = list(getattr(model, "ep_success_buffer", None) or [])
    infos = list(getattr(model, "ep_info_buffer", None) or [])
    success = float(np.mean(succ)) if succ else float("nan")
    reward = float(np.mean([e["r"] for e in infos])) if infos else float("nan")
    return success, reward


def _run_callback(rl: Any, run: _Run, total: int) -> Any:
    class RunCallback(rl.BaseCallback):
        def _on_step(self) -> bool:
            return run.on_step(self.model, self.num_timesteps, total)

    return RunCallback()


def _prepare_out(out: Path, overwrite: bool) -> None:
    taken = [n for n in ("model.zip", "eval.csv", "progress.csv") if (out / n).exists()]
    if taken and not overwrite:
        raise ValueError(f"{out} already holds a run ({', '.join(taken)}); pass --overwrite")
    out.mkdir(parents=True, exist_ok=True)


def load_parameters(model: Any, path: str) -> None:
    """Put the parameters of the saved model at ``path`` into ``model`` (``--init-model``).

    Raises:
        ValueError: naming ``--init-model`` when the saved network does not fit ``model``'s.
    """
    try:
        model.set_parameters(path, exact_match=True, device=model.device)
    except (RuntimeError, ValueError, KeyError) as err:
        raise ValueError(
            f"init_model (--init-model): {path} does not fit this run's env and network "
            f"(same env id, observation, --channels/--layers/--residual/--border ...): {err}"
        ) from None


def train(config: TrainConfig) -> TrainResult:
    """Run ``config``: train, evaluate, checkpoint, and write logs and plots (module docstring).

    Raises:
        ValueError: naming a bad setting; ImportError naming the ``rl`` extra.
    """
    check_config(config)
    rl = require_rl()
    if config.algo == "rllib-ppo":
        import agents.rllib  # noqa: F401  (an ImportError naming the extras comes first)
    out = Path(config.out)
    _prepare_out(out, config.overwrite)
    if config.torch_threads:
        rl.torch.set_num_threads(config.torch_threads)
    data = None
    if config.algo == "bc" or (config.algo == "dagger" and config.bc.dataset):
        from agents.bc import load_bc_data

        data, ds_env = load_bc_data(config.bc.dataset, config.env.env_id, config.ppo.gamma)
        config = replace(config, env=replace(config.env, **ds_env))
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
    model = build_model(config, env, algo)
    if config.init_model is not None:
        load_parameters(model, config.init_model)
    model.set_logger(rl.configure(str(out), ["csv"]))
    run = _Run(config, out, meta, eval_env, len(eval_levels))
    rl_steps = config.bc.finetune_steps if config.algo in ("bc", "dagger") else config.steps
    interrupted = False
    try:
        if config.algo == "dagger":
            from agents.dagger import run_dagger

            dagger = config.dagger
            run.log(f"DAgger: {dagger.iterations} iterations, expert {dagger.planner}")
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
            )
            run.save(model, out / "dagger_model.zip", 0)
        elif data is not None:
            from agents.bc import behaviour_clone, write_history

            run.log(
                f"behaviour cloning: {len(data.actions)} samples, {config.steps} gradient steps"
            )
            history = behaviour_clone(
                model.policy, data, config.steps, config.bc, config.seed, run.log
            )
            write_history(history, out / "bc.csv")
            run.evaluate(model, 0, "bc")
            run.save(model, out / "bc_model.zip", 0)
        if rl_steps:
            callback = _run_callback(rl, run, rl_steps)
            cloned = data is not None or config.algo == "dagger"
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

    ``run_args`` are ``_Run``'s (out, meta, eval env, evaluation levels). Each
    ``algo.train()`` samples one batch on the env runners and updates; the learner's weights
    then go into a local copy of the module, which ``_Run`` evaluates and saves. A Ray this
    started is shut down at the end (one joined or already running is left alone).
    """
    from agents import rllib, rllib_env

    out, meta = run_args[0], run_args[1]
    progress = rllib.ProgressLog(out / "progress.csv")
    run = _Run(
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


# -- soko train ---------------------------------------------------------------------------------


# the config sections as (TrainConfig field, dataclass, flag prefix); env and network fields
# have names of their own, the algorithms' share names, so theirs carry the section's prefix
_SECTIONS = (
    ("env", EnvConfig, ""),
    ("network", NetworkConfig, ""),
    ("ppo", PPOConfig, "ppo-"),
    ("dqn", DQNConfig, "dqn-"),
    ("bc", BCConfig, "bc-"),
    ("dagger", DaggerConfig, "dagger-"),
    ("rllib", RLlibConfig, "rllib-"),
)
# short flags kept from before the flags were generated (README and scripts use them)
_ALIASES: dict[str, dict[str, list[str]]] = {
    "env": {"env_id": ["--env"], "reward_scheme": ["--reward"]},
    "network": {"n_layers": ["--layers"]},
    "ppo": {
        "n_steps": ["--n-steps"],
        "n_epochs": ["--n-epochs"],
        "ent_coef": ["--ent-coef"],
        "lr_end": ["--lr-end"],
    },
    "dqn": {},
    "bc": {
        "dataset": ["--dataset"],
        "learning_rate": ["--bc-lr"],
        "finetune_algo": ["--finetune-algo"],
        "finetune_steps": ["--finetune-steps"],
    },
    "dagger": {"jobs": ["--jobs"]},
    "rllib": {"ray_address": ["--ray"]},
}
_CHOICES: dict[str, dict[str, tuple[str, ...]]] = {
    "env": {},
    "network": {
        "policy": POLICIES,
        "value_head": ("conv", "pool"),
        "border": ("wall", "same"),
        "pooling": ("flatten", "mean-max"),
    },
    "ppo": {},
    "dqn": {},
    "bc": {"finetune_algo": ("maskable-ppo", "ppo")},
    "dagger": {},
    "rllib": {},
}


def add_train_parser(sub: Any, source_help: str) -> None:
    """Add the ``train`` subcommand; its options are generated from ``TrainConfig``'s fields."""
    t = sub.add_parser(
        "train",
        help="train an RL agent (MaskablePPO, PPO, DQN, RLlib PPO), clone an expert dataset "
        "or run DAgger with a planner expert",
        description="Train on the vector env; writes checkpoints, eval.csv, progress.csv, "
        "learning_curve.png and model.zip (+ model.json) into --out (rllib-ppo: model/ and "
        "algorithm/ folders, on a local Ray or --ray auto|ADDRESS). Every option is a field "
        "of agents.train_config.TrainConfig (--ppo-*, --dqn-*, --bc-*, --dagger-*, --rllib-*: "
        "that section's; --algo dagger labels on --jobs K processes or --ray).",
    )
    add_dataclass_options(
        t,
        TrainConfig,
        skip=[name for name, _, _ in _SECTIONS],
        choices={"algo": ALGOS},
        required=["out"],
    )
    for name, cls, prefix in _SECTIONS:
        group = t.add_argument_group(f"{name} ({cls.__name__})")
        add_dataclass_options(
            group, cls, prefix=prefix, aliases=_ALIASES[name], choices=_CHOICES[name]
        )
    shortcuts = t.add_argument_group("shortcuts (set the field in every section that has it)")
    shortcuts.add_argument(
        "--lr", type=float, default=None, help="ppo (rllib-ppo too) and dqn learning_rate"
    )
    shortcuts.add_argument("--batch-size", type=int, default=None, help="ppo, dqn, bc batch_size")
    shortcuts.add_argument(
        "--gamma", type=float, default=None, help="ppo (rllib-ppo too) and dqn gamma"
    )
    t.set_defaults(func=run_train)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The ``TrainConfig`` of ``soko train`` arguments (fields not given keep their defaults)."""
    parts = {name: cls(**dataclass_kwargs(cls, args, prefix=pre)) for name, cls, pre in _SECTIONS}
    for name in ("ppo", "dqn"):
        if args.lr is not None:
            parts[name].learning_rate = args.lr
        if args.gamma is not None:
            parts[name].gamma = args.gamma
    if args.batch_size is not None:
        for name in ("ppo", "dqn", "bc"):
            parts[name].batch_size = args.batch_size
    return TrainConfig(**dataclass_kwargs(TrainConfig, args), **parts)


def run_train(args: argparse.Namespace) -> int:
    """Run ``soko train``; exit code 0, or 130 when interrupted."""
    result = train(config_from_args(args))
    print(f"model: {result.model_path} ({result.timesteps} env steps, {result.seconds:.0f} s)")
    if result.final_eval is not None:
        ev = result.final_eval
        print(
            f"held-out: solved {ev.solve_rate:.1%} of {ev.n_levels} levels, mean pushes "
            f"{ev.mean_pushes:.2f}"
        )
    return 130 if result.interrupted else 0
