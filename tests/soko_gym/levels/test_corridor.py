"""One-box corridors: the levels, the ``generated:corridor:N`` source and the corridors pack."""

from importlib import resources

import gymnasium as gym
import pytest

import soko_gym  # noqa: F401  (registers the envs)
from soko_gym.levels import load_levels, verify
from soko_gym.levels.corridor import (
    ROTATIONS,
    SUITE_LENGTHS,
    corridor_level,
    corridor_levels,
    corridor_suite,
    suite_text,
)
from soko_gym.levels.packs import indexed_levels, pack_info
from soko_gym.levels.spec import load_sources, parse_source

PUSH = {"right": "R", "down": "D", "left": "L", "up": "U"}


def _turned(level):
    rows = level.rows
    return tuple("".join(row[c] for row in reversed(rows)) for c in range(len(rows[0])))


def test_corridor_level__is_the_documented_board():
    assert corridor_level(3).rows == ("#######", "#@$  .#", "#######")
    assert corridor_level(3, "up").rows == ("###", "#.#", "# #", "# #", "#$#", "#@#", "###")


@pytest.mark.parametrize("length", [1, 2, 7, 124])
def test_corridor_levels__are_four_quarter_turns_solved_by_n_pushes(length):
    levels = corridor_levels(length)
    assert [lv.title for lv in levels] == [f"corridor {length} {r}" for r in ROTATIONS]
    for level, turned in zip(levels, levels[1:] + levels[:1], strict=True):
        assert _turned(level) == turned.rows  # each is the one before, a quarter turn clockwise
    for level, rotation in zip(levels, ROTATIONS, strict=True):
        assert level.n_boxes == 1
        check = verify(level, PUSH[rotation] * length)
        assert check.ok and check.moves == check.pushes == length


@pytest.mark.parametrize("bad", [0, 125, -3, 2.0, True])
def test_corridor_level__refuses_lengths_the_engine_cannot_hold(bad):
    with pytest.raises(ValueError, match="length"):
        corridor_level(bad)
    with pytest.raises(ValueError, match="rotation"):
        corridor_level(5, "sideways")


def test_generated_corridor__is_a_fixed_source_with_selections():
    assert not parse_source("generated:corridor:25").generated
    assert not parse_source("generated:corridor:25:2-3").generated
    assert load_levels("generated:corridor:25") == corridor_levels(25)
    assert load_levels("generated:corridor:25:2") == [corridor_level(25, "down")]
    assert [i for i, _ in indexed_levels("generated:corridor:25:3-4")] == [2, 3]
    mix = load_sources("generated:corridor:5+generated:corridor:6:4")
    assert mix == [*corridor_levels(5), corridor_level(6, "up")]


@pytest.mark.parametrize(
    "bad",
    [
        "generated:corridor",
        "generated:corridor:0",
        "generated:corridor:125",
        "generated:corridor:x",
        "generated:corridor:5:1:2",
    ],
)
def test_generated_corridor__a_bad_spec_is_named_with_an_example(bad):
    with pytest.raises(ValueError, match=r"generated:corridor:25") as err:
        parse_source(bad)
    assert repr(bad) in str(err.value)
    with pytest.raises(ValueError, match=r"generated:corridor:25"):
        load_levels(bad)


def test_corridors_pack__is_80_levels_of_lengths_5_to_100_and_equals_the_generator():
    levels = load_levels("corridors")
    assert len(levels) == pack_info("corridors").n_levels == 80
    assert list(SUITE_LENGTHS) == list(range(5, 101, 5))
    assert levels == corridor_suite()
    assert [lv.title for lv in levels[:5]] == [
        "corridor 5 right", "corridor 5 down", "corridor 5 left", "corridor 5 up",
        "corridor 10 right",
    ]  # fmt: skip
    assert load_levels("corridors:77-80") == corridor_levels(100)
    text = (resources.files("soko_gym.levels") / "data" / "corridors.xsb").read_text()
    # regenerate after a change: open("soko_gym/levels/data/corridors.xsb", "w").write(suite_text())
    assert text == suite_text()


def test_gym_make__resets_to_a_corridor():
    env = gym.make("Sokoban-Move-v0", levels="generated:corridor:10", level_order="sequential")
    env.reset(seed=0)
    assert env.unwrapped.level == corridor_level(10, "right")
    env.reset()
    assert env.unwrapped.level == corridor_level(10, "down")
    env.close()
