"""The one JSONL record of a solved (or not) level, written by ``soko solve`` and the benchmarks.

Every record starts with the same header: ``source`` (the pack or file, without selection),
``index`` (0-based position of the level in it), ``title`` and ``commit`` (``code_version()``:
the git hash or package version that produced it), followed by the result's fields
(``SearchResult.as_dict``: ``planner``, ``solved``, ``status``, ``optimal``, ``lurd``,
``pushes``, ``moves``, ``nodes``, ``generated``, ``seconds``, ``stats``), then any extra fields
of the writer (a benchmark's suite and limit, the optimizer's figures). A command's output file
of records is opened, new or resumed, by ``open_jsonl`` (``open_output`` for any file of one
line per level, such as ``soko grade``'s CSV).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from planners.result import SearchResult
from soko_gym.levels import Level
from soko_gym.provenance import code_version

HEADER_FIELDS = ("source", "index", "title", "commit")
RESULT_FIELDS = (
    "planner",
    "solved",
    "status",
    "optimal",
    "lurd",
    "pushes",
    "moves",
    "nodes",
    "generated",
    "seconds",
    "stats",
)


def record_header(source: str, index: int, level: Level) -> dict[str, Any]:
    """The fields every record starts with (module docstring)."""
    return {"source": source, "index": int(index), "title": level.title, "commit": code_version()}


def solve_record(
    source: str, index: int, level: Level, result: SearchResult | dict[str, Any], **extra: Any
) -> dict[str, Any]:
    """A level's record: header, the result's fields, then ``extra``.

    ``result`` may be a ``SearchResult`` or its ``as_dict()`` (what worker processes return).
    """
    fields = result.as_dict() if isinstance(result, SearchResult) else dict(result)
    missing = [f for f in RESULT_FIELDS if f not in fields]
    if missing:
        raise ValueError(f"result lacks the record fields {missing}")
    return {**record_header(source, index, level), **fields, **extra}


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSONL file, blank lines skipped.

    Raises:
        ValueError: naming the file and line of the first line that is not JSON.
    """
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}, line {lineno}: not JSON ({err.msg})") from None
    return out


def open_jsonl(
    path: str | None, overwrite: bool, resume: bool, source: str, command: str
) -> tuple[TextIO | None, set[int]]:
    """The output file, opened to append, and the level indexes it already holds.

    Without ``resume`` an existing file is refused unless ``overwrite``. With ``resume`` its
    valid lines of ``source`` are kept and their levels skipped; a line cut short by a kill and
    "error" lines are dropped (those levels run again), so no level is written twice.
    """
    if path is None:
        if resume:
            raise ValueError("--resume needs --jsonl (the file to continue)")
        return None, set()
    return open_output(path, overwrite, resume, source, command, _json_line)


