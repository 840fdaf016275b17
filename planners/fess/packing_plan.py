"""The packing plan: in what order boxes fill the targets, and where some park first (Section 6).

Terms (Shoham, "Solving Sokoban by Searching in Feature-Space", Section 6):

- *Basin* of a target: the squares from which a lone box can reach that target with the board
  in its final position (every other target holding a box, here a wall).
- *Sink room*: a room near the targets assumed to hold any number of boxes. Each target's basin
  is associated with the first room without targets that a box pulled off the target meets
  (the nearest by walking distance); the sink room is the room of the basin holding the most
  boxes of the initial position. Levels whose targets have no such room (targets in every
  room, or no rooms) get no sink: rule 1 never applies and the basin is the union of all
  targets' basins. The paper's choice is a guess; when its search cannot empty the targets,
  the runners-up are tried (``compute_packing_plan``).
- *Fed sink rooms*: the rooms some target's basin meets first. The paper takes one; a level
  whose targets are fed from several areas (two ways into a target room, each from its own
  part of the level) needs each of them, and its other boxes start out of plan, far from the
  one basin. ``sinks="all"`` makes every fed room a sink at once: a box pulled into any of
  them leaves the board, and the basin is the union of their basins.
- *Packing plan search*: a backward FESS search. It starts from the solved position (one root
  per player region) and pulls boxes. Rule 1: when a box can be pulled into the sink room it
  leaves the board, and other moves are not generated. Rule 2: otherwise pull boxes far from
  the targets; the *distance score* of a position is the sum over boxes of their walking
  distance to the nearest target. Feature space: (boxes on the board, boxes on targets), both
  to be made small. One advisor: pull a box off a target as far as possible, provided
  connectivity does not worsen and the box ends on a square where a forward push can leave a
  movable box (not a dead square, not frozen off target) or on a square holding a box in the
  initial position. Ties go to the larger distance score. A pull never ends on a square no box
  of the initial position can be pushed to (``push_reachable``): the reversed plan would ask
  for a box there, and a box pulled into such a pocket could never leave it in a plan either
  (XSokoban 14 lost its plan to one).
- *Plan* (with a sink room): the search's best position (fewest boxes *held*: left on the
  board off the squares boxes start on; then fewest boxes on the board, fewest on targets, the
  largest distance score) and the pulls leading to it, reversed. A box left on a start square
  is the paper's parking "on a square holding a box in the initial position": the start
  itself realises that step, so a plan holding only such boxes is complete (XSokoban 14's
  upper room; before, a box pulled down a corridor ranked above it and was a step to make).
  Boxes the best position still holds come first (parked or packed where they are); then each
  pull, reversed, becomes a step filling the square the pull started from. A box that was not
  pulled into the sink comes from the square the pull ended on (a parking square), otherwise
  from outside the plan.
  Without a sink room the plan holds the targets only: never-vacated targets first (farthest
  from the start squares first), then the others in the reverse of the order the backward
  search first vacated them. That search's budget is its own (``sinkless_nodes``): without a
  sink its later positions are only boxes far from the targets, so a short search keeps the
  order to what its first pulls show.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from planners._kernels.fess import UNORDERED, count_regions, pull_closure
from planners._kernels.fess_moves import (
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
from planners.fess.rooms import Rooms, analyze_rooms
from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_INF, FLOOR, GOAL, SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps, reach_player

ADVISOR_WEIGHT = 0
OTHER_WEIGHT = 1
SINKLESS = ("ordered", "unordered")  # the plans of a level without a sink room
SINKS = ("one", "all")  # one sink room at a time, or every fed sink room at once


@dataclass(frozen=True, eq=False)
class PackingPlan:
    """A packing plan with the sink room and basin it was computed for.

    Attributes:
        src: int32[n_steps] square each step takes its box from (an earlier step's parking
            square), -1 for a box from outside the plan.
        dst: int32[n_steps] square each step fills: a target or a parking square.
        basin: uint8[n_cells] 1 on the sink basin's squares (the out-of-plan feature's basin).
        sink: uint8[n_cells] 1 on the sink room's squares; all 0 without a sink room.
        sink_room: index of the sink room in ``Rooms``, -1 without one (with several sink
            rooms, the first of ``sink_rooms``).
        complete: True when every box the backward search did not pull into the sink room
            stands on a square a box starts on (with a sink room only).
        nodes: positions the backward search stored.
        seconds: time the computation took.
        left: boxes the plan's backward position still holds on the board (parked or packed
            where they stand; 0: every box came through the sink room).
    """

    src: np.ndarray
    dst: np.ndarray
    basin: np.ndarray
    sink: np.ndarray
    sink_room: int
    complete: bool
    nodes: int
    seconds: float
    left: int = 0
    sink_rooms: tuple[int, ...] = ()  # every sink room of the plan (``sinks="all"``: fed rooms)

    @property
    def n_steps(self) -> int:
        """Number of steps in the plan."""
        return int(self.dst.shape[0])

    def describe(self, board: Board) -> list[str]:
        """The steps as text: ``"(r, c) -> (r, c)"``, or ``"in -> (r, c)"`` for a new box."""
        out = []
        for s, d in zip(self.src.tolist(), self.dst.tolist(), strict=True):
            frm = "in" if s < 0 else str(board.row_col(s))
            out.append(f"{frm} -> {board.row_col(d)}")
        return out


def walk_distance_from(board: Board, sources: np.ndarray) -> np.ndarray:
    """Walking distance (boxes ignored) of each square to the nearest of ``sources``: int32."""
    n = board.n_cells
    dist = np.full(n, DIST_INF, dtype=np.int32)
    frontier = [int(s) for s in sources]
    for s in frontier:
        dist[s] = 0
    offsets = [int(o) for o in board.offsets]
    is_floor = (board.cells & FLOOR) != 0
    d = 0
    while frontier:
        d += 1
        nxt = []
        for sq in frontier:
            for o in offsets:
                nb = sq + o
                if is_floor[nb] and dist[nb] == DIST_INF:
                    dist[nb] = d
                    nxt.append(nb)
        frontier = nxt
    return dist


def target_basins(board: Board) -> np.ndarray:
    """The basin of every target (module docstring): uint8[n_goals, n_cells]."""
    n = board.n_cells
    box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
    box_at[board.goals] = 0
    stamps = new_stamps(board.cells)
    stack = np.zeros(n, dtype=SQUARE_DTYPE)
    seen = np.zeros(4 * n, dtype=np.uint8)
    queue = np.zeros(4 * n, dtype=SQUARE_DTYPE)
    out = np.zeros((board.goals.shape[0], n), dtype=np.uint8)
    for g, goal in enumerate(board.goals.tolist()):
        box_at[goal] = -1
        pull_closure(board.cells, box_at, board.offsets, goal, stamps, stack, seen, queue)
        box_at[goal] = 0
        out[g] = seen.reshape(n, 4).any(axis=1)
    return out


def push_reachable(board: Board) -> np.ndarray:
    """bool[n_cells]: squares some box of the initial position could be pushed to, alone.

    Player access is relaxed (a push needs only floor behind the box), so the set is a superset
    of the truth: a square outside it can hold a box in no position reachable from the start.
    """
    cells = board.cells
    offsets = board.offsets.tolist()
    ok = np.zeros(board.n_cells, dtype=bool)
    stack = board.start_boxes.tolist()
    ok[stack] = True
    while stack:
        sq = stack.pop()
        for d in offsets:
            ahead = sq + d
            if ok[ahead] or not (cells[ahead] & FLOOR) or not (cells[sq - d] & FLOOR):
                continue
            if board.dead[ahead]:
                continue
            ok[ahead] = True
            stack.append(ahead)
    return ok


def sink_candidates(board: Board, rooms: Rooms, basins: np.ndarray) -> list[tuple[int, int]]:
    """Sink rooms to try, best first, each with the target whose basin it serves.

    First the paper's choice and its runners-up, the fed sink rooms (``ranked_sinks``). Then
    every other room without targets that some basin meets, ranked by the boxes it holds at
    the start. Empty when no room qualifies.
    """
    fed, rest = ranked_sinks(board, rooms, basins)
    return fed + rest


def ranked_sinks(
    board: Board, rooms: Rooms, basins: np.ndarray
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The fed sink rooms and the other rooms some basin meets, each with a target it serves.

    Fed: per target, the room its basin meets first (nearest by walking distance, rooms
    holding targets excluded); ranked by the boxes of the initial position in that basin, then
    by the basin's size. The first is the paper's sink room. Other: every other room without
    targets that some basin meets, ranked by the boxes it holds at the start.
    """
    goal_rooms = {int(rooms.room_id[g]) for g in board.goals.tolist()} - {-1}
    start = np.zeros(board.n_cells, dtype=bool)
    start[board.start_boxes] = True
    ranked: dict[int, tuple[tuple[int, int], int]] = {}  # room -> (key, goal)
    touched: dict[int, int] = {}  # room -> a goal whose basin meets it
    for g, goal in enumerate(board.goals.tolist()):
        dist = walk_distance_from(board, np.array([goal]))
        basin = basins[g].astype(bool)
        candidates = basin & (rooms.room_id >= 0)
        candidates &= ~np.isin(rooms.room_id, list(goal_rooms))
        if not candidates.any():
            continue
        squares = np.flatnonzero(candidates)
        for r in np.unique(rooms.room_id[squares]).tolist():
            touched.setdefault(int(r), g)
        room = int(rooms.room_id[squares[np.argmin(dist[squares])]])
        key = (int((basin & start).sum()), int(basin.sum()))
        if room not in ranked or key > ranked[room][0]:
            ranked[room] = (key, g)
    order = sorted(ranked.items(), key=lambda kv: (-kv[1][0][0], -kv[1][0][1], kv[1][1]))
    out = [(room, g) for room, (_, g) in order]
    rest = [r for r in touched if r not in ranked]
    rest.sort(key=lambda r: (-int((start & (rooms.room_id == r)).sum()), r))
    return out, [(r, touched[r]) for r in rest]


