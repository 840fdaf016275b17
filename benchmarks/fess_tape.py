"""How FESS's effort grows with the length of Microban II 131's diagonal band.

    python benchmarks/fess_tape.py --seconds 60 > benchmarks/results/fess-tape-microban2-131.txt
    python benchmarks/fess_tape.py --sizes 5-7 --options '{"sinkless": "unordered"}'

Microban II 131 is a band of eight diagonal lines (targets, boxes, targets, boxes, boxes,
targets, boxes, targets) 11 rows long between a small room at each end. Rows 7-12 of its XSB
text (counted from 0) repeat row 6, each one square further left, so dropping k of them (k <= 6,
the rows below moved k squares right) gives the same level with a band of 11 - k rows and 4
boxes fewer per row. The table shows, per band length, whether FESS (one worker, or the
portfolio with ``--workers 2``) solves it in the time limit and how many positions it made: the
growth per row says how far the full level is from the search's reach (before the diagonal
deadlock test, every configuration stopped between 6 and 7 rows; with it, every length is
solved in seconds).
"""

from __future__ import annotations

import argparse
import json

from planners import SearchLimits, solve
from soko_gym.levels import Level
from soko_gym.levels.packs import indexed_levels

FULL_ROWS = 11  # rows of the band in the published level
FIRST_COPY = 7  # rows FIRST_COPY..LAST_COPY repeat the row above them one square further left
LAST_COPY = 12
SHORTEST = FULL_ROWS - (LAST_COPY - FIRST_COPY + 1)  # every repeated row cut


def band_level(rows: int) -> Level:
    """Microban II 131 with its band cut to ``rows`` rows (5 to 11)."""
    if not SHORTEST <= rows <= FULL_ROWS:
        raise ValueError(f"rows must be between {SHORTEST} and {FULL_ROWS}, got {rows}")
    text = indexed_levels("microban2:131")[0][1].rows
    for r in range(FIRST_COPY, LAST_COPY + 1):  # the cut is only sound if the rows repeat
        if text[r].rstrip() != text[r - 1].rstrip()[1:]:
            raise RuntimeError(f"microban2:131 row {r} does not repeat row {r - 1}")
    cut = FULL_ROWS - rows
    lines = list(text[:FIRST_COPY]) + [" " * cut + line for line in text[FIRST_COPY + cut :]]
    return Level.from_xsb("\n".join(lines))


def _sizes(spec: str) -> list[int]:
    """``--sizes``: "6" or "5-8", checked before any search runs."""
    lo, _, hi = spec.partition("-")
    try:
        sizes = list(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N or N-M, got {spec!r}") from None
    if not sizes or sizes[0] < SHORTEST or sizes[-1] > FULL_ROWS:
        raise argparse.ArgumentTypeError(f"band lengths run from {SHORTEST} to {FULL_ROWS}")
    return sizes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--sizes", type=_sizes, default=f"{SHORTEST}-{FULL_ROWS}", help="band lengths: 5-8 or 6"
    )
    ap.add_argument("--seconds", type=float, default=60.0, help="time limit per level")
    ap.add_argument("--workers", type=int, default=1, help="FESS portfolio size")
    ap.add_argument("--options", default="{}", help="FESS options as JSON")
    args = ap.parse_args()
    options = json.loads(args.options)
    print(f"FESS on Microban II 131 cut to N band rows, {args.seconds:g} s, options {options}\n")
    print("| band rows | boxes | status | seconds | positions | positions/s | pushes |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for rows in args.sizes:
        level = band_level(rows)
        result = solve(
            level, "fess", SearchLimits(max_seconds=args.seconds), workers=args.workers, **options
        )
        nodes = int(result.stats.get("nodes", 0))
        rate = nodes / result.seconds if result.seconds > 0 else 0.0
        print(
            f"| {rows} | {level.n_boxes} | {result.status} | {result.seconds:.1f} | {nodes:,} "
            f"| {rate:,.0f} | {result.pushes} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
