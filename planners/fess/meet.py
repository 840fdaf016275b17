"""A backward search whose positions a forward FESS search can finish on (``backward="meet"``).

Before the forward search, a pull search runs from the solved position (one root per player
region) and stores every position it reaches in a *meet table*
(``planners._kernels.fess_meet``): exact positions (boxes' hash, normalized player, every box
square), each with the entry it was pulled from and the pull. Each of them is known to be
solvable: its pulls, reversed, push the boxes home. The forward search then looks every new
position up; on a hit the solution is its path to that position followed by the entry's pulls
reversed (``MeetTable.finish``), verified like every solution.

- *Ranking*: best first, by the distance score (the sum of the boxes' walking distances to the
  nearest square that holds a box at the start; least first), then by player regions (fewest
  first), then by age. The search runs towards the level's start, so the reversed paths are
  ones a forward search can walk into; Festival's greedy pull search ("dragonfly") ranks by
  the matching distance to the start squares to the same end.
- *Pulls kept*: a pulled box must end where some box of the start can be pushed alone
  (``push_reachable``) and on no square that is a simple deadlock for pushes; other positions
  could never be met.
- *Budget*: a share of the search's time (``MEET_SHARE``), at most ``MEET_NODES`` positions,
  and the table's size in MB (``MEET_MB``; ``MeetTable(board, mb)`` refuses a bad size).

The idea is Festival's (its perimeter table, where the two directions meet; see
``../shared/references/festival-architecture.md`` in the project's sources); the code is ours.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass

import numpy as np

from planners._kernels.fess_meet import (
    match_cost,
    meet_add_pulls,
    meet_add_root,
    meet_find,
    new_meet_tables,
)
from planners._kernels.fess_pulls import N_PULL_COLS, PullTables, new_pull_scratch, pull_moves
from planners.base import Push
from planners.fess.basins import push_reachable, walk_distance_from
from planners.fess.waypoint import Waypoint, finish_pushes
from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_INF, FLOOR, SQUARE_DTYPE
from soko_gym.engine.reach import reach_player

MEET_MB = 256.0  # the meet table's size
MEET_SHARE = 1 / 3  # of a search's time, its backward part (Festival's share)
WALK_PART = 0.6  # of the backward part, the walking-distance search's; the matching one the rest
MEET_NODES = 1_000_000  # most positions of one backward search
RANKINGS = ("walk", "match")


def _push_distance(board: Board, source: int) -> np.ndarray:
    """Fewest pushes of a lone box from ``source`` to each square: int32, -1 where it cannot go.

    Player access is relaxed (a push needs only floor behind the box); no dead square is entered.
    """
    cells = board.cells
    offsets = [int(o) for o in board.offsets]
    dist = np.full(board.n_cells, -1, dtype=np.int32)
    dist[source] = 0
    frontier = [source]
    d = 0
    while frontier:
        d += 1
        nxt = []
        for sq in frontier:
            for o in offsets:
                ahead = sq + o
                if dist[ahead] >= 0 or not (cells[ahead] & FLOOR) or not (cells[sq - o] & FLOOR):
                    continue
                if board.dead[ahead]:
                    continue
                dist[ahead] = d
                nxt.append(ahead)
        frontier = nxt
    return dist


def _entry_bytes(n_boxes: int) -> int:
    # hash 8, norm/player/parent/score/conn/depth 4 each, pull 12, boxes 4 each, 2 tt slots 8
    return 8 + 6 * 4 + 12 + 4 * n_boxes + 8


class MeetTable:
    """The exact positions a backward search stored, for a forward search to meet.

    Args:
        board: the level.
        mb: the table's size in MB (a positive number); it holds that many bytes' worth of
            positions, at most ``MEET_NODES``.

    Raises:
        ValueError: ``mb`` is not a positive finite number, or too small for one position.
    """

    def __init__(self, board: Board, mb: float = MEET_MB) -> None:
        if isinstance(mb, bool) or not isinstance(mb, int | float) or not math.isfinite(mb):
            raise ValueError(f"meet table size mb must be a positive number, got {mb!r}")
        if mb <= 0:
            raise ValueError(f"meet table size mb must be a positive number, got {mb!r}")
        nb = board.n_boxes
        cap = min(int(mb * 2**20) // _entry_bytes(nb), MEET_NODES)
        if cap < 1:
            raise ValueError(f"meet table size mb={mb!r} holds no position of this level")
        self.board = board
        self.tables = new_meet_tables(cap, nb)

    @property
    def size(self) -> int:
        """Positions stored."""
        return int(self.tables.count[0])

    @property
    def capacity(self) -> int:
        """Most positions the table holds."""
        return int(self.tables.hash.shape[0])

    @property
    def met(self) -> int:
        """The entry a forward search met, or -1."""
        return int(self.tables.count[1])

    def find(self, box_squares: np.ndarray, player: int) -> int:
        """The entry of the position with boxes on ``box_squares`` and the player on ``player``."""
        b = self.board
        box_at = np.full(b.n_cells, -1, dtype=BOX_AT_DTYPE)
        box_at[box_squares] = np.arange(len(box_squares), dtype=BOX_AT_DTYPE)
        scratch = new_pull_scratch(b.cells)
        _, norm = reach_player(box_at, b.offsets, int(player), scratch.stamps, scratch.stack)
        h = np.bitwise_xor.reduce(b.zobrist[box_squares]) if len(box_squares) else 0
        return int(meet_find(self.tables, np.uint64(h), np.int64(norm), box_at))

    def pulls(self, entry: int) -> list[tuple[int, int, int]]:
        """The pulls from the solved position to ``entry``, first pull first."""
        t = self.tables
        out = []
        e = entry
        while t.parent[e] >= 0:
            out.append((int(t.pull[e, 0]), int(t.pull[e, 1]), int(t.pull[e, 2])))
            e = int(t.parent[e])
        out.reverse()
        return out

    def finish(self, entry: int, player: int) -> list[Push] | None:
        """Pushes from ``entry``'s position, player on ``player``, to the solved position.

        None when the player is not in the entry's region (a forward position that met the
        entry has it there by construction).
        """
        t = self.tables
        wp = Waypoint(
            boxes=np.sort(t.boxes[entry]).astype(SQUARE_DTYPE),
            player=int(t.player[entry]),
            regions=int(t.conn[entry]),
            score=int(t.score[entry]),
            pulls=tuple(self.pulls(entry)),
            nodes=self.size,
            seconds=0.0,
        )
        return finish_pushes(self.board, wp, player)


@dataclass(frozen=True)
class BackwardStats:
    """What one backward search did: positions stored and expanded, seconds, why it stopped."""

    stored: int
    expanded: int
    seconds: float
    stop: str  # "start" (the level's start reached: solved), "time", "nodes", "full", "exhausted"
    ranking: str = "walk"

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (an item of ``result.stats["backward"]``)."""
        return {
            "ranking": self.ranking,
            "stored": self.stored,
            "expanded": self.expanded,
            "seconds": round(self.seconds, 4),
            "stop": self.stop,
        }


