"""The envs' moves on a framed board: a step, a push after a walk, their masks, the planes.

The environments frame every level in a fixed ``H x W`` grid, so a square index is also the
cell index of an observation plane. These kernels are the move and push kinds' building
blocks of the per-env step (``engine.step``); the macro kind's are in ``engine.macro``.

Observation ``obs``: uint8[C * n_cells], plane ``p`` at ``[p * n_cells, (p + 1) * n_cells)`` in the
order of ``constants.PLANE_*``. Table cells (``cells``) carry the engine flags plus ``DEAD`` and
``DRAWN_WALL`` for the static planes.
"""

from __future__ import annotations

from numba import njit

from soko_gym.engine.actions import square_push_action
from soko_gym.engine.constants import (
    DEAD,
    DRAWN_WALL,
    FLOOR,
    GOAL,
    PLANE_BOX,
    PLANE_DEAD,
    PLANE_FLOOR,
    PLANE_GOAL,
    PLANE_PLAYER,
    PLANE_TRAIL,
    PLANE_WALL,
)
from soko_gym.engine.reach import player_path, reach_player

# What an action did (returned by the step kernels).
ACT_MOVE = 0  # the player stepped (or walked) without pushing
ACT_PUSH = 1  # at least one box moved
ACT_ILLEGAL = 2  # nothing changed
ACT_NOOP = 3  # the explicit no-op action of the move env


@njit(cache=True, nogil=True)
def write_planes(cells, box_pos, n_boxes, player, obs):
    """Write every observation plane of one position.

    Args:
        cells: uint8[n_cells] table cell flags (engine flags plus DEAD and DRAWN_WALL).
        box_pos: int32[>= n_boxes] box squares.
        n_boxes: number of boxes in use.
        player: player square.
        obs: uint8[C * n_cells] receives the planes; C is 5, 6 with the dead-square plane, 7
            with the trail plane too (at a reset the trail is the player's own square).
    """
    n = cells.shape[0]
    n_planes = obs.shape[0] // n
    obs[:] = 0
    for sq in range(n):
        c = cells[sq]
        if c & DRAWN_WALL:
            obs[PLANE_WALL * n + sq] = 1
        if c & FLOOR:
            obs[PLANE_FLOOR * n + sq] = 1
            if c & GOAL:
                obs[PLANE_GOAL * n + sq] = 1
            if n_planes > PLANE_DEAD and c & DEAD:
                obs[PLANE_DEAD * n + sq] = 1
    for b in range(n_boxes):
        obs[PLANE_BOX * n + box_pos[b]] = 1
    obs[PLANE_PLAYER * n + player] = 1
    if n_planes > PLANE_TRAIL:
        obs[PLANE_TRAIL * n + player] = 1


@njit(cache=True, nogil=True)
def mark_trail(obs, n, player):
    """Set the trail plane, when ``obs`` has one, to the square the player stands on now.

    Called before each Move-env action, so the plane shows where the player stood one action
    before (its own square after an action that did not move it): one step of memory in the
    observation, as frame stacking gives, for policies that would otherwise step back and forth.
    """
    if obs.shape[0] // n > PLANE_TRAIL:
        obs[PLANE_TRAIL * n : (PLANE_TRAIL + 1) * n] = 0
        obs[PLANE_TRAIL * n + player] = 1


@njit(cache=True, nogil=True)
def place_boxes(box_at, box_pos, start_boxes, n_boxes):
    """Reset occupancy to a start position.

    Args:
        box_at: int16[n_cells] receives the box index per square, -1 for none.
        box_pos: int32[>= n_boxes] receives the box squares.
        start_boxes: int32[>= n_boxes] start squares.
        n_boxes: number of boxes.

    Returns:
        Number of boxes.
    """
    box_at[:] = -1
    for b in range(n_boxes):
        box_pos[b] = start_boxes[b]
        box_at[start_boxes[b]] = b
    return n_boxes


@njit(cache=True, nogil=True)
def count_on_goal(cells, box_pos, n_boxes):
    """Number of boxes standing on goals (``cells``: uint8[n_cells], ``box_pos``: int32[>= n])."""
    k = 0
    for b in range(n_boxes):
        if cells[box_pos[b]] & GOAL:
            k += 1
    return k


@njit(cache=True, nogil=True)
def _move_box(cells, box_at, box_pos, obs, b, src, dst):
    """Move box ``b`` from ``src`` to ``dst`` and its plane bit; returns the on-goal change."""
    n = cells.shape[0]
    box_at[src] = -1
    box_at[dst] = b
    box_pos[b] = dst
    obs[PLANE_BOX * n + src] = 0
    obs[PLANE_BOX * n + dst] = 1
    return (1 if cells[dst] & GOAL else 0) - (1 if cells[src] & GOAL else 0)


