"""Vicinity search: a breadth-first search that only visits box configurations near the path.

Terms (see ``planners._kernels.vicinity`` and ``vicinity_search`` for the data layout):

- *nearest squares* of a square: the squares a box may stand on (floor, not a simple dead
  square), ordered by rings of growing Manhattan distance around it, the square itself first;
  inside a ring the order runs counter-clockwise from the top, or clockwise on alternate passes
  (with a limit that cuts a ring, the two orders sample different squares).
- *vicinity* k1/k2 of a path position: every configuration made by putting one box on one of its
  k1 nearest squares and, at the same time, another box on one of its k2 nearest squares (k2 = 0:
  one box moves). The configuration set of a pass is the vicinity of every position of the path
  (or of a slice of it), sorted and deduplicated.
- *pass*: one vicinity search with given k1/k2. Quick passes (10/0, 20/0, 999/0 by default) run
  before the full k1/k2 pass; the passes repeat while they improve the solution.
- *slice*: a run of consecutive pushes searched on its own (from the position before its first
  push to the position after its last, the player then walking to the next push), used when the
  whole solution's configuration set does not fit the memory budget.

For the "moves" metric the search is a breadth-first search over player steps (fewest moves,
then pushes); for "pushes" a breadth-first search over pushes (fewest pushes, then moves).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from planners._kernels import vicinity_search as k
from planners._kernels.vicinity import find_config, vicinity_configs
from planners.optimizers.context import OptimizeContext, path_positions
from soko_gym.engine.constants import BOX_AT_DTYPE, FLOOR, SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps
from soko_gym.levels import Level

METHOD = "vicinity"

DEFAULTS: dict[str, Any] = {
    "k1": 20,  # nearest squares of the first box
    "k2": 10,  # nearest squares of the second box (0: only one box moves)
    "quick_passes": ((10, 0), (20, 0), (999, 0)),  # k1/k2 passes run before k1/k2
    "slice_pushes": 0,  # pushes per slice (0: the whole solution when it fits the budget)
    "min_slice_pushes": 8,  # slices are halved down to this length when memory is short
    "memory_mb": 256,  # configuration set, visited bits, queue and push nodes
}

_EXPANSIONS_PER_CALL = 200_000
_CHUNK_ROWS = 1 << 18


def box_squares(level: Level) -> np.ndarray:
    """bool[n_cells]: squares a box may stand on in a solution (floor, not simple dead)."""
    board = level.board
    return ((board.cells & FLOOR) != 0) & (board.dead == 0)


def nearest_squares(level: Level, n_near: int, clockwise: bool = False) -> np.ndarray:
    """The ``n_near`` nearest box squares of every box square (see the module docstring).

    Returns:
        int32[n_cells, n_near]: row s lists the nearest squares of box square s, itself first,
        padded with -1 when the level has fewer; rows of other squares are all -1.
    """
    board = level.board
    squares = np.flatnonzero(box_squares(level)).astype(np.int64)
    out = np.full((board.n_cells, n_near), -1, dtype=SQUARE_DTYPE)
    if squares.shape[0] == 0 or n_near <= 0:
        return out
    rows, cols = np.divmod(squares, board.width)
    dr = rows[None, :] - rows[:, None]
    dc = cols[None, :] - cols[:, None]
    r = np.abs(dr) + np.abs(dc)
    # position on the ring, counter-clockwise from straight up: up -> left -> down -> right
    t = np.select(
        [(dr < 0) & (dc <= 0), (dc < 0) & (dr >= 0), (dr > 0) & (dc >= 0)],
        [-dc, r + dr, 2 * r + dc],
        3 * r - dr,
    )
    if clockwise:
        t = np.where(r > 0, (4 * r - t) % np.maximum(4 * r, 1), 0)
    order = np.argsort(r * (4 * (board.height + board.width) + 1) + t, axis=1, kind="stable")
    take = min(n_near, squares.shape[0])
    out[squares, :take] = squares[order[:, :take]]
    return out


def unique_rows(rows: np.ndarray) -> np.ndarray:
    """Distinct rows of an int32 2-D array, sorted lexicographically."""
    if rows.shape[0] == 0:
        return rows
    order = np.lexsort(rows.T[::-1])
    rows = rows[order]
    keep = np.ones(rows.shape[0], dtype=bool)
    keep[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    return np.ascontiguousarray(rows[keep])


def vicinity_set(
    positions: np.ndarray, near: np.ndarray, k1: int, k2: int, max_bytes: int
) -> np.ndarray | None:
    """The sorted configuration set of ``positions`` for k1/k2, or None past ``max_bytes``.

    Args:
        positions: int32[n_positions, n_boxes] sorted box squares of path positions.
        near: int32[n_cells, n_near] from ``nearest_squares`` with ``n_near >= max(k1, k2)``.
        k1, k2: vicinity limits (clipped to ``n_near``).
        max_bytes: largest size allowed for the set.
    """
    positions = np.ascontiguousarray(positions, dtype=SQUARE_DTYPE)
    n = positions.shape[1]
    k1 = max(1, min(k1, near.shape[1]))
    k2 = min(k2, near.shape[1])
    per_position = n * k1 if (k2 == 0 or n == 1) else n * k1 * (n - 1) * k2
    buffer = np.empty((max(per_position, _CHUNK_ROWS), n), dtype=SQUARE_DTYPE)
    occupied = np.zeros(near.shape[0], dtype=np.uint8)
    parts = [positions]
    held = positions.nbytes
    first = 0
    while first < positions.shape[0]:
        count, first = vicinity_configs(positions, first, near, k1, k2, occupied, buffer)
        part = unique_rows(buffer[:count])
        parts.append(part)
        held += part.nbytes
        if held > 2 * max_bytes:
            parts = [unique_rows(np.concatenate(parts))]
            held = parts[0].nbytes
            if held > max_bytes:
                return None
    configs = unique_rows(np.concatenate(parts))
    return configs if configs.nbytes <= max_bytes else None


class _Budget:
    """Bytes held by one search's arrays against a limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def take(self, nbytes: int) -> bool:
        """Reserve ``nbytes`` more; False (nothing reserved) when that passes the limit."""
        if self.used + nbytes > self.limit:
            return False
        self.used += nbytes
        return True


