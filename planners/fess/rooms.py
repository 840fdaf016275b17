"""Rooms, passages and the room graph of a level (FESS paper, Section 4), computed once per level.

Terms (Shoham, "Solving Sokoban by Searching in Feature-Space", Section 4):

- *Room*: "a connected area of 2x3 squares". Every 2x3 or 3x2 rectangle made only of floor
  squares is a room block; two blocks that overlap in at least two squares (a shared side)
  belong to the same room, so a room is a union of chains of such blocks. Blocks that share
  only a corner square stay separate rooms, and a square covered by blocks of two rooms belongs
  to neither (the paper's "square connecting room 1 and room 4 ... we do not assign the square
  to any of them"). With this rule XSokoban 13 has the paper's eight rooms and its room graph
  (Figure 10's adjacency matrix, up to numbering); the open spaces between its targets are no
  rooms.
- *Passage*: a 4-connected area of floor squares in no room: tunnels, corridors, doorways and
  open spaces too small to be rooms.
- *Room graph*: rooms are vertices; rooms ``r`` and ``s`` share an edge when there is a direct
  path between them that goes through no third room, i.e. when a square of ``r`` is next to a
  square of ``s``, or one passage touches both. The edge's *connecting squares* are the squares
  of the passages that touch both rooms (none for rooms that touch directly). The graph assumes
  that there are no boxes on the board.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from soko_gym.engine.board import Board
from soko_gym.engine.constants import FLOOR, SQUARE_DTYPE

NO_ROOM = -1
_BLOCK_SHAPES = ((2, 3), (3, 2))


@dataclass(frozen=True, eq=False)
class Rooms:
    """Room partition and room graph of one level.

    Attributes:
        room_id: int32[n_cells] room of each square, -1 (``NO_ROOM``) for walls and passages.
        n_rooms: number of rooms; room ids run from 0 in order of their smallest square.
        passage_id: int32[n_cells] passage of each floor square in no room, -1 elsewhere.
        n_passages: number of passages.
        edges: int32[n_edges, 2] room pairs ``(r, s)`` with ``r < s``, sorted.
        edge_start: int32[n_edges + 1] edge ``e`` owns ``edge_squares[edge_start[e]:
            edge_start[e + 1]]``.
        edge_squares: int32[...] connecting squares of each edge, increasing within an edge.
        adjacency: uint8[n_rooms, n_rooms] 1 where the rooms share an edge (symmetric).
    """

    room_id: np.ndarray
    n_rooms: int
    passage_id: np.ndarray
    n_passages: int
    edges: np.ndarray
    edge_start: np.ndarray = field(repr=False)
    edge_squares: np.ndarray = field(repr=False)
    adjacency: np.ndarray = field(repr=False)

    @property
    def n_edges(self) -> int:
        """Number of edges of the room graph."""
        return int(self.edges.shape[0])

    def connecting_squares(self, edge: int) -> np.ndarray:
        """Squares of the passages that join the two rooms of ``edge`` (int32, increasing)."""
        return self.edge_squares[self.edge_start[edge] : self.edge_start[edge + 1]]

    def room_squares(self, room: int) -> np.ndarray:
        """Squares of ``room`` (int32, increasing)."""
        return np.flatnonzero(self.room_id == room).astype(SQUARE_DTYPE)


def _find(parent: np.ndarray, a: int) -> int:
    root = a
    while parent[root] != root:
        root = parent[root]
    while parent[a] != root:
        parent[a], a = root, parent[a]
    return root


def _room_labels(free: np.ndarray) -> np.ndarray:
    """Room id per square (flat, -1 outside rooms) from a bool[H, W] floor grid."""
    h, w = free.shape
    blocks: list[tuple[int, int, int, int]] = []  # (row, col, height, width)
    at: dict[tuple[int, int, int], int] = {}
    for shape, (bh, bw) in enumerate(_BLOCK_SHAPES):
        if h < bh or w < bw:
            continue
        full = np.ones((h - bh + 1, w - bw + 1), dtype=bool)
        for dr in range(bh):
            for dc in range(bw):
                full &= free[dr : dr + h - bh + 1, dc : dc + w - bw + 1]
        for r, c in zip(*np.nonzero(full), strict=True):
            at[(shape, int(r), int(c))] = len(blocks)
            blocks.append((int(r), int(c), bh, bw))
    parent = np.arange(len(blocks))
    for i, (r, c, bh, bw) in enumerate(blocks):
        # only blocks whose corner lies within 2 rows and columns can share two squares
        for shape, (oh, ow) in enumerate(_BLOCK_SHAPES):
            for dr in range(-2, 3):
                for dc in range(-2, 3):
                    j = at.get((shape, r + dr, c + dc))
                    if j is None or j <= i:
                        continue
                    rows = min(r + bh, r + dr + oh) - max(r, r + dr)
                    cols = min(c + bw, c + dc + ow) - max(c, c + dc)
                    if rows > 0 and cols > 0 and rows * cols >= 2:
                        a, b = _find(parent, i), _find(parent, j)
                        if a != b:
                            parent[b] = a
    owner = np.full(h * w, -1, dtype=np.int64)  # root block of the square's room, -2 shared
    for i, (r, c, bh, bw) in enumerate(blocks):
        root = _find(parent, i)
        for dr in range(bh):
            for dc in range(bw):
                sq = (r + dr) * w + c + dc
                if owner[sq] == -1:
                    owner[sq] = root
                elif owner[sq] != root:
                    owner[sq] = -2
    labels = np.full(h * w, NO_ROOM, dtype=SQUARE_DTYPE)
    roots: dict[int, int] = {}
    for sq in np.flatnonzero(owner >= 0).tolist():
        labels[sq] = roots.setdefault(int(owner[sq]), len(roots))
    return labels


def _passage_labels(is_floor: np.ndarray, room_id: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Passage id per square: 4-connected floor squares in no room, -1 elsewhere."""
    labels = np.full(room_id.shape[0], -1, dtype=SQUARE_DTYPE)
    n = 0
    for start in np.flatnonzero(is_floor & (room_id == NO_ROOM)).tolist():
        if labels[start] >= 0:
            continue
        labels[start] = n
        stack = [start]
        while stack:
            sq = stack.pop()
            for off in offsets.tolist():
                nb = sq + off
                if is_floor[nb] and room_id[nb] == NO_ROOM and labels[nb] < 0:
                    labels[nb] = n
                    stack.append(nb)
        n += 1
    return labels


