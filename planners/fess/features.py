"""FESS features of a position: the coordinates of the feature space the search moves in.

Terms (Shoham, "Solving Sokoban by Searching in Feature-Space"; section numbers are the paper's):

- *Connectivity* (Section 2): the number of player regions, i.e. 4-connected areas of floor
  squares free of boxes. The player walks freely inside a region and needs pushes to change
  region; 1 means the player can go everywhere. XSokoban level 1 starts with connectivity 4.
- *Room connectivity* (Section 4): the number of broken edges of the room graph
  (``planners.fess.rooms``). Searches start from every free square of a room ``r`` and walk
  through free squares of ``r`` and of passages, never through another room; an edge ``(r, s)``
  is broken when no search from ``r`` steps on a free square of ``s`` (equivalently, with the
  boxes in place there is no direct path between ``r`` and ``s``). The paper leaves open
  whether one cut-off part of ``r`` already breaks the edge; here the edge holds while any part
  of ``r`` still reaches ``s``.
- *Hotspot* (Section 4): a box is a hotspot when turning it into a wall reduces the number of
  targets that some other box can reach. As in the paper, a per-level table answers it for
  pairs of squares: a lone box on ``X`` (the player may stand on any side) reaches some
  targets; put a wall on ``Y`` and count again; ``Y`` is a hotspot square for ``X`` when the
  count drops. The target on ``Y`` itself (if any) is left out of both counts, so a box merely
  occupying a target is no hotspot. The feature is the number of boxes that are a hotspot for
  at least one other box (pairs of boxes only, as in the paper).
- *Mobility* (Section 4 names it, without a formula): the number of pushes the player can make
  from where it stands, leaving out pushes onto simple dead squares; the number of boxes with
  such a push comes with it.
- *Packing plan*, *packed boxes* (Sections 2 and 6): the plan is a sequence of steps, each
  taking a box to a square: a target, or a *parking square* where it waits for a later step to
  move it on. Step ``k`` is given by ``plan_dst[k]`` (the square it fills) and ``plan_src[k]``
  (a square an earlier step filled, when a parked box moves on; -1 for a box from outside the
  plan). After ``k`` steps the plan expects boxes on ``S_k`` = destinations so far minus the
  sources they left; the packed-boxes feature is the largest ``k`` with a box on every square of
  ``S_k``. Without parking this is the number of targets filled in the plan's order.
- *Basin* (Section 6): the squares from which a box can reach a given target with the board in
  its final position; the plan's boxes come from the *sink room*'s basin. Here it is an input,
  ``basin`` uint8[n_cells] 1 on basin squares, built by the packing plan.
- *Out of plan (OOP) boxes* (Section 6): for the plan's current step ``k`` (the packed-boxes
  value), the boxes that are not in the basin and not on a square of ``S_k`` (neither packed
  nor parked).
"""

from __future__ import annotations

import numpy as np

from planners._kernels.fess import count_mobility, count_out_of_plan, count_packed, count_regions
from planners._kernels.fess_hotspots import (
    count_hotspots,
    count_stuck,
    fill_hotspot_table,
    new_hotspot_scratch,
)
from planners._kernels.fess_room_count import count_broken_room_edges
from planners.fess.rooms import Rooms, analyze_rooms
from soko_gym.engine.board import Board
from soko_gym.engine.constants import SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps


def hotspot_table(board: Board) -> np.ndarray:
    """Per-level table of hotspot squares (module docstring), computed once per level.

    Costs one pull search per (wall square, target) pair, so it grows as floor squares squared
    times targets.

    Args:
        board: the level's static arrays.

    Returns:
        uint8[n_floor, n_floor]: ``[x, y]`` is 1 when a box on ``board.floor[y]`` is a hotspot
        for a box on ``board.floor[x]``.
    """
    n_floor = board.floor.shape[0]
    hot = np.zeros((n_floor, n_floor), dtype=np.uint8)
    sc = new_hotspot_scratch(board.cells, board.goals.shape[0], n_floor)
    fill_hotspot_table(board.cells, board.offsets, board.floor, board.goals, sc, hot)
    return hot


