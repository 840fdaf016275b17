import csv
import json
import sys
from dataclasses import asdict, replace

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402

from agents.playing.evaluation import evaluate, make_eval_env  # noqa: E402
from agents.playing.models import load_model  # noqa: E402
from agents.training import train as train_mod  # noqa: E402
from agents.training.bc import BCData, accuracy, behaviour_clone, load_bc_data  # noqa: E402
from agents.training.config import (  # noqa: E402
    BCConfig,
    EnvConfig,
    NetworkConfig,
    PPOConfig,
    TrainConfig,
    env_kwargs_of,
    eval_level_list,
    frame_size,
    parse_reward,
)
from agents.training.train import plot_learning_curve, require_rl, train  # noqa: E402
from soko_gym.cli import main as soko_main  # noqa: E402
from tests.agents.conftest import collect_tiny  # noqa: E402

GEN = "generated:6x6:1"  # tiny levels: every test run stays within seconds


def tiny_config(tmp_path, name="run", **overrides):
    config = TrainConfig(
        algo="maskable-ppo",
        out=str(tmp_path / name),
        steps=256,
        seed=3,
        n_envs=4,
        eval_every=128,
        eval_episodes=6,
        checkpoint_every=128,
        torch_threads=1,
        quiet=True,
        env=EnvConfig(levels=GEN, max_episode_steps=12),
        network=NetworkConfig(channels=8, n_layers=2, features_dim=32),
        ppo=PPOConfig(n_steps=32, batch_size=64, n_epochs=2),
    )
    for key, value in overrides.items():
        setattr(config, key, value)
    return config


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_parse_reward__names_and_coefficients():
    assert parse_reward("sparse") == "sparse"
    assert parse_reward("-0.1,1,-1,10").solved == 10.0
    with pytest.raises(ValueError, match="reward_scheme"):
        parse_reward("dense")


def test_eval_level_list__held_out_generated_levels_are_seeded():
    a = eval_level_list(GEN, 5, seed=1)
    assert [lv.to_xsb() for lv in a] == [lv.to_xsb() for lv in eval_level_list(GEN, 5, seed=1)]
    assert [lv.to_xsb() for lv in a] != [lv.to_xsb() for lv in eval_level_list(GEN, 5, seed=2)]
    assert len(eval_level_list("microban:1-3", 10, seed=0)) == 3


def test_train_config__round_trips_through_its_json(tmp_path):
    config = tiny_config(tmp_path)
    again = TrainConfig.from_dict(json.loads(json.dumps(asdict(config))))
    assert again == config


def test_train__maskable_ppo_writes_checkpoints_csv_and_png(tmp_path):
    result = train(tiny_config(tmp_path))
    out = result.out
    assert result.timesteps == 256 and not result.interrupted
    for name in ("model.zip", "model.json", "best_model.zip", "config.json", "progress.csv"):
        assert (out / name).is_file(), name
    assert sorted(p.name for p in (out / "checkpoints").glob("*.zip")) == [
        "model_128_steps.zip",
        "model_256_steps.zip",
    ]
    rows = read_csv(out / "eval.csv")
    assert [int(r["timesteps"]) for r in rows] == [128, 256]
    assert all(0.0 <= float(r["solve_rate"]) <= 1.0 and r["n_levels"] == "6" for r in rows)
    assert read_csv(out / "progress.csv")
    assert (out / "learning_curve.png").stat().st_size > 1000
    assert result.final_eval.solve_rate == float(rows[-1]["solve_rate"])


def test_load_model__gives_the_model_and_its_env(tmp_path):
    from sb3_contrib import MaskablePPO

    result = train(tiny_config(tmp_path, steps=128, eval_every=0, checkpoint_every=0))
    model, meta = load_model(result.model_path, require_meta=True)
    assert isinstance(model, MaskablePPO)
    assert meta["env_id"] == "Sokoban-Push-v0" and meta["algo"] == "maskable-ppo"
    assert meta["env_kwargs"]["obs_size"] == [6, 6] and meta["timesteps"] == 128
    direct = MaskablePPO.load(result.model_path)  # also loadable without soko-gym's helper
    assert direct.soko_meta == meta  # the metadata is in the zip as well
    result.model_path.with_suffix(".json").unlink()
    assert load_model(result.model_path, require_meta=True)[1] == meta


