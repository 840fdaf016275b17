"""Breadth-first push search (``bfs``): push-optimal, and it proves a level unsolvable.

Also the helpers the uninformed planners share (scratch buffers, a memory budget, option checks).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from planners._kernels import uninformed as k
from planners._kernels.table import new_table, rehash, table_put
from planners.base import Outcome, Planner, Push
from planners.limits import SearchLimits
from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, GOAL, SQUARE_DTYPE, STAMP_DTYPE
from soko_gym.engine.reach import new_stamps, reach_player
from soko_gym.levels import Level

CHUNK = 8192  # expansions per kernel call between checks of the clock and the node limit
FIRST_NODES = 4096
FIRST_TABLE = 8192


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is a bool, else ValueError naming the option."""
    if not isinstance(value, bool):
        raise ValueError(f"option {name} must be True or False, got {value!r}")
    return value


def check_depth(name: str, value: Any, allow_none: bool) -> int | None:
    """``value`` if it is an int >= 0 (or None when allowed), else ValueError naming the option."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        allowed = "an int >= 0 or None" if allow_none else "an int >= 0"
        raise ValueError(f"option {name} must be {allowed}, got {value!r}")
    return value


class Scratch:
    """Per-search scratch buffers of one board, as the uninformed kernels take them."""

    def __init__(self, board: Board) -> None:
        n = board.n_cells
        self.box_pos = np.empty(board.n_boxes, dtype=SQUARE_DTYPE)
        self.box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        self.moves = np.empty(4 * board.n_boxes, dtype=SQUARE_DTYPE)
        self.stamps = new_stamps(board.cells)
        self.stack = np.empty(n, dtype=SQUARE_DTYPE)
        self.seen = np.zeros(n + 1, dtype=STAMP_DTYPE)
        self.trail = np.empty(n, dtype=SQUARE_DTYPE)

    def normalized_player(self, box_at: np.ndarray, offsets: np.ndarray, player: int) -> int:
        """The smallest square the player reaches from ``player`` with boxes ``box_at``."""
        return int(reach_player(box_at, offsets, int(player), self.stamps, self.stack)[1])


class MemoryBudget:
    """Bytes held by a planner's growable arrays, against ``SearchLimits.memory_bytes``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.peak = 0

    def fits(self, old_bytes: int, new_bytes: int) -> bool:
        """Whether replacing arrays of ``old_bytes`` by ``new_bytes`` stays within the limit."""
        return self.used - old_bytes + new_bytes <= self.limit

    def swap(self, old_bytes: int, new_bytes: int) -> None:
        """Record the replacement (the caller checked ``fits``)."""
        self.used += new_bytes - old_bytes
        self.peak = max(self.peak, self.used)


def grown(array: np.ndarray, length: int) -> np.ndarray:
    """A copy of ``array`` with ``length`` rows (the rows beyond the old ones uninitialised)."""
    out = np.empty((length, *array.shape[1:]), dtype=array.dtype)
    out[: array.shape[0]] = array
    return out


class Table:
    """A growable transposition table (``_kernels.table``) under a memory budget."""

    def __init__(self, capacity: int) -> None:
        self.arrays = new_table(capacity)

    @property
    def nbytes(self) -> int:
        """Bytes held by the table."""
        return sum(a.nbytes for a in self.arrays)

    def grow(self, budget: MemoryBudget) -> bool:
        """Double the capacity; False (and no change) when that would pass the budget."""
        bigger = 2 * self.arrays[0].shape[0]
        new_bytes = self.nbytes * 2
        if not budget.fits(self.nbytes, new_bytes):
            return False
        new = new_table(bigger)
        rehash(*self.arrays, *new)
        budget.swap(self.nbytes, new_bytes)
        self.arrays = new
        return True

    def clear(self) -> None:
        """Remove every entry, keeping the capacity."""
        self.arrays[1].fill(-1)


def stats_of(counters: np.ndarray, budget: MemoryBudget, **extra: Any) -> dict[str, Any]:
    """The statistics every uninformed planner reports."""
    return {
        "pruned_deadlock": int(counters[k.C_PRUNED_DEAD]),
        "duplicates": int(counters[k.C_DUPLICATES]),
        "peak_memory_bytes": budget.peak,
        **extra,
    }


