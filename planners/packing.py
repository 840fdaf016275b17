"""Packing-order search (YASS, after the search blog posts): depth-first search over macro moves.

A *packing order* is the order in which boxes reach their goals: each action takes one box all
the way to a goal, or *parks* it once on its farthest square (by Manhattan or push distance) to
make room; ``reverse-packing-order`` pulls boxes off the goals to their start squares instead.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np

from planners._kernels import packing as pk
from planners._kernels.table import new_table, rehash, table_put
from planners.base import Outcome, Planner, Push
from planners.limits import SearchLimits
from soko_gym.engine.board import Board
from soko_gym.engine.constants import (
    BOX_AT_DTYPE,
    DIST_DTYPE,
    FLOOR,
    HASH_DTYPE,
    SQUARE_DTYPE,
    STAMP_DTYPE,
)
from soko_gym.engine.reach import new_stamps, reach_player
from soko_gym.engine.step import box_paths
from soko_gym.engine.zobrist import full_hash
from soko_gym.levels import Level

_STATUS_SEED = 0x9AC4  # fixed: the status keys of the transposition key are reproducible
_STACK_ENTRY_BYTES = 36  # a node index on the Python DFS stack (pointer and int object)


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


class _Store:
    """The growable node store and transposition table of one packing-order search."""

    _NODE_ARRAYS = (
        "boxes",
        "status",
        "players",
        "hashes",
        "keys",
        "parents",
        "srcs",
        "dsts",
        "n_pushes",
        "order",
    )

    def __init__(self, n_boxes: int, capacity: int) -> None:
        self.n_boxes = n_boxes
        self.boxes = np.zeros((capacity, n_boxes), dtype=SQUARE_DTYPE)
        self.status = np.zeros((capacity, n_boxes), dtype=np.uint8)
        self.players = np.zeros(capacity, dtype=SQUARE_DTYPE)
        self.hashes = np.zeros(capacity, dtype=HASH_DTYPE)
        self.keys = np.zeros(capacity, dtype=HASH_DTYPE)
        self.parents = np.full(capacity, -1, dtype=SQUARE_DTYPE)
        self.srcs = np.zeros(capacity, dtype=SQUARE_DTYPE)
        self.dsts = np.zeros(capacity, dtype=SQUARE_DTYPE)
        self.n_pushes = np.zeros(capacity, dtype=SQUARE_DTYPE)
        self.order = np.zeros(capacity, dtype=np.int64)
        self.t_hash, self.t_player, self.t_value = new_table(2 * capacity)

    @staticmethod
    def bytes_for(n_boxes: int, nodes: int, table: int) -> int:
        """Memory of stores of these capacities, the DFS stack included."""
        return nodes * (5 * n_boxes + 44 + _STACK_ENTRY_BYTES) + table * 16

    def nbytes(self) -> int:
        """Current memory of the store."""
        return self.bytes_for(self.n_boxes, self.players.shape[0], self.t_player.shape[0])

    def reserve(self, n_nodes: int, budget: int) -> bool:
        """Make room for ``n_nodes`` nodes at table load <= 1/2; False past ``budget`` bytes."""
        nodes, table = self.players.shape[0], self.t_player.shape[0]
        while nodes < n_nodes:
            nodes *= 2
        while table < 2 * n_nodes:
            table *= 2
        if self.bytes_for(self.n_boxes, nodes, table) > budget:
            return False
        if nodes != self.players.shape[0]:
            for name in self._NODE_ARRAYS:
                old = getattr(self, name)
                new = np.zeros((nodes, *old.shape[1:]), dtype=old.dtype)
                new[: old.shape[0]] = old
                setattr(self, name, new)
        if table != self.t_player.shape[0]:
            fresh = new_table(table)
            rehash(self.t_hash, self.t_player, self.t_value, *fresh)
            self.t_hash, self.t_player, self.t_value = fresh
        return True


class _Scratch:
    """Per-search scratch buffers of the kernels (see ``expand_node``)."""

    def __init__(self, board: Board) -> None:
        n = board.n_cells
        self.box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        self.pos = np.zeros(board.n_boxes, dtype=SQUARE_DTYPE)
        self.st = np.zeros(board.n_boxes, dtype=np.uint8)
        self.stamps = new_stamps(board.cells)
        self.stack = np.empty(n, dtype=SQUARE_DTYPE)
        self.seen = np.zeros(n + 1, dtype=STAMP_DTYPE)
        self.trail = np.empty(n, dtype=SQUARE_DTYPE)
        self.dist = np.empty(4 * n, dtype=DIST_DTYPE)
        self.parent = np.empty(4 * n, dtype=SQUARE_DTYPE)
        self.queue = np.empty(4 * n, dtype=SQUARE_DTYPE)
        self.plan = np.empty(4 * n, dtype=np.int8)

    def load(self, board: Board, boxes: np.ndarray) -> np.ndarray:
        """Fill ``box_at`` with ``boxes`` (box i on ``boxes[i]``) and return it."""
        self.box_at[:] = -1
        self.box_at[boxes] = np.arange(boxes.shape[0], dtype=BOX_AT_DTYPE)
        return self.box_at


class _PackingOrderBase(Planner):
    """The depth-first macro search shared by both directions (``mode`` set by subclasses)."""

    mode: ClassVar[int] = pk.FORWARD

    def __init__(self, max_parks: int = 1, initial_nodes: int = 1024) -> None:
        """Configure the search.

        Args:
            max_parks: temporary parking moves allowed per box: 1 as in YASS, 0 to take every
                box straight to a target, more to re-park (a larger, slower macro space).
            initial_nodes: starting capacity of the node store (it doubles as needed).
        """
        if not 0 <= max_parks < pk.DONE:
            raise ValueError(f"max_parks must be in 0..{pk.DONE - 1}, got {max_parks}")
        if initial_nodes < 2:
            raise ValueError(f"initial_nodes must be >= 2, got {initial_nodes}")
        self.max_parks = int(max_parks)
        self.initial_nodes = 1 << (int(initial_nodes) - 1).bit_length()

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Depth-first search over macro moves; see the module docstring."""
        board = level.board
        if board.initial_state().is_solved(board):
            return Outcome("solved", [], stats={"macro_moves": 0})
        n_boxes = board.n_boxes
        budget = limits.memory_bytes
        scratch = _Scratch(board)
        store = _Store(n_boxes, self.initial_nodes)
        park_keys, done_keys = status_keys(board.n_cells)
        if self.mode == pk.FORWARD:
            targets = board.goals
            dead = board.dead
            goal_hash = HASH_DTYPE(0)
            goal_player = -1
        else:
            targets = board.start_boxes
            dead = pull_dead_squares(board)
            goal_hash = HASH_DTYPE(full_hash(board.zobrist, board.start_boxes))
            box_at = scratch.load(board, board.start_boxes)
            goal_player = self._normalized(board, scratch, box_at, board.start_player)
        is_target = np.zeros(board.n_cells, dtype=np.uint8)
        is_target[targets] = 1
        roots = self._roots(board, scratch)
        if not store.reserve(len(roots), budget):
            return self._outcome("memory_limit", 0, 0, 0, len(roots), store)
        for i, (player, norm) in enumerate(roots):
            store.boxes[i] = board.start_boxes if self.mode == pk.FORWARD else board.goals
            store.players[i] = player
            h = HASH_DTYPE(full_hash(board.zobrist, store.boxes[i]))
            store.hashes[i] = store.keys[i] = h
            table_put(store.t_hash, store.t_player, store.t_value, h, norm, i)
        n_nodes = len(roots)
        max_children = 4 * n_boxes * (targets.shape[0] + 2)
        stack = list(range(n_nodes - 1, -1, -1))
        expanded = generated = pruned = 0
        while stack:
            if deadline is not None and time.perf_counter() >= deadline:
                return self._outcome("timeout", expanded, generated, pruned, len(roots), store)
            if limits.max_nodes is not None and expanded >= limits.max_nodes:
                return self._outcome("node_limit", expanded, generated, pruned, len(roots), store)
            if not store.reserve(n_nodes + max_children, budget):
                return self._outcome("memory_limit", expanded, generated, pruned, len(roots), store)
            node = stack.pop()
            first = n_nodes
            n_nodes, goal, n_gen, n_pruned = pk.expand_node(
                self.mode,
                self.max_parks,
                board.cells,
                dead,
                is_target,
                targets,
                board.floor,
                board.width,
                board.offsets,
                board.zobrist,
                park_keys,
                done_keys,
                store.boxes,
                store.status,
                store.players,
                store.hashes,
                store.keys,
                store.parents,
                store.srcs,
                store.dsts,
                store.n_pushes,
                store.order,
                store.t_hash,
                store.t_player,
                store.t_value,
                node,
                n_nodes,
                goal_hash,
                goal_player,
                scratch.box_at,
                scratch.pos,
                scratch.st,
                scratch.stamps,
                scratch.stack,
                scratch.seen,
                scratch.trail,
                scratch.dist,
                scratch.parent,
                scratch.queue,
            )
            n_nodes = int(n_nodes)
            expanded += 1
            generated += int(n_gen)
            pruned += int(n_pruned)
            if goal >= 0:
                path = self._path(store, int(goal))
                pushes = self._pushes(board, store, path, scratch)
                out = self._outcome("solved", expanded, generated, pruned, len(roots), store)
                assert out.stats is not None
                out.pushes = pushes
                out.stats["macro_moves"] = len(path) - 1
                return out
            if n_nodes > first:  # the preferred child on top of the stack
                children = first + np.argsort(store.order[first:n_nodes], kind="stable")
                stack.extend(children[::-1].tolist())
        return self._outcome("exhausted", expanded, generated, pruned, len(roots), store)

    def _roots(self, board: Board, scratch: _Scratch) -> list[tuple[int, int]]:
        """(player square, normalized player) of each root of the search."""
        if self.mode == pk.FORWARD:
            box_at = scratch.load(board, board.start_boxes)
            norm = self._normalized(board, scratch, box_at, board.start_player)
            return [(board.start_player, norm)]
        # reverse: boxes on the goals, the player in each region next to a goal in turn
        box_at = scratch.load(board, board.goals)
        roots: list[tuple[int, int]] = []
        seen: set[int] = set()
        for g in board.goals.tolist():
            for o in board.offsets.tolist():
                sq = g + o
                if not board.cells[sq] & FLOOR or box_at[sq] >= 0:
                    continue
                norm = self._normalized(board, scratch, box_at, sq)
                if norm not in seen:
                    seen.add(norm)
                    roots.append((sq, norm))
        return roots

    @staticmethod
    def _normalized(board: Board, scratch: _Scratch, box_at: np.ndarray, player: int) -> int:
        """The smallest square the player reaches from ``player``."""
        return int(reach_player(box_at, board.offsets, player, scratch.stamps, scratch.stack)[1])

    @staticmethod
    def _path(store: _Store, goal: int) -> list[int]:
        """Node indices from the root to ``goal``."""
        path = [goal]
        while store.parents[path[-1]] >= 0:
            path.append(int(store.parents[path[-1]]))
        return path[::-1]

    def _pushes(
        self, board: Board, store: _Store, path: list[int], scratch: _Scratch
    ) -> list[Push]:
        """Expand the macro moves along ``path`` into pushes from the level's start."""
        offsets = [int(o) for o in board.offsets]
        segments: list[list[Push]] = []
        for child in path[1:]:
            par = int(store.parents[child])
            src, dst = int(store.srcs[child]), int(store.dsts[child])
            box_at = scratch.load(board, store.boxes[par])
            path_kernel = box_paths if self.mode == pk.FORWARD else pk.pull_paths
            path_kernel(
                board.cells,
                box_at,
                board.offsets,
                int(store.players[par]),
                src,
                scratch.stamps,
                scratch.stack,
                scratch.dist,
                scratch.parent,
                scratch.queue,
            )
            side = offsets.index(int(store.players[child]) - dst)
            k = int(pk.trace_plan(scratch.dist, scratch.parent, dst * 4 + side, scratch.plan))
            if k != store.n_pushes[child]:
                raise RuntimeError(f"macro move {src}->{dst} does not replay ({k} moves)")
            dirs = [int(d) for d in scratch.plan[:k]]
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

    @staticmethod
    def _outcome(
        status: str, expanded: int, generated: int, pruned: int, roots: int, store: _Store
    ) -> Outcome:
        stats: dict[str, Any] = {
            "roots": roots,
            "pruned_deadlocks": pruned,
            "peak_memory_mb": round(store.nbytes() / 2**20, 2),
        }
        return Outcome(status, nodes=expanded, generated=generated, stats=stats)


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