def test_train__same_seed_same_run(tmp_path):
    runs = [
        train(tiny_config(tmp_path, name, seed=seed))
        for name, seed in [("a", 5), ("b", 5), ("c", 6)]
    ]

    def params(run):
        model, _ = load_model(run.model_path, require_meta=True)
        return torch.cat([p.detach().flatten() for p in model.policy.parameters()])

    def evals(run):
        return [
            (r["timesteps"], r["solve_rate"], r["mean_reward"])
            for r in read_csv(run.out / "eval.csv")
        ]

    assert torch.equal(params(runs[0]), params(runs[1]))
    assert evals(runs[0]) == evals(runs[1])
    assert not torch.equal(params(runs[0]), params(runs[2]))


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_train__ppo_and_dqn_run(tmp_path, algo):
    config = tiny_config(tmp_path, algo=algo, checkpoint_every=0)
    config.dqn.learning_starts = 64
    result = train(config)
    model, meta = load_model(result.model_path, require_meta=True)
    assert meta["algo"] == algo and type(model).__name__ == algo.upper()
    assert len(read_csv(result.out / "eval.csv")) == 2


def test_train__refuses_a_folder_that_holds_a_run(tmp_path):
    config = tiny_config(tmp_path, steps=64, eval_every=0, checkpoint_every=0)
    train(config)
    with pytest.raises(ValueError, match="overwrite"):
        train(config)
    config.overwrite = True
    train(config)


def test_train__bad_settings_are_named(tmp_path):
    with pytest.raises(ValueError, match="algo"):
        train(tiny_config(tmp_path, algo="a2c"))
    with pytest.raises(ValueError, match="dataset"):
        train(tiny_config(tmp_path, algo="bc"))
    with pytest.raises(ValueError, match="n_envs"):
        train(tiny_config(tmp_path, n_envs=0))
    with pytest.raises(ValueError, match="deadlock_search"):
        train(tiny_config(tmp_path, env=EnvConfig(levels=GEN, deadlock_search=-1)))


def test_env_kwargs__deadlock_search_reaches_the_env_and_the_sidecar():
    import gymnasium as gym

    from agents.training.config import env_args, env_kwargs_of

    kwargs = env_kwargs_of(EnvConfig(levels=GEN, deadlock_search=64), (7, 7))
    assert kwargs["deadlock_search"] == 64  # the saved model's sidecar holds it
    env = gym.make("Sokoban-Push-v0", levels=GEN, **env_args(kwargs))
    assert env.unwrapped.deadlock_search == 64


class FirstLegal:
    """A scripted 'model' with MaskablePPO's predict signature: the first legal action."""

    def predict(self, obs, state=None, episode_start=None, deterministic=True, action_masks=None):
        return action_masks.argmax(axis=1), None


def test_evaluate__plays_each_level_once(tmp_path):
    levels = eval_level_list(GEN, 7, seed=0)
    kwargs = {"obs_size": [6, 6], "dead_plane": True, "reward_scheme": "boxoban"}
    kwargs["deadlock_termination"] = False
    venv = make_eval_env("Sokoban-Push-v0", levels, kwargs, max_steps=5, n_envs=3)
    res = evaluate(FirstLegal(), venv, len(levels))
    assert res.n_levels == 7 and res.solved.shape == (7,)
    assert 1 <= res.mean_length <= 5
    assert evaluate(FirstLegal(), venv, len(levels)).solved.tolist() == res.solved.tolist()


