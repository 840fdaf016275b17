"""FrozenBipartite: the bipartite deadlock test with frozen boxes as walls."""

import numpy as np
import pytest

import planners
from planners import SearchLimits
from planners.fess.frozen import FrozenBipartite
from soko_gym.engine.constants import DIST_INF, SQUARE_DTYPE
from soko_gym.engine.lowerbound import bipartite_deadlock
from soko_gym.levels import Level, load_levels, verify

# two boxes frozen on targets in a 1-wide shaft seal the target above them; the third box
# could reach that target on the empty board, so only the frozen-wall test sees the deadlock
SEALED = "#######\n###.###\n###*###\n###*  #\n#  $  #\n#  @  #\n#######"
# a box frozen on a corner target; the other box still reaches the other target
OPEN = "######\n#*   #\n#  $ #\n# .@ #\n######"


def _start(xsb):
    board = Level.from_xsb(xsb).board
    return board, board.start_boxes.astype(np.int32).copy()


def _empty_board_deadlock(board, pos):
    seen = np.zeros(board.n_cells + 1, dtype=np.uint32)
    work = np.zeros((4, board.n_boxes), dtype=SQUARE_DTYPE)
    return bool(
        bipartite_deadlock(
            board.cells, board.dead, board.goals, board.goal_dist, pos, board.offsets, seen, work
        )
    )


def test_frozen_boxes_sealing_a_target_are_a_deadlock_the_empty_board_test_misses():
    board, pos = _start(SEALED)
    fb = FrozenBipartite(board)
    assert fb.frozen_squares(pos).tolist() == [board.square(2, 3), board.square(3, 3)]
    assert not _empty_board_deadlock(board, pos)
    assert fb.is_deadlock(pos)


def test_frozen_box_on_a_target_with_the_rest_reachable_is_no_deadlock():
    board, pos = _start(OPEN)
    fb = FrozenBipartite(board)
    assert fb.frozen_squares(pos).tolist() == [board.square(1, 1)]
    assert not fb.is_deadlock(pos)


def test_reach_table_walls_off_frozen_targets_and_is_cached_per_frozen_set():
    board, pos = _start(SEALED)
    fb = FrozenBipartite(board)
    frozen = fb.frozen_squares(pos)
    table = fb.reach_table(frozen)
    goals = board.goals.tolist()
    assert table.shape == (len(goals), board.n_cells)
    for g, goal in enumerate(goals):
        if goal in frozen.tolist():
            assert (table[g] == DIST_INF).all()  # a target under a frozen box is taken
    sealed = goals.index(board.square(1, 3))
    assert table[sealed, board.square(4, 3)] == DIST_INF  # the free box cannot get there
    built = fb.tables_built
    assert fb.reach_table(frozen.copy()) is table and fb.tables_built == built
    assert fb.is_deadlock(pos) and fb.tables_built == built  # same frozen set: no rebuild
    other = fb.reach_table(frozen[:1])
    assert fb.tables_built == built + 1 and other is not table
    # only the upper box as a wall: its target stays taken, the lower one is reachable again
    assert (other[goals.index(board.square(2, 3))] == DIST_INF).all()
    assert other[goals.index(board.square(3, 3)), board.square(4, 3)] == 0

    board, pos = _start(OPEN)
    fb = FrozenBipartite(board)
    table = fb.reach_table(fb.frozen_squares(pos))
    assert table[board.goals.tolist().index(board.square(3, 2)), board.square(2, 3)] == 0


def _positions(level, lurd):
    """Box squares at the start and after every push of ``lurd`` (replayed by ``verify``)."""
    yield level.board.start_boxes.astype(np.int32)
    for i, ch in enumerate(lurd):
        if ch.isupper():
            yield verify(level, lurd[: i + 1]).state.box_pos


@pytest.mark.parametrize("planner", ["fess", "astar"])
def test_no_position_on_a_solution_path_is_reported_dead(planner):
    # FESS prunes what the test reports, so A*'s paths (which never consult it) check it too
    for level in load_levels("microban:1-10") + load_levels("xsokoban:1"):
        result = planners.solve(level, planner, SearchLimits(max_seconds=30))
        assert result.solved and verify(level, result.lurd).ok, level.title
        fb = FrozenBipartite(level.board)
        for pos in _positions(level, result.lurd):
            assert not fb.is_deadlock(pos.astype(np.int32)), (level.title, pos.tolist())
