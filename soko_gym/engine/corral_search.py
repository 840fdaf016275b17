"""The corral deadlock test: a bounded push search on a corral's boxes alone.

Corrals and their labels are defined in ``engine.corral``.

The test is a bounded breadth-first push search on the board with every box outside the
corral removed. Any solution, restricted to the corral's boxes, is a push sequence of that
smaller problem (fewer boxes only widen walks and free targets), so if no sequence reaches an
*open* position (the player reaches every free square of K) or one with every corral box on a
goal, the position is a deadlock. Pushes onto dead squares and freezes off goal are pruned
inside it. When the node budget runs out the answer is unknown, never a deadlock. Visited
positions are keyed by (box Zobrist hash, normalized player), as in the planners' tables, and
a hash match counts only when the stored box squares are the same too: a hash collision could
otherwise pass an unvisited position for a visited one and let the search run dry on a live
position.

Adaptive budgets (``min_budget`` > 0): the budget is kept per corral size (its number of boxes),
halved after a search of that size runs out and doubled (up to the full budget) after one
proves a deadlock. Searches that mostly run out cost little; sizes whose
proofs need deep searches keep them. Only fewer proofs can follow, never a wrong one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.bounded_search import (
    adapt_budget,
    all_on_goal,
    clear_queue,
    load_queued,
    queue_position,
)
from soko_gym.engine.constants import GOAL
from soko_gym.engine.corral import (
    INFO_BARRIER_LEN,
    INFO_BARRIER_START,
    INFO_REGION_LEN,
    INFO_REGION_START,
)
from soko_gym.engine.corral_tables import (
    COUNT_CUT,
    COUNT_EXPANDED,
    PARAM_BUDGET,
    PARAM_MIN_BUDGET,
)
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import reach_player

# Results of corral_deadlock.
CORRAL_OPEN = 0  # the bounded search opened the corral or put its boxes on goals
CORRAL_DEADLOCK = 1  # the search ran out of positions: the position is a deadlock
CORRAL_UNKNOWN = 2  # the node budget ran out, or the corral has too many boxes


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
