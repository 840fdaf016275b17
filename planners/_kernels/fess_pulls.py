"""FESS pull moves: the macro moves of the packing plan's backward search (Section 6).

As the forward macro moves (``fess_moves``), with pulls: one box taken along any of its pull
paths, the player walking between pulls; a box pulled into the sink room leaves the board.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from planners._kernels.fess import count_regions
from planners._kernels.packing import pull_paths
from soko_gym.engine.constants import DIST_INF, GOAL
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.reach import new_stamps, reach_player

# columns of the backward move table (``pull_moves``)
P_BOX = 0  # index of the pulled box
P_SRC = 1  # its square before the pull
P_DST = 2  # its square after the pull, or -1 when it is pulled into the sink and removed
P_PLAYER = 3  # the player's square after the move
P_NORM = 4  # normalized player square after the move
P_ON_BOARD = 5  # boxes left on the board
P_ON_TARGET = 6  # boxes on targets
P_SCORE = 7  # distance score: sum of the boxes' distances to their nearest target
P_CONN = 8  # connectivity
P_PUSHABLE = 9  # 1 when the packing-plan advisor may park a box there (see ``pull_moves``)
N_PULL_COLS = 10


PullTables = namedtuple(
    "PullTables",
    [
        "cells",  # uint8[n_cells] cell flags
        "dead",  # uint8[n_cells] forward dead squares
        "offsets",  # int32[4]
        "floor",  # int32[n_floor] floor squares
        "near_dist",  # int32[n_cells] walking distance of each square to its nearest target
        "sink",  # uint8[n_cells] 1 on squares of the sink room (all 0 without a sink)
        "start_box",  # uint8[n_cells] 1 on squares holding a box in the level's initial position
    ],
)

PullScratch = namedtuple(
    "PullScratch",
    [  # as the fields of the same names in MoveScratch
        "stamps",  # uint32[n_cells + 1]
        "stack",  # int32[n_cells]
        "dist",  # uint16[4 * n_cells]
        "parent",  # int32[4 * n_cells]
        "queue",  # int32[4 * n_cells]
        "label",  # int32[n_cells]
        "seen",  # uint32[n_cells + 1]
        "trail",  # int32[n_cells]
    ],
)


def new_pull_scratch(cells: np.ndarray) -> PullScratch:
    """Fresh scratch for ``pull_moves`` on a board with cell flags ``cells``."""
    n = cells.shape[0]
    return PullScratch(
        stamps=new_stamps(cells),
        stack=np.zeros(n, dtype=np.int32),
        dist=np.zeros(4 * n, dtype=np.uint16),
        parent=np.zeros(4 * n, dtype=np.int32),
        queue=np.zeros(4 * n, dtype=np.int32),
        label=np.full(n, -1, dtype=np.int32),
        seen=np.zeros(n + 1, dtype=np.uint32),
        trail=np.zeros(n, dtype=np.int32),
    )


@njit(cache=True, nogil=True, _nrt=False)
def pull_moves(tables, sc, box_at, box_pos, on_board, player, moves):
    """Write the macro pull moves of a packing-plan position (FESS paper, Section 6).

    Rule 1: when some box can be pulled into the sink room, only such moves are written, one
    per box, and the box leaves the board. Otherwise every pull of every box on the board to
    any square its pull paths reach, one move per player region around the box.

    Args:
        tables: ``PullTables`` of the level; sc: ``PullScratch``.
        box_at: int16[n_cells] box index per square, -1 for none (restored on return).
        box_pos: int32[n_boxes] box squares; on_board: uint8[n_boxes] 1 for boxes still on it.
        player: player square (int64).
        moves: int32[cap, N_PULL_COLS] receives the moves (cap >= 4 * n_boxes * n_floor).

    Returns:
        Number of moves written.

    The ``P_PUSHABLE`` column holds the packing-plan advisor's restrictions 2 and 3: the box
    ends on a square holding a box in the initial position, or on a square a box can be pushed
    to and stay movable (not a dead square, not frozen off target).
    """
    cells = tables.cells
    dead = tables.dead
    offsets = tables.offsets
    floor = tables.floor
    near_dist = tables.near_dist
    sink = tables.sink
    start_box = tables.start_box
    stamps = sc.stamps
    stack = sc.stack
    dist = sc.dist
    label = sc.label
    n_cells = cells.shape[0]
    n_boxes = box_pos.shape[0]
    board_count = 0
    on_target = 0
    score = 0
    for b in range(n_boxes):
        if on_board[b]:
            board_count += 1
            if cells[box_pos[b]] & GOAL:
                on_target += 1
            score += near_dist[box_pos[b]]
    n_moves = 0
    for phase in range(2):  # 0: removals into the sink (rule 1); 1: every other pull
        if phase == 1 and n_moves > 0:
            break
        for b in range(n_boxes):
            if not on_board[b]:
                continue
            src = np.int64(box_pos[b])
            pull_paths(
                cells, box_at, offsets, player, src, stamps, stack, dist, sc.parent, sc.queue
            )
            for i in range(floor.shape[0]):
                dst = np.int64(floor[i])
                if dst == src or (phase == 0 and not sink[dst]):
                    continue
                first = -1
                for s in range(4):
                    if dist[dst * 4 + s] != DIST_INF:
                        first = s
                        break
                if first < 0:
                    continue
                box_at[src] = -1
                if phase == 0:  # the box leaves the board
                    stand = np.int64(dst + offsets[first])
                    _, norm = reach_player(box_at, offsets, stand, stamps, stack)
                    row = moves[n_moves]
                    row[P_BOX] = b
                    row[P_SRC] = src
                    row[P_DST] = -1
                    row[P_PLAYER] = stand
                    row[P_NORM] = norm
                    row[P_ON_BOARD] = board_count - 1
                    row[P_ON_TARGET] = on_target - (1 if cells[src] & GOAL else 0)
                    row[P_SCORE] = score - near_dist[src]
                    row[P_CONN] = count_regions(cells, box_at, offsets, floor, label, stack)
                    row[P_PUSHABLE] = 1
                    n_moves += 1
                    box_at[src] = b
                    break  # one removal per box
                box_at[dst] = b
                pushable = 1 if start_box[dst] else 0
                if not pushable and not dead[dst]:
                    if not is_simple_deadlock(cells, dead, box_at, offsets, dst, sc.seen, sc.trail):
                        pushable = 1
                conn = count_regions(cells, box_at, offsets, floor, label, stack)
                covered = 0
                for s in range(first, 4):
                    if dist[dst * 4 + s] == DIST_INF or (covered >> s) & 1:
                        continue
                    stand = np.int64(dst + offsets[s])
                    _, norm = reach_player(box_at, offsets, stand, stamps, stack)
                    mk = stamps[n_cells]
                    for t in range(4):
                        if stamps[dst + offsets[t]] == mk:
                            covered |= 1 << t
                    row = moves[n_moves]
                    row[P_BOX] = b
                    row[P_SRC] = src
                    row[P_DST] = dst
                    row[P_PLAYER] = stand
                    row[P_NORM] = norm
                    row[P_ON_BOARD] = board_count
                    row[P_ON_TARGET] = (
                        on_target
                        - (1 if cells[src] & GOAL else 0)
                        + (1 if cells[dst] & GOAL else 0)
                    )
                    row[P_SCORE] = score - near_dist[src] + near_dist[dst]
                    row[P_CONN] = conn
                    row[P_PUSHABLE] = pushable
                    n_moves += 1
                box_at[dst] = -1
                box_at[src] = b
    return n_moves
