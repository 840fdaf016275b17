"""Replay writing speed and size: `soko render`'s GIF, MP4 and HTML writers.

Targets (issue 16): a 100-step GIF written in under 1 s; the HTML viewer under 200 KB for a
10x10 level with a 300-move solution. "first call" is the first write of a format in this
process (its imports included); "seconds" is the median of --repeat further runs. The
solutions are verified before they are timed.

    python benchmarks/bench_render.py [--repeat 5] [--tile 16]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from soko_gym.envs.render.replay import make_replay, write_gif, write_html, write_mp4
from soko_gym.levels import Level
from soko_gym.provenance import machine_line

ROOM = """\
##########
#        #
#        #
#        #
#   @$ . #
#        #
#        #
#        #
#        #
##########
"""


def solution(steps: int) -> str:
    """A legal solution of ROOM with ``steps`` steps: walking up and down, then two pushes."""
    return "ud" * ((steps - 2) // 2) + "RR"


def measure(write, suffix: str, repeat: int) -> tuple[float, float, int]:
    """(first run's seconds, median seconds of ``repeat`` more runs, bytes) of ``write(path)``.

    The first run of a format in the process includes its imports (Pillow, imageio-ffmpeg).
    """
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"replay{suffix}"
        start = time.perf_counter()
        write(path)
        first = time.perf_counter() - start
        for _ in range(repeat):
            start = time.perf_counter()
            write(path)
            times.append(time.perf_counter() - start)
        return first, statistics.median(times), path.stat().st_size


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per row (default 5)")
    parser.add_argument("--tile", type=int, default=16, help="tile side in pixels (default 16)")
    args = parser.parse_args()
    level = Level.from_xsb(ROOM, title="room")
    rows = []
    for fmt, steps in (("gif", 100), ("gif", 300), ("mp4", 100), ("html", 300)):
        replay = make_replay(level, solution(steps))
        writers = {
            "gif": lambda p, r=replay: write_gif(r, p, tile_size=args.tile),
            "mp4": lambda p, r=replay: write_mp4(r, p, tile_size=args.tile),
            "html": lambda p, r=replay: write_html([r], p, tile_size=args.tile),
        }
        try:
            first, sec, size = measure(writers[fmt], "." + fmt, args.repeat)
        except ImportError as err:  # the writer's extra is not installed
            rows.append((fmt, steps, "-", "-", "-", str(err)))
            continue
        rows.append((fmt, steps, f"{first:.3f}", f"{sec:.3f}", f"{size:,}", ""))
    print(f"## soko render: replay writers, 10x10 level, tile {args.tile} px\n")
    print(machine_line() + "\n")
    print("| format | steps | first call s | seconds (median) | bytes | note |")
    print("|---|---:|---:|---:|---:|---|")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")


if __name__ == "__main__":
    main()
