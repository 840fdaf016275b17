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
    _warm_steps(board)
    _warm = True


def _warm_steps(board: Board) -> None:
    """Compile the env step kernels with the argument types the envs pass."""
    from soko_gym.engine import deadlock, deadlock_mask, macro, moves, reach
    from soko_gym.engine.actions import KIND_PUSH
    from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_DTYPE, N_PLANES, SQUARE_DTYPE

    n = board.n_cells
    cells = board.cells
    box_at = np.full(n, -1, dtype=BOX_AT_DTYPE)
    box_pos = np.zeros(board.n_boxes, dtype=SQUARE_DTYPE)
    n_boxes = moves.place_boxes(box_at, box_pos, board.start_boxes, int(board.n_boxes))
    obs = np.zeros(N_PLANES * n, dtype=np.uint8)
    player = int(board.start_player)
    moves.write_planes(cells, box_pos, int(n_boxes), player, obs)
    moves.count_on_goal(cells, box_pos, int(n_boxes))
    stamps = reach.new_stamps(cells)
    reach.reset_stamps(cells, stamps)
    reach.walk_distances(
        box_at,
        board.offsets,
        player,
        stamps,
        np.empty(n, dtype=SQUARE_DTYPE),
        np.empty(n, dtype=SQUARE_DTYPE),
    )
    stack = np.empty(4 * n, dtype=SQUARE_DTYPE)
    queue = np.empty(4 * n, dtype=SQUARE_DTYPE)
    parent = np.empty(4 * n, dtype=SQUARE_DTYPE)
    dist = np.empty(4 * n, dtype=DIST_DTYPE)
    plan = np.empty(4 * n, dtype=np.int8)
    parent8 = np.empty(n, dtype=np.int8)
    walk = np.empty(n, dtype=np.int8)
    seen = np.zeros(n + 1, dtype=np.uint32)
    trail = np.empty(n, dtype=SQUARE_DTYPE)
    moves.move_mask(cells, box_at, board.offsets, player, np.zeros(5, dtype=bool))
    pushes = np.zeros(4 * n, dtype=bool)
    moves.push_mask(
        cells, box_at, box_pos, int(n_boxes), board.offsets, player, stamps, stack, pushes
    )
    sq, d = divmod(int(np.flatnonzero(pushes)[0]), 4)  # warmed itself: a cached caller won't
    dst = sq + int(board.offsets[d])
    deadlock_mask.push_is_dead(cells, board.dead, box_at, board.offsets, sq, dst, seen, trail)
    deadlock_mask.mask_dead_actions(
        KIND_PUSH, cells, board.dead, box_at, board.offsets, player, seen, trail, pushes
    )
    macro.macro_mask(
        cells,
        box_at,
        box_pos,
        int(n_boxes),
        board.offsets,
        player,
        stamps,
        stack,
        dist,
        parent,
        queue,
        np.zeros(n * n, dtype=bool),
    )
    box = int(box_pos[0])
    status, player, _, moved = moves.move_step(
        cells, box_at, box_pos, board.offsets, obs, player, 3
    )
    player = int(player)
    moves.push_step(
        cells, box_at, box_pos, board.offsets, obs, player, box + 1, 3, stamps, queue, parent8, walk
    )
    macro.box_paths(
        cells, box_at, board.offsets, player, int(box_pos[0]), stamps, stack, dist, parent, queue
    )
    macro.macro_plan(
        cells,
        box_at,
        board.offsets,
        player,
        box + 2,
        box + 3,
        stamps,
        stack,
        dist,
        parent,
        queue,
        plan,
    )
    deadlock.is_simple_deadlock(
        cells, board.dead, box_at, board.offsets, int(box_pos[0]), seen, trail
    )
    _warm_env_kernels(board)


def _warm_env_kernels(board: Board) -> None:
    """Compile each kind's ``env_reset_*`` and ``env_step_*`` with the bundles the envs build."""
    from soko_gym.engine import actions, env_bundles, step
    from soko_gym.engine.constants import N_PLANES, SQUARE_DTYPE

    n = board.n_cells
    tables = env_bundles.env_tables(
        board.cells[None].copy(),
        board.dead[None].copy(),
        board.start_boxes[None].astype(SQUARE_DTYPE),
        np.array([board.n_boxes], dtype=np.int64),
        np.array([board.start_player], dtype=np.int64),
        board.offsets,
    )
    for kind in (actions.KIND_MOVE, actions.KIND_PUSH, actions.KIND_MACRO):
        opts = env_bundles.new_env_options(kind, np.zeros(4), 0, True, kind == actions.KIND_MOVE)
        size = actions.n_actions(kind, n, opts.noop_action)
        state = env_bundles.new_env_state(1, n, int(board.n_boxes), N_PLANES, size)
        scratch = env_bundles.new_env_scratch(1, n, kind, record_lurd=True)
        reset, step_kernel = step.env_kernels(kind)
        reset(opts, tables, state, scratch, 0, 0)
        step_kernel(opts, tables, state, scratch, 0, int(np.flatnonzero(state.masks[0])[0]))
