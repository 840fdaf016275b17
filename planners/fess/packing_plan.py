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

The basins and the ranked sink rooms are ``planners.fess.basins``; the backward search is
``planners.fess.pull_search``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from planners._kernels.fess import UNORDERED
from planners.fess.basins import push_reachable, ranked_sinks, target_basins, walk_distance_from
from planners.fess.pull_search import PullNode, PullSearch
from planners.fess.rooms import Rooms, analyze_rooms
from soko_gym.engine.board import Board
from soko_gym.engine.constants import DIST_INF, GOAL, SQUARE_DTYPE

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
        search = PullSearch(board, near, sink, start_box, reachable)
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


def _target_order(best: PullNode, board: Board, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _plan_from(best: PullNode, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
