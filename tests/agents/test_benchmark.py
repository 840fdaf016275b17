import csv

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("matplotlib")

from agents.benchmark import episodes as bench_episodes  # noqa: E402
from agents.benchmark import planners as bench_planners  # noqa: E402
from agents.benchmark import run as benchmark  # noqa: E402
from agents.benchmark.config import CSV_COLUMNS, BenchConfig  # noqa: E402
from agents.playing.models import LoadedAgent, load_agent  # noqa: E402
from soko_gym.cli import main  # noqa: E402
from soko_gym.levels import load_levels, verify  # noqa: E402

LEVELS = "microban:1-3"


class ScriptedMover:
    """A stand-in model for the move env: plays a known LURD from each level's start."""

    def __init__(self, plans):
        self.plans = plans  # start observation bytes -> LURD
        self.todo = []

    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        key = np.asarray(observation).tobytes()
        if key in self.plans:
            self.todo = list(self.plans[key])
        letter = self.todo.pop(0).lower() if self.todo else "u"
        return np.int64("udlr".index(letter)), None

    def set_random_seed(self, seed):
        pass


def _scripted_agent(levels, size):
    import gymnasium as gym

    from planners import solve

    plans = {}
    env = gym.make("Sokoban-Move-v0", levels=levels, obs_size=size)
    for i, level in enumerate(levels):
        obs, _ = env.reset(options={"level_index": i})
        plans[obs.tobytes()] = solve(level, planner="astar").lurd
    return LoadedAgent(ScriptedMover(plans), "Sokoban-Move-v0", {"obs_size": size})


