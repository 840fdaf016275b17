"""Push permutations: reorder the best solution's pushes so the player walks less.

Terms. Boxes are told apart by replaying the pushes (box b is the box that starts on
``board.start_boxes[b]``). A *same-box run* is a maximal stretch of consecutive pushes of one
box; "AAABBCCBAD" has the runs AAA, BB, CC, B, A, D. Every candidate keeps each box's own pushes
in their order, so the square pushes stay meaningful and the number of pushes never changes; the
replay decides whether the new order is legal. Three strategies, iterated until a whole round
finds nothing (after the push-permutation blog post in ``references/search-blog-posts.txt``):

1. Swap neighbours: two neighbouring pushes of different boxes change places.
2. Move a run forward: at the start of each run, the first later run of every other box is
   moved in front of it ("AAABBCCBAD" -> "BBAAACCBAD", "CCAAABBBAD", "DAAABBCCBA").
3. Gather: after a push whose successor moves another box, the longest possible prefix of that
   box's next run is moved right behind it ("AAABBAAA" -> "AAAAAABB", "AAAAABBA", "AAAABBAA").

Each strategy keeps the first improving candidate and goes on from there. Candidates are
scored by replaying only the changed window (``_kernels.permute``); ``ctx.offer`` replays the
whole sequence before anything is kept.

Options (``options={"permutations": {...}}``): ``max_span`` (default 200), the most pushes a
block is moved over.
"""

from __future__ import annotations

import numpy as np

from planners._kernels.permute import trace_pushes, window_moves
from planners._kernels.replay import WalkScratch
from planners.optimizers.context import OptimizeContext
from soko_gym.engine.constants import SQUARE_DTYPE

METHOD = "permutations"
DEFAULT_MAX_SPAN = 200


class PushTrace:
    """The best solution replayed: who is pushed, what each push costs, every position.

    Attributes:
        codes: int32[k] the square pushes traced (``square * 4 + direction``).
        box_of: int32[k] index of the box each push moves.
        cum: int64[k + 1] moves before push i (``cum[k]``: the solution's moves).
        boxes: int32[k + 1, n_boxes] square of each box before push i.
        players: int32[k + 1] player square before push i.
    """

    def __init__(self, ctx: OptimizeContext, codes: np.ndarray) -> None:
        """Replay ``codes`` (a solution of ``ctx.level``) with the evaluator's scratch buffers."""
        board = ctx.level.board
        ev = ctx.evaluator
        self._ctx = ctx
        self._scratch = WalkScratch(ev.box_at, ev.stamps, ev.queue, ev.dist)
        self.codes = np.ascontiguousarray(codes, dtype=SQUARE_DTYPE)
        box_of, cost, boxes, players, bad = trace_pushes(
            board.cells,
            board.offsets,
            board.start_boxes,
            int(board.start_player),
            self.codes,
            self._scratch,
        )
        if bad >= 0:
            raise ValueError(f"push {bad} of the traced sequence is illegal")
        self.box_of = box_of
        self.cum = np.concatenate(([0], np.cumsum(cost)))
        self.boxes = boxes
        self.players = players

    @property
    def n_pushes(self) -> int:
        """Pushes of the traced sequence."""
        return int(self.codes.shape[0])

    @property
    def moves(self) -> int:
        """Moves of the traced sequence."""
        return int(self.cum[-1])

    def run_end(self, start: int) -> int:
        """End (exclusive) of the same-box run that contains push ``start``, from there on."""
        k = self.n_pushes
        end = start + 1
        while end < k and self.box_of[end] == self.box_of[start]:
            end += 1
        return end

    def score(self, candidate: np.ndarray, lo: int, end: int) -> tuple[int | None, int]:
        """Moves of a reordering of the traced pushes that differs only inside ``[lo, end)``.

        Args:
            candidate: int32[k] the traced codes with ``[lo, end)`` permuted, each box's own
                pushes kept in order.
            lo, end: the changed window.

        Returns:
            (moves, or None when the candidate is illegal; index of its first illegal push or -1).
        """
        ctx = self._ctx
        board = ctx.level.board
        hi = min(end + 1, self.n_pushes)
        moves, bad = window_moves(
            board.cells,
            board.offsets,
            self.boxes[lo],
            int(self.players[lo]),
            candidate,
            lo,
            hi,
            self._scratch,
        )
        if bad >= 0:
            return None, int(bad)
        return int(self.cum[lo] + moves + self.cum[-1] - self.cum[hi]), -1


