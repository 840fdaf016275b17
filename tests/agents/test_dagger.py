import csv
from dataclasses import asdict, replace

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import planners  # noqa: E402
import soko_gym  # noqa: E402
from agents.expert.policy import PlannerPolicy, plan_actions, read_position  # noqa: E402
from agents.playing.models import load_agent, load_model  # noqa: E402
from agents.training.config import (  # noqa: E402
    DaggerConfig,
    EnvConfig,
    NetworkConfig,
    TrainConfig,
    check_config,
)
from agents.training.dagger import (  # noqa: E402
    SAMPLES_FILE,
    Aggregate,
    load_samples,
    save_samples,
)
from agents.training.labels import Labeller, label_observation  # noqa: E402
from agents.training.train import train  # noqa: E402
from soko_gym.cli import main as soko_main  # noqa: E402
from tests.agents.conftest import DEAD_WALL, collect_tiny  # noqa: E402

GEN7 = "generated:7x7:1"


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def visited_observations(levels=GEN7, n=24, seed=0, env_id="Sokoban-Push-v0"):
    """Observations of random legal play: starts and positions off any plan."""
    env = gym.make(env_id, levels=levels, dead_plane=True, deadlock_termination=False)
    rng = np.random.default_rng(seed)
    out = []
    obs, info = env.reset(seed=seed)
    while len(out) < n:
        legal = np.flatnonzero(info["action_mask"])
        if legal.size == 0:  # a box stuck where no push is left
            obs, info = env.reset()
            continue
        out.append(obs)
        obs, _, term, trunc, info = env.step(int(rng.choice(legal)))
        if term or trunc or rng.random() < 0.2:
            obs, info = env.reset()
    env.close()
    return np.stack(out)


def dagger_config(tmp_path, name, **dagger):
    return TrainConfig(
        algo="dagger",
        out=str(tmp_path / name),
        steps=40,
        seed=0,
        n_envs=4,
        eval_every=0,
        eval_episodes=5,
        checkpoint_every=0,
        quiet=True,
        env=EnvConfig(levels="generated:6x6:1", max_episode_steps=12),
        network=NetworkConfig(channels=8, n_layers=2),
        dagger=DaggerConfig(**{"iterations": 2, "labels": 30, **dagger}),
    )


@pytest.mark.parametrize(
    ("env_id", "space"), [("Sokoban-Push-v0", "push"), ("Sokoban-Move-v0", "move")]
)
def test_label_observation__is_the_planners_action_on_the_rebuilt_position(env_id, space):
    observations = visited_observations(n=16, env_id=env_id)
    for obs in observations:
        status, action = label_observation(obs, "astar", 5.0, space)
        position = read_position(obs)
        result = planners.solve(position.to_level(), "astar", planners.SearchLimits(5.0))
        if not result.solved:
            assert status == "dead" and action == -1
            continue
        expected = plan_actions(position, result.lurd, space)[0][1]
        fresh = PlannerPolicy("astar", 5.0, space).predict(obs)[0]
        assert (status, action) == ("ok", expected) and action == int(fresh)


def test_labeller__dedupes_positions_and_labels_each_once():
    observations = visited_observations(n=20)
    labeller = Labeller(DaggerConfig(), "push")
    twice = np.concatenate([observations, observations])
    labels = labeller.label(twice)
    assert labels[:20] == labels[20:]
    assert len(labeller.cache) == len({labeller.key(o) for o in observations})
    assert labels[:20] == [label_observation(o) for o in observations]


def test_labeller__jobs_2_gives_the_labels_of_jobs_1():
    observations = visited_observations(n=30, seed=4)
    one = Labeller(DaggerConfig(jobs=1), "push").label(observations)
    two = Labeller(DaggerConfig(jobs=2), "push").label(observations)
    assert one == two and {s for s, _ in one} <= {"ok", "dead"}


def test_label_observation__dead_and_failed_positions_get_no_label():
    env = gym.make("Sokoban-Push-v0", levels=soko_gym.Level.from_xsb(DEAD_WALL))
    obs, _ = env.reset()
    assert label_observation(obs) == ("dead", -1)
    hard = gym.make("Sokoban-Push-v0", levels="xsokoban:50")
    obs, _ = hard.reset()
    assert label_observation(obs, max_seconds=0.01) == ("failed", -1)