def unordered_plan(board: Board) -> PackingPlan:
    """The plan "every target, in any order": packed boxes = boxes on targets.

    The paper's reading of packed boxes for simple levels. For levels whose targets lie in open
    rooms (no sink room, no parking), where an order from the backward search is one guess among
    many and a box on a target out of that order would count for nothing. The basin is every
    target's.
    """
    t0 = time.perf_counter()
    basins = target_basins(board)
    if basins.size:
        basin = basins.max(axis=0).astype(np.uint8)
    else:
        basin = np.zeros(board.n_cells, dtype=np.uint8)
    n = board.goals.shape[0]
    return PackingPlan(
        src=np.full(n, UNORDERED, dtype=SQUARE_DTYPE),
        dst=board.goals.astype(SQUARE_DTYPE),
        basin=basin,
        sink=np.zeros(board.n_cells, dtype=np.uint8),
        sink_room=-1,
        complete=True,
        nodes=0,
        seconds=time.perf_counter() - t0,
    )


class _PullNode:
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


def compute_packing_plan(
    board: Board,
    rooms: Rooms | None = None,
    max_nodes: int = 3000,
    max_seconds: float | None = 10.0,
    use_sink: bool = True,
    max_sinks: int = 4,
    sinkless: str = "ordered",
    sinks: str = "one",
    first_nodes: int | None = None,
    sinkless_nodes: int | None = None,
) -> PackingPlan:
    """Run the packing-plan search (module docstring) and return the plan.

    The paper's sink room comes first; when its search ends with boxes still on the board, the
    next candidates (``sink_candidates``) are tried, up to ``max_sinks`` rooms, each with the
    full node budget and all within ``max_seconds``. The first plan that empties the board is
    taken, else the one holding the fewest boxes off start squares, then the fewest boxes (the
    earliest candidate on a tie). The sink
    assumption is a guess about the level; a sink its search cannot empty the targets into is
    a wrong guess, and its incomplete plan would point the search's first two feature axes
    the wrong way.

    ``use_sink=False`` plans a level that has a sink room as one without (targets only, in the
    order the backward search vacates them; the basin is every target's): the variant for
    levels where the sink assumption misleads. A level without a sink room gets the
    ``sinkless`` plan either way.

    ``sinks="all"`` runs one search with every fed sink room as the sink (module docstring),
    on a level with at least two of them; other levels get the plan of ``sinks="one"``.

    Args:
        board: the level's static arrays.
        rooms: the level's rooms; computed when omitted.
        max_nodes: most positions the backward search stores, per sink room tried.
        max_seconds: time budget of the whole computation (None: no limit).
        use_sink: False plans a level with a sink room as one without (see above).
        max_sinks: most sink rooms tried (1: the paper's choice only).
        sinkless: the plan of a level without a sink room: "ordered" (the targets in the order
            the backward search vacates them) or "unordered" (``unordered_plan``).
        sinks: "one" (the paper: one sink room per search) or "all" (every fed sink room at
            once, see above).
        first_nodes: when larger than ``max_nodes``, the first sink room tried (the paper's
            choice, or the fed rooms together with ``sinks="all"``), if its plan is still
            incomplete at ``max_nodes``, searches on from there up to ``first_nodes``
            positions after the runners-up, in the time left, and its plan is taken when it ends as
            good as the best found (a plan complete at ``max_nodes`` is kept as it is). The
            paper's choice is then kept wherever its plan can be completed at all: XSokoban
            66's paper sink empties the targets through one door after 25,541 positions,
            and at 3,000 the runner-up's plan, which leaves 11 boxes out of plan, was taken.
        sinkless_nodes: the node budget of the "ordered" plan of a level without a sink room,
            None for ``max_nodes``. Without a sink the backward search's later positions are
            only boxes far from the targets, unrelated to the start; its first pulls say
            which targets empty first (to be filled last) and the targets never vacated are
            filled farthest from the start squares first. A small budget keeps the plan to
            that (FESS's default is 30: Microban IV 96 solved, and Microban IV complete
            within 60 s; benchmarks/RESULTS.md, item 43).
    """
    if sinkless not in SINKLESS:
        raise ValueError(f"sinkless must be one of {', '.join(SINKLESS)}, got {sinkless!r}")
    if sinks not in SINKS:
        raise ValueError(f"sinks must be one of {', '.join(SINKS)}, got {sinks!r}")
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be positive, got {max_nodes}")
    if max_sinks < 1:
        raise ValueError(f"max_sinks must be positive, got {max_sinks}")
    for name, value in (("first_nodes", first_nodes), ("sinkless_nodes", sinkless_nodes)):
        if value is not None and value < 1:
            raise ValueError(f"{name} must be positive, got {value}")
    t0 = time.perf_counter()
    deadline = None if max_seconds is None else t0 + max_seconds
    rooms = rooms if rooms is not None else analyze_rooms(board)
    basins = target_basins(board)
    fed, rest = ranked_sinks(board, rooms, basins)
    # each candidate: its sink rooms and the targets whose basins make its basin
    candidates = [((r,), (g,)) for r, g in (fed + rest)[:max_sinks]]
    if sinks == "all" and len(fed) >= 2:
        candidates = [(tuple(r for r, _ in fed), tuple(g for _, g in fed))]
    if not candidates and sinkless == "unordered":
        return unordered_plan(board)
    if not use_sink:
        candidates = []
    near = walk_distance_from(board, board.goals)
    near = np.where(near == DIST_INF, 0, near).astype(SQUARE_DTYPE)
    start_box = np.zeros(board.n_cells, dtype=np.uint8)
    start_box[board.start_boxes] = 1
    reachable = push_reachable(board)
    chosen = None
    nodes = 0
    papers = None  # the first candidate: its search (to go on with) and what it found
    no_sink_room = not fed and not rest
    budget = sinkless_nodes if no_sink_room and sinkless_nodes is not None else max_nodes
    for sink_rooms, sink_goals in candidates or [((), ())]:
        if chosen is not None and deadline is not None and time.perf_counter() > deadline:
            break
        sink = np.isin(rooms.room_id, sink_rooms).astype(np.uint8)
        search = _PullSearch(board, near, sink, start_box, reachable)
        best = search.run(budget, deadline)
        nodes += search.n_nodes
        papers = papers or (search, best, sink_rooms, sink_goals, sink)
        if chosen is None or (best.held, best.key[0]) < (chosen[0].held, chosen[0].key[0]):
            chosen = (best, sink_rooms, sink_goals, sink)
        if best.key[0] == 0:
            break
    deeper = first_nodes is not None and first_nodes > max_nodes
    in_time = deadline is None or time.perf_counter() < deadline
    if deeper and in_time and candidates and papers is not None and papers[1].held > 0:
        # the paper's choice, incomplete so far, searches on last (time left, nothing lost)
        # from where it stopped, and is taken when it ends as good as the best plan found
        search, _, sink_rooms, sink_goals, sink = papers
        shallow = search.n_nodes
        best = search.run(first_nodes, deadline)
        nodes += search.n_nodes - shallow
        assert chosen is not None
        if (best.held, best.key[0]) <= (chosen[0].held, chosen[0].key[0]):
            chosen = (best, sink_rooms, sink_goals, sink)
    assert chosen is not None
    best, sink_rooms, sink_goals, sink = chosen
    sink_room = sink_rooms[0] if sink_rooms else -1
    if sink_room >= 0:
        basin = basins[list(sink_goals)].max(axis=0).astype(np.uint8)
    else:
        basin = basins.max(axis=0).astype(np.uint8) if basins.size else np.zeros_like(sink)
    # boxes the best position still holds are filled first, the deepest (farthest from the
    # sink, or from the boxes' start squares without one) first
    depth = walk_distance_from(board, np.flatnonzero(sink) if sink_room >= 0 else board.start_boxes)
    if sink_room >= 0:
        src, dst = _plan_from(best, depth)
    else:
        src, dst = _target_order(best, board, depth)
    return PackingPlan(
        src=src,
        dst=dst,
        basin=basin,
        sink=sink,
        sink_room=sink_room,
        complete=best.held == 0,
        nodes=nodes,
        seconds=time.perf_counter() - t0,
        left=int(best.key[0]),
        sink_rooms=tuple(sink_rooms),
    )


