"""Bipartite deadlock test with frozen boxes as walls, as one kernel (``planners.fess.frozen``).

Boxes frozen on targets are walls for good, so the boxes left may compete for fewer targets
than there are boxes. The test needs, per set of frozen boxes, which squares can still send a
lone box to each free target with those boxes as walls. Building that table pulls a lone box
back from every target; which sides of a box the player can walk between depends only on the
box's square and the frozen set, so it is found once per square for the whole table
(``fess_pull_closure.pull_closure_parts``) rather than by a player fill per pulled state
and target. Frozen sets change rarely along a search path, so the tables are kept in a
direct-mapped cache of preallocated arrays (slot = Zobrist hash of the frozen set & (S - 1);
a collision overwrites the slot). Everything the test touches travels in one
``FrozenTables`` bundle so that other kernels can call ``frozen_bipartite_deadlock``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from planners._kernels.common import sort_prefix
from planners._kernels.fess_pull_closure import forget_parts, pull_closure_parts
from soko_gym.engine.board import Board
from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_INF, GOAL, HASH_DTYPE, SQUARE_DTYPE
from soko_gym.engine.lowerbound import bipartite_deadlock_marked, mark_frozen_boxes
from soko_gym.engine.reach import new_stamps

# indices into ``FrozenTables.counters``
FC_BUILT = 0  # reach tables built
FC_HITS = 1  # reach tables found in the cache
FC_EVICTED = 2  # cached tables overwritten by a colliding frozen set
N_FROZEN_COUNTERS = 3

CACHE_BYTES = 32 << 20  # default cache: cache_reach stays under about this many bytes
MIN_CACHE, MAX_CACHE = 16, 2048  # default cache size clamp (slots)

FrozenTables = namedtuple(
    "FrozenTables",
    [
        "cells",  # uint8[n_cells] cell flags
        "dead",  # uint8[n_cells] simple dead squares
        "offsets",  # int32[4] up, down, left, right
        "goals",  # int32[n_goals]
        "is_goal",  # uint8[n_cells] 1 on targets
        "zobrist",  # uint64[n_cells] Zobrist key per square (hashes frozen sets)
        "seen",  # uint32[n_cells + 1] stamps of mark_frozen_boxes / bipartite_deadlock
        "work",  # int32[4, max(1, n_boxes)] bipartite_deadlock scratch
        "walls",  # int16[n_cells] -1, 0 under frozen boxes while a table is built
        "stamps",  # uint32[n_cells + 1] player fill scratch (new_stamps)
        "stack",  # int32[n_cells] player fill scratch
        "states",  # uint8[4 * n_cells] pulled states of one target
        "queue",  # int32[4 * n_cells] pulled states to expand
        "parts",  # int8[4 * n_cells] pull_closure_parts' side partitions
        "parts_gen",  # int32[n_cells + 1] their generations (forget_parts)
        "frozen",  # int32[max(1, n_boxes)] the frozen squares of the position tested
        "cache_key",  # uint64[S] Zobrist hash of each slot's frozen set
        "cache_squares",  # int32[S, max(1, n_boxes)] each slot's frozen squares, increasing
        "cache_len",  # int32[S] number of frozen squares per slot, -1 for an empty slot
        "cache_reach",  # uint16[S, n_goals, n_cells] per slot: 0 where reachable, else DIST_INF
        "counters",  # int64[N_FROZEN_COUNTERS] FC_BUILT, FC_HITS, FC_EVICTED
    ],
)


def default_cache_size(board: Board) -> int:
    """Largest power of two of slots keeping ``cache_reach`` under CACHE_BYTES, clamped."""
    per_slot = max(1, board.goals.shape[0] * board.n_cells * 2)
    size = MIN_CACHE
    while size * 2 <= MAX_CACHE and size * 2 * per_slot <= CACHE_BYTES:
        size *= 2
    return size


def new_frozen_tables(board: Board, cache_size: int | None = None) -> FrozenTables:
    """Build the bundle of ``frozen_bipartite_deadlock`` for a board.

    Args:
        board: the level's static arrays.
        cache_size: slots of the reach-table cache, rounded up to a power of two; None picks
            ``default_cache_size(board)``.

    Raises:
        ValueError: when cache_size < 1.
    """
    if cache_size is None:
        cache_size = default_cache_size(board)
    elif cache_size < 1:
        raise ValueError(f"cache_size must be positive, got {cache_size!r}")
    slots = 1 << (int(cache_size) - 1).bit_length()
    n = board.n_cells
    width = max(1, board.n_boxes)
    return FrozenTables(
        cells=board.cells,
        dead=board.dead,
        offsets=board.offsets,
        goals=board.goals,
        is_goal=((board.cells & GOAL) != 0).astype(np.uint8),
        zobrist=board.zobrist,
        seen=np.zeros(n + 1, dtype=np.uint32),
        work=np.zeros((4, width), dtype=SQUARE_DTYPE),
        walls=np.full(n, -1, dtype=BOX_AT_DTYPE),
        stamps=new_stamps(board.cells),
        stack=np.zeros(n, dtype=SQUARE_DTYPE),
        states=np.zeros(4 * n, dtype=np.uint8),
        queue=np.zeros(4 * n, dtype=SQUARE_DTYPE),
        parts=np.full(4 * n, -1, dtype=np.int8),
        parts_gen=np.zeros(n + 1, dtype=np.int32),
        frozen=np.zeros(width, dtype=SQUARE_DTYPE),
        cache_key=np.zeros(slots, dtype=HASH_DTYPE),
        cache_squares=np.zeros((slots, width), dtype=SQUARE_DTYPE),
        cache_len=np.full(slots, -1, dtype=np.int32),
        # zeros, not DIST_INF: calloc'd pages cost nothing until a slot is used (cache_len -1)
        cache_reach=np.zeros((slots, board.goals.shape[0], n), dtype=np.uint16),
        counters=np.zeros(N_FROZEN_COUNTERS, dtype=np.int64),
    )


@njit(cache=True, nogil=True, _nrt=False)
def _build_reach(ft, frozen, table):
    """Fill ``table`` (uint16[n_goals, n_cells]) for the frozen squares ``frozen`` as walls."""
    for i in range(frozen.shape[0]):
        ft.walls[frozen[i]] = 0
    table[:, :] = DIST_INF
    n = ft.cells.shape[0]
    forget_parts(ft.parts_gen)  # the walls are new
    for g in range(ft.goals.shape[0]):
        goal = ft.goals[g]
        if ft.walls[goal] >= 0:
            continue  # taken by a frozen box: the row stays DIST_INF
        pull_closure_parts(
            ft.cells, ft.walls, ft.offsets, np.int64(goal), ft.stamps, ft.stack, ft.parts,
            ft.parts_gen, ft.states, ft.queue,
        )  # fmt: skip
        for sq in range(n):
            k = sq * 4
            if ft.states[k] | ft.states[k + 1] | ft.states[k + 2] | ft.states[k + 3]:
                table[g, sq] = 0
    for i in range(frozen.shape[0]):
        ft.walls[frozen[i]] = -1


@njit(cache=True, nogil=True, _nrt=False)
def frozen_reach_slot(ft, frozen):
    """Cache slot holding the reach table of ``frozen`` (int32, increasing), built on a miss.

    Row g of ``ft.cache_reach[slot]`` is 0 on the squares from which a lone box can still be
    pushed onto goal g with the frozen squares as walls, DIST_INF elsewhere (and everywhere
    for a goal under a frozen box). The slot stays valid until another frozen set lands on
    it, so callers use the table before the next lookup.
    """
    k = frozen.shape[0]
    key = np.uint64(0)
    for i in range(k):
        key ^= ft.zobrist[frozen[i]]
    slot = np.int64(key & np.uint64(ft.cache_key.shape[0] - 1))
    if ft.cache_len[slot] == k and ft.cache_key[slot] == key:
        same = True
        for i in range(k):
            if ft.cache_squares[slot, i] != frozen[i]:
                same = False
                break
        if same:
            ft.counters[FC_HITS] += 1
            return slot
    if ft.cache_len[slot] >= 0:
        ft.counters[FC_EVICTED] += 1
    _build_reach(ft, frozen, ft.cache_reach[slot])
    ft.cache_key[slot] = key
    ft.cache_len[slot] = k
    for i in range(k):
        ft.cache_squares[slot, i] = frozen[i]
    ft.counters[FC_BUILT] += 1
    return slot


@njit(cache=True, nogil=True, _nrt=False)
def frozen_bipartite_deadlock(ft, box_pos):
    """True when the boxes cannot all reach distinct targets with frozen boxes as walls.

    Only positions with a box frozen on a target are tested: without one the move generator's
    empty-board test already covers it (and a box frozen off a target is a simple deadlock
    found there). The other boxes are ignored, so every dropped edge is truly gone and a
    failed matching is a real deadlock.

    Args:
        ft: FrozenTables of the board (scratch and cache are updated).
        box_pos: int32[n_boxes] square of each box.
    """
    if mark_frozen_boxes(ft.cells, ft.dead, box_pos, ft.offsets, ft.seen) == 0:
        return False
    k, on_goal, _ = _collect_marked(ft, box_pos)
    if on_goal == 0:
        return False
    return _walls_matching(ft, box_pos, k)  # True too when a frozen box is off its target


@njit(cache=True, nogil=True, _nrt=False)
def _collect_marked(ft, box_pos):
    """Copy the boxes marked in ``ft.seen`` to ``ft.frozen``: (count, on targets, off them)."""
    mark = ft.seen[ft.seen.shape[0] - 1]
    k = 0
    on_goal = 0
    for i in range(box_pos.shape[0]):
        sq = box_pos[i]
        if ft.seen[sq] == mark:
            ft.frozen[k] = sq
            k += 1
            if ft.is_goal[sq]:
                on_goal += 1
    return k, on_goal, k - on_goal


@njit(cache=True, nogil=True, _nrt=False)
def _walls_matching(ft, box_pos, k):
    """The matching test with the ``k`` squares of ``ft.frozen`` (the marked boxes) as walls."""
    sort_prefix(ft.frozen, np.int64(k))
    table = ft.cache_reach[frozen_reach_slot(ft, ft.frozen[:k])]  # leaves ft.seen as it is
    return bipartite_deadlock_marked(ft.cells, ft.goals, table, box_pos, ft.seen, ft.work)


__all__ = [
    "FC_BUILT",
    "FC_EVICTED",
    "FC_HITS",
    "N_FROZEN_COUNTERS",
    "FrozenTables",
    "default_cache_size",
    "frozen_bipartite_deadlock",
    "frozen_reach_slot",
    "new_frozen_tables",
]
