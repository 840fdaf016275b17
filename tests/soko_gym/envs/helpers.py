"""Shared helpers of the env tests."""

import numpy as np


def random_legal_action(env, rng):
    """A uniformly random legal action, or any action when none is legal."""
    mask = env.unwrapped.action_masks()
    legal = np.flatnonzero(mask)
    return int(rng.choice(legal)) if legal.size else int(rng.integers(mask.size))


def rollout(env, seed, n_steps, illegal_every=0):
    """(observations, rewards, terminated, truncated, infos) of a seeded random rollout."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs, 0.0, False, False, info)]
    for t in range(n_steps):
        if illegal_every and t % illegal_every == illegal_every - 1:
            action = int(rng.integers(env.action_space.n))
        else:
            action = random_legal_action(env, rng)
        obs, reward, term, trunc, info = env.step(action)
        trace.append((obs, reward, term, trunc, info))
        if term or trunc:
            obs, info = env.reset()
            trace.append((obs, 0.0, False, False, info))
    return trace


def same_trace(a, b):
    """True when two rollouts are identical step for step."""
    if len(a) != len(b):
        return False
    for (o1, r1, te1, tr1, i1), (o2, r2, te2, tr2, i2) in zip(a, b, strict=True):
        if not (np.array_equal(o1, o2) and r1 == r2 and te1 == te2 and tr1 == tr2):
            return False
        for key in ("level_index", "moves", "pushes", "last_lurd", "illegal_action"):
            if i1[key] != i2[key]:
                return False
        if not np.array_equal(i1["action_mask"], i2["action_mask"]):
            return False
    return True