def _grown(array: np.ndarray, fill: int | None = None) -> np.ndarray:
    """``array`` copied into one twice as long (the new half ``fill`` or uninitialised)."""
    out = np.empty(2 * array.shape[0], dtype=array.dtype)
    out[: array.shape[0]] = array
    if fill is not None:
        out[array.shape[0] :] = fill
    return out


def search_set(
    ctx: OptimizeContext,
    configs: np.ndarray,
    start_row: np.ndarray,
    start_player: int,
    target_row: np.ndarray,
    target_square: int,
    memory_bytes: int,
) -> np.ndarray | None:
    """Best push sequence inside a configuration set under ``ctx.metric``, or None.

    Args:
        ctx: the optimizer context (metric, level, clock).
        configs: int32[n_configs, n_boxes] sorted configuration set holding both ends.
        start_row, target_row: int32[n_boxes] sorted box squares of the two ends.
        start_player: player square at the start.
        target_square: square the player walks to after the last push (-1: none).
        memory_bytes: budget of the search's arrays (the set itself included).

    Returns:
        int32[k] square pushes from the start to the target, or None when the target was not
        reached (outside the set, out of time or out of memory).
    """
    start = int(find_config(configs, np.ascontiguousarray(start_row, dtype=SQUARE_DTYPE)))
    target = int(find_config(configs, np.ascontiguousarray(target_row, dtype=SQUARE_DTYPE)))
    if start < 0 or target < 0:
        return None
    if start == target:  # the slice is a cycle: drop it, the player only walks
        return np.empty(0, dtype=SQUARE_DTYPE)
    board = ctx.level.board
    n_floor = int(board.floor.shape[0])
    n_bits = (configs.shape[0] * n_floor + 7) // 8
    budget = _Budget(memory_bytes)
    n_sets = 1 if ctx.metric == "moves" else 2
    if not budget.take(configs.nbytes + n_sets * n_bits):
        return None
    start_state = start * n_floor + int(board.floor_index[start_player])
    if ctx.metric == "moves":
        return _search_moves(ctx, configs, start_state, target, target_square, n_bits, budget)
    return _search_pushes(ctx, configs, start_state, target, target_square, n_bits, budget)


