"""Packing-order kernels: macro pull paths and the depth-first search over macro moves.

A *macro move* takes one box to a target square by its fewest pushes (or pulls), other boxes
fixed. *Packing order* search moves each box to a target (a goal forward, a start square in
reverse) once, or first *parks* it on its farthest square, by Manhattan or by push distance.
``run_packing`` runs the depth-first search in slices for the driver (``planners.driver``).
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
    GROW_NODES,
    GROW_TABLE,
    N_SHARED,
    RUNNING,
)
from planners._kernels.table import table_get, table_put
from soko_gym.engine.board import Board
from soko_gym.engine.constants import (
    BOX_AT_DTYPE,
    DIST_DTYPE,
    DIST_INF,
    FLOOR,
    HASH_DTYPE,
    SQUARE_DTYPE,
    STAMP_DTYPE,
)
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.macro import box_paths
from soko_gym.engine.reach import new_stamps, reach_player

# search directions (``PackingParams.mode``)
FORWARD = 0  # push boxes from their start squares to goals
REVERSE = 1  # pull boxes from goals to their start squares

# box status in a macro-search node: UNMOVED, the number of times parked (1, 2 ...), or DONE
UNMOVED = 0  # not moved yet: may go to a target or be parked
DONE = 255  # on its target for good

# kinds of macro move (high part of the child's ordering key)
KIND_TARGET = 0
KIND_PARK = 1
KIND_SHIFT = 16

# Counter slots after the shared ones (int64[N_COUNTERS]); C_GENERATED counts macro moves
# generated, the pruned ones included.
C_PRUNED = N_SHARED  # macro moves pruned as deadlocks
C_NODES = N_SHARED + 1  # nodes stored
C_PENDING = N_SHARED + 2  # entries of the depth-first stack ``PackingNodes.pending``
C_GOAL = N_SHARED + 3  # the goal node, once FOUND
N_COUNTERS = N_SHARED + 4

# The static arrays of one search, as one kernel argument.
PackingBoard = namedtuple(
    "PackingBoard",
    [
        "cells",  # uint8[n_cells] cell flags
        "dead",  # uint8[n_cells] nonzero where no box may be parked (dead squares forward;
        # squares with no pull path to any start square in reverse)
        "is_target",  # uint8[n_cells] 1 on targets (goals forward, start squares reverse)
        "targets",  # int32[n_boxes] target squares
        "floor",  # int32[n_floor] floor squares
        "offsets",  # int32[4] flat index step per direction
        "zobrist",  # uint64[n_cells] box key per square
        "park_keys",  # uint64[n_cells] extra key of a parked box (times an odd factor per park)
        "done_keys",  # uint64[n_cells] extra key of a DONE box per square
    ],
)

# The search's options, as one kernel argument.
PackingParams = namedtuple(
    "PackingParams",
    [
        "mode",  # FORWARD (goal: every box on a target) or REVERSE (goal: the key below)
        "max_parks",  # parking moves allowed per box (0: target moves only)
        "width",  # board width (for Manhattan distances)
        "goal_hash",  # uint64 box hash of the goal (REVERSE)
        "goal_player",  # normalized player square of the goal (REVERSE)
    ],
)

# The node store (rows: nodes), as one kernel argument.
PackingNodes = namedtuple(
    "PackingNodes",
    [
        "boxes",  # int32[cap, n_boxes] box squares
        "status",  # uint8[cap, n_boxes] box status
        "players",  # int32[cap] a square of the player's region
        "hashes",  # uint64[cap] box hash (squares only)
        "keys",  # uint64[cap] status-aware hash (the transposition key with the player)
        "parents",  # int32[cap] parent node, -1 for roots
        "srcs",  # int32[cap] square the macro move took its box from
        "dsts",  # int32[cap] square the macro move took its box to
        "n_pushes",  # int32[cap] pushes (pulls) of the macro move
        "order",  # int64[cap] ordering key (kind << KIND_SHIFT) + pushes; smaller first
        "pending",  # int32[cap] the depth-first stack of nodes to expand (one entry per node
        # at most), top last
    ],
)

# Per-search scratch, as one kernel argument.
PackingScratch = namedtuple(
    "PackingScratch",
    [
        "box_at",  # int16[n_cells] all -1 between calls
        "pos",  # int32[n_boxes] box squares of the node expanded
        "st",  # uint8[n_boxes] box status of the node expanded
        "stamps",  # uint32[n_cells + 1] reachability stamps
        "stack",  # int32[n_cells] flood-fill stack
        "seen",  # uint32[n_cells + 1] freeze-test stamps
        "trail",  # int32[n_cells] freeze-test scratch
        "dist",  # uint16[4 * n_cells] path kernel moves per state
        "parent",  # int32[4 * n_cells] path kernel parent links
        "queue",  # int32[4 * n_cells] path kernel queue
        "plan",  # int8[4 * n_cells] directions of one traced macro move
    ],
)


def new_packing_nodes(n_boxes: int, capacity: int) -> PackingNodes:
    """A node store of ``capacity`` nodes."""
    return PackingNodes(
        boxes=np.zeros((capacity, n_boxes), dtype=SQUARE_DTYPE),
        status=np.zeros((capacity, n_boxes), dtype=np.uint8),
        players=np.zeros(capacity, dtype=SQUARE_DTYPE),
        hashes=np.zeros(capacity, dtype=HASH_DTYPE),
        keys=np.zeros(capacity, dtype=HASH_DTYPE),
        parents=np.full(capacity, -1, dtype=SQUARE_DTYPE),
        srcs=np.zeros(capacity, dtype=SQUARE_DTYPE),
        dsts=np.zeros(capacity, dtype=SQUARE_DTYPE),
        n_pushes=np.zeros(capacity, dtype=SQUARE_DTYPE),
        order=np.zeros(capacity, dtype=np.int64),
        pending=np.zeros(capacity, dtype=SQUARE_DTYPE),
    )


def new_packing_scratch(board: Board) -> PackingScratch:
    """Fresh scratch for a search of ``board`` (``box_at`` all -1)."""
    n = board.n_cells
    return PackingScratch(
        box_at=np.full(n, -1, dtype=BOX_AT_DTYPE),
        pos=np.zeros(board.n_boxes, dtype=SQUARE_DTYPE),
        st=np.zeros(board.n_boxes, dtype=np.uint8),
        stamps=new_stamps(board.cells),
        stack=np.empty(n, dtype=SQUARE_DTYPE),
        seen=np.zeros(n + 1, dtype=STAMP_DTYPE),
        trail=np.empty(n, dtype=SQUARE_DTYPE),
        dist=np.empty(4 * n, dtype=DIST_DTYPE),
        parent=np.empty(4 * n, dtype=SQUARE_DTYPE),
        queue=np.empty(4 * n, dtype=SQUARE_DTYPE),
        plan=np.empty(4 * n, dtype=np.int8),
    )


@njit(cache=True, nogil=True)
def pull_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue):
    """Fewest pulls that bring the box on ``src`` to each square, other boxes fixed.

    The reverse twin of ``engine.macro.box_paths``, with the same state encoding: a state is
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
def _add_child(board, params, nodes, table, scratch, node, n_new, b, code, new_status, on_target):
    """Store the child that moves box ``b`` to state ``code`` as node ``n_new`` if it is new.

    ``code`` is ``square * 4 + player side`` (``box_at`` already moved); the move is a target
    move when ``new_status`` is DONE, else a parking move.

    Returns:
        (child index or -1, 1 when the child is a goal node else 0).
    """
    zobrist, park_keys, done_keys = board.zobrist, board.park_keys, board.done_keys
    pos, st, dist = scratch.pos, scratch.st, scratch.dist
    dst = code >> 2
    src = np.int64(pos[b])
    new_player = np.int64(dst + board.offsets[code & 3])
    _, norm = reach_player(scratch.box_at, board.offsets, new_player, scratch.stamps, scratch.stack)
    h_plain = nodes.hashes[node] ^ zobrist[src] ^ zobrist[dst]
    h_key = (
        nodes.keys[node]
        ^ zobrist[src]
        ^ _status_key(park_keys, done_keys, st[b], src)
        ^ zobrist[dst]
        ^ _status_key(park_keys, done_keys, new_status, dst)
    )
    if table_get(table.hashes, table.players, table.values, h_key, np.int64(norm)) >= 0:
        return -1, 0
    table_put(table.hashes, table.players, table.values, h_key, np.int64(norm), n_new)
    for i in range(pos.shape[0]):
        nodes.boxes[n_new, i] = pos[i]
        nodes.status[n_new, i] = st[i]
    nodes.boxes[n_new, b] = dst
    nodes.status[n_new, b] = new_status
    nodes.players[n_new] = new_player
    nodes.hashes[n_new] = h_plain
    nodes.keys[n_new] = h_key
    nodes.parents[n_new] = node
    nodes.srcs[n_new] = src
    nodes.dsts[n_new] = dst
    nodes.n_pushes[n_new] = dist[code]
    kind = KIND_TARGET if new_status == DONE else KIND_PARK
    nodes.order[n_new] = (kind << KIND_SHIFT) + np.int64(dist[code])
    if params.mode == FORWARD:
        is_goal = on_target - board.is_target[src] + board.is_target[dst] == pos.shape[0]
    else:
        is_goal = h_plain == params.goal_hash and norm == params.goal_player
    return n_new, 1 if is_goal else 0


