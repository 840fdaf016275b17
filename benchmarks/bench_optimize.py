"""Optimizer benchmark: moves and pushes before and after, per method and all together.

Suites: XSokoban level 1 from the A* solution (97 pushes), the A* solutions of Microban
(solved here first at 10 s per level, or read from a ``soko solve --jsonl`` file), and with
``--fess-solutions FILE`` the FESS solutions of XSokoban written by ``benchmarks/bench_fess.py
xsokoban --jsonl FILE`` (all methods, ``--fess-time`` seconds per level). ``--only-fess`` runs
that suite alone (``--fess-solutions benchmarks/results/fess-xsokoban-60s.jsonl``: the FESS
records ``benchmarks/RESULTS.md`` cites). Prints a markdown table with the machine it ran on.
"""

from __future__ import annotations

import argparse
import json
import time

# benchmarks/bench_planners.py is named like the package: keep this folder off the import path
import planners
import soko_gym
from planners import SearchLimits
from planners.optimizers import available_methods, optimize
from soko_gym.execution import Backend, add_backend_options, run_ordered
from soko_gym.provenance import machine_line


def astar_solutions(source: str, seconds: float) -> list[tuple[str, str]]:
    """(level XSB, A* LURD) for every level A* solves within ``seconds``."""
    out = []
    for level in soko_gym.load_levels(source):
        result = planners.solve(level, "astar", SearchLimits(max_seconds=seconds))
        if result.solved:
            out.append((level.to_xsb(), result.lurd))
    return out


def optimize_one(
    args: tuple[str, str, list[str] | None, float, str],
) -> tuple[int, int, int, int, float]:
    """(moves before, pushes before, moves after, pushes after, seconds) of one run (a task)."""
    xsb, lurd, methods, seconds, metric = args
    level = soko_gym.Level.from_xsb(xsb)
    r = optimize(level, lurd, metric, methods, SearchLimits(max_seconds=seconds))
    return r.input_moves, r.input_pushes, r.moves, r.pushes, r.seconds


def run(
    pairs: list[tuple[str, str]],
    methods: list[str] | None,
    seconds: float,
    metric: str,
    backend: Backend,
) -> list[tuple[int, int, int, int, float]]:
    """Optimize every (XSB, LURD) pair."""
    args = [(x, lurd, methods, seconds, metric) for x, lurd in pairs]
    return run_ordered(optimize_one, args, backend)


def row(label: str, results: list[tuple[int, int, int, int, float]], limit: float) -> str:
    """One markdown row of totals."""
    mb = sum(r[0] for r in results)
    pb = sum(r[1] for r in results)
    ma = sum(r[2] for r in results)
    pa = sum(r[3] for r in results)
    secs = sum(r[4] for r in results)
    gain = 100 * (mb - ma) / mb if mb else 0.0
    return (
        f"| {label} | {len(results)} | {mb:,} | {ma:,} | {gain:.1f}% | {pb:,} | {pa:,} | "
        f"{secs:.1f} | {limit:g} s |"
    )


def main() -> None:
    """Parse flags, run the suites, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--time-limit",
        type=float,
        default=5.0,
        help="seconds per level and run on Microban (default 5)",
    )
    parser.add_argument(
        "--xsokoban-time", type=float, default=60.0, help="seconds for XSokoban 1 (default 60)"
    )
    parser.add_argument("--limit", type=int, default=None, help="first N Microban solutions")
    parser.add_argument(
        "--solutions",
        default=None,
        help="soko solve --jsonl file with the Microban solutions to start from",
    )
    add_backend_options(parser)
    parser.add_argument("--metric", choices=("moves", "pushes"), default="moves")
    parser.add_argument(
        "--fess-solutions", default=None, help="benchmarks/bench_fess.py --jsonl file (XSokoban)"
    )
    parser.add_argument(
        "--fess-time", type=float, default=60.0, help="seconds per FESS solution (default 60)"
    )
    parser.add_argument("--only-fess", action="store_true", help="run the FESS suite alone")
    args = parser.parse_args()
    t0 = time.perf_counter()
    lines = []
    if args.fess_solutions:
        lines.append(fess_suite(args))
    if args.only_fess:
        print_table(args, lines, t0)
        return
    x1 = soko_gym.load_levels("xsokoban:1")[0]
    x1_lurd = planners.solve(x1, "astar").lurd
    r = optimize_one(x1.to_xsb(), x1_lurd, None, args.xsokoban_time, args.metric)
    verdict = "PASS" if r[2] <= 256 and r[3] == 97 else "MISS"
    lines.append(
        row(
            f"XSokoban 1 from A* (target <= 256 moves at 97 pushes: **{verdict}**)",
            [r],
            args.xsokoban_time,
        )
    )
    if args.solutions:
        levels = soko_gym.load_levels("microban")
        with open(args.solutions, encoding="utf-8") as f:
            recs = [json.loads(x) for x in f if x.strip()]
        pairs = [(levels[rec["index"]].to_xsb(), rec["lurd"]) for rec in recs if rec.get("lurd")]
    else:
        pairs = astar_solutions("microban", 10.0)
    pairs = pairs[: args.limit]
    for method in available_methods():
        lines.append(
            row(
                f"Microban A* solutions, {method} alone",
                run(pairs, [method], args.time_limit, args.metric, Backend.from_args(args)),
                args.time_limit,
            )
        )
    lines.append(
        row(
            "Microban A* solutions, all methods (scheduled)",
            run(pairs, None, args.time_limit, args.metric, Backend.from_args(args)),
            args.time_limit,
        )
    )
    print_table(args, lines, t0)


def fess_suite(args: argparse.Namespace) -> str:
    """The FESS-solutions row: every solved XSokoban level of the JSONL file, all methods."""
    levels = soko_gym.load_levels("xsokoban")
    best: dict[int, str] = {}
    with open(args.fess_solutions, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line) if line.strip() else {}
            if rec.get("suite") == "xsokoban" and rec.get("lurd"):
                best.setdefault(int(rec["index"]), rec["lurd"])  # 1-based level numbers
    pairs = [(levels[i - 1].to_xsb(), lurd) for i, lurd in sorted(best.items())]
    results = run(pairs[: args.limit], None, args.fess_time, args.metric, Backend.from_args(args))
    mb = sum(r[0] for r in results)
    ma = sum(r[2] for r in results)
    verdict = "PASS" if mb and (mb - ma) >= 0.25 * mb else "MISS"
    return row(
        f"XSokoban FESS solutions, all methods (target >= 25% fewer moves: **{verdict}**)",
        results,
        args.fess_time,
    )


def print_table(args: argparse.Namespace, lines: list[str], t0: float) -> None:
    """Print the markdown table of the suites run."""
    where = Backend.from_args(args).describe()
    print(f"## soko-gym optimizer benchmark (metric {args.metric}, {where})\n")
    print(machine_line() + "\n")
    print(
        "| Suite | Levels | Moves before | Moves after | Fewer moves | Pushes before | "
        "Pushes after | Seconds | Limit per level |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(lines))
    print(f"\nRun took {time.perf_counter() - t0:.0f} s.")


if __name__ == "__main__":
    main()
