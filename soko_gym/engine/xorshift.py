"""A seeded random stream for kernels: xorshift128+ over an explicit state array.

Kernels use no numpy RNG (ARCHITECTURE.md, "Numba kernels"): the level generator carries
its stream in a uint64[2] array, advanced in place, so a seed fixes every level it makes.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def next_random(rng):
    """Advance the generator and return its next output.

    Args:
        rng: uint64[2] xorshift128+ state, not all zero; advanced in place.

    Returns:
        A uint64 drawn uniformly from all 64-bit values.
    """
    s1 = rng[0]
    s0 = rng[1]
    rng[0] = s0
    s1 ^= s1 << np.uint64(23)
    s1 ^= s1 >> np.uint64(17)
    s1 ^= s0 ^ (s0 >> np.uint64(26))
    rng[1] = s1
    return s1 + s0


@njit(cache=True, nogil=True)
def random_below(rng, n):
    """A random int in ``[0, n)`` for ``1 <= n < 2**32``.

    Callers pass ``n`` as a variable or ``np.int64(...)``, never as a bare literal: numba would
    compile a separate signature for each literal value.

    Args:
        rng: uint64[2] generator state; advanced in place.
        n: exclusive upper bound.
    """
    high = next_random(rng) >> np.uint64(32)
    return np.int64((high * np.uint64(n)) >> np.uint64(32))


@njit(cache=True, nogil=True)
def random_unit(rng):
    """A random float in ``[0, 1)`` with 53 random bits.

    Args:
        rng: uint64[2] generator state; advanced in place.
    """
    return np.float64(next_random(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
