"""The diagonal deadlock test: closed diagonals of squares the player can never enter."""

import numpy as np
import pytest

import planners
from planners import SearchLimits
from planners._kernels.fess_diagonal import diagonal_deadlock
from soko_gym.engine.constants import BOX_AT_DTYPE
from soko_gym.levels import Level, load_levels, verify

# the void square (3, 4) has a box on each side; its diagonal is closed by walls at both ends,
# and the rail boxes are off the targets: whatever is pushed into the void stays off a target
CLOSED = "#######\n#.   .#\n#  #$ #\n#  $ $#\n#   $##\n#.  @.#\n#######"
# the void square a target and the rail boxes above it home: a push from below can fill it
# and leave the part above finished, so the diagonal proves nothing (other tests may)
HOME = "#######\n#.    #\n#  #* #\n#  *.$#\n#   $##\n#   @ #\n#######"


def _dead(board, boxes, player):
    box_at = np.full(board.n_cells, -1, dtype=BOX_AT_DTYPE)
    box_at[np.asarray(boxes)] = np.arange(len(boxes), dtype=BOX_AT_DTYPE)
    return bool(diagonal_deadlock(board.cells, board.offsets, board.floor, box_at, int(player)))


def test_a_closed_diagonal_with_boxes_off_the_targets_is_dead():
    level = Level.from_xsb(CLOSED)
    b = level.board
    assert _dead(b, b.start_boxes, b.start_player)
    # and it is: a complete search finds no solution
    assert planners.solve(level, "bfs", SearchLimits(max_seconds=60)).status == "unsolvable"


def test_a_void_target_below_boxes_at_home_proves_nothing():
    b = Level.from_xsb(HOME).board
    assert not _dead(b, b.start_boxes, b.start_player)


def test_the_player_on_the_void_square_opens_it():
    b = Level.from_xsb(CLOSED).board
    assert not _dead(b, b.start_boxes, b.square(3, 4))


@pytest.mark.parametrize("source", ["microban:1-30", "xsokoban:1-2"])
def test_no_position_on_a_solution_is_called_dead(source):
    """Soundness spot check: every position a verified solution passes through is live."""
    checked = 0
    for level in load_levels(source):
        result = planners.solve(level, "astar", SearchLimits(max_seconds=60))
        assert result.status == "solved"
        lurd = result.lurd
        for i, c in enumerate(lurd):
            if c.isupper():
                state = verify(level, lurd[: i + 1]).state
                assert not _dead(level.board, state.box_pos, state.player), (level.title, i)
                checked += 1
    assert checked > 100


def test_the_band_of_microban_ii_131_has_its_dead_first_pushes():
    """Two of the pushes that join the most player regions at the start close a diagonal."""
    level = load_levels("microban2:131")[0]
    b = level.board
    start = [int(s) for s in b.start_boxes]
    assert not _dead(b, start, b.start_player)
    up, right = int(b.offsets[0]), int(b.offsets[3])

    def push(src, d):
        assert src in start
        return [src + d if s == src else s for s in start]

    # the box beside the lower hole pushed up, and the box left of the lower room's target
    # pushed onto it: each leaves a diagonal that can only close with a box off a target
    assert _dead(b, push(b.square(12, 2), up), b.square(12, 2))
    assert _dead(b, push(b.square(14, 5), right), b.square(14, 5))
    # the push that opens the band from below keeps it live
    assert not _dead(b, push(b.square(13, 3), up), b.square(13, 3))
