"""Depth-first push search kernel (``dfs``, ``zobrist-dfs``, ``iddfs``, ``iddfs-zobrist``).

Apply/undo on one position with an explicit stack; runs a bounded number of expansions and
returns a ``common`` status to the driver, which checks the clock, grows full arrays and calls
again; every counter lives in an int64 array.
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
from planners._kernels.table import table_get, table_put
from soko_gym.engine.constants import GOAL, HASH_DTYPE, SQUARE_DTYPE
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import reach_player

# Counter slots after the shared ones (int64[N_COUNTERS]).
C_PRUNED_DEAD = N_SHARED  # pushes onto a simple dead square or freezing a box off goal
C_DUPLICATES = N_SHARED + 1  # positions in the table at a smaller depth (or on the path)
C_TABLE = N_SHARED + 2  # table entries
C_DEPTH = N_SHARED + 3  # current depth
C_ENTER = N_SHARED + 4  # 1 while the position at the current depth is still to be entered
C_ON_GOAL = N_SHARED + 5  # boxes on goals in the current position
C_FRONTIER = N_SHARED + 6  # 1 once a position was cut off by the depth bound
N_COUNTERS = N_SHARED + 7

# The depth stack (rows: depths), as one kernel argument.
DfsStack = namedtuple(
    "DfsStack",
    [
        "moves",  # int32[cap, 4 * n_boxes] push codes generated at each depth
        "n_moves",  # int32[cap] number of codes in each row of ``moves``
        "next_move",  # int32[cap] next code to try at each depth
        "path",  # int32[cap] push code made at each depth of the current path
        "players",  # int32[cap] player square at each depth; ``players[0]`` set by the caller
        "hashes",  # uint64[cap] box hash at each depth; ``hashes[0]`` set by the caller
        "norms",  # int32[cap] normalized player square at each entered depth
    ],
)


def new_dfs_stack(n_boxes: int, rows: int) -> DfsStack:
    """A depth stack of ``rows`` depths."""
    return DfsStack(
        moves=np.zeros((rows, 4 * n_boxes), dtype=SQUARE_DTYPE),
        n_moves=np.zeros(rows, dtype=SQUARE_DTYPE),
        next_move=np.zeros(rows, dtype=SQUARE_DTYPE),
        path=np.zeros(rows, dtype=SQUARE_DTYPE),
        players=np.zeros(rows, dtype=SQUARE_DTYPE),
        hashes=np.zeros(rows, dtype=HASH_DTYPE),
        norms=np.zeros(rows, dtype=SQUARE_DTYPE),
    )


@njit(cache=True, nogil=True)
def run_dfs(board, scratch, stack, table, counters, budget, bound, use_table, freeze):
    """Search depth-first for up to ``budget`` expansions.

    Entering the position at depth d: it is goal-tested; then, with a table, it is skipped if
    the table holds it at a depth <= d, else stored at depth d; without a table it is skipped
    if it repeats a position on the current path. A position at depth ``bound`` is not
    expanded (and C_FRONTIER is set). Pushes onto simple dead squares, and with ``freeze``
    pushes that freeze a box off goal, are never made (both leave unsolvable positions).

    Args:
        board: ``common.SearchBoard``.
        scratch: ``common.PushScratch``; ``box_pos`` and ``box_at`` hold the current position
            (the start when depth 0 is entered); updated.
        stack: ``DfsStack``; updated.
        table: ``table.Table``: (box hash, normalized player) -> smallest depth the position
            was entered at (unused without ``use_table``); updated.
        counters: int64[N_COUNTERS] C_* slots; updated. Start with C_DEPTH 0, C_ENTER 1 and
            C_ON_GOAL the boxes on goals at the start.
        budget: most nodes to expand in this call.
        bound: largest depth to expand to (a position at this depth is only goal-tested).
        use_table: prune with the transposition table (else with the path).
        freeze: also prune pushes that freeze a box off goal.

    Returns:
        A ``common`` status: FOUND (``stack.path[:depth]`` solves), EXHAUSTED (the search from
        depth 0 is finished), RUNNING, GROW_NODES (the stack is full) or GROW_TABLE.
    """
    cells, offsets, zobrist = board.cells, board.offsets, board.zobrist
    box_pos, box_at = scratch.box_pos, scratch.box_at
    stamps, fill, seen, trail = scratch.stamps, scratch.stack, scratch.seen, scratch.trail
    moves, n_moves, next_move = stack.moves, stack.n_moves, stack.next_move
    path, players, hashes, norms = stack.path, stack.players, stack.hashes, stack.norms
    t_hashes, t_players, t_values = table.hashes, table.players, table.values
    dead = board.dead
    n_boxes = box_pos.shape[0]
    cap = path.shape[0]
    stop_at = counters[C_EXPANDED] + budget
    while True:
        d = counters[C_DEPTH]
        if counters[C_ENTER]:
            if use_table and 2 * (counters[C_TABLE] + 1) > t_hashes.shape[0]:
                return GROW_TABLE
            if counters[C_EXPANDED] >= stop_at:
                return RUNNING
            counters[C_ENTER] = 0
            n_moves[d] = 0
            next_move[d] = 0
            if counters[C_ON_GOAL] == n_boxes:
                return FOUND
            h = hashes[d]
            _, norm = reach_player(box_at, offsets, np.int64(players[d]), stamps, fill)
            norms[d] = norm
            repeated = False
            if use_table:
                known = table_get(t_hashes, t_players, t_values, h, np.int64(norm))
                if known >= 0 and known <= d:
                    repeated = True
                elif table_put(t_hashes, t_players, t_values, h, np.int64(norm), np.int64(d)):
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
            if is_pruned_push(cells, dead, box_at, offsets, new, freeze, seen, trail):
                counters[C_PRUNED_DEAD] += 1
                undo_push(box_pos, box_at, offsets, zobrist, h2, code)
                continue
            counters[C_GENERATED] += 1
            counters[C_ON_GOAL] += (cells[new] & GOAL != 0) - (cells[old] & GOAL != 0)
            path[d] = code
            players[d + 1] = pl
            hashes[d + 1] = h2
            counters[C_DEPTH] = d + 1
            counters[C_ENTER] = 1
            continue
        if d == 0:
            return EXHAUSTED
        code = np.int64(path[d - 1])
        new = np.int64(box_pos[code >> 2])
        undo_push(box_pos, box_at, offsets, zobrist, hashes[d], code)
        old = np.int64(box_pos[code >> 2])
        counters[C_ON_GOAL] += (cells[old] & GOAL != 0) - (cells[new] & GOAL != 0)
        counters[C_DEPTH] = d - 1
