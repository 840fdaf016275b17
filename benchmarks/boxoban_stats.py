"""Do generated 10x10 four-box levels look like Boxoban's? Histograms side by side.

Compares the level generator's output (``generated:10x10:4`` and its Boxoban room style
``generated:10x10:4:boxoban``, the training sources for demonstrations at scale) with
``boxoban-unfiltered-train`` on three statistics: interior wall squares (walls inside the
outer ring: how much room the player has), the push-optimal solution length (A*) and the
start position's push lower bound (the box-goal matching A* uses). Prints a markdown table of
summary figures and each histogram's overlap with Boxoban's (the sum over bins of the smaller
share; 1 is identical), and writes a PNG of the histograms when matplotlib is installed.

    python benchmarks/boxoban_stats.py [--levels 1000] [--png benchmarks/results/boxoban_stats.png]
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter

import numpy as np

import planners
from soko_gym.engine.constants import SQUARE_DTYPE
from soko_gym.engine.lowerbound import matching_bound_full, new_match_state
from soko_gym.levels import Level, generate_level, load_levels
from soko_gym.provenance import machine_line

STATS = ("interior walls", "optimal pushes", "push lower bound")


def level_stats(level: Level) -> tuple[int, int, int]:
    """(interior wall squares, A*'s optimal pushes, matching lower bound) of one level."""
    walls = sum(1 for r, c in level.walls if 0 < r < level.height - 1 and 0 < c < level.width - 1)
    result = planners.solve(level, "astar", planners.SearchLimits(max_seconds=30))
    if not result.solved:
        raise RuntimeError(f"A* did not solve {level.title or level}: {result.status}")
    board = level.board
    match, work = new_match_state(board.n_boxes)
    root = board.start_boxes.astype(SQUARE_DTYPE)
    bound = int(matching_bound_full(board.goal_dist, root, match, work))
    return walls, result.pushes, bound


def overlap(a: list[int], b: list[int]) -> float:
    """Histogram intersection of two integer samples (1: the same distribution)."""
    ca, cb = Counter(a), Counter(b)
    return sum(min(ca[k] / len(a), cb[k] / len(b)) for k in set(ca) | set(cb))


def main() -> None:
    """Measure both sources and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=1000, help="levels per source")
    parser.add_argument("--seed", type=int, default=0, help="generator seed")
    parser.add_argument("--png", default="", help="write the histograms to this PNG")
    args = parser.parse_args()
    if args.levels < 1:
        raise ValueError(f"--levels must be at least 1, got {args.levels}")
    rng = np.random.default_rng(args.seed)
    sources = {
        "boxoban-unfiltered-train": load_levels("boxoban-unfiltered-train")[: args.levels],
        "generated:10x10:4": [generate_level(rng).level for _ in range(args.levels)],
        "generated:10x10:4:boxoban": [
            generate_level(rng, room_shape="boxoban").level for _ in range(args.levels)
        ],
    }
    data = {name: [level_stats(lv) for lv in levels] for name, levels in sources.items()}
    print(f"{machine_line()}\n")
    print("| statistic | source | levels | mean | median | min | max |")
    print("|---|---|---:|---:|---:|---:|---:|")
    columns: dict[str, dict[str, list[int]]] = {}
    for i, stat in enumerate(STATS):
        columns[stat] = {name: [row[i] for row in rows] for name, rows in data.items()}
        for name, values in columns[stat].items():
            print(
                f"| {stat} | {name} | {len(values)} | {statistics.mean(values):.2f} | "
                f"{statistics.median(values):g} | {min(values)} | {max(values)} |"
            )
    names = list(sources)
    print("\n| statistic | " + " | ".join(f"overlap with Boxoban: {n}" for n in names[1:]) + " |")
    print("|---|" + "---:|" * (len(names) - 1))
    for stat, by_source in columns.items():
        ref = by_source[names[0]]
        cells = " | ".join(f"{overlap(ref, by_source[n]):.2f}" for n in names[1:])
        print(f"| {stat} | {cells} |")
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(STATS), figsize=(4 * len(STATS), 3.2))
        for ax, (stat, by_source) in zip(axes, columns.items(), strict=True):
            lo = min(min(v) for v in by_source.values())
            hi = max(max(v) for v in by_source.values())
            bins = np.arange(lo, hi + 2) - 0.5
            for name, values in by_source.items():
                ax.hist(values, bins=bins, alpha=0.5, density=True, label=name)
            ax.set_title(stat)
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.png, dpi=100)
        print(f"\nwritten: {args.png}")


if __name__ == "__main__":
    main()
