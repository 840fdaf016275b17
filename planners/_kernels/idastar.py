"""Depth-first threshold search of IDA*, on an explicit stack, run in slices by the driver.

One call of ``run_idastar`` continues the current iteration (f threshold) where the last call
stopped; the position being searched lives in the scratch's ``box_pos``/``box_at`` between
calls.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from planners._kernels.common import (
    C_EXPANDED,
    C_GENERATED,
    EXHAUSTED,
    FOUND,
    GROW_HEAP,
    GROW_TABLE,
    N_SHARED,
    RUNNING,
    STEPS_SHIFT,
    square_push,
    tunnel_end,
)
from planners._kernels.table import table_get, table_put
from soko_gym.engine.constants import DIST_INF, HASH_DTYPE, SQUARE_DTYPE
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.lowerbound import (
    INFINITE_BOUND,
    matching_bound_full,
    matching_bound_update,
)
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import reach_player

# Statuses besides ``common``'s: RUNNING, FOUND (the stack down to counters[C_DEPTH] is a
# solution), EXHAUSTED (every node with f <= threshold was searched; counters[C_NEXT] is the
# next threshold) and GROW_TABLE (grow the table, or set C_TABLE_FULL).
STACK_FULL = GROW_HEAP + 1  # the stack is shorter than the threshold allows (a driver bug)

# Counter slots after the shared ones (int64[N_COUNTERS]).
C_DEPTH = N_SHARED  # depth of the node being expanded; -1: set up the root first
C_THRESHOLD = N_SHARED + 1  # f threshold of the iteration
C_NEXT = N_SHARED + 2  # smallest f above the threshold met in the iteration, or INFINITE_BOUND
C_TABLE = N_SHARED + 3  # table entries
C_TABLE_FULL = N_SHARED + 4  # 1: the table may not grow; no new keys are stored (updates are)
C_PRUNED_DEAD = N_SHARED + 5  # pushes onto simple dead squares (or squares with no goal)
C_PRUNED_FROZEN = N_SHARED + 6  # pushes that freeze a box off goal
C_DUPLICATES = N_SHARED + 7  # children reached before in the iteration with as few pushes
C_CUTOFFS = N_SHARED + 8  # children whose f passed the threshold
C_TUNNEL = N_SHARED + 9  # extra pushes made by tunnel macros of stacked children
C_PRUNED_MATCHING = N_SHARED + 10  # children with no matching of boxes to goals
N_COUNTERS = N_SHARED + 11
# C_EXPANDED counts nodes whose pushes were listed, C_GENERATED children past the dead-square
# and freeze tests, both over all iterations.

# The search's options, as one kernel argument.
IdaParams = namedtuple(
    "IdaParams",
    [
        "matching",  # bool: the matching bound (constant parity of f), else the simple bound
        "tunnels",  # bool: run pushes on through one-wide tunnels (a push macro)
    ],
)

# The depth stack (rows: depths), as one kernel argument.
IdaStack = namedtuple(
    "IdaStack",
    [
        "codes",  # int32[cap, 4 * n_boxes] candidate push codes per depth, in search order
        "count",  # int32[cap] number of candidates per depth
        "next",  # int32[cap] index of the next candidate to try per depth
        "g",  # int32[cap] pushes from the root per depth
        "h",  # int32[cap] lower bound per depth
        "hash",  # uint64[cap] box hash per depth
        "player",  # int32[cap] player square (right after its push); [0]: the start square
        "sq_push",  # int64[cap] square push into the node at each depth (0 for the root)
        "match",  # int64[cap, 4, n_boxes] matching state per depth (matching bound only)
    ],
)


def new_ida_stack(n_boxes: int, depth_cap: int) -> IdaStack:
    """A depth stack of ``depth_cap`` depths."""
    return IdaStack(
        codes=np.zeros((depth_cap, max(1, 4 * n_boxes)), dtype=SQUARE_DTYPE),
        count=np.zeros(depth_cap, dtype=SQUARE_DTYPE),
        next=np.zeros(depth_cap, dtype=SQUARE_DTYPE),
        g=np.zeros(depth_cap, dtype=SQUARE_DTYPE),
        h=np.zeros(depth_cap, dtype=SQUARE_DTYPE),
        hash=np.zeros(depth_cap, dtype=HASH_DTYPE),
        player=np.zeros(depth_cap, dtype=SQUARE_DTYPE),
        sq_push=np.zeros(depth_cap, dtype=np.int64),
        match=np.zeros((depth_cap, 4, n_boxes), dtype=np.int64),
    )


@njit(cache=True, nogil=True)
def _list_pushes(cells, dead, nearest, offsets, box_at, box_pos, stamps, pushes, codes, depth):
    """Write the legal pushes of the current position into ``codes[depth]``, best first.

    Pushes onto dead squares are dropped; pushes that bring their box closer to its nearest
    goal come first, the others after (both in ``legal_pushes`` order). ``stamps`` must hold
    ``reach_player`` of the current position; ``pushes`` is scratch. Arrays, not bundles, as
    every hot helper's (see ``common.is_pruned_push``).

    Returns:
        (number of pushes written, number dropped as dead).
    """
    k = legal_pushes(cells, box_at, box_pos, offsets, stamps, pushes)
    n = 0
    n_dead = 0
    for i in range(k):
        code = pushes[i]
        src = box_pos[code >> 2]
        dest = src + offsets[code & 3]
        if dead[dest] or nearest[dest] == DIST_INF:
            n_dead += 1
            pushes[i] = -1
        elif nearest[dest] < nearest[src]:
            codes[depth, n] = code
            n += 1
            pushes[i] = -1
    for i in range(k):
        if pushes[i] >= 0:
            codes[depth, n] = pushes[i]
            n += 1
    return n, n_dead


@njit(cache=True, nogil=True)
def _undo_square_push(box_pos, box_at, offsets, zobrist, sq_push):
    """Take back the (possibly macro) square push ``sq_push`` in place."""
    d = sq_push & 3
    src = (sq_push & ((1 << STEPS_SHIFT) - 1)) >> 2
    steps = (sq_push >> STEPS_SHIFT) + 1
    end = src + steps * offsets[d]
    code = np.int64(box_at[end]) * 4 + d
    hsh = np.uint64(0)
    for _ in range(steps):
        _, hsh = undo_push(box_pos, box_at, offsets, zobrist, hsh, code)


@njit(cache=True, nogil=True)
def run_idastar(board, params, table, scratch, stack, match_work, counters, budget):
    """Search on in the current IDA* iteration for up to ``budget`` expansions.

    A child is cut off when its ``f = g + h`` passes the threshold (the smallest such f is kept
    as the next threshold) and skipped when the table holds its position with as few pushes
    from this iteration.

    Args:
        board: ``common.SearchBoard``.
        params: ``IdaParams``.
        table: ``table.Table``: (box hash, normalized player) -> fewest pushes at which the
            position was reached in this iteration; updated.
        scratch: ``common.PushScratch``; ``box_pos``/``box_at`` hold the current position
            (the root when ``counters[C_DEPTH] < 0``); updated.
        stack: ``IdaStack``; updated.
        match_work: int64[3, n_boxes] scratch of the matching kernels.
        counters: int64[N_COUNTERS] search state and statistics (C_* slots); updated.
        budget: most nodes to expand in this call.

    Returns:
        A status: RUNNING, FOUND, EXHAUSTED, GROW_TABLE or STACK_FULL.
    """
    cells, offsets, zobrist = board.cells, board.offsets, board.zobrist
    dead, nearest, goal_dist = board.dead, board.nearest, board.goal_dist
    box_pos, box_at = scratch.box_pos, scratch.box_at
    stamps, stack_, pushes = scratch.stamps, scratch.stack, scratch.pushes
    seen, trail = scratch.seen, scratch.trail
    s_codes, s_count, s_next = stack.codes, stack.count, stack.next
    s_g, s_h, s_hash, s_player = stack.g, stack.h, stack.hash, stack.player
    s_sq_push, s_match = stack.sq_push, stack.match
    t_hash, t_player, t_value = table.hashes, table.players, table.values
    matching, tunnels = params.matching, params.tunnels
    depth_cap = s_g.shape[0]
    table_cap = t_player.shape[0]
    threshold = counters[C_THRESHOLD]
    expanded = 0
    if counters[C_DEPTH] < 0:  # a new iteration: set up the root
        hsh = np.uint64(0)
        h = np.int64(0)
        for b in range(box_pos.shape[0]):
            hsh ^= zobrist[box_pos[b]]
            h += np.int64(nearest[box_pos[b]])
        if matching:
            h = matching_bound_full(goal_dist, box_pos, s_match[0], match_work)
        s_g[0] = 0
        s_h[0] = h
        s_hash[0] = hsh
        s_sq_push[0] = 0
        _, norm = reach_player(box_at, offsets, np.int64(s_player[0]), stamps, stack_)
        table_put(t_hash, t_player, t_value, hsh, norm, np.int64(0))
        counters[C_TABLE] += 1
        n, n_dead = _list_pushes(
            cells, dead, nearest, offsets, box_at, box_pos, stamps, pushes, s_codes, 0
        )
        s_count[0] = n
        s_next[0] = 0
        counters[C_PRUNED_DEAD] += n_dead
        counters[C_DEPTH] = 0
        counters[C_EXPANDED] += 1
        expanded += 1
    while expanded < budget:
        if counters[C_TABLE_FULL] == 0 and 2 * (counters[C_TABLE] + 1) > table_cap:
            return GROW_TABLE
        depth = counters[C_DEPTH]
        if s_next[depth] >= s_count[depth]:  # every child searched: back up
            if depth == 0:
                return EXHAUSTED
            _undo_square_push(box_pos, box_at, offsets, zobrist, s_sq_push[depth])
            counters[C_DEPTH] = depth - 1
            continue
        code = np.int64(s_codes[depth, s_next[depth]])
        s_next[depth] += 1
        b = code >> 2
        d = code & 3
        src = np.int64(box_pos[b])
        dest = src + offsets[d]
        end = dest
        if tunnels:
            end = tunnel_end(cells, box_at, offsets, dest, d)
        n_steps = (end - src) // offsets[d]
        hsh = s_hash[depth]
        for _ in range(n_steps):
            _, hsh = apply_push(box_pos, box_at, offsets, zobrist, hsh, code)
        sq_push = square_push(src, d, n_steps)
        if is_simple_deadlock(cells, dead, box_at, offsets, end, seen, trail):
            counters[C_PRUNED_FROZEN] += 1
            _undo_square_push(box_pos, box_at, offsets, zobrist, sq_push)
            continue
        if nearest[end] == DIST_INF:
            counters[C_PRUNED_DEAD] += 1
            _undo_square_push(box_pos, box_at, offsets, zobrist, sq_push)
            continue
        child = depth + 1
        if child >= depth_cap:
            _undo_square_push(box_pos, box_at, offsets, zobrist, sq_push)
            return STACK_FULL
        child_h = s_h[depth] - np.int64(nearest[src]) + np.int64(nearest[end])
        if matching:
            for r in range(s_match.shape[1]):
                for c in range(s_match.shape[2]):
                    s_match[child, r, c] = s_match[depth, r, c]
            child_h = matching_bound_update(goal_dist, box_pos, s_match[child], b, match_work)
            if child_h >= INFINITE_BOUND:
                counters[C_PRUNED_MATCHING] += 1
                _undo_square_push(box_pos, box_at, offsets, zobrist, sq_push)
                continue
        counters[C_GENERATED] += 1
        child_g = s_g[depth] + n_steps
        f = child_g + child_h
        if f > threshold:
            counters[C_CUTOFFS] += 1
            if f < counters[C_NEXT]:
                counters[C_NEXT] = f
            _undo_square_push(box_pos, box_at, offsets, zobrist, sq_push)
            continue
        child_player = end - offsets[d]
        _, norm = reach_player(box_at, offsets, child_player, stamps, stack_)
        old_g = table_get(t_hash, t_player, t_value, hsh, norm)
        if old_g >= 0 and old_g <= child_g:
            counters[C_DUPLICATES] += 1
            _undo_square_push(box_pos, box_at, offsets, zobrist, sq_push)
            continue
        if old_g >= 0:
            table_put(t_hash, t_player, t_value, hsh, norm, child_g)
        elif counters[C_TABLE_FULL] == 0:
            table_put(t_hash, t_player, t_value, hsh, norm, child_g)
            counters[C_TABLE] += 1
        s_g[child] = child_g
        s_h[child] = child_h
        s_hash[child] = hsh
        s_player[child] = child_player
        s_sq_push[child] = sq_push
        counters[C_TUNNEL] += n_steps - 1
        counters[C_DEPTH] = child
        if child_h == 0:
            return FOUND
        n, n_dead = _list_pushes(
            cells, dead, nearest, offsets, box_at, box_pos, stamps, pushes, s_codes, child
        )
        s_count[child] = n
        s_next[child] = 0
        counters[C_PRUNED_DEAD] += n_dead
        counters[C_EXPANDED] += 1
        expanded += 1
    return RUNNING
