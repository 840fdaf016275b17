"""``soko collect``: the command line of ``agents.expert.collect.collect_dataset``.

Builds the subcommand's parser (``add_collect_parser``, registered by ``agents.cli``) and runs
it (``run_collect``): exit code 0 when every level was collected, 1 when some are unsolved or
failed, 130 on Ctrl-C (the partial dataset and the shards are kept: ``--resume`` goes on).
The levels run in this process, in ``--jobs`` local processes or on Ray (``--ray``), the
backend flags every per-level command shares (``soko_gym.execution``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from agents.expert.datasets import FORMATS
from soko_gym.execution import Backend, add_backend_options


def add_collect_parser(sub: Any, source_help: str) -> None:
    """Add the ``collect`` subcommand to the ``soko`` argument parser."""
    p = sub.add_parser("collect", help="expert episodes from a planner, as a Minari or npz dataset")
    p.add_argument("--env", default="Sokoban-Push-v0", help="env id (default Sokoban-Push-v0)")
    p.add_argument("--levels", required=True, help=source_help + ', or "generated[:WxH][:N]"')
    p.add_argument("--planner", default="astar", help="registry name of the planner (astar)")
    p.add_argument(
        "--out", required=True, help="Minari dataset id (e.g. sokoban/push-v0) or npz path"
    )
    p.add_argument("--format", choices=FORMATS, default="minari", help="dataset format (minari)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="at most N levels")
    p.add_argument(
        "--time-limit", type=float, default=10.0, metavar="S", help="planner seconds per level (10)"
    )
    p.add_argument(
        "--max-episode-steps",
        type=int,
        default=None,
        metavar="N",
        help="episode step limit (default: the env's registered limit)",
    )
    p.add_argument(
        "--dead-plane",
        action="store_true",
        help="add the dead-square plane to the observations (as `soko train`'s default)",
    )
    p.add_argument(
        "--trail-plane",
        action="store_true",
        help="Move env, with --dead-plane: add the plane of the player's square one step before",
    )
    p.add_argument("--width", type=int, default=None, help="generated levels: columns (10)")
    p.add_argument("--height", type=int, default=None, help="generated levels: rows (10)")
    p.add_argument("--boxes", type=int, default=None, help="generated levels: boxes (4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated levels (0)")
    p.add_argument(
        "--overwrite", action="store_true", help="replace an existing dataset (and its shards)"
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="go on from the shards of a stopped collection with the same arguments (the "
        "levels they hold are not run again)",
    )
    add_backend_options(p, "levels")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument(
        "--json", action="store_true", help="print the summary as one JSON object (no progress)"
    )
    p.set_defaults(func=run_collect)


def summary(result: Any) -> dict[str, Any]:
    """The ``--json`` summary of a ``CollectResult``."""
    return {
        "levels": result.n_levels,
        "collected": result.n_episodes,
        "steps": result.n_steps,
        "seconds": round(result.seconds, 3),
        "unsolved": [
            {"index": u.level_index, "title": u.title, "status": u.status} for u in result.unsolved
        ],
        "resumed": result.resumed,
        "out": result.out,
        "shards": result.shards,
        "interrupted": result.interrupted,
    }


def run_collect(args: argparse.Namespace) -> int:
    """Run ``soko collect``; exit code 0 all collected, 1 some unsolved, 130 on Ctrl-C."""
    from agents.expert.collect import collect_dataset, report
    from agents.expert.episodes import check_positive
    from soko_gym.levels.spec import parse_source

    gen = {
        key: value
        for key, value in (("width", args.width), ("height", args.height), ("n_boxes", args.boxes))
        if value is not None
    }
    if gen and not parse_source(args.levels).generated:
        raise ValueError("--width, --height and --boxes are for --levels generated")
    env_kwargs = {}
    if args.max_episode_steps is not None:
        check_positive("--max-episode-steps", args.max_episode_steps)
        env_kwargs["max_episode_steps"] = args.max_episode_steps
    if args.dead_plane:
        env_kwargs["dead_plane"] = True
    if args.trail_plane:
        env_kwargs["trail_plane"] = True
    backend = Backend.from_args(args)
    result = collect_dataset(
        args.env,
        args.levels,
        args.planner,
        args.out,
        format=args.format,
        overwrite=args.overwrite,
        resume=args.resume,
        limit=args.limit,
        time_limit=args.time_limit,
        backend=backend,
        seed=args.seed,
        generator_kwargs=gen or None,
        env_kwargs=env_kwargs,
        progress=not (args.quiet or args.json),
    )
    if args.json:
        print(json.dumps(summary(result)))
    else:
        report(result)
    if result.interrupted:
        return 130
    return 1 if result.unsolved else 0
