"""Learned agents on Boxoban under both protocols, set by set: a thin call of the package's.

Each agent plays every level of each set once, greedily (or with the assisted play of
``--symmetric``, ``--on-repeat``, ``--deadlock-search``), for at most 120 actions, through
``agents.benchmark.protocol.run_protocol`` (what ``soko bench --protocol`` runs). Per level it
records whether the episode solved the level, its actions, pushes and player moves (walks
included), written to ``--out/<agent>-<set>.csv`` (default ``benchmarks/results/agents``, the
folder ``benchmarks/RESULTS.md`` cites). Two protocols read the same episodes:

- **Push protocol** (this project's): solved within 120 pushes (a Push-env action is one push;
  the walk to it is free);
- **Boxoban protocol** (the published setting, Guez et al. 2019): solved within 120 player steps
  (moves), as an agent playing ``Sokoban-Move-v0`` for 120 steps. A Push-env agent's episode
  counts when its pushes and walks together fit in 120 steps: the same play in the Move env.

Prints a markdown table (solve rates with 95% bootstrap intervals) and writes
``solve_rate.png`` (solve rate against the budget, both protocols) with matplotlib.

    python benchmarks/boxoban_protocol.py --agents pretrained:boxoban-push,planner:astar
        [--sets unfiltered-test,...] [--levels 1000] [--out DIR]
        [--deadlock-search N] [--symmetric] [--on-repeat sample|untried] [--seed S]

``planner:NAME`` plays a planner through ``agents.expert.PlannerPolicy`` in the Push env, the
expert the agents learn from, as a reference row. The Push protocol does not apply to a
Move-env agent ("n/a": its budget is steps, not pushes).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from agents.benchmark.protocol import BUDGET, LEVEL_COLUMNS, PROTOCOLS, play_levels, run_protocol
from agents.playing.repeat import RULES
from soko_gym.levels import load_levels
from soko_gym.provenance import machine_line

SETS = {
    "unfiltered-test": "boxoban-unfiltered-test",
    "medium-valid": "boxoban-medium-valid",
    "hard": "boxoban-hard",
    "unfiltered-valid": "boxoban-unfiltered-valid",  # for choosing play options, not reporting
}
DEFAULT_SETS = ("unfiltered-test", "medium-valid", "hard")
play = play_levels  # one greedy episode per level: the package's (agents.benchmark.protocol)


def solve_rate(rows: list[dict[str, int]], key: str, budget: int) -> float:
    """Share of levels solved with at most ``budget`` of ``key`` (pushes or moves)."""
    return sum(r["solved"] and r[key] <= budget for r in rows) / len(rows)


def main() -> None:
    """Evaluate, write the CSVs, print the table and draw the curves."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", required=True, help="comma-separated models or pretrained:NAME")
    parser.add_argument(
        "--sets",
        default=",".join(DEFAULT_SETS),
        help=f"of {', '.join(SETS)} (default: {', '.join(DEFAULT_SETS)})",
    )
    parser.add_argument("--levels", type=int, default=1000, help="first N levels of each set")
    parser.add_argument("--out", default="benchmarks/results/agents", help="CSV and PNG folder")
    parser.add_argument(
        "--deadlock-search",
        type=int,
        default=0,
        metavar="N",
        help="play with the env's deadlock_search=N (the actions a search of at most N "
        "positions proves lose masked); the CSVs are named <agent>-dsearchN-<set>.csv",
    )
    parser.add_argument(
        "--symmetric",
        action="store_true",
        help="play each model through every symmetry of the board at once, its "
        "log-probabilities averaged (agents.playing.symmetry.SymmetryAveraged; 8 forward passes "
        "a step); the CSVs are named <agent>-sym-<set>.csv",
    )
    parser.add_argument(
        "--on-repeat",
        choices=RULES,
        default=None,
        help="on a board met before in the episode, sample from the policy or take its most "
        "likely action not yet tried there (agents.playing.repeat.RepeatAware); the CSVs are named "
        "<agent>-repeat-<rule>-<set>.csv",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of --on-repeat's sampling and of the env"
    )
    args = parser.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        raise ValueError(f"--sets: unknown {unknown}; known: {', '.join(SETS)}")
    if args.levels < 1:
        raise ValueError("--levels must be at least 1")
    if args.deadlock_search < 0:
        raise ValueError(f"--deadlock-search must be at least 0, got {args.deadlock_search}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    specs = [a for a in args.agents.split(",") if a]
    assisted = "".join(
        [
            f"-dsearch{args.deadlock_search}" if args.deadlock_search > 0 else "",
            "-sym" if args.symmetric else "",
            f"-repeat-{args.on_repeat}" if args.on_repeat else "",
        ]
    )
    results: dict[tuple[str, str], list[dict[str, int]]] = {}
    moves: dict[str, bool] = {}  # agent name -> plays the Move env
    print(f"{machine_line()}\n")
    print("| agent | env | set | levels | Push protocol: solved in <= 120 pushes (95% interval) | "
          "Boxoban protocol: solved in <= 120 steps (95% interval) |")  # fmt: skip
    print("|---|---|---|---:|---:|---:|")
    for set_name in sets:
        levels = load_levels(SETS[set_name])[: args.levels]
        figures, table = run_protocol(
            specs,
            levels,
            PROTOCOLS,
            seed=args.seed,
            symmetric=args.symmetric,
            on_repeat=args.on_repeat,
            deadlock_search=args.deadlock_search,
        )
        for spec in specs:
            rows = [{k: r[k] for k in LEVEL_COLUMNS} for r in table if r["solver"] == spec]
            env_id = next(r["env_id"] for r in table if r["solver"] == spec)
            name = spec.split(":", 1)[1] if ":" in spec else Path(spec).parent.name
            name += "" if spec.startswith("planner:") else assisted
            results[(name, set_name)] = rows
            moves[name] = env_id.startswith("Sokoban-Move")
            with (out / f"{name}-{set_name}.csv").open("w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=LEVEL_COLUMNS)
                writer.writeheader()
                writer.writerows(rows)
            cells = {}
            for p in PROTOCOLS:
                fig = next((f for f in figures if f.solver == spec and f.protocol == p), None)
                cells[p] = (
                    "n/a" if fig is None else f"{fig.rate:.1%} ({fig.low:.1%}-{fig.high:.1%})"
                )
            print(
                f"| {spec} | {env_id} | {set_name} | {len(rows)} | {cells['push']} | "
                f"{cells['boxoban']} |",
                flush=True,
            )
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    budgets = np.arange(0, BUDGET + 1)
    for ax, key, title in ((axes[0], "pushes", "Push protocol"), (axes[1], "moves", "Boxoban")):
        for (name, set_name), rows in results.items():
            if key == "pushes" and moves[name]:
                continue  # a Move-env agent's budget is steps
            ax.plot(
                budgets,
                [solve_rate(rows, key, int(b)) for b in budgets],
                label=f"{name}, {set_name}",
            )
        ax.set_xlabel(f"budget ({key})")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("solved")
    for ax in axes:
        if ax.get_legend_handles_labels()[0]:  # the Push panel is empty for Move agents only
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "solve_rate.png", dpi=100)
    print(f"\nwritten: {out}/*.csv, {out / 'solve_rate.png'}")


if __name__ == "__main__":
    main()
