"""THE verifier: replay a LURD string on a board and report the first illegal step.

Every planner result and every test goes through ``verify_lurd``; nothing else decides whether a
solution is valid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from soko_gym.engine.board import Board, State
from soko_gym.engine.constants import (
    FLOOR,
    GOAL,
    LURD_DIRECTION,
    LURD_IS_PUSH,
    STEP_BAD_CHAR,
    STEP_INTO_WALL,
    STEP_LOWERCASE_PUSH,
    STEP_NOT_SOLVED,
    STEP_OK,
    STEP_PUSH_BLOCKED,
    STEP_PUSH_NOTHING,
    STEP_REASONS,
)
from soko_gym.engine.zobrist import full_hash


@njit(cache=True, nogil=True)
def apply_lurd(cells, box_at, box_pos, offsets, player, codes, lurd_dir, lurd_push):
    """Replay LURD characters in place until the first illegal one.

    Args:
        cells: uint8[n_cells] static cell flags.
        box_at: int16[n_cells] box index per square; updated.
        box_pos: int32[n_boxes] box squares; updated.
        offsets: int32[4] flat index step per direction.
        player: player square at the start.
        codes: uint8[n_steps] ASCII codes of the LURD string.
        lurd_dir: int8[256] direction per ASCII code, -1 for non-LURD characters.
        lurd_push: int8[256] 1 for uppercase (push) letters.

    Returns:
        (status code, index of the offending step or n_steps, pushes, moves, final player).
        Status is STEP_OK when every step is legal and all boxes end on goals.
    """
    pushes = 0
    for i in range(codes.shape[0]):
        d = lurd_dir[codes[i]]
        if d < 0:
            return STEP_BAD_CHAR, i, pushes, i, player
        nxt = player + offsets[d]
        if not (cells[nxt] & FLOOR):
            return STEP_INTO_WALL, i, pushes, i, player
        b = box_at[nxt]
        if lurd_push[codes[i]]:
            if b < 0:
                return STEP_PUSH_NOTHING, i, pushes, i, player
            dest = nxt + offsets[d]
            if not (cells[dest] & FLOOR) or box_at[dest] >= 0:
                return STEP_PUSH_BLOCKED, i, pushes, i, player
            box_at[nxt] = -1
            box_at[dest] = b
            box_pos[b] = dest
            pushes += 1
        elif b >= 0:
            return STEP_LOWERCASE_PUSH, i, pushes, i, player
        player = nxt
    n = codes.shape[0]
    for b in range(box_pos.shape[0]):
        if not (cells[box_pos[b]] & GOAL):
            return STEP_NOT_SOLVED, n, pushes, n, player
    return STEP_OK, n, pushes, n, player


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of replaying a LURD string.

    Attributes:
        ok: True when every step is legal and the level is solved at the end.
        pushes: pushes made before the first illegal step (all of them when legal).
        moves: steps made before the first illegal step (all of them when legal).
        index: 0-based index of the first illegal step; the string's length when every step is
            legal but boxes remain off goals; None when ok.
        reason: why the step at ``index`` fails ("ok" when ok).
        state: the position after the last legal step.
    """

    ok: bool
    pushes: int
    moves: int
    index: int | None
    reason: str
    state: State

    def __bool__(self) -> bool:
        return self.ok


def verify_lurd(board: Board, lurd: str, state: State | None = None) -> VerifyResult:
    """Replay ``lurd`` on ``board`` from ``state`` (default: the start) and judge it."""
    start = board.initial_state() if state is None else state
    cur = start.copy()
    # one byte per character: anything non-ASCII becomes "?", which is not a LURD letter
    codes = np.frombuffer(lurd.encode("ascii", errors="replace"), dtype=np.uint8)
    status, index, pushes, moves, player = apply_lurd(
        board.cells,
        cur.box_at,
        cur.box_pos,
        board.offsets,
        cur.player,
        codes,
        LURD_DIRECTION,
        LURD_IS_PUSH,
    )
    cur.player = int(player)
    cur.box_hash = np.uint64(full_hash(board.zobrist, cur.box_pos))
    ok = status == STEP_OK
    return VerifyResult(
        ok, int(pushes), int(moves), None if ok else int(index), STEP_REASONS[int(status)], cur
    )
