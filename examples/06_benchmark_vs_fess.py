"""Benchmark a trained agent against planners (A* and FESS) on the same levels.

Runs ``agents.benchmark.run_benchmark`` (the library behind ``soko bench``): planners get a time
budget per level, the agent a step budget per episode in the env it was trained on; the run
writes ``results.csv``, prints a summary table and draws ``solve_rate.png`` in ``--out``.

    python examples/06_benchmark_vs_fess.py --model runs/ppo/model.zip --levels microban:1-50
    python examples/06_benchmark_vs_fess.py --smoke   # 2 levels, astar, a quickly trained agent

The same as a command: ``soko bench --levels microban:1-50 --planners astar,fess
--agents runs/ppo/model.zip --out runs/bench_vs_fess``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from soko_gym.cli import parse_dataclass_args


@dataclass
class Args:
    """Command-line arguments (each field is one ``--option``).

    Attributes:
        model: saved SB3 model (.zip) to benchmark; a sidecar <model>.json names its env.
        levels: level source: a pack name, file or directory, optionally with :A-B.
        planners: comma-separated planners; names not registered in this install are skipped.
        time_limit: planner seconds per level.
        max_steps: agent step budget per episode (0: the env's registered limit).
        episodes_per_level: agent episodes per level (more than 1: sampled actions).
        jobs: worker processes for the planners.
        seed: seed of the agent's training (smoke) and sampling.
        out: output directory (results.csv, solve_rate.png).
        overwrite: replace an existing results.csv in --out.
        smoke: tiny run for the tests: 2 Microban levels, astar, an agent trained for 64 steps.
    """

    model: str = ""
    levels: str = "microban"
    planners: str = "astar,fess"
    time_limit: float = 10.0
    max_steps: int = 0
    episodes_per_level: int = 1
    jobs: int = 1
    seed: int = 0
    out: str = "runs/bench_vs_fess"
    overwrite: bool = False
    smoke: bool = False


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, one ``--option`` per field (help from the field docs)."""
    return parse_dataclass_args(Args, argv, __doc__)


def train_tiny_agent(folder: Path, levels: str, seed: int) -> Path:
    """A MaskablePPO on the push env after 64 steps, saved with its sidecar JSON."""
    from sb3_contrib import MaskablePPO

    from soko_gym.envs.sb3 import SokobanVecEnv

    env = SokobanVecEnv("Sokoban-Push-v0", 2, seed=seed, levels=levels)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=seed)
    model.learn(total_timesteps=64)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tiny_agent.zip"
    model.save(path)
    sidecar = {"env_id": "Sokoban-Push-v0", "algo": "maskable-ppo", "seed": seed}
    path.with_suffix(".json").write_text(json.dumps(sidecar))
    return path


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns the exit code."""
    import planners
    from agents.benchmark import BenchConfig, run_benchmark

    args = parse_args(argv)
    if args.smoke:
        args.levels, args.planners, args.time_limit = "microban:1-2", "astar", 5.0
        args.max_steps = args.max_steps or 20
        args.model = str(train_tiny_agent(Path(args.out) / "agent", args.levels, args.seed))
    if not args.model:
        print("error: give --model path/to/model.zip (or --smoke)", file=sys.stderr)
        return 2
    known = planners.available()
    names = [p for p in args.planners.split(",") if p]
    for name in names:
        if name not in known:
            print(f"note: planner {name!r} is not registered here; skipped", file=sys.stderr)
    config = BenchConfig(
        levels=args.levels,
        planners=tuple(p for p in names if p in known),
        agents=(args.model,),
        time_limit=args.time_limit,
        episodes_per_level=args.episodes_per_level,
        max_steps=args.max_steps or None,
        jobs=args.jobs,
        out=args.out,
        overwrite=args.overwrite or args.smoke,
        seed=args.seed,
        quiet=args.smoke,
    )
    rows = run_benchmark(config)
    print(f"{len(rows)} runs; results in {Path(args.out) / 'results.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
