"""Best-first push search (``astar`` and ``greedy``) over arrays, run in slices by the driver.

A node is a position right after a push: its box squares, the player square (where the pushed
box stood), its parent and the square push that made it. The transposition table maps (box
hash, normalized player) to the node with the fewest pushes seen. The heap orders nodes by
``f = g + h`` (A*) or ``h`` (greedy), ties broken toward smaller ``h``; entries whose node was
improved after they were pushed are skipped when popped. The kernel returns to the driver when
its expansion budget is spent, a goal is popped, the heap is empty or an array is full.

Optional pruning (each behind a flag): a push that puts more boxes than goals on a wall line
(``engine.deadlock``) is dropped; an expanded node with a PI-corral generates only the pushes
into it, and one whose corral next to the last pushed box fails the bounded corral deadlock
search (``engine.corral_search``) generates nothing. All three keep A* push-optimal.

Heuristic ``h``: a lower bound on the pushes still needed; the sum of each box's pushes to its
nearest goal, or a minimum-cost perfect matching of boxes to goals (solved once per expanded
node, updated per child for the one box that moved). Push distances depend on the player's
side, so a push can lower either bound by more than one: a closed node reached again with
fewer pushes is reopened, which keeps A* push-optimal.
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
    GROW_NODES,
    GROW_TABLE,
    N_SHARED,
    RUNNING,
    square_push,
    tunnel_end,
)
from planners._kernels.heap import heap_pop, heap_push
from planners._kernels.table import table_get, table_put
from soko_gym.engine.board import Board
from soko_gym.engine.constants import SQUARE_DTYPE
from soko_gym.engine.corral import (
    INFO_BARRIER_LEN,
    INFO_BARRIER_START,
    INFO_MARK,
    INFO_NEEDS_PUSH,
    best_pi_corral,
    keep_pushes_into,
    label_corrals,
)
from soko_gym.engine.corral_search import CORRAL_DEADLOCK, CORRAL_UNKNOWN, corral_deadlock
from soko_gym.engine.deadlock import is_simple_deadlock, is_wall_line_deadlock, wall_lines
from soko_gym.engine.lowerbound import (
    INFINITE_BOUND,
    matching_bound_full,
    matching_bound_update,
    new_match_state,
    simple_bound,
)
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import reach_player

# Counter slots after the shared ones (int64[N_COUNTERS]).
C_NODES = N_SHARED  # nodes stored
C_HEAP = N_SHARED + 1  # heap entries
C_TABLE = N_SHARED + 2  # table entries
C_PRUNED_DEAD = N_SHARED + 3  # pushes onto simple dead squares
C_PRUNED_FROZEN = N_SHARED + 4  # pushes that freeze a box off goal
C_DUPLICATES = N_SHARED + 5  # children already seen with as few pushes
C_GOAL = N_SHARED + 6  # the goal node, once FOUND
C_SHORTCUTS = N_SHARED + 7  # children expanded at once because their f did not grow
C_TUNNEL = N_SHARED + 8  # extra pushes made by tunnel macros
C_PENDING = N_SHARED + 9  # a shortcut child to expand first on the next call, or -1
C_PRUNED_CORRAL = N_SHARED + 10  # expanded nodes found deadlocked by the corral search
C_PRUNED_WALL_LINE = N_SHARED + 11  # pushes that overfill a wall line
C_PI_CUTS = N_SHARED + 12  # legal pushes not generated because a PI-corral restricts the node
C_CORRAL_UNKNOWN = N_SHARED + 13  # corral searches that ran out of budget
N_COUNTERS = N_SHARED + 14

KEY_SHIFT = 32  # heap key: primary (f or h) above this bit, h below

# The search's options, as one kernel argument.
AStarParams = namedtuple(
    "AStarParams",
    [
        "matching",  # bool: matching bound (else the simple bound)
        "greedy",  # bool: order by h alone (else by g + h)
        "tunnels",  # bool: run pushes on through one-wide tunnels (a push macro)
        "pi_corrals",  # bool: generate only the pushes into a PI-corral when a node has one
        "corral_deadlocks",  # bool: bounded corral deadlock search on expanded nodes
        "wall_lines",  # bool: drop pushes that put more boxes than goals on a wall line
    ],
)

# Per-search arrays beside the board: wall lines and matching states.
AStarTables = namedtuple(
    "AStarTables",
    [
        "line_of",  # int32[2, n_cells] wall line per square (``engine.deadlock.wall_lines``)
        "lines",  # int32[n_lines, 4] the wall lines
        "match",  # int64[4, n_boxes] matching state of the expanded node
        "child_match",  # int64[4, n_boxes] matching state of a child
        "match_work",  # int64[3, n_boxes] matching scratch (``engine.lowerbound``)
    ],
)

# The node store (rows: nodes), as one kernel argument.
AStarNodes = namedtuple(
    "AStarNodes",
    [
        "boxes",  # int32[cap, n_boxes] box squares
        "player",  # int32[cap] player square (right after the push)
        "parent",  # int32[cap] parent node, -1 for the root
        "sq_push",  # int64[cap] square push into the node (``common``)
        "g",  # int32[cap] pushes from the start; -1 - g once expanded
        "h",  # int32[cap] lower bound
    ],
)


def new_astar_tables(board: Board) -> AStarTables:
    """The wall lines of ``board`` and fresh matching states."""
    match, work = new_match_state(board.n_boxes)
    return AStarTables(*wall_lines(board.cells, board.offsets), match, match.copy(), work)


def new_astar_nodes(n_boxes: int, capacity: int) -> AStarNodes:
    """A node store of ``capacity`` nodes."""
    return AStarNodes(
        boxes=np.zeros((capacity, n_boxes), dtype=SQUARE_DTYPE),
        player=np.zeros(capacity, dtype=SQUARE_DTYPE),
        parent=np.zeros(capacity, dtype=SQUARE_DTYPE),
        sq_push=np.zeros(capacity, dtype=np.int64),
        g=np.zeros(capacity, dtype=SQUARE_DTYPE),
        h=np.zeros(capacity, dtype=SQUARE_DTYPE),
    )


@njit(cache=True, nogil=True)
def _key(g, h, greedy):
    primary = h if greedy else g + h
    return (np.int64(primary) << KEY_SHIFT) | np.int64(h)


@njit(cache=True, nogil=True)
def _corral_deadlock_cut(corral, box_at, player, last_push, n_corrals, counters):
    """Whether the bounded corral search proves an expanded node a deadlock.

    Searches the corrals that need a push and whose barrier holds the box pushed last (every
    one at the root, where ``last_push`` is -1; else the node's square push). ``corral`` is
    the ``engine.corral_tables.CorralTables`` labelled for the node by ``label_corrals``; its
    ``stamps`` fill is overwritten.
    """
    ct = corral
    pushed = np.int64(-1)  # square of the box pushed last
    if last_push >= 0:
        pushed = player + ct.offsets[last_push & 3]
    for c in range(n_corrals):
        if ct.info[c, INFO_NEEDS_PUSH] == 0:
            continue
        if pushed >= 0:
            touches = False
            start = ct.info[c, INFO_BARRIER_START]
            for j in range(start, start + ct.info[c, INFO_BARRIER_LEN]):
                if ct.barrier[j] == pushed:
                    touches = True
                    break
            if not touches:
                continue
        status = corral_deadlock(ct, box_at, np.int64(c), player)
        if status == CORRAL_DEADLOCK:
            counters[C_PRUNED_CORRAL] += 1
            return True
        if status == CORRAL_UNKNOWN:
            counters[C_CORRAL_UNKNOWN] += 1
    return False


@njit(cache=True, nogil=True)
def run_astar(board, params, tables, corral, scratch, nodes, table, heap, counters, budget):
    """Expand up to ``budget`` nodes of a best-first push search.

    Args:
        board: ``common.SearchBoard``.
        params: ``AStarParams``.
        tables: ``AStarTables``.
        corral: ``engine.corral_tables.CorralTables`` sharing ``stamps``, ``stack``, ``seen`` and
            ``trail`` with ``scratch`` (used with ``pi_corrals`` or ``corral_deadlocks``).
        scratch: ``common.PushScratch``; ``box_at`` all -1 on entry.
        nodes: ``AStarNodes``; updated.
        table: ``table.Table``: (box hash, normalized player) -> node; updated.
        heap: ``heap.Heap`` of (key, node); updated.
        counters: int64[N_COUNTERS] store sizes and statistics (C_* slots); updated.
        budget: most nodes to expand in this call.

    Returns:
        A ``common`` status: RUNNING, FOUND (counters[C_GOAL]), EXHAUSTED, GROW_NODES,
        GROW_TABLE or GROW_HEAP.
    """
    cells, offsets, zobrist, dead = board.cells, board.offsets, board.zobrist, board.dead
    nearest, goal_dist = board.nearest, board.goal_dist
    box_pos, box_at, pushes = scratch.box_pos, scratch.box_at, scratch.pushes
    stamps, stack, seen, trail = scratch.stamps, scratch.stack, scratch.seen, scratch.trail
    n_boxes_of, n_player, n_parent = nodes.boxes, nodes.player, nodes.parent
    n_sq_push, n_g, n_h = nodes.sq_push, nodes.g, nodes.h
    t_hashes, t_players, t_values = table.hashes, table.players, table.values
    h_keys, h_nodes = heap.keys, heap.nodes
    line_of, lines = tables.line_of, tables.lines
    match, child_match, match_work = tables.match, tables.child_match, tables.match_work
    cstamp, region, barrier, info = corral.cstamp, corral.region, corral.barrier, corral.info
    matching, greedy, tunnels = params.matching, params.greedy, params.tunnels
    pi_corrals, corral_deadlocks = params.pi_corrals, params.corral_deadlocks
    wall_lines = params.wall_lines
    n_boxes = box_pos.shape[0]
    cap = n_player.shape[0]
    heap_cap = h_keys.shape[0]
    table_cap = t_players.shape[0]
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
            box_pos[b] = n_boxes_of[node, b]
            box_at[box_pos[b]] = b
        hsh = np.uint64(0)
        for b in range(n_boxes):
            hsh ^= zobrist[box_pos[b]]
        player = np.int64(n_player[node])
        reach_player(box_at, offsets, player, stamps, stack)
        k = legal_pushes(cells, box_at, box_pos, offsets, stamps, pushes)
        if pi_corrals or corral_deadlocks:
            # PI-corral pruning keeps the pushes into the corral; a corral deadlock cuts all
            n_corrals = label_corrals(
                cells, box_at, box_pos, offsets, stamps, cstamp, region, barrier, info
            )
            if n_corrals > 0 and pi_corrals:
                best, _ = best_pi_corral(
                    dead, box_at, offsets, stamps, cstamp, barrier, info, n_corrals
                )
                if best >= 0:
                    mark = np.int64(info[best, INFO_MARK])
                    kept = keep_pushes_into(box_pos, offsets, cstamp, mark, pushes, k)
                    counters[C_PI_CUTS] += k - kept
                    k = kept
            if n_corrals > 0 and corral_deadlocks and k > 0:
                last = np.int64(n_sq_push[node]) if n_parent[node] >= 0 else np.int64(-1)
                if _corral_deadlock_cut(corral, box_at, player, last, n_corrals, counters):
                    k = 0
        if matching:
            matching_bound_full(goal_dist, box_pos, match, match_work)
        n_g[node] = -1 - g  # mark expanded (keeps g recoverable as -1 - g)
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
                end = tunnel_end(cells, box_at, offsets, dest, d)
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
                if matching:
                    # loops, not child_match[:, :] = match: an array slice copy compiles
                    # numba's shape-mismatch error path (string formatting, ~2 s cold)
                    for r in range(match.shape[0]):
                        for q in range(match.shape[1]):
                            child_match[r, q] = match[r, q]
                    child_h = matching_bound_update(goal_dist, box_pos, child_match, b, match_work)
                else:
                    child_h = simple_bound(nearest, box_pos)
                _, norm = reach_player(box_at, offsets, np.int64(child_player), stamps, stack)
                child_g = g + n_steps
                counters[C_GENERATED] += 1
                seen_node = table_get(t_hashes, t_players, t_values, hsh2, norm)
                if seen_node >= 0:
                    old_g = n_g[seen_node]
                    if old_g < 0:
                        old_g = -1 - old_g
                    if old_g <= child_g:
                        counters[C_DUPLICATES] += 1
                        seen_node = -2
                if seen_node != -2 and child_h < INFINITE_BOUND:
                    if seen_node >= 0 and n_g[seen_node] >= 0:
                        child = seen_node  # open node reached with fewer pushes: update it
                    else:
                        child = counters[C_NODES]
                        counters[C_NODES] += 1
                        if seen_node < 0:
                            counters[C_TABLE] += 1
                        table_put(t_hashes, t_players, t_values, hsh2, norm, child)
                    for c in range(n_boxes):
                        n_boxes_of[child, c] = box_pos[c]
                    n_player[child] = child_player
                    n_parent[child] = node
                    n_sq_push[child] = square_push(src, d, n_steps)
                    n_g[child] = child_g
                    n_h[child] = child_h
                    counters[C_TUNNEL] += n_steps - 1
                    # shortcut: a child whose f did not grow is expanded next, not queued
                    same_f = (not greedy) and n_steps == 1 and child_h == h - 1
                    if same_f and best_child < 0:
                        best_child = child
                    else:
                        counters[C_HEAP] = heap_push(
                            h_keys, h_nodes, counters[C_HEAP],
                            _key(child_g, child_h, greedy), child,
                        )  # fmt: skip
            for _ in range(n_steps):
                child_player, hsh2 = undo_push(box_pos, box_at, offsets, zobrist, hsh2, code)
        for b in range(n_boxes):
            box_at[box_pos[b]] = -1
        node = best_child
        if node >= 0:
            counters[C_SHORTCUTS] += 1
    counters[C_PENDING] = node
    return RUNNING
