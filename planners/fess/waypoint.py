"""A waypoint for FESS: a loose position the solved one is known to be reached from.

Some levels interleave boxes and targets so densely (a checkerboard of boxes and targets, rows
of boxes each one push from its target) that no packing order fits: FESS's plan is a guess,
and the search ends a few boxes short in packed positions it must unpack again. Such levels
are easy from the other side. A backward search pulls boxes off the targets, keeping the
player's area in one piece and then taking the boxes as far from the targets as it can; its
best position is a *waypoint*, a loose position from which pushing the pulls back in reverse
order solves the level. The forward search then only has to reach the waypoint's box squares,
a level of its own with those squares as targets.

- *Backward search*: best first over macro pulls (``pull_moves`` without a sink), from the
  solved position with the player in each of its regions. Positions are ranked by player
  regions (fewest first), then by the distance score (the sum of the boxes' walking distances
  to their nearest targets; largest first). A pull must end where some box of the start can be
  pushed to alone (``push_reachable``): the forward search must be able to bring a box there.
- *Waypoint*: the best position the backward search stored, with the pulls that lead to it.
- *Finish*: after the forward search reaches the waypoint's box squares, each pull in reverse
  order becomes the fewest pushes that bring its box back, ending with the player in the region
  the backward search had it in (``soko_gym.engine.macro.box_paths``). The forward search's last
  position must leave the player in the waypoint's region; with one region, as on the loose
  positions the ranking favours, it always does.

The idea follows Festival's published design (a backward search whose positions guide the
forward one); the code is this project's.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numpy as np

from planners._kernels.fess_pulls import (
    N_PULL_COLS,
    P_BOX,
    P_CONN,
    P_DST,
    P_NORM,
    P_PLAYER,
    P_SCORE,
    P_SRC,
    PullTables,
    new_pull_scratch,
    pull_moves,
)
from planners.base import Push
from planners.fess.basins import push_reachable, walk_distance_from
from planners.fess.run import path_pushes
from soko_gym.engine.board import Board, build_board
from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_INF, SQUARE_DTYPE, WALL
from soko_gym.engine.macro import box_paths
from soko_gym.engine.reach import reach_player


@dataclass(frozen=True, eq=False)
class Waypoint:
    """A position reached from the solved one by ``pulls`` (see the module docstring).

    Attributes:
        boxes: int32[n_boxes] its box squares, increasing.
        player: a square of the player's region in it.
        regions: number of player regions in it (free floor areas).
        score: its distance score.
        pulls: the macro pulls from the solved position, in order: (square the box leaves,
            square it reaches, player square before the pull).
        nodes: positions the backward search stored.
        seconds: time the backward search took.
    """

    boxes: np.ndarray
    player: int
    regions: int
    score: int
    pulls: tuple[tuple[int, int, int], ...]
    nodes: int
    seconds: float


def find_waypoint(board: Board, max_nodes: int = 3000, deadline: float | None = None) -> Waypoint:
    """Run the backward search (module docstring) for ``max_nodes`` positions or ``deadline``.

    Returns the solved position itself (no pulls) when no pull is possible.
    """
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be positive, got {max_nodes}")
    t0 = time.perf_counter()
    n, nb = board.n_cells, board.n_boxes
    near = walk_distance_from(board, board.goals)
    near = np.where(near == DIST_INF, 0, near).astype(SQUARE_DTYPE)
    start_box = np.zeros(n, dtype=np.uint8)
    start_box[board.start_boxes] = 1
    tables = PullTables(
        board.cells, board.dead, board.offsets, board.floor, near, np.zeros(n, np.uint8), start_box
    )
    scratch = new_pull_scratch(board.cells)
    out = np.zeros((max(1, 4 * nb * board.floor.shape[0]), N_PULL_COLS), np.int32)
    reachable = push_reachable(board)
    box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
    on_board = np.ones(nb, dtype=np.uint8)
    stamps, stack = scratch.stamps, scratch.stack

    # a node: (box squares by box index, player square, parent node, pull that made it)
    nodes: list[tuple[np.ndarray, int, int, tuple[int, int, int] | None]] = []
    seen: set[tuple[bytes, int]] = set()
    heap: list[tuple[int, int, int]] = []  # (regions, -score, node): the node breaks ties
    goals = board.goals.astype(SQUARE_DTYPE)
    box_at[goals] = np.arange(nb)
    root_regions = 0
    for sq in board.floor.tolist():  # one root per region of the solved position
        if box_at[sq] >= 0:
            continue
        _, norm = reach_player(box_at, board.offsets, sq, stamps, stack)
        key = (goals.tobytes(), int(norm))
        if key in seen:
            continue
        seen.add(key)
        root_regions += 1
        nodes.append((goals.copy(), sq, -1, None))
    box_at[:] = -1
    score0 = int(near[goals].sum())
    for i in range(len(nodes)):
        heapq.heappush(heap, (root_regions, -score0, i))
    best = (root_regions, -score0, 0)  # of every stored position, expanded or not
    while heap and len(nodes) < max_nodes:
        if deadline is not None and time.perf_counter() > deadline:
            break
        _, _, i = heapq.heappop(heap)
        box_pos, player, _, _ = nodes[i]
        box_at[box_pos] = np.arange(nb)
        k = pull_moves(tables, scratch, box_at, box_pos, on_board, player, out)
        box_at[box_pos] = -1
        for row in out[:k]:
            dst = int(row[P_DST])
            if dst < 0 or not reachable[dst]:
                continue
            child = box_pos.copy()
            child[int(row[P_BOX])] = dst
            key = (np.sort(child).tobytes(), int(row[P_NORM]))
            if key in seen:
                continue
            seen.add(key)
            nodes.append((child, int(row[P_PLAYER]), i, (int(row[P_SRC]), dst, player)))
            rank = (int(row[P_CONN]), -int(row[P_SCORE]), len(nodes) - 1)
            heapq.heappush(heap, rank)
            best = min(best, rank)
            if len(nodes) >= max_nodes:
                break
    pulls = []
    i = best[2]
    while nodes[i][2] >= 0:
        pulls.append(nodes[i][3])
        i = nodes[i][2]
    pulls.reverse()
    box_pos, player, _, _ = nodes[best[2]]
    return Waypoint(
        boxes=np.sort(box_pos).astype(SQUARE_DTYPE),
        player=int(player),
        regions=int(best[0]),
        score=int(-best[1]),
        pulls=tuple(pulls),  # type: ignore[arg-type]
        nodes=len(nodes),
        seconds=time.perf_counter() - t0,
    )


def waypoint_board(board: Board, waypoint: Waypoint) -> Board:
    """``board`` with the waypoint's box squares as its targets (same squares, same start)."""
    shape = (board.height, board.width)
    walls = ((board.cells & WALL) != 0).reshape(shape)
    goals = np.zeros(board.n_cells, dtype=bool)
    goals[waypoint.boxes] = True
    return build_board(walls, goals.reshape(shape), board.start_boxes, board.start_player)


