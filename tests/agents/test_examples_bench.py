import csv
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("matplotlib")

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "06_benchmark_vs_fess.py"


def test_example_06__smoke_writes_results_and_plot(tmp_path):
    out = tmp_path / "bench"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with (out / "results.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted((r["solver"] == "astar", r["level"]) for r in rows) == [
        (False, "1"),
        (False, "2"),
        (True, "1"),
        (True, "2"),
    ]
    assert all(r["solved"] == "True" for r in rows if r["solver"] == "astar")
    assert (out / "solve_rate.png").stat().st_size > 0
    assert (out / "agent" / "tiny_agent.json").exists()
    assert "| astar | planner | 2 | 2 | 100.0% |" in done.stdout
