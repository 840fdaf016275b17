"""Moves-optimal solutions of small levels: ``fewest_moves(level, lurd)``, proven or not.

The planners find push-optimal solutions (astar, bfs, idastar); none minimises moves. This
module does, on levels whose reachable positions fit a budget: from a known solution it grows
the push neighbourhood of the global optimizer (``optimizers/global_search.py``) until no new
position appears, which makes it every position reachable from the start with no box on a dead
square, then runs the optimizers' breadth-first search over player steps (fewest moves, then
fewest pushes; ``optimizers/vicinity.py``) inside that set from the start to the solved boxes.
A box on a dead square can never reach a goal, so the solution found has the fewest moves of
all solutions: status "optimal". When the positions pass the budget the answer is "too_large",
when the time runs out "timeout"; neither gives moves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from planners.optimizers.context import (
    Evaluator,
    MethodStats,
    OptimizeContext,
    decode,
    encode,
    path_positions,
)
from planners.optimizers.global_search import grow_neighbourhood
from planners.optimizers.vicinity import search_set
from soko_gym.errors import SolutionError
from soko_gym.levels import Level, verify

MAX_POSITIONS = 2_000_000  # positions (box configuration, player area) of the whole level
MEMORY_MB = 512.0  # the position set, the visited bits, the queue and the push nodes


@dataclass(frozen=True)
class FewestMoves:
    """What ``fewest_moves`` found.

    Attributes:
        status: "optimal" (``lurd`` has the fewest moves, then the fewest pushes, of every
            solution), "too_large" (more positions or memory than the budget) or "timeout".
        lurd: the moves-optimal solution ("" unless optimal).
        moves, pushes: its figures (0 unless optimal).
        configurations: box configurations of the set grown (every reachable one, when
            optimal).
        seconds: wall time.
    """

    status: str
    lurd: str = ""
    moves: int = 0
    pushes: int = 0
    configurations: int = 0
    seconds: float = 0.0

    @property
    def optimal(self) -> bool:
        """True when ``lurd`` is proven moves-optimal."""
        return self.status == "optimal"


def fewest_moves(
    level: Level,
    lurd: str,
    *,
    max_seconds: float | None = None,
    max_positions: int = MAX_POSITIONS,
    memory_mb: float = MEMORY_MB,
) -> FewestMoves:
    """A moves-optimal solution of ``level``, searched from the solution ``lurd``.

    Args:
        level: the level.
        lurd: any solution of it (the search starts from its positions).
        max_seconds: wall-clock budget (None: none).
        max_positions: give up ("too_large") when the level has more reachable positions.
        memory_mb: give up when the search's arrays need more.

    Raises:
        SolutionError: when ``lurd`` is not a solution of ``level``.
    """
    start = time.perf_counter()
    check = verify(level, lurd)
    if not check.ok:
        raise SolutionError(check.reason, check.index if check.index is not None else len(lurd))
    if check.pushes == 0:  # already solved: nothing to move
        return FewestMoves("optimal", "", 0, 0, 1, time.perf_counter() - start)
    deadline = None if max_seconds is None else start + max_seconds
    evaluator = Evaluator(level)
    codes = encode(level, lurd)
    moves = evaluator.moves(codes)
    assert moves is not None  # verified above
    ctx = OptimizeContext(level, "moves", evaluator, codes, moves, deadline, MethodStats())
    memory = int(memory_mb * 2**20)
    configs, closed = grow_neighbourhood(ctx, max_positions, memory // 4)

    def stop(status: str) -> FewestMoves:
        return FewestMoves(status, configurations=len(configs), seconds=time.perf_counter() - start)

    if not closed:
        return stop("timeout" if ctx.out_of_time() else "too_large")
    boxes, players = path_positions(level, codes)
    found = search_set(ctx, configs, boxes[0], int(players[0]), boxes[-1], -1, memory)
    if found is None:  # the set is closed, so the target is in it: out of time or memory
        return stop("timeout" if ctx.out_of_time() else "too_large")
    best = decode(level, found)
    result = verify(level, best)
    assert result.ok, "the set search returned a push sequence that does not solve the level"
    return FewestMoves(
        "optimal", best, result.moves, result.pushes, len(configs), time.perf_counter() - start
    )
