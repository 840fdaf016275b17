"""RLlib PPO with masks (``agents.rllib.ppo``, ``soko train --algo rllib-ppo``) on a local Ray."""

import json

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("sb3_contrib")

import ray  # noqa: E402

from agents.benchmark import BenchConfig, run_benchmark  # noqa: E402
from agents.playing.models import load_agent  # noqa: E402
from agents.rllib import env as rllib_env  # noqa: E402
from agents.rllib import ppo as rllib  # noqa: E402
from agents.training.cli import config_from_args  # noqa: E402
from agents.training.config import (  # noqa: E402
    EnvConfig,
    NetworkConfig,
    PPOConfig,
    RLlibConfig,
    TrainConfig,
    check_config,
    env_kwargs_of,
)
from agents.training.train import train  # noqa: E402
from soko_gym.cli import build_parser  # noqa: E402

# one box, one legal push at a time: every masked policy solves it in two pushes
CORRIDOR = """\
######
#@$ .#
######
"""
GEN = "generated:6x6:1"


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray of 2 CPUs without the dashboard, for the tests of this module."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _config(tmp_path, levels, **overrides):
    config = TrainConfig(
        algo="rllib-ppo",
        out=str(tmp_path / "run") if tmp_path else "unused",
        steps=600,
        seed=2,
        n_envs=4,
        eval_every=400,
        eval_episodes=1,
        checkpoint_every=400,
        quiet=True,
        env=EnvConfig(levels=levels, eval_levels=levels, max_episode_steps=10),
        network=NetworkConfig(channels=8, n_layers=2),
        ppo=PPOConfig(n_steps=50, batch_size=50, n_epochs=2),
        rllib=RLlibConfig(env_runners=1),
    )
    for key, value in overrides.items():
        setattr(config, key, value)
    return config


def _runner_env(levels, num_envs, **env_overrides):
    config = _config(None, levels, env=EnvConfig(levels=levels, **env_overrides))
    env_config = rllib_env.runner_env_config(config, env_kwargs_of(config.env, (6, 6)))
    return rllib_env.make_runner_env({**env_config, "num_envs": num_envs})


def test_runner_env__observations_carry_the_native_envs_action_masks():
    env = _runner_env(GEN, 3)
    obs, info = env.reset(seed=5)
    assert set(obs) == {"action_mask", "observations"}
    assert env.observation_space.contains(obs)
    for _ in range(4):
        native = env.unwrapped.action_masks()
        assert obs["action_mask"].dtype == np.uint8
        np.testing.assert_array_equal(obs["action_mask"].astype(bool), native)
        assert obs["observations"].shape == (3, *env.unwrapped.single_observation_space.shape)
        actions = [int(np.flatnonzero(m)[0]) if m.any() else 0 for m in native]
        obs, _, _, _, info = env.step(np.array(actions))
    assert set(info) == {"solved", "_solved", "pushes", "_pushes"}
    env.close()


def test_runner_env__mixed_sources_split_the_envs_and_seed_apart():
    env = _runner_env(f"{GEN}+{GEN}", 5)
    mixed = env.unwrapped
    assert isinstance(mixed, rllib_env.MixedVectorEnv)
    assert [p.num_envs for p in mixed.parts] == [3, 2]
    obs, _ = env.reset(seed=1)
    # same generator, different seeds: the parts start on different levels
    assert not np.array_equal(obs["observations"][0], obs["observations"][3])
    assert obs["action_mask"].shape[0] == 5
    env.close()


def test_masked_policy__picks_only_legal_actions_even_untrained():
    env = _runner_env(GEN, 8)
    spec = rllib.module_spec(
        {"kind": "square", "features": {"channels": 4, "n_layers": 1}},
        env.single_observation_space,
        env.single_action_space,
    )
    policy = rllib.MaskedPolicy(spec.build())
    obs, _ = env.reset(seed=0)
    for deterministic in (True, False):
        masks = obs["action_mask"].astype(bool)
        actions, _ = policy.predict(obs["observations"], deterministic, action_masks=masks)
        assert actions.shape == (8,)
        assert all(m[a] for m, a in zip(masks, actions, strict=True) if m.any())
        single, _ = policy.predict(obs["observations"][0], True, action_masks=masks[0])
        assert single.shape == () and masks[0][single]
    env.close()


