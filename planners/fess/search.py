"""FESS, feature-space search (Shoham, Sections 1, 3 and 7), registered as planner ``fess``.

Terms:

- *Search tree*: one node per position found, with its feature values, its weight and the list
  of its macro moves not yet expanded, each with the features of the position it leads to. A
  transposition table (box squares and normalized player) keeps positions unique.
- *Deadlock marking*: a node with no valid moves is dead; a node whose moves are all expanded
  and whose children are all dead is dead, and so on up to the root. A dead root means every
  reachable position was searched: the level is unsolvable.
- *Feature space*: the 4-D product (out-of-plan boxes, packed boxes, connectivity, room
  connectivity). A *cell* is one point of it. A new position goes to its own cell unless that
  cell is worse (by the feature ordering of Section 7) than its parent's; then it goes to the
  parent's cell, i.e. to the cell of its best ancestor.
- *Weight*: a node's weight is its parent's plus the weight of the move that made it: the
  advisor weight (default 0) for moves an advisor picked, the normal weight (default 1) for the
  others (Section 7's best setting).
- *The loop*: go round the active cells; in a cell, expand the least-weight unexpanded move of
  the positions projected there, ties broken by the feature ordering (out-of-plan, packed,
  connectivity, room connectivity, hotspots, mobility) of the position the move leads to. No
  move is ever pruned, so the search is complete.

Deadlock tests on every generated move: dead squares, freeze, 4x4 patterns and bipartite
matching (in the move generator); on every new node: retrograde analysis, bipartite matching
with frozen boxes as walls (``planners.fess.frozen``), room deadlocks and corral deadlocks.
The advisors, weights and move order of a new node come from one kernel
(``planners._kernels.fess_order``). PI-corral pruning (paper, appendix) keeps, in a position
with a PI-corral, only the macro moves whose first push goes into it.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planners._kernels.fess_moves import (
    DL_BIPARTITE,
    DL_CORRAL,
    DL_DEAD_SQUARE,
    DL_FREEZE,
    DL_LEARNED,
    DL_PATTERN,
    DL_RETROGRADE,
    DL_ROOM,
    M_BOX,
    M_CONN,
    M_DST,
    M_HOT,
    M_MOB,
    M_NORM,
    M_OOP,
    M_PACKED,
    M_PLAYER,
    M_ROOMS,
    M_SRC,
    N_MOVE_COLS,
    ROOM_DEADLOCK,
    MoveTables,
    goal_bit_table,
    keep_first_pushes,
    new_move_scratch,
    push_moves,
    retrograde_deadlock,
    room_deadlock,
    room_key,
)
from planners._kernels.fess_order import OrderNode, OrderTables, order_moves
from planners.base import Outcome, Planner, Push
from planners.fess.advisors import ADVISORS, Features
from planners.fess.features import FeatureEvaluator
from planners.fess.frozen import FrozenBipartite
from planners.fess.learned import LearnedPatterns
from planners.fess.packing_plan import PackingPlan, compute_packing_plan, walk_distance_from
from planners.fess.rooms import analyze_rooms
from planners.limits import SearchLimits
from soko_gym.engine.board import Board, State
from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_INF, GOAL, HASH_DTYPE, SQUARE_DTYPE
from soko_gym.engine.corral import CORRAL_DEADLOCK, CorralAnalysis
from soko_gym.engine.patterns import level_patterns
from soko_gym.engine.reach import reach_player
from soko_gym.engine.step import box_paths
from soko_gym.levels import Level

DEADLOCK_NAMES = {
    DL_DEAD_SQUARE: "dead_square",
    DL_FREEZE: "freeze",
    DL_PATTERN: "pattern",
    DL_BIPARTITE: "bipartite",
    DL_RETROGRADE: "retrograde",
    DL_ROOM: "room",
    DL_CORRAL: "corral",
    DL_LEARNED: "learned",
}
# the move columns a node keeps (int16 copy), in this order
_KEEP = (M_BOX, M_SRC, M_DST, M_PLAYER, M_NORM, M_OOP, M_PACKED, M_CONN, M_ROOMS, M_HOT, M_MOB)
K_BOX, K_SRC, K_DST, K_PLAYER, K_NORM, K_OOP, K_PACKED, K_CONN, K_ROOMS, K_HOT, K_MOB = range(11)
_BYTES_PER_NODE = 400  # Python object, arrays and table entry, besides the moves
_MEMO_SIZE = 1 << 18  # corral and room answers remembered, each (about 50 MB when full)


class _Node:
    __slots__ = (
        "box_pos", "player", "parent", "move", "weight", "features", "cell", "moves", "wts",
        "advised", "order", "next", "n_open", "dead",
    )  # fmt: skip

    def __init__(self, box_pos, player, parent, move, weight, features, cell):
        self.box_pos = box_pos  # int32[n_boxes]
        self.player = player
        self.parent = parent
        self.move = move  # (box, src, dst, player after) of the macro move that made it
        self.weight = weight
        self.features = features
        self.cell = cell
        self.moves = None  # int16[k, len(_KEEP)]
        self.wts = None  # int64[k] move weights
        self.advised = None  # per picked move, the bits of the advisors that picked it
        self.order = None  # move indices, best first
        self.next = 0
        self.n_open = 0  # moves not expanded plus children not known dead
        self.dead = False


@dataclass
class FessStats:
    """Figures of one FESS run (returned in ``SearchResult.stats``)."""

    nodes: int = 0
    expanded_moves: int = 0
    transpositions: int = 0
    cells: int = 0
    pi_corral_nodes: int = 0
    advisor_hits: dict[str, int] = field(default_factory=lambda: {k: 0 for k in ADVISORS})
    deadlocks: dict[str, int] = field(
        default_factory=lambda: {name: 0 for name in DEADLOCK_NAMES.values()}
    )
    plan_seconds: float = 0.0
    plan_steps: int = 0
    plan_complete: bool = False
    sink_room: int = -1
    search_seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``SearchResult.stats``."""
        return {
            "nodes": self.nodes,
            "expanded_moves": self.expanded_moves,
            "transpositions": self.transpositions,
            "cells": self.cells,
            "pi_corral_nodes": self.pi_corral_nodes,
            "advisor_hits": dict(self.advisor_hits),
            "deadlocks": dict(self.deadlocks),
            "plan_seconds": round(self.plan_seconds, 4),
            "plan_steps": self.plan_steps,
            "plan_complete": self.plan_complete,
            "sink_room": self.sink_room,
            "search_seconds": round(self.search_seconds, 4),
        }