class _Permuter:
    """Runs the three strategies on ``ctx.best``, retracing after every improvement."""

    def __init__(self, ctx: OptimizeContext, max_span: int) -> None:
        self.ctx = ctx
        self.max_span = max_span
        self.trace = PushTrace(ctx, ctx.best)

    def try_candidate(self, candidate: np.ndarray, lo: int, end: int, detail: str) -> bool:
        """Offer ``candidate`` when its window score beats the best; retrace if it is kept."""
        moves, _ = self.trace.score(candidate, lo, end)
        if moves is None or moves >= self.trace.moves:
            return False
        if not self.ctx.offer(candidate, detail):
            return False
        self.trace = PushTrace(self.ctx, self.ctx.best)
        return True

    def swap_neighbours(self) -> int:
        """Strategy 1: swap neighbouring pushes of different boxes; returns improvements."""
        found = 0
        i = 0
        while i < self.trace.n_pushes - 1 and not self.ctx.out_of_time():
            t = self.trace
            if t.box_of[i] != t.box_of[i + 1]:
                cand = t.codes.copy()
                cand[i], cand[i + 1] = t.codes[i + 1], t.codes[i]
                if self.try_candidate(cand, i, i + 2, f"swap {i}"):
                    found += 1
                    i = max(i - 1, 0)
                    continue
            i += 1
        return found

    def move_runs_forward(self) -> int:
        """Strategy 2: move the next run of every other box before the current run."""
        found = 0
        start = 0
        while start < self.trace.n_pushes and not self.ctx.out_of_time():
            t = self.trace
            k = t.n_pushes
            seen = {int(t.box_of[start])}
            other = t.run_end(start)
            improved = False
            while other < k and other - start <= self.max_span and not improved:
                other_end = t.run_end(other)
                box = int(t.box_of[other])
                if box not in seen:
                    seen.add(box)
                    cand = np.concatenate(
                        (
                            t.codes[:start],
                            t.codes[other:other_end],
                            t.codes[start:other],
                            t.codes[other_end:],
                        )
                    )
                    improved = self.try_candidate(cand, start, other_end, f"run {other}->{start}")
                other = other_end
            if improved:
                found += 1
                continue
            start = t.run_end(start)
        return found

    def gather_runs(self) -> int:
        """Strategy 3: after a run, pull the longest possible prefix of the box's next run."""
        found = 0
        i = 0
        while i < self.trace.n_pushes - 1 and not self.ctx.out_of_time():
            t = self.trace
            k = t.n_pushes
            box = t.box_of[i]
            improved = False
            if t.box_of[i + 1] != box:
                later = np.flatnonzero(t.box_of[i + 1 : min(k, i + 1 + self.max_span)] == box)
                if later.size:
                    j = i + 1 + int(later[0])
                    for length in range(t.run_end(j) - j, 0, -1):
                        cand = np.concatenate(
                            (
                                t.codes[: i + 1],
                                t.codes[j : j + length],
                                t.codes[i + 1 : j],
                                t.codes[j + length :],
                            )
                        )
                        if self.try_candidate(cand, i + 1, j + length, f"gather {j}->{i + 1}"):
                            improved = True
                            break
                        if self.ctx.out_of_time():
                            break
            if improved:
                found += 1
                continue
            i += 1
        return found


def improve(ctx: OptimizeContext) -> None:
    """Apply the three permutation strategies to ``ctx.best`` until a round finds nothing."""
    options = ctx.options.get(METHOD, {})
    max_span = int(options.get("max_span", DEFAULT_MAX_SPAN))
    if ctx.best_pushes < 2:
        return
    permuter = _Permuter(ctx, max_span)
    while not ctx.out_of_time():
        found = permuter.swap_neighbours()
        found += permuter.move_runs_forward()
        found += permuter.gather_runs()
        if not found:
            return