def expert_data(n_levels=30, seed=0):
    """Expert samples from the generator's own solutions, replayed in the push env."""
    import gymnasium as gym

    import soko_gym  # noqa: F401
    from soko_gym.engine.constants import DIRECTION_DELTAS, PUSH_CHARS
    from soko_gym.levels.generator import generate_levels

    obs, actions, masks, episodes = [], [], [], []
    moves = {c.lower(): d for d, c in enumerate(PUSH_CHARS)}
    for k, g in enumerate(generate_levels(n_levels, seed, width=6, height=6, n_boxes=1)):
        env = gym.make("Sokoban-Push-v0", levels=[g.level], obs_size=(6, 6), dead_plane=True)
        o, info = env.reset(seed=0)
        row, col = g.level.player
        for ch in g.solution:
            d = moves[ch.lower()]
            dr, dc = DIRECTION_DELTAS[d]
            row, col = row + dr, col + dc
            if ch.isupper():  # a push: the box was on the square the player steps onto
                obs.append(o)
                masks.append(info["action_mask"])
                actions.append(env.unwrapped.square(row, col) * 4 + d)
                episodes.append(k)
                o, _, _, _, info = env.step(actions[-1])
        assert info["solved"]
    return BCData(np.array(obs), np.array(actions), np.array(masks), episodes=np.array(episodes))


def test_behaviour_clone__beats_chance_on_a_tiny_dataset(tmp_path):
    data = expert_data()
    config = tiny_config(tmp_path)
    env = train_mod.make_train_env(config, env_kwargs_of(config.env, (6, 6)))
    model = train_mod.build_model(config, env, "maskable-ppo")
    chance = float(np.mean(1.0 / data.action_masks.sum(axis=1)))
    before = accuracy(model.policy, data)
    history = behaviour_clone(
        model.policy, data, 150, BCConfig(log_every=50, val_fraction=0), seed=0
    )
    after = accuracy(model.policy, data)
    assert [row["step"] for row in history] == [50, 100, 150]
    assert history[-1]["chance"] == pytest.approx(chance)
    assert after > max(chance, before) + 0.1
    env.close()


def test_train__bc_from_a_collected_dataset_then_finetune(tmp_path):
    path = collect_tiny(tmp_path / "expert.npz")
    config = tiny_config(tmp_path, algo="bc", steps=120)
    config.bc = BCConfig(dataset=str(path), log_every=40, finetune_steps=128)
    result = train(config)
    rows = read_csv(result.out / "bc.csv")
    assert float(rows[-1]["accuracy"]) > float(rows[-1]["chance"])
    phases = [(r["phase"], r["timesteps"]) for r in read_csv(result.out / "eval.csv")]
    assert phases[0] == ("bc", "0") and phases[-1] == ("rl", "128")
    assert (result.out / "bc_model.zip").is_file()
    _, meta = load_model(result.model_path, require_meta=True)
    assert meta["algo"] == "maskable-ppo" and meta["trained_with"] == "bc"


def test_load_bc_data__pools_datasets_and_fixes_the_frame(tmp_path):
    a = collect_tiny(tmp_path / "a.npz", seed=1, limit=3)
    b = collect_tiny(tmp_path / "b.npz", seed=2, limit=4)
    one, _ = load_bc_data(str(a), "Sokoban-Push-v0")
    both, env = load_bc_data(f"{a},{b}", "Sokoban-Push-v0")
    assert env == {"obs_size": (6, 6), "dead_plane": True, "trail_plane": False}
    assert len(both.actions) > len(one.actions) and set(both.episodes.tolist()) == set(range(7))
    with pytest.raises(ValueError, match="collected in"):
        load_bc_data(str(a), "Sokoban-Move-v0")
    c = collect_tiny(tmp_path / "c.npz", seed=3, limit=2, obs_size=(7, 7))
    with pytest.raises(ValueError, match="observations"):
        load_bc_data(f"{a},{c}", "Sokoban-Push-v0")


