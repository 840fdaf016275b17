"""Learned agents, planner-backed experts, trajectory datasets and the benchmark."""

from typing import Any


def pretrained(
    name: str, *, symmetric: bool = False, on_repeat: str | None = None, deadlock_search: int = 0
) -> Any:
    """Load a pretrained agent shipped with the package (``agents.playing.zoo.pretrained``).

    ``agents.playing.zoo.available()`` lists them; each has a model card
    (``agents.playing.zoo.model_card``).
    ``symmetric=True`` plays it through all the board's symmetries, averaged;
    ``on_repeat="sample"`` (or ``"untried"``) keeps it from repeating itself on a board met
    before in the episode (``agents.playing.repeat``); ``deadlock_search=N`` makes its env mask the
    actions a push search of at most N positions proves lose the level.
    """
    from agents.playing.zoo import pretrained as load

    return load(name, symmetric=symmetric, on_repeat=on_repeat, deadlock_search=deadlock_search)
