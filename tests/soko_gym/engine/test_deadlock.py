import numpy as np
import pytest

import soko_gym
from soko_gym.engine.deadlock import is_simple_deadlock


def deadlock_after(xsb, row, col):
    board = soko_gym.Level.from_xsb(xsb).board
    state = board.initial_state()
    seen = np.zeros(board.n_cells + 1, dtype=np.uint32)
    trail = np.empty(board.n_cells, dtype=np.int32)
    sq = row * board.width + col
    return bool(
        is_simple_deadlock(board.cells, board.dead, state.box_at, board.offsets, sq, seen, trail)
    )


@pytest.mark.parametrize(
    ("xsb", "square", "dead"),
    [
        ("#######\n#     #\n# $$  #\n# $$  #\n#@....#\n#######", (2, 2), True),  # 2x2 block
        ("#######\n#.   .#\n# $$  #\n# $*  #\n#@  . #\n#######", (2, 2), True),  # one on goal
        ("#######\n#  ** #\n#     #\n#@    #\n#######", (1, 3), False),  # frozen, on goals
        ("#######\n###   #\n# $$  #\n#@ .. #\n#######", (2, 2), False),  # neighbour can move
        ("#######\n#     #\n# $   #\n#@  . #\n#######", (2, 2), False),  # free box
        ("######\n#  $@#\n#   .#\n######", (1, 3), True),  # dead square on the top row
        ("#######\n#     #\n# $$  #\n#@. . #\n#######", (2, 2), False),  # pair, free vertically
    ],
)
def test_is_simple_deadlock__dead_squares_and_frozen_boxes(xsb, square, dead):
    assert deadlock_after(xsb, *square) == dead
