"""XSB / SOK / TXT level text: RLE expansion, collection parsing with located errors, writing.

A collection is a text with many boards. A board is a run of lines drawn with ``#@+$*.`` plus
space, ``-`` or ``_`` for floor, optionally run-length encoded (``4#-2$``, ``|`` between rows,
``3(#-)`` for groups). Everything else is text: ``;`` comments, ``Title: ...`` style metadata,
blank lines. A level's title is a ``Title:`` line directly below its board or else the last
text line above it; the other text lines above it (after the file's header paragraphs, for the
first level) are kept as its comments.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from soko_gym.engine.constants import MAX_SIDE
from soko_gym.errors import LevelFormatError
from soko_gym.levels.level import Level

BOARD_CHARS = frozenset("#@+$*. -_")
_START_CHARS = frozenset("#@+$*.-_0123456789(")
_FLOOR_ALIASES = str.maketrans("-_", "  ")
_METADATA = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*(.*)$")

Cell = tuple[str, int]  # character, 1-based source column
_MAX_EXPANDED = MAX_SIDE * (MAX_SIDE + 1)  # cells one RLE line may expand to (rows and breaks)


def expand_rle(line: str) -> list[list[Cell]]:
    """Expand one source line into board rows of (character, source column) cells.

    Digits repeat the next character or parenthesised group; ``|`` starts a new row.
    Characters are not checked here.

    Raises:
        LevelFormatError: on a count with nothing after it or an unbalanced parenthesis
            (``line`` is left unset; the caller adds it).
    """
    rows: list[list[Cell]] = [[]]

    def run(i: int, depth: int) -> tuple[list[Cell | None], int]:
        out: list[Cell | None] = []  # None marks a row break
        while i < len(line):
            ch = line[i]
            if ch == ")":
                if depth == 0:
                    raise LevelFormatError("unbalanced ')'", col=i + 1)
                return out, i + 1
            count = 1
            if ch.isdigit():
                j = i
                while j < len(line) and line[j].isdigit():
                    j += 1
                count = int(line[i:j])
                if j == len(line):
                    raise LevelFormatError("run length with nothing to repeat", col=i + 1)
                i = j
                ch = line[i]
            start = i
            if ch == "(":
                group, i = run(i + 1, depth + 1)
            else:
                group = [None if ch == "|" else (ch, i + 1)]
                i += 1
            if len(out) + len(group) * count > _MAX_EXPANDED:
                raise LevelFormatError(
                    f"run length expands past {_MAX_EXPANDED} cells (boards are at most "
                    f"{MAX_SIDE}x{MAX_SIDE})",
                    col=start,
                )
            out.extend(group * count)
        if depth:
            raise LevelFormatError("unclosed '('", col=len(line))
        return out, i

    cells, _ = run(0, 0)
    for cell in cells:
        if cell is None:
            rows.append([])
        else:
            rows[-1].append(cell)
    return rows


def _is_board_start(line: str) -> bool:
    stripped = line.lstrip()
    return bool(stripped) and stripped[0] in _START_CHARS and not stripped.isdigit()


def _board_rows(line: str, lineno: int, source: str) -> list[list[Cell]] | None:
    """The rows a source line draws, or None when the line is text, not board."""
    if not _is_board_start(line) or line.lstrip().startswith(";"):
        return None
    try:
        rows = expand_rle(line.rstrip())
    except LevelFormatError as err:
        if "#" not in line:
            return None
        raise LevelFormatError(err.problem, source=source, line=lineno, col=err.col) from None
    if not any(ch == "#" for row in rows for ch, _ in row):
        return None
    return rows


class _Block:
    """One board as found in the text: its cells with source positions, and its context."""

    def __init__(self, first_line: int) -> None:
        self.first_line = first_line
        self.rows: list[list[tuple[str, int, int]]] = []  # (char, line, col)
        self.before: list[str] = []  # text lines between the previous board and this one
        self.title_after: str | None = None
        self.rle_error: LevelFormatError | None = None  # first bad RLE line inside the board


def _split_blocks(text: str, source: str) -> tuple[list[_Block], list[str]]:
    lines = text.splitlines()
    parsed: list[list[list[Cell]] | None] = [None] * len(lines)
    rle_errors: dict[int, LevelFormatError] = {}
    for i, line in enumerate(lines):
        try:
            parsed[i] = _board_rows(line, i + 1, source)
        except LevelFormatError as err:
            rle_errors[i] = err  # text that merely looks like RLE; judged below if in a board
    blocks: list[_Block] = []
    pending: list[str] = []
    cur: _Block | None = None
    after_board = False
    for i, line in enumerate(lines):
        rows = parsed[i]
        if rows is None and _is_board_start(line) and _touches_board(parsed, i):
            # a board line with a typo: keep it in the board so the typo is reported
            rows = [[(ch, col + 1) for col, ch in enumerate(line.rstrip())]]
        if rows is not None:
            if cur is None:
                cur = _Block(i + 1)
                cur.before = pending
                pending = []
                blocks.append(cur)
            if cur.rle_error is None:
                cur.rle_error = rle_errors.get(i)
            for row in rows:
                cur.rows.append([(ch, i + 1, col) for ch, col in row])
            after_board = False
            continue
        if cur is not None:
            after_board = True
        cur = None
        meta = _METADATA.match(line)
        if after_board and blocks and meta and meta.group(1).lower() == "title":
            if blocks[-1].title_after is None:
                blocks[-1].title_after = meta.group(2).strip()
                continue
        if not line.strip():
            after_board = False
        pending.append(line)
    return blocks, pending


def _touches_board(parsed: list, i: int) -> bool:
    before = i > 0 and parsed[i - 1] is not None
    return before or (i + 1 < len(parsed) and parsed[i + 1] is not None)


def _text(line: str) -> str:
    s = line.strip()
    if s.startswith(";"):
        s = s[1:]
        if s.startswith(" "):
            s = s[1:]
    return s.rstrip()


def _title_and_comments(block: _Block, is_first: bool) -> tuple[str, tuple[str, ...]]:
    lines = block.before
    if is_first:  # earlier paragraphs are the file's header
        last_blank = max((i for i, ln in enumerate(lines) if not ln.strip()), default=-1)
        nonblank_after = [ln for ln in lines[last_blank + 1 :] if ln.strip()]
        if not nonblank_after:  # title separated from the board by a blank line
            paragraphs = _paragraphs(lines)
            lines = paragraphs[-1] if paragraphs else []
        else:
            lines = nonblank_after
    texts = [_text(ln) for ln in lines if ln.strip()]
    if block.title_after is not None:
        return block.title_after, tuple(texts)
    if not texts:
        return "", ()
    meta = _METADATA.match(texts[-1])
    title = meta.group(2).strip() if meta and meta.group(1).lower() == "title" else texts[-1]
    return title, tuple(texts[:-1])


def _paragraphs(lines: list[str]) -> list[list[str]]:
    paras: list[list[str]] = []
    cur: list[str] = []
    for ln in lines:
        if ln.strip():
            cur.append(ln)
        elif cur:
            paras.append(cur)
            cur = []
    if cur:
        paras.append(cur)
    return paras


def _build_level(block: _Block, source: str, index: int, title: str, comments) -> Level:
    def fail(problem: str, line: int | None = None, col: int | None = None):
        return LevelFormatError(
            problem, source=source, line=line or block.first_line, col=col, level_index=index
        )

    if block.rle_error is not None:
        err = block.rle_error
        raise fail(err.problem, err.line, err.col)
    rows: list[str] = []
    players: list[tuple[int, int]] = []
    n_boxes = n_goals = 0
    for row in block.rows:
        chars = []
        for ch, line, col in row:
            if ch not in BOARD_CHARS:
                raise fail(f"unknown character {ch!r} in board", line, col)
            if ch in "@+":
                players.append((line, col))
            n_boxes += ch in "$*"
            n_goals += ch in ".*+"
            chars.append(ch)
        rows.append("".join(chars).translate(_FLOOR_ALIASES).rstrip())
    height, width = len(rows), max(len(r) for r in rows)
    if height > MAX_SIDE or width > MAX_SIDE:
        raise fail(f"board is {width}x{height}; at most {MAX_SIDE}x{MAX_SIDE} is supported")
    if not players:
        raise fail("no player ('@' or '+') on the board")
    if len(players) > 1:
        raise fail(f"{len(players)} players on the board; this is the second", *players[1])
    if n_boxes == 0:
        raise fail("no boxes on the board")
    if n_boxes != n_goals:
        raise fail(f"{n_boxes} boxes but {n_goals} goals")
    leak = _first_open_square(rows, width)
    if leak is not None:
        r, c = leak
        line, col = block.rows[r][c][1:] if c < len(block.rows[r]) else (block.first_line, None)
        what = {"@": "player", "+": "player", "$": "box", "*": "box", ".": "goal"}[rows[r][c]]
        raise fail(f"{what} is reachable from outside the walls (open board)", line, col)
    return Level(tuple(rows), title, tuple(comments))


def _first_open_square(rows: list[str], width: int) -> tuple[int, int] | None:
    """First player/box/goal square connected to the outside through non-wall squares."""
    h = len(rows)
    grid = [r.ljust(width) for r in rows]
    seen = bytearray((h + 2) * (width + 2))
    w2 = width + 2
    stack = [0]
    seen[0] = 1
    found: tuple[int, int] | None = None
    while stack:
        p = stack.pop()
        r, c = divmod(p, w2)
        steps = ((p - w2, r - 1, c), (p + w2, r + 1, c), (p - 1, r, c - 1), (p + 1, r, c + 1))
        for q, rr, cc in steps:
            if not (0 <= rr < h + 2 and 0 <= cc < w2) or seen[q]:
                continue
            inside = 1 <= rr <= h and 1 <= cc <= width
            ch = grid[rr - 1][cc - 1] if inside else " "
            if ch == "#":
                continue
            seen[q] = 1
            if ch != " " and (found is None or (rr - 1, cc - 1) < found):
                found = (rr - 1, cc - 1)
            stack.append(q)
    return found


def iter_levels(text: str, source: str = "<string>") -> Iterator[Level | LevelFormatError]:
    """Yield each board of a collection as a Level, or as the error that rejects it."""
    blocks, _ = _split_blocks(text, source)
    for index, block in enumerate(blocks):
        title, comments = _title_and_comments(block, index == 0)
        try:
            yield _build_level(block, source, index, title, comments)
        except LevelFormatError as err:
            yield err


def parse_levels(text: str, source: str = "<string>") -> list[Level]:
    """Parse every level of a collection text.

    Raises:
        LevelFormatError: for the first bad level, or when the text holds no level at all.
    """
    levels = []
    for item in iter_levels(text, source):
        if isinstance(item, LevelFormatError):
            raise item
        levels.append(item)
    if not levels:
        raise LevelFormatError(
            "no level found (empty file or no board lines)", source=source, line=1, col=1
        )
    return levels


def dump_levels(levels: list[Level]) -> str:
    """XSB text of a collection; ``parse_levels(dump_levels(x)) == x``."""
    return "\n".join(level.to_xsb() for level in levels)
