"""Sokoban-Push-v0: one action = one box push; the player walks to the push side by itself."""

from __future__ import annotations

from soko_gym.engine.constants import MOVE_CHARS, PUSH_CHARS
from soko_gym.engine.step import ACT_ILLEGAL, push_mask, push_step
from soko_gym.envs.base import SokobanEnv


class SokobanPushEnv(SokobanEnv):
    """Sokoban with one box push per action; the walk to the box is automatic.

    ## Description
    Each action names a box (by its square) and a direction. The player walks to the square
    behind the box by a shortest path and pushes it one square. This removes the walking from
    the decision problem: episodes are as long as the push solution, and every legal action
    changes the box configuration.

    ## Action Space
    ``Discrete(4 * H * W)`` over the ``obs_size`` frame: ``action = square * 4 + direction``,
    ``square = row * W + col`` (the box's square in the observation), direction in the engine's
    order:

    | direction | box moves |
    |-----------|-----------|
    | 0         | up        |
    | 1         | down      |
    | 2         | left      |
    | 3         | right     |

    A push is legal when a box is on the square, the square beyond it is free floor and the
    player can reach the square behind it. An illegal action is a no-op that costs the step
    penalty and sets ``info["illegal_action"]`` (or raises with ``illegal_action="raise"``).
    ``action_masks()`` and ``info["action_mask"]`` give the legal actions.

    ## Observation Space
    As ``SokobanMoveEnv``: ``Box(0, 1, (C, H, W), uint8)`` planes wall, floor, goal, box, player
    (+ dead squares), or RGB images with ``obs_mode="rgb"``.

    ## Rewards
    As ``SokobanMoveEnv``, per action: the step penalty is charged once per push, whatever the
    walk; ``info["last_moves"]`` reports the moves the action made (walk + push).

    ## Episode End
    ``terminated`` when solved (or on a simple deadlock with ``deadlock_termination=True``);
    ``truncated`` after ``max_episode_steps`` pushes (200 when made with ``gym.make``).

    ## Information
    As ``SokobanMoveEnv``; ``last_lurd`` holds the walk and the push in LURD, so the
    concatenated ``last_lurd`` of an episode is its solution in standard notation.

    ## Arguments
    As ``SokobanMoveEnv`` without ``noop_action``.

    ## Registered Configurations
    ``Sokoban-Push-v0`` (Boxoban unfiltered train levels, 200 pushes).

    ## Version History
    v0: initial release.
    """

    def _n_actions(self) -> int:
        return 4 * self._n

    def _act(self, action: int) -> tuple[int, int, int, int, str, int]:
        square, d = divmod(action, 4)
        status, player, walk_len, delta = push_step(
            self._cells,
            self._box_at,
            self._box_pos,
            self._offsets,
            self._obs,
            self._player,
            square,
            d,
            self._stamps,
            self._stack,
            self._parent8,
            self._walk,
        )
        if status == ACT_ILLEGAL:
            return ACT_ILLEGAL, 0, 0, 0, "", -1
        self._player = int(player)
        lurd = "".join([MOVE_CHARS[x] for x in self._walk[:walk_len].tolist()]) + PUSH_CHARS[d]
        return int(status), int(walk_len) + 1, 1, int(delta), lurd, square + int(self._offsets[d])

    def _write_mask(self) -> None:
        push_mask(
            self._cells,
            self._box_at,
            self._box_pos,
            self._n_boxes,
            self._offsets,
            self._player,
            self._stamps,
            self._stack,
            self._mask,
        )
