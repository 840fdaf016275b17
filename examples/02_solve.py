"""Solve levels with a planner, check each solution with the verifier and print it in LURD.

``planners.solve`` runs the planner; ``soko_gym.verify`` replays the LURD independently (the
planners verify their results too; this shows the check a user can run on any solution).

    python examples/02_solve.py --levels microban:1-10 --planner astar
    python examples/02_solve.py --smoke   # Microban 1-2, 5 s each
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from soko_gym.cli import parse_dataclass_args


@dataclass
class Args:
    """Command-line arguments (each field is one ``--option``).

    Attributes:
        levels: level source: a pack name, file or directory, optionally with :A-B.
        planner: registry name of the planner (see `soko planners`).
        time_limit: planner seconds per level.
        smoke: tiny run for the tests: Microban 1-2, 5 s per level.
    """

    levels: str = "microban:1-5"
    planner: str = "astar"
    time_limit: float = 30.0
    smoke: bool = False


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, one ``--option`` per field (help from the field docs)."""
    return parse_dataclass_args(Args, argv, __doc__)


def main(argv: list[str] | None = None) -> int:
    """Solve and verify every level; exit code 0 when all are solved and verified."""
    args = parse_args(argv)
    if args.smoke:
        args.levels, args.time_limit = "microban:1-2", 5.0
    import planners
    import soko_gym

    limits = planners.SearchLimits(max_seconds=args.time_limit)
    levels = soko_gym.load_levels(args.levels)
    n_ok = 0
    for i, level in enumerate(levels, start=1):
        result = planners.solve(level, args.planner, limits)
        name = f"{i} {level.title!r}" if level.title else str(i)
        if not result.solved:
            print(f"{name}: {result.status} after {result.seconds:.2f} s")
            continue
        check = soko_gym.verify(level, result.lurd)
        ok = check.ok and (check.pushes, check.moves) == (result.pushes, result.moves)
        n_ok += ok
        print(
            f"{name}: {result.pushes} pushes, {result.moves} moves, {result.seconds:.2f} s, "
            f"{'optimal ' if result.optimal else ''}verified {'ok' if ok else 'FAILED'}"
        )
        print(f"  {result.lurd}")
    print(f"{n_ok}/{len(levels)} solved and verified")
    return 0 if n_ok == len(levels) else 1


if __name__ == "__main__":
    sys.exit(main())
