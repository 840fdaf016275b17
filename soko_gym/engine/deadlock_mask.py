"""Masks without lost actions: pushes that make a simple deadlock, actions proven lost.

The per-env step (``engine.step``) clears them from an env's legal actions with
``EnvOptions.deadlock_mask`` and ``deadlock_search``, never all of them.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

from soko_gym.engine.actions import KIND_MACRO, KIND_MOVE, KIND_PUSH, macro_parts, square_push_parts
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.exhaust import EXHAUST_DEADLOCK, exhaust_deadlock
from soko_gym.engine.macro import box_paths, nearest_side


@njit(cache=True, nogil=True, _nrt=False)
def push_is_dead(cells, dead, box_at, offsets, src, dst, seen, trail):
    """Whether moving the box on ``src`` to the free square ``dst`` makes a simple deadlock.

    ``box_at`` is changed for the test and restored. Other arguments as ``is_simple_deadlock``.
    """
    b = box_at[src]
    box_at[src] = -1
    box_at[dst] = b
    lost = is_simple_deadlock(cells, dead, box_at, offsets, dst, seen, trail)
    box_at[dst] = -1
    box_at[src] = b
    return lost


@register_jitable
def _pushed_box(kind, action, player, box_at, offsets, n_cells):
    """``(src, dst)`` of the box ``action`` pushes (macro: its whole move); (-1, -1) for none."""
    if kind == KIND_MOVE:
        if action < 4:
            nxt = player + offsets[action]
            if box_at[nxt] >= 0:
                return nxt, nxt + offsets[action]
        return -1, -1
    if kind == KIND_PUSH:
        sq, d = square_push_parts(action)
        return sq, sq + offsets[d]
    return macro_parts(action, n_cells)


@njit(cache=True, nogil=True, _nrt=False)
def mask_dead_actions(kind, cells, dead, box_at, offsets, player, seen, trail, mask):
    """Clear the legal actions of ``mask`` whose push makes a simple deadlock (``push_is_dead``).

    Args:
        kind: ``KIND_MOVE``, ``KIND_PUSH`` or ``KIND_MACRO``.
        cells, box_at, offsets: as in ``moves.move_step``; ``dead``: uint8[n_cells] dead squares.
        player: player square.
        seen, trail: ``is_simple_deadlock`` scratch.
        mask: the legal actions of ``kind`` (changed in place).

    Returns:
        ``(kept, cleared)``: legal actions left and cleared.
    """
    n = cells.shape[0]
    kept = 0
    cleared = 0
    for a in range(mask.shape[0]):
        if not mask[a]:
            continue
        src, dst = _pushed_box(kind, a, player, box_at, offsets, n)
        if src >= 0 and push_is_dead(cells, dead, box_at, offsets, src, dst, seen, trail):
            mask[a] = False
            cleared += 1
        else:
            kept += 1
    return kept, cleared


@njit(cache=True, nogil=True, _nrt=False)
def mask_searched_deadlocks(
    kind, et, box_at, box_pos, n_boxes, player, budget, dist, parent, queue, mask, cleared
):
    """Clear the actions of ``mask`` after which the exhaustion test proves the level lost.

    When it proves every action of ``mask`` lost, the position is lost whatever is played, and
    ``mask`` is left as it was (a mask without a legal action breaks masked policies).

    Each action that pushes is played on a copy of the position in the search's tables: its
    box moved, the player where the action leaves it (a macro move: beside the box on the side
    its fewest-push path ends, as the step plays it). ``engine.exhaust.exhaust_deadlock`` then
    searches every push from there storing at most ``budget`` positions; the action is cleared
    only when that search runs dry without a solution, a proof, so no action on a solution's
    path is ever cleared. A step that pushes nothing leaves the box set and the player's region
    as they were and is kept.

    Args:
        kind: ``KIND_MOVE``, ``KIND_PUSH`` or ``KIND_MACRO``.
        et: ``engine.exhaust.ExhaustTables`` of the env's level (tables sized for the most boxes
            of its table serve every level of it).
        box_at, box_pos, n_boxes, player: the position (``box_pos`` is changed and restored).
        budget: most positions one search stores.
        dist, parent, queue: ``box_paths`` buffers (macro kind only).
        mask: the legal actions of ``kind`` (changed in place).
        cleared: int32[>= actions in ``mask``] receives the actions cleared.

    Returns:
        The number of actions cleared.
    """
    cells = et.cells
    offsets = et.offsets
    n = cells.shape[0]
    boxes = box_pos[:n_boxes]
    kept = 0
    n_cleared = 0
    last_src = -1
    for a in range(mask.shape[0]):
        if not mask[a]:
            continue
        src, dst = _pushed_box(kind, a, player, box_at, offsets, n)
        if src < 0:
            kept += 1
            continue
        after = src  # a push leaves the player where the box was
        if kind == KIND_MACRO:
            if src != last_src:  # a box's macro actions come one after another
                box_paths(
                    cells, box_at, offsets, player, src, et.stamps, et.stack, dist, parent, queue
                )  # fmt: skip
                last_src = src
            after = dst + offsets[nearest_side(dist, dst) & 3]  # as ``macro_plan`` ends
        b = box_at[src]
        boxes[b] = dst
        status = exhaust_deadlock(et, boxes, np.int64(after), np.int64(budget))
        boxes[b] = src
        if status == EXHAUST_DEADLOCK:
            mask[a] = False
            cleared[n_cleared] = a
            n_cleared += 1
        else:
            kept += 1
    if kept == 0:  # lost whatever is played: the mask stays whole
        for j in range(n_cleared):
            mask[cleared[j]] = True
        return 0
    return n_cleared
