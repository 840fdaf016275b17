"""Train MaskablePPO on the Push env with generated levels and evaluate it on held-out ones.

Runs ``agents.training.train.train`` (the library behind ``soko train``) on soko-gym's numba
vector env: checkpoints, ``eval.csv`` (solve rate and mean pushes on held-out generated
levels), ``progress.csv``, ``learning_curve.png`` and ``model.zip`` with its sidecar
``model.json``.

    python examples/03_train_maskable_ppo.py                  # 7x7, 2 boxes (benchmarks/RESULTS.md)
    python examples/03_train_maskable_ppo.py --levels generated:10x10:4 --steps 5000000
    python examples/03_train_maskable_ppo.py --smoke          # a few hundred steps, for the tests

The same as a command: ``soko train --algo maskable-ppo --levels generated:7x7:2 --steps
2000000 --max-episode-steps 30 --eval-episodes 500 --eval-every 250000 --lr-end 0.0002
--max-seconds 1800 --out runs/maskable_ppo_7x7`` (``benchmarks/bench_agents.py 7x7`` measures it).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from soko_gym.cli import parse_dataclass_args


@dataclass
class Args:
    """Command-line arguments (each field is one ``--option``).

    Attributes:
        levels: training levels: generated:WxH:N (W columns, H rows, N boxes) or a pack selection.
        eval_levels: held-out levels (empty: the training generator with a seed it never uses).
        steps: env steps (pushes) to train for.
        n_envs: parallel envs in the numba vector env.
        max_episode_steps: pushes per episode before truncation, in training and evaluation.
        eval_episodes: held-out levels per evaluation.
        eval_every: env steps between evaluations.
        minutes: wall-clock budget of the training (0: none); the run then evaluates and saves.
        seed: seed of the levels, the network and the evaluation levels.
        out: output folder.
        overwrite: reuse an output folder that holds a run.
        smoke: tiny run for the tests: 6x6 one-box levels, 256 steps, a small network.
    """

    levels: str = "generated:7x7:2"
    eval_levels: str = ""
    steps: int = 2_000_000
    n_envs: int = 32
    max_episode_steps: int = 30
    eval_episodes: int = 500
    eval_every: int = 250_000
    minutes: float = 30.0
    seed: int = 0
    out: str = "runs/maskable_ppo_7x7"
    overwrite: bool = False
    smoke: bool = False


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, one ``--option`` per field (help from the field docs)."""
    return parse_dataclass_args(Args, argv, __doc__)


def main(argv: list[str] | None = None) -> int:
    """Train, evaluate and report; returns the exit code."""
    from agents.training.config import EnvConfig, NetworkConfig, PPOConfig, TrainConfig
    from agents.training.train import train

    args = parse_args(argv)
    # the set-up measured in benchmarks/RESULTS.md: 98% of 500 held-out levels in 30 minutes
    network, ppo = NetworkConfig(), PPOConfig(learning_rate=2e-3, lr_end=2e-4)
    if args.smoke:
        args.levels, args.steps, args.n_envs = "generated:6x6:1", 256, 4
        args.eval_episodes, args.eval_every, args.max_episode_steps = 8, 128, 12
        network = NetworkConfig(channels=8, n_layers=2)
        ppo = PPOConfig(n_steps=32, batch_size=64, n_epochs=2)
    config = TrainConfig(
        algo="maskable-ppo",
        out=args.out,
        steps=args.steps,
        seed=args.seed,
        n_envs=args.n_envs,
        eval_every=args.eval_every,
        eval_episodes=args.eval_episodes,
        checkpoint_every=2 * args.eval_every,
        max_seconds=60.0 * args.minutes,
        overwrite=args.overwrite or args.smoke,
        quiet=args.smoke,
        env=EnvConfig(
            levels=args.levels,
            eval_levels=args.eval_levels or None,
            max_episode_steps=args.max_episode_steps,
        ),
        network=network,
        ppo=ppo,
    )
    result = train(config)
    print(f"model: {result.model_path} ({result.timesteps} steps, {result.seconds:.0f} s)")
    if result.final_eval is not None:
        ev = result.final_eval
        print(f"held-out: solved {ev.solve_rate:.1%} of {ev.n_levels} levels")
    return 130 if result.interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
