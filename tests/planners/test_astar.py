import pytest

import planners
import soko_gym
from planners import SearchLimits

DEAD_START = "#####\n#$  #\n#@ .#\n#####"  # box in a corner off goal: unsolvable at once
# solvable or not, as bfs (complete, no pruning but dead squares) decides
SMALL_LEVELS = [
    DEAD_START,
    "#######\n#@ $$.#\n#.    #\n#######",  # the left box can never get down to its goal
    "#######\n#@ $$.#\n#    .#\n#######",
    "######\n#@   #\n# $$ #\n# .. #\n######",
    "#######\n#.$@$.#\n#######",
    "########\n#@ $  .#\n#  ##  #\n# $ . ##\n########",
]


@pytest.mark.parametrize("name", ["astar", "greedy"])
@pytest.mark.parametrize("source", ["microban:1", "microban:2", "microban:3", "microban:10"])
def test_best_first__solves_microban_and_verifies(name, source):
    level = soko_gym.load_levels(source)[0]
    result = planners.solve(level, name, SearchLimits(max_seconds=30))
    assert result.solved and soko_gym.verify(level, result.lurd).ok
    assert result.optimal == (name == "astar")


@pytest.mark.parametrize("source", ["microban:1", "microban:3", "microban:8", "microban:20"])
def test_astar__push_count_equals_bfs(source):
    level = soko_gym.load_levels(source)[0]
    optimum = planners.solve(level, "bfs", SearchLimits(max_seconds=60)).pushes
    result = planners.solve(level, "astar")
    assert result.pushes == optimum


def test_astar__xsokoban_1_in_its_proven_optimum():
    result = planners.solve(
        soko_gym.load_levels("xsokoban:1")[0], "astar", SearchLimits(max_seconds=60)
    )
    assert result.solved and result.optimal and result.pushes == 97


def test_astar__walled_in_goals_are_not_dead():
    result = planners.solve(
        soko_gym.load_levels("microban:155")[0], "astar", SearchLimits(max_seconds=60)
    )
    assert result.solved


@pytest.mark.parametrize("name", ["astar", "greedy"])
@pytest.mark.parametrize("xsb", SMALL_LEVELS)
def test_best_first__agrees_with_bfs_on_solvability(name, xsb):
    truth = planners.solve(xsb, "bfs")
    assert truth.status in ("solved", "unsolvable")
    result = planners.solve(xsb, name)
    assert result.status == truth.status
    if name == "astar" and truth.solved:
        assert result.pushes == truth.pushes


def test_astar__limits_stop_with_their_status():
    level = soko_gym.load_levels("microban:144")[0]
    assert planners.solve(level, "astar", SearchLimits(max_nodes=50)).status == "node_limit"
    assert planners.solve(level, "astar", SearchLimits(max_seconds=0.05)).status == "timeout"
    tiny = planners.solve(level, "astar", SearchLimits(max_memory_mb=1))
    assert tiny.status == "memory_limit" and tiny.stats["peak_memory_mb"] <= 1


def test_tunnel_macro__cuts_pushes_and_keeps_optimality():
    # the box must travel a one-wide tunnel: the macro pushes it through as one node
    level = soko_gym.Level.from_xsb("#########\n#@$    .#\n#########")
    with_tunnels = planners.solve(level, "astar")
    without = planners.solve(level, "astar", tunnels=False)
    assert with_tunnels.pushes == without.pushes == 5
    assert with_tunnels.stats["tunnel_pushes"] > 0 and without.stats["tunnel_pushes"] == 0
    assert with_tunnels.nodes < without.nodes
    # a goal inside the tunnel stops the macro, so the box can still stop there
    stop = soko_gym.Level.from_xsb("#########\n#@$  .  #\n#########")
    assert planners.solve(stop, "astar").pushes == 3


def test_dead_square_and_freeze_pruning__cut_but_keep_solutions():
    level = soko_gym.load_levels("microban:3")[0]
    result = planners.solve(level, "astar")
    assert result.stats["pruned_dead_square"] > 0
    assert result.pushes == planners.solve(level, "bfs").pushes
    frozen = soko_gym.Level.from_xsb("#######\n#     #\n# $$@ #\n#  .. #\n#######")
    r = planners.solve(frozen, "astar")
    assert r.solved and r.stats["pruned_frozen"] > 0  # pushing a box up freezes the pair


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"tunnels": "yes"}, "tunnels"),
        ({"slice_nodes": 0}, "slice_nodes"),
        ({"colour": 1}, "colour"),
    ],
)
def test_astar__bad_options_raise_value_error(options, name):
    with pytest.raises(ValueError, match=name):
        planners.solve("#####\n#@$.#\n#####", "astar", **options)
    with pytest.raises(ValueError, match="max_seconds"):
        SearchLimits(max_seconds=-1)
    with pytest.raises(ValueError, match="unknown planner"):
        planners.solve("#####\n#@$.#\n#####", "magic")
