import gymnasium as gym
import numpy as np
import pytest

import planners
import soko_gym
from planners import SearchLimits
from planners.policy_search import PushSpace
from soko_gym.cli import main

LEVELS = ["microban:1", "microban:3", "microban:5", "microban:6", "microban:7"]
UNSOLVABLE = [
    "#########\n#..$@$  #\n#########",  # the right box can never be pushed left
    "#######\n#.$@$.#\n### ###\n  #.$#\n  ####",  # the lower box is stuck
    "#######\n#@ $$.#\n#.    #\n#######",  # the left box can never get down to its goal
]


def uniform(observations, masks):
    return masks.astype(np.float64)


class Recorder:
    """A uniform policy that keeps every observation and mask it is shown."""

    def __init__(self):
        self.observations = []
        self.masks = []

    def __call__(self, observations, masks):
        self.observations.extend(o.copy() for o in observations)
        self.masks.extend(m.copy() for m in masks)
        return uniform(observations, masks)


def level_of(source):
    if source.startswith("microban:"):
        return soko_gym.load_levels(source)[0]
    return soko_gym.Level.from_xsb(source)


def astar_actions(level, space):
    """Push env actions of A*'s solution, keyed by the box squares they are played from."""
    lurd = planners.solve(level, "astar").lurd
    boxes, player = set(space.start[0]), space.start[1]
    offsets = [int(o) for o in space.board.offsets]
    plan = {}
    for ch in lurd:
        d = "udlr".index(ch.lower())
        nxt = player + offsets[d]
        if ch.isupper():
            plan[tuple(sorted(boxes))] = nxt * 4 + d
            boxes.remove(nxt)
            boxes.add(nxt + offsets[d])
        player = nxt
    return plan


def cheating_policy(level):
    """90% of the mass on A*'s next push when the boxes are on its path, the rest uniform."""
    space = PushSpace(level)
    plan = astar_actions(level, space)

    def policy(observations, masks):
        probs = masks.astype(np.float64)
        for i, obs in enumerate(observations):
            boxes = tuple(np.flatnonzero(obs[3].ravel()).tolist())
            action = plan.get(boxes)
            legal = int(masks[i].sum())
            if action is not None and masks[i, action] and legal > 1:
                probs[i] = masks[i] * (0.1 / (legal - 1))
                probs[i, action] = 0.9
        return probs

    return policy


def solve(level, name, policy, limits=None, **options):
    result = planners.solve(level, name, limits or SearchLimits(max_seconds=20), policy=policy)
    if result.solved:
        assert soko_gym.verify(level, result.lurd).ok
    return result


@pytest.mark.parametrize("name", ["lts", "phs"])
@pytest.mark.parametrize("source", LEVELS)
def test_policy_search__uniform_policy_solutions_verify(name, source):
    level = level_of(source)
    result = solve(level, name, uniform)
    assert result.status == "solved" and result.planner == name
    assert soko_gym.verify(level, result.lurd).ok and result.nodes > 0


@pytest.mark.parametrize("name", ["lts", "phs"])
def test_policy_search__a_good_policy_expands_far_fewer_nodes(name):
    uniform_nodes = cheat_nodes = 0
    for source in LEVELS:
        level = level_of(source)
        plain = solve(level, name, uniform)
        cheat = solve(level, name, cheating_policy(level))
        assert plain.solved and cheat.solved
        assert cheat.nodes <= plain.nodes
        uniform_nodes += plain.nodes
        cheat_nodes += cheat.nodes
    assert cheat_nodes * 10 <= uniform_nodes


@pytest.mark.parametrize("name", ["lts", "phs"])
def test_policy_search__takes_any_callable(name):
    level = level_of("microban:3")

    class Policy:
        def __call__(self, observations, masks):
            return masks / np.maximum(masks.sum(axis=1, keepdims=True), 1)

    assert solve(level, name, lambda o, m: m.astype(np.float32)).solved
    assert solve(level, name, Policy()).solved
    assert solve(level, name, lambda o, m: m.tolist()).solved  # nested lists too