def _set_board(level: Level) -> k.SetBoard:
    """The level's arrays the configuration-set searches read."""
    b = level.board
    return k.SetBoard(b.cells, b.offsets, b.floor, b.floor_index)


def _search_moves(ctx, configs, start_state, target, target_square, n_bits, budget):
    """Driver of ``search_moves`` (fewest moves, then pushes); see ``search_set``."""
    board = ctx.level.board
    cap = 1 << 14
    queue = k.StepQueue(
        visited=np.zeros(n_bits, dtype=np.uint8),
        state=np.empty(cap, dtype=np.int64),
        node=np.empty(cap, dtype=np.int32),
        pushes=np.empty(cap, dtype=np.int32),
    )
    n_cap = 1 << 12
    nodes = k.PushNodes(np.empty(n_cap, dtype=np.int32), np.empty(n_cap, dtype=np.int32))
    if not budget.take(16 * cap + 8 * n_cap):
        return None
    queue.state[0], queue.node[0], queue.pushes[0] = start_state, -1, 0
    queue.visited[start_state >> 3] |= 1 << (start_state & 7)
    counters = np.zeros(k.N_COUNTERS, dtype=np.int64)
    counters[k.M_TAIL] = counters[k.M_LAYER_END] = counters[k.M_PHASE] = 1
    counters[k.M_FOUND] = -1
    scratch = k.StepScratch(
        np.zeros(board.n_cells, dtype=np.uint8), np.empty(configs.shape[1], dtype=SQUARE_DTYPE)
    )
    set_board = _set_board(ctx.level)
    while True:
        status = k.search_moves(
            set_board,
            configs,
            target,
            target_square,
            queue,
            nodes,
            counters,
            scratch,
            _EXPANSIONS_PER_CALL,
        )
        if status == k.FOUND:
            return _read_back(nodes.sq_push, nodes.parent, int(counters[k.M_FOUND]), -1)
        if status == k.EXHAUSTED or ctx.out_of_time():
            return None
        if status == k.GROW_QUEUE:
            if not budget.take(16 * cap):
                return None
            live = np.arange(counters[k.M_GROUP_START], counters[k.M_TAIL])
            arrays = []
            for old in (queue.state, queue.node, queue.pushes):
                new = np.empty(2 * cap, dtype=old.dtype)
                new[live % (2 * cap)] = old[live % cap]
                arrays.append(new)
            queue = queue._replace(state=arrays[0], node=arrays[1], pushes=arrays[2])
            cap *= 2
        elif status == k.GROW_NODES:
            if not budget.take(8 * nodes.sq_push.shape[0]):
                return None
            nodes = k.PushNodes(*(_grown(a) for a in nodes))


def _search_pushes(ctx, configs, start_state, target, target_square, n_bits, budget):
    """Driver of ``search_pushes`` (fewest pushes, then moves); see ``search_set``."""
    board = ctx.level.board
    sets = k.LayerSets(
        seen=np.zeros(n_bits, dtype=np.uint8),
        regions=np.zeros(n_bits, dtype=np.uint8),
        table=np.full(1 << 12, -1, dtype=np.int32),
    )
    n_cap = 1 << 12
    nodes = k.LayerNodes(
        state=np.empty(n_cap, dtype=np.int64),
        moves=np.empty(n_cap, dtype=np.int32),
        parent=np.empty(n_cap, dtype=np.int32),
        sq_push=np.empty(n_cap, dtype=np.int32),
        region=np.empty(n_cap, dtype=np.int64),
    )
    if not budget.take(28 * n_cap + sets.table.nbytes):
        return None
    nodes.state[0], nodes.moves[0], nodes.parent[0] = start_state, 0, -1
    nodes.sq_push[0], nodes.region[0] = -1, -1
    sets.seen[start_state >> 3] |= 1 << (start_state & 7)
    counters = np.zeros(k.N_COUNTERS, dtype=np.int64)
    counters[k.P_LAYER_END] = counters[k.P_NODES] = 1
    scratch = k.LayerScratch(
        box_at=np.full(board.n_cells, -1, dtype=BOX_AT_DTYPE),
        stamps=new_stamps(board.cells),
        queue=np.empty(board.n_cells, dtype=SQUARE_DTYPE),
        dist=np.empty(board.n_cells, dtype=SQUARE_DTYPE),
        row=np.empty(configs.shape[1], dtype=SQUARE_DTYPE),
    )
    set_board = _set_board(ctx.level)
    while True:
        status = k.search_pushes(
            set_board,
            configs,
            target,
            target_square,
            nodes,
            sets,
            counters,
            scratch,
            _EXPANSIONS_PER_CALL,
        )
        if status == k.FOUND:
            return _read_back(nodes.sq_push, nodes.parent, int(counters[k.P_FOUND]), 0)
        if status == k.EXHAUSTED or ctx.out_of_time():
            return None
        if status == k.GROW_QUEUE:
            if not budget.take(sets.table.nbytes):
                return None
            sets = sets._replace(table=np.full(2 * sets.table.shape[0], -1, dtype=np.int32))
            counters[k.P_REBUILD] = 1
        elif status == k.GROW_NODES:
            if not budget.take(28 * nodes.state.shape[0]):
                return None
            nodes = k.LayerNodes(*(_grown(a) for a in nodes))


