"""Corrals: unreachable areas fenced by boxes; PI-corral push pruning and corral deadlocks.

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

Corral deadlock test: a bounded breadth-first push search on the board with every box outside
the corral removed. Any solution, restricted to the corral's boxes, is a push sequence of that
smaller problem (fewer boxes only widen walks and free targets), so if no sequence reaches an
*open* position (the player reaches every free square of K) or one with every corral box on a
goal, the position is a deadlock. Pushes onto dead squares and freezes off goal are pruned
inside it. When the node budget runs out the answer is unknown, never a deadlock. Visited
positions are keyed by (box Zobrist hash, normalized player), as in the planners' tables, and
a hash match counts only when the stored box squares are the same too: a hash collision could
otherwise pass an unvisited position for a visited one and let the search run dry on a live
position.

Adaptive budgets (``min_budget`` > 0): the budget is kept per corral size (its number of boxes),
halved after a search of that size runs out and doubled (up to the full
budget) after one proves a deadlock. Searches that mostly run out cost little; sizes whose
proofs need deep searches keep them. Only fewer proofs can follow, never a wrong one.
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

import numpy as np
from numba import njit

from soko_gym.engine.board import build_board
from soko_gym.engine.constants import BOX_AT_DTYPE, GOAL, HASH_DTYPE, SQUARE_DTYPE
from soko_gym.engine.deadlock import is_simple_deadlock, is_wall_line_deadlock, wall_lines
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import WALL_STAMP, new_stamps, reach_player

# Columns of the corral table ``info`` (int32[max_corrals, N_INFO]).
INFO_MARK = 0  # label of the corral's squares in ``cstamp`` (K squares hold it for good)
INFO_REGION_START = 1  # first index of the corral's squares K in ``region``
INFO_REGION_LEN = 2
INFO_BARRIER_START = 3  # first index of its barrier boxes' squares in ``barrier``
INFO_BARRIER_LEN = 4
INFO_NEEDS_PUSH = 5  # 1 when a corral box is off goal or a free square of K is a goal
N_INFO = 6

# Results of corral_deadlock.
CORRAL_OPEN = 0  # the bounded search opened the corral or put its boxes on goals
CORRAL_DEADLOCK = 1  # the search ran out of positions: the position is a deadlock
CORRAL_UNKNOWN = 2  # the node budget ran out, or the corral has too many boxes

_EMPTY = -1
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


@njit(cache=True, nogil=True, _nrt=False)
def _is_open(region, start, length, sub_box_at, stamps):
    """True when the latest fill reaches every free square of the corral's K."""
    mark = stamps[stamps.shape[0] - 1]
    for i in range(start, start + length):
        sq = region[i]
        if sub_box_at[sq] < 0 and stamps[sq] != mark:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def row_holds_boxes(sub_nodes, row, m, box_at):
    """True when the ``m`` squares of ``sub_nodes[row]`` hold boxes ``0 .. m - 1`` of ``box_at``.

    Both hold ``m`` distinct squares, so this is equality of the box sets, whatever their
    order: a search's rows keep each box's index along its pushes, so one box set reached
    along two paths may list its squares in two orders.
    """
    for j in range(m):
        b = box_at[sub_nodes[row, j]]
        if b < 0 or b >= m:  # a free square, or a box the search does not hold
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _sub_slot(sub_hash, sub_player, sub_row, sub_nodes, h, p, box_at, m):
    """Slot of the position (``box_at``, hash ``h``, normalized player ``p``) in the table.

    Open addressing with linear probing; a slot matches only when its row holds the same box
    set too, so two box sets whose hashes collide never pass for one visited position (which
    could let a search run dry and prove a live position dead).
    """
    mask = sub_hash.shape[0] - 1
    i = np.int64(
        (h ^ (h >> np.uint64(29)) ^ np.uint64(p) * np.uint64(0x9E3779B97F4A7C15)) & np.uint64(mask)
    )
    while sub_player[i] != _EMPTY:
        if (
            sub_hash[i] == h
            and sub_player[i] == p
            and row_holds_boxes(sub_nodes, np.int64(sub_row[i]), m, box_at)
        ):
            break
        i = (i + 1) & mask
    return i


@njit(cache=True, nogil=True, _nrt=False)
def queue_position(
    sub_hash, sub_player, sub_row, sub_nodes, tail, limit, box_pos, box_at, player, h, norm
):
    """Append a position to a bounded breadth-first push search unless it is stored.

    The search's rows ``sub_nodes`` hold the box squares, then the player (column -2) and the
    table slot of the row's key (column -1); the open-addressing table (``sub_hash``,
    ``sub_player``, ``sub_row``) maps each stored key (box hash ``h``, normalized player
    ``norm``) to its row, whose box squares decide a hash match, and ``clear_queue`` empties
    it again. The corral and exhaustion tests share both. ``box_at`` holds the position's
    boxes ``box_pos`` (by index) and no other movable box.

    Returns:
        ``tail + 1`` when the position was stored as row ``tail``, ``tail`` when it was
        stored already, -1 when it is new but ``tail`` reached ``limit``.
    """
    m = box_pos.shape[0]
    slot = _sub_slot(sub_hash, sub_player, sub_row, sub_nodes, h, norm, box_at, np.int64(m))
    if sub_player[slot] != _EMPTY:
        return tail
    if tail == limit:
        return -1
    sub_hash[slot] = h
    sub_player[slot] = norm
    sub_row[slot] = tail
    width = sub_nodes.shape[1]
    for j in range(box_pos.shape[0]):
        sub_nodes[tail, j] = box_pos[j]
    sub_nodes[tail, width - 2] = player
    sub_nodes[tail, width - 1] = slot
    return tail + 1


