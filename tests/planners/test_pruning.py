import pytest

import planners
import soko_gym
from planners.astar import AStarPlanner, GreedyPlanner
from soko_gym.engine import corral, corral_analysis, corral_memo, corral_search, deadlock
from tests.soko_gym.engine.test_corral import (
    CORRAL_DEAD,
    CORRAL_OPENS,
    PI_CUT,
    PI_NO_CUT,
    PI_NO_PUSH,
    WALL_LINE_ONE_GOAL,
    WALL_LINE_TWO_GOALS,
)

OPTIONS = ("pi_corrals", "corral_deadlocks", "wall_lines")
OFF = dict.fromkeys(OPTIONS, False)
# the simple bound lets A* push both boxes onto the top row, a wall line with one goal
WALL_LINE_TRAP = "#########\n#   .   #\n#  $ $  #\n#@      #\n#       #\n#      .#\n#########"
INLINE = [
    PI_CUT,
    PI_NO_CUT,
    PI_NO_PUSH,
    CORRAL_DEAD,
    CORRAL_OPENS,
    WALL_LINE_ONE_GOAL,
    WALL_LINE_TWO_GOALS,
    WALL_LINE_TRAP,
    "#######\n#@ $$.#\n#.    #\n#######",
    "########\n#@ $  .#\n#  ##  #\n# $ . ##\n########",
]


def only(option):
    return {**OFF, option: True}


@pytest.mark.parametrize("option", [*OPTIONS, "all"])
def test_pruning__same_push_counts_on_microban_1_to_30(microban, option):
    options = dict.fromkeys(OPTIONS, True) if option == "all" else only(option)
    for index, level in enumerate(microban[:30], start=1):
        plain = planners.solve(level, "astar", **OFF)
        pruned = planners.solve(level, "astar", **options)
        assert plain.solved and pruned.solved, index
        assert pruned.pushes == plain.pushes, index
        assert soko_gym.verify(level, pruned.lurd).ok


@pytest.mark.parametrize("bound", ["matching", "simple"])
@pytest.mark.parametrize("xsb", INLINE)
def test_pruning__agrees_with_bfs_on_inline_levels(xsb, bound):
    truth = planners.solve(xsb, "bfs")
    for option in [*OPTIONS, "all"]:
        options = dict.fromkeys(OPTIONS, True) if option == "all" else only(option)
        result = planners.solve(xsb, "astar", bound=bound, **options)
        assert result.status == truth.status, option
        assert result.pushes == truth.pushes, option


def test_pi_corrals__cut_expanded_nodes():
    level = soko_gym.load_levels("microban:35")[0]
    plain = planners.solve(level, "astar", **OFF)
    pruned = planners.solve(level, "astar", **only("pi_corrals"))
    assert pruned.stats["pi_corral_cuts"] > 0 and plain.stats["pi_corral_cuts"] == 0
    assert pruned.nodes < plain.nodes and pruned.pushes == plain.pushes


def test_corral_deadlocks__cut_expanded_nodes():
    level = soko_gym.load_levels("microban:16")[0]
    plain = planners.solve(level, "astar", **OFF)
    pruned = planners.solve(level, "astar", **only("corral_deadlocks"))
    assert pruned.stats["pruned_corral"] > 0 and plain.stats["pruned_corral"] == 0
    assert pruned.nodes < plain.nodes and pruned.pushes == plain.pushes


def test_corral_deadlocks__prune_the_root_of_a_closed_room():
    result = planners.solve(CORRAL_DEAD, "astar", **only("corral_deadlocks"))
    assert result.status == "unsolvable" and result.stats["pruned_corral"] == 1


def test_wall_lines__cut_expanded_nodes():
    plain = planners.solve(WALL_LINE_TRAP, "astar", bound="simple", **OFF)
    pruned = planners.solve(WALL_LINE_TRAP, "astar", bound="simple", **only("wall_lines"))
    assert pruned.stats["pruned_wall_line"] > 0 and plain.stats["pruned_wall_line"] == 0
    assert pruned.nodes < plain.nodes and pruned.pushes == plain.pushes


def test_pruning__defaults_and_greedy():
    planner = AStarPlanner()
    options = planner.options
    assert (options.pi_corrals, options.corral_deadlocks, options.wall_lines) == (
        True,
        False,
        True,
    )
    level = soko_gym.load_levels("microban:16")[0]
    result = GreedyPlanner(**dict.fromkeys(OPTIONS, True)).solve(level)
    assert result.solved and soko_gym.verify(level, result.lurd).ok


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"pi_corrals": 1}, "pi_corrals"),
        ({"corral_deadlocks": "yes"}, "corral_deadlocks"),
        ({"wall_lines": None}, "wall_lines"),
        ({"corral_budget": 0}, "corral_budget"),
    ],
)
def test_pruning__bad_options_raise_value_error(options, name):
    with pytest.raises(ValueError, match=name):
        planners.solve("#####\n#@$.#\n#####", "astar", **options)


def test_pruning__kernels_keep_one_signature():
    level = soko_gym.load_levels("microban:16")[0]
    planners.solve(level, "astar", **dict.fromkeys(OPTIONS, True))
    board = soko_gym.Level.from_xsb(CORRAL_DEAD).board
    corral_analysis.corral_deadlock_status(board, board.initial_state())
    corral_analysis.pi_corral_pushes_of(board, board.initial_state())
    line_of, lines = deadlock.wall_lines(board.cells, board.offsets)
    state = board.initial_state()
    deadlock.is_wall_line_deadlock(line_of, lines, state.box_at, int(state.box_pos[0]))
    # called from Python: compiled (or loaded) once
    for kernel in (corral_analysis.corral_label, corral_memo.corral_status,
                   corral_analysis.corral_pi_sq_pushes,
                   deadlock.is_wall_line_deadlock):  # fmt: skip
        assert len(kernel.signatures) == 1, kernel
    # called only from other kernels: no signature of their own when those load from the
    # cache, never more than one
    for kernel in (corral.label_corrals, corral.best_pi_corral, corral.keep_pushes_into,
                   corral_search.corral_deadlock):  # fmt: skip
        assert len(kernel.signatures) <= 1, kernel
