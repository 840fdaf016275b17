"""Board (static level data as flat arrays) and State (box positions, occupancy, player, hash).

A Board is built from plain boolean grids, never from a Level object, so the engine stays free
of the levels package. Squares are flat indices ``row * width + col``. Every square that the
outside of the level reaches, and the level's own border, is a wall to the engine, so a step in
any direction from a floor square stays inside the array and kernels need no bounds checks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from soko_gym.engine import push as push_kernels
from soko_gym.engine.constants import (
    BOX_AT_DTYPE,
    CELL_DTYPE,
    DIRECTION_DELTAS,
    FLOOR,
    GOAL,
    HASH_DTYPE,
    MAX_SIDE,
    NO_BOX,
    SQUARE_DTYPE,
    WALL,
)
from soko_gym.engine.distance import dead_squares, push_distances, side_regions
from soko_gym.engine.zobrist import full_hash, zobrist_table


def outside_mask(walls: np.ndarray) -> np.ndarray:
    """Squares connected to the area beyond the grid through non-wall squares: bool[H, W]."""
    h, w = walls.shape
    outside = np.zeros((h, w), dtype=bool)
    stack = [(r, c) for r in range(h) for c in (0, w - 1)]
    stack += [(r, c) for r in (0, h - 1) for c in range(w)]
    while stack:
        r, c = stack.pop()
        if not (0 <= r < h and 0 <= c < w) or outside[r, c] or walls[r, c]:
            continue
        outside[r, c] = True
        stack.extend(((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)))
    return outside


@dataclass(frozen=True, eq=False)
class Board:
    """Static arrays of one level, shared by every state of it.

    Attributes:
        height, width: grid size; ``n_cells = height * width``.
        cells: uint8[n_cells] WALL / FLOOR / GOAL flags.
        offsets: int32[4] flat index step per direction (up, down, left, right).
        floor: int32[n_floor] floor squares in increasing order (the interior index).
        floor_index: int32[n_cells] position of a square in ``floor``, -1 for walls.
        goals: int32[n_goals] goal squares in increasing order.
        start_boxes: int32[n_boxes] box squares at the start, increasing.
        start_player: player square at the start.
        zobrist: uint64[n_cells] Zobrist key per square.
        push_dist: uint16[n_goals, n_cells, 4] lone-box push distances (see ``distance``).
        goal_dist: uint16[n_goals, n_cells] the same, minimised over player sides.
        nearest_goal_dist: uint16[n_cells] pushes to the nearest goal.
        dead: uint8[n_cells] 1 on simple dead squares.
    """

    height: int
    width: int
    cells: np.ndarray
    offsets: np.ndarray
    floor: np.ndarray
    floor_index: np.ndarray
    goals: np.ndarray
    start_boxes: np.ndarray
    start_player: int
    zobrist: np.ndarray
    push_dist: np.ndarray = field(repr=False)
    goal_dist: np.ndarray = field(repr=False)
    nearest_goal_dist: np.ndarray = field(repr=False)
    dead: np.ndarray = field(repr=False)

    @property
    def n_cells(self) -> int:
        """Number of squares in the grid, walls included."""
        return self.height * self.width

    @property
    def n_boxes(self) -> int:
        """Number of boxes (equal to the number of goals)."""
        return int(self.start_boxes.shape[0])

    def square(self, row: int, col: int) -> int:
        """Flat index of (row, col)."""
        return row * self.width + col

    def row_col(self, square: int) -> tuple[int, int]:
        """(row, col) of a flat index."""
        return divmod(int(square), self.width)

    def initial_state(self) -> State:
        """A fresh State at the level's start."""
        return State.from_squares(self, self.start_boxes, self.start_player)

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def __setstate__(self, state):
        for name, value in state.items():
            object.__setattr__(self, name, value)


