"""``planners.fess.warm``: FESS's kernels compiled or loaded before the first search."""

import os
import subprocess
import sys

import pytest

import planners
from planners import SearchLimits
from planners._kernels.fess_search import fess_run, generate_moves, node_deadlock
from planners.fess import warm
from soko_gym.levels import load_levels, verify


def test_warm_up_leaves_every_search_kernel_ready_and_splits_nothing_when_loaded():
    warm.compile_deadlock_tests()
    warm.compile_move_generator()
    assert node_deadlock.signatures and generate_moves.signatures
    # loaded in this process already: not a cold start, so no second process
    assert not warm._cold()
    assert warm.warm_up() is False
    assert fess_run.signatures
    level = load_levels("microban:4")[0]
    result = planners.solve(level, "fess", SearchLimits(max_seconds=30))
    assert result.solved and verify(level, result.lurd).ok
    # one signature each: the warm-up compiled them for the types a search passes
    assert len(fess_run.signatures) == 1 and len(node_deadlock.signatures) == 1
    assert len(generate_moves.signatures) == 1


@pytest.mark.slow
def test_a_cold_soko_solve_compiles_the_deadlock_tests_in_a_second_process(tmp_path):
    # an empty cache: the CLI's warm-up compiles node_deadlock's tree in a child, so this
    # process compiles fewer kernels than a one-process warm-up does, and the search works
    def compiled(parallel: bool) -> int:
        cache = tmp_path / f"numba-{parallel}"
        cache.mkdir()
        code = (
            "from planners.warmup import CompileWatch\n"
            "from planners.fess import warm\n"
            "with CompileWatch() as watch:\n"
            f"    assert warm.warm_up(parallel={parallel}) is {parallel}\n"
            "print(watch.count)\n"
        )
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        return int(out.stdout.split()[-1])

    assert compiled(True) < compiled(False)


def test_warm_up_starts_no_child_where_it_may_not(monkeypatch):
    # a daemonic process (a pool's worker) may not have children, and a context that cannot
    # start one leaves the compiling to this process: both end with the kernels ready
    def no_context():
        raise AssertionError("no child may start here")

    monkeypatch.setattr(warm, "_cold", lambda: True)
    monkeypatch.setattr(warm, "_context", no_context)
    monkeypatch.setattr(warm.mp.current_process(), "daemon", True, raising=False)
    assert warm.warm_up() is False
    monkeypatch.setattr(warm.mp.current_process(), "daemon", False, raising=False)
    assert warm.warm_up() is False  # the context raised: compiled (here: loaded) in-process
    assert fess_run.signatures
