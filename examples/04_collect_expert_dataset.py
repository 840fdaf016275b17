"""Collect expert trajectories (a planner's solutions played in the env) as a dataset.

``agents.expert.collect.collect_dataset`` is the library behind ``soko collect``: it solves each
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

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from soko_gym.cli import parse_dataclass_args


@dataclass
class Args:
    """Command-line arguments (each field is one ``--option``).

    Attributes:
        env: env id: Sokoban-Push-v0, Sokoban-Macro-v0 or Sokoban-Move-v0.
        levels: level source (pack, file, selection such as microban:1-20) or "generated".
        planner: registry name of the planner.
        out: Minari dataset id, or the npz path with --format npz.
        format: dataset format: minari or npz.
        jobs: worker processes solving levels.
        limit: at most this many levels (0: all; needed for generated levels).
        time_limit: planner seconds per level.
        width: generated levels: columns.
        height: generated levels: rows.
        boxes: generated levels: boxes.
        seed: seed of the generated levels.
        overwrite: replace an existing dataset.
        smoke: tiny run for the tests: 3 Microban levels to an npz file in a temporary folder.
    """

    env: str = "Sokoban-Push-v0"
    levels: str = "microban:1-20"
    planner: str = "astar"
    out: str = "sokoban/microban-push-expert-v0"
    format: str = "minari"
    jobs: int = 1
    limit: int = 0
    time_limit: float = 10.0
    width: int = 7
    height: int = 7
    boxes: int = 2
    seed: int = 0
    overwrite: bool = False
    smoke: bool = False


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, one ``--option`` per field (help from the field docs)."""
    return parse_dataclass_args(Args, argv, __doc__)


def run(args: Args) -> int:
    """Collect, then read the dataset back and replay it; exit code 0 when all is well."""
    from agents.expert.collect import collect_dataset, report
    from agents.expert.datasets import load_dataset, replay_episode

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