def test_dagger__dead_positions_are_counted_not_labelled(tmp_path):
    solvable = soko_gym.load_levels("microban:1")[0].to_xsb()
    source = tmp_path / "levels.xsb"
    source.write_text(DEAD_WALL + "\n" + solvable)
    config = dagger_config(tmp_path, "run", iterations=1, labels=40)
    config.env = EnvConfig(levels=str(source), eval_levels=str(source), max_episode_steps=10)
    config.eval_episodes = 2
    result = train(config)
    (row,) = read_csv(result.out / "dagger.csv")
    assert int(row["dead"]) >= 1 and int(row["failed"]) == 0
    assert int(row["labelled"]) + int(row["dead"]) == int(row["new_states"])
    assert int(row["dataset"]) == int(row["labelled"])


def dagger_vs_bc(tmp_path, seed):
    """(BC, DAgger) held-out solve rates from the same expert data and gradient steps.

    BC alone: 200 labels of expert rollouts, 500 gradient steps. DAgger: the same 200
    expert labels (same seed, same rollout), then 4 iterations of 50 on-policy labels, 100
    gradient steps per retrain (500 in all).
    """

    def run(name, iterations, labels, steps):
        config = TrainConfig(
            algo="dagger",
            out=str(tmp_path / name),
            steps=steps,
            seed=seed,
            n_envs=16,
            eval_every=0,
            eval_episodes=200,
            checkpoint_every=0,
            quiet=True,
            env=EnvConfig(levels=GEN7, max_episode_steps=20),
            network=NetworkConfig(channels=16, n_layers=3),
            dagger=DaggerConfig(iterations=iterations, labels=labels, initial_labels=200),
        )
        return train(config)

    bc = run("bc", 1, 200, 500)
    dagger = run("dagger", 5, 50, 100)
    rows = read_csv(dagger.out / "dagger.csv")
    assert [int(r["new_states"]) for r in rows] == [200, 50, 50, 50, 50]
    assert [int(r["gradient_steps"]) for r in rows] == [100] * 5
    (bc_row,) = read_csv(bc.out / "dagger.csv")
    assert int(bc_row["new_states"]) == 200 and int(bc_row["gradient_steps"]) == 500
    return bc.final_eval.solve_rate, dagger.final_eval.solve_rate


def test_dagger__improves_on_behaviour_cloning_alone(tmp_path):
    # the same expert data and gradient steps, DAgger adding 200 on-policy labels; measured
    # held-out solve rates (BC, DAgger) for seeds 0-4: (0.83, 0.91), (0.775, 0.865),
    # (0.805, 0.93), (0.79, 0.88), (0.84, 0.92): DAgger ahead by 0.08 to 0.125
    bc, dagger = dagger_vs_bc(tmp_path, seed=0)
    assert dagger >= bc + 0.04


def test_soko_train__dagger_writes_a_model_that_loads_and_acts(tmp_path, capsys):
    out = tmp_path / "cli"
    argv = ["train", "--algo", "dagger", "--out", str(out), "--levels", "generated:6x6:1"]
    argv += ["--steps", "30", "--n-envs", "4", "--eval-episodes", "4", "--max-episode-steps"]
    argv += ["10", "--dagger-iterations", "2", "--dagger-labels", "20", "--jobs", "1"]
    argv += ["--channels", "8", "--layers", "2", "--quiet"]
    assert soko_main(argv) == 0
    rows = read_csv(out / "dagger.csv")
    assert [r["iteration"] for r in rows] == ["0", "1"]
    assert float(rows[0]["beta"]) == 1.0 and float(rows[1]["beta"]) == 0.5
    _, meta = load_model(out / "model.zip", require_meta=True)
    assert meta["trained_with"] == "dagger" and meta["algo"] == "maskable-ppo"
    agent = load_agent(out / "model.zip")
    assert agent.masked and agent.env_id == "Sokoban-Push-v0"
    env = gym.make(agent.env_id, levels="generated:6x6:1", **agent.env_kwargs)
    obs, info = env.reset(seed=1)
    action, _ = agent.model.predict(obs, action_masks=info["action_mask"], deterministic=True)
    assert info["action_mask"][int(action)]
    env.step(int(action))


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--dagger-labels", "0"], "--dagger-labels"),
        (["--dagger-iterations", "0"], "--dagger-iterations"),
        (["--dagger-beta0", "1.5"], "--dagger-beta0"),
        (["--dagger-decay", "-0.1"], "--dagger-decay"),
        (["--dagger-time-limit", "0"], "--dagger-time-limit"),
        (["--jobs", "0"], "--jobs"),
        (["--dagger-planner", "no-such"], "--dagger-planner"),
        (["--dagger-retrain-steps", "-1"], "--dagger-retrain-steps"),
        (["--dagger-new-share", "1"], "--dagger-new-share"),
        (["--bc-lr-end", "-0.1"], "--bc-lr-end"),
        (["--env", "Sokoban-Macro-v0", "--bc-augment"], "--bc-augment"),
    ],
)
def test_soko_train__bad_dagger_options_exit_2_naming_the_flag(tmp_path, capsys, flags, named):
    argv = ["train", "--algo", "dagger", "--out", str(tmp_path / "bad"), *flags]
    assert soko_main(argv) == 2
    assert named in capsys.readouterr().err
    assert not (tmp_path / "bad" / "dagger.csv").exists()


