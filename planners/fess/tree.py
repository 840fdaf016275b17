"""FESS's search tree as arrays: a new empty tree, and a larger copy when the kernel asks.

The rows and tables are those of ``planners._kernels.fess_tree.FessTree``; ``FessRun`` makes
the first tree and grows it when ``fess_run`` returns ``S_GROW``.
"""

from __future__ import annotations

import numpy as np

from planners._kernels.fess_tree import N_CTR, N_KEEP, FessTree, rehash_tree
from soko_gym.engine.constants import BOX_AT_DTYPE, HASH_DTYPE


def new_tree(n_boxes: int, nodes: int, moves: int) -> FessTree:
    """An empty tree for ``nodes`` nodes and ``moves`` pooled moves."""
    tcap = 1 << (2 * nodes - 1).bit_length()
    return FessTree(
        box_pos=np.zeros((nodes, max(1, n_boxes)), dtype=BOX_AT_DTYPE),
        hash=np.zeros(nodes, dtype=HASH_DTYPE),
        player=np.zeros(nodes, dtype=np.int32),
        norm=np.zeros(nodes, dtype=np.int32),
        parent=np.full(nodes, -1, dtype=np.int32),
        moved=np.zeros((nodes, 2), dtype=np.int32),
        weight=np.zeros(nodes, dtype=np.int64),
        feat=np.zeros((nodes, 6), dtype=np.int32),
        cell=np.zeros(nodes, dtype=np.int32),
        mstart=np.zeros(nodes, dtype=np.int64),
        mcount=np.zeros(nodes, dtype=np.int32),
        mnext=np.zeros(nodes, dtype=np.int32),
        n_open=np.zeros(nodes, dtype=np.int32),
        dead=np.zeros(nodes, dtype=np.uint8),
        lseen=np.zeros(nodes, dtype=np.int32),
        tick=np.zeros(nodes, dtype=np.int64),
        left=np.full(nodes, -1, dtype=np.int32),
        right=np.full(nodes, -1, dtype=np.int32),
        tt=np.full(tcap, -1, dtype=np.int32),
        rows=np.zeros((moves, N_KEEP), dtype=np.int16),
        mwts=np.zeros(moves, dtype=np.int32),
        morder=np.zeros(moves, dtype=np.int32),
        advised=np.zeros(moves, dtype=np.uint8),
        cell_feat=np.zeros((nodes, 4), dtype=np.int32),
        cell_root=np.full(nodes, -1, dtype=np.int32),
        cell_on=np.zeros(nodes, dtype=np.uint8),
        cell_tab=np.full(tcap, -1, dtype=np.int32),
        active=np.zeros(nodes, dtype=np.int32),
        ctr=np.zeros(N_CTR, dtype=np.int64),
    )


def grow_tree(tree: FessTree, nodes: int, moves: int) -> FessTree:
    """A copy of ``tree`` with room for ``nodes`` nodes and ``moves`` pooled moves."""
    grown = new_tree(tree.box_pos.shape[1], nodes, moves)
    n_old = tree.cell.shape[0]
    m_old = tree.rows.shape[0]
    for name, old in tree._asdict().items():
        new = getattr(grown, name)
        if name in ("tt", "cell_tab"):
            continue  # rebuilt by rehash_tree
        if name == "ctr":
            new[:] = old
        elif old.shape[0] == m_old and name in ("rows", "mwts", "morder", "advised"):
            new[:m_old] = old
        else:
            new[:n_old] = old
    rehash_tree(grown)
    return grown


__all__ = ["grow_tree", "new_tree"]
