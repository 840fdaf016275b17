"""Engine micro-benchmarks on Sasquatch 49: reachability (numba vs plain Python), push kernels.

Also times the cold and warm start of ``soko_gym.engine.warmup()`` in fresh subprocesses and
prints everything, with the machine it ran on, as a markdown table.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

import soko_gym
from soko_gym.engine.board import Board, State
from soko_gym.engine.constants import SQUARE_DTYPE, WALL
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import new_stamps, reach_player
from soko_gym.engine.zobrist import full_hash
from soko_gym.provenance import machine_line

LEVEL_SPEC = "sasquatch:49"
REACH_TARGET_US = 0.5  # issue target: reach_player on the box-free board


@dataclass(frozen=True)
class Settings:
    """How much work each measurement does.

    Attributes:
        reach_calls: reach_player calls inside one jitted timing loop.
        kernel_calls: calls of each push/hash kernel inside one jitted timing loop.
        python_calls: plain-Python flood fills per timing.
        repeats: timings per measurement; the best one is reported.
        cold: whether to run the cold/warm start subprocesses.
        start_repeats: subprocess runs for the warm start and the bare import (best reported).
    """

    reach_calls: int
    kernel_calls: int
    python_calls: int
    repeats: int
    cold: bool
    start_repeats: int


@dataclass(frozen=True)
class Row:
    """One line of the results table."""

    what: str
    calls: str
    result: str
    note: str = ""


# ---------------------------------------------------------------------------------------------
# Jitted drivers: each runs one kernel ``n`` times and returns a checksum that depends on every
# call, so the loop cannot be optimized away.
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _reach_loop(
    box_at: np.ndarray,
    offsets: np.ndarray,
    start: int,
    stamps: np.ndarray,
    stack: np.ndarray,
    n: int,
) -> int:
    """Call ``reach_player`` ``n`` times.

    Args:
        box_at: int16[n_cells] box index per square, -1 for none.
        offsets: int32[4] flat index step per direction.
        start: player square.
        stamps: uint32[n_cells + 1] stamp buffer.
        stack: int32[n_cells] scratch.
        n: number of calls.

    Returns:
        Sum over the calls of (reached count + normalized square).
    """
    total = 0
    for _ in range(n):
        count, lowest = reach_player(box_at, offsets, start, stamps, stack)
        total += count + lowest
    return total


@njit(cache=True)
def _legal_pushes_loop(
    cells: np.ndarray,
    box_at: np.ndarray,
    box_pos: np.ndarray,
    offsets: np.ndarray,
    start: int,
    stamps: np.ndarray,
    stack: np.ndarray,
    out: np.ndarray,
    n: int,
) -> int:
    """Fill ``stamps`` with one ``reach_player``, then call ``legal_pushes`` ``n`` times.

    Args:
        cells: uint8[n_cells] static cell flags.
        box_at: int16[n_cells] box index per square, -1 for none.
        box_pos: int32[n_boxes] square of each box.
        offsets: int32[4] flat index step per direction.
        start: player square.
        stamps: uint32[n_cells + 1] stamp buffer.
        stack: int32[n_cells] scratch for the reach.
        out: int32[4 * n_boxes] receives the push codes.
        n: number of calls.

    Returns:
        Sum over the calls of (number of pushes + last push code written).
    """
    reach_player(box_at, offsets, start, stamps, stack)
    total = 0
    for _ in range(n):
        k = legal_pushes(cells, box_at, box_pos, offsets, stamps, out)
        total += k + out[k - 1]
    return total


@njit(cache=True)
def _apply_undo_loop(
    box_pos: np.ndarray,
    box_at: np.ndarray,
    offsets: np.ndarray,
    zobrist: np.ndarray,
    box_hash: np.uint64,
    push: int,
    n: int,
) -> np.uint64:
    """Make and take back ``push`` ``n`` times.

    Args:
        box_pos: int32[n_boxes] square of each box; restored on return.
        box_at: int16[n_cells] box index per square; restored on return.
        offsets: int32[4] flat index step per direction.
        zobrist: uint64[n_cells] key per square.
        box_hash: hash of the configuration.
        push: a legal push code (box * 4 + direction).
        n: number of apply/undo pairs.

    Returns:
        Wrapping sum of the intermediate hashes and player squares.
    """
    total = np.uint64(0)
    h = box_hash
    for _ in range(n):
        player, h = apply_push(box_pos, box_at, offsets, zobrist, h, push)
        total += h + np.uint64(player)
        player, h = undo_push(box_pos, box_at, offsets, zobrist, h, push)
        total += h + np.uint64(player)
    return total


@njit(cache=True)
def _full_hash_loop(zobrist: np.ndarray, box_pos: np.ndarray, sink: np.ndarray, n: int) -> int:
    """Call ``full_hash`` ``n`` times.

    Each hash is stored into ``sink`` (uint64, like ``zobrist``): the store may alias the key
    table as far as the compiler knows, so the invariant call cannot be hoisted out of the loop.

    Args:
        zobrist: uint64[n_cells] key per square.
        box_pos: int32[n_boxes] square of each box.
        sink: uint64[64] scratch receiving the hashes.
        n: number of calls.

    Returns:
        Number of calls whose hash had its lowest bit set.
    """
    odd = 0
    for i in range(n):
        h = full_hash(zobrist, box_pos)
        sink[i & 63] = h
        odd += int(h & np.uint64(1))
    return odd


# ---------------------------------------------------------------------------------------------
# Plain-Python reference
# ---------------------------------------------------------------------------------------------


def python_reach(
    is_wall: list[bool], box_at: list[int], offsets: list[int], start: int
) -> tuple[int, int]:
    """Flood-fill the player's reach with lists and a set, no numba.

    Args:
        is_wall: per square, True on walls.
        box_at: per square, box index or -1.
        offsets: flat index step per direction.
        start: player square.

    Returns:
        (number of reached squares, smallest reached square), as ``reach_player`` returns.
    """
    seen = {start}
    stack = [start]
    lowest = start
    while stack:
        sq = stack.pop()
        for off in offsets:
            nb = sq + off
            if nb in seen or is_wall[nb] or box_at[nb] >= 0:
                continue
            seen.add(nb)
            stack.append(nb)
            if nb < lowest:
                lowest = nb
    return len(seen), lowest


# ---------------------------------------------------------------------------------------------
# Timing helpers
# ---------------------------------------------------------------------------------------------


def best_time(run: Callable[[], object], repeats: int) -> tuple[float, object]:
    """Best wall time of ``run()`` over ``repeats`` calls, after one untimed warm-up call.

    Args:
        run: the work to time.
        repeats: number of timed calls.

    Returns:
        (best seconds, result of the last call).
    """
    result = run()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - t0)
    return best, result


def time_subprocess(code: str, env: dict[str, str]) -> float:
    """Seconds for ``python -c code`` to run to completion in a fresh interpreter.

    Args:
        code: the Python source to run.
        env: environment of the child process.

    Raises:
        RuntimeError: when the child exits with an error.
    """
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"`python -c {code!r}` failed:\n{proc.stderr}")
    return elapsed


# ---------------------------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReachTiming:
    """Result of timing one reachability input.

    Attributes:
        count: squares reached.
        numba_us: microseconds per ``reach_player`` call inside the jitted loop.
        python_us: microseconds per plain-Python flood fill.
    """

    count: int
    numba_us: float
    python_us: float


def time_reach(board: Board, box_at: np.ndarray, start: int, cfg: Settings) -> ReachTiming:
    """Time ``reach_player`` (jitted loop) and the plain-Python flood fill on one input.

    Args:
        board: the level's board.
        box_at: int16[n_cells] box index per square, -1 for none.
        start: player square.
        cfg: work sizes.

    Raises:
        AssertionError: when the checksum or the Python result disagrees with ``reach_player``.
    """
    offsets = board.offsets
    stamps = new_stamps(board.cells)
    stack = np.empty(board.n_cells, dtype=SQUARE_DTYPE)
    count, lowest = reach_player(box_at, offsets, start, stamps, stack)
    n = cfg.reach_calls
    secs, checksum = best_time(
        lambda: _reach_loop(box_at, offsets, start, stamps, stack, n), cfg.repeats
    )
    if checksum != n * (count + lowest):
        raise AssertionError(f"reach checksum {checksum} != {n} * ({count} + {lowest})")

    is_wall = ((board.cells & WALL) != 0).tolist()
    box_list = box_at.tolist()
    off_list = offsets.tolist()
    if python_reach(is_wall, box_list, off_list, start) != (count, lowest):
        raise AssertionError("plain-Python flood fill disagrees with reach_player")
    m = cfg.python_calls

    def run_python() -> None:
        for _ in range(m):
            python_reach(is_wall, box_list, off_list, start)

    py_secs, _ = best_time(run_python, cfg.repeats)
    return ReachTiming(int(count), secs / n * 1e6, py_secs / m * 1e6)


def bench_reach(board: Board, state: State, cfg: Settings) -> list[Row]:
    """Reachability per call, numba and plain Python, on the start state and without boxes.

    Args:
        board: the level's board.
        state: its start state.
        cfg: work sizes.

    Returns:
        Table rows.
    """
    no_boxes = np.full_like(state.box_at, -1)
    rows: list[Row] = []
    for label, box_at in (("start state", state.box_at), ("boxes removed", no_boxes)):
        t = time_reach(board, box_at, state.player, cfg)
        note = f"{t.count} squares reached, {t.numba_us * 1e3 / t.count:.2f} ns/square"
        if label == "boxes removed":
            verdict = "PASS" if t.numba_us <= REACH_TARGET_US else "MISS"
            note = f"target <= {REACH_TARGET_US} µs: **{verdict}**; {note}"
        rows.append(
            Row(
                f"reach_player, {label} (numba)",
                f"{cfg.reach_calls:,}",
                f"{t.numba_us:.3f} µs",
                note,
            )
        )
        rows.append(
            Row(
                f"flood fill, {label} (plain Python)",
                f"{cfg.python_calls:,}",
                f"{t.python_us:.2f} µs",
                f"python / numba = **{t.python_us / t.numba_us:.0f}x**",
            )
        )
    return rows


def bench_kernels(board: Board, state: State, cfg: Settings) -> list[Row]:
    """Nanoseconds per call of legal_pushes, an apply_push + undo_push pair, and full_hash.

    Args:
        board: the level's board.
        state: its start state (left unchanged).
        cfg: work sizes.

    Returns:
        Table rows.
    """
    n = cfg.kernel_calls
    st = state.copy()
    stamps = new_stamps(board.cells)
    stack = np.empty(board.n_cells, dtype=SQUARE_DTYPE)
    out = np.empty(4 * board.n_boxes, dtype=SQUARE_DTYPE)
    reach_player(st.box_at, board.offsets, st.player, stamps, stack)
    k = int(legal_pushes(board.cells, st.box_at, st.box_pos, board.offsets, stamps, out))
    if k == 0:
        raise AssertionError(f"{LEVEL_SPEC} has no legal push at the start")
    first_push = int(out[0])

    secs, _ = best_time(
        lambda: _legal_pushes_loop(
            board.cells,
            st.box_at,
            st.box_pos,
            board.offsets,
            st.player,
            stamps,
            stack,
            out,
            n,
        ),
        cfg.repeats,
    )
    rows = [Row("legal_pushes (numba)", f"{n:,}", f"{secs / n * 1e9:.1f} ns", f"{k} pushes")]

    secs, _ = best_time(
        lambda: _apply_undo_loop(
            st.box_pos, st.box_at, board.offsets, board.zobrist, st.box_hash, first_push, n
        ),
        cfg.repeats,
    )
    if not st.same_as(state):
        raise AssertionError("apply_push/undo_push loop did not restore the state")
    rows.append(
        Row(
            "apply_push + undo_push (numba)",
            f"{n:,}",
            f"{secs / n * 1e9:.1f} ns",
            f"per pair; push code {first_push}",
        )
    )

    sink = np.empty(64, dtype=board.zobrist.dtype)
    secs, _ = best_time(lambda: _full_hash_loop(board.zobrist, st.box_pos, sink, n), cfg.repeats)
    if sink[0] != state.box_hash:
        raise AssertionError("full_hash loop disagrees with the state's hash")
    rows.append(
        Row("full_hash (numba)", f"{n:,}", f"{secs / n * 1e9:.1f} ns", f"{board.n_boxes} boxes")
    )
    return rows


def bench_start(cfg: Settings) -> list[Row]:
    """Seconds to import the package and run ``engine.warmup()``, cold and warm numba cache.

    Args:
        cfg: work sizes.

    Returns:
        Table rows.
    """
    warm_code = "import soko_gym; soko_gym.engine.warmup()"
    import_code = "import soko_gym"
    with tempfile.TemporaryDirectory(prefix="soko_numba_cache_") as cache_dir:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
        cold = time_subprocess(warm_code, env)
        warm = min(time_subprocess(warm_code, env) for _ in range(cfg.start_repeats))
        bare = min(time_subprocess(import_code, env) for _ in range(cfg.start_repeats))
    best_of = f"best of {cfg.start_repeats}"
    return [
        Row("import + warmup(), cold cache", "1", f"{cold:.2f} s", "fresh empty NUMBA_CACHE_DIR"),
        Row("import + warmup(), warm cache", best_of, f"{warm:.2f} s", "same NUMBA_CACHE_DIR"),
        Row("import soko_gym", best_of, f"{bare:.3f} s", "no kernels loaded"),
    ]


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def markdown_table(rows: list[Row]) -> str:
    """Render rows as a markdown table."""
    header = ("Measurement", "Calls / timing", "Result", "Notes")
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---", "---:", "---:", "---"]) + "|",
    ]
    lines += [f"| {r.what} | {r.calls} | {r.result} | {r.note} |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    """Parse flags, run the benchmarks and print the markdown report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: loops of 10,000, one repeat, cold start skipped unless --cold",
    )
    parser.add_argument("--cold", action="store_true", help="run the cold start with --quick")
    args = parser.parse_args()
    if args.quick:
        cfg = Settings(10_000, 10_000, 200, 1, args.cold, 1)
    else:
        cfg = Settings(100_000, 1_000_000, 2_000, 5, True, 3)

    t0 = time.perf_counter()
    level = soko_gym.load_levels(LEVEL_SPEC)[0]
    board = level.board
    state = board.initial_state()
    rows = bench_reach(board, state, cfg)
    rows += bench_kernels(board, state, cfg)
    if cfg.cold:
        rows += bench_start(cfg)
    elapsed = time.perf_counter() - t0

    mode = "quick" if args.quick else "full"
    print(
        f"## soko_gym engine benchmark ({mode}): {LEVEL_SPEC}, "
        f"{board.width}x{board.height}, {board.n_boxes} boxes, {board.floor.shape[0]} floor\n"
    )
    print(machine_line() + "\n")
    print(markdown_table(rows))
    print(f"\nBest of {cfg.repeats} timing(s) per kernel row; run took {elapsed:.1f} s.")


if __name__ == "__main__":
    main()
