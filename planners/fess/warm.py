"""FESS's first call on a machine: its kernels compiled on two cores instead of one.

A FESS search is one kernel (``fess_run``) over two large trees of kernels: the move generator
(``generate_moves``: macro moves, advisors, PI-corrals) and the node-level deadlock tests
(``node_deadlock``: corrals, rooms, frozen boxes, learned patterns). Numba compiles one
function at a time in a process, and caches each compiled kernel on disk (``cache=True``). On
a cold cache, ``warm_up`` compiles the deadlock tests in a child process while this one
compiles the level tables and the move generator; ``fess_run`` is compiled last, here, and
loads the child's kernels from the cache. With a warm cache, or kernels already loaded, it
does nothing: the first search loads them as always.

The child is a fresh interpreter (``multiprocessing``'s forkserver or spawn), which imports the
calling program's main module: a script that calls ``warm_up`` at top level needs the usual
``if __name__ == "__main__":`` guard. ``soko solve`` calls it before its levels.
"""

from __future__ import annotations

import multiprocessing as mp
import sys

import numpy as np

from planners.limits import SearchLimits

# a small level: the kernels compile for the types of its tables, whatever paths it takes
_LEVEL = "#######\n#@$ . #\n#  $  #\n#.    #\n#######"


def _tiny_run():  # -> FessRun, imported late: this module is imported by the CLI
    from planners.fess.options import FessOptions
    from planners.fess.run import FessRun
    from soko_gym.levels import Level

    level = Level.from_xsb(_LEVEL)
    run = FessRun(FessOptions(), level.board, SearchLimits(max_nodes=50), None)
    boxes = level.board.start_boxes.astype(np.int32).copy()
    return run, level.board, boxes


def compile_deadlock_tests() -> None:
    """Compile (or load) ``node_deadlock`` and the tests under it (the child's half)."""
    run, board, boxes = _tiny_run()
    run._load(boxes)
    run._node_deadlock(boxes, int(board.start_player), int(boxes[0]))


def compile_move_generator():  # -> FessRun
    """Compile (or load) ``generate_moves`` and what it calls (this process's half).

    Returns the tiny level's search, for ``fess_run`` to be compiled on.
    """
    run, board, boxes = _tiny_run()
    run.node_moves(boxes, int(board.start_player))
    return run


def _cold() -> bool:
    """Whether the cache holds no compiled ``node_deadlock`` for this source (a cold start)."""
    from planners._kernels.fess_search import fess_run, node_deadlock

    if fess_run.signatures or node_deadlock.signatures:
        return False  # loaded or compiled in this process already
    try:
        return not node_deadlock._cache._cache_file._load_index()
    except Exception:  # numba's cache internals moved, or caching is off: do it in one process
        return False


def _context():
    if sys.platform.startswith("linux"):
        return mp.get_context("forkserver")
    return mp.get_context("spawn")


def warm_up(parallel: bool = True) -> bool:
    """Compile or load FESS's kernels before a search; True when two processes compiled.

    ``parallel=False`` (or a warm cache) compiles or loads them in this process only.
    """
    child = None
    # a daemonic process (a worker of a pool) may not start children: compile in it alone
    if parallel and not mp.current_process().daemon and _cold():
        try:
            child = _context().Process(target=compile_deadlock_tests, daemon=True)
            child.start()
        except Exception:  # no processes here (a sandbox, a frozen program): one core's worth
            child = None
    try:
        run = compile_move_generator()
    finally:
        if child is not None:
            child.join()
    run.run()  # fess_run: compiled here, its deadlock tests loaded from the child's cache
    return child is not None and child.exitcode == 0


__all__ = ["compile_deadlock_tests", "compile_move_generator", "warm_up"]
