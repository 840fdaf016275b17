"""`soko collect` at scale: backends, shards and their merge, resume, failed levels, Ray."""

import numpy as np
import pytest

import soko_gym
from agents.expert import episodes as trajectories
from agents.expert import shards
from agents.expert.collect import collect_dataset
from agents.expert.datasets import (
    Unsolved,
    load_dataset,
    load_minari,
    write_minari,
    write_npz,
)
from agents.expert.episodes import _Task, generated_level, rollout_level
from agents.expert.shards import ShardIndex, ShardWriter, merge_npz
from soko_gym.cli import main as soko
from soko_gym.execution import Backend
from tests.agents.conftest import DEAD_WALL

PUSH = "Sokoban-Push-v0"
LEVELS = "microban:1-5"


@pytest.fixture
def small_shards(monkeypatch):
    """Two levels per shard, so a handful of levels spans several shards."""
    monkeypatch.setattr(shards, "SHARD_LEVELS", 2)


def direct(env_id, levels):
    """Episodes and unsolved levels rolled out one by one, as the collection did before shards."""
    env_kwargs = {"obs_size": (max(lv.height for lv in levels), max(lv.width for lv in levels))}
    episodes, unsolved = [], []
    for i, level in enumerate(levels):
        item = rollout_level(_Task(env_id, env_kwargs, "astar", 10.0, i, level))
        (episodes if isinstance(item, trajectories.Episode) else unsolved).append(item)
    return episodes, unsolved


def assert_same_episodes(got, want):
    assert [e.level_index for e in got] == [e.level_index for e in want]
    for a, b in zip(got, want, strict=True):
        assert a.level == b.level and a.solution == b.solution
        for name in shards.EPISODE_ARRAYS:
            x, y = getattr(a, name), getattr(b, name)
            assert x.dtype == y.dtype and np.array_equal(x, y), name


def npz_arrays(path):
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def assert_same_npz(a, b):
    x, y = npz_arrays(a), npz_arrays(b)
    assert sorted(x) == sorted(y)
    for k in x:
        assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]), k


def mixed_source(tmp_path):
    """Microban 1-4 with an unsolvable level third: 5 levels, 4 episodes."""
    levels = soko_gym.load_levels("microban:1-4")
    text = "\n".join(lv.to_xsb() for lv in levels[:2])
    text += "\n" + DEAD_WALL + "\n" + "\n".join(lv.to_xsb() for lv in levels[2:])
    path = tmp_path / "mixed.xsb"
    path.write_text(text)
    return path


# -- backends --------------------------------------------------------------------------------


def test_collect__jobs_and_this_process_give_the_episodes_of_one_by_one_rollouts(tmp_path):
    want, _ = direct(PUSH, soko_gym.load_levels(LEVELS))
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}.npz"
        collect_dataset(PUSH, LEVELS, out=out, format="npz", jobs=jobs, progress=False)
        assert_same_episodes(load_dataset(out).episodes, want)


def test_collect__generated_levels_are_the_same_in_this_process_and_in_jobs(tmp_path):
    kwargs = {"width": 7, "height": 7, "n_boxes": 2}
    runs = []
    for jobs in (1, 2):
        out = tmp_path / f"gen{jobs}.npz"
        collect_dataset(
            "Sokoban-Macro-v0",
            "generated",
            out=out,
            format="npz",
            limit=4,
            seed=3,
            generator_kwargs=kwargs,
            jobs=jobs,
            progress=False,
        )
        runs.append(load_dataset(out).episodes)
    assert_same_episodes(runs[1], runs[0])
    # level k is a function of (seed, k) alone: the task makes it where it runs
    assert [ep.level for ep in runs[0]] == [generated_level(3, k, kwargs) for k in range(4)]


# -- shards and the merge --------------------------------------------------------------------


def test_merge_npz__shards_in_any_order_equal_a_direct_write(tmp_path, small_shards):
    levels = soko_gym.load_levels(LEVELS)
    episodes, _ = direct(PUSH, levels)
    unsolved = [Unsolved(5, "x", "timeout"), Unsolved(6, "", "error: ValueError: boom")]
    writer = ShardWriter(tmp_path)
    for item in [episodes[3], unsolved[1], episodes[0], episodes[4], unsolved[0], *episodes[1:3]]:
        writer.add(item)  # completion order, not level order
    writer.flush()
    assert len(list(tmp_path.glob("shard-*.npz"))) == 4
    meta = {"env_id": PUSH, "planner": "astar"}
    merged = merge_npz(ShardIndex.read(tmp_path), tmp_path, tmp_path / "merged.npz", meta)
    want = write_npz(episodes, unsolved, tmp_path / "direct.npz", meta)
    assert_same_npz(merged, want)
    assert not (tmp_path / "merge").exists()


