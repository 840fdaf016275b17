"""Learned agents, planner-backed experts, trajectory datasets and the benchmark."""

from typing import Any


def pretrained(name: str, *, symmetric: bool = False, on_repeat: str | None = None) -> Any:
    """Load a pretrained agent shipped with the package (``agents.zoo.pretrained``).

    ``agents.zoo.available()`` lists them; each has a model card (``agents.zoo.model_card``).
    ``symmetric=True`` plays it through all the board's symmetries, averaged;
    ``on_repeat="sample"`` (or ``"untried"``) keeps it from repeating itself on a board met
    before in the episode (``agents.repeat``).
    """
    from agents.zoo import pretrained as load

    return load(name, symmetric=symmetric, on_repeat=on_repeat)
