"""FESS advisors: heuristics that each mark at most one promising move of a position (Section 5).

Terms (Shoham, "Solving Sokoban by Searching in Feature-Space", Sections 5 and 7):

- *Advisor*: a domain-specific rule consulted when a position joins the search tree. Each picks
  at most one of the position's moves; picked moves get the advisor weight (0 by default), all
  others the normal weight (1). Advisors never prune: they only reorder.
- *Best move* among candidates: lexicographically by the features of the position it leads
  to: fewer out-of-plan boxes, more packed boxes, lower connectivity, fewer broken room edges,
  fewer hotspots, higher mobility (Section 7's feature ordering).
- The advisors: *packing* (moves that pack a box), *connectivity* (moves that lower
  connectivity), *room connectivity* (fewer broken room edges), *hotspots* (fewer hotspots),
  *explorer* (moves after which the player reaches a square it could not reach before, from
  which a push is possible: opening doors, breaking into rooms), *opener* (find the hotspot
  that blocks the most boxes; push it, or else push a nearby box away from it, never worsening
  connectivity) and *out of plan* (find the out-of-plan box nearest to the basin; push it into
  the basin, or else push a nearby box into the basin to make room, never worsening
  connectivity). "Nearby" means within Manhattan distance 2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from planners._kernels.fess_move_data import (
    M_BOX,
    M_CONN,
    M_DST,
    M_HOT,
    M_MOB,
    M_NEW_PUSHES,
    M_OOP,
    M_PACKED,
    M_ROOMS,
    M_SRC,
)
from soko_gym.engine.board import Board
from soko_gym.engine.constants import FLOOR, GOAL

NEARBY = 2  # Manhattan distance of a "nearby" box (opener and out-of-plan advisors)


@dataclass(frozen=True)
class Features:
    """Feature values of one position (see ``planners.fess.features``)."""

    oop: int
    packed: int
    conn: int
    rooms: int
    hot: int
    mob: int

    @property
    def cell(self) -> tuple[int, int, int, int]:
        """The position's feature-space cell as a tuple that sorts best first."""
        return (self.oop, -self.packed, self.conn, self.rooms)

    @property
    def rank(self) -> tuple[int, ...]:
        """Section 7's feature ordering as a tuple that sorts best first."""
        return (self.oop, -self.packed, self.conn, self.rooms, self.hot, -self.mob)


@dataclass
class AdvisorContext:
    """What the advisors know of the position whose moves they mark.

    Attributes:
        features: the position's features.
        box_pos: int32[n_boxes] box squares.
        hot_counts: int32[n_boxes] per box, how many other boxes it is a hotspot for.
        oop_mask: bool[n_boxes] True for out-of-plan boxes.
        basin: uint8[n_cells] the sink basin.
        basin_dist: int32[n_cells] walking distance to the basin.
        width: board width, for Manhattan distances.
        holes: uint8[n_cells] 1 on target holes (the best advisor's), or None for none.
        rank: int64[n_moves] each move's place in the feature ordering (0 = best), or None to
            sort on demand; the search passes it so the advisors share one sort.
    """

    features: Features
    box_pos: np.ndarray
    hot_counts: np.ndarray
    oop_mask: np.ndarray
    basin: np.ndarray
    basin_dist: np.ndarray
    width: int
    rank: np.ndarray | None = None
    holes: np.ndarray | None = None


def rank_order(moves: np.ndarray) -> np.ndarray:
    """Move indices sorted best first by the feature ordering (module docstring)."""
    return np.lexsort(
        (
            -moves[:, M_MOB],
            moves[:, M_HOT],
            moves[:, M_ROOMS],
            moves[:, M_CONN],
            -moves[:, M_PACKED],
            moves[:, M_OOP],
        )
    )


def best_of(moves: np.ndarray, candidates: np.ndarray, rank: np.ndarray | None = None) -> int:
    """The best move among ``candidates`` (bool mask), or -1 when there is none.

    ``rank`` (each move's place in the feature ordering) saves sorting the candidates.
    """
    idx = np.flatnonzero(candidates)
    if idx.size == 0:
        return -1
    if rank is not None:
        return int(idx[np.argmin(rank[idx])])
    return int(idx[rank_order(moves[idx])[0]])


def packing_advisor(moves: np.ndarray, ctx: AdvisorContext) -> int:
    """The best move that increases the number of packed boxes."""
    return best_of(moves, moves[:, M_PACKED] > ctx.features.packed, ctx.rank)


def connectivity_advisor(moves: np.ndarray, ctx: AdvisorContext) -> int:
    """The best move that lowers connectivity (joins player regions)."""
    return best_of(moves, moves[:, M_CONN] < ctx.features.conn, ctx.rank)