def test_check_config__dagger_section_errors_name_the_flag(tmp_path):
    config = dagger_config(tmp_path, "x", epochs=-1.0)
    with pytest.raises(ValueError, match="--dagger-epochs"):
        check_config(config)
    config = dagger_config(tmp_path, "x", initial_labels=-5)
    with pytest.raises(ValueError, match="--dagger-initial-labels"):
        check_config(config)


def test_dagger__starts_from_a_collected_dataset_then_finetunes(tmp_path):
    path = collect_tiny(tmp_path / "expert.npz", limit=6)
    config = dagger_config(tmp_path, "from-data", labels=20)
    config.bc = replace(config.bc, dataset=str(path), finetune_steps=64)
    config.ppo = replace(config.ppo, n_steps=16, batch_size=32)
    result = train(config)
    rows = read_csv(result.out / "dagger.csv")
    n_data = int(rows[0]["labelled"])
    assert rows[0]["beta"] == "nan" and int(rows[0]["new_states"]) == 0
    assert int(rows[0]["dataset"]) == n_data > 0
    assert float(rows[1]["beta"]) == 0.5 and int(rows[1]["new_states"]) == 20
    assert int(rows[1]["dataset"]) == n_data + int(rows[1]["labelled"])
    phases = [(r["phase"], r["timesteps"]) for r in read_csv(result.out / "eval.csv")]
    assert phases[:2] == [("dagger", "0"), ("dagger", "1")] and phases[-1] == ("rl", "64")
    assert (result.out / "dagger_model.zip").is_file()


def test_dagger__init_model_continues_a_saved_policy(tmp_path):
    path = collect_tiny(tmp_path / "expert.npz", limit=6)
    first = dagger_config(tmp_path, "first", iterations=1)
    first.bc = replace(first.bc, dataset=str(path))
    saved = train(first).model_path
    more = dagger_config(tmp_path, "more", iterations=2, labels=20)
    more.bc = replace(more.bc, dataset=str(path))
    more.init_model = str(saved)
    result = train(more)
    rows = read_csv(result.out / "dagger.csv")
    # iteration 0 only reloads the dataset: the loaded policy is evaluated as it was saved
    assert int(rows[0]["gradient_steps"]) == 0 and int(rows[0]["dataset"]) > 0
    assert int(rows[1]["gradient_steps"]) == 40 and int(rows[1]["new_states"]) == 20
    evals = read_csv(result.out / "eval.csv")
    assert evals[0]["solve_rate"] == read_csv(saved.parent / "eval.csv")[-1]["solve_rate"]
    wrong = dagger_config(tmp_path, "wrong", iterations=1)
    wrong.network = replace(wrong.network, channels=4)  # narrower than the saved network
    wrong.init_model = str(saved)
    with pytest.raises(ValueError, match="--init-model"):
        train(wrong)
    missing = dagger_config(tmp_path, "missing", iterations=1)
    missing.init_model = str(tmp_path / "nope.zip")
    with pytest.raises(ValueError, match="--init-model"):
        train(missing)


