"""The one level-source grammar: parsing, and the envs accepting it."""

import gymnasium as gym
import pytest

import soko_gym  # noqa: F401  (registers the envs)
from soko_gym.levels import load_levels
from soko_gym.levels.spec import SourceSpec, parse_source, parse_sources, split_sources


def test_parse_source__generated_specs_and_fixed_sources():
    assert parse_source("generated:7x9:2") == SourceSpec(
        "generated:7x9:2", True, {"width": 7, "height": 9, "n_boxes": 2}
    )
    assert parse_source("generated:7x9:2").size == (9, 7)
    assert parse_source("generated") == SourceSpec("generated", True, {})
    assert parse_source("generated").size == (10, 10)
    assert parse_source("generated:3").generator_kwargs == {"n_boxes": 3}
    assert parse_source("microban:1-5") == SourceSpec("microban:1-5", False, {})
    assert parse_source("generated:10x10:4:boxoban").generator_kwargs == {
        "width": 10,
        "height": 10,
        "n_boxes": 4,
        "room_shape": "boxoban",
    }


@pytest.mark.parametrize(
    "bad", ["generated:7by7", "generated:7x7:2:1", "generated:7x7:2:cave", "", "a+b"]
)
def test_parse_source__rejects_bad_specs(bad):
    with pytest.raises(ValueError):
        parse_source(bad)


def test_split_sources__mixes_and_empty_parts():
    assert split_sources("generated:7x7:2+microban:1-3") == ["generated:7x7:2", "microban:1-3"]
    assert [s.generated for s in parse_sources("generated+microban")] == [True, False]
    with pytest.raises(ValueError, match="empty part"):
        split_sources("microban+")


def test_gym_make__generated_spec_draws_levels_of_that_size():
    env = gym.make("Sokoban-Push-v0", levels="generated:7x7:2")
    env.reset(seed=3)
    level = env.unwrapped.level
    assert (level.width, level.height, level.n_boxes) == (7, 7, 2)
    env.close()


def test_gym_make__boxoban_style_levels_have_boxoban_wall_counts():
    # boxoban-unfiltered-train: 17 to 51 interior walls, mean 32.2; the "random" style with its
    # fixed density 0.4 gives 23 to 26
    env = gym.make("Sokoban-Push-v0", levels="generated:10x10:4:boxoban")
    walls = []
    for seed in range(60):
        env.reset(seed=seed)
        level = env.unwrapped.level
        walls.append(sum(0 < r < 9 and 0 < c < 9 for r, c in level.walls))
    env.close()
    assert 28 <= sum(walls) / len(walls) <= 36
    assert min(walls) <= 24 and max(walls) >= 38


def test_gym_make__fixed_mix_concatenates_levels():
    env = gym.make("Sokoban-Push-v0", levels="microban:1-2+microban:5", level_order="sequential")
    expected = load_levels("microban:1-2") + load_levels("microban:5")
    seen = []
    for i in range(3):
        env.reset(seed=0 if i == 0 else None)
        seen.append(env.unwrapped.level)
    assert seen == expected
    env.close()


@pytest.mark.parametrize(
    ("levels", "kwargs", "match"),
    [
        ("generated:7x7:2+microban", {}, "mixes generated"),
        ("generated:7x7:2", {"generator_kwargs": {"n_boxes": 3}}, "n_boxes"),
        ("generated:7by7", {}, "WxH"),
    ],
)
def test_gym_make__bad_generated_specs_raise(levels, kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("Sokoban-Push-v0", levels=levels, **kwargs)


def test_vector_env__generated_spec_gives_each_sub_env_its_own_level():
    from soko_gym import make_vec

    venv = make_vec("Sokoban-Push-v0", num_envs=3, levels="generated:7x7:2")
    obs, _ = venv.reset(seed=1)
    venv.close()
    assert obs.shape[0] == 3 and obs.shape[-2:] == (7, 7)
    assert len({o.tobytes() for o in obs}) == 3  # a level of its own in each sub-env
