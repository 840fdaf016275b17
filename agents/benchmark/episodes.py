"""The agents' side of ``soko bench``: each agent's episodes on each level, in the env it plays.

Every episode is played by THE play loop (``agents.playing.loop``; ``EpisodeRecorder`` is
what the benchmark records), with a step budget per episode; every solution an agent finds is
rebuilt as LURD from the env's ``info["last_lurd"]`` and checked with
``soko_gym.levels.verify``. A level larger than the model's frame gets status
"does_not_fit".
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from agents.benchmark.config import BenchConfig
from agents.playing.loop import End, Recorder, Step, play
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


class EpisodeRecorder(Recorder):
    """What ``soko bench`` records of an agent's episode: its LURD, steps and how it ended."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.steps = 0
        self.status = "step_limit"

    def step(self, step: Step) -> None:
        """Keep the step's LURD (``info["last_lurd"]``)."""
        self.parts.append(str(step.info["last_lurd"][0]) if "last_lurd" in step.info else "")

    def end(self, end: End) -> None:
        """The episode's status: solved, deadlock, stuck (no legal action) or step_limit."""
        self.steps = end.length
        if end.stuck:
            self.status = "stuck"  # no legal action left (push and macro envs)
        elif end.info["solved"][end.slot]:
            self.status = "solved"
        elif "deadlock" in end.info and end.info["deadlock"][end.slot]:
            self.status = "deadlock"


def play_episode(
    agent: LoadedAgent, env: Any, level: Level, level_index: int, deterministic: bool, seed: int
) -> dict[str, Any]:
    """One agent episode on ``env``'s level ``level_index``; the agent's part of a CSV row.

    Played by THE play loop (``agents.playing.loop.play``, the env a batch of one); a masked
    agent's episode ends "stuck" when no action is legal. The LURD of the episode is the
    concatenation of ``info["last_lurd"]``; a solved episode counts only when
    ``soko_gym.levels.verify`` accepts that LURD on ``level``.
    """
    from soko_gym.levels import verify

    record = EpisodeRecorder()
    start = time.perf_counter()
    play(
        agent.model,
        env,
        [level_index],
        record,
        seed=seed,
        deterministic=deterministic,
        masked=agent.masked,
        end_stuck=True,
    )
    seconds = time.perf_counter() - start
    status, lurd = record.status, "".join(record.parts)
    solved = status == "solved"
    pushes: int | str = ""
    moves: int | str = ""
    if solved:
        check = verify(level, lurd)
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
        "env_steps": record.steps,
        "nodes": "",
        "lurd": lurd if solved else "",  # for --record; not a CSV column
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
    paths: list[str],
    agents: list[LoadedAgent],
    items: list[tuple[int, Level]],
    done: set[tuple[str, int, int]],
) -> Iterator[tuple[str, str, int, int, dict[str, Any]]]:
    """(agent path, env id, level number, episode, result) for every agent, level, episode.

    ``paths`` are the ``--agents`` entries ``agents`` were loaded from (text agents left out).
    """
    from soko_gym.levels.frame import level_fits, parse_obs_size

    deterministic = config.episodes_per_level == 1
    for path, agent in zip(paths, agents, strict=True):
        if not deterministic:
            agent.model.set_random_seed(config.seed)
        size = agent.env_kwargs.get("obs_size")
        size = None if size is None else parse_obs_size(size)
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
