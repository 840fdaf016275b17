"""Scale-out benchmark (issue 13): the Ray backend against local processes, on this machine.

Sections (run one or several; each prints a markdown table with the machine it ran on):

- ``throughput``: ``soko solve``'s work on ``boxoban-unfiltered-test`` with A* and on
  ``boxoban-hard`` with FESS, through ``--jobs 2`` and a local Ray of 2 CPUs, alternating, in
  this one run. Solving throughput is levels over the time from the first task to the last
  result (worker start and numba cache loading included, Ray's own start-up reported apart);
  the whole ``soko solve`` command is also timed for A*. Target: Ray at least 0.8x ``--jobs 2``.
- ``nodes``: a head node and a worker node (1 CPU each) started with ``ray start`` on this
  machine; ``soko solve --ray ADDRESS`` with FESS on boxoban-hard; the worker node is killed
  (SIGKILL to its process group) when a quarter of the levels are written. Counts every level
  index in the JSONL (target: each exactly once) and the levels each node solved.
- ``collect``: ``soko collect`` of generated levels through a local Ray into one dataset,
  the driver's peak memory (``benchmarks/scale_collect.py``).
- ``rllib``: RLlib PPO with action masks on generated 7x7 two-box levels for a wall-clock
  budget, then the held-out solve rate (``benchmarks/scale_rllib.py``).

Usage: ``python benchmarks/scale.py throughput nodes`` (``--help`` for the sizes).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from functools import partial
from pathlib import Path

from planners import SearchLimits
from planners.cli import solve_text
from soko_gym.execution import Backend, connect_ray, import_ray, run
from soko_gym.levels import load_levels
from soko_gym.provenance import machine_line


def _timed_run(task: partial, items: list[tuple[int, str]], backend: Backend) -> dict:
    """Solve every item through ``backend``; seconds, levels/s, solved and worker counts."""
    start = time.perf_counter()
    solved = 0
    where: Counter[str] = Counter()
    for outcome in run(task, items, backend, total=len(items)):
        if not outcome.ok:
            raise RuntimeError(f"level {outcome.key + 1}: {outcome.error}")
        solved += outcome.value["solved"]
        where[outcome.where] += 1
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "rate": len(items) / seconds, "solved": solved, "where": where}


def _measure(planner: str, source: str, limit: float, rounds: int) -> list[dict]:
    """``rounds`` alternating runs of ``--jobs 2`` and a local Ray of 2 CPUs."""
    ray = import_ray()
    levels = load_levels(source)
    items = [(i, lv.to_xsb(with_title=False)) for i, lv in enumerate(levels)]
    task = partial(solve_text, planner, SearchLimits(max_seconds=limit), None, 1)
    rows = []
    for r in range(rounds):
        row = {"planner": planner, "source": source, "round": r + 1, "levels": len(items)}
        row["jobs"] = _timed_run(task, items, Backend(jobs=2))
        t = time.perf_counter()
        connect_ray(Backend(ray="local", jobs=2))
        row["ray_start"] = time.perf_counter() - t
        try:
            row["ray"] = _timed_run(task, items, Backend(ray="local", jobs=2))
        finally:
            ray.shutdown()
        rows.append(row)
        print(
            f"{planner} {source} round {r + 1}: jobs {row['jobs']['rate']:.1f} levels/s, "
            f"ray {row['ray']['rate']:.1f} levels/s (ray start {row['ray_start']:.1f} s)",
            file=sys.stderr,
        )
    return rows


def _command_seconds(args: list[str]) -> float:
    """Wall seconds of one ``soko`` command (output to a scratch JSONL)."""
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        subprocess.run(
            ["soko", *args, "--jsonl", str(Path(tmp) / "out.jsonl"), "--quiet"],
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - t


def throughput(args: argparse.Namespace) -> None:
    """The ``throughput`` section (module docstring)."""
    rows = _measure("astar", args.astar_source, 10.0, args.rounds)
    rows += _measure("fess", args.fess_source, 10.0, 1)
    astar = ["solve", args.astar_source, "--planner", "astar"]
    commands = []
    for _ in range(args.rounds):
        commands.append(
            (_command_seconds([*astar, "--jobs", "2"]), _command_seconds([*astar, "--ray"]))
        )
    print(machine_line() + "\n")
    print("| planner | levels | round | --jobs 2 levels/s | --ray levels/s | ratio | solved |")
    print("|---|---|---:|---:|---:|---:|---|")
    for row in rows:
        ratio = row["ray"]["rate"] / row["jobs"]["rate"]
        print(
            f"| {row['planner']} | {row['source']} ({row['levels']}) | {row['round']} | "
            f"{row['jobs']['rate']:,.1f} ({row['jobs']['seconds']:.1f} s) | "
            f"{row['ray']['rate']:,.1f} ({row['ray']['seconds']:.1f} s) | {ratio:.2f} | "
            f"{row['jobs']['solved']} / {row['ray']['solved']} |"
        )
    starts = ", ".join(f"{r['ray_start']:.1f}" for r in rows)
    print(f"\nLocal Ray start-up (ray.init, 2 CPUs), not in the rates above: {starts} s")
    print(f"\nWhole `soko solve {args.astar_source} --planner astar` commands (wall s):")
    for jobs_s, ray_s in commands:
        print(f"- --jobs 2: {jobs_s:.1f} s, --ray: {ray_s:.1f} s (ratio {jobs_s / ray_s:.2f})")


def _ray_env() -> dict[str, str]:
    # a cluster started by `ray start` uses token authentication when this is set on every
    # node and client (the token file is ~/.ray/auth_token, shared here by the one machine)
    return {**os.environ, "RAY_AUTH_MODE": "token"}


def nodes(args: argparse.Namespace) -> None:
    """The ``nodes`` section (module docstring)."""
    env = _ray_env()
    port = str(args.port)
    address = f"127.0.0.1:{port}"
    head = ["ray", "start", "--head", "--port", port, "--num-cpus", "1"]
    head += ["--include-dashboard=false", "--disable-usage-stats"]
    subprocess.run(head, check=True, env=env, capture_output=True)
    worker = subprocess.Popen(  # its own process group: killing it kills the whole node
        ["ray", "start", "--address", address, "--num-cpus", "1", "--block"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for_nodes(address, 2, env)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "nodes.jsonl"
            source = f"{args.fess_source}:1-{args.levels}"
            cmd = ["soko", "solve", source, "--planner", "fess", "--time-limit", "10"]
            cmd += ["--ray", address, "--jsonl", str(out), "--quiet"]
            t = time.perf_counter()
            solve = subprocess.Popen(
                cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            killed_at = None
            while solve.poll() is None:
                lines = out.read_text().count("\n") if out.exists() else 0
                if killed_at is None and lines >= args.levels // 4:
                    os.killpg(worker.pid, signal.SIGKILL)
                    killed_at = (lines, time.perf_counter() - t)
                time.sleep(0.2)
            stdout, stderr = solve.communicate()
            wall = time.perf_counter() - t
            if solve.returncode not in (0, 1):
                raise RuntimeError(f"soko solve failed ({solve.returncode}): {stderr[-2000:]}")
            records = [json.loads(line) for line in out.read_text().splitlines()]
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        subprocess.run(["ray", "stop", "--force"], env=env, capture_output=True)
    counts = Counter(r["index"] for r in records)
    missing = [i for i in range(args.levels) if counts[i] == 0]
    twice = [i for i, c in counts.items() if c > 1]
    per_node = next((ln for ln in stdout.splitlines() if ln.startswith("levels per node")), "")
    statuses = Counter(r["status"] for r in records)
    print(machine_line() + "\n")
    print("| measure | value |\n|---|---|")
    print(f"| levels | {args.levels} ({source}, fess, 10 s) |")
    print(f"| worker node killed | after {killed_at[0]} lines, {killed_at[1]:.1f} s |")
    print(f"| JSONL lines | {len(records)} |")
    print(f"| indexes missing / written twice | {len(missing)} / {len(twice)} |")
    print(f"| statuses | {', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))} |")
    print(f"| {per_node.split(':')[0]} | {per_node.partition(': ')[2]} |")
    print(f"| wall | {wall:.1f} s |")


def _wait_for_nodes(address: str, count: int, env: dict[str, str]) -> None:
    code = (
        "import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR');"
        "print(sum(n['Alive'] for n in ray.nodes()))"
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        out = subprocess.run(
            [sys.executable, "-c", code, address], env=env, capture_output=True, text=True
        )
        if out.stdout.strip() == str(count):
            return
        time.sleep(1.0)
    raise RuntimeError(f"the cluster at {address} did not reach {count} nodes")


def collect(args: argparse.Namespace) -> None:
    """The ``collect`` section: ``benchmarks/scale_collect.py``."""
    import scale_collect

    with tempfile.TemporaryDirectory() as tmp:
        figures = scale_collect.run(
            args.collect_levels,
            args.collect_source,
            Backend(ray="local", jobs=2),
            Path(tmp) / "collect.npz",
        )
    print(machine_line() + "\n")
    print("| measure | value |\n|---|---|")
    for key, value in figures.items():
        print(f"| {key} | {value} |")


def rllib(args: argparse.Namespace) -> None:
    """The ``rllib`` section: ``benchmarks/scale_rllib.py``."""
    import scale_rllib

    figures = scale_rllib.run(args.minutes, Path(args.rllib_out))
    print(machine_line() + "\n")
    print("| measure | value |\n|---|---|")
    for key, value in figures.items():
        print(f"| {key} | {value} |")


SECTIONS = {"throughput": throughput, "nodes": nodes, "collect": collect, "rllib": rllib}


def main() -> None:
    """Parse flags and run the sections asked for."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="+", choices=sorted(SECTIONS))
    parser.add_argument("--astar-source", default="boxoban-unfiltered-test")
    parser.add_argument("--fess-source", default="boxoban-hard")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds for A*")
    parser.add_argument("--levels", type=int, default=200, help="nodes: levels solved")
    parser.add_argument("--port", type=int, default=6391, help="nodes: the head node's port")
    parser.add_argument("--collect-levels", type=int, default=20_000)
    parser.add_argument("--collect-source", default="generated:10x10:4")
    parser.add_argument("--minutes", type=float, default=30.0, help="rllib: training budget")
    parser.add_argument("--rllib-out", default="runs/scale_rllib", help="rllib: run folder")
    args = parser.parse_args()
    for name in args.sections:
        SECTIONS[name](args)


if __name__ == "__main__":
    main()