@njit(cache=True, nogil=True)
def _move_player(obs, n, src, dst):
    obs[PLANE_PLAYER * n + src] = 0
    obs[PLANE_PLAYER * n + dst] = 1


@njit(cache=True, nogil=True)
def move_step(cells, box_at, box_pos, offsets, obs, player, d):
    """One player step in direction ``d``; a box in front is pushed when the square beyond is free.

    Args:
        cells: uint8[n_cells] table cell flags.
        box_at: int16[n_cells] box index per square; updated.
        box_pos: int32[n_boxes] box squares; updated.
        offsets: int32[4] flat index step per direction (up, down, left, right).
        obs: uint8[C * n_cells] observation planes; updated.
        player: player square.
        d: direction 0..3.

    Returns:
        (ACT_* status, new player square, change in boxes on goal, square the box moved to or -1).
    """
    n = cells.shape[0]
    nxt = player + offsets[d]
    if not (cells[nxt] & FLOOR):
        return ACT_ILLEGAL, player, 0, -1
    b = box_at[nxt]
    if b < 0:
        _move_player(obs, n, player, nxt)
        return ACT_MOVE, nxt, 0, -1
    dest = nxt + offsets[d]
    if not (cells[dest] & FLOOR) or box_at[dest] >= 0:
        return ACT_ILLEGAL, player, 0, -1
    delta = _move_box(cells, box_at, box_pos, obs, b, nxt, dest)
    _move_player(obs, n, player, nxt)
    return ACT_PUSH, nxt, delta, dest


@njit(cache=True, nogil=True)
def move_mask(cells, box_at, offsets, player, mask):
    """Write which of the four steps change the position (``mask``: bool[>= 4]; rest untouched)."""
    for d in range(4):
        nxt = player + offsets[d]
        ok = False
        if cells[nxt] & FLOOR:
            if box_at[nxt] < 0:
                ok = True
            else:
                dest = nxt + offsets[d]
                ok = (cells[dest] & FLOOR) != 0 and box_at[dest] < 0
        mask[d] = ok


@njit(cache=True, nogil=True)
def push_step(cells, box_at, box_pos, offsets, obs, player, square, d, stamps, queue, parent, walk):
    """Walk to the push side of the box on ``square`` by a shortest path and push it once.

    Args:
        cells, box_at, box_pos, offsets, obs: as in ``move_step``.
        player: player square.
        square: square of the box to push.
        d: direction the box moves.
        stamps: uint32[n_cells + 1] stamp buffer (scratch).
        queue: int32[n_cells] scratch.
        parent: int8[n_cells] scratch.
        walk: int8[n_cells] receives the directions of the walk before the push.

    Returns:
        (ACT_PUSH or ACT_ILLEGAL, new player square, walk length, change in boxes on goal).
    """
    n = cells.shape[0]
    if square < 0 or square >= n:
        return ACT_ILLEGAL, player, 0, 0
    b = box_at[square]
    if b < 0:
        return ACT_ILLEGAL, player, 0, 0
    dest = square + offsets[d]
    if not (cells[dest] & FLOOR) or box_at[dest] >= 0:
        return ACT_ILLEGAL, player, 0, 0
    stand = square - offsets[d]
    if not (cells[stand] & FLOOR):
        return ACT_ILLEGAL, player, 0, 0
    k = player_path(box_at, offsets, player, stand, stamps, queue, parent, walk)
    if k < 0:
        return ACT_ILLEGAL, player, 0, 0
    delta = _move_box(cells, box_at, box_pos, obs, b, square, dest)
    _move_player(obs, n, player, square)
    return ACT_PUSH, square, k, delta


@njit(cache=True, nogil=True)
def push_mask(cells, box_at, box_pos, n_boxes, offsets, player, stamps, stack, mask):
    """Write the legal push actions (``actions.square_push_action``) of a position.

    Args:
        cells, box_at, box_pos, offsets: as in ``move_step``.
        n_boxes: number of boxes in ``box_pos``.
        player: player square.
        stamps: uint32[n_cells + 1] stamp buffer; left holding the player's reach.
        stack: int32[n_cells] scratch.
        mask: bool[4 * n_cells] receives the mask.

    Returns:
        Number of legal pushes.
    """
    mask[:] = False
    reach_player(box_at, offsets, player, stamps, stack)
    mark = stamps[stamps.shape[0] - 1]
    k = 0
    for b in range(n_boxes):
        sq = box_pos[b]
        for d in range(4):
            dest = sq + offsets[d]
            if stamps[sq - offsets[d]] == mark and (cells[dest] & FLOOR) and box_at[dest] < 0:
                mask[square_push_action(sq, d)] = True
                k += 1
    return k
