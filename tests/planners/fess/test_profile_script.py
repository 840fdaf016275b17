"""``benchmarks/fess_profile.py``: the time split a user reads to decide which test to tune."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def profile_row(options: str) -> dict[str, str]:
    """The table row of XSokoban 29 (2 s, one worker) under ``--options``, by column."""
    argv = [sys.executable, "benchmarks/fess_profile.py", "xsokoban", "29", "--seconds", "2"]
    out = subprocess.run(
        [*argv, "--options", options], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    head = [c.strip() for c in out[0].strip("|").split("|")]
    row = [c.strip() for c in out[2].strip("|").split("|")]
    return dict(zip(head, row, strict=True))


def test_fess_profile__a_test_has_a_share_only_when_the_run_uses_it():
    on = profile_row("{}")
    off = profile_row('{"deadlocks": ["bipartite", "retrograde", "corrals", "learned"]}')
    assert on["room"] != "0%" and off["room"] == "0%"  # a test turned off gets no share
    assert "room " in on["deadlocks found"] and "room " not in off["deadlocks found"]
    for row in (off, on):
        parts = ("moves", "order", "retrograde", "frozen", "learned", "room", "corral")
        total = sum(int(row[c].rstrip("%")) for c in (*parts, "loop"))
        assert 95 <= total <= 105  # shares of the search time, rounded


def test_fess_profile__bad_options_exit_2_naming_the_flag():
    argv = [sys.executable, "benchmarks/fess_profile.py", "xsokoban", "29", "--options"]
    for bad in ('{"deadlock_budget": 100}', '{"exhaust": 64}', "[1]", "{"):
        done = subprocess.run([*argv, bad], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 2 and "--options" in done.stderr
