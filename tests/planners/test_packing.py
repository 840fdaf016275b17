import numpy as np
import pytest

import planners
from planners import SearchLimits
from planners.packing import (
    PackingOrderPlanner,
    ReversePackingOrderPlanner,
    pull_dead_squares,
    status_keys,
)
from soko_gym.levels import Level, verify

NAMES = ("packing-order", "reverse-packing-order")

TWO_BOXES = """
#######
#     #
# .$. #
#  $  #
#  @  #
#######
"""

# the box must go round a corner: one macro move of several pushes
CORNER = """
######
#    #
# $# #
#  # #
#. @ #
######
"""

# the right box must take the far goal first
ROW = """
#########
#  $ $..#
#    @###
#########
"""

# the only push sends the box into a corner: no macro move at all
NO_MACRO_MOVE = """
######
#@.$ #
######
"""


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("xsb", [TWO_BOXES, CORNER, ROW], ids=["two", "corner", "row"])
def test_packing_planners__solve_inline_levels(name, xsb):
    level = Level.from_xsb(xsb)
    result = planners.solve(level, name, SearchLimits(max_seconds=10))
    assert result.status == "solved", result
    assert verify(level, result.lurd).ok
    assert not result.optimal
    assert result.stats["macro_moves"] >= 1


@pytest.mark.parametrize("name", NAMES)
def test_packing_planners__solve_microban_levels(name, microban):
    for index in (1, 3, 4, 6, 13):
        level = microban[index]
        result = planners.solve(level, name, SearchLimits(max_seconds=10))
        assert result.solved, (index, result.status)
        assert verify(level, result.lurd).ok, index


@pytest.mark.parametrize("name", NAMES)
def test_packing_planners__start_already_solved(name):
    result = planners.solve("#####\n#@**#\n#####", name)
    assert result.solved
    assert result.lurd == ""


@pytest.mark.parametrize("name", NAMES)
def test_packing_planners__exhausted_without_macro_moves(name):
    result = planners.solve(NO_MACRO_MOVE, name, SearchLimits(max_seconds=10))
    assert result.status == "exhausted"
    assert result.lurd == ""


def test_packing_order__prunes_deadlocked_parking():
    result = PackingOrderPlanner().solve(NO_MACRO_MOVE)
    assert result.nodes == 1
    assert result.generated == 0  # the corner is a dead square: never a parking square


@pytest.mark.parametrize("planner", [PackingOrderPlanner, ReversePackingOrderPlanner])
def test_packing_planners__park_when_no_direct_order_exists(planner, microban):
    level = microban[13]
    assert planner(max_parks=0).solve(level).status == "exhausted"
    result = planner(max_parks=1).solve(level)
    assert result.solved and verify(level, result.lurd).ok


def test_reverse_packing_order__tries_each_player_region(microban):
    # three player regions touch the goals; the solution starts from one of them
    result = ReversePackingOrderPlanner().solve(microban[14])
    assert result.solved
    assert result.stats["roots"] == 3
    assert PackingOrderPlanner().solve(microban[14]).status == "exhausted"


@pytest.mark.parametrize("name", NAMES)
def test_packing_planners__node_limit(name, microban):
    result = planners.solve(microban[4], name, SearchLimits(max_nodes=1))
    assert result.status == "node_limit"
    assert result.nodes == 1


@pytest.mark.parametrize("name", NAMES)
def test_packing_planners__timeout(name, microban):
    result = planners.solve(microban[4], name, SearchLimits(max_seconds=1e-9))
    assert result.status == "timeout"


@pytest.mark.parametrize("name", NAMES)
def test_packing_planners__memory_limit(name, microban):
    result = planners.solve(microban[4], name, SearchLimits(max_memory_mb=1e-3))
    assert result.status == "memory_limit"


def test_packing_planners__registered():
    assert set(NAMES) <= set(planners.available())


def test_packing_planners__reject_bad_options():
    with pytest.raises(ValueError):
        planners.get_planner("packing-order", max_parks=-1)
    with pytest.raises(ValueError):
        planners.get_planner("reverse-packing-order", initial_nodes=0)
    with pytest.raises(ValueError):
        planners.get_planner("packing-order", parking=True)


def test_pull_dead_squares__marks_squares_with_no_pull_home():
    board = Level.from_xsb("######\n#### #\n#@.$ #\n######").board
    dead = pull_dead_squares(board)
    w = board.width
    # the alcove's only neighbour has a wall beyond it: no pull ever leaves it
    assert dead[1 * w + 4] == 1
    # every corridor square has two free squares in a row towards the start square
    assert not dead[[2 * w + c for c in range(1, 5)]].any()
    assert not dead[board.cells == 1].any()  # walls are not floor, never "dead"


def test_status_keys__fixed_and_distinct():
    park, done = status_keys(50)
    again_park, again_done = status_keys(50)
    assert np.array_equal(park, again_park) and np.array_equal(done, again_done)
    assert park.dtype == np.uint64 and not np.any(park == done)
