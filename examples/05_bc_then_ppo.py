"""Behaviour cloning from planner demonstrations, then MaskablePPO fine-tuning from those weights.

Collects expert episodes with ``agents.trajectories.collect_dataset`` (A* solutions played in
the Push env, written as an npz file), clones them into a MaskablePPO policy with the in-house
masked cross-entropy (``agents.bc``), evaluates the clone on held-out levels, and fine-tunes it
with MaskablePPO (``agents.train.train`` with ``algo="bc"``). The run folder gets ``bc.csv``
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

import argparse
import ast
import dataclasses
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Args:
    """Command-line arguments (each field is one ``--option``)."""

    levels: str = "generated:7x7:2"
    """levels to collect on and fine-tune on: generated:WxH:N or a pack selection"""
    dataset: str = ""
    """an existing npz dataset or Minari id (empty: collect one into --out)"""
    expert_levels: int = 2000
    """levels the planner solves for the dataset"""
    planner: str = "astar"
    """planner that makes the demonstrations"""
    bc_steps: int = 3000
    """behaviour-cloning gradient steps"""
    finetune_steps: int = 300_000
    """MaskablePPO env steps after cloning (0: clone only)"""
    max_episode_steps: int = 30
    """pushes per episode in fine-tuning and evaluation"""
    eval_episodes: int = 500
    """held-out levels per evaluation"""
    seed: int = 0
    """seed of the expert levels, the network and the evaluation"""
    out: str = "runs/bc_ppo_7x7"
    """output folder"""
    overwrite: bool = False
    """reuse an output folder that holds a run"""
    smoke: bool = False
    """tiny run for the tests: 12 one-box 6x6 levels, 60 cloning steps, 128 PPO steps"""


def _field_docs(cls: type) -> dict[str, str]:
    """The attribute docstrings of a dataclass (the string under each field)."""
    body = ast.parse(inspect.getsource(cls)).body[0].body
    docs = {}
    for node, after in zip(body, body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr):
            docs[node.target.id] = str(after.value.value)
    return docs


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, one ``--option`` per field."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    docs = _field_docs(Args)
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        if f.type in (bool, "bool"):
            parser.add_argument(flag, action="store_true", help=docs[f.name])
        else:
            kind = {"int": int, "float": float}.get(str(f.type), str)
            parser.add_argument(flag, type=kind, default=f.default, help=docs[f.name])
    return Args(**vars(parser.parse_args(argv)))


def collect(args: Args, path: Path) -> str:
    """Collect the expert dataset into ``path`` (npz); returns its path."""
    from agents.train_config import parse_levels
    from agents.trajectories import collect_dataset

    levels, gen = parse_levels(args.levels)
    result = collect_dataset(
        "Sokoban-Push-v0",
        levels,
        args.planner,
        path,
        format="npz",
        overwrite=True,
        limit=args.expert_levels,
        seed=args.seed,
        generator_kwargs=gen,
        env_kwargs={"dead_plane": True},
        progress=not args.smoke,
    )
    print(f"expert dataset: {len(result.episodes)} episodes, {len(result.unsolved)} unsolved")
    return str(result.out)


def main(argv: list[str] | None = None) -> int:
    """Collect (unless given a dataset), clone, fine-tune; returns the exit code."""
    from agents.train import train
    from agents.train_config import BCConfig, EnvConfig, NetworkConfig, PPOConfig, TrainConfig

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
