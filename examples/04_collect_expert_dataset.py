"""Collect expert trajectories (a planner's solutions played in the env) as a dataset.

``agents.trajectories.collect_dataset`` is the library behind ``soko collect``: it solves each
level, plays the solution in the env and records observations, actions, rewards, terminations,
truncations and action masks. Minari datasets (``data`` extra) keep the env spec, so
``minari.load_dataset(id).recover_environment()`` rebuilds the env; npz needs no extra. The script
reads the dataset back and replays every episode to a solved state.

    python examples/04_collect_expert_dataset.py --levels microban --out sokoban/microban-push-v0
    python examples/04_collect_expert_dataset.py --levels generated --limit 1000 --jobs 2
    python examples/04_collect_expert_dataset.py --format npz --out runs/microban.npz
    python examples/04_collect_expert_dataset.py --smoke   # 3 Microban levels, npz, temp dir

The same as a command: ``soko collect --env Sokoban-Push-v0 --levels microban --planner astar
--out sokoban/microban-push-v0``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Args:
    """Command-line arguments (each field is one ``--option``)."""

    env: str = "Sokoban-Push-v0"
    """env id: Sokoban-Push-v0, Sokoban-Macro-v0 or Sokoban-Move-v0"""
    levels: str = "microban:1-20"
    """level source (pack, file, selection such as microban:1-20) or "generated\""""
    planner: str = "astar"
    """registry name of the planner"""
    out: str = "sokoban/microban-push-expert-v0"
    """Minari dataset id, or the npz path with --format npz"""
    format: str = "minari"
    """dataset format: minari or npz"""
    jobs: int = 1
    """worker processes solving levels"""
    limit: int = 0
    """at most this many levels (0: all; needed for generated levels)"""
    time_limit: float = 10.0
    """planner seconds per level"""
    width: int = 7
    """generated levels: columns"""
    height: int = 7
    """generated levels: rows"""
    boxes: int = 2
    """generated levels: boxes"""
    seed: int = 0
    """seed of the generated levels"""
    overwrite: bool = False
    """replace an existing dataset"""
    smoke: bool = False
    """tiny run for the tests: 3 Microban levels to an npz file in a temporary folder"""


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, one ``--option`` per field (help from the field docs)."""
    body = ast.parse(inspect.getsource(Args)).body[0].body
    docs = {
        a.target.id: b.value.value
        for a, b in zip(body, body[1:], strict=False)
        if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr)
    }
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        if f.type == "bool":
            parser.add_argument(flag, action="store_true", help=docs[f.name])
        else:
            kind = {"int": int, "float": float}.get(f.type, str)
            parser.add_argument(flag, type=kind, default=f.default, help=docs[f.name])
    return Args(**vars(parser.parse_args(argv)))


def run(args: Args) -> int:
    """Collect, then read the dataset back and replay it; exit code 0 when all is well."""
    from agents.datasets import load_dataset, replay_episode
    from agents.trajectories import collect_dataset, report

    generated = args.levels == "generated"
    result = collect_dataset(
        args.env,
        args.levels,
        args.planner,
        args.out,
        format=args.format,
        overwrite=args.overwrite,
        limit=args.limit or None,
        time_limit=args.time_limit,
        jobs=args.jobs,
        seed=args.seed,
        generator_kwargs=(
            {"width": args.width, "height": args.height, "n_boxes": args.boxes}
            if generated
            else None
        ),
    )
    report(result)
    if result.out is None:
        return 1
    dataset = load_dataset(result.out, args.format)
    replayed = sum(
        replay_episode(dataset.env_id, ep, **dataset.env_kwargs) for ep in dataset.episodes
    )
    steps = sum(len(ep) for ep in dataset.episodes)
    print(
        f"read back: {len(dataset.episodes)} episodes, {steps} steps; {replayed} replay to solved"
    )
    return 0 if replayed == len(dataset.episodes) and not result.unsolved else 1


def main(argv: list[str] | None = None) -> int:
    """Run the example (in a temporary folder with ``--smoke``)."""
    args = parse_args(argv)
    if not args.smoke:
        return run(args)
    with tempfile.TemporaryDirectory() as tmp:
        args.levels, args.format, args.limit = "microban:1-3", "npz", 0
        args.out = str(Path(tmp) / "smoke.npz")
        return run(args)


if __name__ == "__main__":
    sys.exit(main())
