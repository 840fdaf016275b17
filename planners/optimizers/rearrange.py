"""Rearrangement: move later pushes forward to where they are already legal, cut out cycles.

Terms (boxes are told apart as in ``permutations``). A *same-box run* is a maximal stretch of
consecutive pushes of one box; a *box session* is the same stretch seen as the player's visit
to that box, so "breaking a box session" means inserting pushes inside a run. Following the
"Rearrangements" section of ``references/yaso-optimizer-notes.txt``: for each position P on the
best path (before push p) and each box B, take B's pushes after P one more at a time,
``B1 .. Bn``; if they can all be played at P, try the path ``... B1 .. Bn S1 .. Ss X ...``
where ``X`` are the other pushes between P and ``Bn`` in their order and ``S1 .. Ss`` are zero
or more of the pushes that immediately followed ``Bn``; keep the first improvement. On
solutions longer than ``session_limit`` pushes, P is only a position where a box session ends,
which damps the growth on large levels.

A *cycle* is a stretch of the path that returns to a position it passed (same box squares,
player in the same region, i.e. the same normalized player square = smallest square he
reaches); its pushes are dropped. This is the one way the method reduces pushes.

Options (``options={"rearrange": {...}}``): ``session_limit`` (default 1500),
``max_successors`` (default 8), ``max_span`` (default 300, the most pushes a block is moved
over).
"""

from __future__ import annotations

import numpy as np

from planners._kernels.permute import position_keys
from planners.optimizers.context import OptimizeContext
from planners.optimizers.permutations import PushTrace

METHOD = "rearrange"
DEFAULT_SESSION_LIMIT = 1500
DEFAULT_MAX_SUCCESSORS = 8
DEFAULT_MAX_SPAN = 300


def cut_cycles(ctx: OptimizeContext) -> int:
    """Drop the pushes between two visits of one position on ``ctx.best``; returns cuts kept."""
    board = ctx.level.board
    ev = ctx.evaluator
    kept = 0
    i = 0
    while not ctx.out_of_time():
        trace = PushTrace(ctx, ctx.best)
        hashes, norm = position_keys(
            board.zobrist, board.offsets, trace.boxes, trace.players, ev.box_at, ev.stamps, ev.queue
        )
        last: dict[tuple[int, int], int] = {}
        for j, key in enumerate(zip(hashes.tolist(), norm.tolist(), strict=True)):
            last[key] = j
        cut = False
        while i < trace.n_pushes and not cut:
            j = last[(int(hashes[i]), int(norm[i]))]
            if j > i and np.array_equal(np.sort(trace.boxes[i]), np.sort(trace.boxes[j])):
                cand = np.concatenate((trace.codes[:i], trace.codes[j:]))
                cut = ctx.offer(cand, f"cycle {i}..{j}")
            if not cut:
                i += 1
        if not cut:
            return kept
        kept += 1


class _Rearranger:
    """Moves blocks of later pushes forward on ``ctx.best``, retracing after improvements."""

    def __init__(self, ctx: OptimizeContext, max_successors: int, max_span: int) -> None:
        self.ctx = ctx
        self.max_successors = max_successors
        self.max_span = max_span
        self.trace = PushTrace(ctx, ctx.best)

    def retrace(self) -> None:
        """Cut cycles on the new best path and trace it again."""
        cut_cycles(self.ctx)
        self.trace = PushTrace(self.ctx, self.ctx.best)

    def improve_at(self, p: int) -> bool:
        """Try moving pushes of each box forward to before push ``p``; True on an improvement."""
        t = self.trace
        k = t.n_pushes
        stop = min(k, p + self.max_span + 1)
        window = t.box_of[p:stop]
        boxes, first = np.unique(window, return_index=True)
        for box in boxes[np.argsort(first)].tolist():
            if self.ctx.out_of_time():
                return False
            if self.move_box_forward(p, stop, box):
                return True
        return False

    def move_box_forward(self, p: int, stop: int, box: int) -> bool:
        """Try ``B1 .. Bn S1 .. Ss X`` at ``p`` for the pushes of ``box`` in ``[p, stop)``."""
        t = self.trace
        k = t.n_pushes
        mine = p + np.flatnonzero(t.box_of[p:stop] == box)
        for n in range(1, mine.size + 1):
            last = int(mine[n - 1])
            span = np.arange(p, last + 1)
            others = span[t.box_of[p : last + 1] != box]
            if others.size == 0:
                continue  # B1 .. Bn already follow P: nothing moves
            block = t.codes[mine[:n]]
            rest = t.codes[others]
            for s in range(min(self.max_successors, k - last - 1) + 1):
                if self.ctx.out_of_time():
                    return False
                after = last + 1 + s
                cand = np.concatenate((t.codes[:p], block, t.codes[last + 1 : after], rest))
                cand = np.concatenate((cand, t.codes[after:]))
                moves, bad = t.score(cand, p, after)
                if moves is None:
                    if bad < p + n:
                        return False  # B1 .. Bn cannot be played at P, nor can more of them
                    if bad < p + n + s:
                        break  # the successors cannot follow; more of them cannot either
                    continue
                if moves < t.moves and self.ctx.offer(cand, f"{n}+{s} pushes of box {box} -> {p}"):
                    self.retrace()
                    return True
        return False


def improve(ctx: OptimizeContext) -> None:
    """Cut cycles, then rearrange pushes along the best path until a sweep finds nothing."""
    options = ctx.options.get(METHOD, {})
    session_limit = int(options.get("session_limit", DEFAULT_SESSION_LIMIT))
    max_successors = int(options.get("max_successors", DEFAULT_MAX_SUCCESSORS))
    max_span = int(options.get("max_span", DEFAULT_MAX_SPAN))
    cut_cycles(ctx)
    if ctx.best_pushes < 2:
        return
    worker = _Rearranger(ctx, max_successors, max_span)
    while not ctx.out_of_time():
        found = 0
        p = 0
        while p < worker.trace.n_pushes - 1 and not ctx.out_of_time():
            t = worker.trace
            whole_sessions = t.n_pushes > session_limit
            if whole_sessions and p > 0 and t.box_of[p - 1] == t.box_of[p]:
                p += 1
                continue
            if worker.improve_at(p):
                found += 1
                continue
            p += 1
        if not found:
            return
