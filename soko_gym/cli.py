"""The ``soko`` command line: show levels, verify LURD solutions, solve levels with planners."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from soko_gym.errors import LevelFormatError

SOURCE_HELP = (
    "a bundled pack name (see `soko packs`), an XSB/SOK/TXT file or a directory of Boxoban "
    "files, optionally with a 1-based selection such as microban:3 or xsokoban:1-10"
)


def _cmd_show(args: argparse.Namespace) -> int:
    from soko_gym.levels import load_levels

    levels = load_levels(args.source, on_error=args.on_error)
    for level in levels:
        title = level.title or "(untitled)"
        print(f"; {title}  [{level.width}x{level.height}, {level.n_boxes} boxes]\n")
        print(level, end="\n\n")
    return 0


def _cmd_packs(args: argparse.Namespace) -> int:
    from soko_gym.levels import pack_info, packs

    for name in packs():
        info = pack_info(name)
        print(f"{name:<26} {info.n_levels:>5} levels  {info.credit}")
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from soko_gym.levels import load_levels, verify

    levels = load_levels(args.source)
    if args.lurd is not None:
        solutions = [args.lurd] * len(levels)
    else:
        with open(args.solutions, encoding="utf-8") as f:
            solutions = [ln.strip() for ln in f if ln.strip() and not ln.startswith(";")]
        if len(solutions) != len(levels):
            print(
                f"error: {args.solutions} has {len(solutions)} solutions for {len(levels)} "
                "levels (one LURD line per level expected)",
                file=sys.stderr,
            )
            return 2
    n_ok = 0
    for i, (level, lurd) in enumerate(zip(levels, solutions, strict=True)):
        result = verify(level, lurd)
        label = level.title or str(i + 1)
        if result.ok:
            n_ok += 1
            print(f"{label}: ok ({result.moves} moves, {result.pushes} pushes)")
        else:
            print(f"{label}: FAILED at step {result.index}: {result.reason}")
    print(f"{n_ok}/{len(levels)} solutions ok")
    return 0 if n_ok == len(levels) else 1


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``soko`` with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="soko", description="soko-gym: Sokoban levels, engine, planners and solution tools."
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    show = sub.add_parser("show", help="print levels as text")
    show.add_argument("source", help=SOURCE_HELP)
    show.add_argument(
        "--on-error",
        choices=("raise", "skip"),
        default="raise",
        help="stop at a bad level (default) or skip it with a warning",
    )
    show.set_defaults(func=_cmd_show)

    packs = sub.add_parser("packs", help="list the bundled level packs and their credits")
    packs.set_defaults(func=_cmd_packs)

    verify = sub.add_parser("verify", help="replay LURD solutions and report the first bad step")
    verify.add_argument("source", help=SOURCE_HELP)
    group = verify.add_mutually_exclusive_group(required=True)
    group.add_argument("--lurd", help="one LURD string, checked against every selected level")
    group.add_argument(
        "--solutions", metavar="FILE", help="a text file with one LURD line per selected level"
    )
    verify.set_defaults(func=_cmd_verify)

    # solving lives with the planners; imported here only to build the parser
    from planners.cli import add_solve_parser

    add_solve_parser(sub, SOURCE_HELP)
    # collect / train / bench live with the agents; their heavy imports happen inside the commands
    from agents.cli import add_agent_parsers

    add_agent_parsers(sub, SOURCE_HELP)
    return parser


def _version() -> str:
    from soko_gym import __version__

    return f"soko-gym {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``soko``; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. `soko show xsokoban | head`
        return 0
    except (LevelFormatError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