@njit(cache=True, nogil=True, _nrt=False)
def load_queued(sub_nodes, row, m, pos, box_at, zobrist):
    """Put the ``m`` boxes of a queued search row on the board (``pos``, ``box_at``); their hash."""
    h = np.uint64(0)
    for i in range(m):
        sq = sub_nodes[row, i]
        pos[i] = sq
        box_at[sq] = i
        h ^= zobrist[sq]
    return h


@njit(cache=True, nogil=True, _nrt=False)
def all_on_goal(cells, pos, m):
    """True when the first ``m`` squares of ``pos`` are all goals."""
    for j in range(m):
        if not cells[pos[j]] & GOAL:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def clear_queue(sub_player, sub_nodes, tail):
    """Empty the table of a search whose rows ``0 .. tail - 1`` hold every stored key."""
    col_slot = sub_nodes.shape[1] - 1
    for node in range(tail):
        sub_player[sub_nodes[node, col_slot]] = _EMPTY


@njit(cache=True, nogil=True, _nrt=False)
def corral_deadlock(ct, box_at, k, player):
    """Decide by a bounded push search whether corral ``k`` makes the position a deadlock.

    Only the corral's boxes (barrier and interior) stay on the board; see the module
    docstring for why exhausting this search proves a deadlock. The search stores at most
    ``ct.params[PARAM_BUDGET]`` positions (and at most ``ct.sub_nodes.shape[0]``).

    Args:
        ct: ``CorralTables`` of the board, labelled by ``label_corrals`` for this position
            (``region``, ``barrier``, ``info``); ``sub_box_at`` and ``sub_player`` all -1 on
            entry and on return; the latest fill of ``stamps`` is overwritten.
        box_at: int16[n_cells] box index per square of the full position, -1 for none.
        k: corral index (row of ``ct.info``).
        player: the player's square in the position.

    Returns:
        CORRAL_DEADLOCK, CORRAL_OPEN or CORRAL_UNKNOWN.
    """
    cells, dead, offsets, zobrist = ct.cells, ct.dead, ct.offsets, ct.zobrist
    region, barrier, info = ct.region, ct.barrier, ct.info
    sub_box_at, sub_nodes, sub_hash = ct.sub_box_at, ct.sub_nodes, ct.sub_hash
    sub_player, sub_row = ct.sub_player, ct.sub_row
    sub_pos, sub_pushes = ct.sub_pos, ct.sub_pushes
    stamps, stack, seen, trail = ct.stamps, ct.stack, ct.seen, ct.trail
    budget = ct.params[PARAM_BUDGET]
    adaptive = ct.params[PARAM_MIN_BUDGET] > 0
    max_boxes = sub_nodes.shape[1] - 2
    col_player = max_boxes
    rstart = info[k, INFO_REGION_START]
    rlen = info[k, INFO_REGION_LEN]
    m = 0
    on_goal = 0
    bstart = info[k, INFO_BARRIER_START]
    for j in range(bstart, bstart + info[k, INFO_BARRIER_LEN]):
        if m == max_boxes:
            return CORRAL_UNKNOWN
        sub_nodes[0, m] = barrier[j]
        m += 1
    for j in range(rstart, rstart + rlen):
        sq = region[j]
        if box_at[sq] >= 0:
            if m == max_boxes:
                return CORRAL_UNKNOWN
            sub_nodes[0, m] = sq
            m += 1
    for i in range(m):
        if cells[sub_nodes[0, i]] & GOAL:
            on_goal += 1
    if on_goal == m:
        return CORRAL_OPEN
    sub_nodes[0, col_player] = player
    size = m
    size_budget = ct.size_budget[size] if adaptive else budget
    limit = min(size_budget, sub_nodes.shape[0])
    h = np.uint64(0)
    for i in range(m):
        sq = sub_nodes[0, i]
        sub_box_at[sq] = i
        h ^= zobrist[sq]
    _, norm = reach_player(sub_box_at, offsets, player, stamps, stack)
    status = CORRAL_DEADLOCK
    if _is_open(region, rstart, rlen, sub_box_at, stamps):
        status = CORRAL_OPEN
    for i in range(m):
        sub_pos[i] = sub_nodes[0, i]
    tail = queue_position(
        sub_hash, sub_player, sub_row, sub_nodes, np.int64(0), np.int64(limit), sub_pos[:m],
        sub_box_at, np.int64(player), h, np.int64(norm),
    )  # fmt: skip
    for i in range(m):
        sub_box_at[sub_pos[i]] = -1
    head = 0
    while status == CORRAL_DEADLOCK and head < tail:
        h = load_queued(sub_nodes, np.int64(head), np.int64(m), sub_pos, sub_box_at, zobrist)
        box_pos = sub_pos[:m]
        reach_player(sub_box_at, offsets, np.int64(sub_nodes[head, col_player]), stamps, stack)
        n_push = legal_pushes(cells, sub_box_at, box_pos, offsets, stamps, sub_pushes)
        for i in range(n_push):
            code = np.int64(sub_pushes[i])
            dest = np.int64(box_pos[code >> 2] + offsets[code & 3])
            if dead[dest]:
                continue
            child_player, h2 = apply_push(box_pos, sub_box_at, offsets, zobrist, h, code)
            if not is_simple_deadlock(cells, dead, sub_box_at, offsets, dest, seen, trail):
                _, norm = reach_player(sub_box_at, offsets, np.int64(child_player), stamps, stack)
                if all_on_goal(cells, box_pos, np.int64(m)) or _is_open(
                    region, rstart, rlen, sub_box_at, stamps
                ):
                    status = CORRAL_OPEN
                else:
                    stored = queue_position(
                        sub_hash, sub_player, sub_row, sub_nodes, np.int64(tail), np.int64(limit),
                        box_pos, sub_box_at, np.int64(child_player), h2, np.int64(norm),
                    )  # fmt: skip
                    if stored < 0:
                        status = CORRAL_UNKNOWN
                    else:
                        tail = stored
            undo_push(box_pos, sub_box_at, offsets, zobrist, h2, code)
            if status != CORRAL_DEADLOCK:
                break
        for i in range(m):
            sub_box_at[sub_pos[i]] = -1
        head += 1
    ct.counters[COUNT_EXPANDED] += head
    if status == CORRAL_UNKNOWN:
        ct.counters[COUNT_CUT] += 1
    if adaptive:
        ct.size_budget[size] = adapt_budget(
            size_budget, status == CORRAL_UNKNOWN, status == CORRAL_DEADLOCK,
            ct.params[PARAM_MIN_BUDGET], budget,
        )  # fmt: skip
    clear_queue(sub_player, sub_nodes, tail)
    return status