def test_collect__npz_from_many_shards_equals_a_direct_write(tmp_path, small_shards):
    source = mixed_source(tmp_path)
    result = collect_dataset(
        PUSH, str(source), out=tmp_path / "c.npz", format="npz", jobs=1, progress=False
    )
    episodes, unsolved = direct(PUSH, soko_gym.load_levels(str(source)))
    assert [u.level_index for u in unsolved] == [2]
    meta = {
        "env_id": PUSH,
        "env_kwargs": {"levels": str(source), "obs_size": [7, 9]},
        "planner": "astar",
    }
    want = write_npz(episodes, unsolved, tmp_path / "direct.npz", meta)
    assert_same_npz(result.out, want)
    assert result.n_episodes == 4 and result.unsolved == unsolved
    assert not (tmp_path / "c.npz.shards").exists()  # removed after the merge


def test_collect__minari_from_many_shards_equals_a_direct_write(tmp_path, minari_dir, small_shards):
    import minari

    source = mixed_source(tmp_path)
    collect_dataset(PUSH, str(source), out="soko/merged-v0", progress=False)
    assert not (minari_dir / ".soko-shards").exists()  # removed after the merge
    assert list(minari.list_local_datasets()) == ["soko/merged-v0"]
    episodes, unsolved = direct(PUSH, soko_gym.load_levels(str(source)))
    spec_kwargs = {"levels": str(source), "obs_size": (7, 9)}
    write_minari(
        episodes, "soko/direct-v0", PUSH, spec_kwargs, planner="astar", n_levels=5, chunk=3
    )
    merged, want = load_minari("soko/merged-v0"), load_minari("soko/direct-v0")
    assert_same_episodes(merged.episodes, want.episodes)
    assert merged.env_kwargs == want.env_kwargs
    data = minari.load_dataset("soko/merged-v0")
    assert data.total_episodes == 4
    assert "4 of 5 levels; unsolved levels: 2: " in data.storage.metadata["description"]
    assert [ep.id for ep in data.iterate_episodes()] == [0, 1, 2, 3]


# -- resume ----------------------------------------------------------------------------------


def test_collect__resume_after_ctrl_c_runs_each_level_exactly_once(
    tmp_path, monkeypatch, small_shards
):
    real = rollout_level
    ran = []

    def stopped_at_fourth(task):
        if task.index == 3:
            raise KeyboardInterrupt
        if task.index == 1:
            raise ValueError("flaky")  # an error: the resume runs it again
        ran.append(task.index)
        return real(task)

    out = tmp_path / "r.npz"
    monkeypatch.setattr(trajectories, "rollout_level", stopped_at_fourth)
    first = collect_dataset(PUSH, LEVELS, out=out, format="npz", progress=False)
    assert first.interrupted and ran == [0, 2]
    assert [u.status.split(":")[0] for u in first.unsolved] == ["error"]
    assert (tmp_path / "r.npz.shards").is_dir()

    with pytest.raises(ValueError, match="--resume"):
        collect_dataset(PUSH, LEVELS, out=out, format="npz", progress=False)
    with pytest.raises(ValueError, match="time_limit"):
        collect_dataset(
            PUSH, LEVELS, out=out, format="npz", resume=True, time_limit=3.0, progress=False
        )

    def counted(task):
        ran.append(task.index)
        return real(task)

    monkeypatch.setattr(trajectories, "rollout_level", counted)
    second = collect_dataset(PUSH, LEVELS, out=out, format="npz", resume=True, progress=False)
    assert sorted(ran) == [0, 1, 2, 3, 4]  # each level run once in all (the error again)
    assert not second.interrupted and second.resumed == 2 and not second.unsolved
    dataset = load_dataset(out)
    assert [ep.level_index for ep in dataset.episodes] == [0, 1, 2, 3, 4]
    want, _ = direct(PUSH, soko_gym.load_levels(LEVELS))
    assert_same_episodes(dataset.episodes, want)
    assert not (tmp_path / "r.npz.shards").exists()
    with pytest.raises(ValueError, match="collected to the end"):
        collect_dataset(PUSH, LEVELS, out=out, format="npz", resume=True, progress=False)