def room_connectivity_advisor(moves: np.ndarray, ctx: AdvisorContext) -> int:
    """The best move that restores a broken room-graph edge."""
    return best_of(moves, moves[:, M_ROOMS] < ctx.features.rooms, ctx.rank)


def hotspots_advisor(moves: np.ndarray, ctx: AdvisorContext) -> int:
    """The best move that lowers the number of hotspots."""
    return best_of(moves, moves[:, M_HOT] < ctx.features.hot, ctx.rank)


def explorer_advisor(moves: np.ndarray, ctx: AdvisorContext) -> int:
    """The best move that gives the player a new square from which a new push is possible."""
    return best_of(moves, moves[:, M_NEW_PUSHES] > 0, ctx.rank)


def _manhattan(a: np.ndarray | int, b: np.ndarray | int, width: int) -> np.ndarray:
    ra, ca = np.divmod(a, width)
    rb, cb = np.divmod(b, width)
    return np.abs(ra - rb) + np.abs(ca - cb)


def opener_advisor(moves: np.ndarray, ctx: AdvisorContext) -> int:
    """Push the hottest hotspot, or a box near it away from it, not worsening connectivity."""
    if ctx.hot_counts.size == 0 or int(ctx.hot_counts.max()) == 0:
        return -1
    hottest = int(np.argmax(ctx.hot_counts))
    keep = moves[:, M_CONN] <= ctx.features.conn
    pick = best_of(moves, keep & (moves[:, M_BOX] == hottest), ctx.rank)
    if pick >= 0:
        return pick
    sq = int(ctx.box_pos[hottest])
    w = ctx.width
    near = _manhattan(moves[:, M_SRC], sq, w) <= NEARBY
    away = _manhattan(moves[:, M_DST], sq, w) > _manhattan(moves[:, M_SRC], sq, w)
    return best_of(moves, keep & near & away & (moves[:, M_BOX] != hottest), ctx.rank)


def out_of_plan_advisor(moves: np.ndarray, ctx: AdvisorContext) -> int:
    """Push the out-of-plan box nearest the basin into it, or a nearby box in to make room."""
    oop = np.flatnonzero(ctx.oop_mask)
    if oop.size == 0:
        return -1
    target = int(oop[np.argmin(ctx.basin_dist[ctx.box_pos[oop]])])
    keep = (moves[:, M_CONN] <= ctx.features.conn) & (ctx.basin[moves[:, M_DST]] != 0)
    pick = best_of(moves, keep & (moves[:, M_BOX] == target), ctx.rank)
    if pick >= 0:
        return pick
    sq = int(ctx.box_pos[target])
    near = _manhattan(moves[:, M_SRC], sq, ctx.width) <= NEARBY
    return best_of(moves, keep & near & (moves[:, M_BOX] != target), ctx.rank)


def target_holes(board: Board) -> np.ndarray:
    """uint8[n_cells]: 1 on the targets a box can fill first without blocking another.

    A target walled in on three sides is a hole; once filled, its box is a wall for the
    targets next to it, so the rule is applied again until nothing changes (a dead end of
    targets is a run of holes, filled from its end). The ``best`` advisor pushes into them.
    """
    walls = (board.cells & FLOOR) == 0
    goal = (board.cells & GOAL) != 0
    holes = np.zeros(board.n_cells, dtype=np.uint8)
    offsets = [int(o) for o in board.offsets]
    changed = True
    while changed:
        changed = False
        for sq in np.flatnonzero(goal & ~walls).tolist():
            if sum(bool(walls[sq + o]) for o in offsets) == 3:
                walls[sq] = True
                holes[sq] = 1
                changed = True
    return holes


def best_advisor(moves: np.ndarray, ctx: AdvisorContext) -> int:
    """A push into a target hole, else the best move by the feature order (whatever it does).

    The plan-free space's one advisor: alone, it makes the search follow one move of each
    position first and fall back on the others by weight, as Festival's plan-free forward
    search does. Target holes: ``target_holes``.
    """
    if ctx.holes is not None:
        pick = best_of(moves, ctx.holes[moves[:, M_DST]] != 0, ctx.rank)
        if pick >= 0:
            return pick
    return best_of(moves, np.ones(moves.shape[0], dtype=bool), ctx.rank)


Advisor = Callable[[np.ndarray, AdvisorContext], int]

ADVISORS: dict[str, Advisor] = {
    "packing": packing_advisor,
    "connectivity": connectivity_advisor,
    "room_connectivity": room_connectivity_advisor,
    "hotspots": hotspots_advisor,
    "explorer": explorer_advisor,
    "opener": opener_advisor,
    "out_of_plan": out_of_plan_advisor,
    "best": best_advisor,
}
# the paper's seven (Section 5): the default set
PAPER_ADVISORS = tuple(name for name in ADVISORS if name != "best")