@njit(cache=True, nogil=True)
def expand_node(board, params, nodes, table, scratch, node, n_nodes):
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
        board: ``PackingBoard``.
        params: ``PackingParams``.
        nodes: ``PackingNodes``; updated (``pending`` is not touched).
        table: ``table.Table``: (status-aware hash, normalized player) -> node; updated.
        scratch: ``PackingScratch``.
        node: node to expand.
        n_nodes: first free node index.

    Returns:
        (new first free node index, first goal child or -1, macro moves generated, macro
        moves pruned as deadlocks).
    """
    cells, offsets, dead, targets = board.cells, board.offsets, board.dead, board.targets
    box_at, pos, st = scratch.box_at, scratch.pos, scratch.st
    stamps, stack = scratch.stamps, scratch.stack
    dist, parent, queue = scratch.dist, scratch.parent, scratch.queue
    nb = pos.shape[0]
    on_target = 0
    for i in range(nb):
        pos[i] = nodes.boxes[node, i]
        st[i] = nodes.status[node, i]
        box_at[pos[i]] = i
        on_target += board.is_target[pos[i]]
    player = np.int64(nodes.players[node])
    n_new = n_nodes
    goal = -1
    generated = 0
    pruned = 0
    for b in range(nb):
        if st[b] == DONE:
            continue
        src = np.int64(pos[b])
        if params.mode == FORWARD:
            box_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue)
        else:
            pull_paths(cells, box_at, offsets, player, src, stamps, stack, dist, parent, queue)
        for j in range(targets.shape[0] + 2):
            new_status = DONE
            if j < targets.shape[0]:
                dst = np.int64(targets[j])
                if dst == src or box_at[dst] >= 0:
                    continue
            else:
                if st[b] >= params.max_parks:
                    break
                new_status = st[b] + 1
                if j == targets.shape[0]:
                    dst = _farthest(board.floor, dead, dist, src, params.width, True)
                else:
                    dst = _farthest(board.floor, dead, dist, src, params.width, False)
                    if dst == _farthest(board.floor, dead, dist, src, params.width, True):
                        continue
                if dst < 0:
                    continue
            if not _is_reached(dist, dst):
                continue
            box_at[src] = -1
            box_at[dst] = b
            generated += 1
            if params.mode == FORWARD and is_simple_deadlock(
                cells, dead, box_at, offsets, dst, scratch.seen, scratch.trail
            ):
                pruned += 1
            else:
                for side in range(4):  # one child per player region around the box at dst
                    if dist[dst * 4 + side] == DIST_INF:
                        continue
                    child, is_goal = _add_child(
                        board, params, nodes, table, scratch, node, n_new, b, dst * 4 + side,
                        new_status, on_target,
                    )  # fmt: skip
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
def run_packing(board, params, nodes, table, scratch, counters, budget):
    """Expand up to ``budget`` nodes depth-first, the preferred child first.

    Pops a node off ``nodes.pending``, expands it (``expand_node``) and pushes its new
    children so that the smallest ``order`` (ties: the first generated) is expanded next.
    Before each expansion the kernel checks that the store has room for every child and the
    table stays at most half full after them, and returns GROW_NODES / GROW_TABLE if not.

    Args:
        board: ``PackingBoard``.
        params: ``PackingParams``.
        nodes: ``PackingNodes``; updated.
        table: ``table.Table``; updated.
        scratch: ``PackingScratch``.
        counters: int64[N_COUNTERS] C_* slots; updated.
        budget: most nodes to expand in this call.

    Returns:
        A ``common`` status: FOUND (counters[C_GOAL]), EXHAUSTED (no macro move left),
        RUNNING, GROW_NODES or GROW_TABLE.
    """
    max_children = 4 * scratch.pos.shape[0] * (board.targets.shape[0] + 2)
    pending = nodes.pending
    expanded = 0
    while True:
        if counters[C_PENDING] == 0:
            return EXHAUSTED
        if expanded >= budget:
            return RUNNING
        n_nodes = counters[C_NODES]
        if n_nodes + max_children > pending.shape[0]:
            return GROW_NODES
        if 2 * (n_nodes + max_children) > table.hashes.shape[0]:
            return GROW_TABLE
        counters[C_PENDING] -= 1
        node = pending[counters[C_PENDING]]
        n_new, goal, generated, pruned = expand_node(
            board, params, nodes, table, scratch, node, n_nodes
        )
        counters[C_NODES] = n_new
        counters[C_EXPANDED] += 1
        counters[C_GENERATED] += generated
        counters[C_PRUNED] += pruned
        expanded += 1
        if goal >= 0:
            counters[C_GOAL] = goal
            return FOUND
        if n_new > n_nodes:
            ranked = np.argsort(nodes.order[n_nodes:n_new], kind="mergesort")
            for i in range(ranked.shape[0] - 1, -1, -1):
                pending[counters[C_PENDING]] = n_nodes + ranked[i]
                counters[C_PENDING] += 1


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
