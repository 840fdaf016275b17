"""`soko collect` at scale: levels/s and the driver's peak memory over a growing level count.

``run`` collects ``n_levels`` levels of a source (``generated:7x7:2`` ...) through a backend
(local processes or Ray) into one dataset with ``collect_dataset`` (shards, then the streaming
merge) and reports levels/s, episodes and steps, the dataset's size and the driver's memory:
the peak resident set of this process (``ru_maxrss``: the driver alone, the workers are other
processes) and the peak of the Python heap (``tracemalloc``, which also slows the driver a
little). If the driver held the episodes, both would grow with the level count; with shards they
stay flat.

With several ``--levels`` counts each runs in a fresh interpreter (``ru_maxrss`` is a
per-process peak) and the script prints one markdown table row per count:

    python benchmarks/scale_collect.py --levels 500 2000 --ray --jobs 2
    python benchmarks/scale_collect.py --levels 20000 --ray auto --format minari --out soko/g-v0
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from agents.expert.collect import collect_dataset
from soko_gym.execution import Backend, add_backend_options
from soko_gym.provenance import machine_line


def _rss_mib() -> float:
    """Current resident set of this process, MiB (Linux /proc)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _size_mib(out: str, format: str) -> float:
    """Size of the written dataset on disk, MiB."""
    if format == "npz":
        return os.path.getsize(out) / 2**20
    from minari.storage.datasets_root_dir import get_dataset_path

    root = Path(get_dataset_path(out))
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 2**20


def run(
    n_levels: int,
    source: str,
    backend: Backend,
    out: Path | str,
    *,
    format: str = "npz",
    env_id: str = "Sokoban-Push-v0",
    planner: str = "astar",
    seed: int = 0,
) -> dict[str, Any]:
    """Collect ``n_levels`` of ``source`` through ``backend`` into ``out``; the measurements.

    Args:
        n_levels: levels to collect (``limit``).
        source: a level source, e.g. "generated:7x7:2".
        backend: where the levels run.
        out: the npz path, or the Minari dataset id with ``format="minari"`` (replaced).
        format: "npz" or "minari".
        env_id: the env the episodes are played in.
        planner: the planner that solves the levels.
        seed: the seed of generated levels.

    Returns:
        levels, levels_per_s, episodes, steps, unsolved, seconds, dataset_mib, rss_before_mib,
        peak_rss_mib (ru_maxrss) and peak_heap_mib (tracemalloc).
    """
    rss_before = _rss_mib()
    tracemalloc.start()
    start = time.perf_counter()
    result = collect_dataset(
        env_id,
        source,
        planner,
        out,
        format=format,
        overwrite=True,
        limit=n_levels,
        seed=seed,
        backend=backend,
        progress=False,
    )
    seconds = time.perf_counter() - start
    _, heap_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    if result.out is None:
        raise RuntimeError(f"nothing was written: {result.unsolved[:3]}")
    return {
        "levels": n_levels,
        "levels_per_s": n_levels / seconds,
        "episodes": result.n_episodes,
        "steps": result.n_steps,
        "unsolved": len(result.unsolved),
        "seconds": seconds,
        "dataset_mib": _size_mib(result.out, format),
        "rss_before_mib": rss_before,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "peak_heap_mib": heap_peak / 2**20,
    }


def _row(m: dict[str, Any]) -> str:
    return (
        f"| {m['levels']} | {m['levels_per_s']:.1f} | {m['episodes']} | {m['steps']} | "
        f"{m['dataset_mib']:.1f} | {m['rss_before_mib']:.0f} | {m['peak_rss_mib']:.0f} | "
        f"{m['peak_heap_mib']:.1f} |"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark for each ``--levels`` count; print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[500, 2000], metavar="N")
    parser.add_argument("--source", default="generated:7x7:2", help="level source")
    parser.add_argument("--env", default="Sokoban-Push-v0")
    parser.add_argument("--planner", default="astar")
    parser.add_argument("--format", choices=("npz", "minari"), default="npz")
    parser.add_argument("--out", default=None, help="npz path or Minari id (default: temp npz)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON line (one count)")
    add_backend_options(parser, "levels")
    args = parser.parse_args(argv)
    backend = Backend.from_args(args)
    if any(n < 1 for n in args.levels):
        raise ValueError(f"--levels must be at least 1, got {args.levels}")
    if args.format == "minari" and args.out is None:
        raise ValueError("--format minari needs --out (a dataset id)")
    if args.json or len(args.levels) == 1:
        if len(args.levels) != 1:
            raise ValueError("--json measures one --levels count")
        with tempfile.TemporaryDirectory() as tmp:
            out = args.out or str(Path(tmp) / "scale.npz")
            m = run(
                args.levels[0],
                args.source,
                backend,
                out,
                format=args.format,
                env_id=args.env,
                planner=args.planner,
                seed=args.seed,
            )
        print(json.dumps(m) if args.json else _table([m], args, backend))
        return 0
    rows = []
    for n in args.levels:  # a fresh interpreter each: ru_maxrss is a per-process peak
        child = [a for a in (argv if argv is not None else sys.argv[1:])]
        child = _without_levels(child) + ["--levels", str(n), "--json"]
        done = subprocess.run(
            [sys.executable, __file__, *child], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-3000:])
            return done.returncode
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(_table(rows, args, backend))
    return 0


def _without_levels(argv: list[str]) -> list[str]:
    """``argv`` without ``--levels`` and its counts."""
    out, skipping = [], False
    for arg in argv:
        if arg == "--levels":
            skipping = True
            continue
        if skipping and arg.isdigit():
            continue
        skipping = False
        out.append(arg)
    return out


def _table(rows: list[dict[str, Any]], args: argparse.Namespace, backend: Backend) -> str:
    lines = [
        f"`soko collect` {args.source} ({args.env}, {args.planner}, {args.format}) on "
        f"{backend.describe()}; {machine_line()}",
        "",
        "| levels | levels/s | episodes | steps | dataset MiB | driver RSS before MiB | "
        "driver peak RSS MiB | driver peak heap MiB |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    return "\n".join(lines + [_row(m) for m in rows])


if __name__ == "__main__":
    sys.exit(main())
