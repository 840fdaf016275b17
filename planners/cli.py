"""``soko solve`` and ``soko planners``: planners over selected levels; the commands' parsers.

Levels run in order in this process, or in ``--jobs`` worker processes. Each finished level is
written to the JSONL file at once, so Ctrl-C keeps every line already written. ``soko optimize``
is ``planners.optimize_cli``, ``soko grade`` is ``planners.grade``; the kernel warm-up before
the levels is ``planners.warmup``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from contextlib import closing
from functools import partial
from typing import Any

from planners import SearchLimits, available, get_planner, planner_class, solve
from planners.fess.options import PLANS, SINK_CHOICES, SINKLESS_PLANS, FessOptions
from planners.grade import add_grade_parser
from planners.optimize_cli import add_optimize_parser
from planners.records import open_jsonl, solve_record
from planners.warmup import announce_compile, warm_up_planner
from soko_gym.cli import add_dataclass_options, dataclass_kwargs
from soko_gym.execution import Backend, Progress, add_backend_options, run
from soko_gym.levels import Level
from soko_gym.levels.packs import indexed_levels, split_selection


def add_parsers(sub: Any, source_help: str) -> None:
    """Add ``solve``, ``optimize``, ``grade`` and ``planners`` to the ``soko`` parser.

    The ``soko_gym.commands`` entry point of this package.
    """
    add_solve_parser(sub, source_help)
    add_optimize_parser(sub, source_help)
    add_grade_parser(sub, source_help)
    listing = sub.add_parser("planners", help="list the planners, or describe one")
    listing.add_argument(
        "--describe",
        metavar="NAME",
        help="print a planner's options (and fess's portfolio stages) instead of the list",
    )
    listing.set_defaults(func=run_planners)


def run_planners(args: argparse.Namespace) -> int:
    """Run ``soko planners``: the registry names, or one planner described."""
    if args.describe is None:
        print("\n".join(available()))
        return 0
    print(planner_class(args.describe).describe())  # unknown name: ValueError
    return 0


def add_solve_parser(sub: Any, source_help: str) -> None:
    """Add the ``solve`` subcommand to the ``soko`` argument parser."""
    solve = sub.add_parser("solve", help="solve levels with a planner")
    solve.add_argument("source", help=source_help)
    solve.add_argument(
        "--planner",
        default="astar",
        help="registry name of the planner (see `soko planners`); default astar",
    )
    solve.add_argument(
        "--time-limit", type=float, default=60.0, metavar="S", help="seconds per level (default 60)"
    )
    solve.add_argument(
        "--node-limit",
        type=int,
        default=None,
        metavar="N",
        help="expanded nodes per level (default: none)",
    )
    solve.add_argument(
        "--memory-limit",
        type=float,
        default=None,
        metavar="MB",
        help="memory per level for the planner's tables (default: half the RAM)",
    )
    add_backend_options(solve)
    solve.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="W",
        help="portfolio processes per level (fess: differently configured searches, the first "
        "solution wins; default 1)",
    )
    solve.add_argument("--jsonl", metavar="PATH", help="write one JSON object per level to PATH")
    solve.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing --jsonl file (otherwise it is never touched)",
    )
    solve.add_argument(
        "--resume",
        action="store_true",
        help="continue an existing --jsonl file: skip the levels it holds, append the rest",
    )
    solve.add_argument("--quiet", action="store_true", help="no per-level lines or progress")
    solve.add_argument(
        "--json",
        action="store_true",
        help="print the summary as one JSON object (implies --quiet)",
    )
    solve.add_argument(
        "--optimize",
        action="store_true",
        help="optimize each solution found (fewest moves, then pushes)",
    )
    solve.add_argument(
        "--optimize-time",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds of optimization per solved level (default 10)",
    )
    group = solve.add_argument_group(
        "FESS options (with --planner fess; planners.fess.FessOptions)"
    )
    add_dataclass_options(
        group,
        FessOptions,
        prefix="fess-",
        choices={"plan": PLANS, "sinkless": SINKLESS_PLANS, "sink_choice": SINK_CHOICES},
    )
    solve.set_defaults(func=run_solve)


def solve_text(
    planner: str,
    limits: SearchLimits,
    optimize_seconds: float | None,
    workers: int,
    options: dict[str, Any],
    text: str,
) -> dict[str, Any]:
    """Solve one level given as XSB text, optimizing if asked; a JSON-ready dict (a task)."""
    level = Level.from_xsb(text)
    warm_up_planner(planner, bool(optimize_seconds))  # outside the level's timed search
    record = solve(level, planner, limits, workers=workers, **options).as_dict()
    if optimize_seconds and record["solved"]:
        from planners.optimizers import optimize

        best = optimize(level, record["lurd"], limits=SearchLimits(max_seconds=optimize_seconds))
        record.update(
            planner_moves=record["moves"],
            planner_pushes=record["pushes"],
            lurd=best.lurd,
            moves=best.moves,
            pushes=best.pushes,
            optimize_seconds=round(best.seconds, 6),
        )
    return record


def error_result(planner: str, error: str) -> dict[str, Any]:
    """The result fields of a level whose every attempt raised or lost its worker."""
    return {
        "planner": planner,
        "solved": False,
        "status": "error",
        "optimal": False,
        "lurd": "",
        "pushes": 0,
        "moves": 0,
        "nodes": 0,
        "generated": 0,
        "seconds": 0.0,
        "stats": {},
        "error": error,
    }


def fess_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``--fess-*`` options given, by field name; ValueError with another planner."""
    options = dataclass_kwargs(FessOptions, args, prefix="fess-")
    if options and args.planner != "fess":
        flags = ", ".join("--fess-" + k.replace("_", "-") for k in options)
        raise ValueError(f"{flags}: FESS options, but --planner is {args.planner!r}")
    return options


