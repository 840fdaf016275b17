"""``soko solve`` and ``soko optimize``: planners and optimizers over selected levels.

Levels run in order in this process, or in ``--jobs`` worker processes. Each finished level is
written to the JSONL file at once, so Ctrl-C keeps every line already written.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from planners import SearchLimits, available, get_planner, planner_class, solve
from planners.fess.options import PLANS, SINK_CHOICES, SINKLESS_PLANS, FessOptions
from planners.records import read_records, record_header, solve_record
from soko_gym.cli import add_dataclass_options, dataclass_kwargs
from soko_gym.execution import Backend, Progress, add_backend_options, run
from soko_gym.levels import Level
from soko_gym.levels.packs import indexed_levels, split_selection


def add_parsers(sub: Any, source_help: str) -> None:
    """Add ``solve`` and ``optimize`` to the ``soko`` parser (the ``soko_gym.commands`` entry)."""
    add_solve_parser(sub, source_help)
    add_optimize_parser(sub, source_help)
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


# Two boxes, a walk between them: one tiny search runs every kernel a planner calls from Python.
WARMUP_LEVEL = "######\n#@$ .#\n# $ .#\n######"
_warm: set[tuple[str, bool]] = set()


def warm_up_planner(planner: str, optimizer: bool = False) -> None:
    """Compile or load ``planner``'s kernels (and the optimizers') once per process.

    Solving a tiny level first means no level's timed search starts with numba compiling or
    loading its kernels; ``soko solve`` calls it before the levels, here and in every worker.
    """
    if (planner, optimizer) in _warm:
        return
    if planner == "fess":  # a cold cache compiles on two cores (planners.fess.warm)
        from planners.fess.warm import warm_up

        warm_up()
    result = solve(WARMUP_LEVEL, planner)
    if optimizer and result.solved:
        from planners.optimizers import optimize

        optimize(Level.from_xsb(WARMUP_LEVEL), result.lurd, limits=SearchLimits(max_seconds=5.0))
    _warm.add((planner, optimizer))


def numba_cache_folder() -> str:
    """Where numba keeps the compiled kernels: ``NUMBA_CACHE_DIR`` or beside the sources."""
    from numba.core import config

    return config.CACHE_DIR or "__pycache__ folders beside the sources"


class CompileWatch:
    """Counts numba compilations (cache misses, not loads) while installed as a listener."""

    def __init__(self) -> None:
        from numba.core import event

        class _Listener(event.Listener):
            def on_start(inner, ev: Any) -> None:  # noqa: N805 (the watch is self)
                self.count += 1

            def on_end(inner, ev: Any) -> None:  # noqa: N805
                """Nothing to record: a compile is counted when it starts."""

        self.count = 0
        self._listener = _Listener()

    def __enter__(self) -> CompileWatch:
        from numba.core import event

        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc: object) -> None:
        from numba.core import event

        event.unregister("numba:compile", self._listener)


def announce_compile(
    fn: Callable[[], Any], dots: bool | None = None, out: TextIO | None = None
) -> tuple[float, int]:
    """Run ``fn`` (a warm-up), saying so on stderr when it compiles kernels or is slow.

    The line "compiling soko-gym kernels once (cached in <folder>) ..." appears as soon as numba
    starts compiling, then gets the seconds it took. A warm-up that compiles nothing but takes
    over a second (a slow disk or a busy machine) gets "loading soko-gym kernels (cached in
    <folder>) ..." with its seconds when it ends: before that, a slow start cannot be told from
    a compile about to begin. A quick load prints nothing. ``dots`` (default: stderr is a
    terminal) adds a dot every half second while compiling. Returns (seconds, compilations).
    """
    stream = out if out is not None else sys.stderr
    dots = stream.isatty() if dots is None else dots
    start = time.perf_counter()
    done = threading.Event()
    shown = threading.Event()
    folder = numba_cache_folder()
    compiling = f"compiling soko-gym kernels once (cached in {folder}) ..."

    with CompileWatch() as watch:

        def notice() -> None:
            ticks = 0
            while not done.wait(0.1):
                ticks += 1
                if not shown.is_set():
                    if watch.count:
                        stream.write(compiling)
                        stream.flush()
                        shown.set()
                elif dots and ticks % 5 == 0:
                    stream.write(".")
                    stream.flush()

        thread = threading.Thread(target=notice, name="soko-compile-notice", daemon=True)
        thread.start()
        try:
            fn()
        finally:
            done.set()
            thread.join()
    seconds = time.perf_counter() - start
    if watch.count or seconds > 1.0:
        if not shown.is_set():
            stream.write(
                compiling if watch.count else f"loading soko-gym kernels (cached in {folder}) ..."
            )
        how = f"{watch.count} compiled" if watch.count else "loaded from the cache"
        stream.write(f" {seconds:.1f} s ({how})\n")
        stream.flush()
    return seconds, watch.count


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


def open_jsonl(
    path: str | None, overwrite: bool, resume: bool, source: str, command: str
) -> tuple[TextIO | None, set[int]]:
    """The output file, opened to append, and the level indexes it already holds.

    Without ``resume`` an existing file is refused unless ``overwrite``. With ``resume`` its
    valid lines of ``source`` are kept and their levels skipped; a line cut short by a kill and
    "error" lines are dropped (those levels run again), so no level is written twice.
    """
    if path is None:
        if resume:
            raise ValueError("--resume needs --jsonl (the file to continue)")
        return None, set()
    if resume and overwrite:
        raise ValueError("--resume and --overwrite exclude each other")
    out = Path(path)
    if not out.exists() or overwrite:
        return out.open("w", encoding="utf-8"), set()
    if not resume:
        raise ValueError(f"{out} exists; pass --resume to continue it or --overwrite to replace it")
    kept: list[str] = []
    done: set[int] = set()
    dropped = 0
    with out.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            try:
                record = json.loads(line)
                index = int(record["index"])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                dropped += 1
                continue
            if record.get("source") != source:
                raise ValueError(
                    f"{out}, line {lineno}: a record of {record.get('source')!r}, not {source!r}; "
                    f"--resume continues a `soko {command}` of the same source"
                )
            if record.get("status") == "error" or index in done:
                dropped += 1
                continue
            done.add(index)
            kept.append(line if line.endswith("\n") else line + "\n")
    if dropped:  # rewrite without the cut and error lines, then append
        tmp = out.with_name(out.name + ".resume-tmp")
        tmp.write_text("".join(kept), encoding="utf-8")
        tmp.replace(out)
    print(
        f"resuming {out}: {len(done)} levels done"
        + (f", {dropped} error or incomplete lines dropped" if dropped else ""),
        file=sys.stderr,
    )
    return out.open("a", encoding="utf-8"), done


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
