"""SB3 training runs: MaskablePPO, PPO, DQN and behaviour cloning on soko-gym's vector envs.

``train(TrainConfig(...))`` (or ``soko train``) trains on the numba vector env through the SB3
adapter (``soko_gym.envs.sb3``) and writes into its output folder:

- ``config.json``: the whole configuration, so a run can be repeated;
- ``progress.csv``: SB3's training metrics (losses, rolling episode reward and success rate);
- ``eval.csv``: every ``eval_every`` steps, the solve rate and mean pushes on held-out levels;
- ``checkpoints/model_<steps>_steps.zip``, ``best_model.zip`` and ``model.zip``, each with a
  sidecar ``.json`` naming the env id, env arguments and algorithm (``load_agent`` reads
  both; ``MaskablePPO.load`` / ``PPO.load`` / ``DQN.load`` read the zip);
- ``learning_curve.png``: solve rate and episode reward against steps (``plot`` extra);
- ``bc.csv`` for behaviour cloning: loss and accuracy against gradient steps.

Level sources are a bundled pack, file or selection (``boxoban-unfiltered-train``,
``microban:1-50``) or ``generated:WxH:N`` (fresh generated levels, W columns, H rows, N boxes);
``a+b`` mixes sources (``agents.train_env``). Configs live in ``agents.train_config``, the
held-out evaluation in ``agents.evaluation``, behaviour cloning in ``agents.bc``, the figure in
``agents.learning_curve``.
Held-out evaluation levels from a generated source are generated from a seed the training
levels never use. The same config and seed give the same run. Needs the ``rl`` extra.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation import EvalResult, evaluate, make_eval_env
from agents.learning_curve import plot_learning_curve
from agents.models import load_model
from agents.train_config import (
    ALGOS,
    POLICIES,
    BCConfig,
    DQNConfig,
    EnvConfig,
    NetworkConfig,
    PPOConfig,
    TrainConfig,
    check_config,
    default_eval_source,
    env_kwargs_of,
    eval_level_list,
    frame_size,
)
from agents.train_env import make_train_env, require_rl

__all__ = [
    "TrainConfig",
    "TrainResult",
    "add_train_parser",
    "load_agent",
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
        return "square" if push and algo in ("maskable-ppo", "ppo") else "cnn"
    if kind == "square" and algo == "dqn":
        raise ValueError("network.policy 'square' is for PPO and MaskablePPO; use 'cnn' with DQN")
    return kind


def build_model(config: TrainConfig, env: Any, algo: str) -> Any:
    """A fresh SB3 model of ``algo`` ("maskable-ppo", "ppo", "dqn") on ``env``, seeded."""
    from agents.features import (
        BoardCNN,
        MaskableSquarePolicy,
        SquarePolicy,
        default_features_kwargs,
    )

    rl = require_rl()
    net = config.network
    _, height, width = env.observation_space.shape
    fe_kwargs = default_features_kwargs((height, width))
    if net.channels:
        fe_kwargs["channels"] = net.channels
    if net.n_layers:
        fe_kwargs["n_layers"] = net.n_layers
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


def load_agent(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """Load a model saved by ``train``: ``(model, meta)``.

    ``meta`` holds ``env_id``, ``env_kwargs`` (``obs_size``, ``dead_plane`` ... to build the
    env it plays), ``algo``, ``max_episode_steps``, ``timesteps``, ``levels`` and ``seed``:
    the sidecar JSON, else what the zip recorded.

    Raises:
        ValueError: when the file is missing or carries no soko-gym metadata.
        ImportError: naming the ``rl`` extra when stable-baselines3 is missing.
    """
    return load_model(path, require_meta=True)


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
    """Checkpoints, evaluations, eval.csv and progress lines of one run."""

    def __init__(
        self, config: TrainConfig, out: Path, meta: dict[str, Any], eval_env: Any, n_eval: int
    ) -> None:
        self.config = config
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
            self.save(model, self.out / "checkpoints" / f"model_{t}_steps.zip", t)
            self.next_ckpt = (t // self.config.checkpoint_every + 1) * self.config.checkpoint_every
        if self.next_eval is not None and t >= self.next_eval:
            self.evaluate(model, t, "rl")
            self.next_eval = (t // self.config.eval_every + 1) * self.config.eval_every
        elif time.perf_counter() - self.last_line > 30:
            self.last_line = time.perf_counter()
            success, reward = _train_stats(model)
            self.log(
                f"[{t}/{total}] {t / max(self.seconds(), 1e-9):.0f} steps/s, training "
                f"episodes solved {success:.1%}, reward {reward:.2f}, {self.seconds():.0f} s"
            )
        if self.config.max_seconds and self.seconds() >= self.config.max_seconds:
            self.log(f"time budget of {self.config.max_seconds:.0f} s spent at {t} steps")
            return False
        return True

    def save(self, model: Any, path: Path, t: int) -> Path:
        return save_model(model, path, {**self.meta, "timesteps": int(t)})

    def evaluate(self, model: Any, t: int, phase: str) -> EvalResult | None:
        if self.eval_env is None or t == self.last_eval_at:
            return self.final
        res = evaluate(model, self.eval_env, self.n_eval)
        self.final, self.last_eval_at = res, t
        success, reward = _train_stats(model)
        row = [phase, t, f"{self.seconds():.1f}", f"{res.solve_rate:.4f}", f"{res.mean_pushes:.3f}"]
        row += [f"{res.mean_reward:.4f}", f"{res.mean_length:.2f}", res.n_levels]
        row += [f"{success:.4f}", f"{reward:.4f}"]
        with (self.out / "eval.csv").open("a", newline="") as f:
            csv.writer(f).writerow(row)
        if res.solve_rate > self.best:
            self.best = res.solve_rate
            self.save(model, self.out / "best_model.zip", t)
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


def train(config: TrainConfig) -> TrainResult:
    """Run ``config``: train, evaluate, checkpoint, and write logs and plots (module docstring).

    Raises:
        ValueError: naming a bad setting; ImportError naming the ``rl`` extra.
    """
    check_config(config)
    rl = require_rl()
    out = Path(config.out)
    _prepare_out(out, config.overwrite)
    if config.torch_threads:
        rl.torch.set_num_threads(config.torch_threads)
    data = None
    if config.algo == "bc":
        from agents.bc import load_bc_data

        data, ds_env = load_bc_data(config.bc.dataset, config.env.env_id, config.ppo.gamma)
        config = replace(config, env=replace(config.env, **ds_env))
    eval_spec = default_eval_source(config.env)
    eval_levels = eval_level_list(eval_spec, config.eval_episodes, config.seed) if eval_spec else []
    obs_size = frame_size(config.env, eval_levels)
    env_kwargs = env_kwargs_of(config.env, obs_size)
    algo = config.bc.finetune_algo if config.algo == "bc" else config.algo
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
    env = make_train_env(config, env_kwargs)
    eval_env = None
    if eval_levels:
        max_steps = config.env.eval_max_steps or config.env.max_episode_steps
        eval_env = make_eval_env(config.env.env_id, eval_levels, env_kwargs, max_steps)
    model = build_model(config, env, algo)
    model.set_logger(rl.configure(str(out), ["csv"]))
    run = _Run(config, out, meta, eval_env, len(eval_levels))
    rl_steps = config.bc.finetune_steps if config.algo == "bc" else config.steps
    interrupted = False
    try:
        if data is not None:
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
            model.learn(rl_steps, callback=callback, reset_num_timesteps=data is None)
    except KeyboardInterrupt:
        interrupted = True
        run.log("interrupted: saving the model so far")
    t = int(model.num_timesteps)
    final = run.evaluate(model, t, "rl" if rl_steps else "bc")
    model_path = run.save(model, out / "model.zip", t)
    env.close()
    if eval_env is not None:
        eval_env.close()
    try:
        plot_learning_curve(out)
    except ImportError as err:
        run.log(f"no learning_curve.png: {err}")
    return TrainResult(out, model_path, final, t, run.seconds(), interrupted)


# -- soko train ---------------------------------------------------------------------------------


def add_train_parser(sub: Any, source_help: str) -> None:
    """Add the ``train`` subcommand to the ``soko`` argument parser."""
    d, e, n, p = TrainConfig(), EnvConfig(), NetworkConfig(), PPOConfig()
    t = sub.add_parser(
        "train",
        help="train an RL agent (MaskablePPO, PPO, DQN) or clone an expert dataset (bc)",
        description="Train on the vector env; writes checkpoints, eval.csv, progress.csv, "
        "learning_curve.png and model.zip (+ model.json) into --out.",
    )
    t.add_argument("--algo", choices=ALGOS, default=d.algo, help=f"algorithm ({d.algo})")
    t.add_argument("--env", default=e.env_id, help=f"env id ({e.env_id})")
    gen_help = ', or "generated[:WxH][:N]" (fresh generated levels, e.g. generated:7x7:2)'
    t.add_argument("--levels", default=e.levels, help=source_help + gen_help + f" ({e.levels})")
    t.add_argument(
        "--eval-levels",
        default=None,
        help="held-out levels (default: the training generator with another seed; none for "
        "fixed training levels)",
    )
    t.add_argument("--steps", type=int, default=d.steps, help="env steps; bc: gradient steps")
    t.add_argument("--out", required=True, help="output folder")
    t.add_argument("--dataset", default=None, help="bc: npz path or Minari id (soko collect)")
    t.add_argument("--finetune-steps", type=int, default=0, help="bc: RL env steps after cloning")
    t.add_argument(
        "--finetune-algo",
        choices=("maskable-ppo", "ppo"),
        default="maskable-ppo",
        help="bc: the model cloned and fine-tuned (maskable-ppo)",
    )
    t.add_argument("--seed", type=int, default=d.seed, help=f"seed ({d.seed})")
    t.add_argument("--n-envs", type=int, default=d.n_envs, help=f"parallel envs ({d.n_envs})")
    t.add_argument("--eval-every", type=int, default=d.eval_every, help=f"({d.eval_every})")
    t.add_argument(
        "--eval-episodes",
        type=int,
        default=d.eval_episodes,
        help=f"held-out levels per evaluation ({d.eval_episodes})",
    )
    t.add_argument(
        "--checkpoint-every", type=int, default=d.checkpoint_every, help=f"({d.checkpoint_every})"
    )
    t.add_argument("--max-episode-steps", type=int, default=None, help="training step limit")
    t.add_argument("--eval-max-steps", type=int, default=None, help="evaluation step limit")
    t.add_argument("--obs-size", type=int, nargs=2, default=None, metavar=("H", "W"))
    t.add_argument(
        "--reward",
        default=e.reward_scheme,
        help=f"boxoban, sparse or step,on,off,solved (default {e.reward_scheme}: Boxoban's / 10;"
        " write --reward=-0.1,1,-1,10 when the first number is negative)",
    )
    t.add_argument("--no-dead-plane", action="store_true", help="no dead-square plane")
    t.add_argument("--no-deadlock-termination", action="store_true", help="play on in deadlocks")
    t.add_argument("--policy", choices=POLICIES, default=n.policy, help=f"network ({n.policy})")
    t.add_argument("--channels", type=int, default=0, help="conv channels (0: by board size)")
    t.add_argument("--layers", type=int, default=0, help="3x3 conv layers (0: by board size)")
    t.add_argument(
        "--value-head",
        choices=("conv", "pool"),
        default=n.value_head,
        help=f"square policy's value head ({n.value_head})",
    )
    t.add_argument("--lr", type=float, default=None, help="RL learning rate")
    t.add_argument(
        "--lr-end", type=float, default=None, help="PPO: fall linearly to this rate (constant)"
    )
    t.add_argument(
        "--bc-lr", type=float, default=None, help=f"bc learning rate ({BCConfig().learning_rate})"
    )
    t.add_argument(
        "--n-steps", type=int, default=p.n_steps, help=f"PPO rollout steps per env ({p.n_steps})"
    )
    t.add_argument("--batch-size", type=int, default=None, help="minibatch size")
    t.add_argument("--n-epochs", type=int, default=p.n_epochs, help=f"PPO epochs ({p.n_epochs})")
    t.add_argument("--gamma", type=float, default=None, help="discount")
    t.add_argument(
        "--ent-coef", type=float, default=p.ent_coef, help=f"entropy bonus ({p.ent_coef})"
    )
    t.add_argument(
        "--torch-threads",
        type=int,
        default=d.torch_threads,
        help=f"torch CPU threads ({d.torch_threads}; 1 is fastest on a busy 2-core machine)",
    )
    t.add_argument(
        "--max-seconds",
        type=float,
        default=0.0,
        help="stop training after this wall time (0: none)",
    )
    t.add_argument("--overwrite", action="store_true", help="reuse an output folder")
    t.add_argument("--quiet", action="store_true", help="no progress lines")
    t.set_defaults(func=run_train)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The ``TrainConfig`` of ``soko train`` arguments."""
    env = EnvConfig(
        env_id=args.env,
        levels=args.levels,
        eval_levels=args.eval_levels,
        obs_size=tuple(args.obs_size) if args.obs_size else None,
        max_episode_steps=args.max_episode_steps,
        eval_max_steps=args.eval_max_steps,
        reward_scheme=args.reward,
        dead_plane=not args.no_dead_plane,
        deadlock_termination=not args.no_deadlock_termination,
    )
    network = NetworkConfig(
        policy=args.policy,
        channels=args.channels,
        n_layers=args.layers,
        value_head=args.value_head,
    )
    ppo = PPOConfig(
        n_steps=args.n_steps, n_epochs=args.n_epochs, ent_coef=args.ent_coef, lr_end=args.lr_end
    )
    dqn = DQNConfig()
    bc = BCConfig(
        dataset=args.dataset, finetune_steps=args.finetune_steps, finetune_algo=args.finetune_algo
    )
    if args.bc_lr is not None:
        bc.learning_rate = args.bc_lr
    for part in (ppo, dqn, bc):
        if args.lr is not None and part is not bc:
            part.learning_rate = args.lr
        if args.batch_size is not None:
            part.batch_size = args.batch_size
    for part in (ppo, dqn):
        if args.gamma is not None:
            part.gamma = args.gamma
    return TrainConfig(
        algo=args.algo,
        out=args.out,
        steps=args.steps,
        seed=args.seed,
        n_envs=args.n_envs,
        eval_every=args.eval_every,
        eval_episodes=args.eval_episodes,
        checkpoint_every=args.checkpoint_every,
        torch_threads=args.torch_threads,
        max_seconds=args.max_seconds,
        overwrite=args.overwrite,
        quiet=args.quiet,
        env=env,
        network=network,
        ppo=ppo,
        dqn=dqn,
        bc=bc,
    )


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
