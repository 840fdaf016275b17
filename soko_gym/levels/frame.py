"""A level centred in a fixed H x W frame: the one framing the envs and the Push-space searches use.

Gymnasium-free, so planners (``planners.policy_search``) frame levels exactly as the envs
(``soko_gym.envs.observation``) do without importing the envs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from soko_gym.engine.board import Board, build_board
from soko_gym.engine.constants import DEAD, DRAWN_WALL, MAX_SIDE
from soko_gym.levels.level import Level

MIN_SIDE = 3  # the smallest frame side: a wall, a square, a wall


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def parse_obs_size(obs_size: Any) -> tuple[int, int]:
    """THE ``obs_size`` parser: an int (a square frame) or ``(height, width)`` as ``(H, W)``.

    Strict: the value must be an int, or a sequence of exactly two ints (Python or numpy
    ints; not bools, floats or strings, which are not cast), each side in
    ``[MIN_SIDE, MAX_SIDE]``. The envs (``soko_gym.envs.sources``) and the Push-space searches
    (``planners.policy_search``) both parse with it, so a frame one accepts the other does too.

    Raises:
        ValueError: naming ``obs_size`` when it is malformed or a side is out of range.
    """
    if _is_int(obs_size):
        size = (int(obs_size), int(obs_size))
    elif (
        isinstance(obs_size, Sequence)
        and not isinstance(obs_size, str)
        and len(obs_size) == 2
        and all(_is_int(v) for v in obs_size)
    ):
        size = (int(obs_size[0]), int(obs_size[1]))
    else:
        raise ValueError(f"obs_size must be an int or (height, width) ints, got {obs_size!r}")
    if not all(MIN_SIDE <= side <= MAX_SIDE for side in size):
        raise ValueError(
            f"obs_size {size} is impossible: each side must be in [{MIN_SIDE}, {MAX_SIDE}]"
        )
    return size


def level_fits(level: Level, size: tuple[int, int]) -> bool:
    """True when ``level`` fits in a frame of ``size = (height, width)``."""
    return level.height <= size[0] and level.width <= size[1]


@dataclass(frozen=True)
class FramedLevel:
    """A level centred in a frame.

    Attributes:
        board: the engine Board of the framed level (frame squares, ``row * W + col``).
        cells: uint8[H*W] engine flags plus DEAD and DRAWN_WALL (the envs' table cells).
        player: the start player square in the frame.
        r0, c0: the level's top-left corner in the frame.
    """

    board: Board
    cells: np.ndarray
    player: int
    r0: int
    c0: int


def frame(level: Level, size: tuple[int, int]) -> FramedLevel:
    """Place ``level`` centred in a frame of ``size = (height, width)``.

    Raises:
        ValueError: when the level does not fit in the frame.
    """
    height, width = size
    h, w = level.height, level.width
    if h > height or w > width:
        name = f"level {level.title!r}" if level.title else "a level"
        raise ValueError(f"obs_size {size} is too small: {name} is {h}x{w} (rows x cols)")
    r0, c0 = (height - h) // 2, (width - w) // 2
    grid = level.grid
    drawn = np.zeros((height, width), dtype=bool)
    drawn[r0 : r0 + h, c0 : c0 + w] = grid == "#"
    goals = np.zeros((height, width), dtype=bool)
    goals[r0 : r0 + h, c0 : c0 + w] = np.isin(grid, [".", "*", "+"])
    boxes = [(r + r0) * width + c + c0 for r, c in level.boxes]
    pr, pc = level.player
    player = (pr + r0) * width + pc + c0
    # padding is not wall, so build_board's outside fill also reaches the level's own outside
    board = build_board(drawn, goals, boxes, player)
    cells = board.cells.copy()
    cells[board.dead != 0] |= DEAD
    cells[drawn.ravel()] |= DRAWN_WALL
    return FramedLevel(board, cells, int(player), r0, c0)


def frame_level(
    level: Level, size: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``frame`` as the env table stores it.

    Returns:
        (cells uint8[H*W] with engine flags plus DEAD and DRAWN_WALL, dead uint8[H*W],
        box squares int32[n_boxes], player square).

    Raises:
        ValueError: when the level does not fit in the frame.
    """
    framed = frame(level, size)
    board = framed.board
    return framed.cells, board.dead.copy(), board.start_boxes.copy(), framed.player
