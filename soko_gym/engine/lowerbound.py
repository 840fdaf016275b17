"""Push lower bounds (simple, minimum-cost matching) and the bipartite deadlock test.

Both bounds use lone-box push distances (``Board.goal_dist``), so neither ever exceeds the
pushes of a real solution: each box needs at least its own distance to the goal it ends on.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import DIST_INF, GOAL
from soko_gym.engine.deadlock import _blocked

INFINITE_BOUND = 1 << 30  # bound of a position that no solution can finish (a deadlock)
# Cost of a box-goal pair with no push path: more than any finite assignment can total
# (n_boxes <= n_cells <= 128 * 128 = 2**14 and finite distances < 2**16).
_NO_EDGE = 1 << 32

# Rows of the matching state array ``match`` (int64[4, n_boxes]).
MATCH_U = 0  # dual potential of each box (row)
MATCH_V = 1  # dual potential of each goal (column)
MATCH_GOAL_OF = 2  # goal index assigned to each box, -1 while unassigned
MATCH_BOX_OF = 3  # box index assigned to each goal, -1 while unassigned
N_MATCH_ROWS = 4


@njit(cache=True, nogil=True)
def simple_bound(nearest_goal_dist, box_pos):
    """Sum over the boxes of the push distance to the nearest goal.

    Args:
        nearest_goal_dist: uint16[n_cells] pushes from a square to its nearest goal for a lone
            box, DIST_INF where no goal can be reached (``Board.nearest_goal_dist``).
        box_pos: int32[n_boxes] square of each box.

    Returns:
        The bound (int), or INFINITE_BOUND when some box can reach no goal.
    """
    total = 0
    for i in range(box_pos.shape[0]):
        d = nearest_goal_dist[box_pos[i]]
        if d == DIST_INF:
            return INFINITE_BOUND
        total += np.int64(d)
    return total


@njit(cache=True, nogil=True)
def _cost(goal_dist, goal, square):
    """Cost of moving the box on ``square`` to goal index ``goal``: pushes, or _NO_EDGE."""
    d = goal_dist[goal, square]
    if d == DIST_INF:
        return np.int64(_NO_EDGE)
    return np.int64(d)


@njit(cache=True, nogil=True)
def _augment(goal_dist, box_pos, match, box, work):
    """Assign the unassigned ``box`` along a shortest augmenting path (O(n^2)).

    Dijkstra on reduced costs ``c[i, j] - u[i] - v[j]`` from the free row ``box`` (the
    Jonker-Volgenant step of the Hungarian method). Requires feasible potentials
    (``u[i] + v[j] <= c[i, j]`` everywhere), tight on every assigned pair, and exactly as many
    free goals as free boxes; keeps both properties and assigns ``box``.
    """
    n = box_pos.shape[0]
    u = match[MATCH_U]
    v = match[MATCH_V]
    goal_of = match[MATCH_GOAL_OF]
    box_of = match[MATCH_BOX_OF]
    minv = work[0]
    way = work[1]
    used = work[2]
    for j in range(n):
        minv[j] = np.int64(1) << 62
        way[j] = -1
        used[j] = 0
    prev = -1  # column through which the current row was reached; -1 = the free row itself
    row = box
    while True:
        sq = box_pos[row]
        ur = u[row]
        delta = np.int64(1) << 62
        best = -1
        for j in range(n):
            if used[j] == 0:
                cur = _cost(goal_dist, j, sq) - ur - v[j]
                if cur < minv[j]:
                    minv[j] = cur
                    way[j] = prev
                if minv[j] < delta:
                    delta = minv[j]
                    best = j
        u[box] += delta
        for j in range(n):
            if used[j] != 0:
                u[box_of[j]] += delta
                v[j] -= delta
            else:
                minv[j] -= delta
        used[best] = 1
        prev = best
        row = box_of[best]
        if row < 0:
            break
    col = prev
    while True:
        back = way[col]
        owner = box if back < 0 else box_of[back]
        box_of[col] = owner
        goal_of[owner] = col
        if back < 0:
            break
        col = back


@njit(cache=True, nogil=True)
def matching_bound_of(match):
    """The bound held by a complete matching state: the cost of its assignment.

    With every box assigned and each assigned pair tight, the assignment costs
    ``sum(u) + sum(v)``, read in O(n) without the distance table.

    Args:
        match: int64[4, n_boxes] matching state (see ``matching_bound_full``).

    Returns:
        The minimum-cost matching bound (int), or INFINITE_BOUND when no perfect matching of
        boxes to goals along finite push distances exists.
    """
    total = np.int64(0)
    for i in range(match.shape[1]):
        total += match[MATCH_U, i] + match[MATCH_V, i]
    if total >= _NO_EDGE:
        return INFINITE_BOUND
    return total


@njit(cache=True, nogil=True)
def matching_bound_full(goal_dist, box_pos, match, work):
    """Minimum-cost perfect matching of boxes to goals, solved from scratch (O(n^3)).

    Box ``i`` to goal ``j`` costs ``goal_dist[j, box_pos[i]]`` pushes; a DIST_INF entry is no
    edge. Fills ``match``, the state that ``matching_bound_update`` then keeps up to date.

    Args:
        goal_dist: uint16[n_goals, n_cells] lone-box push distances, minimised over player
            sides, DIST_INF where no push path exists (``Board.goal_dist``); n_goals must
            equal n_boxes.
        box_pos: int32[n_boxes] square of each box.
        match: int64[4, n_boxes] output, the matching state; rows, by their constants:
            ``MATCH_U`` dual potential of each box, ``MATCH_V`` dual potential of each goal,
            ``MATCH_GOAL_OF`` goal index assigned to each box, ``MATCH_BOX_OF`` box index
            assigned to each goal. Invariants: ``u[i] + v[j] <= cost[i, j]`` for all pairs,
            with equality on assigned pairs (an unreachable pair costs 2**32). Copy it with
            ``match.copy()`` (one small array) to keep a parent's state.
        work: int64[3, n_boxes] scratch.

    Returns:
        The bound (int), or INFINITE_BOUND when no perfect matching exists.
    """
    n = box_pos.shape[0]
    for i in range(n):
        match[MATCH_U, i] = 0
        match[MATCH_V, i] = 0
        match[MATCH_GOAL_OF, i] = -1
        match[MATCH_BOX_OF, i] = -1
    for i in range(n):
        _augment(goal_dist, box_pos, match, i, work)
    return matching_bound_of(match)


@njit(cache=True, nogil=True)
def matching_bound_update(goal_dist, box_pos, match, box, work):
    """Update the matching state in place after box ``box`` moved; O(n^2).

    The box's cost row changed: its goal is freed, its potential is reset to
    ``min_j(cost[box, j] - v[j])`` so every reduced cost is again non-negative, and one
    shortest augmenting path reassigns it. The result equals ``matching_bound_full`` on the
    new position (the assignment may differ among ties). Only one box may have moved since
    ``match`` was last complete; call it once per moved box otherwise.

    Args:
        goal_dist: uint16[n_goals, n_cells] as in ``matching_bound_full``.
        box_pos: int32[n_boxes] box squares, ``box_pos[box]`` already the new square.
        match: int64[4, n_boxes] complete matching state of the position before the move
            (see ``matching_bound_full``); updated in place.
        box: index of the box that moved.
        work: int64[3, n_boxes] scratch.

    Returns:
        The bound of the new position (int), or INFINITE_BOUND when no perfect matching exists.
    """
    n = box_pos.shape[0]
    u = match[MATCH_U]
    v = match[MATCH_V]
    goal = match[MATCH_GOAL_OF, box]
    if goal >= 0:
        match[MATCH_BOX_OF, goal] = -1
        match[MATCH_GOAL_OF, box] = -1
    sq = box_pos[box]
    low = np.int64(1) << 62
    for j in range(n):
        r = _cost(goal_dist, j, sq) - v[j]
        if r < low:
            low = r
    u[box] = low
    _augment(goal_dist, box_pos, match, box, work)
    return matching_bound_of(match)


@njit(cache=True, nogil=True, _nrt=False)
def mark_frozen_boxes(cells, dead, box_pos, offsets, seen):
    """Mark the boxes that can never move again, over the whole position.

    The greatest set of boxes that are each blocked on both axes when the others of the set
    count as walls (blocking rules of ``deadlock.is_simple_deadlock``: a wall on either side,
    simple dead squares on both sides, or a set box on either side). Starts from every box
    and removes movable ones until the set is stable. No solution ever moves one of them
    without losing: the first to move would need a free, non-dead square next to it.

    Args:
        cells: uint8[n_cells] cell flags.
        dead: uint8[n_cells] nonzero on simple dead squares.
        box_pos: int32[n_boxes] square of each box.
        offsets: int32[4] flat index step per direction.
        seen: uint32[n_cells + 1] stamps; ``seen[n_cells]`` holds the last mark used. On
            return a box square ``sq`` is frozen iff ``seen[sq] == seen[n_cells]``.

    Returns:
        The number of frozen boxes.
    """
    mark = _new_mark(seen)
    for i in range(box_pos.shape[0]):
        seen[box_pos[i]] = mark
    changed = True
    while changed:
        changed = False
        for i in range(box_pos.shape[0]):
            box = box_pos[i]
            if seen[box] != mark:
                continue
            if not (
                _blocked(cells, dead, offsets, box, np.int64(0), seen, mark)
                and _blocked(cells, dead, offsets, box, np.int64(1), seen, mark)
            ):
                seen[box] = 0
                changed = True
    count = 0
    for i in range(box_pos.shape[0]):
        if seen[box_pos[i]] == mark:
            count += 1
    return count


@njit(cache=True, nogil=True, _nrt=False)
def _new_mark(stamps):
    """The next mark of a stamp array whose last slot holds the mark in use (cleared on wrap)."""
    n = stamps.shape[0] - 1
    mark = stamps[n] + 1
    if mark == 0:  # wrapped: start over
        stamps[:] = 0
        mark = 1
    stamps[n] = mark
    return mark


@njit(cache=True, nogil=True, _nrt=False)
def bipartite_deadlock_marked(cells, goals, goal_dist, box_pos, seen, work):
    """``bipartite_deadlock`` with the boxes marked in ``seen`` as the boxes that never move.

    The marked set (``seen[sq] == seen[n_cells]``, as ``mark_frozen_boxes`` leaves it)
    replaces the frozen set: one off goal is a deadlock, one
    on a goal keeps it and leaves the matching. ``goal_dist`` may have the marked squares as
    walls (``planners._kernels.fess_frozen``), since no marked box is matched through it.
    """
    if _marked_goals(cells, goals, box_pos, seen, work):
        return True
    return _augment_all(goal_dist, box_pos, work[0], work[1], work[2], work[3])


@njit(cache=True, nogil=True, _nrt=False)
def bipartite_deadlock(cells, dead, goals, goal_dist, box_pos, offsets, seen, work):
    """True when the boxes cannot all reach distinct goals (bipartite deadlock test).

    Frozen boxes (``mark_frozen_boxes``) are walls for good: one off goal is a deadlock; one on
    a goal keeps that goal, and both leave the matching. Every other box must then be matched
    to a distinct remaining goal along an edge "finite lone-box push distance"
    (``goal_dist``). Relaxation: the distances are those of the empty board, not recomputed
    with the frozen boxes as walls, so a cut is always a real deadlock while some deadlocks
    are missed.

    Args:
        cells: uint8[n_cells] cell flags.
        dead: uint8[n_cells] nonzero on simple dead squares.
        goals: int32[n_goals] goal squares (``Board.goals``); n_goals must equal n_boxes.
        goal_dist: uint16[n_goals, n_cells] as in ``matching_bound_full``.
        box_pos: int32[n_boxes] square of each box.
        offsets: int32[4] flat index step per direction.
        seen: uint32[n_cells + 1] scratch stamps as in ``mark_frozen_boxes``.
        work: int32[4, n_boxes] scratch.

    Returns:
        True when the position is a deadlock by this test.
    """
    if _frozen_goals(cells, dead, goals, box_pos, offsets, seen, work):
        return True
    return _augment_all(goal_dist, box_pos, work[0], work[1], work[2], work[3])


@njit(cache=True, nogil=True, _nrt=False)
def _frozen_goals(cells, dead, goals, box_pos, offsets, seen, work):
    """Empty matching in ``work`` but for frozen boxes on goals; True when one is off goal.

    ``work[0]``: goal matched to each box, -1 free, -2 frozen on its goal; ``work[1]``: box
    matched to each goal, -1 free, -2 taken by a frozen box.
    """
    mark_frozen_boxes(cells, dead, box_pos, offsets, seen)
    return _marked_goals(cells, goals, box_pos, seen, work)


@njit(cache=True, nogil=True, _nrt=False)
def _marked_goals(cells, goals, box_pos, seen, work):
    """Empty matching in ``work`` but for the marked boxes; True when one is off goal.

    The marked boxes: ``seen[sq] == seen[n_cells]``. ``work`` rows as in ``_frozen_goals``.
    """
    n = box_pos.shape[0]
    mark = seen[seen.shape[0] - 1]
    goal_of = work[0]
    box_of = work[1]
    for i in range(n):
        goal_of[i] = -1
        box_of[i] = -1
    for i in range(n):
        sq = box_pos[i]
        if seen[sq] != mark:
            continue
        if not (cells[sq] & GOAL):
            return True
        for j in range(goals.shape[0]):
            if goals[j] == sq:
                box_of[j] = -2
                goal_of[i] = -2
                break
    return False


@njit(cache=True, nogil=True, _nrt=False)
def bipartite_deadlock_from(
    cells, dead, goals, goal_dist, box_pos, offsets, seen, work, start, moved
):
    """``bipartite_deadlock`` of a position one box away from one whose matching is known.

    ``start``: int32[n_boxes] the goal each box was matched to in that position (as
    ``work[0]`` leaves it: -1 or -2 for none), ``moved``: the box that moved since. Every
    other box keeps its edge (its square and the distances are the same), so the matching
    starts from those edges that frozen boxes leave free and augments only the boxes left
    over: the same answer as the full test (a box without an augmenting path stays
    unmatched in every maximum matching), with one search instead of one per box.
    """
    n = box_pos.shape[0]
    if _frozen_goals(cells, dead, goals, box_pos, offsets, seen, work):
        return True
    goal_of = work[0]
    box_of = work[1]
    for i in range(n):
        g = start[i]
        if i != moved and goal_of[i] == -1 and g >= 0 and box_of[g] == -1:
            goal_of[i] = g
            box_of[g] = i
    return _augment_all(goal_dist, box_pos, goal_of, box_of, work[2], work[3])


@njit(cache=True, nogil=True, _nrt=False)
def _augment_all(goal_dist, box_pos, goal_of, box_of, parent, queue):
    """Augment every unmatched box of a partial matching; True when one cannot be matched.

    ``parent``: BFS scratch (box from which a goal was reached); ``queue``: BFS scratch.
    """
    n = box_pos.shape[0]
    for root in range(n):
        if goal_of[root] != -1:
            continue
        for j in range(n):
            parent[j] = -1
        queue[0] = root
        head = 0
        tail = 1
        found = -1
        while head < tail and found < 0:
            i = queue[head]
            head += 1
            sq = box_pos[i]
            for j in range(n):
                if box_of[j] == -2 or parent[j] >= 0 or goal_dist[j, sq] == DIST_INF:
                    continue
                parent[j] = i
                if box_of[j] == -1:
                    found = j
                    break
                queue[tail] = box_of[j]
                tail += 1
        if found < 0:
            return True  # Hall's condition fails for the boxes reached from root
        j = found
        while True:
            i = parent[j]
            nxt = goal_of[i]
            goal_of[i] = j
            box_of[j] = i
            if i == root:
                break
            j = nxt
    return False


def new_match_state(n_boxes: int) -> tuple[np.ndarray, np.ndarray]:
    """Fresh ``(match, work)`` arrays for the matching kernels: int64[4, n], int64[3, n]."""
    return (
        np.zeros((N_MATCH_ROWS, n_boxes), dtype=np.int64),
        np.zeros((3, n_boxes), dtype=np.int64),
    )


def new_bipartite_scratch(n_cells: int, n_boxes: int) -> tuple[np.ndarray, np.ndarray]:
    """Fresh ``(seen, work)`` scratch for ``bipartite_deadlock``: uint32[n_cells + 1], int32."""
    return np.zeros(n_cells + 1, dtype=np.uint32), np.zeros((4, n_boxes), dtype=np.int32)


def warmup_lowerbound(board) -> None:
    """Compile or load every kernel of this module with the argument types planners use.

    Args:
        board: a ``soko_gym.engine.Board`` with at least one box.
    """
    state = board.initial_state()
    box_pos = state.box_pos
    simple_bound(board.nearest_goal_dist, box_pos)
    match, work = new_match_state(board.n_boxes)
    matching_bound_full(board.goal_dist, box_pos, match, work)
    matching_bound_update(board.goal_dist, box_pos, match, 0, work)
    matching_bound_of(match)
    seen, scratch = new_bipartite_scratch(board.n_cells, board.n_boxes)
    mark_frozen_boxes(board.cells, board.dead, box_pos, board.offsets, seen)
    bipartite_deadlock_marked(board.cells, board.goals, board.goal_dist, box_pos, seen, scratch)
    args = (board.cells, board.dead, board.goals, board.goal_dist, box_pos, board.offsets)
    bipartite_deadlock(*args, seen, scratch)
    bipartite_deadlock_from(*args, seen, scratch, scratch[0].copy(), 0)
