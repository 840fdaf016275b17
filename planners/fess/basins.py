"""Target basins and sink rooms: where the packing plan's boxes come from (Section 6).

Terms (basin, sink room, fed sink rooms) are those of ``planners.fess.packing_plan``. Also the
two square sets the plan and the waypoint read: walking distances from a set of squares, and
the squares a box of the initial position could be pushed to.
"""

from __future__ import annotations

import numpy as np

from planners._kernels.fess_pull_closure import pull_closure
from planners.fess.rooms import Rooms
from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_INF, FLOOR, SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps


def walk_distance_from(board: Board, sources: np.ndarray) -> np.ndarray:
    """Walking distance (boxes ignored) of each square to the nearest of ``sources``: int32."""
    n = board.n_cells
    dist = np.full(n, DIST_INF, dtype=np.int32)
    frontier = [int(s) for s in sources]
    for s in frontier:
        dist[s] = 0
    offsets = [int(o) for o in board.offsets]
    is_floor = (board.cells & FLOOR) != 0
    d = 0
    while frontier:
        d += 1
        nxt = []
        for sq in frontier:
            for o in offsets:
                nb = sq + o
                if is_floor[nb] and dist[nb] == DIST_INF:
                    dist[nb] = d
                    nxt.append(nb)
        frontier = nxt
    return dist


def target_basins(board: Board) -> np.ndarray:
    """The basin of every target (module docstring): uint8[n_goals, n_cells]."""
    n = board.n_cells
    box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
    box_at[board.goals] = 0
    stamps = new_stamps(board.cells)
    stack = np.zeros(n, dtype=SQUARE_DTYPE)
    seen = np.zeros(4 * n, dtype=np.uint8)
    queue = np.zeros(4 * n, dtype=SQUARE_DTYPE)
    out = np.zeros((board.goals.shape[0], n), dtype=np.uint8)
    for g, goal in enumerate(board.goals.tolist()):
        box_at[goal] = -1
        pull_closure(board.cells, box_at, board.offsets, goal, stamps, stack, seen, queue)
        box_at[goal] = 0
        out[g] = seen.reshape(n, 4).any(axis=1)
    return out


def push_reachable(board: Board) -> np.ndarray:
    """bool[n_cells]: squares some box of the initial position could be pushed to, alone.

    Player access is relaxed (a push needs only floor behind the box), so the set is a superset
    of the truth: a square outside it can hold a box in no position reachable from the start.
    """
    cells = board.cells
    offsets = board.offsets.tolist()
    ok = np.zeros(board.n_cells, dtype=bool)
    stack = board.start_boxes.tolist()
    ok[stack] = True
    while stack:
        sq = stack.pop()
        for d in offsets:
            ahead = sq + d
            if ok[ahead] or not (cells[ahead] & FLOOR) or not (cells[sq - d] & FLOOR):
                continue
            if board.dead[ahead]:
                continue
            ok[ahead] = True
            stack.append(ahead)
    return ok


def sink_candidates(board: Board, rooms: Rooms, basins: np.ndarray) -> list[tuple[int, int]]:
    """Sink rooms to try, best first, each with the target whose basin it serves.

    First the paper's choice and its runners-up, the fed sink rooms (``ranked_sinks``). Then
    every other room without targets that some basin meets, ranked by the boxes it holds at
    the start. Empty when no room qualifies.
    """
    fed, rest = ranked_sinks(board, rooms, basins)
    return fed + rest


def ranked_sinks(
    board: Board, rooms: Rooms, basins: np.ndarray
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The fed sink rooms and the other rooms some basin meets, each with a target it serves.

    Fed: per target, the room its basin meets first (nearest by walking distance, rooms
    holding targets excluded); ranked by the boxes of the initial position in that basin, then
    by the basin's size. The first is the paper's sink room. Other: every other room without
    targets that some basin meets, ranked by the boxes it holds at the start.
    """
    goal_rooms = {int(rooms.room_id[g]) for g in board.goals.tolist()} - {-1}
    start = np.zeros(board.n_cells, dtype=bool)
    start[board.start_boxes] = True
    ranked: dict[int, tuple[tuple[int, int], int]] = {}  # room -> (key, goal)
    touched: dict[int, int] = {}  # room -> a goal whose basin meets it
    for g, goal in enumerate(board.goals.tolist()):
        dist = walk_distance_from(board, np.array([goal]))
        basin = basins[g].astype(bool)
        candidates = basin & (rooms.room_id >= 0)
        candidates &= ~np.isin(rooms.room_id, list(goal_rooms))
        if not candidates.any():
            continue
        squares = np.flatnonzero(candidates)
        for r in np.unique(rooms.room_id[squares]).tolist():
            touched.setdefault(int(r), g)
        room = int(rooms.room_id[squares[np.argmin(dist[squares])]])
        key = (int((basin & start).sum()), int(basin.sum()))
        if room not in ranked or key > ranked[room][0]:
            ranked[room] = (key, g)
    order = sorted(ranked.items(), key=lambda kv: (-kv[1][0][0], -kv[1][0][1], kv[1][1]))
    out = [(room, g) for room, (_, g) in order]
    rest = [r for r in touched if r not in ranked]
    rest.sort(key=lambda r: (-int((start & (rooms.room_id == r)).sum()), r))
    return out, [(r, touched[r]) for r in rest]
