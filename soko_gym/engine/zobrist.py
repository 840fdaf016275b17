"""Zobrist hashing of box configurations: fixed-seed key tables, full and incremental hashes.

The player is not part of the hash; a transposition key is (box hash, normalized player square).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.constants import HASH_DTYPE

ZOBRIST_SEED = 0x50C0  # fixed: hashes are reproducible across runs and processes


def zobrist_table(n_cells: int) -> np.ndarray:
    """Return the box key of every square: uint64[n_cells], the same for every call."""
    rng = np.random.Generator(np.random.PCG64(ZOBRIST_SEED))
    return rng.integers(1, np.iinfo(np.uint64).max, size=n_cells, dtype=HASH_DTYPE, endpoint=True)


@njit(cache=True, nogil=True)
def full_hash(zobrist, box_pos):
    """Hash of a box configuration from scratch.

    Args:
        zobrist: uint64[n_cells] key per square.
        box_pos: int32[n_boxes] square of each box.

    Returns:
        uint64 XOR of the keys of the occupied squares.
    """
    h = np.uint64(0)
    for i in range(box_pos.shape[0]):
        h ^= zobrist[box_pos[i]]
    return h
