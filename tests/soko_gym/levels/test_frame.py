import numpy as np
import pytest

from planners.policy_search import PolicySearchPlanner
from soko_gym.envs.sources import LevelSource
from soko_gym.levels.frame import parse_obs_size


@pytest.mark.parametrize(
    ("value", "size"),
    [
        (7, (7, 7)),
        ((8, 9), (8, 9)),
        ([8, 9], (8, 9)),
        (np.int64(5), (5, 5)),
        ((np.int32(3), np.int64(128)), (3, 128)),
    ],
)
def test_parse_obs_size__an_int_or_two_ints(value, size):
    assert parse_obs_size(value) == size
    assert all(type(side) is int for side in parse_obs_size(value))


@pytest.mark.parametrize(
    "value",
    [None, True, 7.0, "7", "78", (8,), (8, 9, 10), (8.0, 9.0), (True, 9), ("8", "9"), 2, (3, 129)],
)
def test_parse_obs_size__is_strict_a_bad_value_is_a_value_error_naming_it(value):
    with pytest.raises(ValueError, match="obs_size"):
        parse_obs_size(value)


def test_parse_obs_size__the_envs_and_the_push_searches_share_it():
    for bad in ((8.0, 9.0), (2, 9)):
        with pytest.raises(ValueError, match="obs_size"):
            LevelSource("microban:1", obs_size=bad, level_order="random", generator_kwargs=None)
        with pytest.raises(ValueError, match="obs_size"):
            PolicySearchPlanner(policy=lambda obs, masks: masks, obs_size=bad)
    source = LevelSource(
        "microban:1", obs_size=[9, 10], level_order="random", generator_kwargs=None
    )
    assert source.size == (9, 10)
