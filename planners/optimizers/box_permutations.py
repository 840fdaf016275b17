"""Box permutations: re-plan short slices of the solution in which only N boxes move.

For each position X on the best path, the slice runs until the next N distinct boxes have been
pushed (ending at position Y, just before the first push of another box). A sub-search
(``_kernels.boxperm``) looks for a path from X to Y that pushes only those N boxes and is cheaper
under the metric, counting the walk to the square of the push that follows the slice; a path
found is spliced in. N starts at ``min_boxes`` and grows while each pass over the path ends
within the method's time share. Slices already searched without success are remembered for the
run, so later rounds only search slices that changed.

Options (``options={"box-permutations": {...}}``): ``min_boxes`` (default 1), ``max_boxes``
(default: the level's boxes), ``max_nodes`` per sub-search (default 200_000), ``chunk``
(expansions between clock checks, default 5_000).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from planners._kernels import boxperm
from planners._kernels.heap import Heap, new_heap
from planners._kernels.replay import new_walk_scratch
from planners._kernels.table import EMPTY, new_table, rehash
from planners.optimizers.context import Evaluator, OptimizeContext
from soko_gym.engine.board import Board
from soko_gym.engine.constants import SQUARE_DTYPE

METHOD = "box-permutations"

_TABLE_START = 1 << 12
_HEAP_START = 1 << 12
# Slices searched without success, per run (keyed by the run's evaluator).
_FAILED: weakref.WeakKeyDictionary[Evaluator, set[tuple]] = weakref.WeakKeyDictionary()


@dataclass
class _Path:
    """The best solution's positions, walks and box identities.

    Attributes:
        codes: int32[k] square pushes (``square * 4 + direction``).
        boxes: int32[k + 1, n_boxes] square of each box (by identity) before push i.
        players: int32[k + 1] player square before push i.
        ids: int64[k] identity of the box moved by push i.
        before: int64[k + 1] moves made before push i (walks and pushes).
        walks: int32[k + 1] shortest walk before push i (0 at k).
    """

    codes: np.ndarray
    boxes: np.ndarray
    players: np.ndarray
    ids: np.ndarray
    before: np.ndarray
    walks: np.ndarray


class _SliceSearch:
    """Buffers of the sub-search on one board, reused from one slice to the next."""

    def __init__(self, board: Board, max_nodes: int, chunk: int) -> None:
        self.board = boxperm.SliceBoard(
            board.cells, board.dead, board.offsets, board.zobrist, int(board.width)
        )
        self.start_boxes = board.start_boxes
        self.start_player = int(board.start_player)
        self.max_nodes = max_nodes
        self.chunk = chunk
        self.scratch = new_walk_scratch(board.cells)
        m = max_nodes
        self.nodes = boxperm.SliceNodes(
            sq=np.empty((m, 0), dtype=SQUARE_DTYPE),  # sized per slice (boxes moving)
            player=np.empty(m, dtype=SQUARE_DTYPE),
            parent=np.empty(m, dtype=SQUARE_DTYPE),
            sq_push=np.empty(m, dtype=SQUARE_DTYPE),
            g=np.empty(m, dtype=np.int64),
            f=np.empty(m, dtype=np.int64),
        )
        self.heap = new_heap(_HEAP_START)
        self.table = new_table(_TABLE_START)
        self.counters = np.zeros(boxperm.N_COUNTERS, dtype=np.int64)
        self.expanded = 0

    def walks(self, codes: np.ndarray) -> np.ndarray:
        """int32[k + 1]: shortest walk before each square push of ``codes`` (0 after the last)."""
        walks = np.empty(len(codes) + 1, dtype=SQUARE_DTYPE)
        bad = boxperm.push_walks(
            self.board,
            self.start_boxes,
            self.start_player,
            np.ascontiguousarray(codes, dtype=SQUARE_DTYPE),
            self.scratch,
            walks,
        )
        if bad >= 0:
            raise ValueError(f"push {bad} of the best solution is illegal")
        return walks

    def run(
        self,
        ctx: OptimizeContext,
        fixed: np.ndarray,
        start: np.ndarray,
        player: int,
        target: np.ndarray,
        stand: int,
        bound: int,
    ) -> np.ndarray | None:
        """Cheapest square pushes from (start, player) to target below ``bound``, or None.

        Args:
            ctx: the optimize context (its clock is polled between chunks).
            fixed: int32 squares of the boxes that stay put.
            start: int32[N] squares of the moving boxes at the slice's start, increasing.
            player: player square at the slice's start.
            target: int32[N] their squares at the slice's end, increasing.
            stand: square of the next push's player, or -1 at the end of the solution.
            bound: packed cost of the slice (``boxperm.SHIFT``); only cheaper paths count.
        """
        n = len(start)
        if self.nodes.sq.shape[1] != n:
            self.nodes = self.nodes._replace(sq=np.empty((self.max_nodes, n), dtype=SQUARE_DTYPE))
        if self.table.hashes.shape[0] > 16 * _TABLE_START:
            self.table = new_table(_TABLE_START)
        else:
            self.table.players.fill(EMPTY)
        nodes = self.nodes
        nodes.sq[0] = start
        nodes.player[0] = player
        counters = self.counters
        counters[:] = 0
        counters[boxperm.C_BEST_NODE] = -1
        counters[boxperm.C_BEST_KEY] = bound
        box_at = self.scratch.box_at
        box_at[fixed] = 0
        goal = boxperm.SliceGoal(target, int(stand), int(ctx.metric == "pushes"))
        try:
            while True:
                status = boxperm.search_slice(
                    self.board,
                    goal,
                    nodes,
                    self.heap,
                    self.table,
                    self.scratch,
                    counters,
                    int(self.chunk),
                )
                if status == boxperm.GROW_HEAP:
                    self._grow_heap()
                elif status == boxperm.GROW_TABLE:
                    self._grow_table()
                elif status == boxperm.RUNNING:
                    if ctx.out_of_time():
                        break
                else:
                    break
        finally:
            box_at[fixed] = -1
            self.expanded += int(counters[boxperm.C_EXPANDED])
        node = int(counters[boxperm.C_BEST_NODE])
        if node < 0:
            return None
        out = []
        while node > 0:
            out.append(int(nodes.sq_push[node]))
            node = int(nodes.parent[node])
        return np.array(out[::-1], dtype=SQUARE_DTYPE)

    def _grow_heap(self) -> None:
        cap = 2 * self.heap.keys.shape[0]
        size = int(self.counters[boxperm.C_HEAP])
        keys = np.empty(cap, dtype=np.int64)
        nodes = np.empty(cap, dtype=SQUARE_DTYPE)
        keys[:size] = self.heap.keys[:size]
        nodes[:size] = self.heap.nodes[:size]
        self.heap = Heap(keys, nodes)

    def _grow_table(self) -> None:
        bigger = new_table(2 * self.table.hashes.shape[0])
        rehash(*self.table, *bigger)
        self.table = bigger


def _trace(board: Board, codes: np.ndarray, search: _SliceSearch) -> _Path:
    """Positions, box identities and walks along ``codes``."""
    k = len(codes)
    boxes = np.empty((k + 1, board.n_boxes), dtype=SQUARE_DTYPE)
    ids = np.empty(k, dtype=np.int64)
    cur = board.start_boxes.astype(SQUARE_DTYPE)
    at = {int(sq): b for b, sq in enumerate(cur.tolist())}
    offsets = board.offsets.tolist()
    for i, code in enumerate(codes.tolist()):
        boxes[i] = cur
        sq, d = divmod(code, 4)
        b = at.pop(sq)
        ids[i] = b
        cur[b] = sq + offsets[d]
        at[int(cur[b])] = b
    boxes[k] = cur
    walks = search.walks(codes)
    before = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(walks[:k].astype(np.int64) + 1, out=before[1:])
    players = np.empty(k + 1, dtype=SQUARE_DTYPE)
    players[0] = board.start_player
    players[1:] = np.asarray(codes, dtype=np.int64) >> 2  # the pushed box's old square
    return _Path(np.asarray(codes, dtype=SQUARE_DTYPE), boxes, players, ids, before, walks)


def _slice_end(ids: np.ndarray, i: int, n: int) -> int:
    """End (exclusive) of the longest slice from push i that moves at most n distinct boxes."""
    seen: set[int] = set()
    j = i
    k = len(ids)
    while j < k:
        b = int(ids[j])
        if b not in seen:
            if len(seen) == n:
                break
            seen.add(b)
        j += 1
    return j


def _pass(ctx: OptimizeContext, n: int, search: _SliceSearch, failed: set[tuple]) -> bool:
    """One pass over the best path with n-box slices; False when time ran out."""
    board = ctx.level.board
    offsets = board.offsets.tolist()
    by_pushes = ctx.metric == "pushes"
    path = _trace(board, ctx.best, search)
    i = 0
    while i < len(path.codes):
        if ctx.out_of_time():
            return False
        k = len(path.codes)
        j = _slice_end(path.ids, i, n)
        movers = np.unique(path.ids[i:j])
        moves = int(path.before[j] - path.before[i] + path.walks[j])
        pushes = j - i
        bound = (
            (pushes << boxperm.SHIFT | moves) if by_pushes else (moves << boxperm.SHIFT | pushes)
        )
        start = np.sort(path.boxes[i, movers])
        target = np.sort(path.boxes[j, movers])
        if j < k:
            sq, d = divmod(int(path.codes[j]), 4)
            stand = sq - offsets[d]
        else:
            stand = -1
        fixed = np.delete(path.boxes[i], movers)
        player = int(path.players[i])
        key = (
            ctx.metric,
            np.sort(fixed).tobytes(),
            start.tobytes(),
            target.tobytes(),
            player,
            stand,
            bound,
        )
        if key in failed:
            i += 1
            continue
        found = search.run(ctx, fixed, start, player, target, stand, bound)
        if found is not None:
            codes = np.concatenate([path.codes[:i], found, path.codes[j:]])
            if ctx.offer(codes, f"{n} boxes, pushes {i}-{j}"):
                path = _trace(board, ctx.best, search)
                continue  # search the new slice at i
        if ctx.out_of_time():
            return False
        failed.add(key)
        i += 1
    return True


def improve(ctx: OptimizeContext) -> None:
    """Search n-box slices of the best path for cheaper sub-paths, n = 1, 2, ... while time lasts.

    Args:
        ctx: the optimize context; options from ``ctx.options["box-permutations"]``.
    """
    opts = ctx.options.get(METHOD, {})
    board = ctx.level.board
    first = max(1, int(opts.get("min_boxes", 1)))
    last = int(opts.get("max_boxes", board.n_boxes))
    search = _SliceSearch(board, int(opts.get("max_nodes", 200_000)), int(opts.get("chunk", 5_000)))
    failed = _FAILED.setdefault(ctx.evaluator, set())
    for n in range(first, last + 1):
        if not _pass(ctx, n, search, failed):
            return
        if n >= len(np.unique(_trace(board, ctx.best, search).ids)):
            return  # every slice already holds every box the solution moves
