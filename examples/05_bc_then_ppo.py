"""Behaviour cloning from planner demonstrations, then MaskablePPO fine-tuning from those weights.

Collects expert episodes with ``agents.expert.collect.collect_dataset`` (A* solutions played in
the Push env, written as an npz file), clones them into a MaskablePPO policy with the in-house
masked cross-entropy (``agents.training.bc``), evaluates the clone on held-out levels, and
fine-tunes it with MaskablePPO (``agents.training.train.train`` with ``algo="bc"``). The run
folder gets ``bc.csv``
(loss and accuracy), ``eval.csv`` (phase "bc" then "rl"), ``bc_model.zip``, ``model.zip`` and
``learning_curve.png``.

    python examples/05_bc_then_ppo.py                           # generated 7x7 two-box levels
    python examples/05_bc_then_ppo.py --dataset expert.npz      # a dataset from `soko collect`
    python examples/05_bc_then_ppo.py --smoke                   # tiny run for the tests

The same as commands: ``soko collect --env Sokoban-Push-v0 --levels generated --width 7
--height 7 --boxes 2 --limit 2000 --format npz --out expert.npz`` then ``soko train --algo bc
--dataset expert.npz --levels generated:7x7:2 --steps 3000 --finetune-steps 300000
--out runs/bc_ppo_7x7``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from soko_gym.cli import parse_dataclass_args


@dataclass
class Args:
    """Command-line arguments (each field is one ``--option``).

    Attributes:
        levels: levels to collect on and fine-tune on: generated:WxH:N or a pack selection.
        dataset: an existing npz dataset or Minari id (empty: collect one into --out).
        expert_levels: levels the planner solves for the dataset.
        planner: planner that makes the demonstrations.
        bc_steps: behaviour-cloning gradient steps.
        finetune_steps: MaskablePPO env steps after cloning (0: clone only).
        max_episode_steps: pushes per episode in fine-tuning and evaluation.
        eval_episodes: held-out levels per evaluation.
        seed: seed of the expert levels, the network and the evaluation.
        out: output folder.
        overwrite: reuse an output folder that holds a run.
        smoke: tiny run for the tests: 12 one-box 6x6 levels, 60 cloning steps, 128 PPO steps.
    """

    levels: str = "generated:7x7:2"
    dataset: str = ""
    expert_levels: int = 2000
    planner: str = "astar"
    bc_steps: int = 3000
    finetune_steps: int = 300_000
    max_episode_steps: int = 30
    eval_episodes: int = 500
    seed: int = 0
    out: str = "runs/bc_ppo_7x7"
    overwrite: bool = False
    smoke: bool = False


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, one ``--option`` per field (help from the field docs)."""
    return parse_dataclass_args(Args, argv, __doc__)


def collect(args: Args, path: Path) -> str:
    """Collect the expert dataset into ``path`` (npz); returns its path."""
    from agents.expert.collect import collect_dataset

    result = collect_dataset(
        "Sokoban-Push-v0",
        args.levels,  # collect_dataset reads "generated:WxH:N" like every level source
        args.planner,
        path,
        format="npz",
        overwrite=True,
        limit=args.expert_levels,
        seed=args.seed,
        env_kwargs={"dead_plane": True},
        progress=not args.smoke,
    )
    print(f"expert dataset: {result.n_episodes} episodes, {len(result.unsolved)} unsolved")
    return str(result.out)


def main(argv: list[str] | None = None) -> int:
    """Collect (unless given a dataset), clone, fine-tune; returns the exit code."""
    from agents.training.config import BCConfig, EnvConfig, NetworkConfig, PPOConfig, TrainConfig
    from agents.training.train import train

    args = parse_args(argv)
    network, ppo = NetworkConfig(), PPOConfig(learning_rate=1e-3, batch_size=256)
    if args.smoke:
        args.levels, args.expert_levels, args.bc_steps = "generated:6x6:1", 12, 60
        args.finetune_steps, args.eval_episodes, args.max_episode_steps = 128, 8, 12
        network = NetworkConfig(channels=8, n_layers=2)
        ppo = PPOConfig(n_steps=32, batch_size=64, n_epochs=2)
    out = Path(args.out)
    if (out / "model.zip").exists() and not (args.overwrite or args.smoke):
        print(f"error: {out} already holds a run; pass --overwrite", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    dataset = args.dataset or collect(args, out / "expert.npz")
    config = TrainConfig(
        algo="bc",
        out=str(out),
        steps=args.bc_steps,
        seed=args.seed,
        n_envs=4 if args.smoke else 32,
        eval_every=max(args.finetune_steps // 4, 1),
        eval_episodes=args.eval_episodes,
        checkpoint_every=0,
        overwrite=True,  # checked above; the folder may hold the dataset just collected
        quiet=args.smoke,
        env=EnvConfig(levels=args.levels, max_episode_steps=args.max_episode_steps),
        network=network,
        ppo=ppo,
        bc=BCConfig(
            dataset=dataset,
            log_every=max(args.bc_steps // 20, 1),
            finetune_steps=args.finetune_steps,
        ),
    )
    result = train(config)
    print(f"model: {result.model_path} ({result.seconds:.0f} s)")
    if result.final_eval is not None:
        print(f"held-out: solved {result.final_eval.solve_rate:.1%} after fine-tuning")
    return 130 if result.interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