def test_train__a_trail_plane_run_starts_from_the_model_saved_without_it(tmp_path):
    from agents.expert.collect import collect_dataset
    from agents.training.bc import policy_outputs

    def move_data(name, **env_kwargs):
        path = tmp_path / name
        collect_dataset(
            "Sokoban-Move-v0",
            "generated",
            "astar",
            path,
            format="npz",
            limit=6,
            seed=1,
            generator_kwargs={"width": 6, "height": 6, "n_boxes": 1},
            env_kwargs={"dead_plane": True, **env_kwargs},
            progress=False,
        )
        return path

    plain, trail = move_data("plain.npz"), move_data("trail.npz", trail_plane=True)
    narrow = tiny_config(tmp_path, "narrow", algo="bc", steps=20)
    narrow.env = replace(narrow.env, env_id="Sokoban-Move-v0")
    narrow.bc = BCConfig(dataset=str(plain), targets="walk", log_every=10)
    narrow_path = train(narrow).model_path
    wide = tiny_config(tmp_path, "wide", algo="bc", steps=1, init_model=str(narrow_path))
    wide.env = narrow.env
    wide.bc = BCConfig(dataset=str(trail), learning_rate=0.0, log_every=1)  # weights kept
    result = train(wide)
    old, _ = load_model(narrow_path)
    new, meta = load_model(result.model_path, require_meta=True)
    assert meta["env_kwargs"]["trail_plane"] is True
    assert new.observation_space.shape[0] == 7
    data, _ = load_bc_data(str(trail), "Sokoban-Move-v0")
    obs = torch.as_tensor(data.observations[:32])
    assert obs[:, 6].any()  # the trail is there, and the new planes' weights start at zero
    with torch.no_grad():
        got = policy_outputs(new.policy, obs)[0]
        want = policy_outputs(old.policy, obs[:, :6])[0]
    torch.testing.assert_close(got, want)
    with pytest.raises(ValueError, match="trail_plane"):
        check = tiny_config(tmp_path, "push")
        check.env = replace(check.env, trail_plane=True)
        train(check)


def test_init_model__a_wider_square_network_starts_as_the_saved_narrower_one(tmp_path):
    from agents.training.bc import policy_outputs
    from agents.training.config import env_kwargs_of
    from agents.training.env import make_train_env
    from agents.training.train import build_model, load_parameters

    def model_of(channels, policy="square"):
        config = tiny_config(tmp_path, f"w{channels}{policy}")
        config.network = NetworkConfig(policy=policy, channels=channels, n_layers=3, residual=True)
        config.network.border = "same"
        return build_model(config, make_train_env(config, env_kwargs_of(config.env, (6, 6))), "ppo")

    narrow = model_of(8)
    path = tmp_path / "narrow.zip"
    narrow.save(path)
    wide = model_of(16)
    load_parameters(wide, str(path))
    assert wide.policy.features_extractor.convs[1].weight.shape[:2] == (16, 16)
    rng = np.random.default_rng(0)
    obs = torch.as_tensor(rng.integers(0, 2, size=(16, *narrow.observation_space.shape)))
    with torch.no_grad():  # the same push logits and values: the new channels add nothing yet
        for got, want in zip(
            policy_outputs(wide.policy, obs), policy_outputs(narrow.policy, obs), strict=True
        ):
            torch.testing.assert_close(got, want)
    conv = wide.policy.features_extractor.convs[1].weight
    assert conv[8:].abs().sum() > 0  # new channels compute (fresh weights), so training can use
    assert not conv[:8, 8:].any()  # them; only their ways into the old channels start at zero
    with pytest.raises(ValueError, match="--init-model.*no fewer --channels"):
        load_parameters(model_of(4), str(path))
    model_of(8, "cnn").save(tmp_path / "cnn.zip")
    with pytest.raises(ValueError, match="only the square policies"):
        load_parameters(model_of(16, "cnn"), str(tmp_path / "cnn.zip"))


def test_soko_train__command_line(tmp_path, capsys):
    out = tmp_path / "cli"
    argv = ["train", "--levels", GEN, "--steps", "128", "--n-envs", "4", "--n-steps", "32"]
    argv += ["--batch-size", "64", "--eval-every", "0", "--eval-episodes", "4", "--out", str(out)]
    argv += ["--channels", "8", "--layers", "2", "--quiet", "--torch-threads", "1"]
    assert soko_main(argv) == 0
    assert "held-out: solved" in capsys.readouterr().out
    saved = json.loads((out / "config.json").read_text())
    assert saved["ppo"]["batch_size"] == 64 and saved["network"]["channels"] == 8


def test_train__missing_sb3_names_the_rl_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)
    with pytest.raises(ImportError, match=r"soko-gym\[rl\]"):
        require_rl()
    with pytest.raises(ImportError, match=r"soko-gym\[rl\]"):
        train(tiny_config(tmp_path))


