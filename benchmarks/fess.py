"""FESS benchmark: solved counts and per-level time, pushes and moves on the issue's suites.

    python benchmarks/fess.py microban --jobs 2
    python benchmarks/fess.py xsokoban --seconds 600 --jobs 2 --jsonl benchmarks/results/fess.jsonl

Each level runs in a worker process with its own time limit (``--seconds`` overrides the
suite's); every level's record goes to ``--jsonl`` as soon as it is done (appended, so an
interrupted run keeps what it finished), and a markdown summary plus the per-level table
(level, status, seconds, pushes, moves, nodes) is printed at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
import planners  # noqa: E402
import soko_gym  # noqa: E402
from planners import SearchLimits  # noqa: E402

sys.path.append(str(_HERE))
from engine import machine_line  # noqa: E402  (benchmarks/ is a folder of scripts)


@dataclass(frozen=True)
class Suite:
    """A level source, its per-level time limit and the issue's target."""

    source: str
    seconds: float
    target: str


SUITES = {
    "microban": Suite("microban", 60, "155/155 within 60 s each"),
    "xsokoban": Suite("xsokoban", 600, ">= 60/90 within 600 s each (goal 90/90)"),
    "boxoban-hard": Suite("boxoban-hard", 10, ">= 99% within 10 s each"),
    "sasquatch": Suite("sasquatch", 600, "report the solved count at 600 s each"),
}


def solve_one(index: int, xsb: str, seconds: float, memory_mb: float) -> dict:
    level = soko_gym.levels.Level.from_xsb(xsb)
    t = time.perf_counter()
    result = planners.solve(
        level, "fess", SearchLimits(max_seconds=seconds, max_memory_mb=memory_mb)
    )
    return {
        "index": index,
        "title": level.title,
        "status": result.status,
        "seconds": round(time.perf_counter() - t, 3),
        "pushes": result.pushes,
        "moves": result.moves,
        "nodes": result.stats.get("nodes", 0),
        "cells": result.stats.get("cells", 0),
        "plan_seconds": result.stats.get("plan_seconds", 0.0),
        "lurd": result.lurd,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("--select", default=None, help="1-based selection, e.g. 1-30")
    parser.add_argument("--seconds", type=float, default=None, help="time limit per level")
    parser.add_argument("--memory-mb", type=float, default=6000, help="memory limit per level")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--jsonl", default=None, help="append per-level records here")
    args = parser.parse_args()
    suite = SUITES[args.suite]
    seconds = args.seconds or suite.seconds
    source = suite.source + (f":{args.select}" if args.select else "")
    levels = soko_gym.levels.load_levels(source)
    first = int(args.select.split("-")[0]) if args.select else 1
    out = open(args.jsonl, "a", encoding="utf-8") if args.jsonl else None  # noqa: SIM115
    rows: list[dict] = []
    t0 = time.perf_counter()
    ctx = get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=ctx) as pool:
        futures = [
            pool.submit(solve_one, first + i, lv.to_xsb(), seconds, args.memory_mb)
            for i, lv in enumerate(levels)
        ]
        for fut in as_completed(futures):
            row = fut.result()
            rows.append(row)
            print(
                f"{row['index']:>4} {row['status']:<10} {row['seconds']:>8.2f}s "
                f"{row['pushes']:>5} pushes {row['moves']:>6} moves {row['nodes']:>7} nodes",
                flush=True,
            )
            if out:
                out.write(json.dumps({"suite": args.suite, "limit": seconds, **row}) + "\n")
                out.flush()
    wall = time.perf_counter() - t0
    rows.sort(key=lambda r: r["index"])
    solved = [r for r in rows if r["status"] == "solved"]
    print()
    print(machine_line())
    print(f"\n## FESS, {source}, {seconds:g} s per level (target: {suite.target})\n")
    slowest = sorted(solved, key=lambda r: -r["seconds"])[:5]
    slow_text = ", ".join("#{} {:.1f} s".format(r["index"], r["seconds"]) for r in slowest)
    print(
        f"solved {len(solved)}/{len(rows)}; wall {wall:.0f} s with {args.jobs} job(s); "
        f"time on solved levels {sum(r['seconds'] for r in solved):.1f} s; slowest: {slow_text}"
    )
    unsolved = [f"#{r['index']} ({r['status']})" for r in rows if r["status"] != "solved"]
    print(f"unsolved: {', '.join(unsolved) if unsolved else 'none'}\n")
    print("| level | status | seconds | pushes | moves | nodes |")
    print("|---:|---|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['index']} | {r['status']} | {r['seconds']:.2f} | {r['pushes']} | "
            f"{r['moves']} | {r['nodes']} |"
        )
    if out:
        out.close()


if __name__ == "__main__":
    main()
