"""Best-first push search (A*, greedy) over arrays, run in bounded slices by a Python driver.

A node is a position right after a push: its box squares, the player square (where the pushed
box stood), its parent and the push that made it. The transposition table maps (box hash,
normalized player) to the node with the fewest pushes seen. The heap orders nodes by
``f = g + h`` (A*) or ``h`` (greedy), ties broken toward smaller ``h``; entries whose node was
improved after they were pushed are skipped when popped. The kernel returns to the driver when
its expansion budget is spent, a goal is popped, the heap is empty or an array is full.

Optional pruning (each behind a flag): a push that puts more boxes than goals on a wall line
(``engine.deadlock``) is dropped; an expanded node with a PI-corral generates only the pushes
into it, and one whose corral next to the last pushed box fails the bounded corral deadlock
search (``engine.corral``) generates nothing. All three keep A* push-optimal.

Heuristic ``h``: a lower bound on the pushes still needed; with ``bound_kind`` 0 the sum of each
box's pushes to its nearest goal, with 1 a minimum-cost perfect matching of boxes to goals
(solved once per expanded node, updated per child for the one box that moved). Push distances
depend on the player's side, so a push can lower either bound by more than one: a closed node
reached again with fewer pushes is reopened, which keeps A* push-optimal.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planners._kernels.heap import heap_pop, heap_push
from planners._kernels.table import table_get, table_put
from soko_gym.engine.constants import DIST_INF, FLOOR, GOAL
from soko_gym.engine.corral import (
    CORRAL_DEADLOCK,
    CORRAL_UNKNOWN,
    INFO_BARRIER_LEN,
    INFO_BARRIER_START,
    INFO_MARK,
    INFO_NEEDS_PUSH,
    best_pi_corral,
    corral_deadlock,
    keep_pushes_into,
    label_corrals,
)
from soko_gym.engine.deadlock import is_simple_deadlock, is_wall_line_deadlock
from soko_gym.engine.lowerbound import matching_bound_full, matching_bound_update
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import reach_player

# Statuses returned by run_best_first.
RUNNING = 0  # the expansion budget is spent; call again
FOUND = 1  # counters[C_GOAL] holds the goal node
EXHAUSTED = 2  # the heap is empty: every reachable position was expanded
GROW_NODES = 3  # the node store is full
GROW_TABLE = 4  # the transposition table is half full
GROW_HEAP = 5  # the heap is full

# Counter slots (int64 array).
C_NODES = 0  # nodes stored
C_HEAP = 1  # heap entries
C_TABLE = 2  # table entries
C_EXPANDED = 3
C_GENERATED = 4
C_PRUNED_DEAD = 5  # pushes onto simple dead squares
C_PRUNED_FROZEN = 6  # pushes that freeze a box off goal
C_DUPLICATES = 7  # children already seen with as few pushes
C_GOAL = 8
C_SHORTCUTS = 9  # children expanded at once because their f did not grow
C_TUNNEL = 10  # extra pushes made by tunnel macros
C_PENDING = 11  # a shortcut child to expand first on the next call, or -1
C_PRUNED_CORRAL = 12  # expanded nodes found deadlocked by the corral search
C_PRUNED_WALL_LINE = 13  # pushes that overfill a wall line
C_PI_CUTS = 14  # legal pushes not generated because a PI-corral restricts the node
C_CORRAL_UNKNOWN = 15  # corral searches that ran out of budget
N_COUNTERS = 16

KEY_SHIFT = 32
STEPS_SHIFT = 20  # n_push holds square * 4 + direction below this bit, extra tunnel pushes above
_STEP_MASK = (1 << STEPS_SHIFT) - 1


def expand_push_code(code: int, offsets: np.ndarray) -> list[tuple[int, int]]:
    """The single pushes (square before the push, direction) of a stored push code.

    A code is ``square * 4 + direction`` plus ``(pushes - 1) << STEPS_SHIFT`` for a tunnel
    macro, whose pushes move the same box on in the same direction.
    """
    steps = (code >> STEPS_SHIFT) + 1
    square, d = divmod(code & _STEP_MASK, 4)
    off = int(offsets[d])
    return [(square + k * off, d) for k in range(steps)]


INF_BOUND = 1 << 30


@njit(cache=True, nogil=True)
def simple_bound(nearest, box_pos):
    """Sum of each box's pushes to its nearest goal, or INF_BOUND if one cannot reach any.

    Args:
        nearest: uint16[n_cells] pushes from each square to the nearest goal (DIST_INF: none).
        box_pos: int32[n_boxes] box squares.
    """
    total = 0
    for b in range(box_pos.shape[0]):
        d = nearest[box_pos[b]]
        if d == DIST_INF:
            return INF_BOUND
        total += d
    return total


@njit(cache=True, nogil=True)
def _key(g, h, greedy):
    primary = h if greedy else g + h
    return (np.int64(primary) << KEY_SHIFT) | np.int64(h)


@njit(cache=True, nogil=True)
def _tunnel_end(cells, box_at, offsets, dest, d):
    """Square where a box pushed onto ``dest`` in direction ``d`` stops, tunnel macro included.

    The push runs on while box and player are in a one-wide tunnel (walls on both sides across
    ``d``), the box is off goal and the square ahead is free floor.
    """
    side_a = offsets[(d + 2) & 3] if d < 2 else offsets[(d - 2) & 3]
    side_b = -side_a
    sq = dest
    while True:
        if cells[sq] & GOAL:
            return sq
        if (cells[sq + side_a] & FLOOR) or (cells[sq + side_b] & FLOOR):
            return sq
        # the player stands behind the box inside the tunnel too: both walls must hold there
        back = sq - offsets[d]
        if (cells[back + side_a] & FLOOR) or (cells[back + side_b] & FLOOR):
            return sq
        nxt = sq + offsets[d]
        if not (cells[nxt] & FLOOR) or box_at[nxt] >= 0:
            return sq
        sq = nxt


@njit(cache=True, nogil=True)
def _corral_pruning(
    cells,
    offsets,
    zobrist,
    dead,
    pi_corrals,
    corral_deadlocks,
    corral_budget,
    cstamp,
    region,
    barrier,
    info,
    sub_box_at,
    sub_nodes,
    sub_hash,
    sub_player,
    sub_pos,
    sub_pushes,
    box_pos,
    box_at,
    player,
    last_push,
    stamps,
    stack,
    pushes,
    k,
    seen,
    trail,
    counters,
):
    """Restrict an expanded node's pushes by its corrals; returns how many stay in ``pushes``.

    ``stamps`` must hold the node's reach fill (it is overwritten by the deadlock search);
    ``last_push`` is the node's ``n_push`` entry, -1 at the root. Arrays as in
    ``run_best_first``.
    """
    n_corrals = label_corrals(
        cells, box_at, box_pos, offsets, stamps, cstamp, region, barrier, info
    )
    if n_corrals == 0:
        return k
    if pi_corrals:
        best, _ = best_pi_corral(dead, box_at, offsets, stamps, cstamp, barrier, info, n_corrals)
        if best >= 0:
            kept = keep_pushes_into(
                box_pos, offsets, cstamp, np.int64(info[best, INFO_MARK]), pushes, k
            )
            counters[C_PI_CUTS] += k - kept
            k = kept
    if not corral_deadlocks or k == 0:
        return k
    pushed = np.int64(-1)  # square of the box pushed last
    if last_push >= 0:
        d = last_push & 3
        pushed = player + offsets[d]
    for c in range(n_corrals):
        if info[c, INFO_NEEDS_PUSH] == 0:
            continue
        if pushed >= 0:
            touches = False
            start = info[c, INFO_BARRIER_START]
            for j in range(start, start + info[c, INFO_BARRIER_LEN]):
                if barrier[j] == pushed:
                    touches = True
                    break
            if not touches:
                continue
        status = corral_deadlock(
            cells,
            dead,
            offsets,
            zobrist,
            box_at,
            region,
            barrier,
            info,
            np.int64(c),
            player,
            corral_budget,
            sub_box_at,
            sub_nodes,
            sub_hash,
            sub_player,
            sub_pos,
            sub_pushes,
            stamps,
            stack,
            seen,
            trail,
        )
        if status == CORRAL_DEADLOCK:
            counters[C_PRUNED_CORRAL] += 1
            return 0
        if status == CORRAL_UNKNOWN:
            counters[C_CORRAL_UNKNOWN] += 1
    return k


@njit(cache=True, nogil=True)
def run_best_first(
    cells,
    offsets,
    zobrist,
    dead,
    nearest,
    goal_dist,
    bound_kind,
    pmatch,
    cmatch,
    work,
    n_boxes,
    greedy,
    tunnels,
    pi_corrals,
    corral_deadlocks,
    wall_lines,
    corral_budget,
    line_of,
    lines,
    cstamp,
    region,
    barrier,
    info,
    sub_box_at,
    sub_nodes,
    sub_hash,
    sub_player,
    sub_pos,
    sub_pushes,
    n_boxes_arr,
    n_player,
    n_parent,
    n_push,
    n_g,
    n_h,
    t_hash,
    t_player,
    t_value,
    h_keys,
    h_nodes,
    counters,
    box_pos,
    box_at,
    stamps,
    stack,
    pushes,
    seen,
    trail,
    budget,
):
    """Expand up to ``budget`` nodes of a best-first push search.

    Args:
        cells: uint8[n_cells] cell flags of ``level.board``.
        offsets: int32[4] flat index step per direction.
        zobrist: uint64[n_cells] Zobrist keys.
        dead: uint8[n_cells] 1 on simple dead squares.
        nearest: uint16[n_cells] pushes to the nearest goal.
        goal_dist: uint16[n_goals, n_cells] lone-box pushes to each goal.
        bound_kind: 0 simple bound, 1 matching bound.
        pmatch, cmatch: int64[4, n_boxes] matching states of the expanded node and a child;
            work: int64[3, n_boxes] scratch (see ``engine.lowerbound``).
        n_boxes: number of boxes.
        greedy: order by h alone (True) or by g + h (False).
        tunnels: run pushes on through one-wide tunnels (a push macro).
        pi_corrals: generate only the pushes into a PI-corral when the node has one.
        corral_deadlocks: run the bounded corral deadlock search on expanded nodes, for the
            corrals whose barrier holds the box pushed last (all corrals at the root).
        wall_lines: drop pushes that put more boxes than goals on a wall line.
        corral_budget: most positions one corral deadlock search stores.
        line_of: int32[2, n_cells], lines: int32[n_lines, 4] the board's wall lines
            (``engine.deadlock.wall_lines``).
        cstamp, region, barrier, info, sub_box_at, sub_nodes, sub_hash, sub_player, sub_pos,
            sub_pushes: corral scratch (``engine.corral.CorralScratch``; dtypes and shapes
            there).
        n_boxes_arr: int32[cap, n_boxes] box squares per node.
        n_player: int32[cap] player square per node (right after its push).
        n_parent: int32[cap] parent node, -1 for the root.
        n_push: int64[cap] ``square * 4 + direction`` of the push into the node (square before
            the push) plus ``(pushes - 1) << STEPS_SHIFT`` for a tunnel macro.
        n_g: int32[cap] pushes from the start.
        n_h: int32[cap] lower bound.
        t_hash, t_player, t_value: the transposition table (see ``table``).
        h_keys: int64[heap cap] heap keys; h_nodes: int32[heap cap] heap payloads.
        counters: int64[N_COUNTERS] store sizes and statistics (C_* slots); updated.
        box_pos: int32[n_boxes] scratch; box_at: int16[n_cells] scratch, all -1 on entry.
        stamps: uint32[n_cells + 1] stamp buffer; stack: int32[n_cells] scratch.
        pushes: int32[4 * n_boxes] scratch; seen: uint32[n_cells + 1], trail: int32[n_cells].
        budget: most nodes to expand in this call.

    Returns:
        One of the status codes (RUNNING, FOUND, EXHAUSTED, GROW_*).
    """
    cap = n_player.shape[0]
    heap_cap = h_keys.shape[0]
    table_cap = t_player.shape[0]
    room = 4 * n_boxes + 1
    expanded = 0
    node = counters[C_PENDING]  # a shortcut child, expanded without a heap round trip
    counters[C_PENDING] = -1
    while expanded < budget:
        status = RUNNING
        if counters[C_NODES] + room > cap:
            status = GROW_NODES
        elif counters[C_HEAP] + room > heap_cap:
            status = GROW_HEAP
        elif 2 * (counters[C_TABLE] + room) > table_cap:
            status = GROW_TABLE
        if status != RUNNING:
            counters[C_PENDING] = node
            return status
        if node < 0:
            if counters[C_HEAP] == 0:
                return EXHAUSTED
            key, node, size = heap_pop(h_keys, h_nodes, counters[C_HEAP])
            counters[C_HEAP] = size
            g = n_g[node]
            primary = key >> KEY_SHIFT
            expect = n_h[node] if greedy else g + n_h[node]
            if primary != expect:  # stale entry: the node was reached more cheaply later
                node = -1
                continue
            if n_g[node] < 0:  # already expanded
                node = -1
                continue
        if n_h[node] == 0:
            counters[C_GOAL] = node
            return FOUND
        g = n_g[node]
        h = n_h[node]
        for b in range(n_boxes):
            box_pos[b] = n_boxes_arr[node, b]
            box_at[box_pos[b]] = b
        hsh = np.uint64(0)
        for b in range(n_boxes):
            hsh ^= zobrist[box_pos[b]]
        player = np.int64(n_player[node])
        reach_player(box_at, offsets, player, stamps, stack)
        k = legal_pushes(cells, box_at, box_pos, offsets, stamps, pushes)
        if pi_corrals or corral_deadlocks:
            k = _corral_pruning(
                cells,
                offsets,
                zobrist,
                dead,
                pi_corrals,
                corral_deadlocks,
                corral_budget,
                cstamp,
                region,
                barrier,
                info,
                sub_box_at,
                sub_nodes,
                sub_hash,
                sub_player,
                sub_pos,
                sub_pushes,
                box_pos,
                box_at,
                player,
                np.int64(n_push[node]) if n_parent[node] >= 0 else np.int64(-1),
                stamps,
                stack,
                pushes,
                k,
                seen,
                trail,
                counters,
            )
        if bound_kind == 1:
            matching_bound_full(goal_dist, box_pos, pmatch, work)
        n_g[node] = -1 - g  # mark expanded (keeps g recoverable as -1 - n_g)
        expanded += 1
        counters[C_EXPANDED] += 1
        best_child = -1
        for i in range(k):
            code = np.int64(pushes[i])
            b = code >> 2
            d = code & 3
            src = np.int64(box_pos[b])
            dest = src + offsets[d]
            if dead[dest]:
                counters[C_PRUNED_DEAD] += 1
                continue
            end = dest
            if tunnels:
                end = _tunnel_end(cells, box_at, offsets, dest, d)
            n_steps = (end - src) // offsets[d]
            hsh2 = hsh
            child_player = 0
            for _ in range(n_steps):
                child_player, hsh2 = apply_push(box_pos, box_at, offsets, zobrist, hsh2, code)
            frozen = is_simple_deadlock(
                cells, dead, box_at, offsets, np.int64(box_pos[b]), seen, trail
            )
            walled = False
            if wall_lines and not frozen:
                walled = is_wall_line_deadlock(line_of, lines, box_at, np.int64(box_pos[b]))
            if frozen:
                counters[C_PRUNED_FROZEN] += 1
            elif walled:
                counters[C_PRUNED_WALL_LINE] += 1
            else:
                if bound_kind == 1:
                    cmatch[:, :] = pmatch
                    child_h = matching_bound_update(goal_dist, box_pos, cmatch, b, work)
                else:
                    child_h = simple_bound(nearest, box_pos)
                count, norm = reach_player(box_at, offsets, np.int64(child_player), stamps, stack)
                child_g = g + n_steps
                counters[C_GENERATED] += 1
                seen_node = table_get(t_hash, t_player, t_value, hsh2, norm)
                if seen_node >= 0:
                    old_g = n_g[seen_node]
                    if old_g < 0:
                        old_g = -1 - old_g
                    if old_g <= child_g:
                        counters[C_DUPLICATES] += 1
                        seen_node = -2
                if seen_node != -2 and child_h < INF_BOUND:
                    if seen_node >= 0 and n_g[seen_node] >= 0:
                        child = seen_node  # open node reached with fewer pushes: update it
                    else:
                        child = counters[C_NODES]
                        counters[C_NODES] += 1
                        if seen_node < 0:
                            counters[C_TABLE] += 1
                        table_put(t_hash, t_player, t_value, hsh2, norm, child)
                    for c in range(n_boxes):
                        n_boxes_arr[child, c] = box_pos[c]
                    n_player[child] = child_player
                    n_parent[child] = node
                    n_push[child] = src * 4 + d + ((n_steps - 1) << STEPS_SHIFT)
                    n_g[child] = child_g
                    n_h[child] = child_h
                    counters[C_TUNNEL] += n_steps - 1
                    # shortcut: a child whose f did not grow is expanded next, not queued
                    same_f = (not greedy) and n_steps == 1 and child_h == h - 1
                    if same_f and best_child < 0:
                        best_child = child
                    else:
                        counters[C_HEAP] = heap_push(
                            h_keys, h_nodes, counters[C_HEAP], _key(child_g, child_h, greedy), child
                        )
            for _ in range(n_steps):
                child_player, hsh2 = undo_push(box_pos, box_at, offsets, zobrist, hsh2, code)
        for b in range(n_boxes):
            box_at[box_pos[b]] = -1
        node = best_child
        if node >= 0:
            counters[C_SHORTCUTS] += 1
    counters[C_PENDING] = node
    return RUNNING
