"""Learned agents: the issue's training targets, trained and measured on this machine.

``7x7``: MaskablePPO on ``Sokoban-Push-v0`` with generated 7x7 two-box levels, at most 30
minutes of training (the run's wall time: rollouts, updates and periodic evaluations), then
greedy play of 500 held-out generated levels (a generator seed the training never uses).
Target: at least 95% solved.

``boxoban``: behaviour cloning from A* demonstrations (``boxoban-unfiltered-train`` and 5,000
generated 10x10 four-box levels; collected first when the npz files are missing, about 30 s),
3,000 gradient steps, then MaskablePPO on both sources mixed until a 20-minute budget is spent
(the issue allows 2 hours), measured on all of ``boxoban-unfiltered-test`` with a 120-action
limit (actions of the Push env are pushes). Target: at least 50% solved.

Prints a markdown table with the machine it ran on and the equivalent ``soko train`` command;
the run folder keeps the model, ``eval.csv``, ``progress.csv`` and ``learning_curve.png``.

    python benchmarks/bench_agents.py 7x7 --out runs/bench_agents_7x7
    python benchmarks/bench_agents.py 7x7 --minutes 3       # a short check of the set-up
    python benchmarks/bench_agents.py boxoban --out runs/bench_agents_boxoban
"""

from __future__ import annotations

import argparse
import csv
import shlex
import sys
import time
from dataclasses import replace
from pathlib import Path

from agents.training.config import (
    BCConfig,
    EnvConfig,
    NetworkConfig,
    PPOConfig,
    TrainConfig,
)
from agents.training.train import train
from soko_gym.provenance import machine_line

TARGETS = {
    "7x7": (
        0.95,
        30,
        TrainConfig(
            algo="maskable-ppo",
            out="runs/bench_agents_7x7",
            steps=2_000_000,
            seed=0,
            n_envs=32,
            eval_every=250_000,
            eval_episodes=500,
            checkpoint_every=500_000,
            env=EnvConfig(
                levels="generated:7x7:2",
                max_episode_steps=30,
                reward_scheme="-0.01,0.1,-0.1,1",
            ),
            network=NetworkConfig(value_head="conv"),
            ppo=PPOConfig(learning_rate=2e-3, lr_end=2e-4, batch_size=256),
        ),
    ),
    "boxoban": (
        0.50,
        20,
        TrainConfig(
            algo="bc",
            out="runs/bench_agents_boxoban",
            steps=3_000,
            seed=0,
            n_envs=32,
            eval_every=100_000,
            eval_episodes=1000,
            checkpoint_every=0,
            env=EnvConfig(
                levels="generated:10x10:4+boxoban-unfiltered-train",
                eval_levels="boxoban-unfiltered-test",
                max_episode_steps=100,
                eval_max_steps=120,
                reward_scheme="-0.01,0.1,-0.1,1",
            ),
            network=NetworkConfig(channels=32, n_layers=6, value_head="conv"),
            ppo=PPOConfig(learning_rate=5e-4, batch_size=256),
            bc=BCConfig(
                dataset="runs/expert_boxoban.npz,runs/expert_gen10x10.npz",
                finetune_steps=2_000_000,
            ),
        ),
    ),
}
COLLECT = (
    "soko collect --env Sokoban-Push-v0 --levels boxoban-unfiltered-train --planner astar "
    "--format npz --jobs 2 --out runs/expert_boxoban.npz",
    "soko collect --env Sokoban-Push-v0 --levels generated --width 10 --height 10 --boxes 4 "
    "--limit 5000 --planner astar --format npz --jobs 2 --out runs/expert_gen10x10.npz",
)


