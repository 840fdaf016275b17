"""RLlib PPO with action masks on generated 7x7 two-box levels (issue 13), on this machine.

The set-up of ``benchmarks/bench_agents.py 7x7`` (the stable-baselines3 MaskablePPO run in
RESULTS.md) through ``soko train --algo rllib-ppo``: ``Sokoban-Push-v0`` on
``generated:7x7:2``, 30-push episodes, the Boxoban reward divided by 10, the dead-square plane,
episodes ended on a simple deadlock; the same square network (4 wall-padded 3x3 convolutions of
32 channels, per-square push logits, a value head on 8 per-square maps); 32 envs x 64 steps
per update (here 2 env runners of 16 envs), minibatches of 256, 4 epochs, learning rate 2e-3
falling linearly to 2e-4 over 2M steps, gamma 0.97, entropy 0.01. Training stops at the
wall-clock budget (sampling, updates and the periodic evaluations all count); the final model
then plays 500 held-out generated levels once each, greedily (levels from a generator seed the
training never uses, as the SB3 run's). Reports the solve rate beside the SB3 figure, the env
steps trained and the env steps/s of RLlib's sampling (steps over the time RLlib spent
sampling, updates excluded) and of the whole run.

    python benchmarks/scale_rllib.py --minutes 30 --out runs/scale_rllib
"""

from __future__ import annotations

import argparse
import csv
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench_agents import TARGETS  # this folder is on the path of a script run from it

from agents.training.config import (
    RLlibConfig,
)
from agents.training.train import train
from soko_gym.provenance import machine_line

SB3_SOLVE_RATE = 0.982  # RESULTS.md, "MaskablePPO on 7x7 levels"
# the stable-baselines3 7x7 run of bench_agents.py, on RLlib's PPO: the same envs, network
# (the square policy "auto" picks for MaskablePPO, named here) and PPO hyperparameters
CONFIG = replace(
    TARGETS["7x7"][2],
    algo="rllib-ppo",
    out="runs/scale_rllib",
    network=replace(TARGETS["7x7"][2].network, policy="square"),
    rllib=RLlibConfig(env_runners=2, envs_per_runner=16),
)


def _sampling(progress: Path) -> tuple[int, float]:
    """(env steps sampled, seconds spent sampling) summed over the run's iterations."""
    with progress.open(newline="") as f:
        rows = list(csv.DictReader(f))
    steps = sum(int(float(r["rllib/env_steps"])) for r in rows)
    return steps, sum(float(r["rllib/sample_seconds"]) for r in rows)


def run(minutes: float, out: Path, *, overwrite: bool = True, seed: int = 0) -> dict[str, Any]:
    """Train for ``minutes`` of wall time into ``out``, evaluate; the figures as a table's rows.

    Raises:
        ValueError: a budget that is not positive.
    """
    if not minutes > 0:
        raise ValueError(f"minutes must be positive, got {minutes!r}")
    config = replace(
        CONFIG, out=str(out), seed=seed, max_seconds=60.0 * minutes, overwrite=overwrite
    )
    start = time.perf_counter()
    result = train(config)
    ev = result.final_eval
    if ev is None:
        raise RuntimeError("the run made no held-out evaluation")
    sampled, sample_seconds = _sampling(Path(result.out) / "progress.csv")
    rl = config.rllib
    return {
        "held-out levels solved (greedy)": f"{ev.solve_rate:.1%} of {ev.n_levels}",
        "stable-baselines3 MaskablePPO, same set-up, 30 min": f"{SB3_SOLVE_RATE:.1%} of 500",
        "mean pushes of the solved levels": f"{ev.mean_pushes:.2f}",
        "env steps trained": f"{result.timesteps:,}",
        "env steps/s of RLlib sampling": f"{sampled / max(sample_seconds, 1e-9):,.0f}",
        "env steps/s of the whole run": f"{result.timesteps / result.seconds:,.0f}",
        "training budget": f"{minutes:g} min",
        "wall time of the run": f"{result.seconds / 60:.1f} min",
        "whole script": f"{(time.perf_counter() - start) / 60:.1f} min",
        "env runners x envs": f"{rl.env_runners} x {rl.envs_per_runner}",
        "run folder": str(result.out),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="training budget (30)")
    parser.add_argument("--out", default=CONFIG.out, help=f"run folder ({CONFIG.out})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the run (0)")
    args = parser.parse_args(argv)
    figures = run(args.minutes, Path(args.out), seed=args.seed)
    print("## Scale-out: `python benchmarks/scale_rllib.py`\n")
    print(machine_line() + "\n")
    print("| Measurement | Result |\n|---|---:|")
    for key, value in figures.items():
        print(f"| {key} | {value} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