def backward_search(
    board: Board,
    table: MeetTable,
    deadline: float | None = None,
    max_nodes: int = MEET_NODES,
    ranking: str = "walk",
) -> BackwardStats:
    """Fill ``table`` with the positions of the backward search (module docstring).

    Stops when it stores the level's start position (the level is solved: ``MeetTable.find``
    gives the entry), at ``deadline``, after ``max_nodes`` stored positions, when the table is
    full, or when every position reachable backward is stored. ``ranking``: "walk" (the sum
    of each box's walking distance to the nearest start square) or "match" (the least total
    push distance of an assignment of the boxes to the start squares, one each).
    """
    if ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {RANKINGS}, got {ranking!r}")
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise ValueError(f"max_nodes must be a positive integer, got {max_nodes!r}")
    t0 = time.perf_counter()
    n, nb = board.n_cells, board.n_boxes
    near = walk_distance_from(board, board.start_boxes)
    near = np.where(near == DIST_INF, 0, near).astype(SQUARE_DTYPE)
    if ranking == "match":
        dist = np.stack([_push_distance(board, int(s)) for s in board.start_boxes.tolist()])
    else:
        dist = np.zeros((0, n), dtype=np.int32)
    work = np.zeros((6, nb + 1), dtype=np.int64)
    start_box = np.zeros(n, dtype=np.uint8)
    start_box[board.start_boxes] = 1
    pull_tables = PullTables(
        board.cells, board.dead, board.offsets, board.floor, near, np.zeros(n, np.uint8), start_box
    )
    scratch = new_pull_scratch(board.cells)
    rows = np.zeros((max(1, 4 * nb * board.floor.shape[0]), N_PULL_COLS), np.int32)
    keep = push_reachable(board).astype(np.uint8)
    box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
    on_board = np.ones(nb, dtype=np.uint8)
    t = table.tables
    ids = np.arange(nb, dtype=BOX_AT_DTYPE)
    goals = board.goals.astype(SQUARE_DTYPE)
    h_goal = np.uint64(np.bitwise_xor.reduce(board.zobrist[goals]) if nb else 0)
    score0 = int(near[goals].sum()) if ranking == "walk" else int(match_cost(dist, goals, work))
    heap: list[tuple[int, int, int]] = []  # (score, regions, entry)
    box_at[goals] = ids
    stamps, stack = scratch.stamps, scratch.stack
    seen_norm: set[int] = set()
    for sq in board.floor.tolist():  # one root per player region of the solved position
        if box_at[sq] >= 0:
            continue
        _, norm = reach_player(box_at, board.offsets, sq, stamps, stack)
        if norm in seen_norm:
            continue
        seen_norm.add(norm)
        e = meet_add_root(t, h_goal, np.int64(norm), box_at, goals, np.int64(sq))
        if e >= 0:
            heapq.heappush(heap, (score0, 0, e))
    box_at[goals] = -1
    h_start = np.uint64(np.bitwise_xor.reduce(board.zobrist[board.start_boxes]) if nb else 0)
    limit = min(max_nodes, table.capacity)
    expanded = 0
    stop = "exhausted"
    if table.find(board.start_boxes, int(board.start_player)) >= 0:  # solved at the start
        heap.clear()
        stop = "start"
    while heap:
        if table.size >= limit:
            stop = "full" if table.size >= table.capacity else "nodes"
            break
        if deadline is not None and expanded & 15 == 0 and time.perf_counter() > deadline:
            stop = "time"
            break
        _, _, e = heapq.heappop(heap)
        box_pos = t.boxes[e]
        box_at[box_pos] = ids
        k = pull_moves(pull_tables, scratch, box_at, box_pos, on_board, int(t.player[e]), rows)
        first = table.size
        added = meet_add_pulls(t, board.zobrist, box_at, e, rows, k, keep, limit, dist, work)
        box_at[box_pos] = -1
        expanded += 1
        if added and bool((t.hash[first : first + added] == h_start).any()):
            if table.find(board.start_boxes, int(board.start_player)) >= 0:
                stop = "start"
                break
        if added:
            scores = t.score[first : first + added].tolist()
            conns = t.conn[first : first + added].tolist()
            for i in range(added):
                heapq.heappush(heap, (scores[i], conns[i], first + i))
    return BackwardStats(table.size, expanded, time.perf_counter() - t0, stop, ranking)


__all__ = [
    "MEET_MB",
    "MEET_NODES",
    "MEET_SHARE",
    "RANKINGS",
    "WALK_PART",
    "BackwardStats",
    "MeetTable",
    "backward_search",
]
