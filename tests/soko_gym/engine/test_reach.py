import numpy as np
import pytest

import soko_gym
from soko_gym.engine import reach
from soko_gym.engine.constants import MOVE_CHARS
from soko_gym.engine.verify import verify_lurd

from .helpers import python_reach, python_walk_length


def scratch(board):
    n = board.n_cells
    return (
        reach.new_stamps(board.cells),
        np.empty(n, dtype=np.int32),
        np.empty(n, dtype=np.int8),
        np.empty(n, dtype=np.int8),
    )


@pytest.mark.parametrize("source", ["microban:1", "sasquatch:49", "xsokoban:5", "microban2:40"])
def test_reach_player__equals_python_flood_fill(source):
    board = soko_gym.load_levels(source)[0].board
    state = board.initial_state()
    stamps, stack, _, _ = scratch(board)
    n, lowest = reach.reach_player(state.box_at, board.offsets, state.player, stamps, stack)
    expected = python_reach(board, state)
    assert n == len(expected) and lowest == min(expected)
    assert set(np.flatnonzero(stamps[:-1] == stamps[-1]).tolist()) == expected


def test_reach_player__survives_stamp_wrap_around():
    board = soko_gym.load_levels("microban:3")[0].board
    state = board.initial_state()
    stamps, stack, _, _ = scratch(board)
    expected = python_reach(board, state)
    stamps[-1] = np.uint32(0xFFFFFFFF - 5)
    for _ in range(6):  # crosses the wrap point
        n, _ = reach.reach_player(state.box_at, board.offsets, state.player, stamps, stack)
        assert n == len(expected)
        assert set(np.flatnonzero(stamps[:-1] == stamps[-1]).tolist()) == expected
    assert stamps[-1] < 100  # it did wrap
    assert all(stamps[:-1][board.cells == 1] == reach.WALL_STAMP)  # walls keep their stamp


def test_reachable_box_sides__marks_reached_sides_only():
    level = soko_gym.Level.from_xsb("######\n#    #\n# #$##\n#@ $.#\n## . #\n ######\n")
    board = level.board
    state = board.initial_state()
    stamps, stack, _, _ = scratch(board)
    reach.reach_player(state.box_at, board.offsets, state.player, stamps, stack)
    sides = np.empty(board.n_boxes, dtype=np.uint8)
    assert reach.reachable_box_sides(state.box_pos, board.offsets, stamps, sides) == 2
    reached = python_reach(board, state)
    for b, sq in enumerate(state.box_pos.tolist()):
        expected = sum(1 << d for d in range(4) if sq + board.offsets[d] in reached)
        assert sides[b] == expected


@pytest.mark.parametrize("source", ["microban:1", "microban:10", "sasquatch:49"])
def test_player_path__is_a_shortest_legal_walk(source):
    board = soko_gym.load_levels(source)[0].board
    state = board.initial_state()
    stamps, stack, parent, out = scratch(board)
    for target in board.floor.tolist():
        k = reach.player_path(
            state.box_at, board.offsets, state.player, target, stamps, stack, parent, out
        )
        assert k == python_walk_length(board, state, state.player, target)
        if k > 0:
            result = verify_lurd(board, "".join(MOVE_CHARS[d] for d in out[:k]))
            assert result.index == k and result.pushes == 0  # legal walk, no push
            assert result.state.player == target
