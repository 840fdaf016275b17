"""Sokoban-Push-v0: one action = one box push; the player walks to the push side by itself."""

from __future__ import annotations

from soko_gym.engine.actions import KIND_PUSH
from soko_gym.envs.base import SokobanEnv


class SokobanPushEnv(SokobanEnv):
    """Sokoban with one box push per action; the walk to the box is automatic.

    ## Description
    Each action names a box (by its square) and a direction. The player walks to the square
    behind the box by a shortest path and pushes it one square. This removes the walking from
    the decision problem: episodes are as long as the push solution, and every legal action
    changes the box configuration.

    ## Action Space
    ``Discrete(4 * H * W)`` over the ``obs_size`` frame: ``action = square * 4 + direction``
    (``soko_gym.engine.actions.square_push_action``), ``square = row * W + col`` (the box's
    square in the observation), direction in the engine's order:

    | direction | box moves |
    |-----------|-----------|
    | 0         | up        |
    | 1         | down      |
    | 2         | left      |
    | 3         | right     |

    A push is legal when a box is on the square, the square beyond it is free floor and the
    player can reach the square behind it. An illegal action is a no-op that costs the step
    penalty and sets ``info["illegal_action"]`` (or raises with ``illegal_action="raise"``).
    ``action_masks()`` and ``info["action_mask"]`` give the legal actions; with
    ``deadlock_mask=True``, without the ones that make a simple deadlock, and with
    ``deadlock_search=N`` also without the ones a bounded search proves lose the level (both
    as ``SokobanMoveEnv``).

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

    kind = KIND_PUSH
