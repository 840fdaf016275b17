"""THE play loop (``agents.playing.loop.play``), and each of its callers' recorders."""

import importlib.util
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import soko_gym
from agents.benchmark.episodes import play_episode
from agents.expert import PlannerPolicy
from agents.playing.evaluation import EvalRecorder, evaluate
from agents.playing.loop import End, Recorder, Step, play
from agents.playing.models import LoadedAgent
from planners import solve
from soko_gym.levels import Level, load_levels, verify

ROOT = Path(__file__).resolve().parents[2]
LEVELS = "microban:1-3"
STUCK = Level.from_xsb("######\n#$ @.#\n######")  # the box is in a corner: no legal push


def _script(name):
    """A script of ``benchmarks/`` as a module (the folder on sys.path, as when it runs)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


class FirstLegal:
    """A maskable stand-in model: the first legal action of each observation."""

    def predict(
        self, observation, state=None, episode_start=None, deterministic=True, action_masks=None
    ):
        masks = np.atleast_2d(np.asarray(action_masks, dtype=bool))
        return np.argmax(masks, axis=1).astype(np.int64), state


class Calls(Recorder):
    def __init__(self):
        self.steps: list[Step] = []
        self.ends: list[End] = []

    def step(self, step):
        self.steps.append(step)

    def end(self, end):
        self.ends.append(end)


def _astar():
    return PlannerPolicy("astar", action_space="push")


def _pushes(level):
    return verify(level, solve(level, planner="astar").lurd).pushes


def test_play__one_recorded_episode_per_level_in_batches_of_num_envs():
    levels = load_levels(LEVELS)
    venv = soko_gym.make_vec("Sokoban-Push-v0", 2, levels=levels)
    calls = Calls()
    play(_astar(), venv, range(3), calls)
    venv.close()
    assert sorted(end.level for end in calls.ends) == [0, 1, 2]
    for end in calls.ends:
        assert not end.stuck and end.info["solved"][end.slot]
        # its length is the steps its slot was recorded in, in its batch
        assert end.length == _pushes(levels[end.level])
    # the second batch plays level 2 in slot 0; slot 1 plays on unrecorded
    assert all(not s.active[1] for s in calls.steps if s.levels[0] == 2)
    assert sum(int(s.active.sum()) for s in calls.steps) == sum(e.length for e in calls.ends)


def test_play__a_single_env_is_a_batch_of_one():
    level = load_levels("microban:2")[0]
    env = gym.make("Sokoban-Push-v0", levels=[level])
    calls = Calls()
    play(_astar(), env, [0], calls, seed=3)
    (end,) = calls.ends
    assert end.level == 0 and end.slot == 0 and end.length == _pushes(level)
    assert [s.actions.shape for s in calls.steps] == [(1,)] * end.length
    assert bool(end.info["solved"][0]) and int(end.info["pushes"][0]) == end.length


def test_play__masked_gives_the_masks_whatever_predict_declares():
    seen = []

    class Wrapped:  # a wrapper whose predict does not name action_masks
        def predict(self, observation, **kwargs):
            seen.append(kwargs.get("action_masks"))
            return FirstLegal().predict(observation, **kwargs)

    env = gym.make("Sokoban-Push-v0", levels="microban:1", max_episode_steps=3)
    play(Wrapped(), env, [0], Calls(), masked=True)
    assert seen and all(m is not None and m.shape[0] == 1 for m in seen)
    seen.clear()
    play(Wrapped(), env, [0], Calls())  # masked=None: its predict does not take masks
    assert seen and all(m is None for m in seen)


def test_play__end_stuck_ends_a_masked_episode_without_a_legal_action():
    env = gym.make("Sokoban-Push-v0", levels=[STUCK])
    calls = Calls()
    play(FirstLegal(), env, [0], calls, end_stuck=True)
    assert calls.steps == [] and [(e.stuck, e.length, e.info) for e in calls.ends] == [
        (True, 0, {})
    ]


def test_evaluation_recorder__solved_pushes_returns_and_lengths_per_level():
    levels = load_levels(LEVELS)
    venv = soko_gym.make_vec("Sokoban-Push-v0", 2, levels=levels)
    recorder = EvalRecorder(3)
    play(_astar(), venv, range(3), recorder)
    pushes = [_pushes(level) for level in levels]
    assert recorder.solved.all() and list(recorder.pushes) == pushes
    assert list(recorder.lengths) == pushes  # one push per action
    assert (recorder.rewards > 0).all()  # solved: the final reward outweighs the step costs
    result = evaluate(_astar(), venv, 3)
    assert result.solve_rate == 1.0 and result.mean_pushes == np.mean(pushes)
    assert result.mean_reward == pytest.approx(recorder.rewards.mean())
    venv.close()


def test_bench_recorder__a_verified_solution_or_the_way_the_episode_ended():
    levels = load_levels(LEVELS)
    env = gym.make("Sokoban-Push-v0", levels=levels, level_order="sequential")
    agent = LoadedAgent(_astar(), "Sokoban-Push-v0", {})
    row = play_episode(agent, env, levels[1], 1, True, seed=7)
    check = verify(levels[1], row["lurd"])
    assert row["status"] == "solved" and row["solved"] and check.ok
    assert (row["pushes"], row["moves"], row["env_steps"]) == (
        check.pushes,
        check.moves,
        _pushes(levels[1]),
    )
    stuck_env = gym.make("Sokoban-Push-v0", levels=[STUCK])
    masked = LoadedAgent(FirstLegal(), "Sokoban-Push-v0", {}, masked=True)
    stuck = play_episode(masked, stuck_env, STUCK, 0, True, seed=0)
    assert (stuck["status"], stuck["env_steps"], stuck["solved"]) == ("stuck", 0, False)


def test_protocol_recorder__a_row_per_level_with_actions_pushes_and_moves():
    protocol = _script("boxoban_protocol")
    levels = load_levels(LEVELS)
    agent = LoadedAgent(_astar(), "Sokoban-Push-v0", {})
    rows = protocol.play(agent, levels, budget=200)
    for number, (row, level) in enumerate(zip(rows, levels, strict=True), 1):
        check = verify(level, solve(level, planner="astar").lurd)
        assert row == {
            "level": number,
            "solved": 1,
            "actions": check.pushes,
            "pushes": check.pushes,
            "moves": row["moves"],
        }
        assert row["moves"] >= check.pushes


def test_failures_recorder__every_position_of_the_episode_and_its_deadlocks():
    failures = _script("agent_failures")
    level = load_levels("microban:1")[0]
    agent = LoadedAgent(_astar(), "Sokoban-Push-v0", {})
    solved, positions, simple = failures.play(agent, level, budget=200)
    assert solved and positions[0] == level and len(positions) == _pushes(level) + 1
    assert all(box in positions[-1].goals for box in positions[-1].boxes)
    assert simple == [False] * len(positions)
    first_legal = LoadedAgent(FirstLegal(), "Sokoban-Push-v0", {})
    _, positions, simple = failures.play(first_legal, level, budget=5)
    assert len(positions) == len(simple) >= 2 and positions[0] == level
