"""``soko train --resume``: a run continues from its latest checkpoint, its seconds summed."""

from __future__ import annotations

import csv
import json
from dataclasses import replace

import pytest

pytest.importorskip("sb3_contrib")

from agents.training.config import (  # noqa: E402
    DaggerConfig,
    EnvConfig,
    NetworkConfig,
    PPOConfig,
    TrainConfig,
    check_config,
)
from agents.training.train import train  # noqa: E402
from soko_gym.cli import main as soko_main  # noqa: E402

GEN = "generated:6x6:1"


def _ppo(tmp_path, steps: int) -> TrainConfig:
    return TrainConfig(
        algo="maskable-ppo",
        out=str(tmp_path / "run"),
        steps=steps,
        seed=3,
        n_envs=4,
        eval_every=128,
        eval_episodes=4,
        checkpoint_every=128,
        torch_threads=1,
        quiet=True,
        env=EnvConfig(levels=GEN, max_episode_steps=12),
        network=NetworkConfig(channels=8, n_layers=2, features_dim=32),
        ppo=PPOConfig(n_steps=32, batch_size=64, n_epochs=2),
    )


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_resume__a_ppo_run_continues_from_its_checkpoints_step(tmp_path):
    first = train(_ppo(tmp_path, 256))
    out = tmp_path / "run"
    assert first.timesteps == 256 and (out / "checkpoints" / "model_256_steps.zip").exists()
    spent = json.loads((out / "checkpoints" / "model_256_steps.json").read_text())["seconds"]
    second = train(replace(_ppo(tmp_path, 512), resume=True))
    assert second.timesteps == 512  # 256 more steps, not 512 from 0
    assert (out / "checkpoints" / "model_384_steps.zip").exists()
    assert (out / "checkpoints" / "model_512_steps.zip").exists()
    assert second.seconds > spent  # the run's time sums its sessions
    steps = [int(r["timesteps"]) for r in _rows(out / "eval.csv")]
    assert steps[: steps.index(256) + 1] == sorted(steps[: steps.index(256) + 1])
    assert max(steps) == 512 and 384 in steps  # the first session's rows kept, then the new
    assert (out / "progress.csv").exists() and (out / "progress_from_256.csv").exists()
    meta = json.loads((out / "model.json").read_text())
    assert meta["timesteps"] == 512 and meta["seconds"] >= spent


def test_resume__refuses_other_settings_and_a_folder_without_a_run(tmp_path):
    with pytest.raises(ValueError, match="no run to resume"):
        train(replace(_ppo(tmp_path, 256), resume=True))
    train(_ppo(tmp_path, 128))
    changed = replace(_ppo(tmp_path, 256), seed=4, resume=True)
    with pytest.raises(ValueError, match=r"other settings \(seed\)"):
        train(changed)
    with pytest.raises(ValueError, match="excludes overwrite"):
        check_config(replace(_ppo(tmp_path, 256), resume=True, overwrite=True))
    with pytest.raises(ValueError, match="resume .* is for maskable-ppo"):
        check_config(replace(_ppo(tmp_path, 256), algo="rllib-ppo", resume=True))


def test_resume__a_dagger_run_continues_after_its_last_iteration(tmp_path):
    config = TrainConfig(
        algo="dagger",
        out=str(tmp_path / "dagger"),
        steps=40,
        seed=0,
        n_envs=4,
        eval_every=0,
        eval_episodes=4,
        checkpoint_every=1,
        quiet=True,
        env=EnvConfig(levels=GEN, max_episode_steps=12),
        network=NetworkConfig(channels=8, n_layers=2),
        dagger=DaggerConfig(iterations=2, labels=20),
    )
    train(config)
    out = tmp_path / "dagger"
    assert [r["iteration"] for r in _rows(out / "dagger.csv")] == ["0", "1"]
    train(replace(config, dagger=replace(config.dagger, iterations=3), resume=True))
    rows = _rows(out / "dagger.csv")
    assert [r["iteration"] for r in rows] == ["0", "1", "2"]
    assert int(rows[2]["dataset"]) > int(rows[1]["dataset"])  # the earlier samples kept
    assert (out / "checkpoints" / "model_dagger_2.zip").exists()
    # a run that started from another model (--init-model) resumes without it
    started = replace(config, out=str(tmp_path / "started"), init_model=str(out / "model.zip"))
    train(started)
    more = replace(started, init_model=None, dagger=replace(config.dagger, iterations=3))
    train(replace(more, resume=True))
    assert [r["iteration"] for r in _rows(tmp_path / "started" / "dagger.csv")] == ["0", "1", "2"]


def test_soko_train__resume_flag(tmp_path, capsys):
    flags = ["train", "--algo", "maskable-ppo", "--levels", GEN, "--steps", "128"]
    flags += ["--n-envs", "4", "--ppo-n-steps", "32", "--ppo-batch-size", "64"]
    flags += ["--eval-every", "0", "--eval-episodes", "4", "--checkpoint-every", "64"]
    flags += ["--channels", "8", "--layers", "2", "--quiet", "--out", str(tmp_path / "cli")]
    assert soko_main(flags) == 0
    flags[flags.index("--steps") + 1] = "192"
    assert soko_main([*flags, "--resume"]) == 0
    assert (tmp_path / "cli" / "checkpoints" / "model_192_steps.zip").exists()
