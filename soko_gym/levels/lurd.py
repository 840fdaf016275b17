"""LURD solutions: push sequences to LURD and back, and ``verify`` for Level objects.

A push is given as (box square, direction): the flat square of the box before the push and
the direction it moves (order from ``engine.constants``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from soko_gym.engine.constants import FLOOR, MOVE_CHARS, PUSH_CHARS, SQUARE_DTYPE
from soko_gym.engine.reach import new_stamps, player_path
from soko_gym.engine.verify import VerifyResult, verify_lurd
from soko_gym.errors import SolutionError
from soko_gym.levels.level import Level

Push = tuple[int, int]  # (box square before the push, direction)


def _as_level(level: Level | str) -> Level:
    return level if isinstance(level, Level) else Level.from_xsb(level)


def verify(level: Level | str, lurd: str) -> VerifyResult:
    """Replay ``lurd`` on ``level`` (a Level or XSB text); see ``VerifyResult``."""
    return verify_lurd(_as_level(level).board, lurd)


def pushes_to_lurd(level: Level | str, pushes: Iterable[Push]) -> str:
    """Turn a push sequence into a full LURD string, walking the player by shortest paths.

    Raises:
        SolutionError: naming the first push whose box is missing, whose push side cannot be
            reached, or whose destination is blocked (index = position in ``pushes``).
    """
    board = _as_level(level).board
    state = board.initial_state()
    n = board.n_cells
    stamps = new_stamps(board.cells)
    queue = np.empty(n, dtype=SQUARE_DTYPE)
    parent = np.empty(n, dtype=np.int8)
    walk = np.empty(n, dtype=np.int8)
    out: list[str] = []
    for i, (square, d) in enumerate(pushes):
        if not 0 <= d < 4:
            raise SolutionError(f"direction {d} is not 0..3", i)
        b = int(state.box_at[square]) if 0 <= square < n else -1
        if b < 0:
            raise SolutionError(f"no box on square {square}", i)
        dest = square + int(board.offsets[d])
        if not board.cells[dest] & FLOOR or state.box_at[dest] >= 0:
            raise SolutionError(f"box on square {square} cannot move {PUSH_CHARS[d]}", i)
        stand = square - int(board.offsets[d])
        k = player_path(
            state.box_at, board.offsets, state.player, stand, stamps, queue, parent, walk
        )
        if k < 0:
            raise SolutionError(f"player cannot reach the push side of square {square}", i)
        out.extend(MOVE_CHARS[x] for x in walk[:k])
        out.append(PUSH_CHARS[d])
        state.apply_push(board, b * 4 + d)
    return "".join(out)


def lurd_to_pushes(level: Level | str, lurd: str) -> list[Push]:
    """The push sequence of a LURD string (which must replay legally; it need not solve).

    Raises:
        SolutionError: at the first illegal step.
    """
    lvl = _as_level(level)
    result = verify(lvl, lurd)
    if result.index is not None and result.index < len(lurd):
        raise SolutionError(result.reason, result.index)
    board = lvl.board
    player = board.start_player
    pushes: list[Push] = []
    for ch in lurd:
        upper = ch.upper()
        d = PUSH_CHARS.index(upper)
        player += int(board.offsets[d])
        if ch == upper:
            pushes.append((player, d))
    return pushes
