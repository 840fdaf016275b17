"""``soko solve`` and ``soko optimize``: planners and optimizers over selected levels.

Levels run in order in this process, or in ``--jobs`` worker processes. Each finished level is
written to the JSONL file at once, so Ctrl-C keeps every line already written.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TextIO

from planners import SearchLimits, available, get_planner, solve
from planners.records import record_header, solve_record
from soko_gym.levels import Level, load_levels
from soko_gym.levels.packs import split_selection


def add_parsers(sub: Any, source_help: str) -> None:
    """Add ``solve`` and ``optimize`` to the ``soko`` parser (the ``soko_gym.commands`` entry)."""
    add_solve_parser(sub, source_help)
    add_optimize_parser(sub, source_help)
    listing = sub.add_parser("planners", help="list the planners")
    listing.set_defaults(func=lambda args: print("\n".join(available())) or 0)


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
    solve.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="K",
        help="worker processes (default 1: solve in this process)",
    )
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
    solve.add_argument("--quiet", action="store_true", help="no per-level lines or progress")
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
    solve.set_defaults(func=run_solve)


def _indexed_levels(source: str) -> list[tuple[int, Level]]:
    """The selected levels with their 0-based index in the whole pack or file."""
    base, selection = split_selection(source)
    levels = load_levels(source)
    first = selection[0] - 1 if selection else 0
    return [(first + i, level) for i, level in enumerate(levels)]


def _solve_one(
    planner: str,
    limits: SearchLimits,
    level: Level,
    optimize_seconds: float | None = None,
    workers: int = 1,
) -> dict[str, Any]:
    """Solve one level, optimizing the solution if asked; a JSON-ready dict (runs in workers)."""
    record = solve(level, planner, limits, workers=workers).as_dict()
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


def _results(
    args: argparse.Namespace, items: list[tuple[int, Level]], limits: SearchLimits
) -> Iterator[tuple[int, Level, dict[str, Any]]]:
    if args.jobs <= 1:
        for index, level in items:
            yield (
                index,
                level,
                _solve_one(args.planner, limits, level, _opt_seconds(args), args.workers),
            )
        return
    ctx = get_context("spawn")  # workers load the numba cache; no fork of a threaded parent
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=ctx) as pool:

        def submit(level: Level) -> Future:
            return pool.submit(
                _solve_one, args.planner, limits, level, _opt_seconds(args), args.workers
            )

        todo = iter(items)
        running: dict[Future, tuple[int, Level]] = {}
        try:
            for _ in range(2 * args.jobs):
                item = next(todo, None)
                if item is not None:
                    running[submit(item[1])] = item
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    index, level = running.pop(fut)
                    yield index, level, fut.result()
                    item = next(todo, None)
                    if item is not None:
                        running[submit(item[1])] = item
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _opt_seconds(args: argparse.Namespace) -> float | None:
    return args.optimize_time if getattr(args, "optimize", False) else None


def _progress(out: TextIO, done: int, total: int, solved: int, start: float) -> None:
    if out.isatty():
        elapsed = time.perf_counter() - start
        out.write(f"\r[{done}/{total}] solved {solved}, {elapsed:.1f} s")
        out.flush()


def run_solve(args: argparse.Namespace) -> int:
    """Run ``soko solve``; returns the exit code (0 all solved, 1 some not, 130 on Ctrl-C)."""
    get_planner(args.planner)  # unknown name: ValueError before any work
    if args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    if args.workers > 1:
        get_planner(args.planner).portfolio_options(args.workers, {})  # no portfolio: error now
    limits = SearchLimits(args.time_limit, args.node_limit, args.memory_limit)
    items = _indexed_levels(args.source)
    base = split_selection(args.source)[0]
    sink = None
    if args.jsonl:
        path = Path(args.jsonl)
        if path.exists() and not args.overwrite:
            raise ValueError(f"{path} exists; pass --overwrite to replace it")
        sink = path.open("w", encoding="utf-8")
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    interrupted = False
    try:
        for index, level, res in _results(args, items, limits):
            record = solve_record(base, index, level, res)
            rows.append(record)
            if sink is not None:
                sink.write(json.dumps(record) + "\n")
                sink.flush()
            if not args.quiet:
                _progress(sys.stderr, len(rows), len(items), sum(r["solved"] for r in rows), start)
                if not sys.stderr.isatty():
                    figures = (
                        f"{res['pushes']} pushes, {res['moves']} moves"
                        if res["solved"]
                        else res["status"]
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
        if not args.quiet and sys.stderr.isatty():
            sys.stderr.write("\n")
    _summary(rows, len(items), args.planner, interrupted)
    if interrupted:
        return 130
    return 0 if all(r["solved"] for r in rows) else 1


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
    opt.add_argument("--quiet", action="store_true", help="no progress lines")
    opt.set_defaults(func=run_optimize)


def _given_solutions(args: argparse.Namespace, items: list[tuple[int, Level]]) -> list[str | None]:
    if args.lurd is not None:
        return [args.lurd] * len(items)
    by_index: dict[int, str] = {}
    with open(args.solutions, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{args.solutions}, line {lineno}: not JSON ({err.msg})") from None
            if record.get("lurd"):
                by_index[int(record["index"])] = record["lurd"]
    return [by_index.get(index) for index, _ in items]


def run_optimize(args: argparse.Namespace) -> int:
    """Run ``soko optimize``; returns the exit code (0 done, 130 on Ctrl-C)."""
    from planners.optimizers import available_methods, optimize

    methods = None if args.methods is None else [m for m in args.methods.split(",") if m]
    if methods is not None:
        unknown = [m for m in methods if m not in available_methods()]
        if unknown:
            raise ValueError(f"unknown methods {unknown}; available: {available_methods()}")
    items = _indexed_levels(args.source)
    solutions = _given_solutions(args, items)
    base = split_selection(args.source)[0]
    sink = None
    if args.jsonl:
        path = Path(args.jsonl)
        if path.exists() and not args.overwrite:
            raise ValueError(f"{path} exists; pass --overwrite to replace it")
        sink = path.open("w", encoding="utf-8")
    before, after = [0, 0], [0, 0]
    done = 0
    interrupted = False

    def show(method: str, detail: str, moves: int, pushes: int) -> None:
        if not args.quiet:
            print(f"  {method} {detail}: {moves} moves, {pushes} pushes", file=sys.stderr)

    try:
        for (index, level), lurd in zip(items, solutions, strict=True):
            if lurd is None:
                print(f"{index + 1} {level.title!r}: no solution given, skipped", file=sys.stderr)
                continue
            if not args.quiet:
                print(f"{index + 1} {level.title!r}:", file=sys.stderr)
            result = optimize(
                level,
                lurd,
                args.metric,
                methods,
                SearchLimits(max_seconds=args.time_limit),
                progress=show,
            )
            record = {**record_header(base, index, level), **result.as_dict()}
            if sink is not None:
                sink.write(json.dumps(record) + "\n")
                sink.flush()
            before[0] += result.input_moves
            before[1] += result.input_pushes
            after[0] += result.moves
            after[1] += result.pushes
            done += 1
            print(
                f"{index + 1} {level.title!r}: {result.input_moves}/{result.input_pushes} -> "
                f"{result.moves}/{result.pushes} moves/pushes ({result.seconds:.1f} s)"
            )
            if result.interrupted:
                interrupted = True
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if sink is not None:
            sink.close()
    print("| levels | moves before | moves after | pushes before | pushes after |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {done} | {before[0]} | {after[0]} | {before[1]} | {after[1]} |")
    return 130 if interrupted else 0
