import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
sb3_contrib = pytest.importorskip("sb3_contrib")

from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

import soko_gym  # noqa: E402
from soko_gym.envs.sb3 import SokobanVecEnv  # noqa: E402


@pytest.mark.parametrize("env_id", [i for i in soko_gym.ENV_IDS if "-Gen-" not in i])
def test_sb3__check_env_passes(env_id):
    import gymnasium as gym

    check_env(gym.make(env_id, levels="microban:1-5").unwrapped, warn=False)


def test_sb3__adapter_reports_terminal_observation_and_masks():
    env = SokobanVecEnv("Sokoban-Move-v0", 2, seed=0, levels="microban:1", max_episode_steps=3)
    obs = env.reset()
    assert obs.shape == (2, 5, 7, 6)
    masks = np.stack(env.env_method("action_masks"))
    assert masks.shape == (2, 4)
    for _ in range(2):
        env.step(np.array([1, 1]))
    obs, rewards, dones, infos = env.step(np.array([0, 0]))
    assert dones.all() and rewards.dtype == np.float32
    assert infos[0]["TimeLimit.truncated"] and "terminal_observation" in infos[0]
    assert not np.array_equal(infos[0]["terminal_observation"], obs[0])


def test_sb3__maskable_ppo_learns_on_the_adapter():
    env = VecMonitor(SokobanVecEnv("Sokoban-Push-v0", 4, seed=0, levels="microban:1-5"))
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, verbose=0
    )
    model.learn(256)
    obs = env.reset()
    masks = np.stack(env.env_method("action_masks"))
    actions, _ = model.predict(obs, action_masks=masks)
    assert all(masks[i, a] for i, a in enumerate(actions))  # the policy respects the masks
