"""RLlib's PPO with action masks (``soko train --algo rllib-ppo``): ``ppo`` and its runner ``env``.

Checkpoints saved before this package existed pickle their module class as
``agents.rllib.MaskedBoardModule``; the name resolves here (lazily: importing the package
loads neither Ray nor torch), so they still load.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "MaskedBoardModule":
        from agents.rllib.ppo import MaskedBoardModule

        return MaskedBoardModule
    raise AttributeError(f"module 'agents.rllib' has no attribute {name!r}")