def is_solved_start(board: Board) -> bool:
    """Whether every box starts on a goal."""
    return bool(np.all(board.cells[board.start_boxes] & GOAL))


class BreadthFirst(Planner):
    """Breadth-first search over pushes with a transposition table.

    Positions are box squares plus the normalized player square; the first goal position
    generated has the fewest pushes. Expanding every reachable position without a goal proves
    the level unsolvable. Pushes onto simple dead squares are never made.

    Args:
        freeze: also prune pushes that freeze a box off goal (safe; on by default).
    """

    name = "bfs"
    optimal = True

    def __init__(self, freeze: bool = True) -> None:
        self.freeze = check_bool("freeze", freeze)

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Run the search; see the class docstring."""
        board = level.board
        if is_solved_start(board):
            return Outcome("solved", [], 0, 0, {})
        budget = MemoryBudget(limits.memory_bytes)
        n_boxes = board.n_boxes
        store = [
            np.empty((FIRST_NODES, n_boxes), dtype=np.int16),
            np.empty(FIRST_NODES, dtype=np.int32),
            np.empty(FIRST_NODES, dtype=np.int32),
            np.empty(FIRST_NODES, dtype=np.int32),
        ]
        table = Table(FIRST_TABLE)
        counters = np.zeros(k.N_COUNTERS, dtype=np.int64)
        if not budget.fits(0, sum(a.nbytes for a in store) + table.nbytes):
            return Outcome("memory_limit", stats=stats_of(counters, budget))
        budget.swap(0, sum(a.nbytes for a in store) + table.nbytes)
        scratch = Scratch(board)
        state = board.initial_state()
        boxes, parent, push, player = store
        boxes[0] = state.box_pos
        parent[0] = -1
        push[0] = -1
        player[0] = state.player
        norm = scratch.normalized_player(state.box_at, board.offsets, state.player)
        table_put(*table.arrays, state.box_hash, norm, 0)
        counters[k.C_NODES] = 1
        counters[k.C_TABLE] = 1
        max_nodes = limits.max_nodes
        while True:
            if deadline is not None and time.perf_counter() >= deadline:
                status = "timeout"
                break
            done = int(counters[k.C_EXPANDED])
            if max_nodes is not None and done >= max_nodes:
                status = "node_limit"
                break
            stop_at = done + CHUNK if max_nodes is None else min(done + CHUNK, max_nodes)
            code = k.bfs_advance(
                board.cells,
                board.dead,
                board.offsets,
                board.zobrist,
                *store,
                *table.arrays,
                scratch.box_pos,
                scratch.box_at,
                scratch.moves,
                scratch.stamps,
                scratch.stack,
                scratch.seen,
                scratch.trail,
                counters,
                stop_at,
                self.freeze,
            )
            if code == k.FOUND:
                status = "solved"
                break
            if code == k.DONE:
                status = "unsolvable"
                break
            if code == k.GROW_TABLE and not table.grow(budget):
                status = "memory_limit"
                break
            if code == k.GROW_NODES:
                old = sum(a.nbytes for a in store)
                if not budget.fits(old, 2 * old):
                    status = "memory_limit"
                    break
                store = [grown(a, 2 * a.shape[0]) for a in store]
                budget.swap(old, 2 * old)
        stats = stats_of(counters, budget, stored_nodes=int(counters[k.C_NODES]))
        nodes, generated = int(counters[k.C_EXPANDED]), int(counters[k.C_GENERATED])
        if status != "solved":
            return Outcome(status, None, nodes, generated, stats)
        return Outcome(
            status, self._pushes(board, store, int(counters[k.C_GOAL])), nodes, generated, stats
        )

    @staticmethod
    def _pushes(board: Board, store: list[np.ndarray], goal: int) -> list[Push]:
        """The push sequence from the root to node ``goal``, as (box square, direction)."""
        boxes, parent, push, _ = store
        out: list[Push] = []
        node = goal
        while parent[node] >= 0:
            up = int(parent[node])
            code = int(push[node])
            out.append((int(boxes[up, code >> 2]), code & 3))
            node = up
        out.reverse()
        return out
