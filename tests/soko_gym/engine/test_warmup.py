import importlib
import os
import pkgutil
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import soko_gym
import soko_gym.engine
from soko_gym.engine import push, reach
from soko_gym.levels import lurd_to_pushes, pushes_to_lurd
from tests._prelaunch import prelaunch, share_cache


def engine_kernels(packages=("soko_gym.engine",)):
    """Every public numba dispatcher of the packages (``_`` helpers compile in callers)."""
    kernels = {}
    for package in packages:
        kernels.update(_kernels_of(package))
    return kernels


def _kernels_of(package):
    kernels = {}
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        module = importlib.import_module(f"{package}.{info.name}")
        for name, obj in vars(module).items():
            public = not name.startswith("_")
            if public and hasattr(obj, "signatures") and obj.__module__ == module.__name__:
                kernels[f"{info.name}.{name}"] = obj
    return kernels


def env_rollout(env_id, seed):
    """Random legal actions in a single env and in serial and parallel vector envs."""
    env = gym.make(env_id, levels="microban:1-30", deadlock_termination=True)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(30):
        mask = env.unwrapped.action_masks()
        action = rng.choice(np.flatnonzero(mask)) if mask.any() else 0
        _, _, term, trunc, _ = env.step(action)
        if term or trunc:
            env.reset()
    for parallel in (False, True):
        venv = soko_gym.make_vec(env_id, 3, levels="microban:1-30", parallel=parallel)
        venv.reset(seed=seed)
        for _ in range(10):
            masks = venv.action_masks()
            venv.step(np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks]))


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


_WARMUP_CHECK = """
import json
import soko_gym, soko_gym.engine
from soko_gym.engine.corral_analysis import warmup_corral
from soko_gym.engine.exhaust import warmup_exhaust
from soko_gym.engine.lowerbound import warmup_lowerbound
from soko_gym.engine.patterns import warmup_patterns
from soko_gym.levels.generator import warmup_generator
from tests.soko_gym.engine.test_warmup import engine_kernels

soko_gym.engine.warmup()
warmup_generator()  # the generator's kernels warm up with the "generated" level source
warmup_lowerbound(soko_gym.load_levels("microban:1")[0].board)  # the planners' bounds
warmup_corral()  # and their corral kernels
warmup_exhaust()  # and FESS's exhaustion test
warmup_patterns()  # and the generated deadlock patterns
# the envs' search mask compiles with the first env that asks for it (deadlock_search > 0):
# warm-up leaves it out on purpose, it is half an env's cold start (engine.step._search_mask)
on_demand = ("batch.", "deadlock_mask.mask_searched_deadlocks")
kernels = {k: v for k, v in engine_kernels().items() if not k.startswith(on_demand)}
missing = [n for n, k in kernels.items() if not k.signatures]
print(json.dumps({"names": sorted(kernels), "missing": missing}))
"""


def test_warmup__compiles_every_engine_kernel(tmp_path):
    # On an empty cache, so every kernel compiles: one loaded from the cache with its caller
    # shows no signature of its own, whatever the warm-up did. The batch drivers compile on a
    # vector env's first reset instead, and only the one used.
    import json
    import subprocess

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    root = Path(__file__).resolve().parents[3]
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", _WARMUP_CHECK],
        env=env, cwd=root, capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    names = set(result["names"])
    assert {"reach.reach_player", "push.legal_pushes", "verify.apply_lurd"} <= names
    assert {"moves.push_step", "macro.macro_mask", "deadlock.is_simple_deadlock"} <= names
    missing = result["missing"]
    assert not missing, f"warmup() leaves these kernels uncompiled: {missing}"


class _StringCompiles:
    """Records which of our kernels made numba compile its string formatting (a cold cost).

    Slice copies between arrays (``a[i] = b``) and raising with a formatted message compile
    numba's unicode machinery, about 2 s per process on a cold cache; the kernels copy with
    loops and raise only constant messages.
    """

    def __init__(self):
        from numba.core import event

        self.stack, self.owners = [], set()
        watch = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                d = ev.data.get("dispatcher")
                name = f"{d.py_func.__module__}.{d.py_func.__qualname__}" if d else "?"
                if "unicode" in name or "raise_with_shape_context" in name:
                    ours = [n for n in watch.stack if n.startswith(("soko_gym", "planners"))]
                    watch.owners.add(ours[-1] if ours else "?")
                watch.stack.append(name)

            def on_end(self, ev):
                watch.stack.pop()

        event.register("numba:compile", _Listener())


def kernels_with_several_signatures():
    strings = _StringCompiles()
    soko_gym.engine.warmup()
    for source in ("microban:1", "sasquatch:49", "xsokoban:3", "boxoban-hard:5"):
        mixed_rollout(source)
    for seed, env_id in enumerate(i for i in soko_gym.ENV_IDS if "-Gen-" not in i):
        env_rollout(env_id, seed)
    venv = soko_gym.make_vec("Sokoban-Push-v0", 2, levels="generated", max_episode_steps=3)
    venv.reset(seed=0)
    for _ in range(4):
        venv.step(np.array([int(np.flatnonzero(m)[0]) for m in venv.action_masks()]))
    import planners

    guided = {"policy": lambda obs, masks: masks.astype(float)}  # lts, phs: a uniform policy
    for name in planners.available():
        options = guided if name in ("lts", "phs") else {}
        for level in soko_gym.load_levels("microban:1-2"):
            planners.solve(level, name, planners.SearchLimits(max_seconds=30), **options)
    from planners.optimizers import optimize

    level = soko_gym.load_levels("microban:2")[0]
    optimize(
        level, planners.solve(level, "astar").lurd, limits=planners.SearchLimits(max_seconds=20)
    )
    kernels = engine_kernels(("soko_gym.engine", "planners._kernels"))
    several = {name: k.signatures for name, k in kernels.items() if len(k.signatures) > 1}
    if strings.owners:
        several["(compiled numba's string formatting)"] = sorted(strings.owners)
    return several


@prelaunch
def _cold_signatures(job, folder):
    # An empty numba cache in a fresh process: kernels loaded from a cache do not record the
    # callees they compiled, so only a cold run shows every signature.
    code = (
        "from tests.soko_gym.engine.test_warmup import kernels_with_several_signatures as f; "
        "print(repr(f()))"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder)}
    root = Path(__file__).resolve().parents[3]
    proc = job.run([sys.executable, "-c", code], env=env, cwd=root, timeout=1800)
    # every kernel is compiled now: the main process loads what it has not compiled yet
    share_cache(folder, Path(os.environ["NUMBA_CACHE_DIR"]))
    return proc


@pytest.mark.prelaunch(_cold_signatures)
def test_kernels__keep_one_signature_after_a_mixed_rollout():
    proc = _cold_signatures.outcome()
    assert proc.returncode == 0, proc.stderr[-3000:]
    several = proc.stdout.strip().splitlines()[-1]
    assert several == "{}", f"kernels compiled for several argument types: {several}"
