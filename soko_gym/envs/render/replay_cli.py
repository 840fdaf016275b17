"""``soko render``: replays of LURD solutions as a GIF, an MP4 or a self-contained HTML viewer.

Contributed to the ``soko`` command through the ``soko_gym.commands`` entry points
(``envs = "soko_gym.envs.render.replay_cli:add_parsers"``), so ``soko_gym.cli`` imports nothing
from the envs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from soko_gym.envs.render.replay import MAX_FPS, Replay, make_replay, output_format, write_replays
from soko_gym.levels import Level
from soko_gym.levels.packs import indexed_levels

MAX_TILE = 64


def add_parsers(sub: Any, source_help: str) -> None:
    """Add ``render`` to the ``soko`` parser (the ``soko_gym.commands`` entry)."""
    render = sub.add_parser(
        "render",
        help="replay solutions as an animated GIF, an MP4 or a self-contained HTML viewer",
        description="Replay LURD solutions. The --out suffix picks the format: .gif (Pillow, "
        "the `data` extra), .mp4 (imageio-ffmpeg, the `video` extra) or .html (one file that "
        "opens from disk, several solutions side by side). Every solution is verified first.",
    )
    render.add_argument("source", help=source_help)
    group = render.add_mutually_exclusive_group(required=True)
    group.add_argument("--lurd", help="one LURD solution of the one level SOURCE selects")
    group.add_argument(
        "--solutions",
        nargs="+",
        metavar="JSONL",
        help="`soko solve --jsonl` files; every solved record of a selected level is shown "
        "(several files or levels: side by side in .html)",
    )
    render.add_argument("--out", required=True, metavar="FILE", help="FILE.gif, .mp4 or .html")
    render.add_argument(
        "--fps", type=int, default=8, help=f"steps per second, 1..{MAX_FPS} (default 8)"
    )
    render.add_argument(
        "--tile", type=int, default=16, help=f"tile side in pixels, 1..{MAX_TILE} (default 16)"
    )
    render.set_defaults(func=run_render)


def _level_label(index: int, level: Level) -> str:
    """A level's label: level N (1-based in the pack), then its title when that says more."""
    number = f"level {index + 1}"
    return number if level.title in ("", str(index + 1)) else f"{number} ({level.title})"


def replays_from_jsonl(source: str, paths: list[str]) -> list[Replay]:
    """Verified replays of every solved record in ``paths`` whose level ``source`` selects.

    Records are matched by their 0-based ``index``; unsolved records are skipped with a note.
    Replays come in level order, a level's solutions together in file order (side by side).

    Raises:
        ValueError: on an unreadable line (file and line named), a bad solution (level and step
            named), or when no record has a solution of a selected level.
    """
    levels = dict(indexed_levels(source))
    found: list[tuple[int, Replay]] = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    index = int(record["index"])
                except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
                    raise ValueError(
                        f"--solutions {path}, line {lineno}: not a record with an index ({err})"
                    ) from err
                if index not in levels:
                    continue
                level = levels[index]
                label = _level_label(index, level)
                who = record.get("planner") or Path(path).stem
                lurd = record.get("lurd") or ""
                if not record.get("solved", bool(lurd)) or not lurd:
                    print(
                        f"note: {path}: {label} ({who}) has no solution; skipped", file=sys.stderr
                    )
                    continue
                found.append((index, make_replay(level, lurd, f"{label} · {who}")))
    replays = [replay for _, replay in sorted(found, key=lambda item: item[0])]
    if not replays:
        raise ValueError(f"--solutions: no solved record of a level selected by {source!r}")
    return replays


def run_render(args: argparse.Namespace) -> int:
    """Run ``soko render``; returns the exit code (0 written; errors raise ValueError)."""
    output_format(args.out)  # a bad suffix fails before any work
    if not 1 <= args.fps <= MAX_FPS:
        raise ValueError(f"--fps must be in 1..{MAX_FPS}, got {args.fps}")
    if not 1 <= args.tile <= MAX_TILE:
        raise ValueError(f"--tile must be in 1..{MAX_TILE}, got {args.tile}")
    if args.lurd is not None:
        items = indexed_levels(args.source)
        if len(items) != 1:
            raise ValueError(
                f"--lurd needs SOURCE to select one level, {args.source!r} selects {len(items)}"
            )
        index, level = items[0]
        replays = [make_replay(level, args.lurd.strip(), _level_label(index, level))]
    else:
        replays = replays_from_jsonl(args.source, args.solutions)
    kind = write_replays(replays, args.out, fps=args.fps, tile_size=args.tile)
    size = Path(args.out).stat().st_size
    steps = ", ".join(str(r.moves) for r in replays)
    print(f"wrote {args.out} ({kind}, {len(replays)} solution(s) of {steps} steps, {size} bytes)")
    return 0