@njit(cache=True, nogil=True, _nrt=False)
def adapt_budget(budget, ran_out, proved, floor, cap):
    """The next budget of a bounded deadlock search after one that ``ran_out`` or ``proved``.

    A search that runs out of positions proved nothing for its cost: the next one gets half the
    budget (not below ``floor``); one that proves a deadlock doubles it (up to ``cap``); an
    open answer leaves it. Where the searches pay they stay deep, where they only burn
    positions they become cheap.
    """
    if ran_out:
        return max(floor, budget // 2)
    if proved:
        return min(cap, budget * 2)
    return budget


@njit(cache=True, nogil=True, _nrt=False)
def corral_key(ct, box_at, k, player):
    """The sub-problem ``corral_deadlock`` solves for corral ``k``, as a key.

    Returns (Zobrist hash of the corral's boxes, Zobrist hash of its squares K, the player's
    normalized square with only those boxes on the board): two positions with equal keys pose
    the same bounded search, so its answer can be reused. Arguments as in ``corral_deadlock``.
    """
    offsets, zobrist, region, barrier, info = ct.offsets, ct.zobrist, ct.region, ct.barrier, ct.info
    sub_box_at, stamps, stack = ct.sub_box_at, ct.stamps, ct.stack
    h_boxes = np.uint64(0)
    h_region = np.uint64(0)
    bstart = info[k, INFO_BARRIER_START]
    for j in range(bstart, bstart + info[k, INFO_BARRIER_LEN]):
        sq = barrier[j]
        h_boxes ^= zobrist[sq]
        sub_box_at[sq] = 0
    rstart = info[k, INFO_REGION_START]
    for j in range(rstart, rstart + info[k, INFO_REGION_LEN]):
        sq = region[j]
        h_region ^= zobrist[sq]
        if box_at[sq] >= 0:
            h_boxes ^= zobrist[sq]
            sub_box_at[sq] = 0
    _, norm = reach_player(sub_box_at, offsets, player, stamps, stack)
    for j in range(bstart, bstart + info[k, INFO_BARRIER_LEN]):
        sub_box_at[barrier[j]] = -1
    for j in range(rstart, rstart + info[k, INFO_REGION_LEN]):
        sub_box_at[region[j]] = -1
    return h_boxes, h_region, norm


# Head of an exact corral key row (``key_row``): counts and K's smallest square, then squares.
KEY_BOXES = 0  # the corral's boxes (-1: the key is longer than the row, not stored)
KEY_LOWEST = 1  # the smallest square of K
KEY_HEAD = 2


@njit(cache=True, nogil=True, _nrt=False)
def _sort_run(row, start, n):
    """Sort ``row[start : start + n]`` in place, increasing (insertion sort: a few squares)."""
    for i in range(start + 1, start + n):
        x = row[i]
        j = i - 1
        while j >= start and row[j] > x:
            row[j + 1] = row[j]
            j -= 1
        row[j + 1] = x


@njit(cache=True, nogil=True, _nrt=False)
def key_row(ct, box_at, k, row):
    """Write corral ``k``'s exact memo key into ``row`` (int16); False when it does not fit.

    The row holds (``KEY_*`` head) the number of the corral's boxes B and the smallest square
    of K, then B's squares, increasing; ``row[KEY_BOXES]`` is -1 when they do not fit. With
    ``corral_key``'s norm it names the sub-problem exactly: B fixes the board, the norm the
    player's region P on it; the barrier is the boxes of B next to P (an interior box touches
    only K, walls and the barrier, none in P), and K, closed but for walls and the barrier, is
    the component of the other squares holding its smallest square. Arguments as in
    ``corral_deadlock``.
    """
    width = row.shape[0]
    n = KEY_HEAD
    bstart = ct.info[k, INFO_BARRIER_START]
    for j in range(bstart, bstart + ct.info[k, INFO_BARRIER_LEN]):
        if n == width:
            row[KEY_BOXES] = -1
            return False
        row[n] = ct.barrier[j]
        n += 1
    lowest = ct.cells.shape[0]
    rstart = ct.info[k, INFO_REGION_START]
    for j in range(rstart, rstart + ct.info[k, INFO_REGION_LEN]):
        sq = ct.region[j]
        lowest = min(lowest, sq)
        if box_at[sq] >= 0:
            if n == width:
                row[KEY_BOXES] = -1
                return False
            row[n] = sq
            n += 1
    n_boxes = n - KEY_HEAD
    _sort_run(row, KEY_HEAD, n_boxes)
    row[KEY_BOXES] = n_boxes
    row[KEY_LOWEST] = lowest
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _memo_row_matches(ct, box_at, k, slot):
    """True when memo ``slot``, whose hashes match corral ``k``'s key, holds that very key.

    Run only on a hash match, so a hash collision never hands one corral another's answer.
    A key too long for its row is a corral with more boxes than a search takes, whose search
    says unknown at once: such a slot answers (unknown) any such corral, and no other.
    """
    stored = ct.memo_key[slot]
    probe = ct.key_probe
    if not key_row(ct, box_at, k, probe) or stored[KEY_BOXES] < 0:
        return probe[KEY_BOXES] < 0 and stored[KEY_BOXES] < 0
    for j in range(KEY_HEAD + probe[KEY_BOXES]):
        if probe[j] != stored[j]:
            return False
    return True


class CorralScratch(NamedTuple):
    """Scratch arrays of the corral kernels for one board (see ``new_corral_scratch``)."""

    cstamp: np.ndarray  # int32[n_cells + 1] corral labels
    region: np.ndarray  # int32[n_cells] corral squares
    barrier: np.ndarray  # int32[4 * n_boxes] barrier squares
    info: np.ndarray  # int32[4 * n_boxes, N_INFO] corral table
    sub_box_at: np.ndarray  # int16[n_cells], all -1
    sub_nodes: np.ndarray  # int32[budget, max_boxes + 2]
    sub_hash: np.ndarray  # uint64[table cap]
    sub_player: np.ndarray  # int32[table cap], all -1
    sub_row: np.ndarray  # int32[table cap] row of ``sub_nodes`` holding each slot's position
    sub_pos: np.ndarray  # int32[max_boxes]
    sub_pushes: np.ndarray  # int32[4 * max_boxes]


def new_corral_scratch(
    n_cells: int, n_boxes: int, budget: int = 256, max_boxes: int = 12
) -> CorralScratch:
    """Fresh scratch for ``label_corrals`` and the bounded ``corral_deadlock`` search.

    Args:
        n_cells: squares of the board.
        n_boxes: boxes of the level.
        budget: most positions one corral search stores.
        max_boxes: largest corral searched (larger ones answer unknown).
    """
    nb = max(1, n_boxes)
    mb = max(1, min(nb, max_boxes))
    cap = max(1, budget)
    table = 1 << max(2, (2 * cap - 1).bit_length())
    return CorralScratch(
        cstamp=np.zeros(n_cells + 1, dtype=np.int32),
        region=np.zeros(n_cells, dtype=SQUARE_DTYPE),
        barrier=np.zeros(4 * nb, dtype=SQUARE_DTYPE),
        info=np.zeros((4 * nb, N_INFO), dtype=np.int32),
        sub_box_at=np.full(n_cells, -1, dtype=BOX_AT_DTYPE),
        sub_nodes=np.zeros((cap, mb + 2), dtype=SQUARE_DTYPE),
        sub_hash=np.zeros(table, dtype=HASH_DTYPE),
        sub_player=np.full(table, _EMPTY, dtype=np.int32),
        sub_row=np.zeros(table, dtype=np.int32),
        sub_pos=np.zeros(mb, dtype=SQUARE_DTYPE),
        sub_pushes=np.zeros(4 * mb, dtype=SQUARE_DTYPE),
    )


# Slots of ``CorralTables.params`` (int64[N_PARAMS]), fixed when the tables are built.
PARAM_BUDGET = 0  # most positions one bounded corral search stores
PARAM_MEMO = 1  # memo slots (a power of two), 0 for no memo
PARAM_MIN_BUDGET = 2  # floor of the adaptive per-size budgets, 0: every search gets the budget
N_PARAMS = 3

# Slots of ``CorralTables.out`` (int64[N_OUT]), written by the kernels below.
OUT_N_CORRALS = 0  # corrals found by the latest ``corral_label``
OUT_PROOF_LEN = 1  # squares in ``proof`` when the latest ``corral_status`` search proved a
OUT_PROOF_NORM = 2  # deadlock (0: no proof), and the normalized player square of that proof
N_OUT = 3

# Slots of ``CorralTables.counters`` (int64[N_COUNTERS]), only ever added to.
COUNT_MEMO_HITS = 0  # corral answers taken from the memo
COUNT_SEARCHES = 1  # bounded corral searches run
COUNT_CUT = 2  # of them, cut short by their budget (answer unknown)
COUNT_EXPANDED = 3  # positions those searches expanded (their cost)
N_COUNTERS = 4

# Everything the corral kernels of one board read and write, as one argument (numba takes a
# module-level namedtuple of arrays as a single value): board arrays, the ``CorralScratch``
# arrays, reachability scratch, parameters, the memo, per-call outputs and counters.
CorralTables = namedtuple(
    "CorralTables",
    [
        "cells",  # uint8[n_cells] cell flags
        "dead",  # uint8[n_cells] simple dead squares
        "offsets",  # int32[4] flat index step per direction
        "zobrist",  # uint64[n_cells] Zobrist key per square
        *CorralScratch._fields,  # cstamp ... sub_pushes (see ``CorralScratch``)
        "stamps",  # uint32[n_cells + 1] reachability stamps
        "stack",  # int32[n_cells]
        "seen",  # uint32[n_cells + 1] ``is_simple_deadlock`` scratch
        "trail",  # int32[n_cells]
        "pushes",  # int32[4 * n_boxes] legal push codes
        "params",  # int64[N_PARAMS] (PARAM_* slots)
        "size_budget",  # int64[max_boxes + 1] budget per corral size (adaptive budgets)
        "memo_boxes",  # uint64[memo cap] corral_key of each memo slot: boxes hash,
        "memo_region",  # uint64[memo cap] squares hash,
        "memo_norm",  # int32[memo cap] normalized player square,
        "memo_status",  # int8[memo cap] and the search's answer, -1 for an empty slot
        "memo_key",  # int16[memo cap, key width] each slot's exact key (``key_row``)
        "key_probe",  # int16[key width] scratch: the exact key of a corral being looked up
        "out",  # int64[N_OUT] per-call outputs (OUT_* slots)
        "proof",  # int32[n_boxes] squares of the latest proof's corral boxes
        "counters",  # int64[N_COUNTERS] (COUNT_* slots)
    ],
)


def new_corral_tables(
    board,
    budget: int = 256,
    max_boxes: int = 12,
    memo: int = 0,
    min_budget: int = 0,
) -> CorralTables:
    """Fresh ``CorralTables`` for the corral kernels on ``board`` (a ``soko_gym.engine.Board``).

    Args:
        board: the board.
        budget: most positions each bounded corral search stores.
        max_boxes: largest corral (barrier and interior boxes) searched.
        memo: most remembered corral answers, rounded up to a power of two; 0 remembers none.
        min_budget: with a value > 0 the budget adapts per corral size (module docstring),
            never below this; 0 gives every search ``budget``.

    Raises:
        ValueError: when ``memo`` is negative, or ``min_budget`` negative or above ``budget``.
    """
    if memo < 0:
        raise ValueError(f"memo must be >= 0, got {memo}")
    if not 0 <= min_budget <= budget:
        raise ValueError(f"min_budget must be in [0, budget={budget}], got {min_budget}")
    n = board.n_cells
    nb = max(1, board.n_boxes)
    cap = 0 if memo == 0 else 1 << (memo - 1).bit_length()
    slots = max(1, cap)
    params = np.zeros(N_PARAMS, dtype=np.int64)
    params[PARAM_BUDGET] = budget
    params[PARAM_MEMO] = cap
    params[PARAM_MIN_BUDGET] = min_budget
    scratch = new_corral_scratch(n, board.n_boxes, budget, max_boxes)
    # room for the key of every corral a search takes; a longer key's answer is "unknown"
    width = KEY_HEAD + scratch.sub_pos.shape[0]
    return CorralTables(
        cells=board.cells,
        dead=board.dead,
        offsets=board.offsets,
        zobrist=board.zobrist,
        **scratch._asdict(),
        stamps=new_stamps(board.cells),
        stack=np.empty(n, dtype=SQUARE_DTYPE),
        seen=np.zeros(n + 1, dtype=np.uint32),
        trail=np.empty(n, dtype=SQUARE_DTYPE),
        pushes=np.zeros(4 * nb, dtype=SQUARE_DTYPE),
        params=params,
        size_budget=np.full(max_boxes + 1, budget, dtype=np.int64),
        memo_boxes=np.zeros(slots, dtype=HASH_DTYPE),
        memo_region=np.zeros(slots, dtype=HASH_DTYPE),
        memo_norm=np.zeros(slots, dtype=np.int32),
        memo_status=np.full(slots, -1, dtype=np.int8),
        memo_key=np.zeros((slots, width), dtype=np.int16),
        key_probe=np.zeros(width, dtype=np.int16),
        out=np.zeros(N_OUT, dtype=np.int64),
        proof=np.zeros(nb, dtype=SQUARE_DTYPE),
        counters=np.zeros(N_COUNTERS, dtype=np.int64),
    )


@njit(cache=True, nogil=True, _nrt=False)
def corral_label(ct, box_at, box_pos, player):
    """Find the corrals of a position (``reach_player`` then ``label_corrals``).

    The later ``corral_status`` and ``corral_pi_sq_pushes`` calls answer for this position.

    Args:
        ct: ``CorralTables`` of the board; ``out[OUT_N_CORRALS]`` receives the count.
        box_at: int16[n_cells] box index per square, -1 for none.
        box_pos: int32[n_boxes] square of each box.
        player: the player's square.

    Returns:
        The number of corrals found.
    """
    stamps = ct.stamps
    reach_player(box_at, ct.offsets, np.int64(player), stamps, ct.stack)
    n = label_corrals(
        ct.cells, box_at, box_pos, ct.offsets, stamps, ct.cstamp, ct.region, ct.barrier,
        ct.info,
    )  # fmt: skip
    ct.out[OUT_N_CORRALS] = n
    return n


@njit(cache=True, nogil=True, _nrt=False)
def _memo_slot(h_boxes, h_region, norm, mask):
    """Memo slot of a ``corral_key`` triple (a mix of all three, masked)."""
    x = h_boxes ^ (h_region * np.uint64(0x9E3779B97F4A7C15))
    x ^= np.uint64(norm) * np.uint64(0xC2B2AE3D27D4EB4F)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(29)
    return np.int64(x & np.uint64(mask))


@njit(cache=True, nogil=True, _nrt=False)
def _write_proof(ct, box_at, k, norm):
    """Store corral ``k``'s box squares (barrier, then the boxes in K) and ``norm`` as proof."""
    m = 0
    bstart = ct.info[k, INFO_BARRIER_START]
    for j in range(bstart, bstart + ct.info[k, INFO_BARRIER_LEN]):
        ct.proof[m] = ct.barrier[j]
        m += 1
    rstart = ct.info[k, INFO_REGION_START]
    for j in range(rstart, rstart + ct.info[k, INFO_REGION_LEN]):
        sq = ct.region[j]
        if box_at[sq] >= 0:
            ct.proof[m] = sq
            m += 1
    ct.out[OUT_PROOF_LEN] = m
    ct.out[OUT_PROOF_NORM] = norm


@njit(cache=True, nogil=True, _nrt=False)
def corral_status(ct, box_at, box_pos, player):
    """Corral deadlock test of the position labelled by ``corral_label`` (same arguments).

    Runs ``corral_deadlock`` on every corral that needs a push, stopping at the first
    deadlock. With a memo (``params[PARAM_MEMO]`` > 0) each answer is stored under its
    ``corral_key`` in a direct-mapped table (a colliding key overwrites the slot) and a
    repeated key is answered without searching, once its exact key (``key_row``) matches
    too. When a search (not the memo) proves a deadlock, ``proof[:out[OUT_PROOF_LEN]]`` and
    ``out[OUT_PROOF_NORM]`` hold the corral's box squares and the normalized player square;
    else ``out[OUT_PROOF_LEN]`` is 0.

    Returns:
        CORRAL_DEADLOCK when some corral is proven a deadlock, else CORRAL_UNKNOWN when some
        search was cut short or some corral was too large, else CORRAL_OPEN.
    """
    player = np.int64(player)
    ct.out[OUT_PROOF_LEN] = 0
    mask = ct.params[PARAM_MEMO] - 1
    result = CORRAL_OPEN
    for k in range(ct.out[OUT_N_CORRALS]):
        if ct.info[k, INFO_NEEDS_PUSH] == 0:
            continue
        slot = np.int64(-1)
        h_boxes = np.uint64(0)
        h_region = np.uint64(0)
        norm = np.int64(-1)
        if mask >= 0:
            h_boxes, h_region, norm = corral_key(ct, box_at, k, player)
            slot = _memo_slot(h_boxes, h_region, norm, mask)
            status = ct.memo_status[slot]
            if (
                status >= 0
                and ct.memo_boxes[slot] == h_boxes
                and ct.memo_region[slot] == h_region
                and ct.memo_norm[slot] == norm
                and _memo_row_matches(ct, box_at, k, slot)
            ):
                ct.counters[COUNT_MEMO_HITS] += 1
                if status == CORRAL_DEADLOCK:
                    return CORRAL_DEADLOCK
                if status == CORRAL_UNKNOWN:
                    result = CORRAL_UNKNOWN
                continue
        status = corral_deadlock(ct, box_at, k, player)
        ct.counters[COUNT_SEARCHES] += 1
        if slot >= 0:
            ct.memo_boxes[slot] = h_boxes
            ct.memo_region[slot] = h_region
            ct.memo_norm[slot] = norm
            ct.memo_status[slot] = status
            key_row(ct, box_at, k, ct.memo_key[slot])
        if status == CORRAL_DEADLOCK:
            if slot < 0:
                _, _, norm = corral_key(ct, box_at, k, player)
            _write_proof(ct, box_at, k, norm)
            return CORRAL_DEADLOCK
        if status == CORRAL_UNKNOWN:
            result = CORRAL_UNKNOWN
    return result


@njit(cache=True, nogil=True, _nrt=False)
def corral_pi_sq_pushes(ct, box_at, box_pos, player, out):
    """Pushes PI-corral pruning keeps in the position labelled by ``corral_label``.

    Re-reaches the player (``corral_status`` overwrites the fill), so call order is free.

    Args:
        ct, box_at, box_pos, player: as in ``corral_label``.
        out: int64[>= 4 * n_boxes] receives square pushes ``box square * 4 + direction``: the legal
            pushes into the PI-corral with the fewest of them, in ``legal_pushes`` order,
            those onto a simple dead square dropped.

    Returns:
        The number of square pushes written (0: the position is a deadlock), or -1 when no corral
        is a PI-corral.
    """
    offsets = ct.offsets
    reach_player(box_at, offsets, np.int64(player), ct.stamps, ct.stack)
    best, _ = best_pi_corral(
        ct.dead, box_at, offsets, ct.stamps, ct.cstamp, ct.barrier, ct.info,
        ct.out[OUT_N_CORRALS],
    )  # fmt: skip
    if best < 0:
        return -1
    n_push = legal_pushes(ct.cells, box_at, box_pos, offsets, ct.stamps, ct.pushes)
    mark = np.int64(ct.info[best, INFO_MARK])
    kept = keep_pushes_into(box_pos, offsets, ct.cstamp, mark, ct.pushes, n_push)
    n = 0
    for i in range(kept):
        code = np.int64(ct.pushes[i])
        sq = np.int64(box_pos[code >> 2])
        d = code & 3
        if ct.dead[sq + offsets[d]] == 0:
            out[n] = sq * 4 + d
            n += 1
    return n


class CorralAnalysis:
    """Corral tests of positions of one board: a Python wrapper over the corral kernels.

    ``label(state)`` finds the corrals of a position once (``corral_label``);
    ``pi_corral_pushes()`` and ``deadlock_status()`` then answer for that position
    (``corral_pi_sq_pushes``, ``corral_status``). Not thread-safe.

    With ``memo`` > 0, ``deadlock_status`` remembers the answer of each corral search by the
    sub-problem it posed (``corral_key``: the corral's boxes, its squares and the player's
    region with only those boxes on the board) and answers a repeated corral without searching:
    during one search most positions repeat a corral of an earlier one. The memo is a
    direct-mapped table of ``memo`` slots (rounded up to a power of two); a new answer whose
    slot is taken overwrites it, so memory stays bounded.

    Args:
        board: a ``soko_gym.engine.Board``.
        budget: most positions each bounded corral search stores.
        max_boxes: largest corral (barrier and interior boxes) searched.
        memo: most remembered corral answers; 0 remembers none.
        min_budget: with a value > 0 each corral size's budget adapts (module docstring).
    """

    def __init__(
        self,
        board,
        budget: int = 256,
        max_boxes: int = 12,
        memo: int = 0,
        min_budget: int = 0,
    ) -> None:
        self.tables = new_corral_tables(board, budget, max_boxes, memo, min_budget)
        self.board = board
        self.budget = budget
        self.memo_size = int(self.tables.params[PARAM_MEMO])
        self.proof: tuple[np.ndarray, int] | None = None
        self.codes = np.zeros(4 * max(1, board.n_boxes), dtype=np.int64)
        self.state = None
        self.n_corrals = 0

    @property
    def memo_hits(self) -> int:
        """Corral answers taken from the memo so far."""
        return int(self.tables.counters[COUNT_MEMO_HITS])

    @property
    def searches(self) -> int:
        """Bounded corral searches run so far."""
        return int(self.tables.counters[COUNT_SEARCHES])

    @property
    def cut_short(self) -> int:
        """Searches so far that ran out of budget before an answer."""
        return int(self.tables.counters[COUNT_CUT])

    @property
    def expanded(self) -> int:
        """Positions the searches so far expanded."""
        return int(self.tables.counters[COUNT_EXPANDED])

    def label(self, state) -> int:
        """Find the corrals of ``state`` (a ``State``; kept by reference); returns their count."""
        self.state = state
        self.n_corrals = int(
            corral_label(self.tables, state.box_at, state.box_pos, int(state.player))
        )
        return self.n_corrals

    def pi_corral_pushes(self) -> list[tuple[int, int]] | None:
        """Pushes kept by PI-corral pruning in the labelled position (``pi_corral_pushes_of``).

        Re-reaches the player (``deadlock_status`` overwrites the fill), so call order is free.
        """
        sq_pushes = self.pi_corral_sq_pushes()
        return None if sq_pushes is None else [(int(c >> 2), int(c & 3)) for c in sq_pushes]

    def pi_corral_sq_pushes(self) -> np.ndarray | None:
        """``pi_corral_pushes`` as square pushes ``box square * 4 + direction`` (int64), or None."""
        st = self.state
        n = corral_pi_sq_pushes(self.tables, st.box_at, st.box_pos, int(st.player), self.codes)
        return None if n < 0 else self.codes[:n].copy()

    def deadlock_status(self) -> int:
        """The corral deadlock test on the labelled position (see ``corral_deadlock_status``).

        When a search of a plain corral (not the memo) proves a deadlock, ``proof`` holds what
        it proved: the squares of the corral's boxes and the player's normalized square with
        only those boxes on the board (a pattern every position containing both is dead in);
        else None.
        """
        ct = self.tables
        st = self.state
        status = int(corral_status(ct, st.box_at, st.box_pos, int(st.player)))
        m = int(ct.out[OUT_PROOF_LEN])
        self.proof = (ct.proof[:m].copy(), int(ct.out[OUT_PROOF_NORM])) if m else None
        return status


def pi_corral_pushes_of(board, state) -> list[tuple[int, int]] | None:
    """The pushes PI-corral pruning keeps in a position, or None when it has no PI-corral.

    Args:
        board: a ``soko_gym.engine.Board``.
        state: a ``soko_gym.engine.State`` of it.

    Returns:
        (box square, direction) of each push into the PI-corral with the fewest of them (an
        empty list: the position is a deadlock), or None when no corral is a PI-corral.
    """
    analysis = CorralAnalysis(board)
    analysis.label(state)
    return analysis.pi_corral_pushes()


def corral_deadlock_status(board, state, budget: int = 256, max_boxes: int = 12) -> int:
    """Run the corral deadlock test on every corral of a position that needs a push.

    Args:
        board: a ``soko_gym.engine.Board``.
        state: a ``soko_gym.engine.State`` of it.
        budget: most positions each bounded search stores.
        max_boxes: largest corral (barrier and interior boxes) searched.

    Returns:
        CORRAL_DEADLOCK when some corral is proven a deadlock, else CORRAL_UNKNOWN when some
        search was cut short, else CORRAL_OPEN.
    """
    analysis = CorralAnalysis(board, budget, max_boxes)
    analysis.label(state)
    return analysis.deadlock_status()


# A corral that is both a PI-corral and a deadlock: every corral kernel runs on it.
_WARMUP_ROWS = (
    "#########",
    "#.  #   #",
    "#   #   #",
    "# @ $ $.#",
    "#   #   #",
    "#   #   #",
    "#########",
)


def warmup_corral() -> None:
    """Compile or load every kernel of this module and the wall-line check, as planners do."""
    grid = np.array([list(row) for row in _WARMUP_ROWS])
    boxes = [int(i) for i in np.flatnonzero(grid == "$")]
    board = build_board(grid == "#", grid == ".", boxes, int(np.flatnonzero(grid == "@")[0]))
    state = board.initial_state()
    corral_deadlock_status(board, state, budget=4)
    pi_corral_pushes_of(board, state)
    analysis = CorralAnalysis(board, memo=4)
    analysis.label(state)
    analysis.deadlock_status()  # the memo path of corral_status
    # the kernels the bundle kernels call, by name too: loaded from the cache with their
    # callers they would show no signature of their own
    ct = analysis.tables
    reach_player(state.box_at, ct.offsets, np.int64(state.player), ct.stamps, ct.stack)
    n = label_corrals(
        ct.cells, state.box_at, state.box_pos, ct.offsets, ct.stamps, ct.cstamp, ct.region,
        ct.barrier, ct.info,
    )  # fmt: skip
    best_pi_corral(ct.dead, state.box_at, ct.offsets, ct.stamps, ct.cstamp, ct.barrier, ct.info,
                   ct.out[OUT_N_CORRALS])  # fmt: skip
    n_push = legal_pushes(ct.cells, state.box_at, state.box_pos, ct.offsets, ct.stamps, ct.pushes)
    keep_pushes_into(state.box_pos, ct.offsets, ct.cstamp, np.int64(0), ct.pushes, n_push)
    if n:
        pi_corral_pushes(
            board.dead, state.box_at, board.offsets, ct.stamps, ct.cstamp, ct.barrier, ct.info, 0
        )
        label_corrals(  # afresh: the search below needs the position's labels
            ct.cells, state.box_at, state.box_pos, ct.offsets, ct.stamps, ct.cstamp, ct.region,
            ct.barrier, ct.info,
        )  # fmt: skip
        corral_key(ct, state.box_at, 0, np.int64(state.player))
        corral_deadlock(ct, state.box_at, 0, np.int64(state.player))
    line_of, lines = wall_lines(board.cells, board.offsets)
    is_wall_line_deadlock(line_of, lines, state.box_at, int(state.box_pos[0]))
