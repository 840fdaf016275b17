import pytest

import planners
import soko_gym
from planners import SearchLimits

SOLVABLE = [
    "#######\n#@ $ .#\n# $  .#\n#######",
    "######\n#@   #\n# $$ #\n# .. #\n######",
    "#######\n#.$@$.#\n#######",
    "########\n#@ $  .#\n#  ##  #\n# $ . ##\n########",
    "#########\n#@ $   .#\n#########",  # a tunnel the macro runs through
]
UNSOLVABLE = [  # (level, iterations the proof takes)
    ("#######\n#@ $$.#\n#.    #\n#######", 1),  # the left box can never get down
    ("#######\n#@ $$.#\n#    .#\n#######", 1),  # no box can move at all
    ("#######\n#.$   #\n# $.# #\n#@#  ##\n#######", 4),  # lost only after a few pushes
]


def _idastar(level, limits=None, **options):
    result = planners.solve(level, "idastar", limits, **options)
    if result.solved:
        assert soko_gym.verify(level, result.lurd).ok
    return result


@pytest.mark.parametrize("bound", ["simple", "matching"])
def test_idastar__microban_1_to_10_in_astar_push_counts(bound):
    for level in soko_gym.load_levels("microban:1-10"):
        result = _idastar(level, SearchLimits(max_seconds=30), bound=bound)
        assert result.solved and result.optimal and result.stats["bound"] == bound
        assert result.pushes == planners.solve(level, "astar").pushes


def test_idastar__matching_bound_thresholds_step_by_two():
    steps = set()
    for level in soko_gym.load_levels("microban:1-10"):
        thresholds = _idastar(level, bound="matching").stats["thresholds"]
        steps.update(b - a for a, b in zip(thresholds, thresholds[1:], strict=False))
    assert steps and all(step % 2 == 0 for step in steps)


@pytest.mark.parametrize("bound", ["simple", "matching"])
@pytest.mark.parametrize("xsb", SOLVABLE)
def test_idastar__inline_levels_in_astar_push_counts(xsb, bound):
    level = soko_gym.Level.from_xsb(xsb)
    result = _idastar(level, bound=bound)
    assert result.solved and result.pushes == planners.solve(level, "astar").pushes


def test_idastar__same_push_counts_without_tunnels_or_with_a_full_table():
    levels = soko_gym.load_levels("microban:4-8")
    for level in levels:
        optimum = planners.solve(level, "astar").pushes
        assert _idastar(level, tunnels=False).pushes == optimum
        # a 16-slot table that may not grow: the search goes on without new entries
        tiny = _idastar(level, SearchLimits(max_memory_mb=0.001), initial_table=16)
        assert tiny.pushes == optimum


@pytest.mark.parametrize(("xsb", "iterations"), UNSOLVABLE)
def test_idastar__proves_a_small_level_unsolvable(xsb, iterations):
    level = soko_gym.Level.from_xsb(xsb)
    result = _idastar(level, bound="simple")
    assert result.status == "unsolvable" == planners.solve(level, "astar").status
    assert result.stats["iterations"] == iterations
    assert _idastar(level).status == "unsolvable"  # the default matching bound


def test_idastar__solved_start_needs_no_search():
    result = _idastar(soko_gym.Level.from_xsb("#####\n#@* #\n#####"))
    assert result.solved and result.pushes == 0


def test_idastar__stats_list_each_threshold_up_to_the_optimum():
    level = soko_gym.load_levels("microban:10")[0]
    result = _idastar(level, bound="simple")
    thresholds = result.stats["thresholds"]
    assert result.stats["iterations"] == len(thresholds) > 1
    assert thresholds == sorted(set(thresholds)) and thresholds[-1] == result.pushes
    assert result.stats["bound"] == "simple" and result.stats["expanded"] == result.nodes


def test_idastar__node_limit_and_timeout():
    level = soko_gym.load_levels("xsokoban:1")[0]
    capped = _idastar(level, SearchLimits(max_nodes=500), slice_nodes=64, bound="simple")
    assert capped.status == "node_limit" and 0 < capped.nodes <= 500
    late = _idastar(level, SearchLimits(max_seconds=0.2), slice_nodes=256, bound="simple")
    assert late.status == "timeout" and late.seconds < 5


@pytest.mark.parametrize(
    "options",
    [{"bound": "nearest"}, {"tunnels": 1}, {"slice_nodes": 0}, {"initial_table": True}],
)
def test_idastar__bad_options_name_the_option(options):
    with pytest.raises(ValueError, match=next(iter(options))):
        planners.get_planner("idastar", **options)
