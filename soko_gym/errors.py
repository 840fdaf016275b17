"""Typed errors raised by soko-gym: bad level text and bad solutions."""

from __future__ import annotations


class LevelFormatError(ValueError):
    """A level or level collection could not be read.

    Attributes:
        problem: What is wrong, without the location.
        source: File name or other label of the text ("<string>" for inline text).
        line: 1-based line in the source, or None when no line applies.
        col: 1-based column in the source, or None when no column applies.
        level_index: 0-based position of the offending level in its collection, if known.
    """

    def __init__(
        self,
        problem: str,
        *,
        source: str = "<string>",
        line: int | None = None,
        col: int | None = None,
        level_index: int | None = None,
    ) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.col = col
        self.level_index = level_index
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.source
        if self.line is not None:
            where += f", line {self.line}"
            if self.col is not None:
                where += f", column {self.col}"
        if self.level_index is not None:
            where += f" (level {self.level_index + 1})"
        return f"{where}: {self.problem}"

    def __reduce__(self):  # keep keyword-only attributes through pickling (worker processes)
        return (
            _rebuild_level_error,
            (self.problem, self.source, self.line, self.col, self.level_index),
        )


def _rebuild_level_error(problem, source, line, col, level_index) -> LevelFormatError:
    return LevelFormatError(problem, source=source, line=line, col=col, level_index=level_index)


class SolutionError(ValueError):
    """A LURD string is not a valid solution of its level.

    Attributes:
        index: 0-based index of the first illegal character, or the string's length when every
            step is legal but the level is not solved at the end.
        reason: Why the step at ``index`` is illegal.
    """

    def __init__(self, reason: str, index: int) -> None:
        self.reason = reason
        self.index = index
        super().__init__(f"step {index}: {reason}")

    def __reduce__(self):
        return (SolutionError, (self.reason, self.index))
