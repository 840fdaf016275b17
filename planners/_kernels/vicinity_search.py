"""Vicinity and global optimizer kernels: breadth-first searches inside a configuration set.

Positions are searched only when their configuration (``vicinity``: sorted box squares, one
row of the sorted set ``configs``) is in the set. A *state* is a configuration index and a
player square, numbered ``config * n_floor + floor_index[player]``; the visited sets are bit
vectors over state numbers (uint8[ceil(n_configs * n_floor / 8)]). A *push node* records one
push of the search as a *square push* (``square * 4 + direction``, the box's square before the
push) and the push node before it, so a solution is read back by following parents from the
last push.

Search kernels run for a bounded number of expansions and return a status; their Python driver
checks the clock, grows full arrays (replacing them in their bundle) and calls again, with
every counter in an int64 array.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from planners._kernels.vicinity import find_config
from soko_gym.engine.constants import FLOOR
from soko_gym.engine.reach import walk_distances

# Statuses of search_moves and search_pushes.
RUNNING = 0  # the expansion budget is spent; call again
FOUND = 1  # the target was reached; the counters name its push node
EXHAUSTED = 2  # nothing left to expand: the target is not reachable inside the set
GROW_QUEUE = 3  # the queue (search_moves) or the layer table (search_pushes) is full
GROW_NODES = 4  # the push-node arrays are full

# Counter slots of search_moves (int64[N_COUNTERS]).
M_HEAD = 0  # queue entries before this one are expanded
M_TAIL = 1  # next free queue entry (entries are numbered forever; slot = entry % capacity)
M_LAYER_END = 2  # first entry of the next breadth-first layer (one more step)
M_GROUP_START = 3  # first entry of the group (same layer, same pushes) being expanded
M_GROUP_END = 4  # entry after the group
M_PHASE = 5  # 0: the group's walking steps are generated, 1: its pushes
M_INDEX = 6  # next entry of the group to expand in this phase
M_NODES = 7  # push nodes stored
M_FOUND = 8  # push node of the last push of the found path (-1: no push), when FOUND
M_EXPANDED = 9  # expansions so far
N_COUNTERS = 10

# Counter slots of search_pushes (int64[N_COUNTERS]).
P_NEXT = 0  # next node of the current layer to expand
P_LAYER_START = 1  # first node of the current layer
P_LAYER_END = 2  # node after the current layer = first node of the next one
P_NODES = 3  # nodes stored
P_FOUND = 4  # node of the found path's last push, when FOUND
P_REBUILD = 5  # 1 when the layer table must be rebuilt (after the driver resized it)
P_EXPANDED = 6  # expansions so far
P_IN_TABLE = 7  # entries in the layer table

SetBoard = namedtuple(
    "SetBoard",
    [
        "cells",  # uint8[n_cells] cell flags
        "offsets",  # int32[4] flat index step per direction
        "floor",  # int32[n_floor] floor squares
        "floor_index",  # int32[n_cells] position of a square in ``floor``, -1 off the floor
    ],
)

StepQueue = namedtuple(
    "StepQueue",
    [  # search_moves' visited set and breadth-first queue (a ring: entry e at e % capacity)
        "visited",  # uint8[ceil(n_configs * n_floor / 8)] visited states, one bit each
        "state",  # int64[capacity] queued states
        "node",  # int32[capacity] push node of each entry's last push (-1: none yet)
        "pushes",  # int32[capacity] pushes of each entry
    ],
)

PushNodes = namedtuple(
    "PushNodes",
    [  # search_moves' push nodes
        "sq_push",  # int32[node_capacity] square push of each push node
        "parent",  # int32[node_capacity] previous push node (-1: the first push)
    ],
)

StepScratch = namedtuple(
    "StepScratch",
    [
        "occupied",  # uint8[n_cells] all 0 on entry and on return
        "row",  # int32[n_boxes]
    ],
)

LayerNodes = namedtuple(
    "LayerNodes",
    [  # search_pushes' nodes, stored layer by layer (one layer per push)
        "state",  # int64[node_capacity] state of each node
        "moves",  # int32[node_capacity] fewest moves to the node
        "parent",  # int32[node_capacity] parent node (-1: the start)
        "sq_push",  # int32[node_capacity] square push leading to the node
        "region",  # int64[node_capacity] region state recorded at expansion (-1: skipped)
    ],
)

LayerSets = namedtuple(
    "LayerSets",
    [
        "seen",  # uint8[ceil(n_configs * n_floor / 8)] states stored as nodes, one bit each
        "regions",  # uint8[same] (configuration, normalized player) expanded in an earlier layer
        "table",  # int32[power of two] open addressing: state -> node of the next layer, -1
    ],
)

LayerScratch = namedtuple(
    "LayerScratch",
    [
        "box_at",  # int16[n_cells] all -1 on entry and on return
        "stamps",  # uint32[n_cells + 1] stamp buffer (``reach.new_stamps``)
        "queue",  # int32[n_cells]
        "dist",  # int32[n_cells]
        "row",  # int32[n_boxes]
    ],
)


@njit(cache=True, nogil=True)
def _moved_row(configs, cfg, old, new, row):
    """Write configuration ``cfg`` with the box on ``old`` moved to ``new`` into ``row``, sorted."""
    n = row.shape[0]
    j = 0
    for i in range(n):
        row[i] = configs[cfg, i]
        if row[i] == old:
            j = i
    row[j] = new
    while j > 0 and row[j - 1] > row[j]:
        row[j - 1], row[j] = row[j], row[j - 1]
        j -= 1
    while j < n - 1 and row[j + 1] < row[j]:
        row[j + 1], row[j] = row[j], row[j + 1]
        j += 1


@njit(cache=True, nogil=True)
def _test_bit(bits, s):
    return (bits[s >> 3] >> (s & 7)) & 1


@njit(cache=True, nogil=True)
def _set_bit(bits, s):
    bits[s >> 3] |= np.uint8(1 << (s & 7))


@njit(cache=True, nogil=True)
def search_moves(
    board, configs, target_config, target_square, queue, nodes, counters, scratch, max_expansions
):
    """Breadth-first search over player steps (a push is a step) inside a configuration set.

    Finds the fewest moves, then the fewest pushes: a layer's entries are expanded in groups of
    equal pushes, each group's walking steps before its pushes, so every layer is queued in
    increasing pushes and the first entry to reach a state has the fewest. The driver queues the
    start (node -1, pushes 0), marks it visited and sets M_TAIL = M_LAYER_END = 1.

    Args:
        board: ``SetBoard`` of the level.
        configs: int32[n_configs, n_boxes] the configuration set (see module docstring).
        target_config: configuration index to reach.
        target_square: player square to reach with it (-1: any).
        queue: ``StepQueue``, the visited states and the queue.
        nodes: ``PushNodes``, the push nodes (node_capacity rows).
        counters: int64[N_COUNTERS] the M_* slots, updated.
        scratch: ``StepScratch``.
        max_expansions: entries to expand before returning RUNNING.

    Returns:
        Status: RUNNING, FOUND, EXHAUSTED, GROW_QUEUE or GROW_NODES.
    """
    cells = board.cells
    offsets = board.offsets
    floor = board.floor
    floor_index = board.floor_index
    visited = queue.visited
    queue_state = queue.state
    queue_node = queue.node
    queue_pushes = queue.pushes
    node_sq_push = nodes.sq_push
    node_parent = nodes.parent
    occupied = scratch.occupied
    row = scratch.row
    n_floor = floor.shape[0]
    cap = queue_state.shape[0]
    n_boxes = configs.shape[1]
    head = counters[M_HEAD]
    tail = counters[M_TAIL]
    layer_end = counters[M_LAYER_END]
    gs = counters[M_GROUP_START]
    ge = counters[M_GROUP_END]
    phase = counters[M_PHASE]
    idx = counters[M_INDEX]
    n_nodes = counters[M_NODES]
    status = RUNNING
    done = 0
    while done < max_expansions:
        if idx >= ge:
            if phase == 0 and ge > gs:
                phase = 1
                idx = gs
                continue
            head = ge
            if head >= tail:
                status = EXHAUSTED
                break
            if head == layer_end:
                layer_end = tail
            gs = head
            p = queue_pushes[gs % cap]
            ge = gs + 1
            while ge < layer_end and queue_pushes[ge % cap] == p:
                ge += 1
            phase = 0
            idx = gs
            continue
        slot = idx % cap
        state = queue_state[slot]
        node = queue_node[slot]
        pushes = queue_pushes[slot]
        cfg = state // n_floor
        sq = np.int64(floor[state % n_floor])
        for b in range(n_boxes):
            occupied[configs[cfg, b]] = 1
        blocked = False
        for d in range(4):
            nb = sq + offsets[d]
            if not (cells[nb] & FLOOR):
                continue
            if phase == 0:
                if occupied[nb]:
                    continue
                child = cfg * n_floor + floor_index[nb]
                if _test_bit(visited, child):
                    continue
                if tail - gs >= cap:
                    status = GROW_QUEUE
                    blocked = True
                    break
                _set_bit(visited, child)
                t = tail % cap
                queue_state[t] = child
                queue_node[t] = node
                queue_pushes[t] = pushes
                tail += 1
                if cfg == target_config and (target_square < 0 or nb == target_square):
                    counters[M_FOUND] = node
                    status = FOUND
                    blocked = True
                    break
            else:
                if not occupied[nb]:
                    continue
                dest = nb + offsets[d]
                if not (cells[dest] & FLOOR) or occupied[dest]:
                    continue
                _moved_row(configs, cfg, nb, dest, row)
                c2 = find_config(configs, row)
                if c2 < 0:
                    continue
                child = c2 * n_floor + floor_index[nb]
                if _test_bit(visited, child):
                    continue
                if tail - gs >= cap:
                    status = GROW_QUEUE
                    blocked = True
                    break
                if n_nodes >= node_sq_push.shape[0]:
                    status = GROW_NODES
                    blocked = True
                    break
                _set_bit(visited, child)
                node_sq_push[n_nodes] = nb * 4 + d
                node_parent[n_nodes] = node
                t = tail % cap
                queue_state[t] = child
                queue_node[t] = n_nodes
                queue_pushes[t] = pushes + 1
                n_nodes += 1
                tail += 1
                if c2 == target_config and (target_square < 0 or nb == target_square):
                    counters[M_FOUND] = n_nodes - 1
                    status = FOUND
                    blocked = True
                    break
        for b in range(n_boxes):
            occupied[configs[cfg, b]] = 0
        if blocked:
            break
        idx += 1
        done += 1
    counters[M_HEAD] = head
    counters[M_TAIL] = tail
    counters[M_LAYER_END] = layer_end
    counters[M_GROUP_START] = gs
    counters[M_GROUP_END] = ge
    counters[M_PHASE] = phase
    counters[M_INDEX] = idx
    counters[M_NODES] = n_nodes
    counters[M_EXPANDED] += done
    return status


@njit(cache=True, nogil=True)
def _table_slot(table, node_state, state):
    """Slot of ``state`` in an open-addressing table of node indices, or of the empty slot."""
    mask = table.shape[0] - 1
    h = (state * np.int64(0x9E3779B97F4A7C15)) >> 17
    i = h & mask
    while table[i] >= 0 and node_state[table[i]] != state:
        i = (i + 1) & mask
    return i


@njit(cache=True, nogil=True)
def search_pushes(
    board, configs, target_config, target_square, nodes, sets, counters, scratch, max_expansions
):
    """Breadth-first search over pushes inside a configuration set: fewest pushes, then moves.

    Nodes are stored layer by layer (one layer per push); node i's state is its configuration and
    the player's square after its push, its moves the fewest over the layer before (a node found
    again in the same layer with fewer moves takes the new parent). Expanding a node floods the
    player's region; a node whose (configuration, normalized player) was expanded in an earlier
    layer is skipped, and the layer's regions are recorded when the layer ends. When a layer
    holds the target, the node with the fewest moves (plus the walk to ``target_square``) wins.
    The driver stores the start as node 0 (parent -1, moves 0) and sets P_LAYER_END = P_NODES = 1.

    Args:
        board: ``SetBoard`` of the level.
        configs: int32[n_configs, n_boxes] the configuration set (see module docstring).
        target_config: configuration index to reach.
        target_square: square the player must walk to at the end (-1: none).
        nodes: ``LayerNodes`` (node_capacity rows).
        sets: ``LayerSets``, the stored and expanded states and the next layer's table.
        counters: int64[N_COUNTERS] the P_* slots, updated.
        scratch: ``LayerScratch``.
        max_expansions: nodes to expand before returning RUNNING.

    Returns:
        Status: RUNNING, FOUND, EXHAUSTED, GROW_QUEUE (table half full) or GROW_NODES.
    """
    cells = board.cells
    offsets = board.offsets
    floor = board.floor
    floor_index = board.floor_index
    seen = sets.seen
    regions = sets.regions
    table = sets.table
    node_state = nodes.state
    node_moves = nodes.moves
    node_parent = nodes.parent
    node_sq_push = nodes.sq_push
    node_region = nodes.region
    box_at = scratch.box_at
    stamps = scratch.stamps
    queue = scratch.queue
    dist = scratch.dist
    row = scratch.row
    n_floor = floor.shape[0]
    n_boxes = configs.shape[1]
    nxt = counters[P_NEXT]
    layer_start = counters[P_LAYER_START]
    layer_end = counters[P_LAYER_END]
    n_nodes = counters[P_NODES]
    if counters[P_REBUILD]:
        table[:] = -1
        for i in range(layer_end, n_nodes):
            table[_table_slot(table, node_state, node_state[i])] = i
        counters[P_REBUILD] = 0
    status = RUNNING
    done = 0
    while done < max_expansions:
        if nxt >= layer_end:
            for i in range(layer_start, layer_end):
                if node_region[i] >= 0:
                    _set_bit(regions, node_region[i])
            if n_nodes == layer_end:
                status = EXHAUSTED
                break
            best = -1
            best_cost = np.int64(1) << 62
            for i in range(layer_end, n_nodes):
                cfg = node_state[i] // n_floor
                if cfg != target_config:
                    continue
                cost = np.int64(node_moves[i])
                if target_square >= 0:
                    sq = np.int64(floor[node_state[i] % n_floor])
                    for b in range(n_boxes):
                        box_at[configs[cfg, b]] = b
                    walk_distances(box_at, offsets, sq, stamps, queue, dist)
                    for b in range(n_boxes):
                        box_at[configs[cfg, b]] = -1
                    if stamps[target_square] != stamps[stamps.shape[0] - 1]:
                        continue
                    cost += dist[target_square]
                if cost < best_cost:
                    best_cost = cost
                    best = i
            layer_start = layer_end
            layer_end = n_nodes
            nxt = layer_start
            table[:] = -1
            counters[P_IN_TABLE] = 0
            if best >= 0:
                counters[P_FOUND] = best
                status = FOUND
                break
            continue
        state = node_state[nxt]
        cfg = state // n_floor
        sq = np.int64(floor[state % n_floor])
        for b in range(n_boxes):
            box_at[configs[cfg, b]] = b
        _, lowest = walk_distances(box_at, offsets, sq, stamps, queue, dist)
        mark = stamps[stamps.shape[0] - 1]
        region = cfg * n_floor + floor_index[lowest]
        blocked = False
        if _test_bit(regions, region):
            node_region[nxt] = -1
        else:
            node_region[nxt] = region
            moves = node_moves[nxt]
            for b in range(n_boxes):
                bsq = np.int64(configs[cfg, b])
                for d in range(4):
                    stand = bsq - offsets[d]
                    dest = bsq + offsets[d]
                    if stamps[stand] != mark or not (cells[dest] & FLOOR) or box_at[dest] >= 0:
                        continue
                    _moved_row(configs, cfg, bsq, dest, row)
                    c2 = find_config(configs, row)
                    if c2 < 0:
                        continue
                    child = c2 * n_floor + floor_index[bsq]
                    cand = moves + dist[stand] + 1
                    if _test_bit(seen, child):
                        slot = _table_slot(table, node_state, child)
                        k = table[slot]
                        if k >= 0 and cand < node_moves[k]:
                            node_moves[k] = cand
                            node_parent[k] = nxt
                            node_sq_push[k] = bsq * 4 + d
                        continue
                    if n_nodes >= node_state.shape[0]:
                        status = GROW_NODES
                        blocked = True
                        break
                    if 2 * (counters[P_IN_TABLE] + 1) > table.shape[0]:
                        status = GROW_QUEUE
                        blocked = True
                        break
                    _set_bit(seen, child)
                    node_state[n_nodes] = child
                    node_moves[n_nodes] = cand
                    node_parent[n_nodes] = nxt
                    node_sq_push[n_nodes] = bsq * 4 + d
                    node_region[n_nodes] = -1
                    table[_table_slot(table, node_state, child)] = n_nodes
                    counters[P_IN_TABLE] += 1
                    n_nodes += 1
                if blocked:
                    break
        for b in range(n_boxes):
            box_at[configs[cfg, b]] = -1
        if blocked:
            break
        nxt += 1
        done += 1
    counters[P_NEXT] = nxt
    counters[P_LAYER_START] = layer_start
    counters[P_LAYER_END] = layer_end
    counters[P_NODES] = n_nodes
    counters[P_EXPANDED] += done
    return status
