import pytest

import planners
import soko_gym
from planners import SearchLimits
from planners._kernels import permute
from planners.optimizers import decode

from .test_permutations import LEFT, RIGHT, TWO_ROWS, alternating_lurd, box_plan

# one box, two rows: pushing it right, walking round and pushing it back is a cycle
CORRIDOR = """\
#######
#     #
#@ $ .#
#######"""


def cycle_lurd(level):
    """A solution of CORRIDOR that pushes the box right, back left, then home."""
    return decode(level, box_plan(level, [(0, RIGHT), (0, LEFT), (0, RIGHT), (0, RIGHT)]))


def test_rearrange__cuts_a_push_and_push_back_cycle():
    level = soko_gym.Level.from_xsb(CORRIDOR)
    lurd = cycle_lurd(level)
    before = soko_gym.verify(level, lurd)
    assert before.ok and before.pushes == 4
    result = planners.optimize(level, lurd, methods=["rearrange"])
    assert soko_gym.verify(level, result.lurd).ok
    assert result.pushes == 2 and result.moves == 3  # one step to the box, two pushes
    assert result.moves < before.moves


def test_rearrange__cuts_cycles_under_the_pushes_metric():
    level = soko_gym.Level.from_xsb(CORRIDOR)
    result = planners.optimize(level, cycle_lurd(level), metric="pushes", methods=["rearrange"])
    assert soko_gym.verify(level, result.lurd).ok and result.pushes == 2


def test_rearrange__moves_later_pushes_forward():
    level = soko_gym.Level.from_xsb(TWO_ROWS)
    lurd = alternating_lurd(level)
    before = soko_gym.verify(level, lurd)
    result = planners.optimize(level, lurd, methods=["rearrange"])
    assert soko_gym.verify(level, result.lurd).ok
    assert result.pushes == 8 and result.moves == 8 + 1 + 8 < before.moves


def test_rearrange__whole_box_sessions_on_long_solutions_still_improve():
    level = soko_gym.Level.from_xsb(TWO_ROWS)
    lurd = alternating_lurd(level)
    result = planners.optimize(
        level, lurd, methods=["rearrange"], options={"rearrange": {"session_limit": 0}}
    )
    assert soko_gym.verify(level, result.lurd).ok
    assert result.pushes == 8 and result.moves < result.input_moves


@pytest.mark.parametrize("source", [f"microban:{i}" for i in (1, 3, 5, 8, 12)])
def test_rearrange__never_worse_or_invalid_on_microban(source):
    level = soko_gym.load_levels(source)[0]
    lurd = planners.solve(level, "astar").lurd
    before = soko_gym.verify(level, lurd)
    result = planners.optimize(level, lurd, methods=["rearrange"], limits=SearchLimits(5))
    assert soko_gym.verify(level, result.lurd).ok
    assert result.pushes <= before.pushes and result.moves <= before.moves


def test_rearrange__xsokoban_1_astar_solution(capsys):
    level = soko_gym.load_levels("xsokoban:1")[0]
    lurd = planners.solve(level, "astar").lurd
    result = planners.optimize(
        level, lurd, methods=["permutations", "rearrange"], limits=SearchLimits(max_seconds=20)
    )
    with capsys.disabled():
        print(f"\npermutations + rearrange, xsokoban:1 A*: {result.input_moves} -> {result.moves}")
    assert soko_gym.verify(level, result.lurd).ok
    assert result.pushes == 97 and result.moves < result.input_moves  # measured: 425 -> 244


def test_permute__kernels_keep_one_signature():
    for source in ("microban:2", "xsokoban:1"):
        level = soko_gym.load_levels(source)[0]
        lurd = planners.solve(level, "astar").lurd
        planners.optimize(level, lurd, methods=["permutations", "rearrange"])
    for kernel in (permute.trace_pushes, permute.window_moves, permute.position_keys):
        assert len(kernel.signatures) == 1, (kernel, kernel.signatures)
