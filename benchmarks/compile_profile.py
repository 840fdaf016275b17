"""Where a cold start's compile time goes: numba's compile events per kernel, as a table.

    python benchmarks/compile_profile.py fess > benchmarks/results/compile-profile-fess.md
    python benchmarks/compile_profile.py astar

Runs in this process on a fresh, empty ``NUMBA_CACHE_DIR`` (set before numba is imported), so
every kernel the planner needs is compiled, one at a time: FESS through ``planners.fess.warm``
with ``parallel=False`` (its usual two-process split would hide half the work), the others by
solving the warm-up level. Per kernel: the seconds of its own compile (its callees' compiles
subtracted), those seconds spent holding numba's LLVM lock (optimizing and generating machine
code for the kernel's module, which links in every callee's module again), and the seconds with
its callees. A kernel deep in the call tree is re-optimized in each layer above it, so the
top kernels' LLVM seconds say what their closures, not their own code, cost.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from typing import Any


class _Recorder:
    """Numba compile and LLVM-lock events, folded per kernel name."""

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []  # [name, start, seconds in callees' compiles]
        self.own: Counter[str] = Counter()
        self.total: Counter[str] = Counter()
        self.llvm: Counter[str] = Counter()
        self._lock_start = 0.0

    def start(self, ev: Any) -> None:
        if ev.kind == "numba:compile":
            func = getattr(ev.data["dispatcher"], "py_func", None)
            name = f"{func.__module__}.{func.__qualname__}" if func else str(func)
            self.stack.append([name, time.perf_counter(), 0.0])
        elif ev.kind == "numba:llvm_lock":
            self._lock_start = time.perf_counter()

    def end(self, ev: Any) -> None:
        if ev.kind == "numba:compile":
            name, began, inner = self.stack.pop()
            spent = time.perf_counter() - began
            self.total[name] += spent
            self.own[name] += spent - inner
            if self.stack:
                self.stack[-1][2] += spent
        elif ev.kind == "numba:llvm_lock" and self.stack:
            self.llvm[self.stack[-1][0]] += time.perf_counter() - self._lock_start


def main(argv: list[str] | None = None) -> int:
    """Compile ``argv[0]``'s kernels from an empty cache and print the table."""
    args = sys.argv[1:] if argv is None else argv
    planner = args[0] if args else "fess"
    top = int(args[1]) if len(args) > 1 else 25
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="soko_compile_")
    from numba.core import event

    recorder = _Recorder()

    class _Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            recorder.start(ev)

        def on_end(self, ev: Any) -> None:
            recorder.end(ev)

    listener = _Listener()
    event.register("numba:compile", listener)
    event.register("numba:llvm_lock", listener)
    began = time.perf_counter()
    if planner == "fess":
        from planners.fess.warm import warm_up

        warm_up(parallel=False)
    else:
        from planners import solve
        from planners.warmup import WARMUP_LEVEL

        solve(WARMUP_LEVEL, planner)
    wall = time.perf_counter() - began
    own = sum(recorder.own.values())
    llvm = sum(recorder.llvm.values())
    print(f"# Compiling {planner}'s kernels from an empty cache, one process\n")
    print(
        f"{wall:.1f} s wall, {len(recorder.total)} kernels; compiles {own:.1f} s, of which "
        f"{llvm:.1f} s under the LLVM lock (optimizing and generating linked modules).\n"
    )
    print("| kernel | own s | own LLVM s | with callees s |")
    print("|---|---:|---:|---:|")
    for name, seconds in recorder.own.most_common(top):
        print(
            f"| `{name}` | {seconds:.2f} | {recorder.llvm[name]:.2f} | {recorder.total[name]:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
