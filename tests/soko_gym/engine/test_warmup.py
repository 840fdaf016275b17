import importlib
import pkgutil

import numpy as np

import soko_gym
import soko_gym.engine
from soko_gym.engine import push, reach
from soko_gym.levels import lurd_to_pushes, pushes_to_lurd


def engine_kernels():
    """Every numba dispatcher defined in a soko_gym.engine module."""
    kernels = {}
    for info in pkgutil.iter_modules(soko_gym.engine.__path__):
        module = importlib.import_module(f"soko_gym.engine.{info.name}")
        for name, obj in vars(module).items():
            if hasattr(obj, "signatures") and obj.__module__ == module.__name__:
                kernels[f"{info.name}.{name}"] = obj
    return kernels


def mixed_rollout(source):
    """Exercise every public engine path on one level, the way planners and envs will."""
    level = soko_gym.load_levels(source)[0]
    board = level.board
    state = board.initial_state()
    n = board.n_cells
    stamps = reach.new_stamps(board.cells)
    stack = np.empty(n, dtype=np.int32)
    out = np.empty(4 * board.n_boxes, dtype=np.int32)
    sides = np.empty(board.n_boxes, dtype=np.uint8)
    made = []
    for step in range(12):
        reach.reach_player(state.box_at, board.offsets, state.player, stamps, stack)
        reach.reachable_box_sides(state.box_pos, board.offsets, stamps, sides)
        k = push.legal_pushes(board.cells, state.box_at, state.box_pos, board.offsets, stamps, out)
        if k == 0:
            break
        code = int(out[step % k])
        assert push.is_legal_push(
            board.cells, state.box_at, state.box_pos, board.offsets, stamps, code
        )
        b, d = divmod(code, 4)
        made.append((int(state.box_pos[b]), d))
        state.apply_push(board, code)
    state.undo_push(board, code)
    lurd = pushes_to_lurd(level, made)
    assert lurd_to_pushes(level, lurd) == made
    assert soko_gym.verify(level, lurd).index == len(lurd)


def test_warmup__compiles_every_engine_kernel():
    soko_gym.engine.warmup()
    kernels = engine_kernels()
    assert {"reach.reach_player", "push.legal_pushes", "verify.apply_lurd"} <= set(kernels)
    missing = [name for name, k in kernels.items() if not k.signatures]
    assert not missing, f"warmup() leaves these kernels uncompiled: {missing}"


def test_kernels__keep_one_signature_after_a_mixed_rollout():
    soko_gym.engine.warmup()
    for source in ("microban:1", "sasquatch:49", "xsokoban:3", "boxoban-hard:5"):
        mixed_rollout(source)
    several = {name: k.signatures for name, k in engine_kernels().items() if len(k.signatures) > 1}
    assert not several, f"kernels recompiled for new argument types: {several}"
