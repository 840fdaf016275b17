import copy
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import soko_gym

from .helpers import random_legal_action, rollout, same_trace

ENV_IDS = list(soko_gym.ENV_IDS)


def small_levels(env_id):
    """Keyword arguments that keep a test fast: a few Microban levels, or generated ones."""
    return {} if "-Gen-" in env_id else {"levels": "microban:1-20"}


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_registry__env_passes_gymnasium_check_env(env_id):
    env = gym.make(env_id, render_mode="rgb_array", **small_levels(env_id))
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=UserWarning)  # check_env complaints fail
        check_env(env.unwrapped)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_registry__same_seed_gives_same_levels_and_trajectories(env_id):
    a = rollout(gym.make(env_id, max_episode_steps=15), seed=7, n_steps=60, illegal_every=5)
    b = rollout(gym.make(env_id, max_episode_steps=15), seed=7, n_steps=60, illegal_every=5)
    c = rollout(gym.make(env_id, max_episode_steps=15), seed=8, n_steps=60, illegal_every=5)
    assert same_trace(a, b)
    assert not same_trace(a, c)
    levels = {step[4]["level_index"] for step in a}
    assert len(levels) > 1  # the rollout crossed episodes and drew several levels


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_registry__pickle_and_deepcopy_continue_identically(env_id):
    env = gym.make(env_id, **small_levels(env_id))
    rng = np.random.default_rng(0)
    env.reset(seed=3)
    for _ in range(3):
        env.step(random_legal_action(env, rng))
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    actions = [random_legal_action(env, rng) for _ in range(5)]
    expected = [env.step(a) for a in actions]
    for clone in clones:
        got = [clone.step(a) for a in actions]
        for (o1, r1, te1, tr1, i1), (o2, r2, te2, tr2, i2) in zip(expected, got, strict=True):
            assert np.array_equal(o1, o2) and (r1, te1, tr1) == (r2, te2, tr2)
            assert i1["last_lurd"] == i2["last_lurd"]


def test_registry__ids_resolve_with_the_module_prefix():
    env = gym.make("soko_gym:Sokoban-Push-v0")
    assert env.spec.max_episode_steps == 200
    assert gym.make("Sokoban-Move-v0").spec.max_episode_steps == 120
    assert isinstance(
        gym.make("Sokoban-Macro-v0").unwrapped, soko_gym.envs.macro_env.SokobanMacroEnv
    )
