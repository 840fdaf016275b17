"""Corrals: unreachable areas fenced by boxes; their labelling and PI-corral pruning.

Definitions, for a position with player reachable area R (free squares the player walks to):

- A *barrier box* is a box next to a square of R.
- A *corral* is a maximal 4-connected set K of non-wall squares outside R, grown from a free
  square next to a barrier box, that passes through free squares and through boxes touching
  no square of R (its *interior boxes*) and stops at barrier boxes. Every non-wall neighbour
  of K is in K or a barrier box, so the player cannot enter K before a box moves.
- The corral's *barrier* is the set of barrier boxes next to a square of K. Its boxes are the
  barrier plus the interior boxes.
- The corral *needs a push* when one of its boxes is off goal or a free square of K is a
  goal: then every solution pushes a barrier box into K at some point (the first move of any
  corral box, and the first box to enter K, is such a push).
- A *potential push* is a barrier box ``b`` moved in direction ``d`` with the player's side
  ``s = b - d`` neither a wall, nor in K, nor a barrier box of this corral, and the target
  ``t = b + d`` neither a wall nor a barrier box of this corral; it goes *into the corral*
  when ``t`` is in K. Potential pushes into the corral onto an interior box or onto a simple
  dead square are ignored (no solution makes them as the first push into K).
- The corral is an *I-corral* when every other potential push targets a simple dead square,
  so before the first push into K no corral box moves. It is a *P-corral* when the player
  reaches (in R) the side ``s`` of every potential push into K onto a free, live square, so all
  of them are legal now. A *PI-corral* is both, and needs a push.

PI-corral pruning: in a PI-corral position only the pushes into the corral are generated. It
is admissible: take an optimal solution and its first push into K; every earlier push moves a
box outside K and the barrier, along walks outside K, so that push can be made first and the
earlier ones after it unchanged (they never touch K, and the square it frees only widens
their walks), giving a solution of the same length that starts with a generated push. The
pruned graph keeps every position's optimal distance, so A* stays push-optimal. A PI-corral
with no legal push into it is a deadlock.

The corral deadlock test is in ``engine.corral_search``, its memo in ``engine.corral_memo``,
the tables the kernels share in ``engine.corral_tables`` and the Python side in
``engine.corral_analysis``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import GOAL
from soko_gym.engine.reach import WALL_STAMP

# Columns of the corral table ``info`` (int32[max_corrals, N_INFO]).
INFO_MARK = 0  # label of the corral's squares in ``cstamp`` (K squares hold it for good)
INFO_REGION_START = 1  # first index of the corral's squares K in ``region``
INFO_REGION_LEN = 2
INFO_BARRIER_START = 3  # first index of its barrier boxes' squares in ``barrier``
INFO_BARRIER_LEN = 4
INFO_NEEDS_PUSH = 5  # 1 when a corral box is off goal or a free square of K is a goal
N_INFO = 6

_MARK_LIMIT = 0x7FFFFFFF


@njit(cache=True, nogil=True, _nrt=False)
def label_corrals(cells, box_at, box_pos, offsets, stamps, cstamp, region, barrier, info):
    """Find every corral next to a barrier box and record its squares and barrier.

    Args:
        cells: uint8[n_cells] cell flags.
        box_at: int16[n_cells] box index per square, -1 for none.
        box_pos: int32[n_boxes] square of each box.
        offsets: int32[4] flat index step per direction.
        stamps: uint32[n_cells + 1] holding ``reach_player`` of this position (R has the
            mark, barrier boxes mark + 1); read only.
        cstamp: int32[n_cells + 1] corral labels; ``cstamp[n_cells]`` holds the last label
            used. On return a square is in K of corral ``k`` iff ``cstamp[sq] ==
            info[k, INFO_MARK]`` and it is not a barrier box (walls keep their old values).
        region: int32[n_cells] output: the squares K of each corral, corral after corral.
        barrier: int32[4 * n_boxes] output: the barrier boxes' squares of each corral.
        info: int32[4 * n_boxes, N_INFO] output: one row per corral (``INFO_*`` columns).

    Returns:
        The number of corrals found (rows of ``info`` written).
    """
    n = cells.shape[0]
    rmark = stamps[n]
    bmark = rmark + np.uint32(1)
    cap = info.shape[0]
    base = np.int64(cstamp[n])
    if base > _MARK_LIMIT - cap - 1:  # labels would overflow: start over
        for i in range(n + 1):
            cstamp[i] = 0
        base = np.int64(0)
    n_corrals = 0
    n_region = 0
    n_barrier = 0
    for i in range(box_pos.shape[0]):
        bsq = box_pos[i]
        if stamps[bsq] != bmark:
            continue
        for d in range(4):
            seed = bsq + offsets[d]
            if stamps[seed] >= rmark or cstamp[seed] > base:  # wall, R, barrier, labelled
                continue
            if n_corrals == cap:
                cstamp[n] = base + n_corrals
                return n_corrals
            mark = base + n_corrals + 1
            start = n_region
            bstart = n_barrier
            needs = 0
            region[n_region] = seed
            n_region += 1
            cstamp[seed] = mark
            head = start
            while head < n_region:
                sq = region[head]
                head += 1
                on_goal = (cells[sq] & GOAL) != 0
                if (box_at[sq] >= 0) != on_goal:  # box off goal or free goal
                    needs = 1
                for d2 in range(4):
                    nb = sq + offsets[d2]
                    st = stamps[nb]
                    if st == WALL_STAMP or st == rmark or cstamp[nb] == mark:
                        continue
                    cstamp[nb] = mark
                    if st == bmark:
                        barrier[n_barrier] = nb
                        n_barrier += 1
                        if not (cells[nb] & GOAL):
                            needs = 1
                    else:
                        region[n_region] = nb
                        n_region += 1
            info[n_corrals, INFO_MARK] = mark
            info[n_corrals, INFO_REGION_START] = start
            info[n_corrals, INFO_REGION_LEN] = n_region - start
            info[n_corrals, INFO_BARRIER_START] = bstart
            info[n_corrals, INFO_BARRIER_LEN] = n_barrier - bstart
            info[n_corrals, INFO_NEEDS_PUSH] = needs
            n_corrals += 1
    cstamp[n] = base + n_corrals
    return n_corrals


@njit(cache=True, nogil=True, _nrt=False)
def _in_k(stamps, cstamp, sq, mark):
    """True when ``sq`` is a square of the corral labelled ``mark`` (not one of its boxes)."""
    return cstamp[sq] == mark and stamps[sq] != stamps[stamps.shape[0] - 1] + np.uint32(1)


@njit(cache=True, nogil=True, _nrt=False)
def _in_barrier(offsets, stamps, cstamp, sq, mark):
    """True when ``sq`` holds a barrier box next to a square of the corral labelled ``mark``."""
    if stamps[sq] != stamps[stamps.shape[0] - 1] + np.uint32(1):
        return False
    for d in range(4):
        if _in_k(stamps, cstamp, np.int64(sq + offsets[d]), mark):
            return True
    return False


@njit(cache=True, nogil=True, _nrt=False)
def pi_corral_pushes(dead, box_at, offsets, stamps, cstamp, barrier, info, k):
    """Number of pushes into corral ``k`` when it is a PI-corral, else -1.

    Counts the potential pushes into K onto free, live squares (all legal now when the corral
    is a PI-corral); see the module docstring for the conditions.

    Args:
        dead: uint8[n_cells] nonzero on simple dead squares.
        box_at: int16[n_cells] box index per square, -1 for none.
        offsets: int32[4] flat index step per direction.
        stamps: uint32[n_cells + 1] the ``reach_player`` fill given to ``label_corrals``.
        cstamp: int32[n_cells + 1] corral labels from ``label_corrals``.
        barrier: int32[4 * n_boxes] barrier squares from ``label_corrals``.
        info: int32[4 * n_boxes, N_INFO] corral table from ``label_corrals``.
        k: corral index (row of ``info``).

    Returns:
        The number of pushes into the corral (0: the position is a deadlock), or -1 when the
        corral is not a PI-corral or needs no push.
    """
    if info[k, INFO_NEEDS_PUSH] == 0:
        return -1
    rmark = stamps[stamps.shape[0] - 1]
    mark = np.int64(info[k, INFO_MARK])
    count = 0
    start = info[k, INFO_BARRIER_START]
    for j in range(start, start + info[k, INFO_BARRIER_LEN]):
        b = np.int64(barrier[j])
        for d in range(4):
            s = b - offsets[d]
            t = b + offsets[d]
            if stamps[s] == WALL_STAMP or _in_k(stamps, cstamp, s, mark):
                continue
            if _in_barrier(offsets, stamps, cstamp, s, mark):
                continue
            if stamps[t] == WALL_STAMP or _in_barrier(offsets, stamps, cstamp, t, mark):
                continue
            if _in_k(stamps, cstamp, t, mark):
                if box_at[t] >= 0 or dead[t]:
                    continue
                if stamps[s] != rmark:  # P fails: the player cannot make this push now
                    return -1
                count += 1
            elif not dead[t]:  # I fails: the box could leave the barrier another way
                return -1
    return count


@njit(cache=True, nogil=True, _nrt=False)
def best_pi_corral(dead, box_at, offsets, stamps, cstamp, barrier, info, n_corrals):
    """The PI-corral with the fewest pushes into it.

    Args:
        dead, box_at, offsets, stamps, cstamp, barrier, info: as in ``pi_corral_pushes``.
        n_corrals: rows of ``info`` filled by ``label_corrals``.

    Returns:
        (corral index, its number of pushes), or (-1, -1) when no corral is a PI-corral. A
        count of 0 means the position is a deadlock.
    """
    best = -1
    best_count = -1
    for k in range(n_corrals):
        c = pi_corral_pushes(dead, box_at, offsets, stamps, cstamp, barrier, info, k)
        if c >= 0 and (best < 0 or c < best_count):
            best = k
            best_count = c
            if c == 0:
                break
    return best, best_count


@njit(cache=True, nogil=True, _nrt=False)
def keep_pushes_into(box_pos, offsets, cstamp, mark, pushes, n_pushes):
    """Compact ``pushes`` in place to the pushes whose box lands on a square labelled ``mark``.

    Args:
        box_pos: int32[n_boxes] square of each box.
        offsets: int32[4] flat index step per direction.
        cstamp: int32[n_cells + 1] corral labels from ``label_corrals``.
        mark: the corral's label (``info[k, INFO_MARK]``).
        pushes: int32[4 * n_boxes] push codes (box * 4 + direction) of legal pushes; updated.
        n_pushes: number of codes in ``pushes``.

    Returns:
        The number of pushes kept (at the front of ``pushes``).
    """
    kept = 0
    for i in range(n_pushes):
        code = pushes[i]
        dest = box_pos[code >> 2] + offsets[code & 3]
        if cstamp[dest] == mark:  # a legal target is free, so never a barrier box
            pushes[kept] = code
            kept += 1
    return kept
