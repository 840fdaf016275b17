"""The packing plan's backward search: a FESS search over pull positions (Section 6).

From the solved position (one root per player region) boxes are pulled, by the macro pull
moves of ``planners._kernels.fess_pulls``, until the board is empty or the budget is spent;
``planners.fess.packing_plan`` turns its best position into the plan (its module docstring
gives the rules, the advisor and the feature space).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Iterator

import numpy as np

from planners._kernels.fess import count_regions
from planners._kernels.fess_pulls import (
    N_PULL_COLS,
    P_BOX,
    P_CONN,
    P_DST,
    P_NORM,
    P_ON_BOARD,
    P_ON_TARGET,
    P_PLAYER,
    P_PUSHABLE,
    P_SCORE,
    P_SRC,
    PullTables,
    new_pull_scratch,
    pull_moves,
)
from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, GOAL, SQUARE_DTYPE
from soko_gym.engine.reach import reach_player

ADVISOR_WEIGHT = 0
OTHER_WEIGHT = 1


class PullNode:
    """A position of the backward search: boxes, player, the pull that made it, its moves."""

    __slots__ = (
        "box_pos",
        "on_board",
        "player",
        "parent",
        "move",
        "weight",
        "cell",
        "moves",
        "wts",
        "order",
        "next",
        "key",
        "held",
    )

    def __init__(self, box_pos, on_board, player, parent, move, weight, key):
        self.box_pos = box_pos
        self.on_board = on_board
        self.player = player
        self.parent = parent
        self.move = move  # (box, src, dst) of the pull that made it, dst -1: into the sink
        self.weight = weight
        self.key = key  # (on board, on target, -score): smaller is better
        self.cell = key[:2]
        self.moves = None  # int32[k, N_PULL_COLS] its pull moves
        self.wts = None  # int64[k] their weights
        self.order = None  # move indices, best first
        self.next = 0
        self.held = 0  # boxes on the board off the squares boxes start on


class PullSearch:
    """The backward FESS search over pull positions (module docstring)."""

    def __init__(
        self,
        board: Board,
        near: np.ndarray,
        sink: np.ndarray,
        start_box: np.ndarray,
        reachable: np.ndarray,
    ):
        self.board = board
        self.near = near
        self.tables = PullTables(
            board.cells, board.dead, board.offsets, board.floor, near, sink, start_box
        )
        n = board.n_cells
        nb = board.n_boxes
        self.box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        self.scratch = new_pull_scratch(board.cells)
        self.out = np.zeros((max(1, 4 * nb * board.floor.shape[0]), N_PULL_COLS), np.int32)
        self.reachable = reachable  # push_reachable(board)
        self.n_nodes = 0
        self.limit = 0  # the node budget and deadline of the current ``run``
        self.deadline: float | None = None
        self._steps: Iterator[PullNode] | None = None

    def _load(self, node: PullNode) -> None:
        self.box_at[:] = -1
        for b in np.flatnonzero(node.on_board).tolist():
            self.box_at[node.box_pos[b]] = b

    def _conn(self) -> int:
        b = self.board
        sc = self.scratch
        return int(count_regions(b.cells, self.box_at, b.offsets, b.floor, sc.label, sc.stack))

    def _expand_moves(self, node: PullNode) -> None:
        b = self.board
        self._load(node)
        conn = self._conn()
        k = pull_moves(
            self.tables, self.scratch, self.box_at, node.box_pos, node.on_board,
            int(node.player), self.out,
        )  # fmt: skip
        moves = self.out[:k]
        # pulls into the sink leave the board; others must end where a push can bring a box
        moves = moves[(moves[:, P_DST] < 0) | self.reachable[np.maximum(moves[:, P_DST], 0)]]
        k = moves.shape[0]
        weights = np.full(k, OTHER_WEIGHT, dtype=np.int64)
        if k:
            removal = moves[:, P_DST] < 0
            weights[removal] = ADVISOR_WEIGHT
            ok = (
                ~removal
                & ((b.cells[moves[:, P_SRC]] & GOAL) != 0)
                & (moves[:, P_CONN] <= conn)
                & (moves[:, P_PUSHABLE] == 1)
            )
            if ok.any():
                cand = np.flatnonzero(ok)
                weights[cand[np.argmax(moves[cand, P_SCORE])]] = ADVISOR_WEIGHT
        node.moves = moves
        node.wts = weights
        node.order = np.lexsort(
            (-moves[:, P_SCORE], moves[:, P_ON_TARGET], moves[:, P_ON_BOARD], weights)
        )

    def run(self, max_nodes: int, deadline: float | None) -> PullNode:
        """Search until ``max_nodes`` positions in all or ``deadline``; the best position.

        A later call with a larger ``max_nodes`` goes on where this one stopped (the same
        positions as one call with the larger budget), so a deeper search repeats nothing.
        """
        self.limit, self.deadline = max_nodes, deadline
        if self._steps is None:
            self._steps = self._search()
        return next(self._steps)

    def _search(self) -> Iterator[PullNode]:
        """The search; yields its best position at each stop, resumed by ``run``.

        It stops at ``limit`` positions, at ``deadline``, on emptying the board and when no
        move is left.
        """
        b = self.board
        n = b.n_cells
        goals = b.goals
        nb = b.n_boxes
        # roots: the solved position with the player in each free region
        box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        box_at[goals] = np.arange(nb)
        label = np.full(n, -1, dtype=SQUARE_DTYPE)
        count_regions(b.cells, box_at, b.offsets, b.floor, label, self.scratch.stack)
        roots = []
        seen_regions = set()
        for sq in b.floor.tolist():
            r = int(label[sq])
            if r >= 0 and r not in seen_regions:
                seen_regions.add(r)
                roots.append(sq)
        box_pos = goals.astype(SQUARE_DTYPE).copy()
        on_board = np.ones(nb, dtype=np.uint8)
        score = int(self.near[goals].sum())
        root_key = (nb, nb, -score)
        table: set[tuple] = set()
        heaps: dict[tuple, list] = {}
        active: list[tuple] = []
        best: PullNode | None = None
        tick = 0
        # with a sink, a box left on a square a box starts on is parked by the start itself;
        # without one, every box on the board is held
        parked = self.tables.start_box if self.tables.sink.any() else np.zeros(n, np.uint8)

        def add(node: PullNode) -> None:
            nonlocal best, tick
            self.n_nodes += 1
            node.held = int((node.on_board & (parked[node.box_pos] == 0)).sum())
            if best is None or (node.held, node.key) < (best.held, best.key):
                best = node
            if node.key[0] == 0:
                return
            self._expand_moves(node)
            if node.moves.shape[0] == 0:
                return
            w = node.wts
            first = node.order[0]
            cell = node.cell
            if cell not in heaps:
                heaps[cell] = []
                active.append(cell)
            tick += 1
            heapq.heappush(heaps[cell], (node.weight + int(w[first]), tick, node))

        for player in roots:
            self.box_at[:] = box_at
            sc = self.scratch
            _, norm = reach_player(self.box_at, b.offsets, player, sc.stamps, sc.stack)
            table.add((box_pos.tobytes(), on_board.tobytes(), int(norm)))
            add(PullNode(box_pos, on_board, player, None, None, 0, root_key))
        i = 0
        while True:
            assert best is not None
            late = self.deadline is not None and time.perf_counter() > self.deadline
            if not active or best.key[0] == 0 or self.n_nodes >= self.limit or late:
                yield best
                continue
            cell = active[i % len(active)]
            heap = heaps[cell]
            if not heap:
                active.remove(cell)
                del heaps[cell]
                continue
            i += 1
            _, _, node = heapq.heappop(heap)
            j = node.order[node.next]
            w = int(node.wts[j])
            node.next += 1
            if node.next < node.order.shape[0]:
                nxt = node.order[node.next]
                tick += 1
                heapq.heappush(heap, (node.weight + int(node.wts[nxt]), tick, node))
            row = node.moves[j]
            child_pos = node.box_pos.copy()
            child_on = node.on_board.copy()
            bx = int(row[P_BOX])
            if row[P_DST] < 0:
                child_on[bx] = 0
                child_pos[bx] = 0
            else:
                child_pos[bx] = row[P_DST]
            key = (child_pos.tobytes(), child_on.tobytes(), int(row[P_NORM]))
            if key in table:
                continue
            table.add(key)
            ckey = (int(row[P_ON_BOARD]), int(row[P_ON_TARGET]), -int(row[P_SCORE]))
            child = PullNode(
                child_pos, child_on, int(row[P_PLAYER]), node,
                (bx, int(row[P_SRC]), int(row[P_DST])), node.weight + w, ckey,
            )  # fmt: skip
            if child.cell > node.cell:  # worse: stays in its best ancestor's cell
                child.cell = node.cell
            add(child)
