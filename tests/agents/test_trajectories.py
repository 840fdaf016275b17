import sys

import numpy as np
import pytest

import soko_gym
from agents.expert import episodes as trajectories
from agents.expert.collect import collect_dataset
from agents.expert.datasets import Unsolved, load_dataset, replay_episode
from soko_gym.cli import main as soko
from soko_gym.execution import Backend
from tests.agents.conftest import DEAD_WALL

ENV_IDS = ["Sokoban-Push-v0", "Sokoban-Macro-v0", "Sokoban-Move-v0"]


def check_episodes(dataset, n):
    assert len(dataset.episodes) == n
    for ep in dataset.episodes:
        t = len(ep)
        assert ep.observations.shape[0] == ep.action_masks.shape[0] == t + 1
        assert ep.rewards.shape == ep.terminations.shape == ep.truncations.shape == (t,)
        assert ep.solved and not ep.truncations.any()
        assert all(ep.action_masks[i, a] for i, a in enumerate(ep.actions.tolist()))
        assert soko_gym.verify(ep.level, ep.solution).ok
        assert replay_episode(dataset.env_id, ep, **dataset.env_kwargs)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_collect__npz_dataset_reloads_and_replays_to_solved(tmp_path, env_id):
    result = collect_dataset(
        env_id, "microban:1-3", "astar", tmp_path / "expert", format="npz", progress=False
    )
    assert result.out == str(tmp_path / "expert.npz") and not result.unsolved
    dataset = load_dataset(result.out)
    assert dataset.env_id == env_id and dataset.env_kwargs["levels"] == "microban:1-3"
    check_episodes(dataset, 3)
    assert [ep.level_index for ep in dataset.episodes] == [0, 1, 2]


def test_collect__minari_dataset_recovers_its_env_and_replays(minari_dir):
    import minari

    result = collect_dataset(
        "Sokoban-Push-v0", "microban:1-3", "astar", "sokoban/push-expert-v0", progress=False
    )
    assert (minari_dir / "sokoban" / "push-expert-v0").is_dir()
    data = minari.load_dataset("sokoban/push-expert-v0")
    assert data.total_episodes == 3
    env = data.recover_environment()
    for k, ep in enumerate(data.iterate_episodes()):
        obs, _ = env.reset(options={"level_index": k})
        assert np.array_equal(obs, ep.observations[0])
        for action in ep.actions:
            obs, _, terminated, _, info = env.step(action)
        assert terminated and info["solved"]
        assert ep.infos["action_mask"].shape == (len(ep.actions) + 1, env.action_space.n)
    check_episodes(load_dataset(result.out, "minari"), 3)


def test_collect__never_overwrites_without_overwrite(tmp_path, minari_dir):
    path = tmp_path / "one.npz"
    collect_dataset("Sokoban-Push-v0", "microban:1", out=path, format="npz", progress=False)
    with pytest.raises(ValueError, match="overwrite"):
        collect_dataset("Sokoban-Push-v0", "microban:2", out=path, format="npz", progress=False)
    collect_dataset(
        "Sokoban-Push-v0", "microban:2", out=path, format="npz", overwrite=True, progress=False
    )
    assert load_dataset(path).episodes[0].level == soko_gym.load_levels("microban:2")[0]
    collect_dataset("Sokoban-Move-v0", "microban:1", out="soko/one-v0", progress=False)
    with pytest.raises(ValueError, match="overwrite"):
        collect_dataset("Sokoban-Move-v0", "microban:1", out="soko/one-v0", progress=False)