def test_collect__cli_resume_flag_goes_on_from_the_shards(tmp_path, monkeypatch, capsys):
    real = rollout_level

    def stopped_at_third(task):
        if task.index == 2:
            raise KeyboardInterrupt
        return real(task)

    args = ["collect", "--levels", "microban:1-3", "--out", str(tmp_path / "c"), "--format"]
    args += ["npz", "--quiet"]
    monkeypatch.setattr(trajectories, "rollout_level", stopped_at_third)
    assert soko(args) == 130
    assert "--resume goes on" in capsys.readouterr().out
    assert soko(args) == 2 and "--resume" in capsys.readouterr().err
    monkeypatch.setattr(trajectories, "rollout_level", real)
    assert soko([*args, "--resume"]) == 0
    out = capsys.readouterr().out
    assert "3/3 levels collected" in out and "resumed: 2 levels" in out
    assert [ep.level_index for ep in load_dataset(tmp_path / "c.npz").episodes] == [0, 1, 2]


def test_collect__minari_keeps_hidden_shards_when_stopped_and_resumes(
    tmp_path, minari_dir, monkeypatch
):
    import minari

    real = rollout_level
    ran = []

    def stopped_at_third(task):
        if task.index == 2 and not ran.count(2):
            ran.append(2)
            raise KeyboardInterrupt
        ran.append(task.index)
        return real(task)

    monkeypatch.setattr(trajectories, "rollout_level", stopped_at_third)
    first = collect_dataset(PUSH, "microban:1-3", out="soko/r-v0", progress=False)
    assert first.interrupted and first.n_episodes == 2
    assert (minari_dir / ".soko-shards" / "soko" / "r-v0").is_dir()
    assert list(minari.list_local_datasets()) == ["soko/r-v0"]  # the hidden shards are not one
    assert minari.load_dataset("soko/r-v0").total_episodes == 2
    second = collect_dataset(PUSH, "microban:1-3", out="soko/r-v0", resume=True, progress=False)
    assert ran == [0, 1, 2, 2] and second.n_episodes == 3 and second.resumed == 2
    assert [ep.level_index for ep in load_minari("soko/r-v0").episodes] == [0, 1, 2]
    assert not (minari_dir / ".soko-shards").exists()
    collect_dataset(PUSH, "microban:1-3", out="soko/r-v0", overwrite=True, progress=False)
    assert ran[4:] == [0, 1, 2]  # --overwrite runs every level again


# -- failures --------------------------------------------------------------------------------


def test_collect__a_level_whose_task_raises_is_listed_as_error(tmp_path, monkeypatch, capsys):
    real = rollout_level

    def broken_second(task):
        if task.index == 1:
            raise RuntimeError("worker bug")
        return real(task)

    monkeypatch.setattr(trajectories, "rollout_level", broken_second)
    code = soko(
        ["collect", "--levels", "microban:1-3", "--out", str(tmp_path / "e.npz"), "--format"]
        + ["npz", "--quiet"]
    )
    out = capsys.readouterr().out
    assert code == 1 and "2/3 levels collected" in out
    assert "level 2 '2': error: RuntimeError: worker bug" in out
    dataset = load_dataset(tmp_path / "e.npz")
    assert [ep.level_index for ep in dataset.episodes] == [0, 2]
    assert [u.level_index for u in dataset.unsolved] == [1]
    assert dataset.unsolved[0].status.startswith("error: RuntimeError: worker bug")


# -- Ray -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


def test_collect__ray_collects_the_episodes_of_jobs(tmp_path, local_ray):
    backend = Backend(ray="auto")
    for levels, options in (
        (LEVELS, {}),
        ("generated:7x7:2", {"limit": 4, "seed": 5}),
    ):
        on_ray, with_jobs = tmp_path / "ray.npz", tmp_path / "jobs.npz"
        # no time limit: a loaded machine must not turn a solved level into a timeout
        options = {**options, "time_limit": None}
        ray_run = collect_dataset(
            PUSH, levels, out=on_ray, format="npz", backend=backend, progress=False, **options
        )
        jobs_run = collect_dataset(
            PUSH, levels, out=with_jobs, format="npz", jobs=2, progress=False, **options
        )
        assert ray_run.unsolved == jobs_run.unsolved == []
        assert_same_npz(on_ray, with_jobs)
        on_ray.unlink()
        with_jobs.unlink()


def test_collect__json_summary_for_scripts(tmp_path, capsys):
    import json

    from soko_gym.cli import main

    out = tmp_path / "data.npz"
    args = ["collect", "--levels", "microban:1-2", "--format", "npz", "--out", str(out)]
    assert main([*args, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["levels"] == 2 and summary["collected"] == 2 and summary["unsolved"] == []
    assert summary["out"] == str(out) and summary["interrupted"] is False