def _read_back(sq_push: np.ndarray, parent: np.ndarray, node: int, root: int) -> np.ndarray:
    """Square pushes from the root to ``node``, following parent links."""
    out = []
    while node != root and node >= 0:
        out.append(int(sq_push[node]))
        node = int(parent[node])
    return np.array(out[::-1], dtype=SQUARE_DTYPE)


def _next_stand(level: Level, codes: np.ndarray, index: int) -> int:
    """Square the player pushes from for push ``index`` (-1 past the last push)."""
    if index >= codes.shape[0]:
        return -1
    sq, d = divmod(int(codes[index]), 4)
    return sq - int(level.board.offsets[d])


def run_pass(ctx: OptimizeContext, k1: int, k2: int, clockwise: bool, opts: dict) -> bool:
    """One vicinity pass over the best solution, slice by slice; True if it improved.

    Args:
        ctx: the optimizer context; its best solution is updated through ``ctx.offer``.
        k1, k2: vicinity limits of this pass.
        clockwise: ring order of the nearest squares.
        opts: the method's options (``DEFAULTS`` merged with the user's).
    """
    level = ctx.level
    memory = int(opts["memory_mb"] * 2**20)
    near = nearest_squares(level, max(k1, k2), clockwise)
    length = int(opts["slice_pushes"]) or ctx.best_pushes
    improved = False
    a = 0
    while a < ctx.best_pushes and not ctx.out_of_time():
        best = ctx.best
        b = min(best.shape[0], a + length)
        boxes, players = path_positions(level, best)
        configs = vicinity_set(boxes[a : b + 1], near, k1, k2, memory // 2)
        if configs is None:
            if length // 2 < int(opts["min_slice_pushes"]):
                return improved
            length //= 2
            continue
        found = search_set(
            ctx, configs, boxes[a], int(players[a]), boxes[b], _next_stand(level, best, b), memory
        )
        if found is not None:
            candidate = np.concatenate([best[:a], found, best[b:]]).astype(SQUARE_DTYPE)
            if ctx.offer(candidate, f"{k1}/{k2} pushes {a}-{b}"):
                improved = True
                b = a + found.shape[0]
        a = b
    return improved


def improve(ctx: OptimizeContext) -> None:
    """Quick passes, then the k1/k2 pass, repeated while a round improves the solution.

    Options (``ctx.options["vicinity"]``): see ``DEFAULTS``.
    """
    opts = {**DEFAULTS, **ctx.options.get(METHOD, {})}
    passes = [tuple(p) for p in opts["quick_passes"]] + [(int(opts["k1"]), int(opts["k2"]))]
    turn = 0
    improved = True
    while improved and ctx.best_pushes > 0:
        improved = False
        for k1, k2 in passes:
            if ctx.out_of_time():
                return
            improved |= run_pass(ctx, int(k1), int(k2), turn % 2 == 1, opts)
            turn += 1
