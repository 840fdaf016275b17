"""Packing-order search (YASS, after the search blog posts): depth-first search over macro moves.

A *packing order* is the order in which boxes reach their goals: each action takes one box all
the way to a goal, or *parks* it once on its farthest square (by Manhattan or push distance) to
make room; ``reverse-packing-order`` pulls boxes off the goals to their start squares instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from planners._kernels import packing as pk
from planners._kernels.common import EXHAUSTED, GROW_NODES, GROW_TABLE
from planners._kernels.table import new_table, table_put
from planners.base import Outcome, Push
from planners.driver import SlicePlanner, SliceSearch, check_int, power_of_two
from planners.limits import SearchLimits
from soko_gym.engine.board import Board
from soko_gym.engine.constants import (
    BOX_AT_DTYPE,
    FLOOR,
    HASH_DTYPE,
)
from soko_gym.engine.macro import box_paths
from soko_gym.engine.reach import reach_player
from soko_gym.engine.zobrist import full_hash
from soko_gym.levels import Level

_STATUS_SEED = 0x9AC4  # fixed: the status keys of the transposition key are reproducible
_SLICE_NODES = 32  # expansions per kernel call between limit checks (up to ~1 ms each)


def status_keys(n_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Extra Zobrist keys of a parked and of a done box per square: two uint64[n_cells]."""
    rng = np.random.Generator(np.random.PCG64(_STATUS_SEED))
    keys = rng.integers(1, np.iinfo(np.uint64).max, size=(2, n_cells), dtype=HASH_DTYPE)
    return keys[0].copy(), keys[1].copy()


def pull_dead_squares(board: Board) -> np.ndarray:
    """Squares from which no lone box can be pulled to any start square: uint8[n_cells].

    The reverse search's simple deadlock: a box parked there could never be pulled home. The
    player's access is relaxed (a pull only needs two free floor squares in a row).
    """
    cells, offsets = board.cells, [int(o) for o in board.offsets]
    floor = (cells & FLOOR) != 0
    alive = np.zeros(board.n_cells, dtype=bool)
    todo = [int(s) for s in board.start_boxes]
    alive[todo] = True
    while todo:  # walk pulls backwards: q reaches t = q + o by a pull when t + o is floor too
        t = todo.pop()
        for o in offsets:
            q = t - o
            if floor[q] and floor[t + o] and not alive[q]:
                alive[q] = True
                todo.append(q)
    return (floor & ~alive).astype(np.uint8)


@dataclass(frozen=True)
class PackingOptions:
    """Options of ``packing-order`` and ``reverse-packing-order``.

    Attributes:
        max_parks: temporary parking moves allowed per box: 1 as in YASS, 0 to take every
            box straight to a target, more to re-park (a larger, slower macro space); at most
            254.
        initial_nodes: starting capacity of the node store (at least 2; rounded up to a power
            of two; it doubles as needed).
    """

    max_parks: int = 1
    initial_nodes: int = 1024

    def __post_init__(self) -> None:
        check_int("max_parks", self.max_parks, 0, pk.DONE - 1)
        check_int("initial_nodes", self.initial_nodes, 2)


