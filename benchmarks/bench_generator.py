"""Random level generator speed: levels per second and ms per level, as a markdown table.

Each configuration is timed over many levels after a warm-up, end to end (room, reverse play,
solution, Level validation and the ``verify`` replay). Also times the generator's cold start
(empty numba cache) and warm start in fresh subprocesses.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numba
import numpy as np

from soko_gym.levels.generator import generate_level, warmup_generator

TARGET_MS = 5.0  # issue target for 10x10 with 4 boxes (gym-sokoban: 0.8 s to 2.7 s per room)
SEED = 2024


@dataclass(frozen=True)
class Config:
    """One row of the table: the ``generate_level`` arguments timed."""

    width: int
    height: int
    n_boxes: int
    room_shape: str = "random"


CONFIGS = (
    Config(7, 7, 2),
    Config(10, 10, 4),
    Config(10, 10, 4, "open"),
    Config(12, 12, 5),
    Config(16, 16, 8),
)

_START_CODE = "from soko_gym.levels.generator import warmup_generator; warmup_generator()"


def time_config(cfg: Config, n_levels: int) -> tuple[float, float, float]:
    """Seconds per level, mean solution pushes and mean push lower bound over ``n_levels``.

    Args:
        cfg: the sizes and room shape.
        n_levels: levels generated in the timed run (after 20 untimed ones).
    """
    rng = np.random.default_rng(SEED)
    kwargs = dict(width=cfg.width, height=cfg.height, n_boxes=cfg.n_boxes)
    for _ in range(20):
        generate_level(rng, room_shape=cfg.room_shape, **kwargs)
    pushes = bounds = 0
    t0 = time.perf_counter()
    for _ in range(n_levels):
        result = generate_level(rng, room_shape=cfg.room_shape, **kwargs)
        pushes += result.pushes
        bounds += result.lower_bound
    secs = (time.perf_counter() - t0) / n_levels
    return secs, pushes / n_levels, bounds / n_levels


def time_start(cache_dir: str) -> float:
    """Seconds for a fresh interpreter to import the generator and run ``warmup_generator``.

    Args:
        cache_dir: NUMBA_CACHE_DIR of the child (an empty folder times a cold compile).

    Raises:
        RuntimeError: when the child fails.
    """
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _START_CODE], env=env, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"warm-up subprocess failed:\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=500, help="timed levels per row")
    parser.add_argument("--no-cold", action="store_true", help="skip the start-up subprocesses")
    args = parser.parse_args()

    warmup_generator()
    lines = [
        f"**Machine:** {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}",
        "",
        "| Level | Room | Levels/s | ms/level | Mean pushes | Mean lower bound | Note |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for cfg in CONFIGS:
        secs, pushes, bound = time_config(cfg, args.levels)
        note = ""
        if (cfg.width, cfg.height, cfg.n_boxes, cfg.room_shape) == (10, 10, 4, "random"):
            verdict = "PASS" if secs * 1e3 < TARGET_MS else "MISS"
            note = f"target < {TARGET_MS:g} ms: **{verdict}**"
        lines.append(
            f"| {cfg.width}x{cfg.height}, {cfg.n_boxes} boxes | {cfg.room_shape} | "
            f"{1 / secs:,.0f} | {secs * 1e3:.2f} | {pushes:.1f} | {bound:.1f} | {note} |"
        )
    if not args.no_cold:
        with tempfile.TemporaryDirectory() as cache:
            cold = time_start(cache)
            warm = min(time_start(cache) for _ in range(3))
        lines.append(f"| import + warmup_generator(), cold cache | | | {cold * 1e3:,.0f} | | | |")
        lines.append(f"| import + warmup_generator(), warm cache | | | {warm * 1e3:,.0f} | | | |")
    lines.append("")
    lines.append(f"{args.levels} timed levels per row after 20 untimed ones; seed {SEED}.")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
