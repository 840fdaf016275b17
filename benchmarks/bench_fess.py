"""FESS benchmark: solved counts and per-level time, pushes and moves on the issue's suites.

    python benchmarks/bench_fess.py microban --jobs 2
    python benchmarks/bench_fess.py xsokoban --seconds 60 --workers 2 --jobs 1 \
        --jsonl benchmarks/results/fess-xsokoban-60s.jsonl
    python benchmarks/bench_fess.py xsokoban --only 14,29,40 --seconds 600 --workers 2
    python benchmarks/bench_fess.py xsokoban --only 32,71 --options '{"plan": "targets"}'

Each level runs in a worker process with its own time limit (``--seconds`` overrides the
suite's); ``--workers 2`` solves each level with the FESS portfolio (both cores on one level;
use ``--jobs 1`` with it). Every level's record goes to ``--jsonl`` as soon as it is done
(appended, so an interrupted run keeps what it finished), and a markdown summary plus the
per-level table (level, status, seconds, pushes, moves, nodes, nodes per second of search)
is printed at the end. Nodes per second is the winning (or, unsolved, the first) worker's.
A portfolio worker that fails (an exception in its process) is printed under its level and
named in the summary: the level's result is then the other workers' alone.

The records ``benchmarks/RESULTS.md`` cites are ``benchmarks/results/fess-SUITE-60s.jsonl`` and
``fess-SUITE-600s.jsonl`` (the commands are on that page); ``benchmarks/fess_table.py`` builds
the solver-strength table from them.
"""

from __future__ import annotations

import argparse
import json
import time
from contextlib import closing
from dataclasses import dataclass
from functools import partial

import planners
import soko_gym
from planners import SearchLimits
from planners.records import solve_record
from soko_gym.execution import Backend, add_backend_options, run
from soko_gym.provenance import machine_line


@dataclass(frozen=True)
class Suite:
    """A level source, its per-level time limit and the issue's target."""

    source: str
    seconds: float
    target: str


SUITES = {
    "microban": Suite("microban", 60, "155/155 within 60 s each"),
    "microban2": Suite("microban2", 60, "all within 60 s each"),
    "microban3": Suite("microban3", 60, "all within 60 s each"),
    "microban4": Suite("microban4", 60, "all within 60 s each"),
    "xsokoban": Suite("xsokoban", 60, ">= 80/90 within 60 s each; 90/90 within 600 s each"),
    "boxoban-hard": Suite("boxoban-hard", 10, ">= 99% within 10 s each"),
    "sasquatch": Suite("sasquatch", 60, ">= 40/50 within 60 s each"),
}


def solve_one(
    source: str,
    seconds: float,
    memory_mb: float,
    workers: int,
    options: dict,
    job: tuple[int, str],
) -> dict:
    """One level's record (``planners.records``: 0-based ``index``) with FESS's own figures."""
    index, xsb = job
    level = soko_gym.levels.Level.from_xsb(xsb)
    t = time.perf_counter()
    limits = SearchLimits(max_seconds=seconds, max_memory_mb=memory_mb)
    result = planners.solve(level, "fess", limits, workers=workers, **options)
    wall = round(time.perf_counter() - t, 3)
    search = result.stats.get("search_seconds", 0.0)
    portfolio = result.stats.get("portfolio")
    return solve_record(
        source,
        index,
        level,
        result,
        wall_seconds=wall,
        cells=result.stats.get("cells", 0),
        plan_seconds=result.stats.get("plan_seconds", 0.0),
        nodes_per_second=round(result.nodes / search) if search > 0 else 0,
        plan_complete=result.stats.get("plan_complete"),
        deadlocks=result.stats.get("deadlocks"),
        workers=workers,
        winner=portfolio["winner"] if portfolio else None,
        worker_errors=portfolio["errors"] if portfolio else {},
        options=options,
    )


