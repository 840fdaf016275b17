"""Open-addressing transposition table: (box Zobrist hash, normalized player) -> node index.

Linear probing over a power-of-two capacity; the driver grows it (``rehash``) before the load
passes one half. Keys are compared by hash and player only: two box configurations with the
same 64-bit hash are taken as equal (a collision is about 2^-64 per pair of positions).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

EMPTY = -1

# A table as one kernel argument; ``*table`` still unpacks to the three arrays the functions
# below take.
Table = namedtuple(
    "Table",
    [
        "hashes",  # uint64[cap] key hashes
        "players",  # int32[cap] key players, EMPTY for a free slot
        "values",  # int32[cap] node indices (or depths, pushes: whatever the search stores)
    ],
)


def new_table(capacity: int) -> Table:
    """An empty table of ``capacity`` slots, a power of two >= 2."""
    if capacity < 2 or capacity & (capacity - 1):
        raise ValueError(f"capacity must be a power of two >= 2, got {capacity}")
    return Table(
        np.zeros(capacity, dtype=np.uint64),
        np.full(capacity, EMPTY, dtype=np.int32),
        np.zeros(capacity, dtype=np.int32),
    )


@njit(cache=True, nogil=True)
def _slot(hashes, players, h, p):
    mask = hashes.shape[0] - 1
    i = np.int64(
        (h ^ (h >> np.uint64(29)) ^ np.uint64(p) * np.uint64(0x9E3779B97F4A7C15)) & np.uint64(mask)
    )
    while players[i] != EMPTY and (hashes[i] != h or players[i] != p):
        i = (i + 1) & mask
    return i


@njit(cache=True, nogil=True)
def table_get(hashes, players, values, h, p):
    """Node index stored for key (h, p), or -1.

    Args:
        hashes: uint64[cap] key hashes.
        players: int32[cap] key players, EMPTY for a free slot.
        values: int32[cap] node indices.
        h: uint64 box hash.
        p: normalized player square.
    """
    i = _slot(hashes, players, h, p)
    return -1 if players[i] == EMPTY else values[i]


@njit(cache=True, nogil=True)
def table_put(hashes, players, values, h, p, value):
    """Store ``value`` for key (h, p) (replacing any); returns True when the key was new."""
    i = _slot(hashes, players, h, p)
    new = players[i] == EMPTY
    hashes[i] = h
    players[i] = p
    values[i] = value
    return new


@njit(cache=True, nogil=True)
def rehash(hashes, players, values, new_hashes, new_players, new_values):
    """Copy every entry into a larger (empty) table."""
    for i in range(hashes.shape[0]):
        if players[i] != EMPTY:
            table_put(
                new_hashes,
                new_players,
                new_values,
                hashes[i],
                np.int64(players[i]),
                np.int64(values[i]),  # int64 like every caller: one compiled signature
            )