class FeatureEvaluator:
    """Computes the features of positions of one level, owning the per-level tables and buffers.

    Positions are given as ``box_at`` (int16[n_cells] box index per square, -1 for none),
    ``box_pos`` (int32[n_boxes] box squares) and the player square, as in ``engine.board.State``.
    Not thread-safe: the scratch buffers are shared between calls.

    Args:
        board: the level's static arrays.
        rooms: the level's rooms; computed when omitted.
        hot: the level's hotspot table (``hotspot_table``); computed on first use when omitted.
    """

    def __init__(self, board: Board, rooms: Rooms | None = None, hot: np.ndarray | None = None):
        self.board = board
        self.rooms = rooms if rooms is not None else analyze_rooms(board)
        self._hot = hot
        n = board.n_cells
        self._label = np.full(n, -1, dtype=SQUARE_DTYPE)
        self._stack = np.zeros(n, dtype=SQUARE_DTYPE)
        self._stamps = new_stamps(board.cells)
        self._mark = np.zeros(n, dtype=SQUARE_DTYPE)
        self._intact = np.zeros((self.rooms.n_rooms, self.rooms.n_rooms), dtype=np.uint8)
        self._hot_per_box = np.zeros(board.n_boxes, dtype=SQUARE_DTYPE)

    @property
    def hot(self) -> np.ndarray:
        """The level's hotspot table, uint8[n_floor, n_floor] (see ``hotspot_table``)."""
        if self._hot is None:
            self._hot = hotspot_table(self.board)
        return self._hot

    def connectivity(self, box_at: np.ndarray) -> int:
        """Number of player regions (module docstring)."""
        b = self.board
        return int(count_regions(b.cells, box_at, b.offsets, b.floor, self._label, self._stack))

    def region_labels(self, box_at: np.ndarray) -> np.ndarray:
        """Region index per square after ``connectivity``: int32[n_cells], -1 on boxes and walls.

        A fresh array; region indices follow the smallest square of each region.
        """
        self.connectivity(box_at)
        return self._label.copy()

    def room_connectivity(self, box_at: np.ndarray) -> int:
        """Number of broken room-graph edges (module docstring)."""
        r = self.rooms
        return int(
            count_broken_room_edges(
                box_at,
                self.board.offsets,
                self.board.floor,
                r.room_id,
                r.passage_id,
                r.edges,
                self._label,
                self._stack,
                self._intact,
            )
        )

    def mobility(self, box_at: np.ndarray, box_pos: np.ndarray, player: int) -> tuple[int, int]:
        """(pushes the player can make, boxes it can push), dead-square pushes left out."""
        b = self.board
        n_pushes, n_boxes = count_mobility(
            b.cells, box_at, box_pos, b.offsets, b.dead, int(player), self._stamps, self._stack
        )
        return int(n_pushes), int(n_boxes)

    def hotspots(self, box_pos: np.ndarray) -> int:
        """Number of hotspot boxes (module docstring); see ``hotspot_counts`` for each box's."""
        return int(count_hotspots(box_pos, self.board.floor_index, self.hot, self._hot_per_box))

    def stuck(self, box_at: np.ndarray, box_pos: np.ndarray) -> int:
        """Boxes off the targets that no single push can move (the plan-free space's axis)."""
        b = self.board
        return int(count_stuck(b.cells, b.dead, b.offsets, box_at, box_pos))

    def hotspot_counts(self, box_pos: np.ndarray) -> np.ndarray:
        """Per box, the number of other boxes it is a hotspot for: a fresh int32[n_boxes]."""
        out = np.zeros(box_pos.shape[0], dtype=SQUARE_DTYPE)
        count_hotspots(box_pos, self.board.floor_index, self.hot, out)
        return out

    @staticmethod
    def packed(box_at: np.ndarray, plan_src: np.ndarray, plan_dst: np.ndarray) -> int:
        """Packing-plan steps realised (module docstring); plans as int32[n_steps] arrays."""
        return int(count_packed(box_at, plan_src, plan_dst))

    def out_of_plan(
        self,
        box_pos: np.ndarray,
        basin: np.ndarray,
        plan_src: np.ndarray,
        plan_dst: np.ndarray,
        n_done: int,
    ) -> int:
        """Out-of-plan boxes at plan step ``n_done`` (module docstring).

        Args:
            box_pos: int32[n_boxes] box squares.
            basin: uint8[n_cells] 1 on squares of the sink basin.
            plan_src: int32[n_steps] square each step takes its box from, -1 from outside.
            plan_dst: int32[n_steps] square each step fills.
            n_done: plan steps realised, usually ``packed(...)``.
        """
        return int(count_out_of_plan(box_pos, basin, plan_src, plan_dst, int(n_done), self._mark))
