"""Pretrained agents shipped with the package: ``agents.pretrained("boxoban-push")``.

Each agent is a folder under ``agents/pretrained_models/``: ``model.zip`` (an SB3 model saved
by ``soko train``), its ``model.json`` sidecar (env id, env arguments, training command) and
``MODEL_CARD.md`` (data, command, training time, solve rates). Anywhere a model path is taken
(``soko bench --agents``, ``agents.playing.models.load_model``), ``pretrained:NAME`` names one
of them, so an agent can be benchmarked against the planners without training anything. The
folder stays ``agents/pretrained_models/`` (the package data ``pyproject.toml`` ships).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

PREFIX = "pretrained:"
_FOLDER = "pretrained_models"


def _root() -> Path:
    return Path(str(resources.files("agents").joinpath(_FOLDER)))


def available() -> list[str]:
    """Names of the shipped agents, sorted."""
    root = _root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "model.zip").is_file())


def model_path(name: str) -> Path:
    """The ``model.zip`` of shipped agent ``name`` (with or without ``pretrained:``).

    Raises:
        ValueError: naming the agent and the ones shipped, for an unknown name.
    """
    bare = name[len(PREFIX) :] if name.startswith(PREFIX) else name
    if bare not in available():
        raise ValueError(f"no pretrained agent {bare!r}; shipped: {', '.join(available())}")
    return _root() / bare / "model.zip"


def model_card(name: str) -> str:
    """The model card (markdown) of shipped agent ``name``."""
    return (model_path(name).parent / "MODEL_CARD.md").read_text(encoding="utf-8")


def resolve(path: str | Path) -> Path:
    """``path`` itself, or the shipped model a ``pretrained:NAME`` string names."""
    if isinstance(path, str) and path.startswith(PREFIX):
        return model_path(path)
    return Path(path)


def pretrained(
    name: str, *, symmetric: bool = False, on_repeat: str | None = None, deadlock_search: int = 0
) -> Any:
    """Load shipped agent ``name`` with the env it plays in (``agents.playing.models.LoadedAgent``).

    Needs only the ``rl`` extra (stable-baselines3, sb3-contrib and torch).

    Args:
        name: a shipped agent (``available()``).
        symmetric: play through every symmetry of the board at once, the log-probabilities
            averaged (``agents.playing.symmetry.SymmetryAveraged``: 8 forward passes a step).
        on_repeat: on a board met before in the episode, "sample" from the policy or take
            its most likely "untried" action (``agents.playing.repeat.RepeatAware``); None plays
            greedily throughout.
        deadlock_search: with N > 0, its ``env_kwargs`` ask for the env's
            ``deadlock_search=N``: the actions a complete push search of at most N positions
            proves lose the level are masked (the best play measured, model card).

    Raises:
        ValueError: for an unknown name or a negative ``deadlock_search``.

    Example:
        >>> agent = pretrained("boxoban-push")  # doctest: +SKIP
        >>> env = gym.make(agent.env_id, levels="boxoban-unfiltered-test", **agent.env_kwargs)
    """
    from agents.playing.models import load_agent

    bad = isinstance(deadlock_search, bool) or not isinstance(deadlock_search, int)
    if bad or deadlock_search < 0:
        raise ValueError(f"deadlock_search must be an int >= 0, got {deadlock_search!r}")
    agent = load_agent(model_path(name))
    if deadlock_search > 0:
        agent.env_kwargs["deadlock_search"] = deadlock_search
    if symmetric:
        from agents.playing.symmetry import symmetry_averaged

        agent = symmetry_averaged(agent)
    if on_repeat is not None:
        from agents.playing.repeat import repeat_aware

        agent = repeat_aware(agent, on_repeat)
    return agent