class _PullSearch:
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
        self._steps: Iterator[_PullNode] | None = None

    def _load(self, node: _PullNode) -> None:
        self.box_at[:] = -1
        for b in np.flatnonzero(node.on_board).tolist():
            self.box_at[node.box_pos[b]] = b

    def _conn(self) -> int:
        b = self.board
        sc = self.scratch
        return int(count_regions(b.cells, self.box_at, b.offsets, b.floor, sc.label, sc.stack))

    def _expand_moves(self, node: _PullNode) -> None:
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

    def run(self, max_nodes: int, deadline: float | None) -> _PullNode:
        """Search until ``max_nodes`` positions in all or ``deadline``; the best position.

        A later call with a larger ``max_nodes`` goes on where this one stopped (the same
        positions as one call with the larger budget), so a deeper search repeats nothing.
        """
        self.limit, self.deadline = max_nodes, deadline
        if self._steps is None:
            self._steps = self._search()
        return next(self._steps)

    def _search(self) -> Iterator[_PullNode]:
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
        best: _PullNode | None = None
        tick = 0
        # with a sink, a box left on a square a box starts on is parked by the start itself;
        # without one, every box on the board is held
        parked = self.tables.start_box if self.tables.sink.any() else np.zeros(n, np.uint8)

        def add(node: _PullNode) -> None:
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
            add(_PullNode(box_pos, on_board, player, None, None, 0, root_key))
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
            child = _PullNode(
                child_pos, child_on, int(row[P_PLAYER]), node,
                (bx, int(row[P_SRC]), int(row[P_DST])), node.weight + w, ckey,
            )  # fmt: skip
            if child.cell > node.cell:  # worse: stays in its best ancestor's cell
                child.cell = node.cell
            add(child)


