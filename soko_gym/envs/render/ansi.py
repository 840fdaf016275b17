"""Text rendering: an observation's planes back to XSB, the ``render_mode="ansi"`` output."""

from __future__ import annotations

import numpy as np

from soko_gym.envs.render.rgb import TILE_NAMES, TILE_OUTSIDE, check_planes, tile_ids

# XSB character of each tile id (TILE_* order); outside and dead squares are spaces.
_XSB_CHARS = {
    "outside": " ",
    "wall": "#",
    "floor": " ",
    "goal": ".",
    "box": "$",
    "box_on_goal": "*",
    "player": "@",
    "player_on_goal": "+",
    "dead": " ",
}
_CHAR_OF_TILE = np.array([_XSB_CHARS[name] for name in TILE_NAMES], dtype="<U1")


def planes_to_xsb(planes: np.ndarray) -> str:
    """XSB text of one observation, cropped to the level.

    Walls are ``#``, floor a space, then ``.`` goal, ``$`` box, ``*`` box on goal, ``@`` player
    and ``+`` player on goal; the dead-square plane, if present, is not shown. Squares in no
    plane (the level's outside and the frame's padding) are spaces. Rows and columns that are
    entirely outside at the frame's edges are dropped and trailing spaces stripped, so for a
    valid level ``Level.from_xsb(planes_to_xsb(planes))`` gives back the level's board (a level
    whose rows all start with a space loses that blank column, which planes cannot tell from
    padding).

    Args:
        planes: uint8[C, H, W] 0/1 planes in the ``PLANE_*`` order of
            ``soko_gym.engine.constants`` (C = 5, or 6 with the dead-square plane).

    Returns:
        The rows joined by newlines, without a trailing newline ("" when every square is
        outside).

    Raises:
        ValueError: when ``planes`` is malformed.
    """
    check_planes(planes, 3)
    ids = tile_ids(planes)
    used = ids != TILE_OUTSIDE
    rows = np.flatnonzero(used.any(axis=1))
    if rows.size == 0:
        return ""
    first_col = int(np.flatnonzero(used.any(axis=0))[0])
    block = _CHAR_OF_TILE[ids[rows[0] : rows[-1] + 1, first_col:]]
    return "\n".join("".join(row).rstrip() for row in block)
