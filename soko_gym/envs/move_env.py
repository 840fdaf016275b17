"""Sokoban-Move-v0: one action = one player step (Boxoban-compatible)."""

from __future__ import annotations

from typing import Any

from soko_gym.engine.actions import KIND_MOVE
from soko_gym.envs.base import DEFAULT_LEVELS, SokobanEnv


class SokobanMoveEnv(SokobanEnv):
    """Sokoban with one player step per action; stepping into a box pushes it.

    ## Description
    The classic Sokoban game as Boxoban and gym-sokoban users know it: the player walks one
    square per action and pushes a box by walking into it, if the square beyond the box is free
    floor. Put every box on a goal to win. Levels come from a bundled pack, a file, a list of
    ``Level`` objects or the level generator.

    ## Action Space
    ``Discrete(4)``, or ``Discrete(5)`` with ``noop_action=True``:

    | Num | Action                           |
    |-----|----------------------------------|
    | 0   | up (push the box above, if any)  |
    | 1   | down                             |
    | 2   | left                             |
    | 3   | right                            |
    | 4   | no-op (only with noop_action)    |

    A step into a wall, or into a box that cannot move, is illegal: a no-op that still costs the
    step penalty and sets ``info["illegal_action"]`` (or raises with ``illegal_action="raise"``).
    ``action_masks()`` and ``info["action_mask"]`` give the legal actions. With
    ``deadlock_mask=True`` they also leave out the actions whose push makes a simple deadlock
    (a box on a dead square or frozen off a goal), unless every legal action does; such an
    action stays legal when taken (a masked policy never takes it). ``deadlock_search=N``
    (> 0) also leaves out the pushes after which the exhaustion test
    (``soko_gym.engine.exhaust``), a complete push search storing at most N positions, runs
    dry without a solution: a proof that the level is lost, so no step of any solution is
    ever left out. Steps without a push keep the box set and are never searched. The same
    rule holds: when every action left is proven lost, none is left out. It costs up to one
    search per pushing action and step (Boxoban, N = 1024: about 0.4 ms a search in a trained
    agent's play; a search that runs out of its N positions, common in random play, costs
    more), and its first use compiles the search (a few seconds, cached after).

    ## Observation Space
    ``Box(0, 1, (C, H, W), uint8)``: planes wall, floor, goal, box, player (C = 5), plus dead
    squares with ``dead_plane=True`` (C = 6), plus the trail with ``trail_plane=True`` (C = 7, needs
    the dead plane): the square the player stood on one action before (its own square at a
    reset and after an action that did not move it). The trail is one step of memory, what
    stacking the last two frames would give, for a policy that must not step back and forth
    between two squares. Each level is centred in the ``obs_size`` frame
    (default: the largest level of the source); padding is in no plane. With ``obs_mode="rgb"``:
    ``Box(0, 255, (H * tile_size, W * tile_size, 3), uint8)`` images with the renderer's tiles.

    ## Rewards
    ``reward_scheme="boxoban"`` (default): -0.1 per step, +1 for a box pushed onto a goal, -1 for
    a box pushed off a goal, +10 when the level is solved. ``"sparse"``: 1 when solved, else 0.
    A ``RewardScheme(step, box_on, box_off, solved)`` sets other values; a callable receives a
    ``StepOutcome`` and returns the reward.

    ## Episode End
    ``terminated`` when every box is on a goal, or, with ``deadlock_termination=True``, when a
    push makes a simple deadlock: a box on a dead square or frozen off a goal
    (``info["deadlock"]``).
    ``truncated`` after ``max_episode_steps`` actions (120 when made with ``gym.make``).

    ## Information
    ``pushes``, ``moves`` (so far), ``boxes_on_goals``, ``solved``, ``level_index``,
    ``level_title``, ``illegal_action``, ``deadlock``, ``last_moves`` (moves of this action),
    ``last_lurd`` (its LURD letters), ``action_mask``.

    ## Arguments
    ``gym.make("Sokoban-Move-v0", levels=..., obs_size=None, obs_mode="planes",
    dead_plane=False, tile_size=8, reward_scheme="boxoban", illegal_action="noop",
    deadlock_termination=False, deadlock_mask=False, deadlock_search=0, level_order="random",
    generator_kwargs=None, noop_action=False, trail_plane=False, render_mode=None,
    max_episode_steps=120)``.
    ``levels``: a pack name or selection (``"microban:1-10"``), a path, a Level, a list of Level,
    or ``"generated"`` (with ``generator_kwargs`` for ``soko_gym.levels.generate_level``).
    ``level_order``: levels drawn from ``np_random`` ("random") or in order ("sequential");
    ``reset(options={"level_index": i})`` picks one. ``render_mode``: "ansi", "rgb_array",
    "human" (pygame, from the ``render`` extra).

    ## Registered Configurations
    ``Sokoban-Move-v0`` (Boxoban unfiltered train levels, 120 steps).

    ## Version History
    v0: initial release.
    """

    kind = KIND_MOVE

    def __init__(
        self,
        levels: Any = DEFAULT_LEVELS,
        *,
        noop_action: bool = False,
        trail_plane: bool = False,
        **kwargs: Any,
    ):
        self.noop_action = bool(noop_action)
        if trail_plane and not kwargs.get("dead_plane", False):
            raise ValueError(
                "trail_plane=True needs dead_plane=True (the trail is the seventh plane, after "
                "the dead squares)"
            )
        if trail_plane and kwargs.get("obs_mode", "planes") != "planes":
            raise ValueError("trail_plane=True is a plane: it needs obs_mode='planes'")
        self.trail_plane = bool(trail_plane)
        super().__init__(levels, **kwargs)
