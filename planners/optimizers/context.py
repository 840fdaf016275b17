"""What every optimization method works with: square pushes, move counts, the offer context.

A solution is handled as its *square pushes* (``square * 4 + direction`` on the level's
board); its moves are the pushes plus the shortest walk before each push (``_kernels.replay``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planners._kernels.replay import replay_pushes
from soko_gym.engine.constants import BOX_AT_DTYPE, SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps
from soko_gym.levels import Level, lurd_to_pushes, pushes_to_lurd

METRICS = ("moves", "pushes")


def encode(level: Level, lurd: str) -> np.ndarray:
    """The square pushes (``square * 4 + direction`` on ``level.board``) of a LURD string."""
    return np.array([sq * 4 + d for sq, d in lurd_to_pushes(level, lurd)], dtype=SQUARE_DTYPE)


def decode(level: Level, codes: np.ndarray) -> str:
    """LURD of square pushes, walking by shortest paths."""
    return pushes_to_lurd(level, [divmod(int(c), 4) for c in codes])


def path_positions(level: Level, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Box squares (sorted) and player square before each push and after the last.

    Returns:
        (int32[k + 1, n_boxes] sorted box squares, int32[k + 1] player squares); row i is the
        position before push i (row k: the solved position).
    """
    board = level.board
    k = len(codes)
    boxes = np.empty((k + 1, board.n_boxes), dtype=SQUARE_DTYPE)
    players = np.empty(k + 1, dtype=SQUARE_DTYPE)
    cur = set(board.start_boxes.tolist())
    player = int(board.start_player)
    for i, code in enumerate(np.asarray(codes).tolist()):
        boxes[i] = sorted(cur)
        players[i] = player
        sq, d = divmod(code, 4)
        cur.remove(sq)
        cur.add(sq + int(board.offsets[d]))
        player = sq
    boxes[k] = sorted(cur)
    players[k] = player
    return boxes, players


def metric_key(metric: str, moves: int, pushes: int) -> tuple[int, int]:
    """Sort key of a solution under ``metric`` (smaller is better)."""
    return (moves, pushes) if metric == "moves" else (pushes, moves)


class Evaluator:
    """Moves of push sequences on one level (scratch buffers kept between calls)."""

    def __init__(self, level: Level) -> None:
        board = level.board
        self.board = board
        self.box_at = np.full(board.n_cells, -1, dtype=BOX_AT_DTYPE)
        self.stamps = new_stamps(board.cells)
        self.queue = np.empty(board.n_cells, dtype=SQUARE_DTYPE)
        self.dist = np.empty(board.n_cells, dtype=SQUARE_DTYPE)
        self.calls = 0

    def moves(self, codes: np.ndarray) -> int | None:
        """Moves of ``codes`` with shortest walks, or None if it is illegal or does not solve."""
        self.calls += 1
        b = self.board
        moves, bad, solved = replay_pushes(
            b.cells,
            b.offsets,
            b.start_boxes,
            int(b.start_player),
            np.ascontiguousarray(codes, dtype=SQUARE_DTYPE),
            self.box_at,
            self.stamps,
            self.queue,
            self.dist,
        )
        return int(moves) if bad < 0 and solved else None


@dataclass
class MethodStats:
    """What one method did over the whole run.

    Attributes:
        seconds: time spent in the method.
        rounds: calls by the scheduler.
        improvements: candidates that beat the best solution.
        candidates: candidates offered.
    """

    seconds: float = 0.0
    rounds: int = 0
    improvements: int = 0
    candidates: int = 0


@dataclass
class OptimizeContext:
    """What a method works with: the level, the best solution so far, its budget.

    Attributes:
        level: the level.
        metric: "moves" or "pushes".
        evaluator: scores push sequences.
        best: square pushes of the best solution (int32[k]).
        best_moves: its moves.
        deadline: ``time.perf_counter()`` value at which the method must return (None: none).
        stats: the running method's statistics.
        progress: called with (method, detail, moves, pushes) when something improves.
        options: method options from ``optimize(..., options=...)``.
    """

    level: Level
    metric: str
    evaluator: Evaluator
    best: np.ndarray
    best_moves: int
    deadline: float | None
    stats: MethodStats
    progress: Callable[[str, str, int, int], None] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    method: str = ""

    @property
    def best_pushes(self) -> int:
        """Pushes of the best solution."""
        return int(self.best.shape[0])

    def key(self) -> tuple[int, int]:
        """Sort key of the best solution."""
        return metric_key(self.metric, self.best_moves, self.best_pushes)

    def out_of_time(self) -> bool:
        """True when the method's time share is spent."""
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def offer(self, codes: np.ndarray, detail: str = "") -> bool:
        """Keep ``codes`` if it is a solution better than the best; returns whether it was."""
        self.stats.candidates += 1
        moves = self.evaluator.moves(codes)
        if moves is None or metric_key(self.metric, moves, len(codes)) >= self.key():
            return False
        self.best = np.array(codes, dtype=SQUARE_DTYPE)
        self.best_moves = moves
        self.stats.improvements += 1
        if self.progress is not None:
            self.progress(self.method, detail, moves, len(codes))
        return True


@dataclass(frozen=True)
class OptimizeResult:
    """An optimized solution and how it was reached.

    Attributes:
        lurd: the optimized solution (verified).
        moves, pushes: its figures.
        input_moves, input_pushes: the input's figures.
        metric: the metric optimized.
        seconds: wall time.
        interrupted: True when Ctrl-C stopped the run (the result is the best found by then).
        methods: per-method statistics.
    """

    lurd: str
    moves: int
    pushes: int
    input_moves: int
    input_pushes: int
    metric: str
    seconds: float
    interrupted: bool
    methods: dict[str, MethodStats]

    def as_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "lurd": self.lurd,
            "moves": self.moves,
            "pushes": self.pushes,
            "input_moves": self.input_moves,
            "input_pushes": self.input_pushes,
            "metric": self.metric,
            "seconds": round(self.seconds, 6),
            "interrupted": self.interrupted,
            "methods": {k: vars(v) for k, v in self.methods.items()},
        }
