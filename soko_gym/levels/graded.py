"""Graded suites: the ``graded:FILE.csv[:KEY=A-B]...`` source over a ``soko grade`` CSV.

``soko grade`` (``planners/grade.py``) writes one CSV row per level with the columns of
``COLUMNS``; the ``xsb`` column holds the board itself (``level_cell``: rows joined by ``|``,
``-`` for floor, the XSB one-line form), so the rows load again without the graded source.

``graded:FILE.csv`` is every row's level in file order; each ``:KEY=A-B`` (or ``:KEY=N``)
after the file keeps the rows whose ``KEY`` (one of ``FILTER_KEYS``) lies in A..B, inclusive,
so ``graded:grades.csv:moves=10-25`` is the levels solved in 10 to 25 moves; a row without the
figure (an unsolved level, or moves not proven optimal) is left out by a filter on it. Several
filters must all hold. A 1-based selection of the rows kept ends the source, as for a pack:
``graded:grades.csv:boxes=1:moves=10-25:1-5``.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from soko_gym.errors import LevelFormatError
from soko_gym.levels.level import Level
from soko_gym.levels.xsb import parse_levels

PREFIX = "graded:"
# The columns of a soko grade CSV, in order (planners/grade.py writes them; docs/cli.md).
COLUMNS = (
    "source",
    "level",
    "title",
    "boxes",
    "width",
    "height",
    "pushes",
    "moves",
    "status",
    "moves_status",
    "seconds",
    "commit",
    "xsb",
)
FILTER_KEYS = ("pushes", "moves", "boxes", "width", "height")
_FILTER = re.compile(r"^(?P<key>\w+)=(?P<first>\d+)(?:-(?P<last>\d+))?$")
_EXAMPLE = "e.g. graded:grades.csv:moves=10-25 or graded:grades.csv:pushes=5:1-10"


def is_graded_spec(spec: str) -> bool:
    """True when ``spec`` names a graded suite (``graded:...``), well formed or not."""
    return spec.startswith(PREFIX)


def level_cell(level: Level) -> str:
    """A level's board on one line for the ``xsb`` column: ``#####|#@$.#|#####``."""
    return "|".join(row.replace(" ", "-") for row in level.rows)


def parse_graded(spec: str) -> tuple[str, list[tuple[str, int, int]]]:
    """The file and the ``(key, first, last)`` filters of ``graded:FILE[:KEY=A-B]...``.

    The spec's selection, if any, is split off before (``packs.split_selection``).

    Raises:
        ValueError: naming ``spec`` for no file, an unknown key or a bad range.
    """
    if not is_graded_spec(spec):
        raise ValueError(f"{spec!r} is not a graded level source, {_EXAMPLE}")
    parts = spec[len(PREFIX) :].split(":")
    filters: list[tuple[str, int, int]] = []
    while len(parts) > 1 and "=" in parts[-1]:
        part = parts.pop()
        m = _FILTER.match(part)
        if m is None or m["key"] not in FILTER_KEYS:
            raise ValueError(
                f"graded level source {spec!r}: bad filter {part!r}; write KEY=A-B or KEY=N with "
                f"KEY one of {', '.join(FILTER_KEYS)}, {_EXAMPLE}"
            )
        first = int(m["first"])
        last = int(m["last"]) if m["last"] else first
        if last < first:
            raise ValueError(
                f"graded level source {spec!r}: filter {part!r} is an empty range, {_EXAMPLE}"
            )
        filters.append((m["key"], first, last))
    path = ":".join(parts)
    if not path:
        raise ValueError(f"graded level source {spec!r} names no file, {_EXAMPLE}")
    return path, filters[::-1]


def _figure(row: dict[str, str], key: str) -> int | None:
    text = (row.get(key) or "").strip()
    return int(text) if text.isdigit() else None


def graded_levels(spec: str) -> list[Level]:
    """The levels of the rows of a ``soko grade`` CSV that pass the spec's filters, in order.

    Raises:
        ValueError: for a bad spec (naming it), a missing file, a file without the ``title``
            and ``xsb`` columns or the filtered ones, or filters that keep no row.
        LevelFormatError: for a row whose ``xsb`` is not a level (naming the file and row).
    """
    path, filters = parse_graded(spec)
    if not Path(path).is_file():
        raise ValueError(f"graded level source {spec!r}: no file {path!r}, {_EXAMPLE}")
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        needed = {"title", "xsb", *(key for key, _, _ in filters)}
        missing = sorted(needed - set(reader.fieldnames or ()))
        if missing:
            raise ValueError(
                f"graded level source {spec!r}: {path} has no column {', '.join(missing)} "
                "(write it with soko grade)"
            )
        levels, n_rows = [], 0
        for row in reader:
            n_rows += 1
            if not all(
                (v := _figure(row, key)) is not None and first <= v <= last
                for key, first, last in filters
            ):
                continue
            label = f"{path}, row {reader.line_num}"
            found = parse_levels(row["xsb"] or "", source=label)
            if len(found) != 1:
                raise LevelFormatError(f"expected one level, found {len(found)}", source=label)
            levels.append(Level(found[0].rows, row["title"] or ""))
    if not levels:
        raise ValueError(
            f"graded level source {spec!r} keeps no level of the {n_rows} rows of {path}"
        )
    return levels
