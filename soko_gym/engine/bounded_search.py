"""What the bounded push searches share: their position queue, its visited table, their budgets.

The corral deadlock test (``engine.corral_search``), the exhaustion test (``engine.exhaust``)
and FESS's room searches store positions the same way: rows of box squares plus the player
(column -2) and the row's table slot (column -1), queued breadth-first, and an
open-addressing table keyed by (box Zobrist hash, normalized player) whose match counts only
when the stored row holds the same box set. ``adapt_budget`` halves or doubles a search's next
budget by what the last one gave.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import GOAL

EMPTY = -1  # a free slot of a visited table (its player column)


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
    while sub_player[i] != EMPTY:
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
    if sub_player[slot] != EMPTY:
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
        sub_player[sub_nodes[node, col_slot]] = EMPTY


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