def _target_order(
    best: _PullNode, board: Board, depth: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Without a sink room: targets only, in the reverse of the order they were first vacated.

    The best backward position is then merely "boxes far from the targets", unrelated to the
    initial position, so its parking squares would mislead; the order of the targets holds.
    """
    pulls = []
    node = best
    while node.parent is not None:
        pulls.append(node.move)
        node = node.parent
    pulls.reverse()
    goal = (board.cells & GOAL) != 0
    first_vacated: dict[int, int] = {}
    for t, (_, a, _) in enumerate(pulls):
        if goal[a] and a not in first_vacated:
            first_vacated[a] = t
    kept = [g for g in board.goals.tolist() if g not in first_vacated]
    kept.sort(key=lambda sq: (-int(depth[sq]) if depth[sq] != DIST_INF else 0, sq))
    order = kept + sorted(first_vacated, key=lambda g: -first_vacated[g])
    return np.full(len(order), -1, dtype=SQUARE_DTYPE), np.array(order, dtype=SQUARE_DTYPE)


def _plan_from(best: _PullNode, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward plan steps (src, dst) from the best backward node (module docstring)."""
    pulls = []
    node = best
    while node.parent is not None:
        pulls.append(node.move)
        node = node.parent
    pulls.reverse()  # backward order: first pull first
    src: list[int] = []
    dst: list[int] = []
    held = [int(best.box_pos[b]) for b in np.flatnonzero(best.on_board).tolist()]
    held.sort(key=lambda sq: (-int(depth[sq]) if depth[sq] != DIST_INF else 0, sq))
    for sq in held:
        src.append(-1)
        dst.append(sq)
    for _, a, b in reversed(pulls):
        src.append(b if b >= 0 else -1)
        dst.append(a)
    return np.array(src, dtype=SQUARE_DTYPE), np.array(dst, dtype=SQUARE_DTYPE)
