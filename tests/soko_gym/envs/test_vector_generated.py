import gymnasium as gym
import numpy as np
import pytest

import soko_gym
from soko_gym.levels import Level


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
@pytest.mark.parametrize("env_id", ["Sokoban-Push-v0", "Sokoban-Move-v0"])
def test_vector_env__generated_levels_match_the_single_env_after_autoreset(env_id, mode):
    # regression: a generated level refills the same table slot, so the vector env kept the
    # reachability stamps (walls) of the previous level and gave wrong masks after a reset
    n = 6
    venv = soko_gym.make_vec(
        env_id,
        n,
        levels="generated",
        generator_kwargs={"width": 7, "height": 7, "n_boxes": 2},
        obs_size=(7, 7),
        max_episode_steps=4,
        render_mode="ansi",
        autoreset_mode=mode,
    )
    obs, _ = venv.reset(seed=5)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(40):
        masks = venv.action_masks()
        texts = venv.render()
        for i in np.flatnonzero(venv._state.steps == 0).tolist():  # fresh episodes
            env = gym.make(env_id, levels=[Level.from_xsb(texts[i])], obs_size=(7, 7))
            single_obs, info = env.reset(seed=0)
            assert np.array_equal(single_obs, obs[i])
            assert np.array_equal(info["action_mask"], masks[i])
            checked += 1
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        obs, _, _, _, _ = venv.step(actions)
    assert checked > 2 * n  # several autoresets per env were compared
