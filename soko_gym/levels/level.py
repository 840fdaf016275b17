"""The immutable Level: a board in XSB terms, with its title and comments."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from soko_gym.engine.board import Board, build_board

Square = tuple[int, int]  # (row, col), 0-based


@dataclass(frozen=True)
class Level:
    """One Sokoban level.

    Rows are stored in canonical XSB (``#`` wall, ``@`` player, ``+`` player on goal, ``$`` box,
    ``*`` box on goal, ``.`` goal, space floor; trailing spaces stripped), so two levels with the
    same board compare equal whatever notation their files used. Build levels with
    ``Level.from_xsb`` or ``soko_gym.load_levels``, which validate them.

    Attributes:
        rows: canonical board rows.
        title: the level's title ("" when none).
        comments: further comment lines kept for a lossless round-trip.
    """

    rows: tuple[str, ...]
    title: str = ""
    comments: tuple[str, ...] = field(default=(), compare=True)

    @classmethod
    def from_xsb(cls, text: str, *, title: str | None = None) -> Level:
        """Parse exactly one level from XSB text (RLE rows and ``;`` comment lines allowed).

        Raises:
            LevelFormatError: when the text holds no level, several, or an invalid one.
        """
        from soko_gym.errors import LevelFormatError
        from soko_gym.levels.xsb import parse_levels

        levels = parse_levels(text, source="<string>")
        if len(levels) != 1:
            raise LevelFormatError(f"expected one level, found {len(levels)}", source="<string>")
        level = levels[0]
        if title is not None:
            level = Level(level.rows, title, level.comments)
        return level

    def to_xsb(self, *, with_title: bool = True) -> str:
        """XSB text of this level: title and comments as ``;`` lines, then the rows."""
        lines = []
        if with_title:
            lines += [f"; {c}".rstrip() for c in self.comments]
            if self.title or self.comments:  # the title line closes the comment paragraph
                lines += [f"; {self.title}".rstrip(), ""]
        lines += list(self.rows)
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return "\n".join(self.rows)

    @property
    def height(self) -> int:
        """Number of rows."""
        return len(self.rows)

    @cached_property
    def width(self) -> int:
        """Length of the longest row."""
        return max(len(r) for r in self.rows)

    @cached_property
    def grid(self) -> np.ndarray:
        """The board as a (height, width) array of XSB characters, padded with spaces."""
        return np.array([list(r.ljust(self.width)) for r in self.rows], dtype="<U1")

    def _squares(self, chars: str) -> tuple[Square, ...]:
        rows, cols = np.nonzero(np.isin(self.grid, list(chars)))
        return tuple(zip(rows.tolist(), cols.tolist(), strict=True))

    @cached_property
    def walls(self) -> frozenset[Square]:
        """Wall squares."""
        return frozenset(self._squares("#"))

    @cached_property
    def goals(self) -> tuple[Square, ...]:
        """Goal squares in reading order."""
        return self._squares(".*+")

    @cached_property
    def boxes(self) -> tuple[Square, ...]:
        """Box squares at the start, in reading order."""
        return self._squares("$*")

    @cached_property
    def player(self) -> Square:
        """The player's start square."""
        return self._squares("@+")[0]

    @property
    def n_boxes(self) -> int:
        """Number of boxes."""
        return len(self.boxes)

    @cached_property
    def board(self) -> Board:
        """The engine's compiled Board (built once per Level)."""
        g = self.grid
        w = self.width
        return build_board(
            g == "#",
            np.isin(g, [".", "*", "+"]),
            [r * w + c for r, c in self.boxes],
            self.player[0] * w + self.player[1],
        )

    def _repr_png_(self) -> bytes:
        """The start position as PNG bytes, so Jupyter shows a Level as a picture."""
        from soko_gym.levels.picture import draw_level, png_bytes

        return png_bytes(draw_level(self, 16))

    def __getstate__(self):  # pickle the fields, not the cached board
        return {"rows": self.rows, "title": self.title, "comments": self.comments}

    def __setstate__(self, state):
        for name, value in state.items():
            object.__setattr__(self, name, value)
