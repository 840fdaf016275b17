"""Packing-order kernels: macro pull paths and the expansion of one macro-search node.

A *macro move* takes one box to a target square by its fewest pushes (or pulls), other boxes
fixed. *Packing order* search moves each box to a target (a goal forward, a start square in
reverse) once, or first *parks* it on its farthest square, by Manhattan or by push distance.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planners._kernels.table import table_get, table_put
from soko_gym.engine.constants import DIST_INF, FLOOR
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.reach import reach_player
from soko_gym.engine.step import box_paths

# search directions (the ``mode`` argument of ``expand_node``)
FORWARD = 0  # push boxes from their start squares to goals
REVERSE = 1  # pull boxes from goals to their start squares

# box status in a macro-search node: UNMOVED, the number of times parked (1, 2 ...), or DONE
UNMOVED = 0  # not moved yet: may go to a target or be parked
DONE = 255  # on its target for good

# kinds of macro move (high part of the child's ordering key)
KIND_TARGET = 0
KIND_PARK = 1
KIND_SHIFT = 16


@njit(cache=True, nogil=True)
def pull_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue):
    """Fewest pulls that bring the box on ``src`` to each square, other boxes fixed.

    The reverse twin of ``engine.step.box_paths``, with the same state encoding: a state is
    ``square * 4 + side``, ``side`` the direction from the box to the player. A pull in
    direction ``d`` needs the player on side ``d`` and a free floor square beyond it; the box
    moves one square in ``d`` and the player ends on side ``d`` of it. ``box_at`` is restored.

    Args:
        cells: uint8[n_cells] cell flags.
        box_at: int16[n_cells] box index per square (the box on ``src`` included).
        offsets: int32[4] flat index step per direction.
        player: player square (int64).
        src: square of the box to move (int64).
        stamps: uint32[n_cells + 1] stamp buffer (scratch).
        stack: int32[n_cells] scratch.
        dist: uint16[4 * n_cells] receives pulls per state, DIST_INF if unreached.
        parent: int32[4 * n_cells] receives ``previous state * 4 + direction of the pull``, or
            -1 for the start states.
        queue: int32[4 * n_cells] scratch.

    Returns:
        Number of states reached (0 when no box is on ``src``).
    """
    b = box_at[src]
    dist[:] = DIST_INF
    if b < 0:
        return 0
    reach_player(box_at, offsets, player, stamps, stack)
    mark = stamps[stamps.shape[0] - 1]
    tail = 0
    for s in range(4):
        if stamps[src + offsets[s]] == mark:
            dist[src * 4 + s] = 0
            parent[src * 4 + s] = -1
    for s in range(4):
        if dist[src * 4 + s] == 0:
            queue[tail] = src * 4 + s
            tail += 1
            break
    box_at[src] = -1
    head = 0
    while head < tail:
        code = queue[head]
        head += 1
        q = np.int64(code >> 2)
        s = code & 3
        box_at[q] = b
        reach_player(box_at, offsets, np.int64(q + offsets[s]), stamps, stack)
        mark = stamps[stamps.shape[0] - 1]
        here = dist[code]
        for t in range(4):
            if stamps[q + offsets[t]] == mark and dist[q * 4 + t] == DIST_INF:
                dist[q * 4 + t] = here
                parent[q * 4 + t] = parent[code]
        for d in range(4):
            stand = q + offsets[d]
            back = stand + offsets[d]
            if stamps[stand] != mark or not (cells[back] & FLOOR) or box_at[back] >= 0:
                continue
            nxt = stand * 4 + d  # the player ends beyond the box, on its side d
            if dist[nxt] == DIST_INF:
                dist[nxt] = here + 1
                parent[nxt] = code * 4 + d
                queue[tail] = nxt
                tail += 1
        box_at[q] = -1
    box_at[src] = b
    return tail


@njit(cache=True, nogil=True)
def trace_plan(dist, parent, code, plan):
    """The move directions that reach state ``code`` after ``box_paths`` or ``pull_paths``.

    Args:
        dist: uint16[4 * n_cells] moves per state, as the path kernel left it.
        parent: int32[4 * n_cells] parent links, as the path kernel left them.
        code: end state ``square * 4 + side``.
        plan: int8[4 * n_cells] receives the directions, first move first.

    Returns:
        Number of moves, or -1 when ``code`` was not reached.
    """
    if dist[code] == DIST_INF:
        return -1
    k = np.int64(dist[code])
    for i in range(k - 1, -1, -1):
        link = parent[code]
        plan[i] = link & 3
        code = link >> 2
    return k


@njit(cache=True, nogil=True)
def _is_reached(dist, dst):
    """True when the path kernel reached ``dst`` on some side."""
    for s in range(4):
        if dist[dst * 4 + s] != DIST_INF:
            return True
    return False


@njit(cache=True, nogil=True)
def _status_key(park_keys, done_keys, status, sq):
    """Zobrist key added to a box's square key for its status (0 while unmoved)."""
    if status == DONE:
        return done_keys[sq]
    if status == UNMOVED:
        return np.uint64(0)
    return park_keys[sq] * np.uint64(2 * status - 1)  # an odd factor per park count


