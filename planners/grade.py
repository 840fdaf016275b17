"""``soko grade``: every level of a source solved optimally, one CSV row per level.

Each level is solved by A* (``pushes``: the fewest pushes) and then searched for its fewest
moves from that solution (``moves``: ``planners/fewest_moves.py``), both inside the level's
``--time-limit``. ``moves`` is written only when it is proven (``moves_status`` "optimal");
"too_large" or "timeout" leave it empty, as an unsolved level leaves both figures empty. The
columns are ``soko_gym.levels.graded.COLUMNS``; the ``xsb`` column holds the board, so
``graded:FILE.csv:moves=A-B`` loads the rows in a range again (``soko_gym/levels/graded.py``).

Rows are written as levels finish (``--jobs`` finishes them out of order) to a file opened by
``records.open_output`` (never replaced without ``--overwrite``; ``--resume`` goes on); a run
that ends without Ctrl-C rewrites the file in level order.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import time
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any

from planners import SearchLimits, solve
from planners.fewest_moves import MAX_POSITIONS, MEMORY_MB, fewest_moves
from planners.records import open_output
from planners.warmup import WARMUP_LEVEL, announce_compile, warm_up_planner
from soko_gym.execution import Backend, Progress, add_backend_options, run
from soko_gym.levels import Level
from soko_gym.levels.graded import COLUMNS, level_cell
from soko_gym.levels.packs import indexed_levels, split_selection
from soko_gym.provenance import code_version

PLANNER = "astar"
HEADER = ",".join(COLUMNS) + "\n"
_warm = False


def add_grade_parser(sub: Any, source_help: str) -> None:
    """Add the ``grade`` subcommand to the ``soko`` argument parser."""
    p = sub.add_parser(
        "grade",
        help="solve every level optimally (fewest pushes, fewest moves) into a CSV",
        description="Solve every level with A* (fewest pushes), then find its fewest moves; "
        "write one CSV row per level. `graded:FILE.csv:moves=A-B` loads the rows in a range.",
    )
    p.add_argument("source", help=source_help)
    p.add_argument("--out", required=True, metavar="FILE.csv", help="the CSV file to write")
    p.add_argument(
        "--time-limit",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds per level, A* and the moves search together (default 10)",
    )
    p.add_argument(
        "--memory-limit",
        type=float,
        default=None,
        metavar="MB",
        help=f"memory per level for A*'s tables and the moves search (default: A* half the "
        f"RAM, the moves search {MEMORY_MB:.0f})",
    )
    p.add_argument(
        "--max-positions",
        type=int,
        default=MAX_POSITIONS,
        metavar="N",
        help="the moves search gives up (moves_status too_large) on a level with more "
        f"reachable positions (default {MAX_POSITIONS:,})",
    )
    add_backend_options(p)
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing --out file (otherwise it is never touched)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue an existing --out file: skip the levels it holds, append the rest",
    )
    p.add_argument("--quiet", action="store_true", help="no per-level lines or progress")
    p.set_defaults(func=run_grade)


def warm_up_grade() -> None:
    """Compile or load A* and the moves search once per process, outside any level's time."""
    global _warm
    if _warm:
        return
    warm_up_planner(PLANNER)
    level = Level.from_xsb(WARMUP_LEVEL)
    fewest_moves(level, solve(level, PLANNER).lurd)
    _warm = True


def grade_text(
    time_limit: float, memory_mb: float | None, max_positions: int, text: str
) -> dict[str, Any]:
    """Grade one level given as XSB text (a task): status, pushes, moves, moves_status, seconds."""
    level = Level.from_xsb(text)
    warm_up_grade()
    start = time.perf_counter()
    result = solve(level, PLANNER, SearchLimits(time_limit, None, memory_mb))
    out: dict[str, Any] = {
        "status": result.status,
        "pushes": result.pushes if result.solved else None,
        "moves": None,
        "moves_status": "",
    }
    if result.solved:
        left = time_limit - (time.perf_counter() - start)
        if left <= 0:
            out["moves_status"] = "timeout"
        else:
            found = fewest_moves(
                level,
                result.lurd,
                max_seconds=left,
                max_positions=max_positions,
                memory_mb=MEMORY_MB if memory_mb is None else memory_mb,
            )
            out["moves_status"] = found.status
            out["moves"] = found.moves if found.optimal else None
    out["seconds"] = time.perf_counter() - start
    return out


