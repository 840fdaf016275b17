"""PDDL export speed: ``soko pddl`` on 1,000 Boxoban levels per style, as a markdown table.

Each row runs the command end to end in this process: read the pack (a fresh parse, no
cached boards), make every problem file (the ipc2023 style builds each level's Board for
its push distances and solves the goal matching) and write them to a temporary folder. The
numba kernels are loaded once before timing. The fresh-process column times the command
itself in a new interpreter (imports and kernel loading included). Target (issue 56): 1,000
levels in under 10 s.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from soko_gym.cli import main as soko
from soko_gym.levels import Level
from soko_gym.levels.packs import _read_file
from soko_gym.levels.pddl import STYLES, problem_pddl
from soko_gym.levels.xsb import parse_levels
from soko_gym.provenance import machine_line

TARGET_SECONDS = 10.0


def read_fresh(source: str) -> list[Level]:
    """The levels of ``source`` parsed anew (``load_levels`` caches files and their boards)."""
    from importlib import resources

    from soko_gym.levels.packs import pack_info

    ref = resources.files("soko_gym.levels") / "data" / pack_info(source).file
    return parse_levels(ref.read_text(encoding="utf-8"), source=source)


def time_export(source: str, style: str) -> tuple[float, float, int]:
    """(seconds of the whole export, seconds of making the texts only, bytes written)."""
    with tempfile.TemporaryDirectory() as tmp:
        read_fresh(source)  # the file into the OS cache
        _read_file.cache_clear()  # the command parses the pack anew and builds fresh boards
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = soko(["pddl", source, "--out", tmp, "--style", style])
        total = time.perf_counter() - start
        if code != 0:
            raise SystemExit(f"soko pddl {source} --style {style} exited {code}")
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
    levels = read_fresh(source)
    start = time.perf_counter()
    for level in levels:
        problem_pddl(level, style)
    return total, time.perf_counter() - start, size


def time_command(source: str, style: str) -> float:
    """Wall seconds of ``soko pddl`` in a fresh interpreter: imports and kernel loading too."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "soko_gym.cli", "pddl", source, "--out", tmp]
        start = time.perf_counter()
        subprocess.run([*argv, "--style", style], check=True, capture_output=True)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="boxoban-unfiltered-train", help="a bundled pack")
    parser.add_argument("--repeats", type=int, default=3, help="runs per style (median shown)")
    args = parser.parse_args()
    warm = read_fresh(args.source)[:1]
    for style in STYLES:  # load the kernels (push distances, matching) before timing
        problem_pddl(warm[0], style)
    n = len(read_fresh(args.source))
    print(f"`soko pddl {args.source} --out DIR --style STYLE`: {n} levels, median of "
          f"{args.repeats} runs; target under {TARGET_SECONDS:g} s\n")  # fmt: skip
    print(
        "| style | export (s) | ms/level | problem texts only (s) | fresh process (s) "
        "| MB written | target |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    for style in STYLES:
        runs = [time_export(args.source, style) for _ in range(args.repeats)]
        total = statistics.median(r[0] for r in runs)
        texts = statistics.median(r[1] for r in runs)
        size = runs[0][2] / 1e6
        command = statistics.median(time_command(args.source, style) for _ in range(args.repeats))
        verdict = "met" if max(total, command) < TARGET_SECONDS else "MISSED"
        print(
            f"| {style} | {total:.2f} | {1000 * total / n:.2f} | {texts:.2f} | {command:.2f} "
            f"| {size:.1f} | {verdict} |"
        )
    print(f"\n{machine_line()}")


if __name__ == "__main__":
    main()