def build_board(walls: np.ndarray, goals: np.ndarray, boxes: Iterable[int], player: int) -> Board:
    """Compile a level's grids into a Board.

    Args:
        walls: bool[H, W], True on wall squares.
        goals: bool[H, W], True on goal squares.
        boxes: flat indices of the boxes.
        player: flat index of the player.

    Raises:
        ValueError: when a dimension exceeds the engine's limit or a box or the player is on a
            wall or outside the level (levels validated by ``soko_gym.levels`` never are).
    """
    walls = np.asarray(walls, dtype=bool)
    goals = np.asarray(goals, dtype=bool)
    h, w = walls.shape
    if h > MAX_SIDE or w > MAX_SIDE:
        raise ValueError(f"board is {w}x{h}; the engine accepts at most {MAX_SIDE}x{MAX_SIDE}")
    blocked = walls | outside_mask(walls)
    blocked[0, :] = blocked[-1, :] = True
    blocked[:, 0] = blocked[:, -1] = True
    cells = np.where(blocked, WALL, FLOOR).astype(CELL_DTYPE).ravel()
    goal_flat = goals.ravel() & ~blocked.ravel()
    cells[goal_flat] |= GOAL
    box_squares = np.sort(np.fromiter(boxes, dtype=SQUARE_DTYPE))
    for sq in [*box_squares.tolist(), int(player)]:
        if not 0 <= sq < h * w or not cells[sq] & FLOOR:
            raise ValueError(f"square {sq} (row {sq // w}, col {sq % w}) is not inside the level")
    offsets = np.array([dr * w + dc for dr, dc in DIRECTION_DELTAS], dtype=SQUARE_DTYPE)
    floor = np.flatnonzero(cells & FLOOR).astype(SQUARE_DTYPE)
    floor_index = np.full(h * w, -1, dtype=SQUARE_DTYPE)
    floor_index[floor] = np.arange(floor.shape[0], dtype=SQUARE_DTYPE)
    goal_squares = np.flatnonzero(goal_flat).astype(SQUARE_DTYPE)
    push_dist = push_distances(cells, offsets, goal_squares, side_regions(cells, offsets))
    goal_dist = push_dist.min(axis=2)
    nearest = goal_dist.min(axis=0) if goal_squares.shape[0] else goal_dist.sum(axis=0)
    return Board(
        height=h,
        width=w,
        cells=cells,
        offsets=offsets,
        floor=floor,
        floor_index=floor_index,
        goals=goal_squares,
        start_boxes=box_squares,
        start_player=int(player),
        zobrist=zobrist_table(h * w),
        push_dist=push_dist,
        goal_dist=goal_dist,
        nearest_goal_dist=nearest.astype(np.uint16),
        dead=dead_squares(cells, push_dist),
    )


@dataclass(eq=False)
class State:
    """The dynamic part of a position: mutable arrays plus the player square and box hash.

    Attributes:
        box_pos: int32[n_boxes] square of each box.
        box_at: int16[n_cells] box index on each square, -1 for none.
        player: player square.
        box_hash: uint64 Zobrist hash of the box configuration.
    """

    box_pos: np.ndarray
    box_at: np.ndarray
    player: int
    box_hash: np.uint64

    @classmethod
    def from_squares(cls, board: Board, boxes: Iterable[int], player: int) -> State:
        """Build a state of ``board`` from box squares and a player square."""
        box_pos = np.array(list(boxes), dtype=SQUARE_DTYPE)
        box_at = np.full(board.n_cells, NO_BOX, dtype=BOX_AT_DTYPE)
        box_at[box_pos] = np.arange(box_pos.shape[0], dtype=BOX_AT_DTYPE)
        return cls(box_pos, box_at, int(player), HASH_DTYPE(full_hash(board.zobrist, box_pos)))

    def copy(self) -> State:
        """An independent copy."""
        return State(self.box_pos.copy(), self.box_at.copy(), self.player, self.box_hash)

    def same_as(self, other: State) -> bool:
        """True when both states hold identical arrays, player and hash."""
        return (
            self.player == other.player
            and self.box_hash == other.box_hash
            and np.array_equal(self.box_pos, other.box_pos)
            and np.array_equal(self.box_at, other.box_at)
        )

    def apply_push(self, board: Board, push: int) -> None:
        """Make a legal push (box * 4 + direction) in place; the caller checks legality."""
        player, h = push_kernels.apply_push(
            self.box_pos, self.box_at, board.offsets, board.zobrist, self.box_hash, push
        )
        self.player, self.box_hash = int(player), HASH_DTYPE(h)

    def undo_push(self, board: Board, push: int) -> None:
        """Take back ``apply_push(board, push)`` in place."""
        player, h = push_kernels.undo_push(
            self.box_pos, self.box_at, board.offsets, board.zobrist, self.box_hash, push
        )
        self.player, self.box_hash = int(player), HASH_DTYPE(h)

    def is_solved(self, board: Board) -> bool:
        """True when every box stands on a goal."""
        return bool(np.all(board.cells[self.box_pos] & GOAL))
