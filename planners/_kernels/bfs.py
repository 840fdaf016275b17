"""Breadth-first push search kernel (``bfs``): the node store is the queue.

Runs a bounded number of expansions and returns a ``common`` status to the driver, which
checks the clock, grows full arrays and calls again; every counter lives in an int64 array.
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
    is_pruned_push,
)
from planners._kernels.table import table_put
from soko_gym.engine.constants import GOAL, SQUARE_DTYPE
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import reach_player

# Counter slots after the shared ones (int64[N_COUNTERS]).
C_PRUNED_DEAD = N_SHARED  # pushes onto a simple dead square or freezing a box off goal
C_DUPLICATES = N_SHARED + 1  # positions already in the table
C_TABLE = N_SHARED + 2  # table entries
C_HEAD = N_SHARED + 3  # next node to expand
C_NODES = N_SHARED + 4  # nodes stored
C_GOAL = N_SHARED + 5  # the goal node, once FOUND
N_COUNTERS = N_SHARED + 6

# The node store (rows: nodes), as one kernel argument.
BfsNodes = namedtuple(
    "BfsNodes",
    [
        "boxes",  # int16[cap, n_boxes] box squares, in box-index order
        "parent",  # int32[cap] parent node, -1 for the root
        "push",  # int32[cap] push code (box index of the parent * 4 + direction) into the node
        "player",  # int32[cap] player square (where the pushed box stood)
    ],
)


def new_bfs_nodes(n_boxes: int, capacity: int) -> BfsNodes:
    """A node store of ``capacity`` nodes."""
    return BfsNodes(
        boxes=np.zeros((capacity, n_boxes), dtype=np.int16),
        parent=np.zeros(capacity, dtype=SQUARE_DTYPE),
        push=np.zeros(capacity, dtype=SQUARE_DTYPE),
        player=np.zeros(capacity, dtype=SQUARE_DTYPE),
    )


@njit(cache=True, nogil=True)
def run_bfs(board, scratch, nodes, table, counters, budget, freeze):
    """Expand up to ``budget`` nodes in first-in first-out order.

    A node is a position right after a push. Children are goal-tested when generated, so the
    first goal found has the fewest pushes. Before each expansion the kernel checks that the
    store and the table have room for every child, and returns GROW_NODES / GROW_TABLE if not.

    Args:
        board: ``common.SearchBoard``.
        scratch: ``common.PushScratch``; ``box_at`` all -1 between calls.
        nodes: ``BfsNodes``; updated.
        table: ``table.Table``: (box hash, normalized player) -> node; updated.
        counters: int64[N_COUNTERS] C_* slots; updated (C_HEAD, C_NODES and C_TABLE hold the
            queue head, the stored nodes and the table entries).
        budget: most nodes to expand in this call.
        freeze: also prune pushes that freeze a box off goal.

    Returns:
        A ``common`` status: FOUND (counters[C_GOAL] = goal node), EXHAUSTED, RUNNING,
        GROW_NODES or GROW_TABLE.
    """
    cells, offsets, zobrist = board.cells, board.offsets, board.zobrist
    box_pos, box_at, moves = scratch.box_pos, scratch.box_at, scratch.pushes
    stamps, stack, seen, trail = scratch.stamps, scratch.stack, scratch.seen, scratch.trail
    boxes, parent, push, player = nodes.boxes, nodes.parent, nodes.push, nodes.player
    t_hashes, t_players, t_values = table.hashes, table.players, table.values
    dead = board.dead
    n_boxes = box_pos.shape[0]
    cap = parent.shape[0]
    width = 4 * n_boxes
    stop_at = counters[C_EXPANDED] + budget
    while counters[C_HEAD] < counters[C_NODES]:
        if counters[C_EXPANDED] >= stop_at:
            return RUNNING
        if counters[C_NODES] + width > cap:
            return GROW_NODES
        if 2 * (counters[C_TABLE] + width) > t_hashes.shape[0]:
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
            if is_pruned_push(cells, dead, box_at, offsets, new, freeze, seen, trail):
                counters[C_PRUNED_DEAD] += 1
            else:
                counters[C_GENERATED] += 1
                _, norm = reach_player(box_at, offsets, np.int64(pl), stamps, stack)
                child = counters[C_NODES]
                if table_put(t_hashes, t_players, t_values, h2, np.int64(norm), np.int64(child)):
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
    return EXHAUSTED
