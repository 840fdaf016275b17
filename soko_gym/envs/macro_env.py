"""Sokoban-Macro-v0: one action = one box to a target square by fewest pushes (FESS macro move)."""

from __future__ import annotations

from typing import Any

import numpy as np

from soko_gym.engine.constants import DIST_DTYPE, MOVE_CHARS, PUSH_CHARS, SQUARE_DTYPE
from soko_gym.engine.step import ACT_ILLEGAL, ACT_PUSH, macro_mask, macro_plan, push_step
from soko_gym.envs.base import DEFAULT_LEVELS, SokobanEnv


class SokobanMacroEnv(SokobanEnv):
    """Sokoban with one macro move per action: a box to any square its push paths reach.

    ## Description
    The "macro move" of feature-space search (FESS): an action names a box's square and a
    target square; the box travels there by the fewest pushes with the other boxes standing
    still, and the player walks between pushes by shortest paths. Episodes are a handful of
    decisions long, which suits planning-style agents.

    ## Action Space
    ``Discrete((H * W) ** 2)`` over the ``obs_size`` frame:
    ``action = from_square * (H * W) + to_square``, squares numbered ``row * W + col``.
    Legal when a box stands on ``from_square`` and its push paths reach ``to_square``
    (``to_square != from_square``). An illegal action is a no-op that costs the step penalty and
    sets ``info["illegal_action"]`` (or raises with ``illegal_action="raise"``).
    ``action_masks()`` and ``info["action_mask"]`` give the legal actions; computing the mask
    costs one push-path search per box.

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

    def __init__(self, levels: Any = DEFAULT_LEVELS, **kwargs: Any) -> None:
        super().__init__(levels, **kwargs)
        n = self._n
        self._dist = np.empty(4 * n, dtype=DIST_DTYPE)
        self._parent = np.empty(4 * n, dtype=SQUARE_DTYPE)
        self._queue = np.empty(4 * n, dtype=SQUARE_DTYPE)
        self._plan = np.empty(4 * n, dtype=np.int8)
        self._last_pushes = 0

    def _n_actions(self) -> int:
        return self._n * self._n

    def _act(self, action: int) -> tuple[int, int, int, int, str, int]:
        src, dst = divmod(action, self._n)
        k = macro_plan(
            self._cells,
            self._box_at,
            self._offsets,
            self._player,
            src,
            dst,
            self._stamps,
            self._stack,
            self._dist,
            self._parent,
            self._queue,
            self._plan,
        )
        if k < 0:
            return ACT_ILLEGAL, 0, 0, 0, "", -1
        parts = []
        moves = delta = 0
        sq = src
        for d in self._plan[:k].tolist():
            _, player, walk_len, gd = push_step(
                self._cells,
                self._box_at,
                self._box_pos,
                self._offsets,
                self._obs,
                self._player,
                sq,
                d,
                self._stamps,
                self._stack,
                self._parent8,
                self._walk,
            )
            self._player = int(player)
            parts.extend(MOVE_CHARS[x] for x in self._walk[:walk_len].tolist())
            parts.append(PUSH_CHARS[d])
            moves += int(walk_len) + 1
            delta += int(gd)
            sq += int(self._offsets[d])
        self._last_pushes = int(k)
        return ACT_PUSH, moves, int(k), delta, "".join(parts), dst

    def _write_mask(self) -> None:
        macro_mask(
            self._cells,
            self._box_at,
            self._box_pos,
            self._n_boxes,
            self._offsets,
            self._player,
            self._stamps,
            self._stack,
            self._dist,
            self._parent,
            self._queue,
            self._mask,
        )

    def _info(self, illegal: bool, deadlock: bool, last_moves: int, last_lurd: str) -> dict:
        info = super()._info(illegal, deadlock, last_moves, last_lurd)
        info["last_pushes"] = self._last_pushes if last_lurd else 0
        return info