def _json_line(line: str) -> dict[str, Any] | None:
    """A JSONL line's record, or None for a line that is not one (cut short by a kill)."""
    try:
        record = json.loads(line)
        record["index"] = int(record["index"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    return record


def open_output(
    path: str | Path,
    overwrite: bool,
    resume: bool,
    source: str,
    command: str,
    parse: Callable[[str], dict[str, Any] | None],
    header: str = "",
) -> tuple[TextIO, set[int]]:
    """A command's output file of one line per level, opened to append, and the levels it holds.

    ``open_jsonl`` for any line format: ``parse`` turns a line into a dict with ``source``,
    ``index`` (an int) and ``status``, or None for a line to drop (cut short by a kill).
    ``header`` is the file's first line (a CSV's column names; "" for none), written to a new
    file and checked on resume.

    Raises:
        ValueError: for an existing file without ``overwrite`` or ``resume``, both given, a
            resumed file of another source or with another header.
    """
    if resume and overwrite:
        raise ValueError("--resume and --overwrite exclude each other")
    out = Path(path)
    if not out.exists() or overwrite:
        sink = out.open("w", encoding="utf-8", newline="")
        sink.write(header)
        return sink, set()
    if not resume:
        raise ValueError(f"{out} exists; pass --resume to continue it or --overwrite to replace it")
    kept: list[str] = []
    done: set[int] = set()
    dropped = 0
    with out.open(encoding="utf-8", newline="") as f:
        lines = f.readlines()
    if header and lines and lines[0] != header:
        raise ValueError(
            f"{out}: its first line is not the columns of `soko {command}` ({header.strip()}); "
            "pass --overwrite to replace it"
        )
    body = lines[1:] if header and lines else lines
    for lineno, line in enumerate(body, 2 if header else 1):
        record = parse(line)
        if record is None:
            dropped += 1
            continue
        index = record["index"]
        if record.get("source") != source:
            raise ValueError(
                f"{out}, line {lineno}: a record of {record.get('source')!r}, not {source!r}; "
                f"--resume continues a `soko {command}` of the same source"
            )
        if record.get("status") == "error" or index in done:
            dropped += 1
            continue
        done.add(index)
        kept.append(line if line.endswith("\n") else line + "\n")
    if dropped or (header and not lines):  # rewrite without the cut and error lines, then append
        tmp = out.with_name(out.name + ".resume-tmp")
        tmp.write_text(header + "".join(kept), encoding="utf-8", newline="")
        tmp.replace(out)
    print(
        f"resuming {out}: {len(done)} levels done"
        + (f", {dropped} error or incomplete lines dropped" if dropped else ""),
        file=sys.stderr,
    )
    return out.open("a", encoding="utf-8", newline=""), done


@dataclass(frozen=True)
class LimitSummary:
    """What records say about one source at one time limit per level.

    Attributes:
        limit: the time limit per level, in seconds.
        solved: levels solved within the limit (by any record).
        seconds: total time of those solutions (each level's fastest).
        unsolved: titles of levels some record ran at least that long without solving them
            within the limit.
        not_run: titles of levels no record decides: not solved within the limit and never
            run that long (or with no record at all, when ``level_titles`` is given).
    """

    limit: float
    solved: int
    seconds: float
    unsolved: tuple[str, ...]
    not_run: tuple[str, ...]


def solved_within(
    records: Iterable[dict[str, Any]],
    limits: Sequence[float],
    level_titles: Sequence[str] | None = None,
) -> list[LimitSummary]:
    """Solved counts and times at each limit, from records of one source (any runs, any mix).

    A level counts as solved within ``limit`` when a record solved it in at most that time,
    whatever that record's own limit was; it counts as unsolved when a record with a limit of
    at least ``limit`` (its ``limit`` field, or its time for a record without one) did not
    solve it that fast. ``level_titles`` (the whole source's titles, in order) makes levels
    without any record count as not run.
    """
    best: dict[int, float] = {}  # fastest solution per level index
    reach: dict[int, float] = {}  # longest limit a record ran per level index
    titles: dict[int, str] = {}
    sources = set()
    for r in records:
        sources.add(r["source"])
        i = int(r["index"])
        titles[i] = str(r["title"])
        ran = float(r.get("limit", r["seconds"]))
        reach[i] = max(reach.get(i, 0.0), ran)
        if r["solved"]:
            best[i] = min(best.get(i, float("inf")), float(r["seconds"]))
    if len(sources) > 1:
        raise ValueError(f"records of one source expected, got {sorted(sources)}")
    if level_titles is not None:
        if titles and max(titles) >= len(level_titles):
            raise ValueError(
                f"level_titles has {len(level_titles)} levels but a record has index {max(titles)}"
            )
        titles = {i: str(t) for i, t in enumerate(level_titles)}
        indices = range(len(level_titles))
    else:
        indices = sorted(titles)
    out = []
    for limit in limits:
        if limit <= 0:
            raise ValueError(f"limits must be positive, got {limit}")
        solved = [i for i in indices if best.get(i, float("inf")) <= limit]
        rest = [i for i in indices if best.get(i, float("inf")) > limit]
        out.append(
            LimitSummary(
                limit=float(limit),
                solved=len(solved),
                seconds=sum(best[i] for i in solved),
                unsolved=tuple(titles[i] for i in rest if reach.get(i, 0.0) >= limit),
                not_run=tuple(titles[i] for i in rest if reach.get(i, 0.0) < limit),
            )
        )
    return out