def _opt_seconds(args: argparse.Namespace) -> float | None:
    return args.optimize_time if getattr(args, "optimize", False) else None


def run_solve(args: argparse.Namespace) -> int:
    """Run ``soko solve``; returns the exit code (0 all solved, 1 some not, 130 on Ctrl-C)."""
    args.quiet = args.quiet or args.json
    get_planner(args.planner)  # unknown name: ValueError before any work
    backend = Backend.from_args(args)
    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    options = fess_options(args)
    if args.workers > 1:
        planner_class(args.planner).portfolio(args.workers, options)  # no portfolio: error now
    else:
        get_planner(args.planner, **options)  # bad options: error now
    limits = SearchLimits(args.time_limit, args.node_limit, args.memory_limit)
    items = indexed_levels(args.source)
    base = split_selection(args.source)[0]
    sink, done = open_jsonl(args.jsonl, args.overwrite, args.resume, base, "solve")
    by_index = {index: level for index, level in items}
    todo = [(index, level.to_xsb(with_title=False)) for index, level in items if index not in done]
    task = partial(solve_text, args.planner, limits, _opt_seconds(args), args.workers, options)
    rows: list[dict[str, Any]] = []
    if todo:  # compile or load once here (and per worker), never inside a level's seconds
        announce_compile(
            partial(warm_up_planner, args.planner, bool(_opt_seconds(args))),
            dots=False if args.quiet else None,
        )
    progress = Progress(len(todo), enabled=not args.quiet)
    per_node: dict[str, int] = {}
    interrupted = False
    try:
        with closing(run(task, todo, backend, total=len(todo))) as outcomes:
            for outcome in outcomes:
                index = outcome.key
                level = by_index[index]
                per_node[outcome.where] = per_node.get(outcome.where, 0) + 1
                res = outcome.value if outcome.ok else error_result(args.planner, outcome.error)
                record = solve_record(base, index, level, res)
                rows.append(record)
                if sink is not None:
                    sink.write(json.dumps(record) + "\n")
                    sink.flush()
                if args.quiet:
                    continue
                progress.update(res["solved"], error=not outcome.ok)
                if not progress.tty:
                    figures = (
                        f"{res['pushes']} pushes, {res['moves']} moves"
                        if res["solved"]
                        else res["status"] + (f" ({res['error']})" if not outcome.ok else "")
                    )
                    print(
                        f"{index + 1} {level.title!r}: {figures} ({res['seconds']:.2f} s, "
                        f"{res['nodes']} nodes)",
                        file=sys.stderr,
                    )
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if sink is not None:
            sink.close()
        if not args.quiet and progress.tty:
            sys.stderr.write("\n")
    if args.json:
        print(json.dumps(solve_summary(rows, len(todo), args.planner, interrupted, per_node)))
    else:
        _summary(rows, len(todo), args.planner, interrupted)
        if backend.ray is not None:  # where the work went (a cluster's nodes)
            print("levels per node: " + ", ".join(f"{k} {v}" for k, v in sorted(per_node.items())))
    if interrupted:
        return 130
    return 0 if all(r["solved"] for r in rows) else 1


def solve_summary(
    rows: list[dict[str, Any]],
    total: int,
    planner: str,
    interrupted: bool,
    per_node: dict[str, int],
) -> dict[str, Any]:
    """The ``soko solve --json`` summary: counts, times, statuses, workers, unsolved indexes."""
    secs = [r["seconds"] for r in rows]
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {
        "planner": planner,
        "levels": total,
        "done": len(rows),
        "solved": sum(bool(r["solved"]) for r in rows),
        "optimal": sum(bool(r["solved"] and r["optimal"]) for r in rows),
        "total_seconds": round(sum(secs), 6),
        "median_seconds": round(statistics.median(secs), 6) if secs else 0.0,
        "statuses": statuses,
        "unsolved": sorted(r["index"] for r in rows if not r["solved"]),
        "workers": per_node,
        "interrupted": interrupted,
    }


def _summary(rows: list[dict[str, Any]], total: int, planner: str, interrupted: bool) -> None:
    secs = [r["seconds"] for r in rows]
    solved = [r for r in rows if r["solved"]]
    n_optimal = sum(r["optimal"] for r in solved)
    print(
        f"| planner | solved | optimal | total s | median s |{' stopped |' if interrupted else ''}"
    )
    print(f"|---|---:|---:|---:|---:|{'---|' if interrupted else ''}")
    median = statistics.median(secs) if secs else 0.0
    stopped = f" after {len(rows)} of {total} |" if interrupted else ""
    print(
        f"| {planner} | {len(solved)}/{total} | {n_optimal} | {sum(secs):.1f} | "
        f"{median:.2f} |{stopped}"
    )
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    print("statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
