"""Pull closures: the (square, side) states from which a lone box can be pushed onto a target.

A breadth-first search of pulls from the target, other boxes as walls. ``pull_closure`` fills
the player's region per state; ``pull_closure_parts`` works out once per square which sides of
a box the player can walk between, for the many closures over the same walls (the hotspot
table, the frozen-box bipartite test). The packing plan's target basins use them too.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import FLOOR
from soko_gym.engine.reach import reach_player


@njit(cache=True, nogil=True, _nrt=False)
def pull_closure(cells, box_at, offsets, goal, stamps, stack, seen, queue):
    """Mark the (square, side) states from which a lone box can be pushed onto ``goal``.

    Breadth-first pulls from the box on ``goal`` with the player on any side; squares holding a
    box in ``box_at`` act as walls. State ``square * 4 + side``: box on ``square``, player on
    ``square + offsets[side]`` (or anywhere in that square's region). ``box_at`` is restored.

    Args:
        cells: uint8[n_cells] cell flags.
        box_at: int16[n_cells] -1 on free squares, >= 0 on squares that act as walls.
        offsets: int32[4] flat index step per direction.
        goal: the target square.
        stamps: uint32[n_cells + 1] stamp buffer (scratch).
        stack: int32[n_cells] scratch.
        seen: uint8[4 * n_cells] receives 1 on every state from which the goal is reachable.
        queue: int32[4 * n_cells] scratch.

    Returns:
        Number of states marked.
    """
    seen[:] = 0
    if box_at[goal] >= 0:
        return 0
    tail = 0
    n_marked = 0
    box_at[goal] = 0
    for s in range(4):
        side = goal + offsets[s]
        if (cells[side] & FLOOR) and box_at[side] < 0 and seen[goal * 4 + s] == 0:
            seen[goal * 4 + s] = 1
            n_marked += 1
            queue[tail] = goal * 4 + s
            tail += 1
    box_at[goal] = -1
    head = 0
    while head < tail:
        code = queue[head]
        head += 1
        q = code >> 2
        box_at[q] = 0
        reach_player(box_at, offsets, q + offsets[code & 3], stamps, stack)
        mark = stamps[stamps.shape[0] - 1]
        for t in range(4):  # sides in the same region are the same state
            if stamps[q + offsets[t]] == mark and seen[q * 4 + t] == 0:
                seen[q * 4 + t] = 1
                n_marked += 1
        for d in range(4):
            stand = q + offsets[d]
            beyond = stand + offsets[d]
            if stamps[stand] != mark or not (cells[beyond] & FLOOR) or box_at[beyond] >= 0:
                continue
            nxt = stand * 4 + d
            if seen[nxt] == 0:
                seen[nxt] = 1
                n_marked += 1
                queue[tail] = nxt
                tail += 1
        box_at[q] = -1
    return n_marked


@njit(cache=True, nogil=True, _nrt=False)
def forget_parts(parts_gen):
    """The walls changed: every square's ``parts`` (``pull_closure_parts``) is out of date."""
    g = parts_gen[parts_gen.shape[0] - 1] + 1
    if g >= (1 << 30):  # the stamps would overflow: clear them and start again
        parts_gen[:] = 0
        g = 1
    parts_gen[parts_gen.shape[0] - 1] = g


@njit(cache=True, nogil=True, _nrt=False)
def _square_parts(cells, walls, offsets, stamps, stack, parts, q):
    """``parts[4q + s]``: the smallest side of q in side s's player region with a box on q.

    -1 where s is a wall or off the floor, or q holds no box (``walls`` >= 0 are walls).
    """
    for s in range(4):
        parts[q * 4 + s] = -1
    if not (cells[q] & FLOOR) or walls[q] >= 0:
        return
    walls[q] = 0
    for s in range(4):
        side = q + offsets[s]
        if parts[q * 4 + s] >= 0 or not (cells[side] & FLOOR) or walls[side] >= 0:
            continue
        parts[q * 4 + s] = s
        if s < 3:  # the last side's region need not be filled
            reach_player(walls, offsets, np.int64(side), stamps, stack)
            mark = stamps[stamps.shape[0] - 1]
            for t in range(s + 1, 4):
                if stamps[q + offsets[t]] == mark:
                    parts[q * 4 + t] = s
    walls[q] = -1


@njit(cache=True, nogil=True, _nrt=False)
def pull_closure_parts(cells, walls, offsets, goal, stamps, stack, parts, parts_gen, seen, queue):
    """``pull_closure``'s states, with one player fill per box square instead of per state.

    Which sides of a lone box the player can walk between depends on the box's square and the
    walls only, so it is worked out once per square (``parts``, kept while ``parts_gen`` says
    so: call ``forget_parts`` whenever ``walls`` change) and shared by every pull search over
    the same walls. ``seen`` receives exactly what ``pull_closure`` marks.

    Args:
        cells: uint8[n_cells] cell flags.
        walls: int16[n_cells] >= 0 on squares that act as walls (restored on return).
        offsets: int32[4] flat index step per direction.
        goal: the target square.
        stamps: uint32[n_cells + 1] stamp buffer (scratch); stack: int32[n_cells] scratch.
        parts: int8[4 * n_cells] per-square side partitions; parts_gen: int32[n_cells + 1]
            the generation each square's was made in, the current one last.
        seen: uint8[4 * n_cells] receives the states; queue: int32[4 * n_cells] scratch.

    Returns:
        Number of states marked.
    """
    gen = parts_gen[parts_gen.shape[0] - 1]
    seen[:] = 0
    if walls[goal] >= 0:
        return 0
    if parts_gen[goal] != gen:
        _square_parts(cells, walls, offsets, stamps, stack, parts, goal)
        parts_gen[goal] = gen
    tail = 0
    n_marked = 0
    for s in range(4):
        if parts[goal * 4 + s] >= 0:
            seen[goal * 4 + s] = 1
            n_marked += 1
            queue[tail] = goal * 4 + s
            tail += 1
    head = 0
    while head < tail:
        code = queue[head]
        head += 1
        q = code >> 2
        if parts_gen[q] != gen:
            _square_parts(cells, walls, offsets, stamps, stack, parts, q)
            parts_gen[q] = gen
        part = parts[code]
        for t in range(4):  # sides in the same region are the same state
            if parts[q * 4 + t] == part and seen[q * 4 + t] == 0:
                seen[q * 4 + t] = 1
                n_marked += 1
        for d in range(4):
            if parts[q * 4 + d] != part:
                continue
            stand = q + offsets[d]
            beyond = stand + offsets[d]
            if not (cells[beyond] & FLOOR) or walls[beyond] >= 0:
                continue
            nxt = stand * 4 + d
            if seen[nxt] == 0:
                seen[nxt] = 1
                n_marked += 1
                queue[tail] = nxt
                tail += 1
    return n_marked
