import pytest

import planners
import soko_gym
from planners import SearchLimits
from planners._kernels import boxperm

# Two boxes pushed in turns, so the player walks back and forth: 15 moves; 7 suffice (RRllLLL).
INTERLEAVED = "##########\n#.  $@$ .#\n##########"
INTERLEAVED_LURD = "LrRllLrrrRllllL"
# A box taken round the pillar the long way (9 pushes, 17 moves); 7 pushes suffice.
PILLAR = "\n".join(
    [
        "#########",
        "#       #",
        "#       #",
        "#       #",
        "#@$ #  .#",
        "#       #",
        "#       #",
        "#       #",
        "#########",
    ]
)
PILLAR_LURD = "urDDldRRRRdrUUluR"


def optimize(level, lurd, metric, seconds=10, **options):
    return planners.optimize(
        level,
        lurd,
        metric=metric,
        methods=["box-permutations"],
        limits=SearchLimits(max_seconds=seconds),
        options={"box-permutations": options} if options else None,
    )


def test_box_permutations__undoes_a_wasteful_interleaving_for_moves():
    level = soko_gym.Level.from_xsb(INTERLEAVED)
    result = optimize(level, INTERLEAVED_LURD, "moves")
    assert soko_gym.verify(level, result.lurd).ok
    assert (result.input_moves, result.moves, result.pushes) == (15, 7, 5)


def test_box_permutations__needs_two_box_slices_for_an_interleaving():
    level = soko_gym.Level.from_xsb(INTERLEAVED)
    result = optimize(level, INTERLEAVED_LURD, "moves", max_boxes=1)
    assert result.moves == 15


def test_box_permutations__takes_the_short_way_round_a_pillar_for_pushes():
    level = soko_gym.Level.from_xsb(PILLAR)
    result = optimize(level, PILLAR_LURD, "pushes")
    assert soko_gym.verify(level, result.lurd).ok
    assert (result.input_pushes, result.pushes) == (9, 7)
    assert result.moves == 13  # the fewest moves among 7-push solutions


def test_box_permutations__reaches_the_move_optimum_of_a_small_level():
    level = soko_gym.load_levels("microban:7")[0]  # 26 moves by a plain move-level BFS
    result = optimize(level, planners.solve(level, "astar").lurd, "moves")
    assert result.moves == 26 and soko_gym.verify(level, result.lurd).ok


@pytest.mark.parametrize("metric", ["moves", "pushes"])
def test_box_permutations__never_returns_a_worse_or_invalid_solution(metric):
    for level in soko_gym.load_levels("microban:1-12"):
        result = optimize(level, planners.solve(level, "astar").lurd, metric, seconds=2)
        assert soko_gym.verify(level, result.lurd).ok
        key = (result.moves, result.pushes) if metric == "moves" else (result.pushes, result.moves)
        start = (result.input_moves, result.input_pushes)
        assert key <= (start if metric == "moves" else start[::-1])


def test_box_permutations__improves_a_larger_level_within_its_limit():
    # speed is the benchmarks' business (benchmarks/bench_optimize.py); here: a valid, shorter
    # solution with the same pushes from a time-limited run on a 6-box level
    level = soko_gym.load_levels("xsokoban:1")[0]
    lurd = planners.solve(level, "astar").lurd
    result = optimize(level, lurd, "moves", seconds=5.0)
    assert soko_gym.verify(level, result.lurd).ok
    assert result.moves < result.input_moves and result.pushes == result.input_pushes


def test_box_permutations__kernels_keep_one_signature():
    level = soko_gym.Level.from_xsb(PILLAR)
    for metric in ("moves", "pushes"):
        optimize(level, PILLAR_LURD, metric)
    assert len(boxperm.search_slice.signatures) == 1
    assert len(boxperm.push_walks.signatures) == 1