def test_train_config__dagger_section_round_trips_through_its_json(tmp_path):
    config = dagger_config(tmp_path, "json", labels=77, beta0=0.5, sample=False, jobs=2)
    assert TrainConfig.from_dict(asdict(config)) == config


def test_aggregate__new_share_weights_give_the_rollouts_that_share_of_each_minibatch():
    from agents.training.dagger import Aggregate

    agg = Aggregate()
    obs = np.zeros((1, 5, 3, 3), dtype=np.uint8)
    agg.add(np.repeat(obs, 900, 0), np.zeros(900), np.ones((900, 4), bool), initial=True)
    assert agg.weights(0.3) is None  # nothing from rollouts yet: every sample alike
    agg.add(np.repeat(obs, 100, 0), np.zeros(100), np.ones((100, 4), bool))
    w = agg.weights(0.3)
    assert agg.initial == 900 and len(w) == 1000
    assert w[900:].sum() == pytest.approx(0.3) and w[:900].sum() == pytest.approx(0.7)
    assert agg.weights(0.0) is None


def test_gradient_steps__retrain_steps_apply_after_iteration_0(tmp_path):
    from agents.training.dagger import gradient_steps

    config = dagger_config(tmp_path, "steps", retrain_steps=7)
    assert gradient_steps(config, 10_000, 0) == config.steps
    assert gradient_steps(config, 10_000, 1) == gradient_steps(config, 10_000, 3) == 7


def _tiny_maskable(env):
    """A small MaskablePPO square-network model for ``env`` and a fast cloning config."""
    from sb3_contrib import MaskablePPO

    from agents.features import MaskableSquarePolicy
    from agents.training.config import BCConfig

    model = MaskablePPO(
        MaskableSquarePolicy,
        env,
        policy_kwargs={"features_extractor_kwargs": {"channels": 8, "n_layers": 2}},
        seed=0,
    )
    return model, BCConfig(batch_size=32, learning_rate=3e-3, lr_end=1e-4, val_fraction=0.0)