def analyze_rooms(board: Board) -> Rooms:
    """Partition ``board`` into rooms and passages and build the room graph (module docstring).

    Args:
        board: the level's static arrays.

    Returns:
        The level's ``Rooms``.
    """
    is_floor = (board.cells & FLOOR) != 0
    room_id = _room_labels(is_floor.reshape(board.height, board.width))
    n_rooms = int(room_id.max()) + 1 if room_id.size and room_id.max() >= 0 else 0
    passage_id = _passage_labels(is_floor, room_id, board.offsets)
    n_passages = int(passage_id.max()) + 1 if passage_id.size and passage_id.max() >= 0 else 0
    offsets = board.offsets.tolist()
    pairs: dict[tuple[int, int], set[int]] = {}
    touched: list[set[int]] = [set() for _ in range(n_passages)]
    for sq in np.flatnonzero(room_id >= 0).tolist():
        r = int(room_id[sq])
        for off in offsets:
            nb = sq + off
            s = int(room_id[nb])
            if s >= 0 and s != r:
                pairs.setdefault((min(r, s), max(r, s)), set())
            elif passage_id[nb] >= 0:
                touched[int(passage_id[nb])].add(r)
    passage_squares = [np.flatnonzero(passage_id == p).tolist() for p in range(n_passages)]
    for p, rooms in enumerate(touched):
        ordered = sorted(rooms)
        for i, r in enumerate(ordered):
            for s in ordered[i + 1 :]:
                pairs.setdefault((r, s), set()).update(passage_squares[p])
    keys = sorted(pairs)
    edges = np.array(keys, dtype=SQUARE_DTYPE).reshape(len(keys), 2)
    lists = [sorted(pairs[k]) for k in keys]
    edge_start = np.zeros(len(keys) + 1, dtype=SQUARE_DTYPE)
    edge_start[1:] = np.cumsum([len(squares) for squares in lists], dtype=np.int64)
    flat = [sq for squares in lists for sq in squares]
    adjacency = np.zeros((n_rooms, n_rooms), dtype=np.uint8)
    for r, s in keys:
        adjacency[r, s] = adjacency[s, r] = 1
    return Rooms(
        room_id=room_id,
        n_rooms=n_rooms,
        passage_id=passage_id,
        n_passages=n_passages,
        edges=edges,
        edge_start=edge_start,
        edge_squares=np.array(flat, dtype=SQUARE_DTYPE),
        adjacency=adjacency,
    )
