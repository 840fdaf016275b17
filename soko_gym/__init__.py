"""soko-gym: a fast Sokoban engine, Gymnasium environments, planners and agents.

Importing the package stays light: the public helpers below load their modules on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_LAZY = {
    "Level": "soko_gym.levels",
    "load_levels": "soko_gym.levels",
    "packs": "soko_gym.levels",
    "pack_info": "soko_gym.levels",
    "verify": "soko_gym.levels",
    "pushes_to_lurd": "soko_gym.levels",
    "lurd_to_pushes": "soko_gym.levels",
    "LevelFormatError": "soko_gym.errors",
    "SolutionError": "soko_gym.errors",
}
_SUBMODULES = ("engine", "levels", "errors", "cli")

__all__ = [
    "Level",
    "LevelFormatError",
    "SolutionError",
    "__version__",
    "load_levels",
    "lurd_to_pushes",
    "pack_info",
    "packs",
    "pushes_to_lurd",
    "verify",
]

if TYPE_CHECKING:
    from soko_gym.errors import LevelFormatError, SolutionError
    from soko_gym.levels import (
        Level,
        load_levels,
        lurd_to_pushes,
        pack_info,
        packs,
        pushes_to_lurd,
        verify,
    )


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"soko_gym.{name}")
    raise AttributeError(f"module 'soko_gym' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, *_SUBMODULES])
