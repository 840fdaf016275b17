"""Moves as text: the move parser of ``Sokoban-Text-v0``, the reply parser and prompt for agents.

Three pieces a language-model agent needs, kept free of gymnasium so any harness can use them:

- ``parse_moves(text)``: what the text env accepts as an action. Tokens separated by spaces,
  commas or semicolons, each a direction word (``up``, ``down``, ``left``, ``right``) or a run
  of LURD letters (``rrdLL``), in either case; quotes, backticks, brackets and a final full
  stop around a token are ignored. Anything else makes the whole text unreadable (None).
- ``parse_reply(reply)``: the moves in a model's whole reply, reasoning included. The last
  fenced block (```` ``` ````) whose content is moves wins; without one, the last line that
  holds only moves, optionally after a label (``Moves:``, ``Answer:``, ``Solution:``) or in
  backticks. None when no block or line is moves.
- ``make_prompt(observation)``: the documented prompt (``PROMPT_TEMPLATE``): the rules, the
  legend, the board, and the last reply's error when the observation starts with one.
"""

from __future__ import annotations

import re

MOVE_WORDS = {"up": "u", "down": "d", "left": "l", "right": "r"}
INVALID_PREFIX = "Invalid reply: "  # the first line of an observation after a reply not applied
_SEPARATORS = re.compile(r"[\s,;]+")
_STRIP = "`'\"()[]{}."
_LURD = re.compile(r"[udlr]+")
_FENCE = re.compile(r"```[^\n`]*\n?(.*?)```", re.DOTALL)
_LABEL = re.compile(r"^\s*(?:moves|answer|solution|final answer)\s*[:=]\s*", re.IGNORECASE)

LEGEND = (
    "#  wall\n"
    "   floor (a space)\n"
    ".  goal\n"
    "$  box\n"
    "*  box on a goal\n"
    "@  you (the player)\n"
    "+  you, standing on a goal"
)

PROMPT_TEMPLATE = """You are playing Sokoban.
Rules: you move one square at a time up, down, left or right. Walking into a box pushes it one
square further, if the square beyond it is floor or a goal (not a wall or another box). You
cannot pull boxes. The level is solved when every box is on a goal.

Legend:
{legend}

Board{coords}:
{board}
{error}
Reply with your next moves as letters u, d, l, r (for example: rrdLL) or words (up, left), in a
fenced code block or on the last line of your reply. Moves are made in order until one cannot
be made; the rest of that reply is then ignored.
"""


def parse_moves(text: str) -> str | None:
    """The moves ``text`` spells, as lowercase ``udlr`` letters, or None when it is not moves.

    ``"rrdLL"`` -> ``"rrdll"``; ``"up, up left"`` -> ``"uul"``; ``""`` and ``"go left"`` -> None.
    """
    if not isinstance(text, str):
        return None
    letters = []
    for token in _SEPARATORS.split(text.strip()):
        if not token:
            continue
        word = token.strip(_STRIP).lower()
        if word in MOVE_WORDS:
            letters.append(MOVE_WORDS[word])
        elif _LURD.fullmatch(word):
            letters.append(word)
        else:
            return None
    return "".join(letters) or None


def _line_moves(line: str) -> str | None:
    """The moves of one reply line: a label and backticks allowed around them."""
    return parse_moves(_LABEL.sub("", line, count=1))


def parse_reply(reply: str) -> str | None:
    """The moves of a model's ``reply`` (see the module docstring), or None when it has none."""
    if not isinstance(reply, str):
        return None
    for block in reversed(_FENCE.findall(reply)):
        lines = [line for line in block.splitlines() if line.strip()]
        moves = [_line_moves(line) for line in lines]
        if lines and all(moves):
            return "".join(m for m in moves if m)
    outside = _FENCE.sub("\n", reply)
    for line in reversed(outside.splitlines()):
        moves = _line_moves(line)
        if moves:
            return moves
    return None


def split_observation(observation: str) -> tuple[str, str]:
    """``(error, board)`` of a text-env observation; ``error`` is "" after an applied reply."""
    first, _, rest = observation.partition("\n")
    if first.startswith(INVALID_PREFIX):
        return first[len(INVALID_PREFIX) :], rest
    return "", observation


def make_prompt(observation: str, *, template: str = PROMPT_TEMPLATE) -> str:
    """The prompt for one turn: ``template`` filled with the observation's board and error.

    ``template`` may use ``{legend}``, ``{board}``, ``{coords}`` (a note when the board has row
    and column numbers) and ``{error}`` (a line about the last reply, or "").
    """
    error, board = split_observation(observation)
    numbered = any(ch.isdigit() for ch in board.split("\n", 1)[0])  # XSB rows hold no digits
    return template.format(
        legend=LEGEND,
        board=board,
        coords=" (row numbers on the left, column numbers on top)" if numbered else "",
        error=f"\nYour last reply was not applied: {error}\n" if error else "",
    )


__all__ = [
    "INVALID_PREFIX",
    "LEGEND",
    "MOVE_WORDS",
    "PROMPT_TEMPLATE",
    "make_prompt",
    "parse_moves",
    "parse_reply",
    "split_observation",
]
