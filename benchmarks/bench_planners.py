"""Planner benchmark: solved counts, optimality, time and node throughput on bundled packs.

Runs each suite level by level in this process (``--jobs`` spreads levels over processes, which
changes the wall-clock figures but not the per-level ones), writes every level's result to
``--jsonl`` and prints a markdown table with the machine it ran on. The run
``benchmarks/RESULTS.md`` cites (``--jsonl`` overwrites its file):

    python benchmarks/bench_planners.py xsokoban1 microban boxoban --jobs 2 \
        --jsonl benchmarks/results/planners.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass

import planners
import soko_gym
from planners import SearchLimits
from planners.records import solve_record
from soko_gym.execution import Backend, add_backend_options, run_ordered
from soko_gym.provenance import machine_line


@dataclass(frozen=True)
class Suite:
    """One benchmark line: a planner on a level source with a per-level budget.

    Attributes:
        name: label in the table.
        planner: registry name.
        source: levels (pack or selection).
        seconds: time limit per level.
        memory_mb: memory limit per level.
        target: what the issue asks for, as text.
    """

    name: str
    planner: str
    source: str
    seconds: float
    memory_mb: float
    target: str = ""


SUITES = {
    "xsokoban1": Suite(
        "astar, XSokoban 1", "astar", "xsokoban:1", 10, 4000, "optimal 97 pushes in < 10 s"
    ),
    "microban": Suite(
        "astar, Microban",
        "astar",
        "microban",
        60,
        4000,
        ">= 150 of 155 push-optimal (Rust A*: 144 in 10 s)",
    ),
    "boxoban": Suite(
        "astar, Boxoban unfiltered test",
        "astar",
        "boxoban-unfiltered-test",
        10,
        4000,
        ">= 99.5% (A* + Manhattan, 1M nodes: 11 unsolved)",
    ),
    "packing-microban": Suite("packing-order, Microban", "packing-order", "microban", 10, 4000),
    "reverse-packing-microban": Suite(
        "reverse-packing-order, Microban", "reverse-packing-order", "microban", 10, 4000
    ),
    "packing-xsokoban": Suite("packing-order, XSokoban", "packing-order", "xsokoban", 10, 4000),
    "reverse-packing-xsokoban": Suite(
        "reverse-packing-order, XSokoban", "reverse-packing-order", "xsokoban", 10, 4000
    ),
}


def solve_one(args: tuple[str, float, float, str, int, str]) -> dict:
    """Solve one level (a task of the execution layer); its ``planners.records`` record."""
    planner, seconds, memory_mb, source, index, xsb = args
    level = soko_gym.Level.from_xsb(xsb)
    result = planners.solve(
        level, planner, SearchLimits(max_seconds=seconds, max_memory_mb=memory_mb)
    )
    return solve_record(source, index, level, result)


def run_suite(suite: Suite, backend: Backend, limit: int | None) -> list[dict]:
    """Every level's record, in level order."""
    levels = soko_gym.load_levels(suite.source)[:limit]
    args = [
        (suite.planner, suite.seconds, suite.memory_mb, suite.source, i, lv.to_xsb())
        for i, lv in enumerate(levels)
    ]
    return run_ordered(solve_one, args, backend)


def summary_row(suite: Suite, rows: list[dict]) -> str:
    """One markdown table row for a finished suite."""
    solved = [r for r in rows if r["solved"]]
    secs = [r["seconds"] for r in rows]
    generated = sum(r["generated"] for r in rows)
    rate = generated / max(sum(secs), 1e-9)
    optimal = sum(r["optimal"] for r in solved)
    unsolved = [f"{r['index'] + 1} ({r['status']})" for r in rows if not r["solved"]]
    return (
        f"| {suite.name} | {len(solved)}/{len(rows)} ({100 * len(solved) / len(rows):.1f}%) | "
        f"{optimal} | {sum(secs):.1f} | {statistics.median(secs):.3f} | {rate:,.0f} | "
        f"{suite.seconds:g} s | {suite.target} | {', '.join(unsolved[:12])}"
        f"{' ...' if len(unsolved) > 12 else ''} |"
    )


def main() -> None:
    """Parse flags, run the suites, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "suites",
        nargs="*",
        default=["xsokoban1", "microban", "boxoban"],
        help=f"suites to run (default: the A* targets); known: {list(SUITES)}",
    )
    add_backend_options(parser)
    parser.add_argument("--limit", type=int, default=None, help="first N levels of each suite")
    parser.add_argument("--jsonl", default=None, help="write per-level records here")
    args = parser.parse_args()
    for name in args.suites:
        if name not in SUITES:
            parser.error(f"unknown suite {name!r}; known: {list(SUITES)}")
    planners.solve("#####\n#@$.#\n#####", "astar")  # compile before timing anything
    rows_out = []
    records = []
    t0 = time.perf_counter()
    for name in args.suites:
        suite = SUITES[name]
        rows = run_suite(suite, Backend.from_args(args), args.limit)
        records += [{**r, "suite": name} for r in rows]
        rows_out.append(summary_row(suite, rows))
        print(f"done: {suite.name}", file=sys.stderr)
    if args.jsonl:
        with open(args.jsonl, "w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
    print(f"## soko-gym planner benchmark ({Backend.from_args(args).describe()})\n")
    print(machine_line() + "\n")
    print(
        "| Suite | Solved | Optimal | Total s | Median s | Generated/s | Limit | Target | "
        "Unsolved (1-based) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|---|")
    print("\n".join(rows_out))
    print(
        f"\nGenerated/s: generated nodes over the suite's planner seconds. Memory limit "
        f"4000 MB per level. Run took {time.perf_counter() - t0:.0f} s."
    )


if __name__ == "__main__":
    main()