def grade_row(source: str, index: int, level: Level, graded: dict[str, Any]) -> list[str]:
    """A level's CSV row, in ``COLUMNS`` order (``index`` 0-based; the row's ``level`` 1-based)."""

    def figure(value: int | None) -> str:
        return "" if value is None else str(int(value))

    fields = {
        "source": source,
        "level": str(index + 1),
        "title": level.title,
        "boxes": str(level.n_boxes),
        "width": str(level.width),
        "height": str(level.height),
        "pushes": figure(graded["pushes"]),
        "moves": figure(graded["moves"]),
        "status": graded["status"],
        "moves_status": graded["moves_status"],
        "seconds": f"{graded['seconds']:.3f}",
        "commit": code_version(),
        "xsb": level_cell(level),
    }
    return [fields[c] for c in COLUMNS]


def _row_line(row: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(row)
    return buf.getvalue()


def _parse_line(line: str) -> dict[str, Any] | None:
    """A CSV line's source, 0-based index and status (for ``--resume``), or None if cut short."""
    if not line.endswith("\n"):
        return None
    fields = next(csv.reader([line]), [])
    if len(fields) != len(COLUMNS):
        return None
    row = dict(zip(COLUMNS, fields, strict=True))
    try:
        index = int(row["level"]) - 1
    except ValueError:
        return None
    return {"source": row["source"], "index": index, "status": row["status"]}


def _sort_by_level(path: Path) -> None:
    """Rewrite the CSV with its rows in level order (they are written as they finish)."""
    with path.open(encoding="utf-8", newline="") as f:
        header, *lines = f.readlines()
    lines.sort(key=lambda line: (p := _parse_line(line)) is None or p["index"])
    tmp = path.with_name(path.name + ".sort-tmp")
    tmp.write_text(header + "".join(lines), encoding="utf-8", newline="")
    tmp.replace(path)


def run_grade(args: argparse.Namespace) -> int:
    """Run ``soko grade``; returns the exit code (0 all solved, 1 some not, 130 on Ctrl-C)."""
    backend = Backend.from_args(args)
    if args.time_limit <= 0:
        raise ValueError(f"--time-limit must be positive, got {args.time_limit}")
    if args.max_positions < 1:
        raise ValueError(f"--max-positions must be at least 1, got {args.max_positions}")
    SearchLimits(args.time_limit, None, args.memory_limit)  # a bad limit: ValueError now
    items = indexed_levels(args.source)
    base = split_selection(args.source)[0]
    out = Path(args.out)
    sink, done = open_output(
        out, args.overwrite, args.resume, base, "grade", _parse_line, header=HEADER
    )
    by_index = dict(items)
    todo = [(index, level.to_xsb(with_title=False)) for index, level in items if index not in done]
    task = partial(grade_text, args.time_limit, args.memory_limit, args.max_positions)
    if todo:  # compile or load once here (and per worker), never inside a level's seconds
        announce_compile(warm_up_grade, dots=False if args.quiet else None)
    progress = Progress(len(todo), enabled=not args.quiet)
    statuses: dict[str, int] = {}
    proven = 0
    interrupted = False
    try:
        with closing(run(task, todo, backend, total=len(todo))) as outcomes:
            for outcome in outcomes:
                level = by_index[outcome.key]
                graded = outcome.value if outcome.ok else _error(outcome.error)
                sink.write(_row_line(grade_row(base, outcome.key, level, graded)))
                sink.flush()
                statuses[graded["status"]] = statuses.get(graded["status"], 0) + 1
                proven += graded["moves"] is not None
                if args.quiet:
                    continue
                progress.update(graded["status"] == "solved", error=not outcome.ok)
                if not progress.tty:
                    print(_level_line(outcome.key, level, graded), file=sys.stderr)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        sink.close()
        if not args.quiet and progress.tty:
            sys.stderr.write("\n")
    if not interrupted:
        _sort_by_level(out)
    done_now = sum(statuses.values())
    solved = statuses.get("solved", 0)
    print(f"graded {done_now} of {len(todo)} levels into {out}: {solved} solved, ", end="")
    print(f"moves proven {proven}")
    if statuses:
        print("statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    if interrupted:
        return 130
    return 0 if solved == done_now else 1


def _error(error: str | None) -> dict[str, Any]:
    """The figures of a level whose every attempt raised or lost its worker."""
    print(f"error: {error}", file=sys.stderr)
    return {"status": "error", "pushes": None, "moves": None, "moves_status": "", "seconds": 0.0}


def _level_line(index: int, level: Level, graded: dict[str, Any]) -> str:
    if graded["status"] != "solved":
        figures = graded["status"]
    else:
        moves = graded["moves"] if graded["moves"] is not None else graded["moves_status"]
        figures = f"{graded['pushes']} pushes, {moves} moves"
    return f"{index + 1} {level.title!r}: {figures} ({graded['seconds']:.2f} s)"