def train_command(config: TrainConfig) -> str:
    """The ``soko train`` command line of ``config`` (the settings this script changes)."""
    e, n, p = config.env, config.network, config.ppo
    args = ["soko", "train", "--algo", config.algo, "--env", e.env_id, "--levels", e.levels]
    if e.eval_levels:
        args += ["--eval-levels", e.eval_levels]
    args += ["--steps", config.steps, "--out", config.out, "--seed", config.seed]
    args += ["--n-envs", config.n_envs, "--eval-every", config.eval_every]
    args += ["--eval-episodes", config.eval_episodes, "--checkpoint-every", config.checkpoint_every]
    if e.max_episode_steps:
        args += ["--max-episode-steps", e.max_episode_steps]
    if e.eval_max_steps:
        args += ["--eval-max-steps", e.eval_max_steps]
    args += [f"--reward={e.reward_scheme}", "--value-head", n.value_head]
    if n.channels:
        args += ["--channels", n.channels]
    if n.n_layers:
        args += ["--layers", n.n_layers]
    args += ["--lr", p.learning_rate, "--batch-size", p.batch_size, "--n-steps", p.n_steps]
    if p.lr_end is not None:
        args += ["--lr-end", p.lr_end]
    args += ["--n-epochs", p.n_epochs, "--ent-coef", p.ent_coef, "--gamma", p.gamma]
    if config.algo == "bc":
        args += ["--dataset", config.bc.dataset, "--finetune-steps", config.bc.finetune_steps]
        args += ["--bc-lr", config.bc.learning_rate]
    if config.max_seconds:
        args += ["--max-seconds", f"{config.max_seconds:g}"]
    return shlex.join(str(a) for a in args)


def collect_missing(datasets: str) -> None:
    """Run the ``COLLECT`` command of each dataset in ``datasets`` whose file is missing."""
    from soko_gym.cli import main as soko

    for path in datasets.split(","):
        if Path(path).exists():
            continue
        command = next(c for c in COLLECT if c.endswith(f"--out {path}"))
        print(f"collecting {path}: {command}", file=sys.stderr)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        if soko(shlex.split(command)[1:] + ["--quiet"]) != 0:
            raise SystemExit(f"collecting {path} failed")


def main(argv: list[str] | None = None) -> int:
    """Train one target, evaluate it and print the table; exit code 0 when it meets it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=sorted(TARGETS), help="which target to train")
    parser.add_argument("--out", default=None, help="run folder (default: runs/bench_agents_*)")
    parser.add_argument("--minutes", type=float, default=None, help="training time budget")
    parser.add_argument("--seed", type=int, default=0, help="seed of the run (0)")
    parser.add_argument("--overwrite", action="store_true", help="reuse the run folder")
    parser.add_argument("--print-commands", action="store_true", help="print the commands and stop")
    args = parser.parse_args(argv)
    goal, minutes, config = TARGETS[args.target]
    minutes = args.minutes if args.minutes is not None else minutes
    config = replace(
        config,
        out=args.out or config.out,
        seed=args.seed,
        max_seconds=60.0 * minutes,
        overwrite=args.overwrite,
    )
    command = train_command(config)
    if args.print_commands:
        if config.algo == "bc":
            print("\n".join(COLLECT))
        print(command)
        return 0
    start = time.perf_counter()
    if config.algo == "bc":
        collect_missing(config.bc.dataset)
    result = train(config)
    ev = result.final_eval
    print(f"## Learned agents: `python benchmarks/bench_agents.py {args.target}`\n")
    print(machine_line() + "\n")
    print("| Measurement | Result | Notes |")
    print("|---|---:|---|")
    verdict = "**PASS**" if ev is not None and ev.solve_rate >= goal else "**MISS**"
    print(
        f"| held-out levels solved (greedy) | {ev.solve_rate:.1%} of {ev.n_levels} | "
        f"target >= {goal:.0%}: {verdict}; step limit "
        f"{config.env.eval_max_steps or config.env.max_episode_steps} |"
    )
    print(f"| mean pushes of the solved levels | {ev.mean_pushes:.2f} | |")
    if config.algo == "bc":
        bc_rows = [r for r in csv.DictReader((Path(config.out) / "eval.csv").open())]
        bc_rate = next((float(r["solve_rate"]) for r in bc_rows if r["phase"] == "bc"), None)
        if bc_rate is not None:
            print(f"| solved after behaviour cloning alone | {bc_rate:.1%} | before fine-tuning |")
    print(
        f"| env steps trained | {result.timesteps:,} | {result.timesteps / result.seconds:.0f}/s |"
    )
    print(
        f"| wall time | {result.seconds / 60:.1f} min | budget {minutes:g} min of training; "
        f"whole script {(time.perf_counter() - start) / 60:.1f} min |"
    )
    print(f"\nCommand: `{command}`")
    return 0 if verdict == "**PASS**" else 1


if __name__ == "__main__":
    sys.exit(main())
