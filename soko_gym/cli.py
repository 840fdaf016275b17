"""The ``soko`` command line: its own commands (show, packs, verify, pddl) and everyone else's.

The other packages contribute subcommands through the ``soko_gym.commands`` entry points
(``pyproject.toml``): each names a function ``add_parsers(sub, source_help)``. So this module,
in the bottom package, imports nothing above ``soko_gym.levels``; ``soko solve`` comes from
``planners.cli``, ``soko collect``/``train``/``bench`` from ``agents.cli``.

It also holds what every command line of the project shares: the level-source help, the exit
codes, and ``add_dataclass_options``/``dataclass_kwargs``, which turn a config dataclass into
``--options`` (the ``soko train`` flags and the examples' arguments come from their dataclasses).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from soko_gym.errors import LevelFormatError

COMMAND_GROUP = "soko_gym.commands"
T = typing.TypeVar("T")
EXIT_OK = 0  # every level solved / every command done
EXIT_SOME_FAILED = 1  # some levels unsolved or some solutions wrong
EXIT_BAD_INPUT = 2  # a bad argument, level file or option
EXIT_INTERRUPTED = 130  # Ctrl-C; every line already written is kept

SOURCE_HELP = (
    "a bundled pack name (see `soko packs`), an XSB/SOK/TXT file or a directory of Boxoban "
    "files, the corridors generated:corridor:N or a graded suite graded:FILE.csv:moves=A-B, "
    "optionally with a 1-based selection such as microban:3 or xsokoban:1-10"
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
    records = []
    for i, (level, lurd) in enumerate(zip(levels, solutions, strict=True)):
        result = verify(level, lurd)
        label = level.title or str(i + 1)
        n_ok += result.ok
        records.append(
            {"title": label, "ok": result.ok, "moves": result.moves, "pushes": result.pushes}
            | ({} if result.ok else {"step": result.index, "reason": result.reason})
        )
        if args.json or (args.quiet and result.ok):
            continue
        if result.ok:
            print(f"{label}: ok ({result.moves} moves, {result.pushes} pushes)")
        else:
            print(f"{label}: FAILED at step {result.index}: {result.reason}")
    if args.json:
        print(json.dumps({"levels": len(levels), "ok": n_ok, "results": records}))
    else:
        print(f"{n_ok}/{len(levels)} solutions ok")
    return EXIT_OK if n_ok == len(levels) else EXIT_SOME_FAILED


def _cmd_pddl(args: argparse.Namespace) -> int:
    if args.plan is not None:
        return _pddl_plan(args)
    if args.source is None or args.out is None or args.level is not None:
        raise ValueError(
            "write PDDL with `soko pddl SOURCE --out DIR`, read a plan with "
            "`soko pddl --plan FILE --level SOURCE`"
        )
    from soko_gym.levels.packs import indexed_levels, split_selection
    from soko_gym.levels.pddl import domain_pddl, pddl_name, problem_pddl

    style = args.style or "ipc2008"
    items = indexed_levels(args.source)
    stem = Path(split_selection(args.source)[0]).stem
    digits = max(3, len(str(items[-1][0] + 1)))
    files = {"domain.pddl": domain_pddl(style)}
    for index, level in items:  # every file is made before any is written
        number = f"{index + 1:0{digits}d}"
        try:
            files[f"p{number}.pddl"] = problem_pddl(level, style, pddl_name(f"{stem}-{number}"))
        except ValueError as err:
            raise ValueError(f"{args.source}, level {index + 1}: {err}") from None
    out = Path(args.out)
    taken = [name for name in files if (out / name).exists()]
    if taken and not args.overwrite:
        more = f" and {len(taken) - 1} more of the files to write" if len(taken) > 1 else ""
        them = "them" if more else "it"
        raise ValueError(f"{out / taken[0]} exists{more}; pass --overwrite to replace {them}")
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    names = list(files)[1:]
    problems = (
        names[0] if len(names) == 1 else f"{len(names)} problem files ({names[0]} .. {names[-1]})"
    )
    print(f"{out}: domain.pddl and {problems}, style {style}")
    return EXIT_OK


def _pddl_plan(args: argparse.Namespace) -> int:
    from soko_gym.levels import load_levels, verify
    from soko_gym.levels.pddl import plan_to_lurd

    if args.level is None or args.source is not None or args.out is not None:
        raise ValueError("read a plan with `soko pddl --plan FILE --level SOURCE` (one level)")
    levels = load_levels(args.level)
    if len(levels) != 1:
        raise ValueError(
            f"--level {args.level} selects {len(levels)} levels; select the plan's one level, "
            "e.g. microban:3"
        )
    with open(args.plan, encoding="utf-8") as f:
        text = f.read()
    try:
        lurd = plan_to_lurd(levels[0], text, args.style)
    except ValueError as err:
        raise ValueError(f"{args.plan}: {err}") from None
    result = verify(levels[0], lurd)
    print(lurd)
    if result.ok:
        print(f"solved: {result.moves} moves, {result.pushes} pushes")
        return EXIT_OK
    print(f"not solved: {result.reason} (step {result.index})")
    return EXIT_SOME_FAILED


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
    verify.add_argument("--quiet", action="store_true", help="print only failures and the total")
    verify.add_argument(
        "--json", action="store_true", help="print one JSON object (per-level results and totals)"
    )
    verify.set_defaults(func=_cmd_verify)

    pddl = sub.add_parser(
        "pddl",
        help="write levels as PDDL problems, or turn a planner's plan into LURD (docs/pddl.md)",
        description="Write SOURCE's levels as a PDDL domain and one problem per level "
        "(SOURCE --out DIR), or read a plan back as a LURD solution and verify it "
        "(--plan FILE --level SOURCE; exit 0 solved, 1 not solved, 2 bad plan).",
    )
    pddl.add_argument("source", nargs="?", help=SOURCE_HELP)
    pddl.add_argument("--out", metavar="DIR", help="folder for domain.pddl and pNNN.pddl")
    pddl.add_argument(
        "--style",
        choices=("ipc2008", "ipc2023"),
        help="IPC-2008 sequential or IPC-2023 learning-track vocabulary (default: ipc2008 "
        "when writing; told from the plan's first action when reading)",
    )
    pddl.add_argument(
        "--overwrite", action="store_true", help="replace files of the same names in --out"
    )
    pddl.add_argument("--plan", metavar="FILE", help="a plan: one (action arg ...) per line")
    pddl.add_argument("--level", metavar="SOURCE", help="the one level the plan is for")
    pddl.set_defaults(func=_cmd_pddl)

    for add_parsers in command_providers():
        add_parsers(sub, SOURCE_HELP)
    return parser


def command_providers() -> list[Callable[[Any, str], None]]:
    """The ``add_parsers`` functions of the installed ``soko_gym.commands`` entry points.

    Ordered by entry-point name; a provider whose package fails to import is skipped with a
    note on stderr, so ``soko show`` keeps working when, say, an optional extra is broken.
    """
    out = []
    for ep in sorted(entry_points(group=COMMAND_GROUP), key=lambda e: e.name):
        try:
            out.append(ep.load())
        except ImportError as err:
            print(f"note: soko {ep.name} commands unavailable: {err}", file=sys.stderr)
    return out


def _version() -> str:
    from soko_gym import __version__

    return f"soko-gym {__version__}"


# -- config dataclasses as command-line options ------------------------------------------------


def field_docs(cls: type) -> dict[str, str]:
    """Each field's help: its entry in the class docstring's ``Attributes:`` section."""
    docs: dict[str, str] = {}
    name = None
    indent = -1  # indentation of the entries; -1 before the section
    for line in (cls.__doc__ or "").splitlines():
        stripped = line.strip()
        if indent == -1:
            indent = -2 if stripped == "Attributes:" else -1
            continue
        if not stripped:
            continue
        depth = len(line) - len(line.lstrip())
        if indent == -2:
            indent = depth
        if depth < indent:
            break
        head, sep, rest = stripped.partition(": ")
        if depth == indent and sep and head.isidentifier():
            name = head
            docs[name] = rest
        elif name is not None:
            docs[name] += " " + stripped
    return docs


def _option_type(hint: Any) -> tuple[Any, bool]:
    """(the hint without ``| None``, whether None is allowed)."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0], True
    return hint, False