def finish_pushes(board: Board, waypoint: Waypoint, player: int) -> list[Push] | None:
    """Pushes from the waypoint, player on ``player``, to the solved position; None if shut out.

    Each pull, last first, becomes the fewest pushes that bring its box back with the player
    ending in the region the pull started from.
    """
    n, nb = board.n_cells, board.n_boxes
    offsets = board.offsets
    box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
    box_at[waypoint.boxes] = np.arange(nb)
    scratch = new_pull_scratch(board.cells)
    stamps, stack = scratch.stamps, scratch.stack
    reach_player(box_at, offsets, waypoint.player, stamps, stack)
    if stamps[player] != stamps[n]:
        return None  # the forward search left the player outside the waypoint's region
    pushes: list[Push] = []
    dist, links = scratch.dist, scratch.parent
    for src, dst, before in reversed(waypoint.pulls):
        box_paths(
            board.cells, box_at, offsets, player, dst, stamps, stack, dist, links, scratch.queue
        )
        b = int(box_at[dst])
        box_at[dst] = -1
        box_at[src] = b
        reach_player(box_at, offsets, before, stamps, stack)
        mark = stamps[n]
        ends = [
            s
            for s in range(4)
            if dist[src * 4 + s] != DIST_INF and stamps[src + offsets[s]] == mark
        ]
        if not ends:
            return None  # cannot happen for a true pull sequence; kept as a guard
        state = src * 4 + min(ends, key=lambda s: int(dist[src * 4 + s]))
        path = path_pushes(dist, links, state, dst, offsets)
        pushes.extend(path)
        player = path[-1][0] if path else player
    return pushes


__all__ = ["Waypoint", "find_waypoint", "finish_pushes", "waypoint_board"]
