"""FESS retrograde analysis: a position whose boxes were packed and immobilized too soon.

One of the search's node-level deadlock tests (``fess_search.node_deadlock``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import FLOOR, GOAL
from soko_gym.engine.deadlock import is_simple_deadlock


@njit(cache=True, nogil=True, _nrt=False)
def retrograde_deadlock(cells, dead, offsets, goals, box_at, box_pos, seen, trail, sub_box_at):
    """Retrograde analysis (FESS paper, appendix): boxes packed and immobilized too soon.

    Frozen boxes on targets become walls; every other target gets a box; boxes are then pulled
    off their targets and removed for as long as some box can be pulled (a pull needs two free
    floor squares in a row beside the box; the player's access is relaxed, which keeps the test
    sound). A target whose box can never leave must hold a box already; if it does not, the
    position is unsolvable.

    Args:
        cells, dead, offsets: the board's arrays; goals: int32[n_goals].
        box_at: int16[n_cells]; box_pos: int32[n_boxes]: the position (unchanged).
        seen: uint32[n_cells + 1], trail: int32[n_cells]: scratch.
        sub_box_at: int16[n_cells] scratch, all -1 on entry and on return.

    Returns:
        True when the position is proven a deadlock.
    """
    n_goals = goals.shape[0]
    # frozen boxes: is_simple_deadlock leaves the frozen set stamped with the latest mark
    n_frozen = 0
    for b in range(box_pos.shape[0]):
        sq = box_pos[b]
        if not (cells[sq] & GOAL):
            continue
        if _is_frozen(cells, dead, box_at, offsets, np.int64(sq), seen, trail):
            sub_box_at[sq] = -2  # a wall for good
            n_frozen += 1
    if n_frozen == 0:
        return False
    for g in range(n_goals):
        if sub_box_at[goals[g]] == -1:
            sub_box_at[goals[g]] = 0
    changed = True
    while changed:
        changed = False
        for g in range(n_goals):
            sq = goals[g]
            if sub_box_at[sq] != 0:
                continue
            for d in range(4):
                a = sq + offsets[d]
                c = a + offsets[d]
                if (cells[a] & FLOOR) and (cells[c] & FLOOR) and sub_box_at[a] == -1:
                    if sub_box_at[c] == -1:
                        sub_box_at[sq] = -1
                        changed = True
                        break
    lost = False
    for g in range(n_goals):
        sq = goals[g]
        if sub_box_at[sq] == 0 and box_at[sq] < 0:
            lost = True
        sub_box_at[sq] = -1
    for b in range(box_pos.shape[0]):
        sub_box_at[box_pos[b]] = -1
    return lost


@njit(cache=True, nogil=True, _nrt=False)
def _is_frozen(cells, dead, box_at, offsets, sq, seen, trail):
    """True when the box on ``sq`` can never move: blocked on both axes by walls or frozen boxes.

    Uses ``is_simple_deadlock``'s frozen-set computation with goals ignored: a frozen cluster
    all on goals is not a deadlock there, but its boxes are still immobile.
    """
    is_simple_deadlock(cells, dead, box_at, offsets, sq, seen, trail)
    mark = seen[seen.shape[0] - 1]
    return seen[sq] == mark