def add_dataclass_options(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    cls: type,
    *,
    prefix: str = "",
    aliases: Mapping[str, Sequence[str]] | None = None,
    choices: Mapping[str, Iterable[Any]] | None = None,
    skip: Iterable[str] = (),
    required: Iterable[str] = (),
) -> None:
    """Add one ``--option`` per field of dataclass ``cls``, help from its ``Attributes:``.

    ``--{prefix}{field}`` (underscores as dashes) sets the field; ``aliases`` adds other flags
    for a field. Booleans get ``--x/--no-x``; ``X | None`` fields take an X; ``tuple[int, int]``
    takes two numbers, ``list[int]`` and ``tuple[str, ...]`` any number. An option not given
    keeps the dataclass's default: ``dataclass_kwargs`` returns only the options given.
    """
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    aliases = aliases or {}
    choices = choices or {}
    skip, required = set(skip), set(required)
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        flags = ["--" + (prefix + f.name).replace("_", "-"), *aliases.get(f.name, ())]
        kind, optional = _option_type(hints[f.name])
        default = f.default if f.default is not dataclasses.MISSING else None
        if f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        help_text = docs.get(f.name, f.name.replace("_", " "))
        kw: dict[str, Any] = {"dest": prefix.replace("-", "_") + f.name}
        if f.name in required:
            kw["required"] = True
        else:
            kw["default"] = argparse.SUPPRESS
            help_text += f" (default: {default})"
        if kind is bool:
            kw["action"] = argparse.BooleanOptionalAction
        elif typing.get_origin(kind) is tuple and typing.get_args(kind)[-1] is Ellipsis:
            kw.update(type=typing.get_args(kind)[0], nargs="*")
        elif typing.get_origin(kind) is tuple:
            kw.update(type=typing.get_args(kind)[0], nargs=len(typing.get_args(kind)))
        elif typing.get_origin(kind) is list:
            kw.update(type=typing.get_args(kind)[0], nargs="*")
        elif kind in (int, float, str):
            kw["type"] = kind
        else:
            raise TypeError(f"{cls.__name__}.{f.name}: no command-line form for {kind!r}")
        if f.name in choices:
            kw["choices"] = tuple(choices[f.name])
        parser.add_argument(*flags, help=help_text.replace("%", "%%"), **kw)


def parse_dataclass_args(cls: type[T], argv: Sequence[str] | None, doc: str | None) -> T:
    """A ``cls`` from the command line: one ``--option`` per field, help from its docstring.

    ``doc``'s first line describes the program (a script passes its ``__doc__``).
    """
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    add_dataclass_options(parser, cls)
    return cls(**dataclass_kwargs(cls, parser.parse_args(argv)))


def dataclass_kwargs(cls: type, args: argparse.Namespace, *, prefix: str = "") -> dict[str, Any]:
    """The fields of ``cls`` given on the command line (``add_dataclass_options``), by name."""
    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        dest = prefix.replace("-", "_") + f.name
        if hasattr(args, dest):
            value = getattr(args, dest)
            kind, _ = _option_type(hints[f.name])
            if value is not None and typing.get_origin(kind) is tuple:
                value = tuple(value)
            out[f.name] = value
    return out


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
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
