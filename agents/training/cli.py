"""``soko train``: flags generated from ``TrainConfig``'s fields, and the command."""

from __future__ import annotations

import argparse
from typing import Any

from agents.training.config import (
    ALGOS,
    BC_TARGETS,
    POLICIES,
    BCConfig,
    DaggerConfig,
    DQNConfig,
    EnvConfig,
    NetworkConfig,
    PPOConfig,
    RLlibConfig,
    TrainConfig,
)
from agents.training.train import train
from soko_gym.cli import add_dataclass_options, dataclass_kwargs

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
    "bc": {"finetune_algo": ("maskable-ppo", "ppo"), "targets": BC_TARGETS},
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
        "of agents.training.config.TrainConfig (--ppo-*, --dqn-*, --bc-*, --dagger-*, --rllib-*: "
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
