"""FESS to a fixed number of tree nodes: time and search counters, for before/after comparisons.

    python benchmarks/fess_nodes.py 500000 xsokoban:29 sasquatch:40

One worker, default options, no time limit. A change meant to leave the search as it was must
print the same counters at the same node count; its speed is then the ratio of the times,
measured on the same machine in the same hour (run the old commit from a worktree with its own
``PYTHONPATH`` and ``NUMBA_CACHE_DIR``, and warm both caches first: a compile inside the first
level's run counts in its time).
"""

from __future__ import annotations

import argparse
import json
import time

from planners import SearchLimits
from planners.fess.options import FessOptions
from planners.fess.run import FessRun
from soko_gym.levels import load_levels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nodes", type=int, help="tree nodes per level")
    parser.add_argument("levels", nargs="+", help="pack:number, e.g. xsokoban:29")
    args = parser.parse_args()
    if args.nodes < 1:
        parser.error(f"nodes must be positive, got {args.nodes}")
    print("| level | status | seconds | expanded moves/s | counters |")
    print("|---|---|---:|---:|---|")
    for spec in args.levels:
        pack, _, number = spec.partition(":")
        if not number.isdigit():
            parser.error(f"level must be pack:number, got {spec!r}")
        level = load_levels(pack)[int(number) - 1]
        run = FessRun(FessOptions(), level.board, SearchLimits(max_nodes=args.nodes), None)
        t0 = time.perf_counter()
        out = run.run()
        seconds = time.perf_counter() - t0
        stats = run.stats.as_dict()
        keep = ("nodes", "expanded_moves", "generated_nodes", "transpositions", "cells")
        counters = {k: stats[k] for k in keep} | {"deadlocks": stats["deadlocks"]}
        rate = stats["expanded_moves"] / seconds if seconds > 0 else 0.0
        print(
            f"| {spec} | {out.status} | {seconds:.1f} | {rate:,.0f} | {json.dumps(counters)} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
