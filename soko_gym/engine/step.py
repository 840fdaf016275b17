"""One environment step on a framed board: player moves, pushes, macro moves, and action masks.

The environments frame every level in a fixed ``H x W`` grid, so a square index is also the
cell index of an observation plane. Each step kernel updates the position and its observation
planes in place (only the cells that change) and reports what happened; the single envs call
these kernels directly and the batched kernels loop over them, so both behave identically.

Observation ``obs``: uint8[C * n_cells], plane ``p`` at ``[p * n_cells, (p + 1) * n_cells)`` in the
order of ``constants.PLANE_*``. Table cells (``cells``) carry the engine flags plus ``DEAD`` and
``DRAWN_WALL`` for the static planes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import (
    DEAD,
    DIST_INF,
    DRAWN_WALL,
    FLOOR,
    GOAL,
    PLANE_BOX,
    PLANE_DEAD,
    PLANE_FLOOR,
    PLANE_GOAL,
    PLANE_PLAYER,
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
        obs: uint8[C * n_cells] receives the planes; C is 5, or 6 with the dead-square plane.
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
    """Write the legal push actions (square * 4 + direction) of a position.

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
                mask[sq * 4 + d] = True
                k += 1
    return k


@njit(cache=True, nogil=True)
def box_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue):
    """Fewest pushes that bring the box on ``src`` to each square, other boxes fixed.

    Breadth-first over (box square, player side) states; the player walks freely between
    pushes. Sides the player reaches in the same fill are one state, so each box square costs at
    most one flood fill per player region around it. ``box_at`` is restored on return.

    Args:
        cells: uint8[n_cells] cell flags.
        box_at: int16[n_cells] box index per square (the box on ``src`` included).
        offsets: int32[4] flat index step per direction.
        player: player square.
        src: square of the box to move.
        stamps: uint32[n_cells + 1] stamp buffer (scratch).
        stack: int32[n_cells] scratch.
        dist: uint16[4 * n_cells] receives pushes per state ``square * 4 + side``, DIST_INF if
            unreached; ``side`` is the direction from the box to the player.
        parent: int32[4 * n_cells] receives, per reached state, ``previous state * 4 + direction
            of the push that arrived``, or -1 for the start states.
        queue: int32[4 * n_cells] scratch.

    Returns:
        Number of states reached (0 when no box is on ``src``).
    """
    b = box_at[src]
    dist[:] = DIST_INF
    if b < 0:
        return 0
    reach_player(box_at, offsets, player, stamps, stack)
    mark = stamps[stamps.shape[0] - 1]
    tail = 0
    for s in range(4):
        if stamps[src + offsets[s]] == mark:
            dist[src * 4 + s] = 0
            parent[src * 4 + s] = -1
    # one queue entry per box square: the first side reached stands for its whole region
    for s in range(4):
        if dist[src * 4 + s] == 0:
            queue[tail] = src * 4 + s
            tail += 1
            break
    box_at[src] = -1
    head = 0
    while head < tail:
        code = queue[head]
        head += 1
        q = code >> 2
        s = code & 3
        box_at[q] = b
        reach_player(box_at, offsets, q + offsets[s], stamps, stack)
        mark = stamps[stamps.shape[0] - 1]
        here = dist[code]
        for t in range(4):  # sides in the same region share the state's distance
            side = q + offsets[t]
            if stamps[side] == mark and dist[q * 4 + t] == DIST_INF:
                dist[q * 4 + t] = here
                parent[q * 4 + t] = parent[code]
        for d in range(4):
            dest = q + offsets[d]
            if stamps[q - offsets[d]] != mark or not (cells[dest] & FLOOR) or box_at[dest] >= 0:
                continue
            nxt = dest * 4 + (d ^ 1)  # the player ends on the opposite side (up^1 = down ...)
            if dist[nxt] == DIST_INF:
                dist[nxt] = here + 1
                parent[nxt] = code * 4 + d
                queue[tail] = nxt
                tail += 1
        box_at[q] = -1
    box_at[src] = b
    return tail


@njit(cache=True, nogil=True)
def macro_plan(cells, box_at, offsets, player, src, dst, stamps, stack, dist, parent, queue, plan):
    """The push directions of a fewest-push path of the box on ``src`` to ``dst``.

    Args:
        cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue: as in
            ``box_paths``.
        dst: target square.
        plan: int8[4 * n_cells] receives the directions, first push first.

    Returns:
        Number of pushes, or -1 when no box is on ``src``, ``dst == src`` or ``dst`` is
        unreachable.
    """
    n = cells.shape[0]
    if src < 0 or src >= n or dst < 0 or dst >= n or src == dst or box_at[src] < 0:
        return -1
    box_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue)
    best = -1
    for s in range(4):
        code = dst * 4 + s
        if dist[code] != DIST_INF and (best < 0 or dist[code] < dist[best]):
            best = code
    if best < 0:
        return -1
    k = dist[best]
    code = best
    for i in range(k - 1, -1, -1):
        link = parent[code]
        plan[i] = link & 3
        code = link >> 2
    return k


@njit(cache=True, nogil=True)
def macro_mask(
    cells, box_at, box_pos, n_boxes, offsets, player, stamps, stack, dist, parent, queue, mask
):
    """Write the legal macro moves (from_square * n_cells + to_square) of a position.

    Args:
        cells, box_at, box_pos, offsets, stamps, stack, dist, parent, queue: as in ``box_paths``.
        n_boxes: number of boxes in ``box_pos``.
        player: player square.
        mask: bool[n_cells * n_cells] receives the mask.

    Returns:
        Number of legal macro moves.
    """
    n = cells.shape[0]
    mask[:] = False
    k = 0
    for b in range(n_boxes):
        src = np.int64(box_pos[b])
        box_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue)
        for sq in range(n):
            if sq == src:
                continue
            if (
                dist[sq * 4] != DIST_INF
                or dist[sq * 4 + 1] != DIST_INF
                or dist[sq * 4 + 2] != DIST_INF
                or dist[sq * 4 + 3] != DIST_INF
            ):
                mask[src * n + sq] = True
                k += 1
    return k


@njit(cache=True, nogil=True)
def macro_step(
    cells,
    box_at,
    box_pos,
    offsets,
    obs,
    player,
    src,
    dst,
    stamps,
    stack,
    dist,
    parent,
    queue,
    plan,
    parent8,
    walk,
):
    """Move the box on ``src`` to ``dst`` by fewest pushes, walking the player between pushes.

    Args:
        cells, box_at, box_pos, offsets, obs: as in ``move_step``.
        player: player square.
        src, dst: from and to squares.
        stamps, stack, dist, parent, queue, plan: as in ``macro_plan``.
        parent8: int8[n_cells] scratch for the walks.
        walk: int8[n_cells] scratch for the walks.

    Returns:
        (ACT_PUSH or ACT_ILLEGAL, new player square, pushes, moves, change in boxes on goal).
    """
    k = macro_plan(
        cells, box_at, offsets, player, src, dst, stamps, stack, dist, parent, queue, plan
    )
    if k < 0:
        return ACT_ILLEGAL, player, 0, 0, 0
    moves = 0
    delta = 0
    sq = src
    for i in range(k):
        d = np.int64(plan[i])  # int64 like every other caller: one compiled signature
        status, player, w, gd = push_step(
            cells, box_at, box_pos, offsets, obs, player, sq, d, stamps, stack, parent8, walk
        )
        moves += w + 1
        delta += gd
        sq += offsets[d]
    return ACT_PUSH, player, k, moves, delta