def fess_options(parser: argparse.ArgumentParser, text: str) -> dict:
    """FESS options from ``--options`` JSON, checked by building the planner (else exit 2)."""
    try:
        options = json.loads(text)
        if not isinstance(options, dict):
            raise ValueError("a JSON object of FESS options is expected")
        planners.get_planner("fess", **options)
    except (TypeError, ValueError) as err:  # JSONDecodeError is a ValueError
        parser.error(f"--options: {err}")
    return options


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("--select", default=None, help="1-based selection, e.g. 1-30")
    parser.add_argument("--only", default=None, help="1-based level numbers, e.g. 14,29,40")
    parser.add_argument("--seconds", type=float, default=None, help="time limit per level")
    parser.add_argument("--memory-mb", type=float, default=6000, help="memory limit per level")
    add_backend_options(parser)
    parser.add_argument("--workers", type=int, default=1, help="FESS portfolio size per level")
    parser.add_argument("--jsonl", default=None, help="append per-level records here")
    parser.add_argument(
        "--options",
        default="{}",
        help='FESS options as JSON (worker 0\'s with --workers 2), e.g. \'{"plan": "targets"}\'',
    )
    args = parser.parse_args()
    options = fess_options(parser, args.options)
    suite = SUITES[args.suite]
    seconds = args.seconds or suite.seconds
    source = suite.source + (f":{args.select}" if args.select else "")
    levels = soko_gym.levels.load_levels(source)
    first = int(args.select.split("-")[0]) - 1 if args.select else 0
    numbered = [(first + i, lv) for i, lv in enumerate(levels)]  # 0-based, as in every record
    if args.only:
        wanted = {int(x) - 1 for x in args.only.split(",")}  # --only is 1-based, like selections
        numbered = [(i, lv) for i, lv in numbered if i in wanted]
    out = open(args.jsonl, "a", encoding="utf-8") if args.jsonl else None  # noqa: SIM115
    rows: list[dict] = []
    t0 = time.perf_counter()
    task = partial(solve_one, suite.source, seconds, args.memory_mb, args.workers, options)
    jobs = [(i, (i, lv.to_xsb())) for i, lv in numbered]
    with closing(run(task, jobs, Backend.from_args(args), total=len(jobs))) as outcomes:
        for outcome in outcomes:
            if not outcome.ok:
                raise RuntimeError(f"level {outcome.key + 1} failed: {outcome.error}")
            row = outcome.value
            rows.append(row)
            print(
                f"{row['index'] + 1:>4} {row['status']:<10} {row['wall_seconds']:>8.2f}s "
                f"{row['pushes']:>5} pushes {row['moves']:>6} moves {row['nodes']:>7} nodes "
                f"{row['nodes_per_second']:>6} nodes/s",
                flush=True,
            )
            for worker, error in row["worker_errors"].items():  # a crashed worker is no timeout
                print(f"     worker {worker} failed: {error}", flush=True)
            if out:
                out.write(json.dumps({**row, "suite": args.suite, "limit": seconds}) + "\n")
                out.flush()
    wall = time.perf_counter() - t0
    rows.sort(key=lambda r: r["index"])
    solved = [r for r in rows if r["solved"]]
    print()
    print(machine_line())
    setup = f"{args.workers} worker(s) per level" if args.workers > 1 else "one worker per level"
    print(f"\n## FESS, {source}, {seconds:g} s per level, {setup} (target: {suite.target})\n")
    slowest = sorted(solved, key=lambda r: -r["wall_seconds"])[:5]
    slow_text = ", ".join("#{} {:.1f} s".format(r["index"] + 1, r["wall_seconds"]) for r in slowest)
    print(
        f"solved {len(solved)}/{len(rows)}; wall {wall:.0f} s on "
        f"{Backend.from_args(args).describe()}; "
        f"time on solved levels {sum(r['wall_seconds'] for r in solved):.1f} s; "
        f"slowest: {slow_text}"
    )
    unsolved = [f"#{r['index'] + 1} ({r['status']})" for r in rows if not r["solved"]]
    print(f"unsolved: {', '.join(unsolved) if unsolved else 'none'}")
    failed = [f"#{r['index'] + 1}" for r in rows if r["worker_errors"]]
    print(f"levels where a portfolio worker failed: {', '.join(failed) if failed else 'none'}\n")
    rates = sorted(r["nodes_per_second"] for r in rows if r["nodes"] >= 1000)
    if rates:
        print(
            f"nodes/s over the {len(rates)} levels with >= 1,000 nodes: median "
            f"{rates[len(rates) // 2]:,}, min {rates[0]:,}, max {rates[-1]:,}\n"
        )
    print("| level | status | seconds | pushes | moves | nodes | nodes/s |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['index'] + 1} | {r['status']} | {r['wall_seconds']:.2f} | {r['pushes']} | "
            f"{r['moves']} | {r['nodes']} | {r['nodes_per_second']} |"
        )
    if out:
        out.close()


if __name__ == "__main__":
    main()
