"""soko-gym: a fast Sokoban engine, Gymnasium environments, planners and agents.

Importing the package registers the environments with string entry points and loads nothing
else: the public helpers below import their modules on first use.
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
    "make_vec": "soko_gym.envs.vector",
    "parse_reply": "soko_gym.envs.text_prompt",
    "parse_moves": "soko_gym.envs.text_prompt",
    "make_prompt": "soko_gym.envs.text_prompt",
}
_SUBMODULES = ("engine", "levels", "errors", "cli", "envs")

# id -> (module:class of the env, of its native vector env, default episode limit, kwargs)
ENV_IDS = {
    "Sokoban-Push-v0": ("push_env:SokobanPushEnv", "vector:SokobanPushVectorEnv", 200, {}),
    "Sokoban-Macro-v0": ("macro_env:SokobanMacroEnv", "vector:SokobanMacroVectorEnv", 100, {}),
    "Sokoban-Move-v0": ("move_env:SokobanMoveEnv", "vector:SokobanMoveVectorEnv", 120, {}),
}
# the same envs on fresh generated 10x10 levels with 4 boxes (generator_kwargs to change that)
ENV_IDS.update(
    {
        env_id.replace("-v0", "-Gen-v0"): (entry, vector_entry, limit, {"levels": "generated"})
        for env_id, (entry, vector_entry, limit, _) in list(ENV_IDS.items())
    }
)
# text in, text out, for language-model agents (not in ENV_IDS: those are the array-space envs;
# no native vector env, gymnasium's sync one works)
TEXT_ENV_IDS = {"Sokoban-Text-v0": ("text_env:SokobanTextEnv", None, 120, {})}


def _register() -> None:
    from gymnasium.envs.registration import register, registry

    for env_id, (entry, vector_entry, limit, kwargs) in {**ENV_IDS, **TEXT_ENV_IDS}.items():
        if env_id in registry:
            continue
        register(
            id=env_id,
            entry_point=f"soko_gym.envs.{entry}",
            vector_entry_point=f"soko_gym.envs.{vector_entry}" if vector_entry else None,
            max_episode_steps=limit,
            kwargs=kwargs,
        )


_register()

__all__ = [
    "Level",
    "LevelFormatError",
    "SolutionError",
    "__version__",
    "load_levels",
    "lurd_to_pushes",
    "make_prompt",
    "make_vec",
    "pack_info",
    "parse_moves",
    "parse_reply",
    "packs",
    "pushes_to_lurd",
    "verify",
]

if TYPE_CHECKING:
    from soko_gym.envs.text_prompt import make_prompt, parse_moves, parse_reply
    from soko_gym.envs.vector import make_vec
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
