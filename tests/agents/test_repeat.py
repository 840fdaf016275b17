import gymnasium as gym
import numpy as np
import pytest

import soko_gym  # noqa: F401  (registers the envs)

pytest.importorskip("sb3_contrib")

# 7 x 7 with walls (as in test_symmetry): a few legal pushes, several moves
LEVEL = """\
#######
#.  # #
# $   #
#  $@ #
# .#  #
#     #
#######
"""


def _agent_obs(name: str, xsb: str = LEVEL):
    import agents

    agent = agents.pretrained(name)
    env = gym.make(agent.env_id, levels=soko_gym.Level.from_xsb(xsb), **agent.env_kwargs)
    obs, info = env.reset(seed=0)
    return agent, env, obs, np.asarray(info["action_mask"], dtype=bool)


def _greedy(agent, obs, mask=None):
    kwargs = {} if mask is None else {"action_masks": mask}
    action, _ = agent.model.predict(obs, deterministic=True, **kwargs)
    return int(action)


@pytest.mark.parametrize("name", ["boxoban-push", "boxoban-move"])
def test_a_new_board_gets_the_greedy_action_and_a_repeated_one_an_untried_one(name):
    """On a board not met before the rule plays the policy's own greedy action; met again, the
    next most likely one it has not taken there, in the policy's order; a new episode forgets."""
    from agents.playing.repeat import RepeatAware

    agent, env, obs, mask = _agent_obs(name)
    masked = name == "boxoban-push"
    kwargs = {"action_masks": mask} if masked else {}
    policy = RepeatAware(agent.model, rule="untried")
    lp = policy.log_probs(obs[None])[0]
    if masked:
        lp = np.where(mask, lp, -np.inf)
    ranked = [a for a in np.argsort(-lp, kind="stable").tolist() if np.isfinite(lp[a])]
    assert len(ranked) >= 3
    first, memory = policy.predict(obs, **kwargs)
    assert int(first) == _greedy(agent, obs, mask if masked else None) == ranked[0]
    second, memory = policy.predict(obs, state=memory, episode_start=np.array([False]), **kwargs)
    third, memory = policy.predict(obs, state=memory, episode_start=np.array([False]), **kwargs)
    assert [int(first), int(second), int(third)] == ranked[:3]
    again, _ = policy.predict(obs, state=memory, episode_start=np.array([True]), **kwargs)
    assert int(again) == ranked[0]  # the episode's start clears the memory
    fresh, _ = policy.predict(obs, **kwargs)  # no state given: an empty memory
    assert int(fresh) == ranked[0]


def test_sampling_on_a_repeated_board_keeps_to_the_mask_and_its_seed():
    """Once every legal push was tried from a board, or with the "sample" rule, the action is
    drawn from the policy, legal, and the same for the same seed; per batch slot memories."""
    from agents.playing.repeat import RepeatAware

    agent, env, obs, mask = _agent_obs("boxoban-push")
    only = np.zeros_like(mask)
    only[np.flatnonzero(mask)[:2]] = True  # two legal pushes
    policy = RepeatAware(agent.model, rule="untried", seed=5)
    memory = None
    picks = []
    for _ in range(8):
        action, memory = policy.predict(obs, state=memory, action_masks=only)
        picks.append(int(action))
    assert set(picks[:2]) == set(np.flatnonzero(only).tolist())  # both tried first
    assert all(only[a] for a in picks)

    def run(seed):
        sampler = RepeatAware(agent.model, rule="sample", seed=seed)
        batch = np.repeat(obs[None], 3, axis=0)
        masks = np.repeat(mask[None], 3, axis=0)
        state, out = None, []
        for step in range(6):
            starts = np.array([step == 0, False, step == 3])  # slot 2 starts over at step 3
            actions, state = sampler.predict(
                batch, state=state, episode_start=starts, action_masks=masks
            )
            out.append(actions.tolist())
        return out

    a, b = run(1), run(1)
    assert a == b
    assert all(mask[x] for row in a for x in row)
    greedy = _greedy(agent, obs, mask)
    assert a[0] == [greedy] * 3  # a new board: greedy in every slot
    assert a[3][2] == greedy  # slot 2's memory was cleared
    assert any(x != greedy for row in a[1:] for x in row)  # repeats sample


def test_bad_rules_temperatures_and_models_are_refused():
    from agents.playing.repeat import RepeatAware

    agent, *_ = _agent_obs("boxoban-move")
    with pytest.raises(ValueError, match="rule must be one of"):
        RepeatAware(agent.model, rule="random")
    with pytest.raises(ValueError, match="temperature"):
        RepeatAware(agent.model, temperature=0)
    with pytest.raises(ValueError, match="actor-critic"):
        RepeatAware(object())


