import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import soko_gym

ENV_IDS = [i for i in soko_gym.ENV_IDS if "-Gen-" not in i]  # Gen: same classes
LEVELS = "microban:1-25"


def choose_actions(masks, rng):
    acts = []
    for m in masks:
        legal = np.flatnonzero(m)
        if legal.size and rng.random() < 0.9:
            acts.append(int(rng.choice(legal)))
        else:
            acts.append(int(rng.integers(m.size)))  # often illegal: a no-op
    return np.array(acts, dtype=np.int64)


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vector__equals_single_envs_in_lockstep(env_id, parallel):
    n, limit = 5, 12
    venv = soko_gym.make_vec(
        env_id,
        n,
        levels=LEVELS,
        max_episode_steps=limit,
        deadlock_termination=True,
        parallel=parallel,
    )
    obs, info = venv.reset(seed=4)
    singles = [
        gym.make(env_id, levels=LEVELS, max_episode_steps=limit, deadlock_termination=True)
        for _ in range(n)
    ]
    for i, env in enumerate(singles):
        o, _ = env.reset(options={"level_index": int(info["level_index"][i])})
        assert np.array_equal(o, obs[i])
    rng = np.random.default_rng(0)
    ended = np.zeros(n, dtype=bool)
    n_ended = n_illegal = n_deadlock = 0
    for _ in range(60):
        actions = choose_actions(venv.action_masks(), rng)
        obs, rewards, term, trunc, info = venv.step(actions)
        for i, env in enumerate(singles):
            if ended[i]:  # NEXT_STEP autoreset: this step reset sub-env i
                o, _ = env.reset(options={"level_index": int(info["level_index"][i])})
                assert np.array_equal(o, obs[i]) and rewards[i] == 0 and not term[i]
                continue
            o, r, te, tr, inf = env.step(actions[i])
            assert np.array_equal(o, obs[i])
            assert r == pytest.approx(rewards[i]) and (te, tr) == (term[i], trunc[i])
            for key in (
                "moves",
                "pushes",
                "boxes_on_goals",
                "solved",
                "level_index",
                "illegal_action",
                "deadlock",
                "last_moves",
            ):
                assert inf[key] == info[key][i], key
            assert np.array_equal(inf["action_mask"], info["action_mask"][i])
            n_illegal += int(inf["illegal_action"])
            n_deadlock += int(inf["deadlock"])
        ended = term | trunc
        n_ended += int(ended.sum())
    assert n_ended > 3  # episodes ended by solving, deadlock or the time limit
    assert n_illegal > 3 and n_deadlock > 3  # the no-op and deadlock paths were compared too


def test_vector__same_step_autoreset_reports_final_observation():
    venv = soko_gym.make_vec(
        "Sokoban-Move-v0",
        3,
        levels="microban:1",
        max_episode_steps=2,
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    start, _ = venv.reset(seed=0)
    moves = np.array([1, 1, 1])  # down is legal from microban 1's start
    after_one, *_ = venv.step(moves)
    obs, rewards, term, trunc, info = venv.step(np.array([0, 0, 0]))
    assert trunc.all() and not term.any()
    assert np.array_equal(obs, start)  # already reset
    assert info["_final_obs"].all()
    assert not np.array_equal(info["final_obs"][0], start)
    assert (info["final_info"]["moves"] == 2).all() and (info["moves"] == 0).all()


def test_vector__reset_mask_and_level_index():
    venv = soko_gym.make_vec("Sokoban-Push-v0", 4, levels="microban:1-10")
    _, info = venv.reset(seed=1, options={"level_index": [0, 1, 2, 3]})
    assert info["level_index"].tolist() == [0, 1, 2, 3]
    mask = np.array([False, True, False, False])
    _, info = venv.reset(options={"reset_mask": mask, "level_index": 9})
    assert info["level_index"].tolist() == [0, 9, 2, 3]


def test_vector__spaces_and_masks_are_batched():
    venv = soko_gym.make_vec("Sokoban-Macro-v0", 3, levels="boxoban-hard:1-5")
    obs, info = venv.reset(seed=0)
    assert obs.shape == (3, 5, 10, 10) and venv.observation_space.contains(obs)
    assert venv.action_masks().shape == (3, 10_000) and venv.action_masks().any(axis=1).all()
    assert venv.single_action_space == gym.spaces.Discrete(10_000)
    assert info["_pushes"].all()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda v: v.step(np.zeros(2, dtype=np.int64)), "shape"),
        (lambda v: v.step(np.zeros(3)), "integers"),
        (lambda v: v.step(np.array([0, 400, 0])), "out of range"),
        (lambda v: v.reset(options={"reset_mask": [True]}), "reset_mask"),
    ],
)
def test_vector__bad_input_raises_value_error(call, match):
    venv = soko_gym.make_vec("Sokoban-Push-v0", 3, levels="boxoban-hard:1-3")
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        call(venv)


