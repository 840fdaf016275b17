"""Where FESS spends its time, and how far it gets, on chosen levels (one worker, profiled).

    python benchmarks/fess_profile.py xsokoban 14,15,23,28 --seconds 20

Per level: the packing plan (complete or not, steps), nodes, nodes per second of search (under
the profiler, so about 10% below an unprofiled run), feature-space cells, the most plan steps
any position realised, the share of positions later marked dead, deadlocks by kind, and the
time split: the move generator kernel, the corral, room, retrograde and frozen-box deadlock
tests, the learned-pattern matcher, the move-ordering kernel and the Python search loop
(everything else).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
import soko_gym  # noqa: E402
from planners import SearchLimits  # noqa: E402
from planners.fess.search import FessPlanner, _FessRun  # noqa: E402

# profiler function names -> the time-split column they belong to
PARTS = {
    "push_moves": "moves",
    "corral_deadlock": "corral",
    "label_corrals": "corral",
    "best_pi_corral": "corral",
    "room_deadlock": "room",
    "retrograde_deadlock": "retrograde",
    "is_deadlock": "frozen",
    "order_moves": "order",
    "match_learned": "learned",
}
COLUMNS = ("moves", "corral", "room", "retrograde", "frozen", "learned", "order", "python")


def profile_level(level, seconds: float) -> dict:
    """Run FESS on one level under cProfile; the figures of the module docstring."""
    run = _FessRun(FessPlanner(), level.board, SearchLimits(max_seconds=seconds), None)
    run.deadline = time.perf_counter() + seconds
    prof = cProfile.Profile()
    prof.enable()
    out = run.run()
    prof.disable()
    stats = pstats.Stats(prof).stats
    total = sum(v[2] for v in stats.values())  # own time of every function
    split = dict.fromkeys(COLUMNS, 0.0)
    for (_, _, name), value in stats.items():
        part = PARTS.get(name)
        if part == "frozen":
            split[part] += value[3]  # cumulative: the Python wrapper and its kernels
        elif part is not None:
            split[part] += value[2]
    split["python"] = max(0.0, total - sum(split.values()))
    nodes = list(run.table.values())
    s = out.stats
    return {
        "status": out.status,
        "plan": f"{'complete' if s['plan_complete'] else 'INCOMPLETE'} ({s['plan_steps']})",
        "nodes": s["nodes"],
        "rate": round(s["nodes"] / max(s["search_seconds"], 1e-9)),
        "cells": s["cells"],
        "best_packed": max(n.features.packed for n in nodes),
        "dead": sum(n.dead for n in nodes) / max(1, len(nodes)),
        "deadlocks": {k: v for k, v in s["deadlocks"].items() if v},
        "split": {k: v / total for k, v in split.items()} if total else split,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack", help="bundled pack, e.g. xsokoban")
    parser.add_argument("levels", help="1-based level numbers, e.g. 14,15,23")
    parser.add_argument("--seconds", type=float, default=20.0, help="time per level")
    args = parser.parse_args()
    numbers = [int(x) for x in args.levels.split(",")]
    soko_gym.engine.warmup()
    profile_level(soko_gym.load_levels("microban:1")[0], 5)  # compile outside the figures
    head = "| level | status | plan (steps) | nodes | nodes/s | cells | best packed | dead |"
    print(head + " " + " | ".join(COLUMNS) + " | deadlocks found |")
    print("|---:|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(COLUMNS) + "---|")
    for i in numbers:
        r = profile_level(soko_gym.load_levels(f"{args.pack}:{i}")[0], args.seconds)
        split = " | ".join(f"{100 * r['split'][c]:.0f}%" for c in COLUMNS)
        found = ", ".join(f"{k} {v:,}" for k, v in r["deadlocks"].items())
        print(
            f"| {i} | {r['status']} | {r['plan']} | {r['nodes']:,} | {r['rate']:,} | "
            f"{r['cells']} | {r['best_packed']} | {100 * r['dead']:.0f}% | {split} | {found} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