def test_collect__unsolved_levels_are_listed_not_dropped(tmp_path, capsys):
    source = tmp_path / "mixed.xsb"
    source.write_text(soko_gym.load_levels("microban:1")[0].to_xsb() + "\n" + DEAD_WALL)
    code = soko(
        [
            "collect",
            "--levels",
            str(source),
            "--out",
            str(tmp_path / "mixed"),
            "--format",
            "npz",
            "--time-limit",
            "2",
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "1/2 levels collected" in out and "unsolved (1)" in out and "level 2" in out
    dataset = load_dataset(tmp_path / "mixed.npz")
    assert len(dataset.episodes) == 1
    assert [u.level_index for u in dataset.unsolved] == [1]


def test_collect__generated_levels_in_parallel_jobs(tmp_path):
    result = collect_dataset(
        "Sokoban-Macro-v0",
        "generated",
        out=tmp_path / "gen.npz",
        format="npz",
        limit=3,
        jobs=2,
        generator_kwargs={"width": 7, "height": 7, "n_boxes": 2},
        progress=False,
    )
    dataset = load_dataset(result.out)
    assert dataset.env_kwargs["levels"] == "generated"
    assert dataset.env_kwargs["generator_kwargs"]["n_boxes"] == 2
    check_episodes(dataset, 3)
    assert all(ep.level.n_boxes == 2 and ep.level.width == 7 for ep in dataset.episodes)


def test_collect__ctrl_c_keeps_a_valid_partial_dataset(tmp_path, monkeypatch):
    real = trajectories.rollout_level

    def interrupted_at_third(task):
        if task.index == 2:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(trajectories, "rollout_level", interrupted_at_third)
    result = collect_dataset(
        "Sokoban-Push-v0", "microban:1-4", out=tmp_path / "part.npz", format="npz", progress=False
    )
    assert result.interrupted and result.n_levels == 4 and result.n_episodes == 2
    check_episodes(load_dataset(tmp_path / "part.npz"), 2)
    assert result.shards == str(tmp_path / "part.npz.shards")  # kept for --resume


def test_collect__cli_writes_a_minari_dataset(minari_dir, capsys):
    code = soko(
        [
            "collect",
            "--env",
            "Sokoban-Move-v0",
            "--levels",
            "microban:1-2",
            "--out",
            "soko/cli-v0",
            "--limit",
            "1",
            "--quiet",
        ]
    )
    assert code == 0 and "1/1 levels collected" in capsys.readouterr().out
    assert len(load_dataset("soko/cli-v0").episodes) == 1


def test_collect__missing_minari_names_the_data_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "minari", None)  # import minari -> ImportError
    with pytest.raises(ImportError, match=r'pip install "soko-gym\[data\]"'):
        collect_dataset("Sokoban-Push-v0", "microban:1", out="soko/x-v0", progress=False)
    # npz needs no extra
    collect_dataset("Sokoban-Push-v0", "microban:1", out=tmp_path / "x", format="npz")


def test_collect__bad_arguments_raise_value_error_naming_them(tmp_path):
    with pytest.raises(ValueError, match="env_id"):
        collect_dataset("CartPole-v1", "microban:1")
    with pytest.raises(ValueError, match="format"):
        collect_dataset("Sokoban-Push-v0", "microban:1", format="csv")
    with pytest.raises(ValueError, match="planner"):
        collect_dataset("Sokoban-Push-v0", "microban:1", "nope")
    with pytest.raises(ValueError, match="jobs"):
        collect_dataset("Sokoban-Push-v0", "microban:1", jobs=0)
    with pytest.raises(ValueError, match="jobs or backend"):
        collect_dataset("Sokoban-Push-v0", "microban:1", jobs=2, backend=Backend(jobs=2))
    with pytest.raises(ValueError, match="seed"):
        collect_dataset("Sokoban-Push-v0", "generated", limit=1, seed=-1)
    with pytest.raises(ValueError, match="resume"):
        collect_dataset("Sokoban-Push-v0", "microban:1", resume=True)
    with pytest.raises(ValueError, match="limit"):
        collect_dataset("Sokoban-Push-v0", "generated")
    with pytest.raises(ValueError, match="time_limit"):
        collect_dataset("Sokoban-Push-v0", "microban:1", time_limit=-1)


def test_collect__episode_cut_by_the_step_limit_is_listed_as_unsolved(tmp_path):
    result = collect_dataset(
        "Sokoban-Move-v0",
        "microban:1-2",
        out=tmp_path / "cut.npz",
        format="npz",
        env_kwargs={"max_episode_steps": 20},  # level 1 takes 33 moves, level 2 takes 16
        progress=False,
    )
    assert [ep.level_index for ep in result.episodes] == [1]  # read back from the npz
    assert result.n_episodes == 1
    assert result.unsolved == [Unsolved(0, "1", "truncated after 20 steps")]


def test_collect__without_out_counts_and_keeps_no_episode():
    result = collect_dataset("Sokoban-Push-v0", "microban:1-2", progress=False)
    assert (result.n_levels, result.n_episodes, result.out) == (2, 2, None)
    assert result.n_steps > 0
    with pytest.raises(ValueError, match="nothing was written"):
        _ = result.episodes
