"""Pushes and pulls: generation, application and undo, keeping occupancy and hash in step.

A push (or pull) is encoded as one int: ``box_index * 4 + direction``, where direction is the
way the box moves (order from ``constants``). Pulls drive the reverse search: the player stands
on the side the box moves to and steps back, dragging the box one square.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import FLOOR


@njit(cache=True, nogil=True, _nrt=False)
def legal_pushes(cells, box_at, box_pos, offsets, stamps, out):
    """List the pushes legal in the current state.

    Args:
        cells: uint8[n_cells] static cell flags.
        box_at: int16[n_cells] box index on each square, -1 for none.
        box_pos: int32[n_boxes] square of each box.
        offsets: int32[4] flat index step per direction.
        stamps: uint32[n_cells + 1] holding ``reach_player`` of the current state.
        out: int32[4 * n_boxes] receives push codes (box * 4 + direction), box-major.

    Returns:
        Number of pushes written.
    """
    mark = stamps[stamps.shape[0] - 1]
    n = 0
    for b in range(box_pos.shape[0]):
        sq = box_pos[b]
        if stamps[sq] != mark + np.uint32(1):  # no reached square touches this box
            continue
        for d in range(4):
            dest = sq + offsets[d]
            if stamps[sq - offsets[d]] == mark and (cells[dest] & FLOOR) and box_at[dest] < 0:
                out[n] = b * 4 + d
                n += 1
    return n


@njit(cache=True, nogil=True)
def is_legal_push(cells, box_at, box_pos, offsets, stamps, push):
    """True when ``push`` (box * 4 + direction) is legal; ``stamps`` as in ``legal_pushes``."""
    b = push >> 2
    if b < 0 or b >= box_pos.shape[0]:
        return False
    d = push & 3
    sq = box_pos[b]
    dest = sq + offsets[d]
    mark = stamps[stamps.shape[0] - 1]
    return stamps[sq - offsets[d]] == mark and (cells[dest] & FLOOR) != 0 and box_at[dest] < 0


@njit(cache=True, nogil=True, _nrt=False)
def apply_push(box_pos, box_at, offsets, zobrist, box_hash, push):
    """Push a box one square, updating positions, occupancy and hash in place.

    Args:
        box_pos: int32[n_boxes] square of each box; updated.
        box_at: int16[n_cells] box index per square; updated.
        offsets: int32[4] flat index step per direction.
        zobrist: uint64[n_cells] key per square.
        box_hash: uint64 hash of the configuration before the push.
        push: box * 4 + direction; must be legal (not checked).

    Returns:
        (new player square = the box's old square, new hash).
    """
    b = push >> 2
    old = box_pos[b]
    new = old + offsets[push & 3]
    box_at[old] = -1
    box_at[new] = b
    box_pos[b] = new
    return old, box_hash ^ zobrist[old] ^ zobrist[new]


@njit(cache=True, nogil=True, _nrt=False)
def undo_push(box_pos, box_at, offsets, zobrist, box_hash, push):
    """Take back ``apply_push(push)`` in place.

    Returns:
        (player square the push was made from, restored hash).
    """
    b = push >> 2
    d = offsets[push & 3]
    cur = box_pos[b]
    old = cur - d
    box_at[cur] = -1
    box_at[old] = b
    box_pos[b] = old
    return old - d, box_hash ^ zobrist[old] ^ zobrist[cur]


@njit(cache=True, nogil=True)
def legal_pulls(cells, box_at, box_pos, offsets, stamps, out):
    """List the pulls legal in the current state (for reverse search).

    A pull moves box b one square in direction d: the player must reach the square next to the
    box in direction d and the square beyond it must be free floor.

    Args:
        cells: uint8[n_cells] static cell flags.
        box_at: int16[n_cells] box index on each square, -1 for none.
        box_pos: int32[n_boxes] square of each box.
        offsets: int32[4] flat index step per direction.
        stamps: uint32[n_cells + 1] holding ``reach_player`` of the current state.
        out: int32[4 * n_boxes] receives pull codes (box * 4 + direction the box moves).

    Returns:
        Number of pulls written.
    """
    mark = stamps[stamps.shape[0] - 1]
    n = 0
    for b in range(box_pos.shape[0]):
        sq = box_pos[b]
        if stamps[sq] != mark + np.uint32(1):
            continue
        for d in range(4):
            stand = sq + offsets[d]
            back = stand + offsets[d]
            if stamps[stand] == mark and (cells[back] & FLOOR) and box_at[back] < 0:
                out[n] = b * 4 + d
                n += 1
    return n


@njit(cache=True, nogil=True)
def apply_pull(box_pos, box_at, offsets, zobrist, box_hash, pull):
    """Pull a box one square in place; the player steps back beyond the box's new square.

    Returns:
        (new player square, new hash).
    """
    b = pull >> 2
    d = offsets[pull & 3]
    old = box_pos[b]
    new = old + d
    box_at[old] = -1
    box_at[new] = b
    box_pos[b] = new
    return new + d, box_hash ^ zobrist[old] ^ zobrist[new]


@njit(cache=True, nogil=True)
def undo_pull(box_pos, box_at, offsets, zobrist, box_hash, pull):
    """Take back ``apply_pull(pull)`` in place.

    Returns:
        (player square the pull was made from, restored hash).
    """
    b = pull >> 2
    d = offsets[pull & 3]
    cur = box_pos[b]
    old = cur - d
    box_at[cur] = -1
    box_at[old] = b
    box_pos[b] = old
    return cur, box_hash ^ zobrist[old] ^ zobrist[cur]