@njit(cache=True, nogil=True)
def _add_child(
    mode,
    is_target,
    offsets,
    zobrist,
    park_keys,
    done_keys,
    boxes,
    status,
    players,
    hashes,
    keys,
    parents,
    srcs,
    dsts,
    n_pushes,
    order,
    t_hashes,
    t_players,
    t_values,
    node,
    n_new,
    goal_hash,
    goal_player,
    box_at,
    pos,
    st,
    stamps,
    stack,
    dist,
    b,
    dst,
    code,
    new_status,
    kind,
    on_target,
):
    """Store the child that ends in state ``code`` (``box_at`` already moved) if it is new.

    Returns:
        (child index or -1, 1 when the child is a goal node else 0).
    """
    src = np.int64(pos[b])
    new_player = np.int64(dst + offsets[code & 3])
    _, norm = reach_player(box_at, offsets, new_player, stamps, stack)
    h_plain = hashes[node] ^ zobrist[src] ^ zobrist[dst]
    h_key = (
        keys[node]
        ^ zobrist[src]
        ^ _status_key(park_keys, done_keys, st[b], src)
        ^ zobrist[dst]
        ^ _status_key(park_keys, done_keys, new_status, dst)
    )
    if table_get(t_hashes, t_players, t_values, h_key, np.int64(norm)) >= 0:
        return -1, 0
    table_put(t_hashes, t_players, t_values, h_key, np.int64(norm), n_new)
    for i in range(pos.shape[0]):
        boxes[n_new, i] = pos[i]
        status[n_new, i] = st[i]
    boxes[n_new, b] = dst
    status[n_new, b] = new_status
    players[n_new] = new_player
    hashes[n_new] = h_plain
    keys[n_new] = h_key
    parents[n_new] = node
    srcs[n_new] = src
    dsts[n_new] = dst
    n_pushes[n_new] = dist[code]
    order[n_new] = (kind << KIND_SHIFT) + np.int64(dist[code])
    if mode == FORWARD:
        is_goal = on_target - is_target[src] + is_target[dst] == pos.shape[0]
    else:
        is_goal = h_plain == goal_hash and norm == goal_player
    return n_new, 1 if is_goal else 0


