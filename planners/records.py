"""The one JSONL record of a solved (or not) level, written by ``soko solve`` and the benchmarks.

Every record starts with the same header: ``source`` (the pack or file, without selection),
``index`` (0-based position of the level in it), ``title`` and ``commit`` (``code_version()``:
the git hash or package version that produced it), followed by the result's fields
(``SearchResult.as_dict``: ``planner``, ``solved``, ``status``, ``optimal``, ``lurd``,
``pushes``, ``moves``, ``nodes``, ``generated``, ``seconds``, ``stats``), then any extra fields
of the writer (a benchmark's suite and limit, the optimizer's figures).
"""

from __future__ import annotations

from typing import Any

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
