"""The Move env's trail plane: the player's square one action before, in every env kind."""

import gymnasium as gym
import numpy as np
import pytest

import soko_gym
from soko_gym.engine.constants import PLANE_PLAYER, PLANE_TRAIL

MICROBAN_1 = "dlUrrrdLullddrUluRuulDrddrruLdlUU"
DIRECTION = {c: i for i, c in enumerate("udlr")}


def square(plane):
    return tuple(np.argwhere(plane)[0]) if plane.any() else None


def test_trail_plane__shows_where_the_player_stood_one_action_before():
    env = gym.make("Sokoban-Move-v0", levels="microban:1", dead_plane=True, trail_plane=True)
    assert env.observation_space.shape[0] == 7
    assert env.unwrapped.plane_names[-1] == "trail"
    obs, _ = env.reset(seed=0)
    assert np.array_equal(obs[PLANE_TRAIL], obs[PLANE_PLAYER])  # at a reset: its own square
    for ch in MICROBAN_1:
        before = square(obs[PLANE_PLAYER])
        obs, _, terminated, _, _ = env.step(DIRECTION[ch.lower()])
        assert obs[PLANE_TRAIL].sum() == 1 and square(obs[PLANE_TRAIL]) == before
    assert terminated
    env.reset(seed=0)
    obs, _, _, _, info = env.step(DIRECTION["l"])
    blocked = int(np.flatnonzero(~info["action_mask"])[0])
    obs, _, _, _, info = env.step(blocked)  # into a wall or a stuck box: the player stays
    assert info["illegal_action"] and np.array_equal(obs[PLANE_TRAIL], obs[PLANE_PLAYER])


def test_trail_plane__the_vector_env_gives_the_single_envs_planes():
    kwargs = {"levels": "microban:1-4", "dead_plane": True, "trail_plane": True}
    vec = soko_gym.make_vec("Sokoban-Move-v0", num_envs=2, level_order="sequential", **kwargs)
    singles = [gym.make("Sokoban-Move-v0", level_order="sequential", **kwargs) for _ in range(2)]
    obs, info = vec.reset(options={"level_index": np.array([0, 1])})
    one = [e.reset(options={"level_index": i})[0] for i, e in enumerate(singles)]
    rng = np.random.default_rng(0)
    for _ in range(40):
        assert np.array_equal(obs, np.stack(one))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        obs, _, term, trunc, info = vec.step(actions)
        one = [e.step(int(a))[0] for e, a in zip(singles, actions, strict=True)]
        if (term | trunc).any():
            break


def test_trail_plane__without_the_dead_plane_or_in_other_envs_is_a_value_error():
    with pytest.raises(ValueError, match="trail_plane"):
        gym.make("Sokoban-Move-v0", levels="microban:1", trail_plane=True)
    with pytest.raises(ValueError, match="trail_plane"):
        gym.make("Sokoban-Push-v0", levels="microban:1", dead_plane=True, trail_plane=True)
