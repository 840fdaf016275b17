"""Kernels of the vicinity and global optimizers: configuration sets.

A *configuration* is a box placement: the sorted box squares of a position, one int32 row.
The optimizers collect a set of configurations near a solution path (``vicinity_configs``,
``expand_positions``), sort the rows lexicographically (``configs``: int32[n_configs,
n_boxes]) and search only positions whose configuration is in the set, found by binary search
(``find_config``). The searches are ``vicinity_search``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planners._kernels.common import sort_prefix
from soko_gym.engine.constants import FLOOR
from soko_gym.engine.reach import reach_player


@njit(cache=True, nogil=True)
def _compare_row(configs, i, row):
    """-1, 0 or 1 as configuration ``i`` sorts before, equal to or after ``row``."""
    for j in range(row.shape[0]):
        a = configs[i, j]
        b = row[j]
        if a < b:
            return -1
        if a > b:
            return 1
    return 0


@njit(cache=True, nogil=True)
def find_config(configs, row):
    """Index of a configuration in a sorted set, or -1.

    Args:
        configs: int32[n_configs, n_boxes] distinct rows of sorted box squares, sorted
            lexicographically.
        row: int32[n_boxes] sorted box squares to look up.

    Returns:
        The row's index in ``configs``, or -1 when it is not there.
    """
    lo = 0
    hi = configs.shape[0] - 1
    while lo <= hi:
        mid = (lo + hi) >> 1
        c = _compare_row(configs, mid, row)
        if c == 0:
            return mid
        if c < 0:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


@njit(cache=True, nogil=True)
def vicinity_configs(positions, first, near, k1, k2, occupied, out):
    """Configurations near path positions: one box on its k1 nearest squares, another on its k2.

    For each position from ``first`` on and each box i, box i goes to each of its first ``k1``
    nearest squares; with ``k2 > 0`` every other box j also goes to each of its first ``k2``
    nearest squares (both at once). A square taken by another box is skipped. Writing stops
    before a position whose rows might not fit in ``out``.

    Args:
        positions: int32[n_positions, n_boxes] sorted box squares of each path position.
        first: index of the first position to process.
        near: int32[n_cells, n_near] squares by nearness to each square (the square itself first,
            only squares a box may stand on), -1 after the last; rows of other squares unused.
        k1: squares tried for the first box (at most ``n_near``).
        k2: squares tried for the second box (0, or a single box: only one box moves).
        occupied: uint8[n_cells] scratch, all 0 on entry and on return.
        out: int32[capacity, n_boxes] receives configurations (sorted rows, duplicates kept).

    Returns:
        (rows written, index of the first position not processed).
    """
    n = positions.shape[1]
    single = k2 == 0 or n == 1
    per_position = n * k1 if single else n * k1 * (n - 1) * k2
    count = 0
    p = first
    while p < positions.shape[0]:
        if count + per_position > out.shape[0]:
            break
        for b in range(n):
            occupied[positions[p, b]] = 1
        for i in range(n):
            bi = positions[p, i]
            for a in range(k1):
                s1 = near[bi, a]
                if s1 < 0:
                    break
                if s1 != bi and occupied[s1]:
                    continue
                if single:
                    for b in range(n):
                        out[count, b] = positions[p, b]
                    out[count, i] = s1
                    sort_prefix(out[count], np.int64(out.shape[1]))
                    count += 1
                    continue
                for j in range(n):
                    if j == i:
                        continue
                    bj = positions[p, j]
                    for c in range(k2):
                        s2 = near[bj, c]
                        if s2 < 0:
                            break
                        if s2 == s1 or (occupied[s2] and s2 != bj and s2 != bi):
                            continue
                        for b in range(n):
                            out[count, b] = positions[p, b]
                        out[count, i] = s1
                        out[count, j] = s2
                        sort_prefix(out[count], np.int64(out.shape[1]))
                        count += 1
        for b in range(n):
            occupied[positions[p, b]] = 0
        p += 1
    return count, p


@njit(cache=True, nogil=True)
def expand_positions(cells, offsets, rows, players, box_at, stamps, stack, out_rows, out_players):
    """Every position one push away from the given ones, with normalized player squares.

    Args:
        cells: uint8[n_cells] cell flags.
        offsets: int32[4] flat index step per direction.
        rows: int32[n, n_boxes] sorted box squares of each position.
        players: int32[n] player square of each position.
        box_at: int16[n_cells] scratch, all -1 on entry and on return.
        stamps: uint32[n_cells + 1] stamp buffer (``reach.new_stamps``).
        stack: int32[n_cells] scratch.
        out_rows: int32[n * 4 * n_boxes, n_boxes] receives the children's sorted box squares.
        out_players: int32[n * 4 * n_boxes] receives their normalized player squares.

    Returns:
        Number of children written.
    """
    nb = rows.shape[1]
    count = 0
    for p in range(rows.shape[0]):
        for b in range(nb):
            box_at[rows[p, b]] = b
        reach_player(box_at, offsets, np.int64(players[p]), stamps, stack)
        mark = stamps[stamps.shape[0] - 1]
        pushes = 0
        for b in range(nb):
            sq = rows[p, b]
            for d in range(4):
                dest = sq + offsets[d]
                if stamps[sq - offsets[d]] == mark and (cells[dest] & FLOOR) and box_at[dest] < 0:
                    out_players[count + pushes] = sq * 4 + d
                    pushes += 1
        for k in range(count, count + pushes):
            sq = out_players[k] >> 2
            dest = sq + offsets[out_players[k] & 3]
            box_at[dest] = box_at[sq]
            box_at[sq] = -1
            _, lowest = reach_player(box_at, offsets, np.int64(sq), stamps, stack)
            box_at[sq] = box_at[dest]
            box_at[dest] = -1
            out_players[k] = lowest
            for b in range(nb):
                out_rows[k, b] = rows[p, b]
            for b in range(nb):
                if out_rows[k, b] == sq:
                    out_rows[k, b] = dest
            sort_prefix(out_rows[k], np.int64(out_rows.shape[1]))
        count += pushes
        for b in range(nb):
            box_at[rows[p, b]] = -1
    return count
