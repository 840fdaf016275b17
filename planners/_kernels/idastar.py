"""Depth-first threshold search of IDA*, on an explicit stack, run in bounded slices.

One call of ``run_idastar`` continues the current iteration (f threshold) where the last call
stopped; the position being searched lives in ``box_pos``/``box_at`` between calls.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planners._kernels.bestfirst import STEPS_SHIFT, _tunnel_end
from planners._kernels.table import table_get, table_put
from soko_gym.engine.constants import DIST_INF
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.lowerbound import (
    INFINITE_BOUND,
    matching_bound_full,
    matching_bound_update,
)
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import reach_player

# Statuses returned by run_idastar.
RUNNING = 0  # the expansion budget is spent; call again
FOUND = 1  # the stack down to counters[C_DEPTH] is a solution
ITERATION_DONE = 2  # every node with f <= threshold was searched; counters[C_NEXT] is next
GROW_TABLE = 3  # the transposition table is half full (grow it, or set C_TABLE_FULL)
STACK_FULL = 4  # the stack arrays are shorter than the threshold allows (a driver bug)

# Counter slots (int64 array).
C_DEPTH = 0  # depth of the node being expanded; -1: set up the root first
C_THRESHOLD = 1  # f threshold of the iteration
C_NEXT = 2  # smallest f above the threshold met in the iteration, bestfirst.INF_BOUND if none
C_TABLE = 3  # table entries
C_TABLE_FULL = 4  # 1: the table may not grow; no new keys are stored (updates still are)
C_EXPANDED = 5  # nodes whose pushes were listed, over all iterations
C_GENERATED = 6  # children past the dead-square and freeze tests
C_PRUNED_DEAD = 7  # pushes onto simple dead squares (or squares with no goal)
C_PRUNED_FROZEN = 8  # pushes that freeze a box off goal
C_DUPLICATES = 9  # children reached before in the iteration with as few pushes
C_CUTOFFS = 10  # children whose f passed the threshold
C_TUNNEL = 11  # extra pushes made by tunnel macros of stacked children
C_PRUNED_MATCHING = 12  # children with no matching of boxes to goals (matching bound)
N_COUNTERS = 13

# Lower bounds (the kernel's ``bound_kind``).
BOUND_SIMPLE = 0  # each box's pushes to its nearest goal
BOUND_MATCHING = 1  # minimum-cost matching of boxes to goals (constant parity of f)


@njit(cache=True, nogil=True)
def _list_pushes(cells, dead, nearest, offsets, box_at, box_pos, stamps, pushes, s_codes, depth):
    """Write the legal pushes of the current position into ``s_codes[depth]``, best first.

    Pushes onto dead squares are dropped; pushes that bring their box closer to its nearest
    goal come first, the others after (both in ``legal_pushes`` order). ``stamps`` must hold
    ``reach_player`` of the current position.

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
            s_codes[depth, n] = code
            n += 1
            pushes[i] = -1
    for i in range(k):
        if pushes[i] >= 0:
            s_codes[depth, n] = pushes[i]
            n += 1
    return n, n_dead


@njit(cache=True, nogil=True)
def _undo_move(box_pos, box_at, offsets, zobrist, move):
    """Take back the (possibly macro) push ``move`` (encoded as ``s_push``) in place."""
    d = move & 3
    src = (move & ((1 << STEPS_SHIFT) - 1)) >> 2
    steps = (move >> STEPS_SHIFT) + 1
    end = src + steps * offsets[d]
    code = np.int64(box_at[end]) * 4 + d
    hsh = np.uint64(0)
    for _ in range(steps):
        _, hsh = undo_push(box_pos, box_at, offsets, zobrist, hsh, code)


