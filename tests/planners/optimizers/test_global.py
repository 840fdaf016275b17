import numpy as np
import pytest

import planners
import soko_gym
from planners import SearchLimits
from planners.optimizers import global_search
from planners.optimizers.context import Evaluator, MethodStats, OptimizeContext, encode
from planners.optimizers.global_search import grow_neighbourhood, neighbourhood
from planners.optimizers.vicinity import box_squares

# one box two pushes left of its goal
ROOM = """\
########
#      #
#      #
# @$ . #
#      #
#      #
########"""
# pushes the box down and back up before pushing it home: 4 pushes, 12 moves (best: RR)
DETOUR = "urD" + "lddr" + "U" + "lu" + "RR"

# ten boxes, each one push above its goal: far too many box configurations for the method
WIDE = """\
######################
#                    #
# $$$$$$$$$$         #
# ..........         #
#                    #
#@                   #
######################"""
WIDE_SOLUTION = "uuuu" + "rDu" * 10

# A* solutions of Microban 1-4 (fewest pushes)
MICROBAN_ASTAR = (
    "dlUrrrdLullddrUluRuulDrddrruLdlUU",
    "rddLruulDuullddR",
    "ruuLLLulDrrrrddlUruLLLddllluurRDrdLuuurDD",
    "ullDLdRuurrdLLrrddlUruL",
)


def context(level, lurd, metric):
    evaluator = Evaluator(level)
    codes = encode(level, lurd)
    return OptimizeContext(
        level, metric, evaluator, codes, evaluator.moves(codes), None, MethodStats()
    )


@pytest.mark.parametrize("metric", ["moves", "pushes"])
def test_global__removes_a_detour(metric):
    level = soko_gym.Level.from_xsb(ROOM)
    result = planners.optimize(level, DETOUR, metric=metric, methods=["global"])
    check = soko_gym.verify(level, result.lurd)
    assert check.ok and (check.pushes, check.moves) == (2, 2)
    assert result.methods["global"].improvements == 1


def test_neighbourhood__grows_around_the_path_within_the_budget():
    level = soko_gym.Level.from_xsb(ROOM)
    ctx = context(level, DETOUR, "moves")
    small = neighbourhood(ctx, 6, 1 << 20)  # the 5 path positions, no room for a layer
    assert small.shape == (4, 1)  # the box visits 4 squares
    every = neighbourhood(ctx, 10**6, 1 << 20)
    assert set(every[:, 0].tolist()) > set(small[:, 0].tolist())
    assert np.array_equal(every, np.unique(every, axis=0))


def test_grow_neighbourhood__is_closed_only_when_it_holds_every_reachable_position():
    level = soko_gym.Level.from_xsb(ROOM)
    ctx = context(level, DETOUR, "moves")
    small, closed = grow_neighbourhood(ctx, 6, 1 << 20)
    assert small.shape == (4, 1) and not closed
    every, closed = grow_neighbourhood(ctx, 10**6, 1 << 20)
    assert closed and np.array_equal(every, neighbourhood(ctx, 10**6, 1 << 20))
    # one box in an open room reaches every square that is not dead: rows 2-4, columns 2-5
    assert every.shape[0] == int(box_squares(level).sum()) == 12


def test_global__skips_large_levels():
    level = soko_gym.Level.from_xsb(WIDE)
    assert soko_gym.verify(level, WIDE_SOLUTION).ok
    ctx = context(level, WIDE_SOLUTION, "moves")
    global_search.improve(ctx)
    assert ctx.stats.candidates == 0  # skipped: not one candidate offered
    assert not global_search.is_small(ctx, 10**8)


@pytest.mark.parametrize("metric", ["moves", "pushes"])
def test_global__never_worse_on_microban(microban, metric):
    for level, lurd in zip(microban[:4], MICROBAN_ASTAR, strict=True):
        before = soko_gym.verify(level, lurd)
        result = planners.optimize(
            level, lurd, metric=metric, methods=["global"], limits=SearchLimits(max_seconds=5)
        )
        check = soko_gym.verify(level, result.lurd)
        assert check.ok
        key = (check.moves, check.pushes) if metric == "moves" else (check.pushes, check.moves)
        old = (before.moves, before.pushes) if metric == "moves" else (before.pushes, before.moves)
        assert key <= old
