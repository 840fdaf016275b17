"""A planner's kernels compiled or loaded before its levels are timed, and saying so on stderr.

``soko solve`` (here and in every worker) and ``soko warmup`` solve a tiny level once per
process (``warm_up_planner``), so no level's seconds include numba compiling or loading its
kernels; ``announce_compile`` says on stderr when that warm-up compiles or is slow.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from planners import SearchLimits, solve
from soko_gym.levels import Level

# Two boxes, a walk between them: one tiny search runs every kernel a planner calls from Python.
WARMUP_LEVEL = "######\n#@$ .#\n# $ .#\n######"
_warm: set[tuple[str, bool]] = set()


def warm_up_planner(planner: str, optimizer: bool = False) -> None:
    """Compile or load ``planner``'s kernels (and the optimizers') once per process.

    Solving a tiny level first means no level's timed search starts with numba compiling or
    loading its kernels; ``soko solve`` calls it before the levels, here and in every worker.
    """
    if (planner, optimizer) in _warm:
        return
    if planner == "fess":  # a cold cache compiles on two cores (planners.fess.warm)
        from planners.fess.warm import warm_up

        warm_up()
    result = solve(WARMUP_LEVEL, planner)
    if optimizer and result.solved:
        from planners.optimizers import optimize

        optimize(Level.from_xsb(WARMUP_LEVEL), result.lurd, limits=SearchLimits(max_seconds=5.0))
    _warm.add((planner, optimizer))


def numba_cache_folder() -> str:
    """Where numba keeps the compiled kernels: ``NUMBA_CACHE_DIR`` or beside the sources."""
    from numba.core import config

    return config.CACHE_DIR or "__pycache__ folders beside the sources"


class CompileWatch:
    """Counts numba compilations (cache misses, not loads) while installed as a listener."""

    def __init__(self) -> None:
        from numba.core import event

        class _Listener(event.Listener):
            def on_start(inner, ev: Any) -> None:  # noqa: N805 (the watch is self)
                self.count += 1

            def on_end(inner, ev: Any) -> None:  # noqa: N805
                """Nothing to record: a compile is counted when it starts."""

        self.count = 0
        self._listener = _Listener()

    def __enter__(self) -> CompileWatch:
        from numba.core import event

        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc: object) -> None:
        from numba.core import event

        event.unregister("numba:compile", self._listener)


def announce_compile(
    fn: Callable[[], Any], dots: bool | None = None, out: TextIO | None = None
) -> tuple[float, int]:
    """Run ``fn`` (a warm-up), saying so on stderr when it compiles kernels or is slow.

    The line "compiling soko-gym kernels once (cached in <folder>) ..." appears as soon as numba
    starts compiling, then gets the seconds it took. A warm-up that compiles nothing but takes
    over a second (a slow disk or a busy machine) gets "loading soko-gym kernels (cached in
    <folder>) ..." with its seconds when it ends: before that, a slow start cannot be told from
    a compile about to begin. A quick load prints nothing. ``dots`` (default: stderr is a
    terminal) adds a dot every half second while compiling. Returns (seconds, compilations).
    """
    stream = out if out is not None else sys.stderr
    dots = stream.isatty() if dots is None else dots
    start = time.perf_counter()
    done = threading.Event()
    shown = threading.Event()
    folder = numba_cache_folder()
    compiling = f"compiling soko-gym kernels once (cached in {folder}) ..."

    with CompileWatch() as watch:

        def notice() -> None:
            ticks = 0
            while not done.wait(0.1):
                ticks += 1
                if not shown.is_set():
                    if watch.count:
                        stream.write(compiling)
                        stream.flush()
                        shown.set()
                elif dots and ticks % 5 == 0:
                    stream.write(".")
                    stream.flush()

        thread = threading.Thread(target=notice, name="soko-compile-notice", daemon=True)
        thread.start()
        try:
            fn()
        finally:
            done.set()
            thread.join()
    seconds = time.perf_counter() - start
    if watch.count or seconds > 1.0:
        if not shown.is_set():
            stream.write(
                compiling if watch.count else f"loading soko-gym kernels (cached in {folder}) ..."
            )
        how = f"{watch.count} compiled" if watch.count else "loaded from the cache"
        stream.write(f" {seconds:.1f} s ({how})\n")
        stream.flush()
    return seconds, watch.count