class _PackingSearch(SliceSearch):
    """One packing-order search: its arrays, roots and the replay of the macro moves found."""

    grows = {GROW_NODES: "nodes", GROW_TABLE: "table"}

    def __init__(
        self,
        opts: PackingOptions,
        mode: int,
        board: Board,
        limits: SearchLimits,
        deadline: float | None,
    ) -> None:
        super().__init__(limits, deadline, _SLICE_NODES, pk.N_COUNTERS)
        self.board = board
        self.mode = mode
        self.scratch = pk.new_packing_scratch(board)
        park_keys, done_keys = status_keys(board.n_cells)
        if mode == pk.FORWARD:
            targets, dead = board.goals, board.dead
            goal_hash, goal_player = HASH_DTYPE(0), -1
        else:
            targets, dead = board.start_boxes, pull_dead_squares(board)
            goal_hash = HASH_DTYPE(full_hash(board.zobrist, board.start_boxes))
            goal_player = self._normalized(board.start_boxes, board.start_player)
        is_target = np.zeros(board.n_cells, dtype=np.uint8)
        is_target[targets] = 1
        self.board_arrays = pk.PackingBoard(
            board.cells, dead, is_target, targets, board.floor, board.offsets, board.zobrist,
            park_keys, done_keys,
        )  # fmt: skip
        self.params = pk.PackingParams(mode, opts.max_parks, board.width, goal_hash, goal_player)
        capacity = power_of_two(opts.initial_nodes)
        self.store.put("nodes", pk.new_packing_nodes(board.n_boxes, capacity))
        self.store.put("table", new_table(2 * capacity))
        self.roots = self._roots()

    def start(self) -> bool:
        """Store the roots and stack them; False when the memory budget cannot hold them."""
        n_roots = len(self.roots)
        store = self.store
        while store["nodes"].players.shape[0] < n_roots:
            if not store.grow("nodes"):
                return False
        while store["table"].hashes.shape[0] < 2 * n_roots:
            if not store.grow("table"):
                return False
        if not store.fits():
            return False
        board, nodes = self.board, store["nodes"]
        boxes = board.start_boxes if self.mode == pk.FORWARD else board.goals
        for i, (player, norm) in enumerate(self.roots):
            nodes.boxes[i] = boxes
            nodes.players[i] = player
            nodes.parents[i] = -1
            h = HASH_DTYPE(full_hash(board.zobrist, nodes.boxes[i]))
            nodes.hashes[i] = nodes.keys[i] = h
            table_put(*store["table"], h, norm, i)
            nodes.pending[n_roots - 1 - i] = i  # the first root on top
        self.counters[pk.C_NODES] = self.counters[pk.C_PENDING] = n_roots
        return True

    def step(self, budget: int) -> int:
        st = self.store
        return pk.run_packing(
            self.board_arrays, self.params, st["nodes"], st["table"], self.scratch,
            self.counters, budget,
        )  # fmt: skip

    def finished(self, status: int) -> str | None:
        return "exhausted" if status == EXHAUSTED else super().finished(status)

    def _load(self, boxes: np.ndarray) -> np.ndarray:
        """Fill the scratch ``box_at`` with ``boxes`` (box i on ``boxes[i]``) and return it."""
        box_at = self.scratch.box_at
        box_at[:] = -1
        box_at[boxes] = np.arange(boxes.shape[0], dtype=BOX_AT_DTYPE)
        return box_at

    def _normalized(self, boxes: np.ndarray, player: int) -> int:
        """The smallest square the player reaches from ``player`` with boxes on ``boxes``."""
        s = self.scratch
        box_at = self._load(boxes)
        return int(reach_player(box_at, self.board.offsets, player, s.stamps, s.stack)[1])

    def _roots(self) -> list[tuple[int, int]]:
        """(player square, normalized player) of each root of the search."""
        board = self.board
        if self.mode == pk.FORWARD:
            return [(board.start_player, self._normalized(board.start_boxes, board.start_player))]
        # reverse: boxes on the goals, the player in each region next to a goal in turn
        box_at = self._load(board.goals)
        roots: list[tuple[int, int]] = []
        seen: set[int] = set()
        for g in board.goals.tolist():
            for o in board.offsets.tolist():
                sq = g + o
                if not board.cells[sq] & FLOOR or box_at[sq] >= 0:
                    continue
                norm = self._normalized(board.goals, sq)
                if norm not in seen:
                    seen.add(norm)
                    roots.append((sq, norm))
        return roots

    def path(self) -> list[int]:
        """Node indices from a root to the goal."""
        parents = self.store["nodes"].parents
        path = [int(self.counters[pk.C_GOAL])]
        while parents[path[-1]] >= 0:
            path.append(int(parents[path[-1]]))
        return path[::-1]

    def plan(self) -> list[Push]:
        """Expand the macro moves from a root to the goal into pushes from the level's start."""
        board, nodes, s = self.board, self.store["nodes"], self.scratch
        offsets = [int(o) for o in board.offsets]
        path_kernel = box_paths if self.mode == pk.FORWARD else pk.pull_paths
        segments: list[list[Push]] = []
        for child in self.path()[1:]:
            par = int(nodes.parents[child])
            src, dst = int(nodes.srcs[child]), int(nodes.dsts[child])
            box_at = self._load(nodes.boxes[par])
            path_kernel(
                board.cells, box_at, board.offsets, int(nodes.players[par]), src, s.stamps,
                s.stack, s.dist, s.parent, s.queue,
            )  # fmt: skip
            side = offsets.index(int(nodes.players[child]) - dst)
            k = int(pk.trace_plan(s.dist, s.parent, dst * 4 + side, s.plan))
            if k != nodes.n_pushes[child]:
                raise RuntimeError(f"macro move {src}->{dst} does not replay ({k} moves)")
            dirs = [int(d) for d in s.plan[:k]]
            squares = [src]
            for d in dirs:
                squares.append(squares[-1] + offsets[d])
            if self.mode == pk.FORWARD:
                segments.append(list(zip(squares[:-1], dirs, strict=True)))
            else:  # a pull A -> A + o(d) is undone by pushing the box on A + o(d) the other way
                segments.append([(squares[j + 1], dirs[j] ^ 1) for j in range(k - 1, -1, -1)])
        if self.mode == pk.REVERSE:
            segments.reverse()
        return [push for segment in segments for push in segment]

    def stats(self) -> dict[str, Any]:
        return {
            "roots": len(self.roots),
            "pruned_deadlocks": int(self.counters[pk.C_PRUNED]),
            "peak_memory_mb": round(self.store.used / 2**20, 2),
        }

    def outcome(self, status: str) -> Outcome:
        out = super().outcome(status)
        if status == "solved":
            assert out.stats is not None
            out.stats["macro_moves"] = len(self.path()) - 1
        return out


