"""The agents' side of ``soko bench``: each agent's episodes on each level, in the env it plays.

Every solution an agent finds is rebuilt as LURD from the env's ``info["last_lurd"]`` and
checked with ``soko_gym.levels.verify``. A level larger than the model's frame gets status
"does_not_fit".
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from agents.benchmark.config import BenchConfig
from agents.playing.models import LoadedAgent
from soko_gym.levels import Level


def _make_agent_env(agent: LoadedAgent, levels: list[Level], max_steps: int | None) -> Any:
    import gymnasium as gym

    import soko_gym  # noqa: F401  (registers the env ids)

    spec = gym.spec(agent.env_id)
    steps = max_steps if max_steps is not None else spec.max_episode_steps
    return gym.make(
        agent.env_id,
        levels=levels,
        level_order="sequential",
        max_episode_steps=steps,
        disable_env_checker=True,
        **agent.env_kwargs,
    )


def play_episode(
    agent: LoadedAgent, env: Any, level: Level, level_index: int, deterministic: bool, seed: int
) -> dict[str, Any]:
    """One agent episode on ``env``'s level ``level_index``; the agent's part of a CSV row.

    The LURD of the episode is the concatenation of ``info["last_lurd"]``; a solved episode
    counts only when ``soko_gym.levels.verify`` accepts that LURD on ``level``.
    """
    from soko_gym.levels import verify

    start = time.perf_counter()
    obs, info = env.reset(seed=seed, options={"level_index": level_index})
    steps = 0
    parts: list[str] = []
    status = "step_limit"
    state: Any = None  # a policy's memory (agents.playing.repeat), passed back each step
    while True:
        kwargs: dict[str, Any] = {"state": state, "episode_start": np.array([steps == 0])}
        if agent.masked:
            from sb3_contrib.common.maskable.utils import get_action_masks

            mask = get_action_masks(env)
            if not mask.any():
                status = "stuck"  # no legal action left (push and macro envs)
                break
            kwargs["action_masks"] = mask
        action, state = agent.model.predict(obs, deterministic=deterministic, **kwargs)
        obs, _, terminated, truncated, info = env.step(int(action))
        steps += 1
        parts.append(info.get("last_lurd", ""))
        if terminated or truncated:
            if info.get("solved"):
                status = "solved"
            elif info.get("deadlock"):
                status = "deadlock"
            break
    seconds = time.perf_counter() - start
    solved = status == "solved"
    pushes: int | str = ""
    moves: int | str = ""
    if solved:
        check = verify(level, "".join(parts))
        if check.ok:
            pushes, moves = check.pushes, check.moves
        else:
            solved, status = False, "verify_failed"
    return {
        "solved": solved,
        "status": status,
        "pushes": pushes,
        "moves": moves,
        "seconds": round(seconds, 6),
        "env_steps": steps,
        "nodes": "",
        "lurd": "".join(parts) if solved else "",  # for --record; not a CSV column
    }


def _warm_up_agent(agent: LoadedAgent, env: Any) -> None:
    """One untimed prediction, so torch's first-call overhead is not in the first episode."""
    obs, _ = env.reset(options={"level_index": 0})
    kwargs: dict[str, Any] = {}
    if agent.masked:
        kwargs["action_masks"] = env.get_wrapper_attr("action_masks")()
    agent.model.predict(obs, deterministic=True, **kwargs)


def agent_rows(
    config: BenchConfig,
    agents: list[LoadedAgent],
    items: list[tuple[int, Level]],
    done: set[tuple[str, int, int]],
) -> Iterator[tuple[str, str, int, int, dict[str, Any]]]:
    """(agent path, env id, level number, episode, result) for every agent, level, episode."""
    from soko_gym.levels.frame import level_fits

    deterministic = config.episodes_per_level == 1
    for path, agent in zip(config.agents, agents, strict=True):
        if not deterministic:
            agent.model.set_random_seed(config.seed)
        size = agent.env_kwargs.get("obs_size")
        if isinstance(size, int):
            size = (size, size)
        fits = [(n, lv) for n, lv in items if size is None or level_fits(lv, size)]
        env = _make_agent_env(agent, [lv for _, lv in fits], config.max_steps) if fits else None
        index_of = {n: i for i, (n, _) in enumerate(fits)}
        if env is not None:
            _warm_up_agent(agent, env)
        try:
            for number, level in items:
                for episode in range(config.episodes_per_level):
                    if (path, number, episode) in done:
                        continue
                    if number not in index_of:
                        res = {
                            "solved": False,
                            "status": "does_not_fit",
                            "pushes": "",
                            "moves": "",
                            "seconds": 0.0,
                            "env_steps": 0,
                            "nodes": "",
                        }
                    else:
                        seed = config.seed + 1000 * episode + number
                        res = play_episode(agent, env, level, index_of[number], deterministic, seed)
                    yield path, agent.env_id, number, episode, res
        finally:
            if env is not None:
                env.close()
