"""Bundled level packs and ``load_levels``: pack names, files and directories, with selections.

A source may end in a 1-based selection: ``"microban:12"`` (one level) or ``"xsokoban:1-10"``
(a range, inclusive). Numbering counts every board of the file, valid or not.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from soko_gym.errors import LevelFormatError
from soko_gym.levels.level import Level
from soko_gym.levels.xsb import iter_levels


@dataclass(frozen=True)
class PackInfo:
    """A bundled pack: its file under ``soko_gym/levels/data`` and its credit line."""

    name: str
    file: str
    n_levels: int
    credit: str


_SKINNER = "David W. Skinner; free to distribute with credit"
_DEEPMIND = "DeepMind boxoban-levels, first file of the split; Apache License 2.0"
_PACKS = {
    p.name: p
    for p in (
        PackInfo("xsokoban", "xsokoban.xsb", 90, "Thinking Rabbit / XSokoban 3.3c; public domain"),
        PackInfo("microban", "microban.xsb", 155, _SKINNER),
        PackInfo("microban2", "microban2.xsb", 135, _SKINNER),
        PackInfo("microban3", "microban3.xsb", 101, _SKINNER),
        PackInfo("microban4", "microban4.xsb", 102, _SKINNER),
        PackInfo("sasquatch", "sasquatch.xsb", 50, _SKINNER),
        PackInfo("boxoban-unfiltered-train", "boxoban/unfiltered_train_000.xsb", 1000, _DEEPMIND),
        PackInfo("boxoban-unfiltered-valid", "boxoban/unfiltered_valid_000.xsb", 1000, _DEEPMIND),
        PackInfo("boxoban-unfiltered-test", "boxoban/unfiltered_test_000.xsb", 1000, _DEEPMIND),
        PackInfo("boxoban-medium-train", "boxoban/medium_train_000.xsb", 1000, _DEEPMIND),
        PackInfo("boxoban-medium-valid", "boxoban/medium_valid_000.xsb", 1000, _DEEPMIND),
        PackInfo("boxoban-hard", "boxoban/hard_000.xsb", 1000, _DEEPMIND),
    )
}

_SELECTION = re.compile(r"^(?P<base>.+):(?P<first>\d+)(?:-(?P<last>\d+))?$")
_LEVEL_SUFFIXES = (".xsb", ".sok", ".txt")


def packs() -> list[str]:
    """Names of the bundled packs, in a fixed order."""
    return list(_PACKS)


def pack_info(name: str) -> PackInfo:
    """File, size and credit of a bundled pack."""
    try:
        return _PACKS[name]
    except KeyError:
        raise ValueError(f"unknown pack {name!r}; bundled packs: {', '.join(_PACKS)}") from None


def split_selection(source: str) -> tuple[str, tuple[int, int] | None]:
    """Split ``"name:A-B"`` into the source and its 1-based (first, last), or (source, None)."""
    if source in _PACKS or Path(source).exists():
        return source, None
    m = _SELECTION.match(source)
    if not m:
        return source, None
    first = int(m["first"])
    last = int(m["last"]) if m["last"] else first
    return m["base"], (first, last)


@lru_cache(maxsize=64)
def _read_file(path: str, label: str) -> tuple[Level | LevelFormatError, ...]:
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        text = f.read()
    return tuple(iter_levels(text, label))


def _read_pack(name: str) -> tuple[Level | LevelFormatError, ...]:
    ref = resources.files("soko_gym.levels") / "data" / _PACKS[name].file
    with resources.as_file(ref) as path:
        return _read_file(str(path), name)


def _read_source(base: str) -> tuple[Level | LevelFormatError, ...]:
    if base in _PACKS:
        return _read_pack(base)
    path = Path(base)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in _LEVEL_SUFFIXES)
        if not files:
            raise LevelFormatError("directory holds no .xsb, .sok or .txt file", source=base)
        return tuple(item for f in files for item in _read_file(str(f), str(f)))
    if path.is_file():
        return _read_file(str(path), base)
    raise ValueError(
        f"level source {base!r} is neither a bundled pack ({', '.join(_PACKS)}) "
        "nor an existing file or directory"
    )


def indexed_levels(source: str | Path) -> list[tuple[int, Level]]:
    """``load_levels(source)`` with each level's 0-based index in the whole pack or file.

    ``microban:3-4`` gives ``[(2, level 3), (3, level 4)]``: the ``index`` of every record.
    """
    _, selection = split_selection(str(source))
    first = selection[0] - 1 if selection else 0
    return [(first + i, level) for i, level in enumerate(load_levels(source))]


def load_levels(source: str | Path, *, on_error: Literal["raise", "skip"] = "raise") -> list[Level]:
    """Load levels from a bundled pack, a collection file or a directory of Boxoban files.

    Args:
        source: pack name (see ``packs()``), path to an XSB/SOK/TXT collection, or a directory
            whose .txt/.xsb/.sok files are read in name order (DeepMind Boxoban layout);
            optionally followed by a 1-based selection ``:N`` or ``:A-B``.
        on_error: "raise" stops at the first bad level; "skip" leaves it out with a warning.

    Raises:
        LevelFormatError: a bad level (with on_error="raise"), an empty file, or a selection
            out of range.
        ValueError: an unknown source or on_error value.
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    base, selection = split_selection(str(source))
    items = _read_source(base)
    if not items:
        raise LevelFormatError(
            "no level found (empty file or no board lines)", source=base, line=1, col=1
        )
    if selection is not None:
        first, last = selection
        if not 1 <= first <= last <= len(items):
            raise LevelFormatError(
                f"selection {first}-{last} is out of range: the source has {len(items)} levels "
                "(numbered from 1)",
                source=base,
            )
        items = items[first - 1 : last]
    levels = []
    for item in items:
        if isinstance(item, LevelFormatError):
            if on_error == "raise":
                raise item
            warnings.warn(f"skipping bad level: {item}", stacklevel=2)
        else:
            levels.append(item)
    return levels
