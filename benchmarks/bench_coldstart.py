"""Cold and warm wall times of a new user's first commands, as a markdown table.

Each case runs in a fresh interpreter (a subprocess). "cold" points ``NUMBA_CACHE_DIR`` at a new
empty folder, so every kernel the command needs is compiled; "warm" runs the same command again
on the folder the cold run filled, so kernels are only loaded. ``cold - warm`` is what the
compilation (and writing the cache) costs; ``warm`` is loading, imports and the work itself.
A ``PYTHONPATH`` in the environment is passed on, so the same script measures another checkout
(``PYTHONPATH=/tmp/old python benchmarks/bench_coldstart.py``).

    python benchmarks/bench_coldstart.py [--cases astar,fess,env,train] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_ENV_SNIPPET = (
    "import gymnasium as gym, soko_gym\n"
    "env = gym.make('Sokoban-Push-v0')\n"
    "obs, info = env.reset(seed=0)\n"
    "import numpy as np\n"
    "env.step(int(np.flatnonzero(info['action_mask'])[0]))\n"
)

# name -> (what it runs, argv after the interpreter; "{tmp}" is a scratch folder)
CASES: dict[str, tuple[str, list[str]]] = {
    "astar": (
        "`soko solve microban:1-10 --planner astar --quiet`",
        ["-m", "soko_gym.cli", "solve", "microban:1-10", "--planner", "astar", "--quiet"],
    ),
    "fess": (
        "`soko solve microban:1 --planner fess --quiet`",
        ["-m", "soko_gym.cli", "solve", "microban:1", "--planner", "fess", "--quiet"],
    ),
    "env": ("`gym.make('Sokoban-Push-v0')`, reset, one step", ["-c", _ENV_SNIPPET]),
    "train": (
        "`soko train --steps 256 --n-envs 4` (maskable-ppo, microban)",
        [
            "-m",
            "soko_gym.cli",
            "train",
            "--out",
            "{tmp}/train",
            "--steps",
            "256",
            "--n-envs",
            "4",
            "--ppo-n-steps",
            "64",
            "--ppo-batch-size",
            "64",
            "--eval-every",
            "0",
            "--levels",
            "microban:1-10",
            "--quiet",
            "--overwrite",
        ],
    ),
}


def _timed(argv: list[str], cache: Path, tmp: Path) -> float:
    """Wall seconds of one run of ``python argv`` with ``NUMBA_CACHE_DIR=cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    args = [sys.executable, *(a.replace("{tmp}", str(tmp)) for a in argv)]
    start = time.perf_counter()
    done = subprocess.run(
        args, env=env, cwd=tmp, capture_output=True, text=True, check=False
    )  # cwd: not the checkout, so PYTHONPATH decides which code runs
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):  # 1: some level unsolved, still a finished run
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds


def measure(name: str, repeat: int) -> tuple[float, float]:
    """Median cold and warm wall seconds of case ``name`` over ``repeat`` fresh caches."""
    argv = CASES[name][1]
    cold, warm = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="soko_cold_") as tmp:
            cache = Path(tmp) / "numba"
            cache.mkdir()
            cold.append(_timed(argv, cache, Path(tmp)))
            warm.append(_timed(argv, cache, Path(tmp)))
    return statistics.median(cold), statistics.median(warm)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen cases and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}"
    )
    parser.add_argument("--repeat", type=int, default=1, help="fresh caches per case (median)")
    args = parser.parse_args(argv)
    names = [c for c in args.cases.split(",") if c]
    unknown = [c for c in names if c not in CASES]
    if unknown:
        raise ValueError(f"--cases: unknown {unknown}; known: {', '.join(CASES)}")
    if args.repeat < 1:
        raise ValueError(f"--repeat must be at least 1, got {args.repeat}")
    print("| command | cold s | warm s | compile (cold - warm) s |")
    print("|---|---:|---:|---:|")
    for name in names:
        cold, warm = measure(name, args.repeat)
        print(f"| {CASES[name][0]} | {cold:.1f} | {warm:.1f} | {cold - warm:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
