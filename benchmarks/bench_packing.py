"""Packing-order planners on Microban and XSokoban: solved levels and seconds, as a markdown table.

Each planner runs once per level with a per-level time limit after a warm-up solve (numba
compilation is not timed). Unsolved levels end "exhausted" (the macro moves ran out) or at the
limit; the table counts both. ``--quick`` runs the first 10 levels of each pack.
"""

from __future__ import annotations

import argparse
import statistics
import time

import planners
from planners import SearchLimits
from soko_gym.levels import load_levels
from soko_gym.provenance import machine_line

PLANNERS = ("packing-order", "reverse-packing-order")
PACKS = ("microban", "xsokoban")
WARMUP = "#######\n#     #\n# .$. #\n#  $  #\n#  @  #\n#######"


def run_pack(planner: str, pack: str, n_levels: int | None, time_limit: float) -> dict:
    """Solve the first ``n_levels`` levels of ``pack`` (all when None); figures of the run."""
    levels = load_levels(pack)[:n_levels]
    limits = SearchLimits(max_seconds=time_limit)
    seconds: list[float] = []
    statuses: dict[str, int] = {}
    for level in levels:
        result = planners.solve(level, planner, limits)
        seconds.append(result.seconds)
        statuses[result.status] = statuses.get(result.status, 0) + 1
    return {
        "levels": len(levels),
        "solved": statuses.get("solved", 0),
        "exhausted": statuses.get("exhausted", 0),
        "limit": len(levels) - statuses.get("solved", 0) - statuses.get("exhausted", 0),
        "total": sum(seconds),
        "median": statistics.median(seconds) if seconds else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per level")
    parser.add_argument("--quick", action="store_true", help="first 10 levels of each pack")
    parser.add_argument("--packs", nargs="+", default=list(PACKS), help="packs to run")
    parser.add_argument("--planners", nargs="+", default=list(PLANNERS), help="planners to run")
    args = parser.parse_args()

    start = time.perf_counter()
    for name in args.planners:
        planners.solve(WARMUP, name)
    warmup = time.perf_counter() - start
    n_levels = 10 if args.quick else None
    lines = [
        f"Packing-order planners, {args.time_limit:g} s per level"
        f"{' (quick: first 10 levels per pack)' if args.quick else ''}; "
        f"warm-up (compile or cache load) {warmup:.1f} s",
        "",
        machine_line(),
        "",
        "| pack | planner | solved | exhausted | limit | total s | median s |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for pack in args.packs:
        for name in args.planners:
            r = run_pack(name, pack, n_levels, args.time_limit)
            lines.append(
                f"| {pack} | {name} | {r['solved']}/{r['levels']} | {r['exhausted']} | "
                f"{r['limit']} | {r['total']:.2f} | {r['median']:.4f} |"
            )
            print(lines[-1], flush=True)
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
