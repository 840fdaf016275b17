"""One FESS search: the level's tables, the tree, and the kernel called in slices.

``planners.fess.search`` holds the planner (its options and stages) and the terms; the loop
itself is ``planners._kernels.fess_search``, on the tree of ``planners._kernels.fess_tree``
(cells, transposition table, dead marking).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from planners._kernels.fess_frozen import new_frozen_tables
from planners._kernels.fess_learned import new_learned_tables
from planners._kernels.fess_meet import new_meet_tables
from planners._kernels.fess_move_data import (
    DL_BIPARTITE,
    DL_CORRAL,
    DL_DEAD_SQUARE,
    DL_DIAGONAL,
    DL_FREEZE,
    DL_LEARNED,
    DL_PATTERN,
    DL_RETROGRADE,
    DL_ROOM,
    N_MOVE_COLS,
    MoveTables,
    new_move_scratch,
)
from planners._kernels.fess_moves import goal_bit_table
from planners._kernels.fess_order import OrderTables
from planners._kernels.fess_room_count import room_areas, room_border_table
from planners._kernels.fess_room_deadlock import new_room_scratch
from planners._kernels.fess_search import (
    N_OPTS,
    O_CORRALS,
    O_DIAGONAL,
    O_DOMINATED,
    O_FROZEN,
    O_LEARNED,
    O_NODE_LIMIT,
    O_PI_CORRALS,
    O_RETROGRADE,
    O_ROOM_AXIS,
    O_ROOMS,
    O_SEEDED,
    O_SPACE,
    S_GROW,
    S_NODE_LIMIT,
    S_SLICE,
    S_SOLVED,
    SPACE_FREE,
    SPACE_PAPER,
    DeadlockTables,
    FessScratch,
    FessTables,
    fess_run,
    generate_moves,
    node_deadlock,
)
from planners._kernels.fess_tree import (
    C_ADVISOR,
    C_CELLS,
    C_EXPANDED,
    C_GENERATED,
    C_LABELLED,
    C_MOVES_USED,
    C_NODES,
    C_PI_CORRAL_NODES,
    C_SOLVED,
    C_TESTED,
    C_TRANSPOSITIONS,
)
from planners.base import Outcome, Push
from planners.fess.advisors import ADVISORS, Features, target_holes
from planners.fess.basins import walk_distance_from
from planners.fess.features import FeatureEvaluator
from planners.fess.learned import LearnedPatterns
from planners.fess.options import (
    PLAN_FIRST_NODES,
    PLAN_NODES,
    PLAN_SECONDS,
    PLAN_SINKS,
    SINKLESS_NODES,
    FessOptions,
)
from planners.fess.packing_plan import PackingPlan, compute_packing_plan
from planners.fess.rooms import analyze_rooms
from planners.fess.tree import grow_tree, new_tree
from planners.limits import SearchLimits
from soko_gym.engine.board import Board
from soko_gym.engine.constants import (
    BOX_AT_DTYPE,
    DIST_INF,
    FLOOR,
    GOAL,
    HASH_DTYPE,
    SQUARE_DTYPE,
)
from soko_gym.engine.corral_tables import new_corral_tables
from soko_gym.engine.distance import dead_sides
from soko_gym.engine.macro import box_paths
from soko_gym.engine.patterns import level_patterns
from soko_gym.engine.reach import reach_player

if TYPE_CHECKING:  # meet imports this module (through the waypoint's pushes)
    from planners.fess.meet import MeetTable

DEADLOCK_NAMES = {
    DL_DEAD_SQUARE: "dead_square",
    DL_FREEZE: "freeze",
    DL_PATTERN: "pattern",
    DL_BIPARTITE: "bipartite",
    DL_RETROGRADE: "retrograde",
    DL_ROOM: "room",
    DL_CORRAL: "corral",
    DL_LEARNED: "learned",
    DL_DIAGONAL: "diagonal",
}
_MEMO_SIZE = 1 << 18  # room and corral answers remembered, each (direct-mapped slots)
_CORRAL_BUDGET_MIN = 64  # the smallest budget an adaptive corral search falls to
_FIRST_NODES = 1 << 12  # first capacity of the tree (doubled as needed)
_FIRST_MOVES = 1 << 16  # first capacity of the move pool


@dataclass(frozen=True)
class NodeMoves:
    """The moves of one position as a search node stores them (``FessRun.node_moves``)."""

    features: Features
    box_pos: np.ndarray
    moves: np.ndarray  # int16[k, N_KEEP] the kept columns (K_* indices)
    full: np.ndarray  # int32[k, N_MOVE_COLS] every column of the move generator (M_*)
    wts: np.ndarray  # int64[k]
    order: np.ndarray  # int64[k] move indices, first to expand first
    advised: dict[int, int]  # per picked move, the bits of the advisors that picked it


@dataclass
class FessStats:
    """Figures of one FESS run (returned in ``SearchResult.stats``)."""

    nodes: int = 0
    expanded_moves: int = 0
    transpositions: int = 0
    generated_nodes: int = 0
    tested_nodes: int = 0
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
    sink_rooms: tuple[int, ...] = ()
    search_seconds: float = 0.0
    met: int = -1  # solved through a backward position: its pulls from the solved one

    def as_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``SearchResult.stats``: every field, JSON-ready."""
        out = asdict(self)  # copies the counter dicts too
        out["sink_rooms"] = list(self.sink_rooms)
        for name in ("plan_seconds", "search_seconds"):
            out[name] = round(out[name], 4)
        return out