class FessPlanner(Planner):
    """FESS (module docstring): packing plan, advisors and a search over feature space.

    Not optimal: solutions are found fast, not short (``planners.optimize`` shortens them).

    Args:
        advisor_weight: weight of a move an advisor picked (paper: 0).
        move_weight: weight of every other move (paper: 1).
        advisors: names of the advisors to consult (default: all of ``ADVISORS``).
        bipartite: run the bipartite deadlock test on every generated move (empty-board
            distances) and on every new position with frozen boxes on targets (those boxes as
            walls, ``planners.fess.frozen``).
        retrograde: run retrograde analysis on every new position.
        room_deadlocks: run the room deadlock search on the room a move ends in.
        corral_deadlocks: run the corral deadlock search on every new position.
        pi_corrals: PI-corral pruning: where a PI-corral exists, keep only the macro moves whose
            first push goes into it (sound: the search stays complete).
        room_axis: room connectivity is the fourth axis of the feature space (the paper's
            choice: it helps levels with long solutions and slows some easy ones); False
            searches the 3-D space (out of plan, packed, connectivity), room connectivity
            still ranking moves.
        plan: "sink" (Section 6: boxes pulled into the sink room leave the board, parking
            squares included) or "targets" (no sink: the targets in the order the backward
            search vacates them, every target's basin; for levels the sink plan misleads).
        deadlock_budget: most positions each room or corral deadlock search stores (a power
            of two); a search that runs out proves nothing.
        plan_nodes: most positions of the packing-plan search.
        plan_seconds: time budget of the packing-plan search.
        plan_sinks: most sink rooms the packing plan tries when the paper's choice leaves
            boxes on the board (1: the paper's choice only).
        learned: store what each room or corral deadlock proof proved as a pattern and test
            every new position against the patterns (``planners.fess.learned``).
        seed: None keeps ties between equal moves in board order; an integer breaks them by a
            random permutation drawn from it (the same seed gives the same search).
    """

    name = "fess"
    optimal = False

    def __init__(
        self,
        advisor_weight: int = 0,
        move_weight: int = 1,
        advisors: tuple[str, ...] | list[str] | None = None,
        bipartite: bool = True,
        retrograde: bool = True,
        room_deadlocks: bool = True,
        corral_deadlocks: bool = True,
        pi_corrals: bool = True,
        room_axis: bool = True,
        plan: str = "sink",
        deadlock_budget: int = 1024,
        plan_nodes: int = 3000,
        plan_seconds: float = 5.0,
        plan_sinks: int = 4,
        learned: bool = True,
        seed: int | None = None,
    ) -> None:
        for name, value in (("advisor_weight", advisor_weight), ("move_weight", move_weight)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if advisor_weight == 0 and move_weight == 0:
            raise ValueError("advisor_weight and move_weight cannot both be 0")
        names = tuple(ADVISORS) if advisors is None else tuple(advisors)
        unknown = [a for a in names if a not in ADVISORS]
        if unknown:
            raise ValueError(f"unknown advisors {unknown}; known: {', '.join(ADVISORS)}")
        if plan not in ("sink", "targets"):
            raise ValueError(f"plan must be 'sink' or 'targets', got {plan!r}")
        if (
            isinstance(deadlock_budget, bool)
            or not isinstance(deadlock_budget, int)
            or deadlock_budget < 16
            or deadlock_budget & (deadlock_budget - 1)
        ):
            raise ValueError(
                f"deadlock_budget must be a power of two >= 16, got {deadlock_budget!r}"
            )
        if plan_nodes < 1 or plan_seconds <= 0:
            raise ValueError("plan_nodes and plan_seconds must be positive")
        if isinstance(plan_sinks, bool) or not isinstance(plan_sinks, int) or plan_sinks < 1:
            raise ValueError(f"plan_sinks must be a positive integer, got {plan_sinks!r}")
        self.advisor_weight = advisor_weight
        self.move_weight = move_weight
        self.advisors = names
        self.bipartite = bipartite
        self.retrograde = retrograde
        self.room_deadlocks = room_deadlocks
        self.corral_deadlocks = corral_deadlocks
        self.pi_corrals = pi_corrals
        self.room_axis = room_axis
        self.plan = plan
        self.deadlock_budget = deadlock_budget
        self.plan_nodes = plan_nodes
        self.plan_seconds = plan_seconds
        self.plan_sinks = plan_sinks
        self.learned = learned
        self.seed = seed
        # set by a portfolio (planners.portfolio): polled during the search, True stops it
        self.stop_check: Callable[[], bool] | None = None

    @classmethod
    def portfolio_options(cls, workers: int, options: dict[str, Any]) -> list[dict[str, Any]]:
        """Worker options of a FESS portfolio (``planners.portfolio``).

        Worker 0 runs ``options``; worker 1 the 3-D feature space (no room-connectivity axis,
        the paper's alternative) with seeded tie-breaking and the paper's sink room even when
        its packing plan is incomplete (worker 0 tries further sink rooms then: a complete
        plan is usually the better guide, not always); further workers alternate the two
        configurations, each worker with its own seed (the caller's seed plus its index). A
        ``room_axis`` or ``plan_sinks`` the caller set holds for every worker.
        """
        out = [dict(options)]
        seed = options.get("seed") or 0
        for i in range(1, workers):
            odd = i % 2 == 1
            room_axis = options.get("room_axis", not odd)
            sinks = options.get("plan_sinks", 1 if odd else 4)
            out.append({**options, "room_axis": room_axis, "plan_sinks": sinks, "seed": seed + i})
        return out

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Run FESS on ``level`` (see ``Planner.search``)."""
        run = _FessRun(self, level.board, limits, deadline)
        return run.run()


class _FessRun:
    """One FESS search: the level's tables, the tree, the cells and the loop."""

    def __init__(self, cfg: FessPlanner, board: Board, limits: SearchLimits, deadline):
        self.cfg = cfg
        self.board = board
        self.limits = limits
        self.deadline = deadline
        self.stats = FessStats()
        t0 = time.perf_counter()
        self.rooms = analyze_rooms(board)
        plan_deadline = cfg.plan_seconds
        if deadline is not None:
            plan_deadline = min(plan_deadline, max(0.05, 0.2 * (deadline - t0)))
        self.plan: PackingPlan = compute_packing_plan(
            board,
            self.rooms,
            max_nodes=cfg.plan_nodes,
            max_seconds=plan_deadline,
            use_sink=cfg.plan == "sink",
            max_sinks=cfg.plan_sinks,
        )
        self.stats.plan_seconds = time.perf_counter() - t0
        self.stats.plan_steps = self.plan.n_steps
        self.stats.plan_complete = self.plan.complete
        self.stats.sink_room = self.plan.sink_room
        self.features = FeatureEvaluator(board, self.rooms)
        self.hot = self.features.hot
        self.patterns = level_patterns(board)
        basin_squares = np.flatnonzero(self.plan.basin)
        if basin_squares.size:
            self.basin_dist = walk_distance_from(board, basin_squares)
        else:
            self.basin_dist = np.zeros(board.n_cells, dtype=np.int32)
        self.rng = None if cfg.seed is None else np.random.default_rng(cfg.seed)
        n = board.n_cells
        nb = board.n_boxes
        nf = board.floor.shape[0]
        self.box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        # one scratch bundle for the move generator; the other kernels share its buffers
        self.scratch = new_move_scratch(board.cells, nb, self.rooms.n_rooms)
        self.stamps = self.scratch.stamps
        self.stack = self.scratch.stack
        self.dist = self.scratch.dist
        self.parent = self.scratch.parent
        self.queue = self.scratch.queue
        self.seen = self.scratch.seen
        self.trail = self.scratch.trail
        self.hot_out = self.scratch.hot_out
        self.kinds = self.scratch.kinds
        self.moves_buf = np.zeros((max(1, 4 * nb * nf), N_MOVE_COLS), dtype=np.int32)
        self.move_tables = MoveTables(
            board.cells, board.dead, board.offsets, board.floor, board.floor_index, board.goals,
            board.goal_dist, goal_bit_table(board.goal_dist), self.plan.src, self.plan.dst,
            self.plan.basin, self.rooms.room_id, self.rooms.passage_id, self.rooms.edges,
            self.hot, self.patterns.square_start, self.patterns.square_instance,
            self.patterns.instance_boxes,
            np.array([1 if cfg.bipartite else 0], dtype=np.int64), board.zobrist,
        )  # fmt: skip
        self._no_tiebreak = np.zeros(self.moves_buf.shape[0], dtype=np.int64)
        enabled = sum(1 << i for i, name in enumerate(ADVISORS) if name in cfg.advisors)
        self.order_tables = OrderTables(
            self.plan.basin,
            self.basin_dist.astype(np.int32),
            self.plan.src,
            self.plan.dst,
            np.array([cfg.advisor_weight, cfg.move_weight, enabled], dtype=np.int64),
            np.array([board.width], dtype=np.int64),
            np.zeros(n, dtype=np.int32),
        )
        self.sub_box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        self._room_areas = self._build_room_areas()
        budget = cfg.deadlock_budget
        self.room_nodes = np.zeros((budget, 11), dtype=SQUARE_DTYPE)
        self.room_key = np.zeros(2 * budget, dtype=HASH_DTYPE)
        self.room_player = np.full(2 * budget, -1, dtype=SQUARE_DTYPE)
        self.room_pos = np.zeros(10, dtype=SQUARE_DTYPE)
        self.room_pushes = np.zeros(40, dtype=SQUARE_DTYPE)
        self.room_used = np.zeros(budget, dtype=np.int64)
        self.goal = (board.cells & GOAL) != 0
        # answers of room deadlock searches by the sub-problem posed (``room_key``)
        self.room_memo: dict[tuple[int, int, int], int] = {}
        self.corrals = CorralAnalysis(board, budget, memo=_MEMO_SIZE)
        self.frozen_bipartite = FrozenBipartite(board) if cfg.bipartite else None
        self.learned = LearnedPatterns(board) if cfg.learned else None
        self._no_patterns = LearnedPatterns(board).tables  # count 0: matches nothing
        self.table: dict[tuple[int, int], _Node] = {}
        self.heaps: dict[tuple, list] = {}
        self.active: list[tuple] = []
        self.tick = 0
        self.move_bytes = 0

    # ------------------------------------------------------------------ tables and checks

    def _build_room_areas(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per room: (area mask uint8[n_cells], area squares): the room and passages next to it."""
        r = self.rooms
        offsets = [int(o) for o in self.board.offsets]
        out = []
        for room in range(r.n_rooms):
            area = (r.room_id == room).astype(np.uint8)
            for sq in np.flatnonzero(area).tolist():
                for o in offsets:
                    if r.passage_id[sq + o] >= 0:
                        area[sq + o] = 1
            out.append((area, np.flatnonzero(area).astype(SQUARE_DTYPE)))
        return out

    def _load(self, box_pos: np.ndarray) -> None:
        self.box_at[:] = -1
        self.box_at[box_pos] = np.arange(box_pos.shape[0], dtype=BOX_AT_DTYPE)

    def _key(self, box_pos: np.ndarray, norm: int) -> tuple[int, int]:
        h = np.bitwise_xor.reduce(self.board.zobrist[box_pos]) if box_pos.size else 0
        return int(h), int(norm)

    def _node_deadlock(self, box_pos: np.ndarray, player: int, dst: int) -> int:
        """Node-level deadlock tests; returns the DL_* kind found, or -1. ``box_at`` loaded."""
        b = self.board
        cfg = self.cfg
        if cfg.retrograde and retrograde_deadlock(
            b.cells, b.dead, b.offsets, b.goals, self.box_at, box_pos, self.seen, self.trail,
            self.sub_box_at,
        ):  # fmt: skip
            return DL_RETROGRADE
        if self.frozen_bipartite is not None and self.frozen_bipartite.is_deadlock(box_pos):
            return DL_BIPARTITE
        if self.learned is not None and self.learned.match(self.box_at, box_pos, player) >= 0:
            return DL_LEARNED
        if cfg.room_deadlocks and self.rooms.n_rooms:
            room = int(self.rooms.room_id[dst])
            if room < 0:  # a corridor square next to a room belongs to that room's area
                for o in b.offsets.tolist():
                    if self.rooms.room_id[dst + o] >= 0:
                        room = int(self.rooms.room_id[dst + o])
                        break
            if room >= 0:
                area, squares = self._room_areas[room]
                h, norm = room_key(
                    b.offsets, b.zobrist, self.box_at, squares, player, self.sub_box_at,
                    self.stamps, self.stack,
                )  # fmt: skip
                key = (room, int(h), int(norm))
                status = self.room_memo.get(key, -1)
                if status < 0:
                    status = room_deadlock(
                        b.cells, b.dead, b.offsets, b.zobrist, self.box_at, area, squares,
                        player, self.sub_box_at, self.room_nodes, self.room_key,
                        self.room_player, self.room_pos, self.room_pushes, self.room_used,
                        self.stamps, self.stack, self.seen, self.trail,
                    )  # fmt: skip
                    if len(self.room_memo) >= _MEMO_SIZE:
                        self.room_memo.clear()
                    self.room_memo[key] = int(status)
                    if status == ROOM_DEADLOCK and self.learned is not None:
                        self.learned.add(squares[self.box_at[squares] >= 0], int(norm))
                if status == ROOM_DEADLOCK:
                    return DL_ROOM
        if cfg.corral_deadlocks:
            self.corrals.label(State(box_pos, self.box_at, player, 0))
            if self.corrals.deadlock_status() == CORRAL_DEADLOCK:
                if self.learned is not None and self.corrals.proof is not None:
                    self.learned.add(*self.corrals.proof)
                return DL_CORRAL
        return -1

    # ------------------------------------------------------------------ nodes

    def _features_of(self, box_pos: np.ndarray, player: int) -> Features:
        """Features of the position in ``box_at`` (the root; children get theirs from moves)."""
        f = self.features
        p = self.plan
        packed = f.packed(self.box_at, p.src, p.dst)
        return Features(
            oop=f.out_of_plan(box_pos, p.basin, p.src, p.dst, packed),
            packed=packed,
            conn=f.connectivity(self.box_at),
            rooms=f.room_connectivity(self.box_at),
            hot=f.hotspots(box_pos),
            mob=f.mobility(self.box_at, box_pos, player)[0],
        )

    def _cell(self, f: Features) -> tuple[int, int, int, int]:
        """The feature-space cell of a position (sorts best first)."""
        return (f.oop, -f.packed, f.conn, f.rooms if self.cfg.room_axis else 0)

    def _generate(self, node: _Node) -> None:
        """Fill the node's move list, weights and order (``box_at`` holds its position)."""
        patterns = self._no_patterns if self.learned is None else self.learned.tables
        k = push_moves(
            self.move_tables, self.scratch, patterns, self.box_at, node.box_pos,
            node.player, self.moves_buf,
        )  # fmt: skip
        full = self.moves_buf[:k]
        if self.cfg.pi_corrals and k:
            last = self.corrals.state  # labelled already when the node-level test ran
            if last is None or last.box_pos is not node.box_pos or last.player != node.player:
                self.corrals.label(State(node.box_pos, self.box_at, node.player, 0))
            allowed = self.corrals.pi_corral_codes()
            if allowed is not None:
                k = keep_first_pushes(self.moves_buf, k, allowed)
                full = self.moves_buf[:k]
                self.stats.pi_corral_nodes += 1
                if k == 0:
                    self.kinds[DL_CORRAL] += 1
        wts = np.empty(k, dtype=np.int64)
        order = np.empty(k, dtype=np.int64)
        picked = np.empty(k, dtype=np.int64)
        if k:
            f = node.features
            # a seeded random order among moves that tie on every feature
            tiebreak = self._no_tiebreak[:k] if self.rng is None else self.rng.permutation(k)
            order_moves(
                full,
                k,
                self.order_tables,
                OrderNode(
                    np.array([f.oop, f.packed, f.conn, f.rooms, f.hot, f.mob], dtype=np.int64),
                    node.box_pos,
                    self.hot_out,
                    tiebreak,
                ),
                wts,
                order,
                picked,
            )
        advised = {int(i): int(picked[i]) for i in np.flatnonzero(picked)}
        node.moves = full[:, _KEEP].astype(np.int16)
        node.wts = wts
        node.advised = advised
        node.order = order
        node.n_open = k
        self.move_bytes += node.moves.nbytes + wts.nbytes + order.nbytes

    def _push_node(self, node: _Node) -> None:
        """Put the node's next move into its cell's queue."""
        if node.next >= node.order.shape[0]:
            return
        j = node.order[node.next]
        row = node.moves[j]
        prio = (
            node.weight + int(node.wts[j]),
            int(row[K_OOP]), -int(row[K_PACKED]), int(row[K_CONN]), int(row[K_ROOMS]),
            int(row[K_HOT]), -int(row[K_MOB]),
        )  # fmt: skip
        heap = self.heaps.get(node.cell)
        if heap is None:
            heap = self.heaps[node.cell] = []
            self.active.append(node.cell)
            self.stats.cells += 1
        self.tick += 1
        heapq.heappush(heap, (prio, self.tick, node))

    def _mark_dead(self, node: _Node) -> None:
        while node is not None and not node.dead:
            node.dead = True
            parent = node.parent
            if parent is None:
                return
            parent.n_open -= 1
            if parent.n_open > 0:
                return
            node = parent

    # ------------------------------------------------------------------ the loop

    def run(self) -> Outcome:
        t0 = time.perf_counter()
        b = self.board
        box_pos = b.start_boxes.astype(SQUARE_DTYPE).copy()
        self._load(box_pos)
        if bool(self.goal[box_pos].all()):
            return self._finish("solved", t0, [])
        _, norm = reach_player(self.box_at, b.offsets, int(b.start_player), self.stamps, self.stack)
        root_features = self._features_of(box_pos, int(b.start_player))
        root = _Node(
            box_pos, int(b.start_player), None, None, 0, root_features, self._cell(root_features)
        )
        self.table[self._key(box_pos, norm)] = root
        self.stats.nodes = 1
        self._load(box_pos)
        self._generate(root)
        if root.n_open == 0:
            return self._finish("unsolvable", t0, None)
        self._push_node(root)
        max_nodes = self.limits.max_nodes
        mem_budget = self.limits.memory_bytes
        i = 0
        checks = 0
        while self.active:
            checks += 1
            if checks & 15 == 0:
                if self.deadline is not None and time.perf_counter() > self.deadline:
                    return self._finish("timeout", t0, None)
                if self.cfg.stop_check is not None and checks & 63 == 0 and self.cfg.stop_check():
                    return self._finish("timeout", t0, None)  # another worker solved it
            if max_nodes is not None and self.stats.nodes >= max_nodes:
                return self._finish("node_limit", t0, None)
            if self.move_bytes + _BYTES_PER_NODE * self.stats.nodes > mem_budget:
                return self._finish("memory_limit", t0, None)
            if i >= len(self.active):
                i = 0
            cell = self.active[i]
            heap = self.heaps[cell]
            node = None
            while heap:
                _, _, cand = heapq.heappop(heap)
                if not cand.dead:
                    node = cand
                    break
            if node is None:
                self.active.pop(i)
                del self.heaps[cell]
                continue
            i += 1
            j = int(node.order[node.next])
            node.next += 1
            self._push_node(node)
            solved = self._expand(node, j)
            if solved is not None:
                return self._finish("solved", t0, self._solution(solved))
            if root.dead:
                return self._finish("unsolvable", t0, None)
        return self._finish("unsolvable", t0, None)

    def _expand(self, node: _Node, j: int) -> _Node | None:
        """Make move ``j`` of ``node``; returns the new node when it is solved."""
        self.stats.expanded_moves += 1
        row = node.moves[j]
        bits = node.advised.get(j, 0)
        for a, name in enumerate(ADVISORS):
            if (bits >> a) & 1:
                self.stats.advisor_hits[name] += 1
        box = int(row[K_BOX])
        dst = int(row[K_DST])
        child_pos = node.box_pos.copy()
        child_pos[box] = dst
        key = self._key(child_pos, int(row[K_NORM]))
        if key in self.table:
            self.stats.transpositions += 1
            self._close_move(node)
            return None
        player = int(row[K_PLAYER])
        features = Features(
            oop=int(row[K_OOP]), packed=int(row[K_PACKED]), conn=int(row[K_CONN]),
            rooms=int(row[K_ROOMS]), hot=int(row[K_HOT]), mob=int(row[K_MOB]),
        )  # fmt: skip
        child = _Node(child_pos, player, node, (box, int(row[K_SRC]), dst, player),
                      node.weight + int(node.wts[j]), features, self._cell(features))  # fmt: skip
        if child.cell > node.cell:  # worse than its parent: its best ancestor's cell
            child.cell = node.cell
        self.table[key] = child
        self.stats.nodes += 1
        if bool(self.goal[child_pos].all()):
            return child
        self._load(child_pos)
        kind = self._node_deadlock(child_pos, player, dst)
        if kind >= 0:
            self.kinds[kind] += 1
            child.dead = True
            self._close_move(node)
            return None
        self._generate(child)
        if child.n_open == 0:
            self._mark_dead(child)
            return None
        self._push_node(child)
        return None

    def _close_move(self, node: _Node) -> None:
        """A move of ``node`` led nowhere new: one fewer open move."""
        node.n_open -= 1
        if node.n_open == 0 and node.next >= node.order.shape[0]:
            self._mark_dead(node)

    # ------------------------------------------------------------------ results

    def _solution(self, goal: _Node) -> list[Push]:
        """The pushes from the root to ``goal``, each macro move by its fewest pushes."""
        chain = []
        node = goal
        while node.parent is not None:
            chain.append(node)
            node = node.parent
        chain.reverse()
        b = self.board
        pushes: list[Push] = []
        for child in chain:
            parent = child.parent
            _, src, dst, player_after = child.move
            self._load(parent.box_pos)
            box_paths(
                b.cells, self.box_at, b.offsets, int(parent.player), src, self.stamps,
                self.stack, self.dist, self.parent, self.queue,
            )  # fmt: skip
            side = next(s for s in range(4) if dst + int(b.offsets[s]) == player_after)
            code = dst * 4 + side
            if self.dist[code] == DIST_INF:
                raise RuntimeError("FESS lost a macro move's push path")
            dirs = []
            for _ in range(int(self.dist[code])):
                link = int(self.parent[code])
                dirs.append(link & 3)
                code = link >> 2
            dirs.reverse()
            sq = src
            for d in dirs:
                pushes.append((sq, d))
                sq += int(b.offsets[d])
        return pushes

    def _finish(self, status: str, t0: float, pushes: list[Push] | None) -> Outcome:
        self.stats.search_seconds = time.perf_counter() - t0
        for kind, name in DEADLOCK_NAMES.items():
            self.stats.deadlocks[name] = int(self.kinds[kind])
        return Outcome(
            status,
            pushes,
            nodes=self.stats.expanded_moves,
            generated=self.stats.nodes,
            stats=self.stats.as_dict(),
        )


__all__ = ["FessPlanner", "FessStats"]
