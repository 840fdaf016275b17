"""The engine's shared vocabulary: cell flags, THE direction order, LURD letters, dtypes, codes.

Every table in the code and the docs derives from the direction order defined here:
up, down, left, right (the order gym-sokoban users know).
"""

from __future__ import annotations

import numpy as np

# Static cell bit flags (Board.cells). "Box on goal" is a state-level combination, not a code.
WALL = np.uint8(1)
FLOOR = np.uint8(2)
GOAL = np.uint8(4)
# Extra flags of the environments' framed level tables (never set in Board.cells).
DEAD = np.uint8(8)  # simple dead square
DRAWN_WALL = np.uint8(16)  # a '#' of the level as drawn (outside squares are walls, not drawn)

# Directions: index -> (row delta, col delta). The only place the order is defined.
UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3
N_DIRECTIONS = 4
DIRECTION_NAMES = ("up", "down", "left", "right")
DIRECTION_DELTAS = ((-1, 0), (1, 0), (0, -1), (0, 1))
OPPOSITE = (DOWN, UP, RIGHT, LEFT)
MOVE_CHARS = "udlr"  # LURD letter of a plain step, by direction
PUSH_CHARS = "UDLR"  # LURD letter of a push, by direction

# Dtypes, fixed once so every kernel compiles exactly one signature. Scalar kernel arguments
# cross the Python boundary as int (squares, push codes: int64) and HASH_DTYPE (hashes).
CELL_DTYPE = np.uint8  # Board.cells, dead-square flags
SQUARE_DTYPE = np.int32  # square indices, box positions, offsets, pushes, paths
BOX_AT_DTYPE = np.int16  # square -> box index, -1 for none
STAMP_DTYPE = np.uint32  # reachability stamps
HASH_DTYPE = np.uint64  # Zobrist keys and hashes
DIST_DTYPE = np.uint16  # push distances
DIST_INF = np.uint16(0xFFFF)  # "no push path" in distance tables

NO_BOX = -1
MAX_SIDE = 128  # largest board edge the engine accepts

# Status codes returned by the LURD replay kernel (kernels never raise).
STEP_OK = 0
STEP_BAD_CHAR = 1  # character outside "lurdLURD"
STEP_INTO_WALL = 2  # a step into a wall
STEP_LOWERCASE_PUSH = 3  # a lowercase step into a box (pushes must be uppercase)
STEP_PUSH_NOTHING = 4  # an uppercase step with no box in front
STEP_PUSH_BLOCKED = 5  # the box in front cannot move (wall or box behind it)
STEP_NOT_SOLVED = 6  # every step legal, but boxes are left off goals

STEP_REASONS = {
    STEP_OK: "ok",
    STEP_BAD_CHAR: "not a LURD character",
    STEP_INTO_WALL: "step into a wall",
    STEP_LOWERCASE_PUSH: "lowercase step into a box (a push must be uppercase)",
    STEP_PUSH_NOTHING: "uppercase step pushes no box",
    STEP_PUSH_BLOCKED: "box cannot be pushed (wall or box behind it)",
    STEP_NOT_SOLVED: "solution ends with boxes off goals",
}

# LURD character codes (ASCII) -> (direction, is_push); -1 for anything else.
LURD_DIRECTION = np.full(256, -1, dtype=np.int8)
LURD_IS_PUSH = np.zeros(256, dtype=np.int8)
for _d, (_m, _p) in enumerate(zip(MOVE_CHARS, PUSH_CHARS, strict=True)):
    LURD_DIRECTION[ord(_m)] = _d
    LURD_DIRECTION[ord(_p)] = _d
    LURD_IS_PUSH[ord(_p)] = 1
del _d, _m, _p

# Observation planes, in channel order (envs build uint8[C, H, W] observations from these).
PLANE_WALL = 0  # the level's wall squares as drawn ('#'); padding and outside are in no plane
PLANE_FLOOR = 1  # squares the player could ever stand on (inside the walls)
PLANE_GOAL = 2
PLANE_BOX = 3
PLANE_PLAYER = 4
PLANE_DEAD = 5  # optional sixth plane: simple dead squares
PLANE_TRAIL = 6  # optional seventh plane (Move env, after the dead plane): the player's last square
N_PLANES = 5
PLANE_NAMES = ("wall", "floor", "goal", "box", "player", "dead", "trail")
