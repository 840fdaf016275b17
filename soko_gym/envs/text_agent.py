"""Play a text agent (any ``prompt -> reply`` callable) on levels, over several turns.

The harness behind ``soko bench --agents text:MODULE:FUNCTION``: each turn the agent gets
``make_prompt(observation)`` (``soko_gym.envs.text_prompt.PROMPT_TEMPLATE``: the rules, the
legend, the board, the last reply's error), its reply is reduced to moves by ``parse_reply``
and stepped in ``Sokoban-Text-v0``; a reply without moves is stepped as it is, so the env
answers it as invalid. The episode's LURD (the moves made, pushes uppercase) is checked with
the engine's verifier before a level counts as solved. An agent that keeps a conversation
keeps it itself: it is called with one prompt per turn, the turns of a level in order.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from soko_gym.envs.text_prompt import PROMPT_TEMPLATE, make_prompt, parse_reply
from soko_gym.levels import Level, verify

TextAgent = Callable[[str], str]
TEXT_ENV_ID = "Sokoban-Text-v0"


@dataclass(frozen=True)
class TextEpisode:
    """How a text agent's episode on one level went.

    Attributes:
        solved: the moves made solve the level (checked by ``soko_gym.levels.verify``).
        status: "solved", "deadlock", "reply_limit", "move_limit" or "error: ..." (the agent
            raised or returned something other than a string; the episode ends there).
        replies: the agent's replies (turns played).
        invalid_replies: replies not applied in full (unreadable, or a move that cannot be made).
        moves: player moves made; pushes: those that pushed a box.
        lurd: the moves made, in LURD (pushes uppercase).
        seconds: wall time of the episode, the agent's time included.
    """

    solved: bool
    status: str
    replies: int
    invalid_replies: int
    moves: int
    pushes: int
    lurd: str
    seconds: float


def play_text_agent(
    agent: TextAgent,
    level: Level | str,
    *,
    max_replies: int = 120,
    max_moves: int | None = None,
    coords: bool = False,
    template: str = PROMPT_TEMPLATE,
    deadlock_termination: bool = False,
) -> TextEpisode:
    """Play ``agent`` on ``level`` until it is solved or a limit is reached.

    Args:
        agent: called with each turn's prompt; returns the reply (a string).
        level: a ``Level`` or its XSB text.
        max_replies: turns before the episode is cut ("reply_limit").
        max_moves: moves before it is cut ("move_limit"); None: no limit.
        coords: number the board's rows and columns in the prompt.
        template: the prompt template (``make_prompt``'s fields).
        deadlock_termination: end the episode when a push makes a simple deadlock.
    """
    from soko_gym.envs.text_env import SokobanTextEnv

    if isinstance(max_replies, bool) or not isinstance(max_replies, int) or max_replies < 1:
        raise ValueError(f"max_replies must be a positive int, got {max_replies!r}")
    if isinstance(level, str):
        level = Level.from_xsb(level)
    env = SokobanTextEnv(
        [level],
        coords=coords,
        max_moves=max_moves,
        deadlock_termination=deadlock_termination,
        level_order="sequential",
    )
    start = time.perf_counter()
    observation, info = env.reset(options={"level_index": 0})
    replies = invalid = 0
    lurd: list[str] = []
    status = "reply_limit"
    while replies < max_replies:
        try:
            reply = agent(make_prompt(observation, template=template))
        except Exception as exc:  # the agent's failure ends its episode, not the benchmark
            status = f"error: {type(exc).__name__}: {exc}"[:200]
            break
        replies += 1
        if not isinstance(reply, str):
            status = f"error: the agent returned a {type(reply).__name__}, not a string"
            break
        moves = parse_reply(reply)
        observation, _, terminated, truncated, info = env.step(reply if moves is None else moves)
        lurd.append(info["last_lurd"])
        invalid += bool(info["invalid"])
        if terminated:
            status = "solved" if info["solved"] else "deadlock"
            break
        if truncated:
            status = "move_limit"
            break
    env.close()
    seconds = time.perf_counter() - start
    path = "".join(lurd)
    solved = status == "solved"
    if solved and not verify(level, path).ok:
        solved, status = False, "verify_failed"
    return TextEpisode(
        solved=solved,
        status=status,
        replies=replies,
        invalid_replies=invalid,
        moves=len(path),
        pushes=sum(ch.isupper() for ch in path),
        lurd=path,
        seconds=seconds,
    )


def episode_row(episode: TextEpisode) -> dict[str, Any]:
    """The episode as a ``soko bench`` CSV row's result part (``env_steps``: replies)."""
    return {
        "solved": episode.solved,
        "status": episode.status,
        "pushes": episode.pushes if episode.solved else "",
        "moves": episode.moves if episode.solved else "",
        "seconds": round(episode.seconds, 6),
        "env_steps": episode.replies,
        "nodes": "",
        "invalid_replies": episode.invalid_replies,
        "lurd": episode.lurd if episode.solved else "",
    }


__all__ = ["TEXT_ENV_ID", "TextAgent", "TextEpisode", "episode_row", "play_text_agent"]