def path_pushes(
    dist: np.ndarray, links: np.ndarray, code: int, src: int, offsets: np.ndarray
) -> list[Push]:
    """The pushes of ``box_paths``' path to state ``code`` of the box starting on ``src``."""
    dirs = []
    for _ in range(int(dist[code])):
        link = int(links[code])
        dirs.append(link & 3)
        code = link >> 2
    dirs.reverse()
    pushes: list[Push] = []
    sq = src
    for d in dirs:
        pushes.append((sq, d))
        sq += int(offsets[d])
    return pushes


class FessRun:
    """One FESS search: the level's tables and the kernels' state (``fess_search``)."""

    def __init__(
        self,
        cfg: FessOptions,
        board: Board,
        limits: SearchLimits,
        deadline: float | None,
        stop_check: Callable[[], bool] | None = None,
        meet: MeetTable | None = None,
    ) -> None:
        self.cfg = cfg
        self.meet = meet  # a backward search's positions: meeting one solves the level
        self.board = board
        self.limits = limits
        self.deadline = deadline
        self.stop_check = stop_check  # polled between slices: True stops the search
        self.stopped = False  # the last run() ended because ``stop_check`` said so
        self.stats = FessStats()
        t0 = time.perf_counter()
        self.rooms = analyze_rooms(board)
        plan_deadline = PLAN_SECONDS
        if deadline is not None:
            plan_deadline = min(plan_deadline, max(0.05, 0.2 * (deadline - t0)))
        paper = cfg.sink_choice == "paper"
        self.plan: PackingPlan = compute_packing_plan(
            board,
            self.rooms,
            max_nodes=PLAN_NODES,
            first_nodes=None if paper else PLAN_FIRST_NODES,
            sinkless_nodes=SINKLESS_NODES,
            max_seconds=plan_deadline,
            use_sink=cfg.plan in ("sink", "sinks"),
            max_sinks=1 if paper else PLAN_SINKS,
            sinkless=cfg.sinkless,
            sinks="all" if cfg.plan == "sinks" else "one",
        )
        if not cfg.out_of_plan:  # every floor square in the basin: no box is out of plan
            self.plan = replace(self.plan, basin=((board.cells & FLOOR) != 0).astype(np.uint8))
        self.stats.plan_seconds = time.perf_counter() - t0
        self.stats.plan_steps = self.plan.n_steps
        self.stats.plan_complete = self.plan.complete
        self.stats.sink_room = self.plan.sink_room
        self.stats.sink_rooms = self.plan.sink_rooms
        self.features = FeatureEvaluator(board, self.rooms)
        patterns = level_patterns(board)
        basin_squares = np.flatnonzero(self.plan.basin)
        if basin_squares.size:
            self.basin_dist = walk_distance_from(board, basin_squares)
        else:
            self.basin_dist = np.zeros(board.n_cells, dtype=np.int32)
        n = board.n_cells
        nb = board.n_boxes
        nf = board.floor.shape[0]
        # Python's view of a position (root features, the solution's push paths, tests)
        self.box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
        self.scratch = new_move_scratch(board.cells, nb, self.rooms.n_rooms)
        self.kinds = self.scratch.kinds
        border = room_border_table(self.rooms.room_id, self.rooms.passage_id, board.offsets)
        self.move_tables = MoveTables(
            board.cells, board.dead, dead_sides(board.push_dist), board.offsets,
            board.floor, board.floor_index, board.goals,
            board.goal_dist, goal_bit_table(board.goal_dist), self.plan.src, self.plan.dst,
            self.plan.basin, self.rooms.room_id, self.rooms.passage_id, self.rooms.edges,
            self.features.hot, patterns.square_start, patterns.square_instance,
            patterns.instance_boxes,
            np.array([cfg.test("bipartite"), cfg.space == "free"], dtype=np.int64),
            board.zobrist,
            border,
            room_areas(
                self.rooms.room_id, self.rooms.passage_id, self.rooms.edges, board.offsets,
                board.floor, border,
            ),
        )  # fmt: skip
        enabled = sum(1 << i for i, name in enumerate(ADVISORS) if name in cfg.advisors)
        cap = max(1, 4 * nb * nf)  # the most moves a node can have
        order_tables = OrderTables(
            self.plan.basin,
            self.basin_dist.astype(np.int32),
            target_holes(board) if "best" in cfg.advisors else np.zeros(n, dtype=np.uint8),
            self.plan.src,
            self.plan.dst,
            np.array([cfg.advisor_weight, cfg.move_weight, enabled], dtype=np.int64),
            np.array([board.width], dtype=np.int64),
            np.zeros(n, dtype=np.int32),
            np.zeros(cap, dtype=np.int64),
            np.zeros(cap, dtype=np.int64),
            np.zeros(cap, dtype=np.int64),
            np.zeros(cap, dtype=np.bool_),
        )
        opts = np.zeros(N_OPTS, dtype=np.int64)
        opts[O_RETROGRADE] = cfg.test("retrograde")
        opts[O_DIAGONAL] = cfg.test("diagonal")
        opts[O_FROZEN] = cfg.test("bipartite")
        opts[O_LEARNED] = cfg.test("learned")
        opts[O_ROOMS] = cfg.test("rooms")
        opts[O_CORRALS] = cfg.test("corrals")
        opts[O_PI_CORRALS] = cfg.pi_corrals
        opts[O_ROOM_AXIS] = cfg.room_axis
        opts[O_SEEDED] = cfg.seed is not None
        opts[O_NODE_LIMIT] = -1 if limits.max_nodes is None else limits.max_nodes
        opts[O_DOMINATED] = cfg.cells == "dominated"
        opts[O_SPACE] = SPACE_FREE if cfg.space == "free" else SPACE_PAPER
        room_area, room_sq, room_start = self._room_areas()
        self.tables = FessTables(
            self.move_tables, order_tables, ((board.cells & GOAL) != 0).astype(np.uint8),
            room_area, room_sq, room_start, opts,
            meet.tables if meet is not None else new_meet_tables(1, nb),
        )  # fmt: skip
        budget = cfg.deadlock_budget
        seed = 0 if cfg.seed is None else int(cfg.seed)
        room = new_room_scratch(n, budget)
        self.work = FessScratch(
            box_at=np.full(n, -1, dtype=BOX_AT_DTYPE),
            box_pos=np.zeros(nb, dtype=SQUARE_DTYPE),
            moves=np.zeros((cap, N_MOVE_COLS), dtype=np.int32),
            wts=np.zeros(cap, dtype=np.int64),
            order=np.zeros(cap, dtype=np.int64),
            picked=np.zeros(cap, dtype=np.int64),
            tiebreak=np.zeros(cap, dtype=np.int64),
            features=np.zeros(6, dtype=np.int64),
            pi_sq_pushes=np.zeros(4 * max(1, nb), dtype=np.int64),
            proof=np.zeros(max(1, nb), dtype=SQUARE_DTYPE),
            sub_box_at=np.full(n, -1, dtype=BOX_AT_DTYPE),
            room=room,
            memo_hash=np.zeros(_MEMO_SIZE, dtype=HASH_DTYPE),
            memo_info=np.zeros(_MEMO_SIZE, dtype=np.int64),
            memo_status=np.full(_MEMO_SIZE, -1, dtype=np.int8),
            memo_squares=np.zeros((_MEMO_SIZE, room.nodes.shape[1]), dtype=np.int16),
            rng=np.array([(seed * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) % 2**64 or 1],
                         dtype=np.uint64),
            room_budget=np.full(max(1, self.rooms.n_rooms), budget, dtype=np.int64),
        )  # fmt: skip
        self.corrals = new_corral_tables(
            board, budget, memo=_MEMO_SIZE, min_budget=min(budget, _CORRAL_BUDGET_MIN)
        )
        self.frozen = new_frozen_tables(board)
        self.learned = LearnedPatterns(board) if cfg.test("learned") else None
        self._learned_tables = (
            self.learned.tables if self.learned is not None else new_learned_tables(n, 1, 1)
        )
        self.deadlock_tables = DeadlockTables(self._learned_tables, self.frozen, self.corrals)
        self.tree = new_tree(nb, _FIRST_NODES, max(_FIRST_MOVES, 2 * cap))

    def _room_areas(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per room its area (the room and the passage squares next to it): mask, squares."""
        r = self.rooms
        n = self.board.n_cells
        offsets = [int(o) for o in self.board.offsets]
        mask = np.zeros((max(1, r.n_rooms), n), dtype=np.uint8)
        squares: list[int] = []
        start = [0]
        for room in range(r.n_rooms):
            area = mask[room]
            area[r.room_id == room] = 1
            for sq in np.flatnonzero(r.room_id == room).tolist():
                for o in offsets:
                    if r.passage_id[sq + o] >= 0:
                        area[sq + o] = 1
            squares.extend(np.flatnonzero(area).tolist())
            start.append(len(squares))
        return mask, np.array(squares, dtype=SQUARE_DTYPE), np.array(start, dtype=SQUARE_DTYPE)

    # ------------------------------------------------------------------ Python's view

    def _load(self, box_pos: np.ndarray) -> None:
        """Put a position into ``box_at`` (Python's view) and the kernels' ``work`` arrays."""
        self.box_at[:] = -1
        self.box_at[box_pos] = np.arange(box_pos.shape[0], dtype=BOX_AT_DTYPE)
        w = self.work
        w.box_at[:] = self.box_at
        w.box_pos[:] = box_pos

    def _node_deadlock(self, box_pos: np.ndarray, player: int, dst: int) -> int:
        """The node-level deadlock tests on a position (``_load``-ed); the DL_* kind or -1."""
        return int(
            node_deadlock(
                self.tables, self.scratch, self.work, self.tree, self.deadlock_tables, -1,
                int(player), int(dst),
            )
        )  # fmt: skip

    def node_moves(self, box_pos: np.ndarray, player: int) -> NodeMoves:
        """The moves a node of this position gets, as the search stores them (for tests)."""
        self._load(box_pos)
        f = self._features_of(box_pos, int(player))
        tree = new_tree(self.board.n_boxes, 2, self.work.moves.shape[0])
        tree.box_pos[0] = box_pos
        tree.player[0] = int(player)
        tree.feat[0] = f
        tree.ctr[C_LABELLED] = -1
        k = generate_moves(self.tables, self.scratch, self.work, tree, self.deadlock_tables, 0)
        return NodeMoves(
            features=Features(*(int(x) for x in f)),
            box_pos=box_pos,
            moves=tree.rows[:k].copy(),
            full=self.work.moves[:k].copy(),
            wts=tree.mwts[:k].astype(np.int64),
            order=tree.morder[:k].astype(np.int64),
            advised={i: int(a) for i, a in enumerate(tree.advised[:k].tolist()) if a},
        )

    def positions(self) -> list[tuple[np.ndarray, int]]:
        """(box squares, player square) of every node of the tree, in the order made."""
        tr = self.tree
        k = int(tr.ctr[C_NODES])
        return [(tr.box_pos[i].astype(SQUARE_DTYPE), int(tr.player[i])) for i in range(k)]

    # ------------------------------------------------------------------ the loop

    def _grow(self) -> None:
        """Double the tree's node or move capacity (whichever ``fess_run`` ran short of)."""
        tr = self.tree
        nodes = tr.cell.shape[0]
        moves = tr.rows.shape[0]
        if tr.ctr[C_NODES] + 1 >= nodes:
            nodes *= 2
        if tr.ctr[C_MOVES_USED] + self.work.moves.shape[0] > moves:
            moves *= 2
        self.tree = grow_tree(tr, nodes, moves)

    def _used_bytes(self) -> int:
        """Memory the tree uses: node rows, table slots and move rows in use."""
        tr = self.tree
        per_node = sum(
            a.itemsize * (a.size // a.shape[0]) for a in tr[:-1] if a.shape[0] == tr.cell.shape[0]
        ) + 2 * (tr.tt.itemsize + tr.cell_tab.itemsize)
        per_move = sum(
            a.itemsize * (a.size // a.shape[0]) for a in (tr.rows, tr.mwts, tr.morder, tr.advised)
        )
        return int(tr.ctr[C_NODES]) * per_node + int(tr.ctr[C_MOVES_USED]) * per_move

    def run(self) -> Outcome:
        """Search, or go on searching, until solved, proven unsolvable, or out of limits."""
        self.stopped = False
        t0 = time.perf_counter()
        b = self.board
        box_pos = b.start_boxes.astype(SQUARE_DTYPE).copy()
        self._load(box_pos)
        if bool(self.tables.goal[box_pos].all()):
            return self._finish("solved", t0, [])
        if self.meet is not None:  # the backward search reached the start itself
            e = self.meet.find(box_pos, int(b.start_player))
            if e >= 0:
                return self._finish("solved", t0, self._met(e, []))
        stamps, stack = self.scratch.stamps, self.scratch.stack
        _, norm = reach_player(self.box_at, b.offsets, int(b.start_player), stamps, stack)
        f = self._features_of(box_pos, int(b.start_player))
        tr = self.tree
        tr.box_pos[0] = box_pos
        tr.hash[0] = np.bitwise_xor.reduce(b.zobrist[box_pos]) if box_pos.size else 0
        tr.player[0] = int(b.start_player)
        tr.norm[0] = norm
        tr.weight[0] = 0
        tr.feat[0] = f
        self.work.box_at[:] = -1
        mem_budget = self.limits.memory_bytes
        budget = 16
        polls = 0
        while True:
            if self.deadline is not None and time.perf_counter() > self.deadline:
                return self._finish("timeout", t0, None)
            polls += 1
            if self.stop_check is not None and polls & 3 == 0 and self.stop_check():
                self.stopped = True  # a check may answer once (it consumes a queue)
                return self._finish("timeout", t0, None)  # another worker solved it
            if self._used_bytes() > mem_budget:
                return self._finish("memory_limit", t0, None)
            t1 = time.perf_counter()
            status = fess_run(
                self.tables, self.scratch, self.work, self.tree, self.deadlock_tables, budget
            )
            spent = time.perf_counter() - t1
            if status == S_SLICE:  # about 10 ms a slice: deadlines are kept to that
                budget = max(1, min(4 * budget, int(budget * 0.01 / max(spent, 1e-5))))
            elif status == S_GROW:
                self._grow()
            elif status == S_SOLVED:
                pushes = self._solution(int(self.tree.ctr[C_SOLVED]))
                met = int(self.tables.meet.count[1])
                if met >= 0:
                    pushes = self._met(met, pushes)
                return self._finish("solved", t0, pushes)
            elif status == S_NODE_LIMIT:
                return self._finish("node_limit", t0, None)
            else:
                return self._finish("unsolvable", t0, None)

    def _features_of(self, box_pos: np.ndarray, player: int) -> np.ndarray:
        """Features of the root (``box_at`` loaded): oop, packed, conn, rooms, hot, mob."""
        f = self.features
        p = self.plan
        free = self.cfg.space == "free"  # no axis of the plan-free space reads the plan
        packed = 0 if free else f.packed(self.box_at, p.src, p.dst)
        return np.array(
            [
                0 if free else f.out_of_plan(box_pos, p.basin, p.src, p.dst, packed),
                packed,
                f.connectivity(self.box_at),
                f.room_connectivity(self.box_at),
                f.stuck(self.box_at, box_pos) if free else f.hotspots(box_pos),
                f.mobility(self.box_at, box_pos, player)[0],
            ],
            dtype=np.int32,
        )

    # ------------------------------------------------------------------ results

    def _solution(self, goal: int) -> list[Push]:
        """The pushes from the root to node ``goal``, each macro move by its fewest pushes."""
        tr = self.tree
        chain = []
        node = goal
        while tr.parent[node] >= 0:
            chain.append(node)
            node = int(tr.parent[node])
        chain.reverse()
        b = self.board
        sc = self.scratch
        pushes: list[Push] = []
        links = np.zeros(4 * b.n_cells, dtype=np.int32)  # each state's push path link
        for child in chain:
            parent = int(tr.parent[child])
            box, src = int(tr.moved[child, 0]), int(tr.moved[child, 1])
            dst = int(tr.box_pos[child, box])
            player_after = int(tr.player[child])
            parent_pos = tr.box_pos[parent].astype(SQUARE_DTYPE)
            self.box_at[:] = -1
            self.box_at[parent_pos] = np.arange(parent_pos.shape[0], dtype=BOX_AT_DTYPE)
            box_paths(
                b.cells, self.box_at, b.offsets, int(tr.player[parent]), src, sc.stamps,
                sc.stack, sc.dist, links, sc.queue,
            )  # fmt: skip
            side = next(s for s in range(4) if dst + int(b.offsets[s]) == player_after)
            code = dst * 4 + side
            if sc.dist[code] == DIST_INF:
                raise RuntimeError("FESS lost a macro move's push path")
            pushes.extend(path_pushes(sc.dist, links, code, src, b.offsets))
        return pushes

    def _met(self, entry: int, pushes: list[Push]) -> list[Push]:
        """``pushes`` to the meet table's ``entry``, then its pulls reversed to the solution."""
        assert self.meet is not None
        player = pushes[-1][0] if pushes else int(self.board.start_player)
        finish = self.meet.finish(entry, player)
        if finish is None:
            raise RuntimeError("FESS met a backward position with the player outside its region")
        self.stats.met = self.meet.tables.depth[entry].item()
        return [*pushes, *finish]

    def _finish(self, status: str, t0: float, pushes: list[Push] | None) -> Outcome:
        st = self.stats
        ctr = self.tree.ctr
        st.search_seconds = time.perf_counter() - t0
        st.nodes = max(1, int(ctr[C_NODES]))
        st.expanded_moves = int(ctr[C_EXPANDED])
        st.transpositions = int(ctr[C_TRANSPOSITIONS])
        st.generated_nodes = int(ctr[C_GENERATED])
        st.tested_nodes = int(ctr[C_TESTED])
        st.cells = int(ctr[C_CELLS])
        st.pi_corral_nodes = int(ctr[C_PI_CORRAL_NODES])
        for a, name in enumerate(ADVISORS):
            st.advisor_hits[name] = int(ctr[C_ADVISOR + a])
        for kind, name in DEADLOCK_NAMES.items():
            st.deadlocks[name] = int(self.kinds[kind])
        return Outcome(
            status,
            pushes,
            nodes=st.expanded_moves,
            generated=st.nodes,
            stats=st.as_dict(),
        )


__all__ = ["DEADLOCK_NAMES", "FessRun", "FessStats", "NodeMoves"]
