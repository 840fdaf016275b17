import gymnasium as gym
import numpy as np
import pytest

import planners
import soko_gym
from planners import SearchLimits

pytest.importorskip("sb3_contrib")

from agents.playing.models import load_model  # noqa: E402
from agents.playing.policy_search import model_policy, push_frame, solve_with_model  # noqa: E402


def test_model_policy__probabilities_over_the_legal_actions_only(tiny_agent):
    model, _ = load_model(tiny_agent)
    frame = push_frame(model)
    env = gym.make("Sokoban-Push-v0", levels="microban:1-3", **frame)
    obs, info = env.reset(seed=0)
    empty = np.zeros_like(info["action_mask"])
    probs = model_policy(model)(np.stack([obs, obs]), np.stack([info["action_mask"], empty]))
    assert probs.shape == (2, env.action_space.n)
    assert np.all(probs[0][~info["action_mask"]] == 0)
    assert probs[0].sum() == pytest.approx(1.0, abs=1e-5)
    assert np.all(probs[1] == 0)  # a position with no legal push
    env.close()


@pytest.mark.parametrize("name", ["lts", "phs"])
def test_solve_with_model__a_tiny_maskable_ppo_guides_the_search(tiny_agent, name):
    model, _ = load_model(tiny_agent)
    level = soko_gym.load_levels("microban:2")[0]
    result = solve_with_model(level, model, name, SearchLimits(max_seconds=20))
    assert result.solved and result.planner == name
    assert soko_gym.verify(level, result.lurd).ok
    assert result.stats["obs_size"] == list(push_frame(model)["obs_size"])


def test_solve_with_model__loads_a_saved_model_and_batches(tiny_agent):
    level = soko_gym.load_levels("microban:1")[0]
    result = solve_with_model(level, str(tiny_agent), "lts", batch_size=4)
    assert result.solved and soko_gym.verify(level, result.lurd).ok


def test_model_policy__is_a_plain_callable_for_planners(tiny_agent):
    model, _ = load_model(tiny_agent)
    level = soko_gym.load_levels("microban:3")[0]
    result = planners.solve(level, "lts", policy=model_policy(model), **push_frame(model))
    assert result.solved and soko_gym.verify(level, result.lurd).ok


def test_solve_with_model__rejects_other_planners_and_models(tiny_agent):
    model, _ = load_model(tiny_agent)
    with pytest.raises(ValueError, match="planner"):
        solve_with_model(soko_gym.load_levels("microban:1")[0], model, "astar")
    with pytest.raises(ValueError, match="model"):
        model_policy(object())


def test_bench__lts_and_phs_guided_by_a_saved_model(tiny_agent, tmp_path, capsys):
    import csv

    from soko_gym.cli import main

    out = tmp_path / "bench"
    argv = ["bench", "--levels", "microban:4-6", "--planners", "lts,phs", "--out", str(out)]
    assert main([*argv, "--policy", str(tiny_agent), "--no-plot", "--quiet"]) == 0
    with (out / "results.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    got = {(r["solver"], r["level"]): r for r in rows}
    assert set(got) == {(p, n) for p in ("lts", "phs") for n in ("4", "5", "6")}
    for name in ("lts", "phs"):
        assert [got[name, n]["status"] for n in "45"] == ["solved", "solved"]
        assert all(int(got[name, n]["nodes"]) > 0 for n in "45")
        assert got[name, "6"]["status"] == "does_not_fit"  # 12 wide: larger than the frame
    assert "lts" in capsys.readouterr().out


def test_bench__policy_planners_need_a_policy(tiny_agent, tmp_path, capsys):
    from soko_gym.cli import main

    argv = ["bench", "--levels", "microban:4", "--out", str(tmp_path), "--no-plot"]
    assert main([*argv, "--planners", "lts"]) == 2
    assert "--policy" in capsys.readouterr().err
    assert main([*argv, "--planners", "astar", "--policy", str(tiny_agent)]) == 2
    assert "--policy" in capsys.readouterr().err