class _PackingOrderBase(SlicePlanner):
    """The depth-first macro search shared by both directions (``mode`` set by subclasses).

    Options: ``PackingOptions`` (``max_parks``, ``initial_nodes``).
    """

    options_type = PackingOptions
    mode: ClassVar[int] = pk.FORWARD

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Depth-first search over macro moves; see the module docstring."""
        board = level.board
        if board.initial_state().is_solved(board):
            return Outcome("solved", [], stats={"macro_moves": 0})
        run = _PackingSearch(self.options, self.mode, board, limits, deadline)
        if not run.start():
            return run.outcome("memory_limit")
        return run.search()


class PackingOrderPlanner(_PackingOrderBase):
    """Forward packing-order search: push each box to a goal, or park it once first.

    Depth-first over macro moves (target moves before parking moves, fewer pushes first) with
    a transposition table on (status-aware box hash, normalized player); macro moves that leave
    a box on a dead square or frozen off a goal are pruned. Incomplete: "exhausted" when the
    macro moves run out.
    """

    name: ClassVar[str] = "packing-order"
    optimal: ClassVar[bool] = False
    mode: ClassVar[int] = pk.FORWARD


class ReversePackingOrderPlanner(_PackingOrderBase):
    """Reverse packing-order search: pull boxes off the goals to their start squares.

    Starts from every box on a goal with the player in each region next to the goals in turn,
    and stops at the start box set with the player's start region. Parking squares must have a
    pull path home. The pull sequence is reversed into pushes. Incomplete like the forward one.
    """

    name: ClassVar[str] = "reverse-packing-order"
    optimal: ClassVar[bool] = False
    mode: ClassVar[int] = pk.REVERSE