def test_masked_board_module__the_class_path_older_checkpoints_pickled_still_loads():
    import pickle

    import agents.rllib

    assert agents.rllib.MaskedBoardModule is rllib.MaskedBoardModule
    # checkpoints saved when the class lived in the module agents.rllib name it there
    old = pickle.dumps(rllib.MaskedBoardModule, protocol=0).replace(
        b"agents.rllib.ppo", b"agents.rllib"
    )
    assert b"agents.rllib\n" in old and pickle.loads(old) is rllib.MaskedBoardModule


def test_soko_train__rllib_flags_fill_the_rllib_section():
    args = build_parser().parse_args(
        ["train", "--algo", "rllib-ppo", "--out", "x", "--ray", "auto"]
        + ["--rllib-env-runners", "3", "--rllib-train-batch-size", "4096", "--lr", "0.001"]
    )
    config = config_from_args(args)
    assert config.algo == "rllib-ppo"
    assert config.rllib == RLlibConfig(env_runners=3, train_batch_size=4096, ray_address="auto")
    assert config.ppo.learning_rate == 0.001


def test_check_config__bad_rllib_settings_name_the_field(tmp_path):
    with pytest.raises(ValueError, match="rllib.env_runners"):
        check_config(_config(tmp_path, GEN, rllib=RLlibConfig(env_runners=-1)))
    with pytest.raises(ValueError, match="--ray"):
        check_config(_config(tmp_path, GEN, rllib=RLlibConfig(ray_address=" ")))


def test_rllib_ppo__env_runners_step_the_native_vector_env(tmp_path, local_ray):
    config = _config(tmp_path, GEN, n_envs=3)
    env_config = rllib_env.runner_env_config(config, env_kwargs_of(config.env, (6, 6)))
    model_config = {"kind": "square", "features": {"channels": 4, "n_layers": 1}}
    algo = rllib.ppo_config(config, env_config, model_config).build_algo()
    try:
        assert rllib_env.check_runner_envs(algo) == ["SokobanPushVectorEnv"]
        layers = algo.env_runner_group.foreach_env_runner(
            lambda r: (type(r.env.env).__name__, r.env.unwrapped.num_envs),
            local_env_runner=False,
        )
        assert layers == [("ActionMaskObservations", 3)]
    finally:
        algo.stop()


def test_rllib_ppo__trains_and_its_checkpoint_plays_in_soko_bench(tmp_path, local_ray):
    level = tmp_path / "corridor.xsb"
    level.write_text(CORRIDOR)
    result = train(_config(tmp_path, str(level)))
    out = result.out
    assert result.timesteps >= 600 and not result.interrupted
    assert result.final_eval is not None and result.final_eval.solve_rate == 1.0
    assert ray.is_initialized()  # a Ray the run did not start stays up
    saved = json.loads((out / "config.json").read_text())
    assert saved["algo"] == "rllib-ppo" and saved["rllib"]["env_runners"] == 1
    meta = json.loads((out / "model.json").read_text())
    assert meta["algo"] == "rllib-ppo" and meta["env_id"] == "Sokoban-Push-v0"
    assert meta["timesteps"] == result.timesteps
    sidecars = list((out / "checkpoints").glob("model_*_steps.json"))
    assert sidecars and all(p.with_suffix("").is_dir() for p in sidecars)
    evals = (out / "eval.csv").read_text().splitlines()
    assert evals[0].startswith("phase,timesteps") and len(evals) >= 3
    progress = (out / "progress.csv").read_text().splitlines()
    assert "rollout/success_rate" in progress[0] and len(progress) >= 4

    agent = load_agent(out / "model")
    assert agent.masked and agent.env_id == "Sokoban-Push-v0"
    assert agent.env_kwargs["obs_size"] == (3, 6)
    rows = run_benchmark(
        BenchConfig(
            str(level),
            agents=(str(out / "model"), str(out / "algorithm")),
            out=tmp_path / "bench",
            plot=False,
            quiet=True,
        )
    )
    assert [(r["solver"], r["kind"]) for r in rows] == [
        (str(out / "model"), "agent"),
        (str(out / "algorithm"), "agent"),
    ]
    assert all(r["solved"] and r["status"] == "solved" and r["pushes"] == 2 for r in rows)
