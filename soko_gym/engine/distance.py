"""Push-distance tables and the dead squares they reveal.

``push_dist[g, sq, s]`` is the fewest pushes that bring a lone box from ``sq`` to goal ``g``
when the player starts on side ``s`` of it (the square next to the box in direction ``s``),
walking only where a single box on an otherwise empty board lets it. A floor square from which
no goal can be reached for any player side is a simple dead square: a box there is lost.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import DIST_INF, FLOOR


@njit(cache=True, nogil=True)
def side_regions(cells, offsets):
    """Label which sides of each square connect to each other around a box on it.

    Args:
        cells: uint8[n_cells] static cell flags.
        offsets: int32[4] flat index step per direction.

    Returns:
        int8[n_cells, 4]: for a box on square sq (and no other box), sides s and t of sq are
        connected for the player iff labels [sq, s] == [sq, t] >= 0; -1 marks a non-floor side.
    """
    n = cells.shape[0]
    labels = np.full((n, 4), -1, dtype=np.int8)
    seen = np.zeros(n, dtype=np.int32)
    stack = np.empty(n, dtype=np.int32)
    stamp = 0
    for sq in range(n):
        if not (cells[sq] & FLOOR):
            continue
        for s in range(4):
            side = sq + offsets[s]
            if not (cells[side] & FLOOR) or labels[sq, s] >= 0:
                continue
            stamp += 1
            seen[sq] = stamp  # the box blocks its own square
            seen[side] = stamp
            stack[0] = side
            top = 1
            while top > 0:
                top -= 1
                cur = stack[top]
                for d in range(4):
                    nb = cur + offsets[d]
                    if (cells[nb] & FLOOR) and seen[nb] != stamp:
                        seen[nb] = stamp
                        stack[top] = nb
                        top += 1
            for t in range(4):
                if seen[sq + offsets[t]] == stamp and (cells[sq + offsets[t]] & FLOOR):
                    labels[sq, t] = s
    return labels


@njit(cache=True, nogil=True)
def push_distances(cells, offsets, goals, regions):
    """Fewest pushes from every square and player side to every goal, for a lone box.

    Args:
        cells: uint8[n_cells] static cell flags.
        offsets: int32[4] flat index step per direction.
        goals: int32[n_goals] goal squares.
        regions: int8[n_cells, 4] from ``side_regions``.

    Returns:
        uint16[n_goals, n_cells, 4] push counts, DIST_INF where no push path exists.
    """
    n = cells.shape[0]
    dist = np.full((goals.shape[0], n, 4), DIST_INF, dtype=np.uint16)
    queue = np.empty(n * 4, dtype=np.int32)
    for g in range(goals.shape[0]):
        goal = goals[g]
        tail = 0
        for s in range(4):
            dist[g, goal, s] = 0  # a box on its goal needs no push, even one walled in
            if regions[goal, s] >= 0:
                queue[tail] = goal * 4 + s
                tail += 1
        head = 0
        while head < tail:
            code = queue[head]
            head += 1
            box = code >> 2
            s = code & 3
            # the push that ended here came from the square the player now stands on
            prev = box + offsets[s]
            stand = prev + offsets[s]
            if not (cells[prev] & FLOOR) or not (cells[stand] & FLOOR):
                continue
            k = dist[g, box, s] + 1
            region = regions[prev, s]
            for t in range(4):
                if regions[prev, t] == region and dist[g, prev, t] == DIST_INF:
                    dist[g, prev, t] = k
                    queue[tail] = prev * 4 + t
                    tail += 1
    return dist


def dead_squares(cells: np.ndarray, push_dist: np.ndarray) -> np.ndarray:
    """Simple dead squares: floor from which no goal is reachable. uint8[n_cells], 1 = dead."""
    nearest = push_dist.min(axis=(0, 2))
    return (((cells & FLOOR) != 0) & (nearest == DIST_INF)).astype(np.uint8)


def dead_sides(push_dist: np.ndarray) -> np.ndarray:
    """Dead lone-box states: a box on the square, the player on that side, reaches no goal.

    uint8[4 * n_cells], index ``square * 4 + side``, 1 = dead (non-floor squares and walled
    sides included). A finer test than ``dead_squares``: a box pushed into a one-way corridor
    from the wrong end is lost though the corridor's squares are not dead.
    """
    nearest = push_dist.min(axis=0)  # [n_cells, 4]
    return (nearest == DIST_INF).astype(np.uint8).reshape(-1)