def _rows(out):
    with (out / "results.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


def test_bench__writes_csv_rows_and_png(tiny_agent, tmp_path, capsys):
    out = tmp_path / "bench"
    argv = ["bench", "--levels", LEVELS, "--planners", "astar,bfs", "--agents", str(tiny_agent)]
    assert main([*argv, "--time-limit", "5", "--max-steps", "20", "--out", str(out)]) == 0
    columns, rows = _rows(out)
    assert tuple(columns) == CSV_COLUMNS
    assert len(rows) == 3 * 3
    planners = [r for r in rows if r["kind"] == "planner"]
    assert sorted((r["solver"], r["level"]) for r in planners) == sorted(
        (p, str(n)) for p in ("astar", "bfs") for n in (1, 2, 3)
    )
    assert all(r["solved"] == "True" and int(r["pushes"]) > 0 for r in planners)
    agent_rows = [r for r in rows if r["kind"] == "agent"]
    assert [r["level"] for r in agent_rows] == ["1", "2", "3"]
    for r in agent_rows:
        assert r["solver"] == str(tiny_agent) and r["env_id"] == "Sokoban-Push-v0"
        assert 1 <= int(r["env_steps"]) <= 20
        assert (r["pushes"] != "") == (r["solved"] == "True")
    assert (out / "solve_rate.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = capsys.readouterr().out
    assert "| astar | planner | 3 | 3 | 100.0% |" in summary
    assert str(tiny_agent) in summary


def test_bench__unknown_planner_lists_the_available_ones(tmp_path, capsys):
    assert main(["bench", "--levels", LEVELS, "--planners", "astar,nope", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert "nope" in err and "available:" in err and "astar" in err
    assert not (tmp_path / "results.csv").exists()


def test_bench__existing_results_are_kept_without_overwrite(tmp_path, capsys):
    (tmp_path / "results.csv").write_text("keep me\n")
    argv = ["bench", "--levels", "microban:2", "--planners", "astar", "--out", str(tmp_path)]
    assert main([*argv, "--no-plot"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert (tmp_path / "results.csv").read_text() == "keep me\n"
    assert main([*argv, "--no-plot", "--overwrite"]) == 0
    assert len(_rows(tmp_path)[1]) == 1


def test_bench__ctrl_c_keeps_the_rows_written(tmp_path, monkeypatch):
    real = bench_planners._run_planner
    calls = []

    def interrupted_second_time(*args):
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(bench_planners, "_run_planner", interrupted_second_time)
    argv = ["bench", "--levels", LEVELS, "--planners", "astar", "--out", str(tmp_path)]
    assert main([*argv, "--quiet"]) == 130
    _, rows = _rows(tmp_path)
    assert [(r["solver"], r["level"]) for r in rows] == [("astar", "1")]


def test_run_benchmark__scripted_agent_solutions_are_verified(tmp_path, monkeypatch):
    levels = load_levels(LEVELS)
    agent = _scripted_agent(levels[:2], (8, 8))  # level 3 is 9 wide: does not fit
    monkeypatch.setattr(benchmark, "load_agent", lambda path, env_id=None: agent)
    model = tmp_path / "scripted.zip"
    model.write_bytes(b"")
    config = BenchConfig(LEVELS, agents=(str(model),), out=tmp_path, plot=False, quiet=True)
    rows = benchmark.run_benchmark(config)
    assert [r["status"] for r in rows] == ["solved", "solved", "does_not_fit"]
    for row, level in zip(rows[:2], levels, strict=False):
        astar = verify(level, _solution(level))
        assert (row["pushes"], row["moves"]) == (astar.pushes, astar.moves)
        assert row["env_steps"] == astar.moves  # one move per action in the move env


def _solution(level):
    from planners import solve

    return solve(level, planner="astar").lurd


def test_load_agent__env_that_does_not_fit_the_model_is_an_error(tiny_agent, tmp_path, capsys):
    with pytest.raises(ValueError, match="fit Sokoban-Push-v0, not the env Sokoban-Move-v0"):
        load_agent(tiny_agent, "Sokoban-Move-v0")
    argv = ["bench", "--levels", "microban:2", "--agents", str(tiny_agent), "--no-plot"]
    assert main([*argv, "--agent-env", "Sokoban-Move-v0", "--out", str(tmp_path)]) == 2
    assert "not the env Sokoban-Move-v0" in capsys.readouterr().err
    assert not (tmp_path / "results.csv").exists()


def test_format_summary__reads_rows_back_from_the_csv(tmp_path):
    from agents.benchmark.report import format_summary, plot_solve_rate

    def row(solver, kind, level, solved, pushes, status="solved", steps=""):
        return {
            "solver": solver,
            "kind": kind,
            "env_id": "",
            "level": level,
            "status": status,
            "solved": str(solved),
            "pushes": pushes,
            "moves": pushes and pushes * 3,
            "seconds": "0.5",
            "env_steps": steps,
        }

    rows = [
        row("astar", "planner", "1", True, 4),
        row("astar", "planner", "2", True, 6),
        row("m.zip", "agent", "1", True, 5, steps="5"),
        row("m.zip", "agent", "2", False, "", "step_limit", "9"),
        row("m.zip", "agent", "3", False, "", "does_not_fit", "0"),
    ]
    table = format_summary(rows).splitlines()
    assert "common 1" in table[0]
    assert table[2] == "| astar | planner | 2 | 2 | 100.0% | 5.0 | 15.0 | 4.0 | 12.0 | 0.500 | - |"
    assert table[3] == "| m.zip | agent | 3 | 1 | 33.3% | 5.0 | 15.0 | 5.0 | 15.0 | 0.500 | 7.0 |"
    assert plot_solve_rate(rows, tmp_path / "p.png", 1.0, 10).stat().st_size > 0


def test_bench__json_summary_for_scripts(tmp_path, capsys):
    import json

    out = tmp_path / "bench"
    args = ["bench", "--levels", "microban:1-3", "--planners", "astar", "--out", str(out)]
    assert main([*args, "--no-plot", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    (astar,) = summary["solvers"]
    assert astar["solver"] == "astar" and astar["runs"] == 3 and astar["solved"] == 3
    assert astar["rate"] == 1.0 and astar["pushes"] == 8.0 and astar["steps_per_run"] is None


def test_bench__record_keeps_replays_side_by_side(tmp_path):
    out = tmp_path / "bench"
    args = ["bench", "--levels", "microban:1-3", "--planners", "astar,bfs", "--out", str(out)]
    assert main([*args, "--record", "2", "--quiet"]) == 0
    replays = sorted(p.name for p in (out / "replays").iterdir())
    assert replays == ["level-1.html", "level-2.html"]
    one = (out / "replays" / "level-1.html").read_text()
    assert "astar (planner)" in one and "bfs (planner)" in one
    index = (out / "index.html").read_text()
    assert 'src="replays/level-1.html"' in index and "solve_rate.png" in index
    assert "| astar | planner | 3 | 3 |" in index
    header = (out / "results.csv").read_text().splitlines()[0]
    assert header.split(",") == list(CSV_COLUMNS)  # the solutions are not CSV columns


def test_bench__symmetric_agents_play_through_the_averaged_policy(tmp_path, monkeypatch):
    """``--symmetric`` plays the shipped Push agent averaged over the board's symmetries."""
    from agents.playing.symmetry import SymmetryAveraged

    calls = []
    real = SymmetryAveraged.predict

    def counted(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SymmetryAveraged, "predict", counted)
    out = tmp_path / "bench"
    argv = ["bench", "--levels", "microban:1-4", "--agents", "pretrained:boxoban-push"]
    assert main([*argv, "--symmetric", "--max-steps", "60", "--out", str(out), "--quiet"]) == 0
    _, rows = _rows(out)
    assert [r["level"] for r in rows] == ["1", "2", "3", "4"]
    assert any(r["solved"] == "True" and int(r["pushes"]) > 0 for r in rows)
    assert len(calls) >= sum(int(r["env_steps"]) for r in rows)


def bench_two_levels(tmp_path, agent, *flags):
    """``soko bench`` of a shipped agent on Microban 1-2 with ``flags``; its CSV rows."""
    out = tmp_path / "bench"
    argv = ["bench", "--levels", "microban:1-2", "--agents", f"pretrained:{agent}", *flags]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    _, rows = _rows(out)
    assert [r["level"] for r in rows] == ["1", "2"]
    return rows


def test_bench__on_repeat_agents_keep_their_memory_through_the_episode(tmp_path, monkeypatch):
    """``--on-repeat`` plays every agent through ``RepeatAware``; ``play_episode`` passes its
    memory back each step and starts each episode with an empty one."""
    from agents.playing.repeat import RepeatAware

    calls = []
    real = RepeatAware.predict

    def watched(self, observation, state=None, episode_start=None, **kwargs):
        calls.append((state is None, bool(np.asarray(episode_start).reshape(-1)[0])))
        return real(self, observation, state=state, episode_start=episode_start, **kwargs)

    monkeypatch.setattr(RepeatAware, "predict", watched)
    bench_two_levels(tmp_path, "boxoban-move", "--on-repeat", "untried", "--max-steps", "15")
    episodes = [c for c in calls[1:] if c[1]]  # calls[0]: the untimed warm-up
    assert len(episodes) == 2  # one start per episode
    assert all(fresh for fresh, start in calls[1:] if start)
    assert not any(fresh for fresh, start in calls[1:] if not start)  # memory passed back
    with pytest.raises(ValueError, match="on-repeat"):
        benchmark.run_benchmark(
            BenchConfig(levels="microban:1", agents=("pretrained:boxoban-move",), on_repeat="x")
        )


def test_bench__deadlock_search_plays_agents_with_the_envs_search_mask(tmp_path, monkeypatch):
    """``--deadlock-search N`` gives every agent's env ``deadlock_search=N``; bad N is refused."""
    made = []
    real = bench_episodes._make_agent_env

    def kept(agent, levels, max_steps):
        env = real(agent, levels, max_steps)
        made.append(env)
        return env

    monkeypatch.setattr(bench_episodes, "_make_agent_env", kept)
    bench_two_levels(tmp_path, "boxoban-push", "--deadlock-search", "256", "--max-steps", "30")
    assert [env.unwrapped.deadlock_search for env in made] == [256]
    with pytest.raises(ValueError, match="deadlock-search"):
        agent = ("pretrained:boxoban-push",)
        benchmark.run_benchmark(BenchConfig(levels="microban:1", agents=agent, deadlock_search=-1))