@njit(cache=True, nogil=True)
def run_idastar(
    cells,
    offsets,
    zobrist,
    dead,
    nearest,
    goal_dist,
    bound_kind,
    tunnels,
    t_hash,
    t_player,
    t_value,
    counters,
    box_pos,
    box_at,
    stamps,
    stack,
    pushes,
    seen,
    trail,
    s_codes,
    s_count,
    s_next,
    s_g,
    s_h,
    s_hash,
    s_player,
    s_push,
    s_match,
    match_work,
    budget,
):
    """Search on in the current IDA* iteration for up to ``budget`` expansions.

    A child is cut off when its ``f = g + h`` passes the threshold (the smallest such f is kept
    as the next threshold) and skipped when the table holds its position with as few pushes
    from this iteration; ``h`` is the bound ``bound_kind`` names.

    Args:
        cells: uint8[n_cells] cell flags of ``level.board``.
        offsets: int32[4] flat index step per direction.
        zobrist: uint64[n_cells] Zobrist keys.
        dead: uint8[n_cells] 1 on simple dead squares.
        nearest: uint16[n_cells] pushes to the nearest goal (DIST_INF: none).
        goal_dist: uint16[n_goals, n_cells] lone-box pushes to each goal (matching bound).
        bound_kind: BOUND_SIMPLE or BOUND_MATCHING.
        tunnels: run pushes on through one-wide tunnels (a push macro).
        t_hash, t_player, t_value: transposition table (see ``table``): (box hash, normalized
            player) -> fewest pushes at which the position was reached in this iteration.
        counters: int64[N_COUNTERS] search state and statistics (C_* slots); updated.
        box_pos: int32[n_boxes] box squares of the current position; updated. Must hold the
            root when ``counters[C_DEPTH] < 0``.
        box_at: int16[n_cells] box index per square of the current position; updated.
        stamps: uint32[n_cells + 1] stamp buffer; stack: int32[n_cells] scratch.
        pushes: int32[4 * n_boxes] scratch.
        seen: uint32[n_cells + 1] scratch stamps; trail: int32[n_cells] scratch.
        s_codes: int32[depth_cap, 4 * n_boxes] candidate push codes (box * 4 + direction) of
            the node at each depth, in search order.
        s_count: int32[depth_cap] number of candidates per depth.
        s_next: int32[depth_cap] index of the next candidate to try per depth.
        s_g: int32[depth_cap] pushes from the root per depth.
        s_h: int32[depth_cap] lower bound per depth.
        s_hash: uint64[depth_cap] box hash per depth.
        s_player: int32[depth_cap] player square per depth (right after its push);
            ``s_player[0]`` is the start square, set by the driver.
        s_push: int64[depth_cap] push into the node at each depth (0 for the root):
            ``square * 4 + direction`` (square before the push) plus
            ``(pushes - 1) << STEPS_SHIFT`` for a tunnel macro.
        s_match: int64[depth_cap, 4, n_boxes] matching state per depth (see
            ``lowerbound.matching_bound_full``); used with BOUND_MATCHING only.
        match_work: int64[3, n_boxes] scratch of the matching kernels.
        budget: most nodes to expand in this call.

    Returns:
        One of the status codes (RUNNING, FOUND, ITERATION_DONE, GROW_TABLE, STACK_FULL).
    """
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
        if bound_kind == BOUND_MATCHING:
            h = matching_bound_full(goal_dist, box_pos, s_match[0], match_work)
        s_g[0] = 0
        s_h[0] = h
        s_hash[0] = hsh
        s_push[0] = 0
        _, norm = reach_player(box_at, offsets, np.int64(s_player[0]), stamps, stack)
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
                return ITERATION_DONE
            _undo_move(box_pos, box_at, offsets, zobrist, s_push[depth])
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
            end = _tunnel_end(cells, box_at, offsets, dest, d)
        n_steps = (end - src) // offsets[d]
        hsh = s_hash[depth]
        for _ in range(n_steps):
            _, hsh = apply_push(box_pos, box_at, offsets, zobrist, hsh, code)
        move = src * 4 + d + ((n_steps - 1) << STEPS_SHIFT)
        if is_simple_deadlock(cells, dead, box_at, offsets, end, seen, trail):
            counters[C_PRUNED_FROZEN] += 1
            _undo_move(box_pos, box_at, offsets, zobrist, move)
            continue
        if nearest[end] == DIST_INF:
            counters[C_PRUNED_DEAD] += 1
            _undo_move(box_pos, box_at, offsets, zobrist, move)
            continue
        child = depth + 1
        if child >= depth_cap:
            _undo_move(box_pos, box_at, offsets, zobrist, move)
            return STACK_FULL
        child_h = s_h[depth] - np.int64(nearest[src]) + np.int64(nearest[end])
        if bound_kind == BOUND_MATCHING:
            for r in range(s_match.shape[1]):
                for c in range(s_match.shape[2]):
                    s_match[child, r, c] = s_match[depth, r, c]
            child_h = matching_bound_update(goal_dist, box_pos, s_match[child], b, match_work)
            if child_h >= INFINITE_BOUND:
                counters[C_PRUNED_MATCHING] += 1
                _undo_move(box_pos, box_at, offsets, zobrist, move)
                continue
        counters[C_GENERATED] += 1
        child_g = s_g[depth] + n_steps
        f = child_g + child_h
        if f > threshold:
            counters[C_CUTOFFS] += 1
            if f < counters[C_NEXT]:
                counters[C_NEXT] = f
            _undo_move(box_pos, box_at, offsets, zobrist, move)
            continue
        child_player = end - offsets[d]
        _, norm = reach_player(box_at, offsets, child_player, stamps, stack)
        old_g = table_get(t_hash, t_player, t_value, hsh, norm)
        if old_g >= 0 and old_g <= child_g:
            counters[C_DUPLICATES] += 1
            _undo_move(box_pos, box_at, offsets, zobrist, move)
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
        s_push[child] = move
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
