"""Sokoban-Macro-v0: one action = one box to a target square by fewest pushes (FESS macro move)."""

from __future__ import annotations

from soko_gym.engine.actions import KIND_MACRO
from soko_gym.envs.base import SokobanEnv


class SokobanMacroEnv(SokobanEnv):
    """Sokoban with one macro move per action: a box to any square its push paths reach.

    ## Description
    The "macro move" of feature-space search (FESS): an action names a box's square and a
    target square; the box travels there by the fewest pushes with the other boxes standing
    still, and the player walks between pushes by shortest paths. Episodes are a handful of
    decisions long, which suits planning-style agents.

    ## Action Space
    ``Discrete((H * W) ** 2)`` over the ``obs_size`` frame:
    ``action = from_square * (H * W) + to_square`` (``soko_gym.engine.actions.macro_action``),
    squares numbered ``row * W + col``.
    Legal when a box stands on ``from_square`` and its push paths reach ``to_square``
    (``to_square != from_square``). An illegal action is a no-op that costs the step penalty and
    sets ``info["illegal_action"]`` (or raises with ``illegal_action="raise"``).
    ``action_masks()`` and ``info["action_mask"]`` give the legal actions; computing the mask
    costs one push-path search per box. With ``deadlock_mask=True`` the mask leaves out the
    moves that end in a simple deadlock, and with ``deadlock_search=N`` also the ones a bounded
    search proves lose the level, the player left where the move leaves it (both as
    ``SokobanMoveEnv``; on large levels a position can have hundreds of macro moves, each a
    search).

    ## Observation Space
    As ``SokobanMoveEnv``.

    ## Rewards
    As ``SokobanMoveEnv``, per action: the step penalty once per macro move; each box pushed onto
    or off a goal counts (net over the move: a box passing over a goal on its way counts 0).

    ## Episode End
    ``terminated`` when solved (or on a simple deadlock with ``deadlock_termination=True``);
    ``truncated`` after ``max_episode_steps`` macro moves (100 when made with ``gym.make``).

    ## Information
    As ``SokobanMoveEnv``; ``last_moves`` counts the walks and pushes of the move and
    ``last_lurd`` spells them out; ``last_pushes`` counts its pushes.

    ## Arguments
    As ``SokobanMoveEnv`` without ``noop_action``.

    ## Registered Configurations
    ``Sokoban-Macro-v0`` (Boxoban unfiltered train levels, 100 macro moves).

    ## Version History
    v0: initial release.
    """

    kind = KIND_MACRO

    def _info(
        self, illegal: bool, deadlock: bool, last_moves: int, last_pushes: int, last_lurd: str
    ) -> dict:
        info = super()._info(illegal, deadlock, last_moves, last_pushes, last_lurd)
        info["last_pushes"] = last_pushes
        return info
