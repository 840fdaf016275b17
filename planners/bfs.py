"""Breadth-first push search (``bfs``): push-optimal, and it proves a level unsolvable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planners._kernels import bfs as bk
from planners._kernels.common import GROW_NODES, GROW_TABLE, new_push_scratch, search_board
from planners._kernels.table import new_table, table_put
from planners.base import Outcome, Push
from planners.driver import SlicePlanner, SliceSearch, check_bool
from planners.limits import SearchLimits
from soko_gym.engine.board import Board, State
from soko_gym.engine.reach import reach_player
from soko_gym.levels import Level

SLICE_NODES = 8192  # expansions per kernel call between checks of the clock and the node limit
FIRST_NODES = 4096
FIRST_TABLE = 8192


@dataclass(frozen=True)
class BfsOptions:
    """Options of ``bfs``.

    Attributes:
        freeze: also prune pushes that freeze a box off goal (safe; on by default).
    """

    freeze: bool = True

    def __post_init__(self) -> None:
        check_bool("freeze", self.freeze)


class _BfsSearch(SliceSearch):
    """One breadth-first search: its node store, table and root."""

    grows = {GROW_NODES: "nodes", GROW_TABLE: "table"}

    def __init__(
        self,
        opts: BfsOptions,
        board: Board,
        start: State,
        limits: SearchLimits,
        deadline: float | None,
    ) -> None:
        super().__init__(limits, deadline, SLICE_NODES, bk.N_COUNTERS)
        self.board = board
        self.state = start
        self.freeze = opts.freeze
        self.board_arrays = search_board(board)
        self.scratch = new_push_scratch(board)
        self.store.put("nodes", bk.new_bfs_nodes(board.n_boxes, FIRST_NODES))
        self.store.put("table", new_table(FIRST_TABLE))

    def start(self) -> None:
        """Store the root."""
        board, s, nodes, state = self.board, self.scratch, self.store["nodes"], self.state
        nodes.boxes[0] = state.box_pos
        nodes.parent[0] = -1
        nodes.push[0] = -1
        nodes.player[0] = state.player
        _, norm = reach_player(state.box_at, board.offsets, int(state.player), s.stamps, s.stack)
        table_put(*self.store["table"], state.box_hash, int(norm), 0)
        self.counters[bk.C_NODES] = 1
        self.counters[bk.C_TABLE] = 1

    def step(self, budget: int) -> int:
        st = self.store
        return bk.run_bfs(
            self.board_arrays, self.scratch, st["nodes"], st["table"], self.counters, budget,
            self.freeze,
        )  # fmt: skip

    def plan(self) -> list[Push]:
        """The push sequence from the root to the goal node, as (box square, direction)."""
        nodes = self.store["nodes"]
        out: list[Push] = []
        node = int(self.counters[bk.C_GOAL])
        while nodes.parent[node] >= 0:
            up = int(nodes.parent[node])
            code = int(nodes.push[node])
            out.append((int(nodes.boxes[up, code >> 2]), code & 3))
            node = up
        out.reverse()
        return out

    def stats(self) -> dict[str, Any]:
        c = self.counters
        return {
            "pruned_deadlock": int(c[bk.C_PRUNED_DEAD]),
            "duplicates": int(c[bk.C_DUPLICATES]),
            "peak_memory_bytes": self.store.peak,
            "stored_nodes": int(c[bk.C_NODES]),
        }


class BreadthFirst(SlicePlanner):
    """Breadth-first search over pushes with a transposition table.

    Positions are box squares plus the normalized player square; the first goal position
    generated has the fewest pushes. Expanding every reachable position without a goal proves
    the level unsolvable. Pushes onto simple dead squares are never made.

    Options: ``BfsOptions`` (``freeze``).
    """

    name = "bfs"
    optimal = True
    options_type = BfsOptions

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Run the search; see the class docstring."""
        board = level.board
        start = board.initial_state()
        if start.is_solved(board):
            return Outcome("solved", [], 0, 0, {})
        run = _BfsSearch(self.options, board, start, limits, deadline)
        if not run.store.fits():
            return run.outcome("memory_limit")
        run.start()
        return run.search()
