import gymnasium as gym
import numpy as np
import pytest

import soko_gym  # noqa: F401  (registers the envs)
from agents.playing.symmetry import action_kind, symmetries

# 7 x 7 with walls, asymmetric, so every symmetry gives another level
LEVEL = """\
#######
#.  # #
# $   #
#  $@ #
# .#  #
#     #
#######
"""


def turned(xsb: str, turns: int, mirror: bool) -> str:
    """``xsb`` turned as ``np.rot90`` turns a plane, then mirrored."""
    grid = np.array([list(row) for row in xsb.splitlines()])
    grid = np.rot90(grid, turns)
    if mirror:
        grid = grid[:, ::-1]
    return "\n".join("".join(row) for row in grid) + "\n"


def observe(env_id: str, xsb: str):
    env = gym.make(env_id, levels=soko_gym.Level.from_xsb(xsb), obs_size=(7, 7), dead_plane=True)
    obs, info = env.reset(seed=0)
    return env, obs, np.asarray(info["action_mask"], dtype=bool)


@pytest.mark.parametrize("env_id", ["Sokoban-Push-v0", "Sokoban-Move-v0"])
def test_symmetry_matches_the_turned_level(env_id):
    """Each symmetry maps a level's planes, legal actions and a step's result onto the turned
    level's own: the augmentation shows the network real positions with their real labels."""
    env, obs, mask = observe(env_id, LEVEL)
    n = env.action_space.n
    syms = symmetries(7, 7, n)
    assert len(syms) == 8
    assert (syms[0].actions == np.arange(n)).all()
    for sym in syms:
        assert sorted(sym.actions) == list(range(n))  # a permutation
        env2, obs2, mask2 = observe(env_id, turned(LEVEL, sym.turns, sym.mirror))
        assert (sym.planes(obs) == obs2).all()
        moved = np.zeros(n, dtype=bool)
        moved[sym.actions[mask]] = True
        assert (moved == mask2).all()
        for action in np.flatnonzero(mask)[:6]:
            env.reset(seed=0)
            after, *_ = env.step(int(action))
            env2.reset(seed=0)
            after2, *_ = env2.step(int(sym.actions[action]))
            assert (sym.planes(after) == after2).all()


def test_rectangular_frames_have_four_symmetries_and_bad_spaces_are_refused():
    assert len(symmetries(6, 8, 4 * 48)) == 4
    assert action_kind(10, 10, 5) == "move"
    with pytest.raises(ValueError, match="Push env"):
        symmetries(10, 10, 123)


def test_torch_minibatch_augmentation_agrees_with_numpy():
    torch = pytest.importorskip("torch")
    from agents.playing.symmetry import Symmetries

    env, obs, mask = observe("Sokoban-Push-v0", LEVEL)
    n = env.action_space.n
    action = int(np.flatnonzero(mask)[0])
    aug = Symmetries(obs.shape, n)
    batch = 64
    o = torch.as_tensor(np.repeat(obs[None], batch, axis=0))
    a = torch.full((batch,), action)
    m = torch.as_tensor(np.repeat(mask[None], batch, axis=0))
    o2, a2, m2, s2 = aug.apply(o, a, m, np.random.default_rng(0), m.float())
    assert (s2 == m2.float()).all()  # per-action labels move with the actions
    seen = set()
    for i in range(batch):
        match = [
            j
            for j, sym in enumerate(aug.all)
            if (sym.planes(obs) == o2[i].numpy()).all() and sym.actions[action] == int(a2[i])
        ]
        assert match, "a sample left no symmetry's image"
        sym = aug.all[match[0]]
        assert m2[i, int(a2[i])]
        assert (m2[i].numpy()[sym.actions] == mask).all()
        seen.add(match[0])
    assert len(seen) >= 6  # random symmetries, not one for the batch


def _pretrained_obs(name: str, xsb: str):
    import agents

    agent = agents.pretrained(name)
    env = gym.make(agent.env_id, levels=soko_gym.Level.from_xsb(xsb), **agent.env_kwargs)
    obs, info = env.reset(seed=0)
    return agent, env, obs, np.asarray(info["action_mask"], dtype=bool)


@pytest.mark.parametrize("name", ["boxoban-push", "boxoban-move"])
def test_symmetry_averaged_policy_answers_a_turned_board_as_the_board(name):
    """Averaged over the whole group, the policy is exactly equivariant: the turned board's
    log-probabilities are the board's, moved by the symmetry's action map (a wrong map, or a
    view mapped back the wrong way, breaks this)."""
    pytest.importorskip("sb3_contrib")
    from agents.playing.symmetry import SymmetryAveraged

    agent, env, obs, mask = _pretrained_obs(name, LEVEL)
    n = env.action_space.n
    averaged = SymmetryAveraged(agent.model)
    lp = averaged.log_probs(obs)
    assert lp.shape == (n,)
    assert 0.5 < np.exp(lp).sum() <= 1.0 + 1e-6  # a geometric mean of distributions
    plain = agent.model.policy.get_distribution(agent.model.policy.obs_to_tensor(obs)[0])
    assert not np.allclose(plain.distribution.logits.detach().numpy()[0], lp)  # not one view
    for sym in averaged.all[1:]:
        turned_lp = averaged.log_probs(np.ascontiguousarray(sym.planes(obs)))
        np.testing.assert_allclose(turned_lp[sym.actions], lp, rtol=1e-4, atol=1e-4)


def test_symmetry_averaged_policy_keeps_to_the_mask_and_plays_the_env():
    """Greedy and sampled actions are legal, batched or single, and the averaged shipped
    Push agent solves a small level in the env."""
    pytest.importorskip("sb3_contrib")
    import agents
    from agents.playing.symmetry import SymmetryAveraged, symmetry_averaged

    agent, env, obs, mask = _pretrained_obs("boxoban-push", LEVEL)
    wrapped = symmetry_averaged(agent)
    assert wrapped.env_id == agent.env_id and wrapped.model is not agent.model
    assert isinstance(agents.pretrained("boxoban-move", symmetric=True).model, SymmetryAveraged)
    only = np.zeros_like(mask)
    only[np.flatnonzero(mask)[-1]] = True  # one legal action, unlikely the favourite
    action, _ = wrapped.model.predict(obs, deterministic=True, action_masks=only)
    assert int(action) == int(np.flatnonzero(only)[0])
    wrapped.model.set_random_seed(3)
    batch = np.repeat(obs[None], 5, axis=0)
    masks = np.repeat(mask[None], 5, axis=0)
    picks, _ = wrapped.model.predict(batch, deterministic=False, action_masks=masks)
    assert picks.shape == (5,) and mask[picks].all()
    solved = False
    for _ in range(30):
        action, _ = wrapped.model.predict(obs, deterministic=True, action_masks=mask)
        obs, _, term, trunc, info = env.step(int(action))
        mask = np.asarray(info["action_mask"], dtype=bool)
        if term or trunc:
            solved = bool(info["solved"])
            break
    assert solved


def test_symmetry_averaging_refuses_a_model_without_a_categorical_policy():
    pytest.importorskip("torch")
    from agents.playing.symmetry import SymmetryAveraged

    with pytest.raises(ValueError, match="actor-critic"):
        SymmetryAveraged(object())