@pytest.mark.parametrize("name", ["lts", "phs"])
@pytest.mark.parametrize("policy", [None, 3, "uniform"])
def test_policy_search__missing_or_bad_policy_is_a_value_error(name, policy):
    with pytest.raises(ValueError, match="policy"):
        planners.solve(level_of("microban:1"), name, policy=policy)
    with pytest.raises(ValueError, match="policy"):
        planners.get_planner(name, policy=policy)


def test_policy_search__missing_policy_on_the_command_line(capsys):
    assert main(["solve", "microban:1", "--planner", "lts"]) != 0
    assert "policy" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["lts", "phs"])
def test_policy_search__bad_policy_output_is_a_value_error(name):
    level = level_of("microban:1")
    with pytest.raises(ValueError, match="policy returned shape"):
        planners.solve(level, name, policy=lambda o, m: np.ones(3))
    with pytest.raises(ValueError, match="no probability"):
        planners.solve(level, name, policy=lambda o, m: np.zeros(m.shape))
    with pytest.raises(ValueError, match="policy returned something"):
        planners.solve(level, name, policy=lambda o, m: "uniform")
    with pytest.raises(ValueError, match="negative or non-finite"):
        planners.solve(level, name, policy=lambda o, m: -m.astype(float))


@pytest.mark.parametrize("name", ["lts", "phs"])
@pytest.mark.parametrize("source", UNSOLVABLE)
def test_policy_search__exhausted_space_is_unsolvable(name, source):
    result = solve(level_of(source), name, uniform)
    assert result.status == "unsolvable" and not result.lurd


@pytest.mark.parametrize("name", ["lts", "phs"])
def test_policy_search__stops_at_max_nodes(name):
    level = level_of("microban:6")
    result = solve(level, name, uniform, SearchLimits(max_nodes=5))
    assert result.status == "node_limit" and result.nodes == 5


@pytest.mark.parametrize("name", ["lts", "phs"])
def test_policy_search__batches_several_nodes_per_call(name):
    level = level_of("microban:6")
    calls = []

    def policy(observations, masks):
        calls.append(len(observations))
        return uniform(observations, masks)

    result = planners.solve(level, name, policy=policy, batch_size=8)
    assert result.solved and soko_gym.verify(level, result.lurd).ok
    assert max(calls) == 8 and result.stats["policy_calls"] == len(calls) < result.nodes


@pytest.mark.parametrize(
    "options", [{}, {"obs_size": 12}, {"obs_size": (11, 13), "dead_plane": True}]
)
def test_policy_search__policy_sees_the_push_envs_observations_and_masks(options):
    level = level_of("microban:2")
    env = gym.make("Sokoban-Push-v0", levels=[level], **options)
    obs, info = env.reset(seed=0)
    recorder = Recorder()
    result = planners.solve(level, "lts", policy=recorder, **options)
    assert result.solved
    # the first expanded node is the start: exactly the env's reset observation and mask
    assert np.array_equal(recorder.observations[0], obs)
    assert np.array_equal(recorder.masks[0], info["action_mask"])
    space = PushSpace(level, options.get("obs_size"), options.get("dead_plane", False))
    for action in np.flatnonzero(info["action_mask"]).tolist():
        env.reset(seed=0)
        after, _, _, _, step_info = env.step(action)
        child = space.push(space.start, action)
        assert np.array_equal(space.observation(child), after)
        assert np.array_equal(space.action_mask(child), step_info["action_mask"])
    env.close()


def test_policy_search__obs_size_too_small_is_a_value_error():
    with pytest.raises(ValueError, match="obs_size"):
        planners.solve(level_of("microban:1"), "lts", policy=uniform, obs_size=4)
    with pytest.raises(ValueError, match="obs_size"):
        planners.get_planner("lts", policy=uniform, obs_size=(5, "x"))
