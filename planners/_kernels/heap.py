"""Binary min-heap on arrays: int64 keys with int32 node indices (A*, greedy, best-first).

The driver grows the arrays when ``size`` reaches their capacity.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

# A heap's arrays as one kernel argument (its size lives in the caller's counters).
Heap = namedtuple(
    "Heap",
    [
        "keys",  # int64[cap] priorities, smallest first
        "nodes",  # int32[cap] node index per key
    ],
)


def new_heap(capacity: int) -> Heap:
    """Heap arrays of ``capacity`` entries (contents undefined until pushed)."""
    return Heap(np.zeros(capacity, dtype=np.int64), np.zeros(capacity, dtype=np.int32))


@njit(cache=True, nogil=True)
def heap_push(keys, nodes, size, key, node):
    """Insert (key, node); returns the new size.

    Args:
        keys: int64[cap] heap keys.
        nodes: int32[cap] node index per key.
        size: entries in use (must be < cap).
        key: priority (smallest first).
        node: payload.
    """
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] <= key:
            break
        keys[i] = keys[parent]
        nodes[i] = nodes[parent]
        i = parent
    keys[i] = key
    nodes[i] = node
    return size + 1


@njit(cache=True, nogil=True)
def heap_pop(keys, nodes, size):
    """Remove the smallest entry; returns (key, node, new size). ``size`` must be > 0."""
    top_key = keys[0]
    top_node = nodes[0]
    size -= 1
    key = keys[size]
    node = nodes[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] < keys[child]:
            child += 1
        if keys[child] >= key:
            break
        keys[i] = keys[child]
        nodes[i] = nodes[child]
        i = child
    if size > 0:
        keys[i] = key
        nodes[i] = node
    return top_key, top_node, size
