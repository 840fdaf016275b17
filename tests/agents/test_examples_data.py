import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("01_play.py", "solved in 8 actions"),
        ("02_solve.py", "2/2 solved and verified"),
        ("04_collect_expert_dataset.py", "3 replay to solved"),
    ],
)
def test_examples__smoke_run_succeeds(tmp_path, script, expected):
    env = {**os.environ, "MINARI_DATASETS_PATH": str(tmp_path / "minari")}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), "--smoke"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert expected in done.stdout
