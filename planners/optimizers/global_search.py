"""Global optimization: search every position a few pushes away from the path, on small levels.

Terms: the *push neighbourhood* of depth d is every position reachable by at most d pushes from
some position on the solution path (positions counted once per box configuration and
normalized player square). It grows one push at a time, breadth-first from all path positions
at once, until the next layer would pass the position budget or nothing new is found; then the
breadth-first search of the vicinity method (fewest moves then pushes, or the reverse) runs from
the start over the configurations of the neighbourhood. A level is *small* when it has at most
``max_level_configs`` box configurations (box squares choose boxes); on larger levels the
method returns at once.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from planners._kernels import vicinity as k
from planners.optimizers.context import OptimizeContext, path_positions
from planners.optimizers.vicinity import box_squares, search_set, unique_rows
from soko_gym.engine.constants import BOX_AT_DTYPE, SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps, reach_player

METHOD = "global"

DEFAULTS: dict[str, Any] = {
    "max_level_configs": 10**8,  # run only on levels with at most this many box configurations
    "max_states": 400_000,  # the neighbourhood stops growing before this many positions
    "memory_mb": 256,  # neighbourhood, visited bits, queue and push nodes
}


def is_small(ctx: OptimizeContext, max_level_configs: int) -> bool:
    """True when the level has at most ``max_level_configs`` box configurations."""
    board = ctx.level.board
    return math.comb(int(box_squares(ctx.level).sum()), board.n_boxes) <= max_level_configs


def _keys(rows: np.ndarray) -> np.ndarray:
    """One opaque (void) key per row of an int32 2-D array, for fast set operations."""
    rows = np.ascontiguousarray(rows, dtype=SQUARE_DTYPE)
    return rows.view(np.dtype((np.void, 4 * rows.shape[1]))).ravel()


def _rows(keys: np.ndarray, width: int) -> np.ndarray:
    """The int32 rows of ``width`` columns behind keys from ``_keys``."""
    return np.frombuffer(keys.tobytes(), dtype=SQUARE_DTYPE).reshape(-1, width).copy()


def neighbourhood(ctx: OptimizeContext, max_states: int, max_bytes: int) -> np.ndarray:
    """Configurations of the path's push neighbourhood, as deep as the budgets allow.

    Args:
        ctx: the optimizer context (its best solution is the path).
        max_states: the neighbourhood stops before it passes this many positions.
        max_bytes: ... or this many bytes of positions.

    Returns:
        int32[n_configs, n_boxes] sorted configuration set (path positions included).
    """
    return grow_neighbourhood(ctx, max_states, max_bytes)[0]


def grow_neighbourhood(
    ctx: OptimizeContext, max_states: int, max_bytes: int
) -> tuple[np.ndarray, bool]:
    """``neighbourhood``, and whether it is closed: it stopped because nothing new was found.

    A closed neighbourhood holds every position reachable from the start with no box on a
    dead square, so a search inside it is a search of the whole level.
    """
    board = ctx.level.board
    allowed = box_squares(ctx.level)
    n = board.n_boxes
    boxes, players = path_positions(ctx.level, ctx.best)
    box_at = np.full(board.n_cells, -1, dtype=BOX_AT_DTYPE)
    stamps = new_stamps(board.cells)
    stack = np.empty(board.n_cells, dtype=SQUARE_DTYPE)
    norm = np.empty(players.shape[0], dtype=SQUARE_DTYPE)
    for i in range(boxes.shape[0]):
        box_at[boxes[i]] = 0
        norm[i] = reach_player(box_at, board.offsets, int(players[i]), stamps, stack)[1]
        box_at[boxes[i]] = -1
    known = np.unique(_keys(np.column_stack([boxes, norm])))
    frontier = _rows(known, n + 1)
    while frontier.shape[0] and not ctx.out_of_time():
        size = frontier.shape[0] * 4 * n
        out_rows = np.empty((size, n), dtype=SQUARE_DTYPE)
        out_players = np.empty(size, dtype=SQUARE_DTYPE)
        count = k.expand_positions(
            board.cells,
            board.offsets,
            np.ascontiguousarray(frontier[:, :n]),
            np.ascontiguousarray(frontier[:, n]),
            box_at,
            stamps,
            stack,
            out_rows,
            out_players,
        )
        keep = allowed[out_rows[:count]].all(axis=1)
        children = np.unique(_keys(np.column_stack([out_rows[:count], out_players[:count]])[keep]))
        fresh = children[~np.isin(children, known, assume_unique=True)]
        if known.shape[0] + fresh.shape[0] > max_states:
            break
        if (known.shape[0] + fresh.shape[0]) * 4 * (n + 1) > max_bytes:
            break
        known = np.sort(np.concatenate([known, fresh]), kind="mergesort")
        frontier = _rows(fresh, n + 1)
    configs = unique_rows(np.ascontiguousarray(_rows(known, n + 1)[:, :n]))
    return configs, frontier.shape[0] == 0


def improve(ctx: OptimizeContext) -> None:
    """Search the push neighbourhood of the best solution once, on small levels.

    Options (``ctx.options["global"]``): see ``DEFAULTS``.
    """
    opts = {**DEFAULTS, **ctx.options.get(METHOD, {})}
    if ctx.best_pushes == 0 or not is_small(ctx, int(opts["max_level_configs"])):
        return
    memory = int(opts["memory_mb"] * 2**20)
    configs = neighbourhood(ctx, int(opts["max_states"]), memory // 4)
    if ctx.out_of_time():
        return
    boxes, players = path_positions(ctx.level, ctx.best)
    found = search_set(ctx, configs, boxes[0], int(players[0]), boxes[-1], -1, memory)
    if found is not None:
        ctx.offer(found, f"{configs.shape[0]} configurations")
