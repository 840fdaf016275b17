"""FESS packing plans per level: complete or not, the sink room, boxes left, nodes, seconds.

    python benchmarks/fess_plans.py xsokoban [--nodes 3000]

The plan sets FESS's first two feature axes, so a level whose plan is incomplete is guided
the wrong way before the search starts; this table shows which levels those are. Prints one
row per level, then the incomplete ones.
"""

from __future__ import annotations

import argparse

from planners.fess.packing_plan import compute_packing_plan
from soko_gym.levels import load_levels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", help="a collection or selection, e.g. xsokoban, sasquatch:1-10")
    ap.add_argument("--nodes", type=int, default=3000, help="backward-search nodes per sink room")
    args = ap.parse_args()
    if args.nodes < 1:
        raise SystemExit("--nodes must be positive")
    incomplete = []
    print("| level | plan | steps | sink room | boxes left | nodes | seconds |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for i, level in enumerate(load_levels(args.source), 1):
        name = level.title or str(i)
        # no time limit: the table must not depend on the machine's load
        plan = compute_packing_plan(level.board, max_nodes=args.nodes, max_seconds=None)
        if not plan.complete:
            incomplete.append(name)
        state = "complete" if plan.complete else "INCOMPLETE"
        print(
            f"| {name} | {state} | {plan.n_steps} | {plan.sink_room} | {plan.left} | "
            f"{plan.nodes:,} | {plan.seconds:.2f} |"
        )
    print(f"\nincomplete: {len(incomplete)} {incomplete}")


if __name__ == "__main__":
    main()
