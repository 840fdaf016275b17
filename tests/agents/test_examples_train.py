import csv
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("matplotlib")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name, out):
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def eval_rows(out):
    with (out / "eval.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def test_example_03__smoke_trains_and_writes_the_run(tmp_path):
    out = tmp_path / "ppo"
    stdout = run_example("03_train_maskable_ppo.py", out)
    assert "held-out: solved" in stdout
    assert [r["timesteps"] for r in eval_rows(out)] == ["128", "256"]
    for name in ("model.zip", "model.json", "learning_curve.png", "progress.csv"):
        assert (out / name).is_file(), name


def test_example_05__smoke_clones_then_fine_tunes(tmp_path):
    out = tmp_path / "bc"
    stdout = run_example("05_bc_then_ppo.py", out)
    assert "expert dataset: 12 episodes" in stdout
    phases = [r["phase"] for r in eval_rows(out)]
    assert phases[0] == "bc" and phases[-1] == "rl"
    for name in ("expert.npz", "bc.csv", "bc_model.zip", "model.zip", "learning_curve.png"):
        assert (out / name).is_file(), name


def test_example_07__smoke_records_an_agent_with_record_video(tmp_path):
    pytest.importorskip("moviepy", reason="RecordVideo needs the `video` extra")
    out = tmp_path / "videos"
    stdout = run_example("07_record_video.py", out)
    videos = sorted(out.glob("agent-episode-*.mp4"))
    assert [v.name for v in videos] == ["agent-episode-0.mp4", "agent-episode-1.mp4"]
    assert all(v.stat().st_size > 1000 for v in videos) and stdout.count("wrote ") == 2
