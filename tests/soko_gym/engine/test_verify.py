import pytest

import soko_gym
from soko_gym import verify
from soko_gym.engine.constants import (
    STEP_BAD_CHAR,
    STEP_INTO_WALL,
    STEP_LOWERCASE_PUSH,
    STEP_NOT_SOLVED,
    STEP_PUSH_BLOCKED,
    STEP_PUSH_NOTHING,
    STEP_REASONS,
)
from soko_gym.errors import SolutionError
from soko_gym.levels import lurd_to_pushes, pushes_to_lurd

TWO_BOXES = "#######\n#.$@$.#\n#######\n"  # push left, step back, push right: "LrR"

# Hand-checked: microban 1 (8 pushes) and XSokoban 1 in its proven optimum of 97 pushes.
MICROBAN_1 = "dlUrrrdLullddrUluRuulDrddrruLdlUU"
XSOKOBAN_1 = (
    "ullluuuLUluurDldlDDulldddrRRRRRlllllluuurrdDuuuruulDDDDulldddrRRRllddrrrruuRRRRRdrUllllll"
    "ddlllluurrRRlllllluuurrdDuulldddrRRRllddrrrruuRRRRRRllllllddlllluurrRRRRRRRlllllluuulLuurD"
    "llDlldddrrrrruuuLulldDDuuurrdLulDDulldddrRRRllddrrrruurrrrruRDldRRluRlllllllddlllluurrRuu"
    "ullldDuulldddrRRluuurrrdddRddlllluurRllddrrrruuRRRRRurDllllllddlllluurrRRRRRRRRldRulllll"
    "lllllllulldRRRRRRRRRRRRRurRllddrUluR"
)


def test_verify__accepts_hand_checked_solutions():
    r = verify(TWO_BOXES, "LrR")
    assert r.ok and (r.moves, r.pushes, r.index, r.reason) == (3, 2, None, "ok")
    r = verify(soko_gym.load_levels("microban:1")[0], MICROBAN_1)
    assert r.ok and (r.moves, r.pushes) == (33, 8)
    r = verify(soko_gym.load_levels("xsokoban:1")[0], XSOKOBAN_1)
    assert r.ok and r.pushes == 97


@pytest.mark.parametrize(
    ("lurd", "index", "status"),
    [
        ("lrR", 0, STEP_LOWERCASE_PUSH),  # a push written in lowercase
        ("Lu", 1, STEP_INTO_WALL),
        ("LR", 1, STEP_PUSH_NOTHING),  # uppercase step with no box in front
        ("LL", 1, STEP_PUSH_BLOCKED),  # box against the wall
        ("Lr", 2, STEP_NOT_SOLVED),  # stops one push short
        ("Lx", 1, STEP_BAD_CHAR),
        ("L\u00e9rR", 1, STEP_BAD_CHAR),  # non-ASCII characters are located too
        ("", 0, STEP_NOT_SOLVED),
    ],
)
def test_verify__rejects_corrupted_solution_at_the_right_step(lurd, index, status):
    r = verify(TWO_BOXES, lurd)
    assert not r.ok and not r
    assert (r.index, r.reason) == (index, STEP_REASONS[status])


def test_verify__rejects_xsokoban_solution_one_push_short():
    level = soko_gym.load_levels("xsokoban:1")[0]
    r = verify(level, XSOKOBAN_1[:-1])
    assert not r.ok and r.index == len(XSOKOBAN_1) - 1 and r.pushes == 96


def test_verify__counts_up_to_the_bad_step():
    r = verify(TWO_BOXES, "LrRR")
    assert (r.index, r.moves, r.pushes) == (3, 3, 2)
    assert r.reason == STEP_REASONS[STEP_PUSH_BLOCKED]


def test_lurd__pushes_round_trip_through_lurd():
    level = soko_gym.load_levels("xsokoban:1")[0]
    pushes = lurd_to_pushes(level, XSOKOBAN_1)
    assert len(pushes) == 97
    lurd = pushes_to_lurd(level, pushes)
    r = verify(level, lurd)
    assert r.ok and r.pushes == 97 and r.moves <= len(XSOKOBAN_1)
    assert lurd_to_pushes(level, lurd) == pushes


def test_lurd__bad_push_sequence_names_the_push():
    level = soko_gym.Level.from_xsb(TWO_BOXES)
    w = level.width
    with pytest.raises(SolutionError) as info:
        pushes_to_lurd(level, [(1 * w + 2, 2), (1 * w + 2, 2)])  # second: no box there now
    assert info.value.index == 1
    with pytest.raises(SolutionError, match="step 1"):
        lurd_to_pushes(level, "Lu")
