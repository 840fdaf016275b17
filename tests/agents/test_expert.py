import gymnasium as gym
import numpy as np
import pytest

import soko_gym  # noqa: F401  (registers the envs)
from agents.expert.policy import PlannerPolicy, read_position

ENVS = [("Sokoban-Push-v0", "push"), ("Sokoban-Macro-v0", "macro"), ("Sokoban-Move-v0", "move")]

# a box against the top wall, with no goal along it: no planner can solve it, yet pushes exist
DEAD_WALL = """\
######
# $  #
#  @ #
#   .#
######
"""


def play(env, policy, level_index, max_steps=400):
    obs, info = env.reset(options={"level_index": level_index})
    start = True
    for _ in range(max_steps):
        action, _ = policy.predict(obs, episode_start=np.array([start]))
        start = False
        obs, _, terminated, truncated, info = env.step(action)
        assert not info["illegal_action"]
        if terminated or truncated:
            break
    return info


@pytest.mark.parametrize(("env_id", "space"), ENVS)
def test_expert__solves_microban_levels_in_each_action_space(env_id, space):
    env = gym.make(env_id, levels="microban:1-3", max_episode_steps=300)
    policy = PlannerPolicy("astar", limits=10, action_space=space)
    for i in range(3):
        assert play(env, policy, i)["solved"]
    assert policy.stats.plans == 3
    assert policy.stats.failures == 0 and policy.stats.fallback_actions == 0


def test_expert__plans_once_per_level_and_reuses_the_plan():
    env = gym.make("Sokoban-Push-v0", levels="microban:1-2")
    policy = PlannerPolicy("astar", limits=10, action_space="push")
    for _ in range(2):
        assert play(env, policy, 0)["solved"]
    assert policy.stats.plans == 1 and policy.stats.cache_hits > 0


def test_expert__works_with_evaluate_policy_on_the_sb3_vector_env():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.evaluation import evaluate_policy

    from soko_gym.envs.sb3 import SokobanVecEnv

    env = SokobanVecEnv("Sokoban-Push-v0", 3, seed=0, levels="microban:1-3")
    policy = PlannerPolicy("astar", limits=10, action_space="push")
    successes = []

    def record(local_vars, _globals):
        if local_vars["done"]:
            successes.append(local_vars["info"]["is_success"])

    rewards, lengths = evaluate_policy(
        policy, env, n_eval_episodes=6, return_episode_rewards=True, warn=False, callback=record
    )
    assert len(rewards) == 6 and successes == [True] * 6
    assert min(rewards) > 10  # +10 for solving, boxes on goals, a little step penalty
    assert policy.stats.plans == 3 and policy.stats.replans == 0


def test_expert__batch_and_single_observations_give_the_same_actions():
    env = gym.make("Sokoban-Move-v0", levels="microban:1-3")
    observations = [env.reset(options={"level_index": i})[0] for i in range(3)]
    policy = PlannerPolicy("astar", limits=10, action_space="move")
    batch, state = policy.predict(np.stack(observations), state=None)
    assert batch.shape == (3,) and batch.dtype == np.int64 and state is None
    singles = [int(policy.predict(obs)[0]) for obs in observations]
    assert batch.tolist() == singles


def test_expert__replans_when_the_env_leaves_the_plan():
    env = gym.make("Sokoban-Move-v0", levels="microban:1")
    policy = PlannerPolicy("astar", limits=10, action_space="move")
    obs, _ = env.reset(options={"level_index": 0})
    planned, _ = policy.predict(obs, episode_start=np.array([True]))
    detour = next(a for a in range(4) if env.unwrapped.action_masks()[a] and a != int(planned))
    obs, *_ = env.step(detour)  # a step the plan did not make
    solved = False
    for _ in range(300):
        action, _ = policy.predict(obs, episode_start=np.array([False]))
        obs, _, terminated, _, info = env.step(action)
        if terminated:
            solved = info["solved"]
            break
    assert solved
    assert policy.stats.plans == 1 and policy.stats.replans == 1
    assert policy.stats.failures == 0


def test_expert__unsolvable_position_gets_a_legal_action_and_is_counted():
    level = soko_gym.Level.from_xsb(DEAD_WALL)
    for env_id, space in ENVS:
        env = gym.make(env_id, levels=level)
        obs, _ = env.reset()
        policy = PlannerPolicy("astar", limits=2, action_space=space)
        for _ in range(2):
            action, _ = policy.predict(obs)
            assert env.unwrapped.action_masks()[int(action)]
        assert policy.stats.failures == 1  # solved once, remembered as failed
        assert policy.stats.fallback_actions == 2


def test_expert__reads_the_position_from_the_planes_alone():
    env = gym.make("Sokoban-Push-v0", levels="microban:2", obs_size=(12, 12), dead_plane=True)
    obs, _ = env.reset()
    level = read_position(obs).to_level()
    assert level.rows == soko_gym.load_levels("microban:2")[0].rows


def test_expert__bad_arguments_raise_value_error_naming_them():
    with pytest.raises(ValueError, match="planner"):
        PlannerPolicy("no-such-planner")
    with pytest.raises(ValueError, match="action_space"):
        PlannerPolicy("astar", action_space="teleport")
    with pytest.raises(ValueError, match="limits"):
        PlannerPolicy("astar", limits=-1)
    policy = PlannerPolicy("astar")
    with pytest.raises(ValueError, match="observation"):
        policy.predict(np.zeros((16, 16, 3), dtype=np.uint8))


@pytest.mark.parametrize(("env_id", "space"), ENVS)
def test_action_space_of__every_env_id_and_its_generated_twin(env_id, space):
    from agents.expert.policy import action_space_of

    assert action_space_of(env_id) == space
    assert action_space_of(env_id.replace("-v0", "-Gen-v0")) == space


@pytest.mark.parametrize("env_id", ["Sokoban-Push-v1", "Sokoban-Pushy-v0", "CartPole-v1"])
def test_action_space_of__anything_else_is_a_value_error_naming_env_id(env_id):
    from agents.expert.policy import action_space_of

    with pytest.raises(ValueError, match="env_id"):
        action_space_of(env_id)


@pytest.mark.parametrize(("env_id", "space"), ENVS)
def test_position_key__the_experts_cache_key_and_the_labellers(env_id, space):
    from agents.training.config import DaggerConfig
    from agents.training.labels import Labeller

    env = gym.make(env_id, levels="microban:2")
    obs, _ = env.reset(seed=0)
    position = read_position(obs)
    key = position.key(space)
    assert key == PlannerPolicy("astar", action_space=space).key(position)
    assert key == Labeller(DaggerConfig(), space).key(obs)
    # a push or macro position is its player's region; a move position its player's square
    moved = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))[0]
    after = read_position(moved)
    if space == "move" or after.boxes != position.boxes:
        assert after.key(space) != key
    else:
        assert after.key(space) == key


def test_labeller__an_unknown_planner_or_action_space_is_a_value_error_naming_it():
    from agents.training.config import DaggerConfig
    from agents.training.labels import Labeller

    with pytest.raises(ValueError, match="planner"):
        Labeller(DaggerConfig(planner="nope"), "push")
    with pytest.raises(ValueError, match="action_space"):
        Labeller(DaggerConfig(), "jump")
