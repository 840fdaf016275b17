"""Kernel compilation is reported apart from the levels' seconds; ``soko warmup`` fills the cache.

Each test runs ``soko`` in a fresh interpreter on an EMPTY numba cache folder, as a new user's
first command does (only A*: a cold FESS compile takes a minute); the compiling ones start with
the session (``tests/_prelaunch.py``).
"""

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planners.warmup import WARMUP_LEVEL, announce_compile, warm_up_planner
from tests._prelaunch import prelaunch

ROOT = Path(__file__).resolve().parents[2]
ONE_PUSH = "#####\n#@$.#\n#####\n"
COMPILE_LINE = re.compile(
    r"compiling soko-gym kernels once \(cached in (?P<folder>[^)]+)\) \.*\s*"
    r"(?P<seconds>[0-9.]+) s \((?P<how>[^)]+)\)"
)


def soko(args, cache: Path, job=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    argv = [sys.executable, "-m", "soko_gym.cli", *args]
    if job is not None:  # started with the session (tests/_prelaunch.py)
        return job.run(argv, env=env, cwd=ROOT, timeout=900)
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@prelaunch
def _cold_solve(job, folder):
    level = folder / "one.xsb"
    level.write_text(ONE_PUSH)
    out = folder / "out.jsonl"
    cache = folder / "numba"
    proc = soko(["solve", str(level), "--planner", "astar", "--jsonl", str(out)], cache, job)
    records = out.read_text().splitlines() if out.exists() else []
    return proc, cache, [json.loads(line) for line in records]


@pytest.mark.prelaunch(_cold_solve)
def test_solve__cold_cache_reports_compile_time_apart_from_the_level():
    proc, cache, records = _cold_solve.outcome()
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = COMPILE_LINE.search(proc.stderr)
    assert found, proc.stderr
    assert found["folder"] == str(cache)
    assert "compiled" in found["how"]
    compile_seconds = float(found["seconds"])
    (record,) = records
    assert record["solved"] and record["pushes"] == 1
    # the level's search ran on compiled kernels: a small part of the compilation it followed
    assert record["seconds"] < compile_seconds / 10


@prelaunch
def _warmup_then_solve(job, folder):
    cache = folder / "numba"
    warm = soko(["warmup", "--planner", "astar"], cache, job)
    wrote = any(cache.rglob("*.nbi"))
    proc = soko(["solve", "microban:2", "--planner", "astar", "--quiet"], cache, job)
    return warm, wrote, proc, cache


@pytest.mark.prelaunch(_warmup_then_solve)
def test_warmup__then_solve_prints_no_compile_line():
    warm, wrote, proc, cache = _warmup_then_solve.outcome()
    assert warm.returncode == 0, warm.stderr[-3000:]
    rows = [line.split("|")[1].strip() for line in warm.stdout.splitlines() if line.startswith("|")]
    assert {"engine", "planner astar", "total"} <= set(rows)
    assert any(row.startswith("envs") for row in rows)
    assert str(cache) in warm.stderr
    assert wrote, "warmup wrote nothing to the numba cache"
    assert proc.returncode == 0, proc.stderr[-3000:]
    # nothing compiles; a busy machine may take a second to load, and may say so as loading
    assert "compiling" not in proc.stderr, proc.stderr
    assert "compiled)" not in proc.stderr, proc.stderr


def test_warmup__unknown_planner_is_a_bad_input(tmp_path):
    proc = soko(["warmup", "--planner", "nope"], tmp_path / "numba")
    assert proc.returncode == 2
    assert "nope" in proc.stderr


def test_announce_compile__quiet_when_nothing_compiles_quickly():
    warm_up_planner("astar")  # compiled or loaded already: the second call does nothing
    err = io.StringIO()
    seconds, compiled = announce_compile(lambda: warm_up_planner("astar"), out=err)
    assert compiled == 0 and seconds >= 0
    assert err.getvalue() == ""
    assert "@" in WARMUP_LEVEL


def test_announce_compile__a_slow_load_says_loading_not_compiling():
    err = io.StringIO()
    seconds, compiled = announce_compile(lambda: time.sleep(1.4), dots=False, out=err)
    assert compiled == 0 and seconds >= 1.4
    text = err.getvalue()
    assert text.startswith("loading soko-gym kernels (cached in ")
    assert "compiling" not in text and text.endswith("(loaded from the cache)\n")


def test_announce_compile__a_compile_after_a_slow_first_second_says_compiling():
    from numba import njit

    def slow_start_then_compile():
        time.sleep(1.3)  # imports and set-up on a busy machine
        njit(lambda x: x + 1)(1)  # a new function: numba compiles it

    err = io.StringIO()
    seconds, compiled = announce_compile(slow_start_then_compile, dots=False, out=err)
    assert compiled >= 1
    found = COMPILE_LINE.search(err.getvalue())
    assert found and "compiled" in found["how"], err.getvalue()
    assert "loading" not in err.getvalue()
