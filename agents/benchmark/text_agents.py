"""Text agents in ``soko bench``: ``--agents text:MODULE:FUNCTION``, played by the reply harness.

``MODULE`` is imported (a module on ``sys.path``, e.g. ``my_llm`` for ``./my_llm.py`` run from
its folder) and ``FUNCTION``, a ``prompt -> reply`` callable, plays every level in
``Sokoban-Text-v0`` through ``soko_gym.envs.text_agent.play_text_agent``. Its rows sit in
``results.csv`` beside the planners' and RL agents': ``kind`` "agent", ``env_id``
"Sokoban-Text-v0", ``env_steps`` its replies and ``invalid_replies`` those not applied in full;
``--max-steps`` caps its replies per level (default 120). The RL agents' options (symmetries,
repeat rules, the env's deadlock search) do not apply to text agents.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

from soko_gym.envs.text_agent import TEXT_ENV_ID, TextAgent, episode_row, play_text_agent
from soko_gym.levels import Level

PREFIX = "text:"


def is_text_agent(spec: str) -> bool:
    """Whether an ``--agents`` entry names a text agent (``text:MODULE:FUNCTION``)."""
    return spec.startswith(PREFIX)


def load_text_agent(spec: str) -> TextAgent:
    """The callable ``text:MODULE:FUNCTION`` names.

    Raises:
        ValueError: naming the entry when it is malformed, the module cannot be imported, or
            the function is missing or not callable.
    """
    module_name, _, function_name = spec[len(PREFIX) :].rpartition(":")
    if not module_name or not function_name:
        raise ValueError(f"--agents {spec!r}: write text:MODULE:FUNCTION, e.g. text:my_llm:reply")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"--agents {spec!r}: cannot import {module_name!r} ({exc})") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ValueError(f"--agents {spec!r}: {module_name} has no callable {function_name!r}")
    return function


def text_agent_rows(
    specs: list[str],
    items: list[tuple[int, Level]],
    done: set[tuple[str, int, int]],
    episodes_per_level: int,
    max_replies: int | None,
) -> Iterator[tuple[str, str, int, int, dict[str, Any]]]:
    """(agent entry, env id, level number, episode, result) for every text agent's episode."""
    for spec in specs:
        agent = load_text_agent(spec)
        for number, level in items:
            for episode in range(episodes_per_level):
                if (spec, number, episode) in done:
                    continue
                played = play_text_agent(agent, level, max_replies=max_replies or 120)
                yield spec, TEXT_ENV_ID, number, episode, episode_row(played)


__all__ = ["PREFIX", "is_text_agent", "load_text_agent", "text_agent_rows"]
