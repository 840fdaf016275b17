import numpy as np
import pytest

import planners
import soko_gym
from planners import SearchLimits
from planners.optimizers.context import (
    Evaluator,
    MethodStats,
    OptimizeContext,
    encode,
    path_positions,
)
from planners.optimizers.vicinity import nearest_squares, search_set, unique_rows, vicinity_set

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

# two boxes, each pushed right onto the goals (7 pushes at best)
TWO = """\
#########
#       #
# $ $ ..#
#    @  #
#       #
#########"""
TWO_SOLUTION = "llu" + "RRR" + "llldllu" + "RRRR"

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


def test_nearest_squares__rings_counter_clockwise_from_the_top():
    level = soko_gym.Level.from_xsb(ROOM)
    board = level.board
    box = int(board.start_boxes[0])
    w = board.width
    near = nearest_squares(level, 5)
    assert near[box].tolist() == [box, box - w, box - 1, box + w, box + 1]
    clockwise = nearest_squares(level, 5, clockwise=True)
    assert clockwise[box].tolist() == [box, box - w, box + 1, box + w, box - 1]


def test_vicinity_set__holds_the_path_and_one_box_moves():
    level = soko_gym.Level.from_xsb(TWO)
    boxes, _ = path_positions(level, encode(level, TWO_SOLUTION))
    near = nearest_squares(level, 999)
    configs = vicinity_set(boxes, near, 999, 0, 1 << 20)
    assert np.array_equal(configs, unique_rows(configs))
    for row in boxes:
        assert (configs == row).all(axis=1).any()
    # one box moved: every row shares at least one square with some path position
    shared = [any(set(r) & set(p) for p in boxes.tolist()) for r in configs.tolist()]
    assert all(shared)
    assert vicinity_set(boxes, near, 999, 0, 8) is None  # over the byte budget


@pytest.mark.parametrize("metric", ["moves", "pushes"])
def test_vicinity__removes_a_detour(metric):
    level = soko_gym.Level.from_xsb(ROOM)
    before = soko_gym.verify(level, DETOUR)
    assert before.ok and before.pushes == 4
    result = planners.optimize(level, DETOUR, metric=metric, methods=["vicinity"])
    check = soko_gym.verify(level, result.lurd)
    assert check.ok and (check.pushes, check.moves) == (2, 2)
    assert result.methods["vicinity"].improvements >= 1


@pytest.mark.parametrize("metric", ["moves", "pushes"])
def test_vicinity__slices_find_the_detour_too(metric):
    level = soko_gym.Level.from_xsb(ROOM)
    options = {"vicinity": {"slice_pushes": 2, "quick_passes": ()}}
    result = planners.optimize(level, DETOUR, metric=metric, methods=["vicinity"], options=options)
    assert soko_gym.verify(level, result.lurd).ok
    assert (result.pushes, result.moves) == (2, 2)


def test_search_set__pushes_metric_prefers_fewer_pushes_then_moves():
    level = soko_gym.Level.from_xsb(TWO)
    lurd = TWO_SOLUTION
    ctx = context(level, lurd, "pushes")
    boxes, players = path_positions(level, ctx.best)
    configs = vicinity_set(boxes, nearest_squares(level, 999), 999, 999, 1 << 24)
    found = search_set(ctx, configs, boxes[0], int(players[0]), boxes[-1], -1, 1 << 26)
    assert found is not None and found.shape[0] == 7  # the fewest pushes
    moves_ctx = context(level, lurd, "moves")
    by_moves = search_set(moves_ctx, configs, boxes[0], int(players[0]), boxes[-1], -1, 1 << 26)
    assert ctx.evaluator.moves(found) >= ctx.evaluator.moves(by_moves)


@pytest.mark.parametrize("metric", ["moves", "pushes"])
def test_vicinity__never_worse_on_microban(microban, metric):
    for level, lurd in zip(microban[:4], MICROBAN_ASTAR, strict=True):
        before = soko_gym.verify(level, lurd)
        result = planners.optimize(
            level, lurd, metric=metric, methods=["vicinity"], limits=SearchLimits(max_seconds=5)
        )
        check = soko_gym.verify(level, result.lurd)
        assert check.ok
        key = (check.moves, check.pushes) if metric == "moves" else (check.pushes, check.moves)
        old = (before.moves, before.pushes) if metric == "moves" else (before.pushes, before.moves)
        assert key <= old


def test_vicinity__stops_when_time_is_out():
    level = soko_gym.Level.from_xsb(ROOM)
    ctx = context(level, DETOUR, "moves")
    ctx.deadline = 0.0  # already past
    from planners.optimizers import vicinity

    vicinity.improve(ctx)
    assert ctx.best_pushes == 4 and ctx.stats.candidates == 0
