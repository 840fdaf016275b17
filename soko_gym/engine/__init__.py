"""The numba engine: every jitted kernel of the game, as pure functions on arrays.

Imports only numpy, numba and the standard library. ``warmup()`` compiles (or loads from the
numba cache) every kernel on a tiny built-in level so that no compile time lands on a step.
"""

from __future__ import annotations

import numpy as np

from soko_gym.engine.board import Board, State, build_board
from soko_gym.engine.verify import VerifyResult, verify_lurd

__all__ = ["Board", "State", "VerifyResult", "build_board", "verify_lurd", "warmup"]

# A 1-box level whose solution exercises every direction: "rRdrUUruL" (written in warmup).
_WARMUP_ROWS = (
    "#######",
    "#  .  #",
    "#     #",
    "#@ $  #",
    "#     #",
    "#######",
)

_warm = False


def warmup() -> None:
    """Compile or load every engine kernel once, with the dtypes the engine always uses."""
    global _warm
    if _warm:
        return
    from soko_gym.engine import distance, push, reach, zobrist  # noqa: F401 (kernels below)
    from soko_gym.engine.constants import HASH_DTYPE, SQUARE_DTYPE

    grid = np.array([list(r) for r in _WARMUP_ROWS])
    w = grid.shape[1]
    boxes = [int(i) for i in np.flatnonzero(grid == "$")]
    player = int(np.flatnonzero(grid == "@")[0])
    board = build_board(grid == "#", grid == ".", boxes, player)  # side_regions, push_distances
    state = board.initial_state()  # full_hash
    stamps = reach.new_stamps(board.cells)
    n = board.n_cells
    stack = np.empty(n, dtype=SQUARE_DTYPE)
    reach.reach_player(state.box_at, board.offsets, state.player, stamps, stack)
    reach.is_reached(stamps, state.player)
    sides = np.empty(board.n_boxes, dtype=np.uint8)
    reach.reachable_box_sides(state.box_pos, board.offsets, stamps, sides)
    out = np.empty(4 * board.n_boxes, dtype=SQUARE_DTYPE)
    # scalars cross the Python boundary as int (squares, push codes) and uint64 (hashes) only
    k = push.legal_pushes(board.cells, state.box_at, state.box_pos, board.offsets, stamps, out)
    code = int(out[k - 1])
    push.is_legal_push(board.cells, state.box_at, state.box_pos, board.offsets, stamps, code)
    player, h = push.apply_push(
        state.box_pos, state.box_at, board.offsets, board.zobrist, state.box_hash, code
    )
    push.undo_push(state.box_pos, state.box_at, board.offsets, board.zobrist, HASH_DTYPE(h), code)
    reach.reach_player(state.box_at, board.offsets, state.player, stamps, stack)
    k = push.legal_pulls(board.cells, state.box_at, state.box_pos, board.offsets, stamps, out)
    code = int(out[0])
    player, h = push.apply_pull(
        state.box_pos, state.box_at, board.offsets, board.zobrist, state.box_hash, code
    )
    push.undo_pull(state.box_pos, state.box_at, board.offsets, board.zobrist, HASH_DTYPE(h), code)
    reach.next_mark(stamps)
    path = np.empty(n, dtype=np.int8)
    parent = np.empty(n, dtype=np.int8)
    reach.player_path(
        state.box_at, board.offsets, state.player, 1 * w + 1, stamps, stack, parent, path
    )
    result = verify_lurd(board, "rRdrUUruL")
    assert result.ok, result  # the warm-up level's solution must replay
    _warm = True
