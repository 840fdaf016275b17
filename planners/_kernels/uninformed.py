"""Uninformed push search kernels: breadth-first over a node store, depth-first over a stack.

Both run for a bounded number of expansions and return a status to their Python driver, which
checks the clock, grows full arrays and calls again; every counter lives in an int64 array.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planners._kernels.table import table_get, table_put
from soko_gym.engine.constants import GOAL
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import reach_player

# Statuses returned by bfs_advance and dfs_advance.
RUNNING = 0  # the expansion budget is spent; call again
FOUND = 1  # a goal position was reached
DONE = 2  # nothing left to expand (BFS: every reachable position; DFS: the depth bound)
GROW_NODES = 3  # BFS node store or DFS stack is full
GROW_TABLE = 4  # the transposition table would pass half full

# Counter slots shared by both kernels (int64 array of N_COUNTERS).
C_EXPANDED = 0  # nodes whose pushes were generated
C_GENERATED = 1  # pushes made that survived the deadlock tests
C_PRUNED_DEAD = 2  # pushes onto a simple dead square or freezing a box off goal
C_DUPLICATES = 3  # positions already in the table (or, DFS without table, on the path)
C_TABLE = 4  # table entries
C_HEAD = 5  # BFS: next node to expand; DFS: current depth
C_NODES = 6  # BFS: nodes stored; DFS: 1 when the node at the current depth is still to enter
C_GOAL = 7  # BFS: the goal node; DFS: the number of boxes on goals
C_FRONTIER = 8  # DFS: 1 once a position was cut off by the depth bound
N_COUNTERS = 9


@njit(cache=True, nogil=True)
def _is_pruned(cells, dead, box_at, offsets, sq, freeze, seen, trail):
    """Whether a box just pushed onto ``sq`` leaves an unsolvable position (see dfs_advance)."""
    if dead[sq]:
        return True
    return freeze and is_simple_deadlock(cells, dead, box_at, offsets, sq, seen, trail)


@njit(cache=True, nogil=True)
def bfs_advance(
    cells,
    dead,
    offsets,
    zobrist,
    boxes,
    parent,
    push,
    player,
    t_hash,
    t_player,
    t_value,
    box_pos,
    box_at,
    moves,
    stamps,
    stack,
    seen,
    trail,
    counters,
    stop_at,
    freeze,
):
    """Expand nodes in first-in first-out order (the node store is the queue) until a stop.

    A node is a position right after a push. Children are goal-tested when generated, so the
    first goal found has the fewest pushes. Before each expansion the kernel checks that the
    store and the table have room for every child, and returns GROW_NODES / GROW_TABLE if not.

    Args:
        cells: uint8[n_cells] cell flags.
        dead: uint8[n_cells] nonzero on simple dead squares.
        offsets: int32[4] flat index step per direction.
        zobrist: uint64[n_cells] Zobrist key per square.
        boxes: int16[cap, n_boxes] box squares of each node, in box-index order; updated.
        parent: int32[cap] parent node (-1 for the root); updated.
        push: int32[cap] push code (box * 4 + direction, box index of the parent) that made
            the node; updated.
        player: int32[cap] player square of the node (where the pushed box stood); updated.
        t_hash, t_player, t_value: the transposition table (see ``table``): (box hash,
            normalized player) -> node index; updated.
        box_pos: int32[n_boxes] scratch.
        box_at: int16[n_cells] scratch, all -1 between calls.
        moves: int32[4 * n_boxes] scratch for push codes.
        stamps: uint32[n_cells + 1] reachability stamps (see ``reach``).
        stack: int32[n_cells] scratch.
        seen: uint32[n_cells + 1] deadlock-test stamps.
        trail: int32[n_cells] scratch.
        counters: int64[N_COUNTERS] C_* slots; updated (C_HEAD, C_NODES and C_TABLE hold the
            queue head, the stored nodes and the table entries).
        stop_at: return RUNNING once C_EXPANDED reaches this.
        freeze: also prune pushes that freeze a box off goal.

    Returns:
        A status: FOUND (counters[C_GOAL] = goal node), DONE, RUNNING, GROW_NODES, GROW_TABLE.
    """
    n_boxes = box_pos.shape[0]
    cap = parent.shape[0]
    width = 4 * n_boxes
    while counters[C_HEAD] < counters[C_NODES]:
        if counters[C_EXPANDED] >= stop_at:
            return RUNNING
        if counters[C_NODES] + width > cap:
            return GROW_NODES
        if 2 * (counters[C_TABLE] + width) > t_hash.shape[0]:
            return GROW_TABLE
        node = counters[C_HEAD]
        h = np.uint64(0)
        on_goal = 0
        for b in range(n_boxes):
            sq = np.int32(boxes[node, b])
            box_pos[b] = sq
            box_at[sq] = b
            h ^= zobrist[sq]
            if cells[sq] & GOAL:
                on_goal += 1
        reach_player(box_at, offsets, np.int64(player[node]), stamps, stack)
        n_moves = legal_pushes(cells, box_at, box_pos, offsets, stamps, moves)
        found = -1
        for i in range(n_moves):
            code = np.int64(moves[i])
            old = np.int64(box_pos[code >> 2])
            pl, h2 = apply_push(box_pos, box_at, offsets, zobrist, h, code)
            new = np.int64(box_pos[code >> 2])
            if _is_pruned(cells, dead, box_at, offsets, new, freeze, seen, trail):
                counters[C_PRUNED_DEAD] += 1
            else:
                counters[C_GENERATED] += 1
                _, norm = reach_player(box_at, offsets, np.int64(pl), stamps, stack)
                child = counters[C_NODES]
                if table_put(t_hash, t_player, t_value, h2, np.int64(norm), np.int64(child)):
                    counters[C_TABLE] += 1
                    counters[C_NODES] += 1
                    for b in range(n_boxes):
                        boxes[child, b] = box_pos[b]
                    parent[child] = node
                    push[child] = code
                    player[child] = pl
                    if on_goal - (cells[old] & GOAL != 0) + (cells[new] & GOAL != 0) == n_boxes:
                        found = child
                else:
                    counters[C_DUPLICATES] += 1
            undo_push(box_pos, box_at, offsets, zobrist, h2, code)
            if found >= 0:
                break
        for b in range(n_boxes):
            box_at[box_pos[b]] = -1
        counters[C_HEAD] += 1
        counters[C_EXPANDED] += 1
        if found >= 0:
            counters[C_GOAL] = found
            return FOUND
    return DONE


@njit(cache=True, nogil=True)
def dfs_advance(
    cells,
    dead,
    offsets,
    zobrist,
    box_pos,
    box_at,
    moves,
    n_moves,
    next_move,
    path,
    players,
    hashes,
    norms,
    t_hash,
    t_player,
    t_value,
    stamps,
    stack,
    seen,
    trail,
    counters,
    stop_at,
    bound,
    use_table,
    freeze,
):
    """Depth-first search with apply/undo on one state and an explicit stack, until a stop.

    Entering the position at depth d: it is goal-tested; then, with a table, it is skipped if
    the table holds it at a depth <= d, else stored at depth d; without a table it is skipped
    if it repeats a position on the current path. A position at depth ``bound`` is not
    expanded (and C_FRONTIER is set). Pushes onto simple dead squares, and with ``freeze``
    pushes that freeze a box off goal, are never made (both leave unsolvable positions).

    Args:
        cells: uint8[n_cells] cell flags.
        dead: uint8[n_cells] nonzero on simple dead squares.
        offsets: int32[4] flat index step per direction.
        zobrist: uint64[n_cells] Zobrist key per square.
        box_pos: int32[n_boxes] box squares of the current position; updated.
        box_at: int16[n_cells] box index per square of the current position; updated.
        moves: int32[cap, 4 * n_boxes] push codes generated at each depth; updated.
        n_moves: int32[cap] number of codes in each row of ``moves``; updated.
        next_move: int32[cap] next code to try at each depth; updated.
        path: int32[cap] push code made at each depth of the current path; updated.
        players: int32[cap] player square at each depth; ``players[0]`` set by the caller.
        hashes: uint64[cap] box hash at each depth; ``hashes[0]`` set by the caller.
        norms: int32[cap] normalized player square at each entered depth; updated.
        t_hash, t_player, t_value: transposition table (box hash, normalized player) ->
            smallest depth the position was entered at (unused without ``use_table``).
        stamps: uint32[n_cells + 1] reachability stamps (see ``reach``).
        stack: int32[n_cells] scratch.
        seen: uint32[n_cells + 1] deadlock-test stamps.
        trail: int32[n_cells] scratch.
        counters: int64[N_COUNTERS] C_* slots; updated. C_HEAD is the current depth, C_NODES
            is 1 while the position at that depth is still to be entered, C_GOAL counts the
            boxes on goals. Start with depth 0, C_NODES 1.
        stop_at: return RUNNING once C_EXPANDED reaches this.
        bound: largest depth to expand to (a position at this depth is only goal-tested).
        use_table: prune with the transposition table (else with the path).
        freeze: also prune pushes that freeze a box off goal.

    Returns:
        A status: FOUND (``path[:depth]`` solves), DONE (the search from depth 0 is finished),
        RUNNING, GROW_NODES (the stack is full), GROW_TABLE.
    """
    n_boxes = box_pos.shape[0]
    cap = path.shape[0]
    while True:
        d = counters[C_HEAD]
        if counters[C_NODES]:
            if use_table and 2 * (counters[C_TABLE] + 1) > t_hash.shape[0]:
                return GROW_TABLE
            if counters[C_EXPANDED] >= stop_at:
                return RUNNING
            counters[C_NODES] = 0
            n_moves[d] = 0
            next_move[d] = 0
            if counters[C_GOAL] == n_boxes:
                return FOUND
            h = hashes[d]
            _, norm = reach_player(box_at, offsets, np.int64(players[d]), stamps, stack)
            norms[d] = norm
            repeated = False
            if use_table:
                known = table_get(t_hash, t_player, t_value, h, np.int64(norm))
                if known >= 0 and known <= d:
                    repeated = True
                elif table_put(t_hash, t_player, t_value, h, np.int64(norm), np.int64(d)):
                    counters[C_TABLE] += 1
            else:
                for i in range(d):
                    if hashes[i] == h and norms[i] == norm:
                        repeated = True
                        break
            if repeated:
                counters[C_DUPLICATES] += 1
            elif d >= bound:
                counters[C_FRONTIER] = 1
            else:
                counters[C_EXPANDED] += 1
                n_moves[d] = legal_pushes(cells, box_at, box_pos, offsets, stamps, moves[d])
        if next_move[d] < n_moves[d]:
            if d + 1 >= cap:
                return GROW_NODES
            code = np.int64(moves[d, next_move[d]])
            next_move[d] += 1
            old = np.int64(box_pos[code >> 2])
            pl, h2 = apply_push(box_pos, box_at, offsets, zobrist, hashes[d], code)
            new = np.int64(box_pos[code >> 2])
            if _is_pruned(cells, dead, box_at, offsets, new, freeze, seen, trail):
                counters[C_PRUNED_DEAD] += 1
                undo_push(box_pos, box_at, offsets, zobrist, h2, code)
                continue
            counters[C_GENERATED] += 1
            counters[C_GOAL] += (cells[new] & GOAL != 0) - (cells[old] & GOAL != 0)
            path[d] = code
            players[d + 1] = pl
            hashes[d + 1] = h2
            counters[C_HEAD] = d + 1
            counters[C_NODES] = 1
            continue
        if d == 0:
            return DONE
        code = np.int64(path[d - 1])
        new = np.int64(box_pos[code >> 2])
        undo_push(box_pos, box_at, offsets, zobrist, hashes[d], code)
        old = np.int64(box_pos[code >> 2])
        counters[C_GOAL] += (cells[old] & GOAL != 0) - (cells[new] & GOAL != 0)
        counters[C_HEAD] = d - 1