def test_vector__bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="num_envs"):
        soko_gym.make_vec("Sokoban-Push-v0", 0)
    with pytest.raises(ValueError, match="autoreset_mode"):
        soko_gym.make_vec("Sokoban-Push-v0", 2, autoreset_mode="sometimes")
    with pytest.raises(ValueError, match="colour"):
        soko_gym.make_vec("Sokoban-Push-v0", 2, colour="red")


@pytest.mark.parametrize("render_mode", ["ansi", "rgb_array"])
def test_vector__render_gives_one_frame_per_env_as_the_single_env_draws_it(render_mode):
    levels = soko_gym.load_levels("microban:1-2")
    venv = soko_gym.make_vec(
        "Sokoban-Move-v0", 2, levels=levels, render_mode=render_mode, level_order="sequential"
    )
    _, info = venv.reset(seed=0)
    assert info["level_index"].tolist() == [0, 1]
    singles = [gym.make("Sokoban-Move-v0", levels=[lv], render_mode=render_mode) for lv in levels]
    for env in singles:
        env.reset(seed=0)
    actions = np.array([1, 3])  # microban 1: down; microban 2: right (both legal)
    for _ in range(2):
        frames = venv.render()
        assert len(frames) == 2
        for i, env in enumerate(singles):
            assert np.array_equal(np.asarray(frames[i]), np.asarray(env.render()))
        venv.step(actions)
        for i, env in enumerate(singles):
            env.step(int(actions[i]))
    if render_mode == "ansi":  # and the first frames are the levels themselves
        venv.reset(seed=0)
        assert [soko_gym.Level.from_xsb(t).rows for t in venv.render()] == [
            lv.rows for lv in levels
        ]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vector__deadlock_search_masks_equal_the_single_envs(env_id):
    n, kw = 6, {"levels": LEVELS, "max_episode_steps": 60, "deadlock_search": 256}
    venv = soko_gym.make_vec(env_id, n, parallel=False, **kw)
    _, info = venv.reset(seed=1)
    singles = [gym.make(env_id, **kw) for _ in range(n)]
    plain = [gym.make(env_id, levels=LEVELS, deadlock_mask=True) for _ in range(n)]
    for i in range(n):
        for env in (singles[i], plain[i]):
            env.reset(options={"level_index": int(info["level_index"][i])})
    rng = np.random.default_rng(1)
    n_cleared = 0
    for _ in range(60):
        masks = venv.action_masks()
        for i in range(n):
            assert np.array_equal(singles[i].unwrapped.action_masks(), masks[i])
            n_cleared += int((plain[i].unwrapped.action_masks() & ~masks[i]).sum())
        actions = np.array([int(rng.choice(np.flatnonzero(m))) for m in masks])
        _, _, term, trunc, _ = venv.step(actions)
        if (term | trunc).any():
            break
        for i in range(n):
            singles[i].step(actions[i])
            plain[i].step(actions[i])
    assert n_cleared > 0
