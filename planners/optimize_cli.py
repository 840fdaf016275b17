"""``soko optimize``: shorten given solutions of selected levels, never returning a worse one.

Levels run in order in this process, or in ``--jobs`` worker processes. Each finished level is
written to the JSONL file at once, so Ctrl-C keeps every line already written.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import closing
from functools import partial
from typing import Any

from planners import SearchLimits
from planners.records import open_jsonl, read_records, record_header
from soko_gym.execution import Backend, add_backend_options, run
from soko_gym.levels import Level
from soko_gym.levels.packs import indexed_levels, split_selection


def add_optimize_parser(sub: Any, source_help: str) -> None:
    """Add the ``optimize`` subcommand to the ``soko`` argument parser."""
    opt = sub.add_parser("optimize", help="shorten solutions (moves or pushes) without worsening")
    opt.add_argument("source", help=source_help)
    given = opt.add_mutually_exclusive_group(required=True)
    given.add_argument("--lurd", help="one solution, for every selected level")
    given.add_argument(
        "--solutions",
        metavar="FILE.jsonl",
        help="solutions as `soko solve --jsonl` writes them (matched by index)",
    )
    opt.add_argument(
        "--metric",
        choices=("moves", "pushes"),
        default="moves",
        help="moves: fewest moves, then pushes (default); pushes: the reverse",
    )
    opt.add_argument(
        "--methods", default=None, help="comma-separated methods in schedule order (default: all)"
    )
    opt.add_argument(
        "--time-limit", type=float, default=60.0, metavar="S", help="seconds per level (default 60)"
    )
    opt.add_argument("--jsonl", metavar="PATH", help="write one JSON object per level to PATH")
    opt.add_argument("--overwrite", action="store_true", help="replace an existing --jsonl file")
    opt.add_argument(
        "--resume",
        action="store_true",
        help="continue an existing --jsonl file: skip the levels it holds, append the rest",
    )
    add_backend_options(opt)
    opt.add_argument("--quiet", action="store_true", help="no progress lines")
    opt.add_argument(
        "--json", action="store_true", help="print the totals as one JSON object (implies --quiet)"
    )
    opt.set_defaults(func=run_optimize)


def _given_solutions(args: argparse.Namespace, items: list[tuple[int, Level]]) -> list[str | None]:
    if args.lurd is not None:
        return [args.lurd] * len(items)
    by_index = {int(r["index"]): r["lurd"] for r in read_records(args.solutions) if r.get("lurd")}
    return [by_index.get(index) for index, _ in items]


def optimize_text(
    metric: str,
    methods: list[str] | None,
    seconds: float,
    payload: tuple[str, str],
    progress: Any = None,
) -> dict[str, Any]:
    """Optimize one solution of a level given as XSB text; the result's dict (a task)."""
    from planners.optimizers import optimize

    text, lurd = payload
    level = Level.from_xsb(text)
    limits = SearchLimits(max_seconds=seconds)
    return optimize(level, lurd, metric, methods, limits, progress=progress).as_dict()


def run_optimize(args: argparse.Namespace) -> int:
    """Run ``soko optimize``; returns the exit code (0 done, 1 some failed, 130 on Ctrl-C)."""
    from planners.optimizers import available_methods

    args.quiet = args.quiet or args.json

    methods = None if args.methods is None else [m for m in args.methods.split(",") if m]
    if methods is not None:
        unknown = [m for m in methods if m not in available_methods()]
        if unknown:
            raise ValueError(f"unknown methods {unknown}; available: {available_methods()}")
    backend = Backend.from_args(args)
    items = indexed_levels(args.source)
    solutions = _given_solutions(args, items)
    base = split_selection(args.source)[0]
    sink, done_before = open_jsonl(args.jsonl, args.overwrite, args.resume, base, "optimize")
    by_index = {index: level for index, level in items}
    todo = []
    for (index, level), lurd in zip(items, solutions, strict=True):
        if index in done_before:
            continue
        if lurd is None:
            print(f"{index + 1} {level.title!r}: no solution given, skipped", file=sys.stderr)
            continue
        todo.append((index, (level.to_xsb(with_title=False), lurd)))
    here = backend.ray is None and backend.local_jobs == 1

    def show(method: str, detail: str, moves: int, pushes: int) -> None:
        if not args.quiet:
            print(f"  {method} {detail}: {moves} moves, {pushes} pushes", file=sys.stderr)

    task = partial(
        optimize_text, args.metric, methods, args.time_limit, progress=show if here else None
    )
    before, after = [0, 0], [0, 0]
    done = failed = 0
    interrupted = False
    try:
        with closing(run(task, todo, backend, total=len(todo))) as outcomes:
            for outcome in outcomes:
                index = outcome.key
                level = by_index[index]
                if not outcome.ok:
                    failed += 1
                    record = {
                        **record_header(base, index, level),
                        "status": "error",
                        "error": outcome.error,
                    }
                    print(f"{index + 1} {level.title!r}: error: {outcome.error}", file=sys.stderr)
                else:
                    res = outcome.value
                    record = {**record_header(base, index, level), "status": "done", **res}
                    before[0] += res["input_moves"]
                    before[1] += res["input_pushes"]
                    after[0] += res["moves"]
                    after[1] += res["pushes"]
                    done += 1
                    if not args.json:
                        print(
                            f"{index + 1} {level.title!r}: "
                            f"{res['input_moves']}/{res['input_pushes']}"
                            f" -> {res['moves']}/{res['pushes']} moves/pushes "
                            f"({res['seconds']:.1f} s)"
                        )
                if sink is not None:
                    sink.write(json.dumps(record) + "\n")
                    sink.flush()
                if outcome.ok and outcome.value["interrupted"]:
                    interrupted = True
                    break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if sink is not None:
            sink.close()
    if args.json:
        totals = {"levels": done, "failed": failed, "interrupted": interrupted}
        totals |= {"moves_before": before[0], "moves_after": after[0]}
        print(json.dumps(totals | {"pushes_before": before[1], "pushes_after": after[1]}))
    else:
        print("| levels | moves before | moves after | pushes before | pushes after |")
        print("|---:|---:|---:|---:|---:|")
        print(f"| {done} | {before[0]} | {after[0]} | {before[1]} | {after[1]} |")
    if interrupted:
        return 130
    return 1 if failed else 0
