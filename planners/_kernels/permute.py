"""Trace a push sequence box by box and score reordered windows of it without a full replay.

A reordering that keeps each box's own pushes in order and changes the sequence only inside a
window ``[lo, end)`` leaves the position after the window as it was, except for the player, who
stands where the window's last push left him; from the push after the window on, walks and
pushes are as before. So a candidate's moves are the old moves before ``lo``, a replay of the
window and the one push after it from the position before ``lo``, and the old moves after that.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planners._kernels.replay import _walk_length
from soko_gym.engine.constants import FLOOR
from soko_gym.engine.reach import reach_player


@njit(cache=True, nogil=True)
def trace_pushes(cells, offsets, start_boxes, start_player, sq_pushes, scratch):
    """Replay ``sq_pushes`` and record which box each push moves, its cost and every position.

    Args:
        cells: uint8[n_cells] cell flags of ``level.board``.
        offsets: int32[4] flat index step per direction.
        start_boxes: int32[n_boxes] box squares at the start; box b is the box on
            ``start_boxes[b]``, and keeps its index while it is pushed around.
        start_player: player square at the start.
        sq_pushes: int32[k] square pushes, ``square * 4 + direction`` (the box's square before
            the push).
        scratch: ``replay.WalkScratch`` (its ``box_at`` all -1 on entry and on return).

    Returns:
        (box_of int32[k]: index of the box that push i moves; cost int64[k]: moves of push i,
        its shortest walk plus one; boxes int32[k + 1, n_boxes]: square of each box before
        push i, row k after the last push; players int32[k + 1]: player square before push i,
        row k after the last push; index of the first illegal push or -1). Rows from an illegal
        push on are left unset.
    """
    box_at = scratch.box_at
    n = start_boxes.shape[0]
    k = sq_pushes.shape[0]
    box_of = np.full(k, -1, dtype=np.int32)
    cost = np.zeros(k, dtype=np.int64)
    boxes = np.empty((k + 1, n), dtype=np.int32)
    players = np.empty(k + 1, dtype=np.int32)
    pos = np.empty(n, dtype=np.int32)
    for b in range(n):
        pos[b] = start_boxes[b]
        box_at[start_boxes[b]] = b
    player = np.int64(start_player)
    bad = -1
    for i in range(k):
        for b in range(n):  # loops, not boxes[i] = pos: a row copy compiles shape errors
            boxes[i, b] = pos[b]
        players[i] = player
        sq = np.int64(sq_pushes[i] >> 2)
        d = sq_pushes[i] & 3
        dest = sq + offsets[d]
        stand = sq - offsets[d]
        b = box_at[sq]
        if b < 0 or not (cells[dest] & FLOOR) or box_at[dest] >= 0:
            bad = i
            break
        walk = _walk_length(
            box_at, offsets, player, stand, scratch.stamps, scratch.queue, scratch.dist
        )
        if walk < 0:
            bad = i
            break
        box_of[i] = b
        cost[i] = walk + 1
        box_at[dest] = b
        box_at[sq] = -1
        pos[b] = dest
        player = sq
    if bad < 0:
        for b in range(n):
            boxes[k, b] = pos[b]
        players[k] = player
    for b in range(n):
        box_at[pos[b]] = -1
    return box_of, cost, boxes, players, bad


@njit(cache=True, nogil=True)
def window_moves(cells, offsets, boxes, player, sq_pushes, lo, hi, scratch):
    """Moves of ``sq_pushes[lo:hi]`` played from the position before push ``lo``.

    Args:
        cells: uint8[n_cells] cell flags of ``level.board``.
        offsets: int32[4] flat index step per direction.
        boxes: int32[n_boxes] box squares before push ``lo``.
        player: player square before push ``lo``.
        sq_pushes: int32[k] square pushes, ``square * 4 + direction``.
        lo, hi: the pushes to play, ``sq_pushes[lo:hi]``.
        scratch: ``replay.WalkScratch`` (its ``box_at`` all -1 on entry and on return).

    Returns:
        (moves: shortest walks plus pushes up to the first illegal push, index of the first
        illegal push or -1).
    """
    box_at = scratch.box_at
    n = boxes.shape[0]
    pos = boxes.copy()
    for b in range(n):
        box_at[pos[b]] = b
    where = np.int64(player)
    moves = np.int64(0)
    bad = -1
    for i in range(lo, hi):
        sq = np.int64(sq_pushes[i] >> 2)
        d = sq_pushes[i] & 3
        dest = sq + offsets[d]
        stand = sq - offsets[d]
        b = box_at[sq]
        if b < 0 or not (cells[dest] & FLOOR) or box_at[dest] >= 0:
            bad = i
            break
        walk = _walk_length(
            box_at, offsets, where, stand, scratch.stamps, scratch.queue, scratch.dist
        )
        if walk < 0:
            bad = i
            break
        moves += walk + 1
        box_at[dest] = b
        box_at[sq] = -1
        pos[b] = dest
        where = sq
    for b in range(n):
        box_at[pos[b]] = -1
    return moves, bad


@njit(cache=True, nogil=True)
def position_keys(zobrist, offsets, boxes, players, box_at, stamps, stack):
    """Transposition key of every position on a path: box-set hash and normalized player.

    Args:
        zobrist: uint64[n_cells] Zobrist key per square.
        offsets: int32[4] flat index step per direction.
        boxes: int32[m, n_boxes] box squares of each position (any box order).
        players: int32[m] player square of each position.
        box_at: int16[n_cells] scratch (all -1 on entry and on return).
        stamps: uint32[n_cells + 1] stamp buffer with walls pre-stamped.
        stack: int32[n_cells] scratch.

    Returns:
        (hashes uint64[m]: XOR of the box squares' keys; norm int32[m]: smallest square the
        player reaches without pushing).
    """
    m = boxes.shape[0]
    n = boxes.shape[1]
    hashes = np.zeros(m, dtype=np.uint64)
    norm = np.empty(m, dtype=np.int32)
    for i in range(m):
        h = np.uint64(0)
        for b in range(n):
            box_at[boxes[i, b]] = b
            h ^= zobrist[boxes[i, b]]
        hashes[i] = h
        _, lowest = reach_player(box_at, offsets, np.int64(players[i]), stamps, stack)
        norm[i] = lowest
        for b in range(n):
            box_at[boxes[i, b]] = -1
    return hashes, norm