@njit(cache=True, nogil=True)
def expand_node(
    mode,
    max_parks,
    cells,
    dead,
    is_target,
    targets,
    floor,
    width,
    offsets,
    zobrist,
    park_keys,
    done_keys,
    boxes,
    status,
    players,
    hashes,
    keys,
    parents,
    srcs,
    dsts,
    n_pushes,
    order,
    t_hashes,
    t_players,
    t_values,
    node,
    n_nodes,
    goal_hash,
    goal_player,
    box_at,
    pos,
    st,
    stamps,
    stack,
    seen,
    trail,
    dist,
    parent,
    queue,
):
    """Generate every macro move of one node and store the new children after ``n_nodes``.

    Per box not yet DONE: a move to every free target it reaches (status DONE) and, when it is
    parked fewer than ``max_parks`` times, a move to its farthest reachable square by Manhattan
    distance and one to its farthest by fewest pushes (pulls), skipping ``dead`` squares
    (its status counts the parks). Each move gives one child per player region it can end in
    (the fewest pushes into each side of the box). Forward moves that form a simple deadlock
    are pruned; children already in the transposition table (keyed by the status-aware hash
    and normalized player) are dropped. The caller must leave room for
    ``4 * n_boxes * (n_targets + 2)`` children in the node store and keep the table below
    half full after them.

    Args:
        mode: FORWARD (pushes, goal = every box on a target) or REVERSE (pulls, goal = the box
            hash ``goal_hash`` with normalized player ``goal_player``).
        max_parks: parking moves allowed per box (0: target moves only).
        cells: uint8[n_cells] cell flags.
        dead: uint8[n_cells] nonzero where no box may be parked (dead squares forward; squares
            with no pull path to any start square in reverse).
        is_target: uint8[n_cells] 1 on target squares (goals forward, start squares reverse).
        targets: int32[n_boxes] target squares.
        floor: int32[n_floor] floor squares.
        width: board width (for Manhattan distances).
        offsets: int32[4] flat index step per direction.
        zobrist: uint64[n_cells] box key per square.
        park_keys: uint64[n_cells] extra key of a parked box per square (times an odd factor
            per park count).
        done_keys: uint64[n_cells] extra key of a DONE box per square.
        boxes: int32[cap, n_boxes] box squares per node.
        status: uint8[cap, n_boxes] box status per node.
        players: int32[cap] a square of the player's region per node.
        hashes: uint64[cap] box hash (squares only) per node.
        keys: uint64[cap] status-aware hash per node (the transposition key with the player).
        parents: int32[cap] parent node, -1 for roots.
        srcs: int32[cap] square the macro move took its box from.
        dsts: int32[cap] square the macro move took its box to.
        n_pushes: int32[cap] pushes (pulls) of the macro move.
        order: int64[cap] ordering key (kind << KIND_SHIFT) + pushes; smaller is tried first.
        t_hashes: uint64[table_cap] table key hashes.
        t_players: int32[table_cap] table key players.
        t_values: int32[table_cap] table node indices.
        node: node to expand.
        n_nodes: first free node index.
        goal_hash: uint64 box hash of the goal (REVERSE).
        goal_player: normalized player square of the goal (REVERSE).
        box_at: int16[n_cells] scratch, all -1 on entry and on return.
        pos: int32[n_boxes] scratch.
        st: uint8[n_boxes] scratch.
        stamps: uint32[n_cells + 1] stamp buffer (scratch).
        stack: int32[n_cells] scratch.
        seen: uint32[n_cells + 1] deadlock stamps (scratch).
        trail: int32[n_cells] scratch.
        dist: uint16[4 * n_cells] scratch.
        parent: int32[4 * n_cells] scratch.
        queue: int32[4 * n_cells] scratch.

    Returns:
        (new first free node index, first goal child or -1, macro moves generated, macro
        moves pruned as deadlocks).
    """
    nb = pos.shape[0]
    on_target = 0
    for i in range(nb):
        pos[i] = boxes[node, i]
        st[i] = status[node, i]
        box_at[pos[i]] = i
        on_target += is_target[pos[i]]
    player = np.int64(players[node])
    n_new = n_nodes
    goal = -1
    generated = 0
    pruned = 0
    for b in range(nb):
        if st[b] == DONE:
            continue
        src = np.int64(pos[b])
        if mode == FORWARD:
            box_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue)
        else:
            pull_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue)
        for j in range(targets.shape[0] + 2):
            kind = KIND_TARGET
            new_status = DONE
            if j < targets.shape[0]:
                dst = np.int64(targets[j])
                if dst == src or box_at[dst] >= 0:
                    continue
            else:
                if st[b] >= max_parks:
                    break
                kind = KIND_PARK
                new_status = st[b] + 1
                if j == targets.shape[0]:
                    dst = _farthest(floor, dead, dist, src, width, True)
                else:
                    dst = _farthest(floor, dead, dist, src, width, False)
                    if dst == _farthest(floor, dead, dist, src, width, True):
                        continue
                if dst < 0:
                    continue
            if not _is_reached(dist, dst):
                continue
            box_at[src] = -1
            box_at[dst] = b
            generated += 1
            if mode == FORWARD and is_simple_deadlock(
                cells, dead, box_at, offsets, dst, seen, trail
            ):
                pruned += 1
            else:
                for side in range(4):  # one child per player region around the box at dst
                    if dist[dst * 4 + side] == DIST_INF:
                        continue
                    child, is_goal = _add_child(
                        mode,
                        is_target,
                        offsets,
                        zobrist,
                        park_keys,
                        done_keys,
                        boxes,
                        status,
                        players,
                        hashes,
                        keys,
                        parents,
                        srcs,
                        dsts,
                        n_pushes,
                        order,
                        t_hashes,
                        t_players,
                        t_values,
                        node,
                        n_new,
                        goal_hash,
                        goal_player,
                        box_at,
                        pos,
                        st,
                        stamps,
                        stack,
                        dist,
                        b,
                        dst,
                        dst * 4 + side,
                        new_status,
                        kind,
                        on_target,
                    )
                    if child >= 0:
                        n_new += 1
                        if is_goal and goal < 0:
                            goal = child
            box_at[dst] = -1
            box_at[src] = b
    for i in range(nb):
        box_at[pos[i]] = -1
    return n_new, goal, generated, pruned


@njit(cache=True, nogil=True)
def _farthest(floor, dead, dist, src, width, by_manhattan):
    """The reachable live square farthest from ``src`` (by Manhattan or by moves), or -1.

    Ties go to the larger other measure, then to the smaller square.
    """
    best = -1
    best_a = -1
    best_b = -1
    r0 = src // width
    c0 = src % width
    for i in range(floor.shape[0]):
        q = np.int64(floor[i])
        if q == src or dead[q]:
            continue
        moves = np.int64(DIST_INF)
        for s in range(4):
            if dist[q * 4 + s] < moves:
                moves = np.int64(dist[q * 4 + s])
        if moves == DIST_INF:
            continue
        manhattan = abs(q // width - r0) + abs(q % width - c0)
        a, bb = (manhattan, moves) if by_manhattan else (moves, manhattan)
        if a > best_a or (a == best_a and bb > best_b):
            best = q
            best_a = a
            best_b = bb
    return best
