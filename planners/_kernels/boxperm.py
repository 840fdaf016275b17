"""Box-permutation sub-search: the cheapest push path between two positions moving N boxes only.

Nodes are positions right after a push (the N moving boxes' squares, sorted, and the player on
the pushed box's old square); every other box stays put. The search is A* on a packed
lexicographic cost ``primary << 32 | secondary``: (moves, pushes) or (pushes, moves). A push
costs its walk plus one move and one push. The estimate adds, per moving box, its Manhattan
distance to the nearest target square to both parts; a push changes it by at most one, so it is
consistent. Nodes whose estimate reaches the bound (the cost of the slice being replaced) or the
best finished path are cut. The goal is the target squares with the player walked to the square
of the next push (or anywhere when the slice ends the solution); that walk is added to the cost.
Pushes are *square pushes*: ``square * 4 + direction``, the box's square before the push.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from planners._kernels.heap import heap_pop, heap_push
from planners._kernels.table import table_get, table_put
from soko_gym.engine.constants import FLOOR
from soko_gym.engine.reach import walk_distances

# Statuses returned by search_slice.
RUNNING = 0  # the expansion budget is spent; call again
FOUND = 1  # counters[C_BEST_NODE] ends the cheapest path below the bound
EXHAUSTED = 2  # nothing below the bound is left to expand and no path was found
FULL = 3  # the node store is full (counters[C_BEST_NODE] may still hold a path below the bound)
GROW_HEAP = 4  # the heap may overflow on the next expansion
GROW_TABLE = 5  # the transposition table would pass half full

# Counter slots (int64 array of N_COUNTERS).
C_NODES = 0  # nodes stored; 0 on the first call (the kernel then sets up node 0)
C_HEAP = 1  # heap entries
C_TABLE = 2  # table entries
C_EXPANDED = 3  # nodes expanded
C_BEST_NODE = 4  # node ending the cheapest finished path, -1 for none
C_BEST_KEY = 5  # its packed cost (the bound until a path is found)
N_COUNTERS = 6

SHIFT = 32  # the primary cost sits above this bit, the secondary below

SliceBoard = namedtuple(
    "SliceBoard",
    [
        "cells",  # uint8[n_cells] cell flags
        "dead",  # uint8[n_cells] 1 on simple dead squares (no box is pushed onto them)
        "offsets",  # int32[4] flat index step per direction
        "zobrist",  # uint64[n_cells] Zobrist key per square
        "width",  # board width (int, for Manhattan distances)
    ],
)

SliceGoal = namedtuple(
    "SliceGoal",
    [  # the slice's end and the metric
        "target",  # int32[N] squares of the moving boxes at the end of the slice, increasing
        "stand",  # square the player walks to at the end (the next push's), -1 after the last
        "by_pushes",  # 1 to order by (pushes, moves), 0 for (moves, pushes) (int)
    ],
)

SliceNodes = namedtuple(
    "SliceNodes",
    [
        "sq",  # int32[max_nodes, N] moving box squares per node, increasing
        "player",  # int32[max_nodes] player square per node
        "parent",  # int32[max_nodes] parent node, -1 for node 0
        "sq_push",  # int32[max_nodes] square push that made the node
        "g",  # int64[max_nodes] packed cost from node 0
        "f",  # int64[max_nodes] packed cost plus estimate (heap entries above it are stale)
    ],
)


@njit(cache=True, nogil=True)
def push_walks(board, start_boxes, start_player, sq_pushes, scratch, walks):
    """Replay ``sq_pushes`` from the start and record the shortest walk before each push.

    Args:
        board: ``SliceBoard`` (cells and offsets are read).
        start_boxes: int32[n_boxes] box squares at the start.
        start_player: player square at the start.
        sq_pushes: int32[k] square pushes, ``square * 4 + direction`` (the box's square before
            the push).
        scratch: ``replay.WalkScratch`` (its ``box_at`` all -1 on entry and on return).
        walks: int32[k + 1] receives the walk before push i at i (walks[k] = 0).

    Returns:
        Index of the first illegal push, or -1 when every push is legal.
    """
    cells = board.cells
    offsets = board.offsets
    box_at = scratch.box_at
    stamps = scratch.stamps
    dist = scratch.dist
    for b in range(start_boxes.shape[0]):
        box_at[start_boxes[b]] = b
    player = start_player
    bad = -1
    for i in range(sq_pushes.shape[0]):
        sq = sq_pushes[i] >> 2
        d = sq_pushes[i] & 3
        dest = sq + offsets[d]
        stand = sq - offsets[d]
        if box_at[sq] < 0 or not (cells[dest] & FLOOR) or box_at[dest] >= 0:
            bad = i
            break
        mark, _ = walk_distances(box_at, offsets, player, stamps, scratch.queue, dist)
        if stamps[stand] != mark:
            bad = i
            break
        walks[i] = dist[stand]
        box_at[dest] = box_at[sq]
        box_at[sq] = -1
        player = sq
    walks[sq_pushes.shape[0]] = 0
    for sq in range(cells.shape[0]):
        box_at[sq] = -1
    return bad


@njit(cache=True, nogil=True)
def _estimate(squares, target, width):
    """Sum over ``squares`` of the Manhattan distance to the nearest square of ``target``."""
    total = 0
    for a in range(squares.shape[0]):
        r = squares[a] // width
        c = squares[a] % width
        best = 1 << 30
        for t in range(target.shape[0]):
            dd = abs(r - target[t] // width) + abs(c - target[t] % width)
            if dd < best:
                best = dd
        total += best
    return np.int64(total)


@njit(cache=True, nogil=True)
def _squares_hash(zobrist, squares):
    """Xor of the Zobrist keys of ``squares`` (order-free)."""
    h = np.uint64(0)
    for a in range(squares.shape[0]):
        h ^= zobrist[squares[a]]
    return h


@njit(cache=True, nogil=True)
def _store_sorted(row, squares):
    """Write ``squares`` into ``row`` in increasing order (insertion sort; N is small)."""
    n = squares.shape[0]
    for a in range(n):
        v = squares[a]
        i = a
        while i > 0 and row[i - 1] > v:
            row[i] = row[i - 1]
            i -= 1
        row[i] = v


@njit(cache=True, nogil=True)
def search_slice(board, goal, nodes, heap, table, scratch, counters, budget):
    """Expand up to ``budget`` nodes of the sub-search (see the module docstring).

    On the first call (``counters[C_NODES] == 0``) the kernel sets up node 0 from
    ``nodes.sq[0]`` and ``nodes.player[0]``, which the driver writes; ``counters[C_BEST_KEY]``
    must hold the bound (the packed cost of the slice being replaced) and
    ``counters[C_BEST_NODE]`` -1. Later calls resume where the previous one stopped.

    Args:
        board: ``SliceBoard`` of the level.
        goal: ``SliceGoal``: the target squares, the player's last square and the metric.
        nodes: ``SliceNodes``, the node store (max_nodes rows).
        heap: ``heap.Heap``, the open list keyed by ``nodes.f``.
        table: ``table.Table``, the transposition table: the moving boxes' hash and the exact
            player square to the node.
        scratch: ``replay.WalkScratch``; its ``box_at`` is 0 on the squares of the fixed boxes,
            -1 elsewhere (the moving boxes are placed and removed during each expansion,
            unchanged on return).
        counters: int64[N_COUNTERS] counters (see the C_* slots); updated.
        budget: most nodes to expand in this call.

    Returns:
        A status: RUNNING, FOUND, EXHAUSTED, FULL, GROW_HEAP or GROW_TABLE.
    """
    cells = board.cells
    offsets = board.offsets
    zobrist = board.zobrist
    width = board.width
    box_at = scratch.box_at
    stamps = scratch.stamps
    dist = scratch.dist
    target = goal.target
    target_stand = goal.stand
    by_pushes = goal.by_pushes
    node_sq = nodes.sq
    node_g = nodes.g
    node_f = nodes.f
    heap_keys = heap.keys
    n = target.shape[0]
    max_nodes = node_sq.shape[0]
    moved = np.empty(n, dtype=np.int32)
    one = np.int64(1)
    if counters[C_NODES] == 0:
        for a in range(n):
            moved[a] = node_sq[0, a]
        est = _estimate(moved, target, width)
        node_g[0] = 0
        node_f[0] = (est << SHIFT) | est
        nodes.parent[0] = -1
        nodes.sq_push[0] = -1
        table_put(
            table.hashes,
            table.players,
            table.values,
            _squares_hash(zobrist, moved),
            np.int64(nodes.player[0]),
            np.int64(0),
        )
        counters[C_HEAP] = heap_push(heap_keys, heap.nodes, np.int64(0), node_f[0], np.int64(0))
        counters[C_NODES] = 1
        counters[C_TABLE] = 1
    for _ in range(budget):
        size = counters[C_HEAP]
        if size == 0 or heap_keys[0] >= counters[C_BEST_KEY]:
            return FOUND if counters[C_BEST_NODE] >= 0 else EXHAUSTED
        if counters[C_NODES] + 4 * n > max_nodes:
            return FULL
        if size + 4 * n > heap_keys.shape[0]:
            return GROW_HEAP
        if 2 * (counters[C_TABLE] + 4 * n) > table.hashes.shape[0]:
            return GROW_TABLE
        key, node, size = heap_pop(heap_keys, heap.nodes, size)
        counters[C_HEAP] = size
        if key > node_f[node]:
            continue  # stale: the node was reached more cheaply after this entry was pushed
        counters[C_EXPANDED] += 1
        for a in range(n):
            moved[a] = node_sq[node, a]
            box_at[moved[a]] = 0
        mark, _ = walk_distances(
            box_at, offsets, np.int64(nodes.player[node]), stamps, scratch.queue, dist
        )
        g = node_g[node]
        at_target = True
        for a in range(n):
            if moved[a] != target[a]:
                at_target = False
        if at_target:
            walk = np.int64(0)
            if target_stand >= 0:
                walk = np.int64(dist[target_stand]) if stamps[target_stand] == mark else -one
            if walk >= 0:
                total = g + (walk if by_pushes else walk << SHIFT)
                if total < counters[C_BEST_KEY]:
                    counters[C_BEST_KEY] = total
                    counters[C_BEST_NODE] = node
        h0 = _squares_hash(zobrist, moved)
        for a in range(n):
            sq = moved[a]
            for d in range(4):
                stand = sq - offsets[d]
                dest = sq + offsets[d]
                if stamps[stand] != mark or not (cells[dest] & FLOOR) or box_at[dest] >= 0:
                    continue
                if board.dead[dest]:
                    continue  # a lone box there reaches no goal, so no target square either
                walk = np.int64(dist[stand]) + one
                cg = g + ((one << SHIFT) | walk if by_pushes else (walk << SHIFT) | one)
                moved[a] = dest
                est = _estimate(moved, target, width)
                cf = cg + ((est << SHIFT) | est)
                if cf < counters[C_BEST_KEY]:
                    ch = h0 ^ zobrist[sq] ^ zobrist[dest]
                    child = table_get(table.hashes, table.players, table.values, ch, np.int64(sq))
                    if child < 0:
                        child = counters[C_NODES]
                        counters[C_NODES] = child + 1
                        _store_sorted(node_sq[child], moved)
                        nodes.player[child] = sq
                        table_put(
                            table.hashes, table.players, table.values, ch, np.int64(sq),
                            np.int64(child),
                        )  # fmt: skip
                        counters[C_TABLE] += 1
                    elif cg >= node_g[child]:
                        child = -1
                    if child >= 0:
                        nodes.parent[child] = node
                        nodes.sq_push[child] = sq * 4 + d
                        node_g[child] = cg
                        node_f[child] = cf
                        counters[C_HEAP] = heap_push(
                            heap_keys, heap.nodes, counters[C_HEAP], cf, child
                        )
                moved[a] = sq
        for a in range(n):
            box_at[moved[a]] = -1
    return RUNNING