def test_plot__missing_matplotlib_names_the_plot_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"soko-gym\[plot\]"):
        plot_learning_curve(tmp_path)


def test_train__stops_when_the_time_budget_is_spent(tmp_path):
    config = tiny_config(tmp_path, steps=10**7, max_seconds=1e-6, eval_every=0)
    config.checkpoint_every = 0
    result = train(config)
    assert result.timesteps < 10**4  # one rollout, not ten million steps
    assert result.final_eval is not None and (result.out / "model.zip").is_file()


def test_make_train_env__mixes_level_sources(tmp_path):
    config = tiny_config(tmp_path, n_envs=5)
    config.env.levels = GEN + "+microban:1-2"
    obs_size = frame_size(config.env, [])
    env = train_mod.make_train_env(config, env_kwargs_of(config.env, obs_size))
    obs = env.reset()
    assert obs.shape[0] == 5 and env.venv.bounds == [0, 3, 5]
    masks = env.env_method("action_masks")
    assert np.array_equal(np.stack(masks), env.venv.action_masks())
    _, _, dones, infos = env.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
    assert dones.shape == (5,) and len(infos) == 5
    env.close()
    result = train(replace(config, steps=128, eval_every=0, checkpoint_every=0))
    assert result.final_eval.n_levels == 6  # held out from the generated part


def test_train__lr_end_anneals_the_learning_rate(tmp_path):
    config = tiny_config(tmp_path, steps=512, eval_every=0, checkpoint_every=0)
    config.ppo.learning_rate, config.ppo.lr_end = 1e-3, 1e-4
    result = train(config)
    rows = read_csv(result.out / "progress.csv")
    rates = [float(r["train/learning_rate"]) for r in rows if r["train/learning_rate"]]
    assert len(rates) >= 2 and rates == sorted(rates, reverse=True)
    assert 1e-3 > rates[0] > rates[-1] >= 1e-4


@pytest.mark.slow
def test_train__maskable_ppo_learns_small_generated_levels(tmp_path, request):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("slow (about a minute): run with pytest -m slow")
    # a learning check, not a benchmark: one-box 7x7 levels, about a minute on one core
    config = tiny_config(tmp_path, steps=60_000, n_envs=32, eval_every=0, eval_episodes=200)
    config.checkpoint_every = 0
    config.env.levels = "generated:7x7:1"
    config.env.max_episode_steps = 20
    config.env.reward_scheme = "-0.01,0.1,-0.1,1"
    config.network = NetworkConfig(value_head="conv")
    config.ppo = PPOConfig(learning_rate=2e-3, batch_size=256)
    result = train(config)
    assert result.final_eval.solve_rate >= 0.8


def test_train_flags__generated_from_the_config_dataclasses():
    from dataclasses import asdict, fields

    from agents.training.cli import _SECTIONS, config_from_args
    from soko_gym.cli import build_parser

    parser = build_parser()
    assert asdict(config_from_args(parser.parse_args(["train", "--out", "o"]))) == asdict(
        TrainConfig(out="o")
    )
    help_text = parser._subparsers._group_actions[0].choices["train"].format_help()
    for _, cls, prefix in _SECTIONS:  # every field of every section has its flag
        for f in fields(cls):
            assert "--" + (prefix + f.name).replace("_", "-") in help_text, f.name
    args = parser.parse_args(
        ["train", "--out", "o", "--env", "Sokoban-Move-v0", "--no-dead-plane", "--lr", "0.1"]
        + ["--ppo-clip-range", "0.3", "--bc-lr", "0.5", "--obs-size", "8", "9", "--layers", "3"]
    )
    config = config_from_args(args)
    assert config.env.env_id == "Sokoban-Move-v0" and config.env.dead_plane is False
    assert config.env.obs_size == (8, 9) and config.network.n_layers == 3
    assert (config.ppo.learning_rate, config.dqn.learning_rate, config.bc.learning_rate) == (
        0.1,
        0.1,
        0.5,
    )
    assert config.ppo.clip_range == 0.3