def test_behaviour_clone__weights_decide_which_samples_are_learned():
    """Two halves that disagree on one observation: the policy learns the half it is given
    weight on, as DAgger's ``new_share`` relies on."""

    from agents.training.bc import BCData, behaviour_clone

    level = soko_gym.Level.from_xsb("######\n#    #\n# $@ #\n#  . #\n######\n")
    env = gym.make("Sokoban-Push-v0", levels=level)
    obs, info = env.reset(seed=0)
    legal = np.flatnonzero(info["action_mask"])
    assert len(legal) >= 2
    a, b = int(legal[0]), int(legal[1])
    n = 200
    data = BCData(
        np.repeat(obs[None], n, 0),
        np.array([a] * (n // 2) + [b] * (n // 2)),
        np.repeat(np.asarray(info["action_mask"], bool)[None], n, 0),
    )
    for favoured, weights in ((a, np.r_[np.ones(n // 2), np.zeros(n // 2)]), (b, None)):
        if weights is None:
            weights = np.r_[np.zeros(n // 2), np.ones(n // 2)]
        model, config = _tiny_maskable(env)
        behaviour_clone(model.policy, data, 60, config, weights=weights)
        action, _ = model.predict(obs, action_masks=info["action_mask"], deterministic=True)
        assert int(action) == favoured
    with pytest.raises(ValueError, match="weights"):
        behaviour_clone(model.policy, data, 1, config, weights=np.zeros(n))


# a box beside the player and its goal: left of it a corner, right of it the goal
RANKED = """\
######
#    #
# .$@#
######
"""


def _first(levels, env_id="Sokoban-Push-v0"):
    env = gym.make(env_id, levels=soko_gym.Level.from_xsb(levels), dead_plane=True)
    obs, info = env.reset(seed=0)
    return obs, np.asarray(info["action_mask"], dtype=bool)


def test_rank_observation__costs_are_one_plus_the_optimal_pushes_after_each_push():
    from agents.training.labels import rank_observation

    for obs, mask in zip(*_visited_with_masks(16), strict=True):
        status, best, costs = rank_observation((obs, mask))
        assert np.isnan(costs[~mask]).all()
        position = read_position(obs)
        for action in np.flatnonzero(mask):
            child = position.after_push(int(action))
            result = planners.solve(child.to_level(), "astar", planners.SearchLimits(5.0))
            if child.solved:
                assert costs[action] == 1
            elif result.solved:
                assert costs[action] == 1 + sum(c.isupper() for c in result.lurd)
            else:
                assert costs[action] == np.inf
        if status == "ok":
            # the cheapest push is one push better than the position itself
            whole = planners.solve(position.to_level(), "astar", planners.SearchLimits(5.0))
            assert costs[best] == np.nanmin(np.where(np.isinf(costs), np.nan, costs))
            assert costs[best] == sum(c.isupper() for c in whole.lurd)
        else:
            assert status == "dead" and best == -1 and np.isinf(costs[mask]).all()


def _visited_with_masks(n):
    env = gym.make("Sokoban-Push-v0", levels=GEN7, dead_plane=True, deadlock_termination=False)
    rng = np.random.default_rng(3)
    out, masks = [], []
    obs, info = env.reset(seed=3)
    while len(out) < n:
        legal = np.flatnonzero(info["action_mask"])
        if legal.size == 0:
            obs, info = env.reset()
            continue
        out.append(obs)
        masks.append(np.asarray(info["action_mask"], dtype=bool))
        obs, _, term, trunc, info = env.step(int(rng.choice(legal)))
        if term or trunc or rng.random() < 0.2:
            obs, info = env.reset()
    return np.stack(out), np.stack(masks)


def test_rank_observation__a_losing_push_costs_inf_and_a_solving_push_1():
    from agents.training.labels import rank_observation, ranked_targets

    obs, mask = _first(RANKED)
    status, best, costs = rank_observation((obs, mask))
    legal = np.flatnonzero(mask)
    assert status == "ok" and costs[best] == 1
    assert sorted(costs[legal].tolist()) == [1.0, np.inf] or costs[legal].tolist() == [1.0]
    targets = ranked_targets(costs[None], 0.5)[0]
    assert targets[best] == pytest.approx(1.0) and targets.sum() == pytest.approx(1.0)


def test_ranked_targets__ties_share_worse_pushes_fade_losing_pushes_get_nothing():
    from agents.training.labels import ranked_targets

    costs = np.array([[5, 5, 7, np.inf, np.nan], [np.nan, 3, np.inf, 4, 3]], dtype=np.float32)
    t = ranked_targets(costs, 0.5)
    assert t.sum(axis=1) == pytest.approx([1.0, 1.0])
    assert t[0, 0] == t[0, 1] > t[0, 2] > 0 and t[0, 3] == t[0, 4] == 0
    assert t[0, 2] / t[0, 0] == pytest.approx(np.exp(-4))
    assert t[1, 1] == t[1, 4] > t[1, 3] and t[1, 0] == t[1, 2] == 0
    sharper = ranked_targets(costs, 0.1)
    assert sharper[0, 2] < t[0, 2]
    with pytest.raises(ValueError, match="finite"):
        ranked_targets(np.array([[np.inf, np.nan]]), 0.5)


def test_labeller__ranked_labels_need_masks_and_the_push_space():
    observations, masks = _visited_with_masks(6)
    labeller = Labeller(DaggerConfig(targets="ranked"), "push")
    with pytest.raises(ValueError, match="mask"):
        labeller.label(observations)
    labels = labeller.label(observations, masks)
    assert all(len(label) == 3 for label in labels)
    with pytest.raises(ValueError, match="push"):
        Labeller(DaggerConfig(targets="ranked"), "move")


def test_bc_data__targets_are_one_hot_except_rows_with_soft_labels():
    from agents.training.bc import BCData

    n, k = 4, 3
    soft = np.array([[0.0, 0.5, 0.5]], dtype=np.float32)
    data = BCData(
        np.zeros((n, 5, 2, 2), np.uint8),
        np.array([0, 1, 2, 1]),
        np.ones((n, k), bool),
        soft=soft,
        soft_rows=np.array([-1, -1, -1, 0]),
    )
    t = data.targets(np.arange(n))
    assert (t[:3] == np.eye(k)[[0, 1, 2]]).all() and (t[3] == soft[0]).all()
    part = data.subset(np.array([3, 0]))
    assert (part.targets(np.arange(2)) == np.stack([soft[0], np.eye(k)[0]])).all()
    assert BCData(data.observations, data.actions, data.action_masks).targets(np.arange(n)) is None
    with pytest.raises(ValueError, match="soft_rows"):
        BCData(data.observations, data.actions, data.action_masks, soft=soft)
    with pytest.raises(ValueError, match="soft_rows"):
        BCData(
            data.observations,
            data.actions,
            data.action_masks,
            soft=soft,
            soft_rows=np.array([-1, -1, -1, 1]),
        )


def test_behaviour_clone__soft_labels_split_the_policy_between_tied_pushes():
    """One observation whose label is half one push, half another: the policy learns both
    (one-hot labels on the same data would learn only the first)."""

    from agents.playing.act import policy_log_probs
    from agents.training.bc import BCData, behaviour_clone

    level = soko_gym.Level.from_xsb("######\n#    #\n# $@ #\n#  . #\n######\n")
    env = gym.make("Sokoban-Push-v0", levels=level)
    obs, info = env.reset(seed=0)
    mask = np.asarray(info["action_mask"], bool)
    a, b = (int(x) for x in np.flatnonzero(mask)[:2])
    soft = np.zeros((1, len(mask)), np.float32)
    soft[0, [a, b]] = 0.5
    n = 64
    data = BCData(
        np.repeat(obs[None], n, 0),
        np.full(n, a),
        np.repeat(mask[None], n, 0),
        soft=soft,
        soft_rows=np.zeros(n, np.int64),
    )
    model, config = _tiny_maskable(env)
    behaviour_clone(model.policy, data, 80, config)
    p = np.where(mask, np.exp(policy_log_probs(model.policy, obs[None])[0].numpy()), 0.0)
    p /= p.sum()  # among the legal pushes, as the masked policy plays
    assert p[a] == pytest.approx(0.5, abs=0.1) and p[b] == pytest.approx(0.5, abs=0.1)


def test_dagger__ranked_targets_train_on_soft_labels(tmp_path):
    config = dagger_config(tmp_path, "ranked", labels=20, targets="ranked", beta0=0.0)
    result = train(config)
    rows = read_csv(result.out / "dagger.csv")
    assert len(rows) == 2 and all(int(r["new_states"]) == 20 for r in rows)
    assert int(rows[1]["dataset"]) == int(rows[0]["labelled"]) + int(rows[1]["labelled"]) > 0
    assert load_model(result.model_path) is not None


@pytest.mark.parametrize("targets", ["walk", "ranked-walk"])
def test_dagger__walk_targets_in_the_move_env_with_the_trail_plane(tmp_path, targets):
    from agents.training.dagger import SAMPLES_FILE, load_samples

    config = dagger_config(tmp_path, "walk", labels=20, targets=targets, beta0=0.0)
    config.env = replace(config.env, env_id="Sokoban-Move-v0", trail_plane=True)
    result = train(config)
    rows = read_csv(result.out / "dagger.csv")
    assert len(rows) == 2 and int(rows[1]["labelled"]) > 0
    samples = load_samples(str(result.out / SAMPLES_FILE), (7, 6, 6), 4)
    assert samples.observations.shape[1] == 7 and samples.soft is not None
    labels = samples.targets(np.arange(len(samples.actions)))
    np.testing.assert_allclose(labels.sum(axis=1), 1.0, rtol=1e-6)
    assert (labels[np.arange(len(labels)), samples.actions] > 0).all()
    with pytest.raises(ValueError, match=targets):
        Labeller(DaggerConfig(targets=targets), "push")
    push = dagger_config(tmp_path, "x", targets=targets)
    with pytest.raises(ValueError, match="--dagger-targets"):
        check_config(push)


def test_dagger__ranked_walk_labels_are_the_planners_not_a_teachers(tmp_path):
    taught = dagger_config(tmp_path, "x", targets="ranked-walk", teacher="pretrained:boxoban-push")
    taught.env = replace(taught.env, env_id="Sokoban-Move-v0", trail_plane=True)
    with pytest.raises(ValueError, match="--dagger-teacher"):
        check_config(taught)


def test_dagger__a_push_env_model_teaches_the_move_env(tmp_path):
    from agents.training.dagger import SAMPLES_FILE, load_samples

    teacher = train(dagger_config(tmp_path, "push", iterations=1, labels=20)).model_path
    config = dagger_config(tmp_path, "taught", labels=20, targets="walk", teacher=str(teacher))
    config.env = replace(config.env, env_id="Sokoban-Move-v0", trail_plane=True)
    result = train(config)  # iteration 0 rolls out the teacher itself
    rows = read_csv(result.out / "dagger.csv")
    assert len(rows) == 2 and all(int(r["labelled"]) > 0 for r in rows)
    samples = load_samples(str(result.out / SAMPLES_FILE), (7, 6, 6), 4)
    labels = samples.targets(np.arange(len(samples.actions)))
    assert (labels[np.arange(len(labels)), samples.actions] > 0).all()
    push = dagger_config(tmp_path, "x", teacher=str(teacher))
    with pytest.raises(ValueError, match="--dagger-teacher"):
        check_config(push)


def test_check_config__ranked_targets_need_the_push_env_and_a_positive_temperature(tmp_path):
    config = dagger_config(tmp_path, "x", targets="ranked")
    config.env = replace(config.env, env_id="Sokoban-Move-v0")
    with pytest.raises(ValueError, match="--dagger-targets"):
        check_config(config)
    with pytest.raises(ValueError, match="--dagger-targets"):
        check_config(dagger_config(tmp_path, "x", targets="best"))
    with pytest.raises(ValueError, match="--dagger-temperature"):
        check_config(dagger_config(tmp_path, "x", targets="ranked", temperature=0.0))


def test_position_after_push__moves_the_box_and_puts_the_player_behind_it():
    obs, mask = _first(RANKED)
    position = read_position(obs)
    (box,) = position.boxes
    for action in np.flatnonzero(mask).tolist():
        child = position.after_push(action)
        square, direction = action >> 2, action & 3
        assert square == box and child.player == box
        assert child.boxes == (box + position.offsets()[direction],)
    down = box * 4 + 1  # engine order up, down, left, right: a wall below the box
    with pytest.raises(ValueError, match="not a push"):
        position.after_push(down)
    with pytest.raises(ValueError, match="not a push"):
        position.after_push(position.player * 4 + 2)  # no box on the player's square


def test_dagger__keeps_its_labels_and_a_checkpoint_per_iteration_and_a_later_run_reuses_them(
    tmp_path, monkeypatch
):
    first = dagger_config(tmp_path, "first", labels=20)
    first.checkpoint_every = 1
    done = train(first)
    rows = read_csv(done.out / "dagger.csv")
    for i in (0, 1):
        agent = load_agent(done.out / "checkpoints" / f"model_dagger_{i}.zip")
        assert agent.env_id == "Sokoban-Push-v0"
    env = gym.make("Sokoban-Push-v0", levels="generated:6x6:1", **agent.env_kwargs)
    saved = load_samples(
        str(done.out / SAMPLES_FILE), env.observation_space.shape, env.action_space.n
    )
    assert len(saved.actions) == int(rows[-1]["dataset"]) == sum(int(r["labelled"]) for r in rows)
    # every saved label is the expert's action on its position
    expert = PlannerPolicy("astar", 5.0, "push")
    for obs, mask, action in zip(
        saved.observations[:5], saved.action_masks[:5], saved.actions[:5], strict=True
    ):
        assert mask[action]
        assert expert.predict(obs[None], episode_start=np.ones(1, bool))[0][0] == action

    labelled: list = []
    original = Labeller.label

    def spy(self, observations, masks=None):
        labelled.extend(self.key(o) for o in observations)
        return original(self, observations, masks)

    monkeypatch.setattr(Labeller, "label", spy)
    more = dagger_config(tmp_path, "more", labels=20, samples=str(done.out / SAMPLES_FILE))
    more.init_model = str(done.model_path)
    result = train(more)
    again = read_csv(result.out / "dagger.csv")
    assert int(again[0]["dataset"]) == len(saved.actions) + int(again[0]["labelled"])
    keyer = Labeller(more.dagger, "push")
    assert labelled and not {keyer.key(o) for o in saved.observations} & set(labelled)
    # the later run's file holds both runs' labels
    both = load_samples(
        str(result.out / SAMPLES_FILE), saved.observations.shape[1:], env.action_space.n
    )
    assert len(both.actions) == int(again[-1]["dataset"])
    assert not (tmp_path / "first" / "checkpoints" / "model_dagger_2.zip").exists()
    assert not list((result.out / "checkpoints").iterdir())  # checkpoint_every 0: none


def test_save_samples__soft_labels_and_actions_survive_the_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    obs = rng.integers(0, 2, (7, 3, 4, 4), dtype=np.uint8)
    masks = np.ones((7, 5), dtype=bool)
    actions = np.array([0, 1, 2, 3, 4, 0, 1])
    soft = rng.random((4, 5)).astype(np.float32)
    aggregate = Aggregate()
    aggregate.add(obs[:2], actions[:2], masks[:2], initial=True)  # a dataset: not saved
    aggregate.add(obs[2:6], actions[2:6], masks[2:6], targets=soft)
    aggregate.add(obs[6:], actions[6:], masks[6:])
    path = tmp_path / SAMPLES_FILE
    assert save_samples(aggregate, path) == 5
    back = load_samples(str(path), (3, 4, 4), 5)
    assert np.array_equal(back.observations, obs[2:]) and np.array_equal(back.actions, actions[2:])
    targets = back.targets(np.arange(5))
    assert np.allclose(targets[:4], soft) and np.array_equal(targets[4], np.eye(5)[1])
    pooled = load_samples(f"{path},{path}", (3, 4, 4), 5)
    assert len(pooled.actions) == 10 and np.allclose(pooled.targets(np.arange(10))[5:9], soft)
    empty = Aggregate()
    empty.add(obs[:2], actions[:2], masks[:2], initial=True)
    assert save_samples(empty, tmp_path / "none.npz") == 0 and not (tmp_path / "none.npz").exists()


def test_add_data__a_file_whose_samples_are_all_soft_reloads(tmp_path):
    # a teacher run labels every sample softly; resuming it re-adds that file to the aggregate
    rng = np.random.default_rng(1)
    obs = rng.integers(0, 2, (3, 2, 4, 4), dtype=np.uint8)
    masks = np.ones((3, 4), dtype=bool)
    soft = rng.random((3, 4)).astype(np.float32)
    aggregate = Aggregate()
    aggregate.add(obs, np.array([0, 1, 2]), masks, targets=soft)
    save_samples(aggregate, tmp_path / SAMPLES_FILE)
    resumed = Aggregate()
    resumed.add_data(load_samples(str(tmp_path / SAMPLES_FILE), (2, 4, 4), 4))
    back = resumed.data()
    assert len(resumed) == 3 and np.allclose(back.targets(np.arange(3)), soft)


def test_dagger_samples__bad_files_are_refused_naming_the_flag(tmp_path):
    with pytest.raises(ValueError, match="--dagger-samples"):
        check_config(dagger_config(tmp_path, "x", samples=str(tmp_path / "missing.npz")))
    dataset = collect_tiny(tmp_path / "expert.npz", limit=2)
    with pytest.raises(ValueError, match="--dagger-samples.*not a dagger_samples"):
        load_samples(str(dataset), (1, 6, 6), 4)
    text = tmp_path / "notes.npz"
    text.write_text("not an npz")
    with pytest.raises(ValueError, match="--dagger-samples.*cannot read"):
        load_samples(str(text), (1, 6, 6), 4)
    aggregate = Aggregate()
    aggregate.add(np.zeros((1, 3, 4, 4), np.uint8), np.array([0]), np.ones((1, 5), bool))
    save_samples(aggregate, tmp_path / SAMPLES_FILE)
    with pytest.raises(ValueError, match="--dagger-samples.*this run's env has"):
        load_samples(str(tmp_path / SAMPLES_FILE), (3, 6, 6), 5)
    config = dagger_config(tmp_path, "wrong-env", samples=str(tmp_path / SAMPLES_FILE))
    with pytest.raises(ValueError, match="--dagger-samples"):
        train(config)
    assert not (tmp_path / "wrong-env" / "dagger.csv").exists() or not read_csv(
        tmp_path / "wrong-env" / "dagger.csv"
    )