def test_symmetry_averaged_agents_take_the_rule_too():
    import agents
    from agents.playing.repeat import RepeatAware
    from agents.playing.symmetry import SymmetryAveraged

    agent = agents.pretrained("boxoban-move", symmetric=True, on_repeat="untried")
    assert isinstance(agent.model, RepeatAware)
    assert isinstance(agent.model.model, SymmetryAveraged)
    assert agent.model.rule == "untried"


class _Recorder:
    """A stand-in policy: always "up"; records the state and episode starts it is given."""

    def __init__(self):
        self.calls = []

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        self.calls.append((state, np.asarray(episode_start).copy()))
        return np.zeros(len(obs), dtype=np.int64), len(self.calls)  # the state: a call count


def test_evaluate_passes_the_state_back_and_flags_each_episode_start():
    from agents.playing.evaluation import evaluate

    levels = [soko_gym.Level.from_xsb("#####\n#@$.#\n#####")] * 3
    venv = soko_gym.make_vec("Sokoban-Move-v0", 3, levels=levels, max_episode_steps=4)
    model = _Recorder()
    result = evaluate(model, venv, 3)
    assert result.solve_rate == 0.0  # "up" walks into the wall: every episode runs 4 steps
    states = [s for s, _ in model.calls]
    assert states == [None, 1, 2, 3]
    assert model.calls[0][1].all() and not any(s.any() for _, s in model.calls[1:])


@pytest.mark.parametrize("rule", ["untried", "sample"])
def test_the_rule_solves_a_test_level_the_greedy_agent_loses_in_a_cycle(rule):
    """boxoban-unfiltered-test 13: the first shipped Move agent (``boxoban-move-v1``), greedy,
    meets a board again within a few steps and walks that cycle for its 120 steps; with the
    rule it leaves the cycle and solves the level (the LURD verified by the engine)."""
    import agents
    from agents.playing.repeat import RepeatAware
    from soko_gym.levels import load_levels, verify

    agent = agents.pretrained("boxoban-move-v1")
    level = load_levels("boxoban-unfiltered-test")[12]

    def play(policy):
        env = gym.make(agent.env_id, levels=level, max_episode_steps=120, **agent.env_kwargs)
        obs, _ = env.reset(seed=0)
        state, lurd, seen, repeats, step = None, "", set(), 0, 0
        while True:
            repeats += obs.tobytes() in seen
            seen.add(obs.tobytes())
            start = np.array([step == 0])
            action, state = policy.predict(obs, state, start, deterministic=True)
            obs, _, term, trunc, info = env.step(int(action))
            lurd += info["last_lurd"]
            step += 1
            if term or trunc:
                return bool(info["solved"]), lurd, repeats, step

    solved, _, repeats, steps = play(agent.model)
    assert not solved and steps == 120 and repeats > 100
    solved, lurd, repeats, steps = play(RepeatAware(agent.model, rule=rule, seed=0))
    assert solved and verify(level, lurd).ok and steps < 120


def test_sb3_evaluate_policy_carries_the_memory():
    """SB3's own ``evaluate_policy`` passes the state back and flags episode starts, so the
    rule works there as in this project's harnesses (the same level 13 as above)."""
    import warnings

    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    import agents
    from soko_gym.levels import load_levels

    level = load_levels("boxoban-unfiltered-test")[12]
    agent = agents.pretrained("boxoban-move-v1", on_repeat="untried")
    kwargs = dict(levels=level, max_episode_steps=120, **agent.env_kwargs)
    venv = DummyVecEnv([lambda: Monitor(gym.make(agent.env_id, **kwargs))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        returns, lengths = evaluate_policy(
            agent.model, venv, n_eval_episodes=2, return_episode_rewards=True
        )
    # both solved: a lost episode runs 120 steps or ends on a deadlock with a negative return
    assert all(n < 120 for n in lengths) and all(r > 0 for r in returns)


def test_sampled_play_through_evaluate_repeats_with_the_same_seed():
    """Slots whose episode ended keep playing levels the env draws, and a sampling rule draws
    from one generator for all slots: with the env's resets seeded, the same seed gives the
    same recorded episodes (unseeded, the figures moved by about a point between runs)."""
    import agents
    from agents.playing.evaluation import evaluate
    from agents.playing.repeat import RepeatAware
    from soko_gym.levels import load_levels

    agent = agents.pretrained("boxoban-move")
    levels = load_levels("boxoban-unfiltered-test")[:30]

    def run():
        venv = soko_gym.make_vec(
            agent.env_id, 10, levels=levels, max_episode_steps=60, **agent.env_kwargs
        )
        return evaluate(RepeatAware(agent.model, rule="sample", seed=3), venv, 30).solved

    first = run()
    assert first.any() and (first == run()).all()
