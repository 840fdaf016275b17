import pytest

import planners
import soko_gym
from planners import SearchLimits

UNINFORMED = ["bfs", "dfs", "zobrist-dfs", "iddfs", "iddfs-zobrist"]
OPTIMAL = ["bfs", "iddfs", "iddfs-zobrist"]

SOLVABLE = [
    "#####\n#@$.#\n#####",  # one push
    "######\n#@   #\n# $$ #\n# .. #\n######",
    "#######\n#.    #\n# $$@ #\n#.    #\n#######",
    " ####\n##  ###\n#.$@$.#\n#   ###\n#####",
    "########\n#@ $  .#\n#  ##  #\n# $ . ##\n########",
    "microban:1",
    "microban:2",
    "microban:3",
]
UNSOLVABLE = [
    "#####\n#$ .#\n#@  #\n#####",  # the box starts in a corner off goal
    "#########\n#..$@$  #\n#########",  # the right box can never be pushed left
    "#######\n#.$@$.#\n### ###\n  #.$#\n  ####",  # the lower box is stuck
    "#######\n#@ $$.#\n#.    #\n#######",  # the left box can never get down to its goal
    "#######\n#@ $$.#\n#    .#\n#######",  # no legal push: the boxes block each other
]


def level_of(source):
    if source.startswith("microban:"):
        return soko_gym.load_levels(source)[0]
    return soko_gym.Level.from_xsb(source)


def solve(source, name, limits=None, **options):
    level = level_of(source)
    return level, planners.solve(level, name, limits or SearchLimits(max_seconds=30), **options)


def test_registry__lists_the_uninformed_planners():
    assert set(UNINFORMED) <= set(planners.available())
    for name in UNINFORMED:
        assert planners.get_planner(name).optimal == (name in OPTIMAL)


@pytest.mark.parametrize("name", UNINFORMED)
@pytest.mark.parametrize("source", SOLVABLE)
def test_uninformed__solves_small_levels_and_verifies(name, source):
    level, result = solve(source, name)
    assert result.solved
    check = soko_gym.verify(level, result.lurd)
    assert check.ok and check.pushes == result.pushes
    assert result.optimal == (name in OPTIMAL)
    assert 0 < result.nodes <= result.generated + 1


@pytest.mark.parametrize("source", SOLVABLE + ["microban:4", "microban:9", "microban:12"])
def test_optimal_planners__agree_with_bfs_on_push_counts(source):
    _, truth = solve(source, "bfs")
    assert truth.solved
    for name in ("iddfs", "iddfs-zobrist"):
        _, result = solve(source, name)
        assert result.solved and result.optimal and result.pushes == truth.pushes


def test_bfs__microban_push_optima():
    # computed by bfs and confirmed by both iterative deepening planners
    assert [solve(f"microban:{i}", "bfs")[1].pushes for i in (1, 2, 3)] == [8, 3, 13]


def test_bfs__freeze_off_keeps_the_optimum_and_prunes_less():
    _, frozen = solve("microban:3", "bfs")
    _, plain = solve("microban:3", "bfs", freeze=False)
    assert plain.pushes == frozen.pushes == 13
    assert plain.stats["pruned_deadlock"] <= frozen.stats["pruned_deadlock"]


@pytest.mark.parametrize("name", UNINFORMED)
@pytest.mark.parametrize("xsb", UNSOLVABLE)
def test_uninformed__proves_small_levels_unsolvable(name, xsb):
    _, result = solve(xsb, name)
    assert result.status == "unsolvable" and not result.lurd


@pytest.mark.parametrize("name", ["dfs", "zobrist-dfs", "iddfs", "iddfs-zobrist"])
def test_depth_first__depth_bound_below_the_optimum_is_exhausted(name):
    _, result = solve("microban:1", name, max_depth=5)  # the optimum is 8 pushes
    assert result.status == "exhausted"
    if name.startswith("iddfs"):
        assert result.stats["iterations"] == 6


def test_uninformed__solved_start_needs_no_push():
    for name in UNINFORMED:
        _, result = solve("####\n#@*#\n####", name)
        assert result.solved and result.pushes == 0 and result.lurd == ""


@pytest.mark.parametrize("name", UNINFORMED)
def test_uninformed__stops_at_node_limit(name):
    _, result = solve("microban:3", name, SearchLimits(max_nodes=5))
    assert result.status == "node_limit" and result.nodes == 5


@pytest.mark.parametrize(("name", "source"), [("bfs", "microban:153"), ("iddfs", "microban:6")])
def test_uninformed__stops_at_timeout(name, source):
    _, result = solve(source, name, SearchLimits(max_seconds=0.05))
    assert result.status == "timeout"


@pytest.mark.parametrize(("name", "mb"), [("bfs", 1.0), ("zobrist-dfs", 0.2), ("bfs", 0.1)])
def test_uninformed__stops_before_memory_limit(name, mb):
    _, result = solve("microban:153", name, SearchLimits(max_memory_mb=mb))
    assert result.status == "memory_limit"
    assert result.stats["peak_memory_bytes"] <= mb * 2**20


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("dfs", {"max_depth": -1}),
        ("dfs", {"max_depth": None}),
        ("iddfs", {"max_depth": 2.5}),
        ("zobrist-dfs", {"max_depth": True}),
        ("bfs", {"freeze": "yes"}),
        ("iddfs-zobrist", {"depth": 3}),
    ],
)
def test_uninformed__bad_options_raise_value_error(name, options):
    with pytest.raises(ValueError, match="max_depth|freeze|depth"):
        planners.solve(level_of("microban:1"), name, **options)
