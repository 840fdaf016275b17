import numpy as np
import pytest

import soko_gym
from soko_gym.engine import generate as kernels
from soko_gym.engine.xorshift import random_below
from soko_gym.levels import GeneratedLevel, Level, generate_level, generate_levels
from soko_gym.levels.generator import warmup_generator


def lone_box_lower_bound(level: Level) -> int:
    """max(sum over boxes of the nearest goal, sum over goals of the nearest box), in pushes."""
    board = level.board
    dist = board.goal_dist[:, board.start_boxes].astype(np.int64)  # [goal, box]
    return int(max(dist.min(axis=0).sum(), dist.min(axis=1).sum()))


def check_generated(result: GeneratedLevel, width: int, height: int, n_boxes: int, min_pushes: int):
    level = result.level
    assert Level.from_xsb(level.to_xsb()) == level
    assert (level.width, level.height) == (width, height)
    assert level.n_boxes == len(level.goals) == n_boxes
    assert not set(level.boxes) >= set(level.goals), "solved at the start"
    verdict = soko_gym.verify(level, result.solution)
    assert verdict.ok, (str(level), result.solution, verdict.reason)
    assert verdict.pushes == result.pushes == sum(c.isupper() for c in result.solution)
    assert lone_box_lower_bound(level) == result.lower_bound
    assert min_pushes <= result.lower_bound <= result.pushes


def test_generate_level__same_rng_state_gives_same_level():
    a = generate_level(np.random.default_rng(123))
    b = generate_level(np.random.default_rng(123))
    assert a == b


def test_generate_level__ignores_numpy_global_random_state():
    np.random.seed(1)
    a = generate_level(np.random.default_rng(7), n_boxes=3)
    np.random.seed(2)
    b = generate_level(np.random.default_rng(7), n_boxes=3)
    assert a == b


def test_generate_levels__same_seed_same_levels_different_seeds_differ():
    a = generate_levels(20, 5, width=8, height=9, n_boxes=2)
    assert a == generate_levels(20, 5, width=8, height=9, n_boxes=2)
    b = generate_levels(20, 6, width=8, height=9, n_boxes=2)
    assert [g.level for g in a] != [g.level for g in b]
    assert len({g.level.rows for g in a}) == 20  # no repeats within one stream


def test_generate_levels__advances_a_generator_passed_in():
    rng = np.random.default_rng(11)
    first = generate_levels(3, rng)
    second = generate_levels(3, rng)
    assert first != second
    assert first + second == generate_levels(6, 11)
    assert generate_levels(0, 1) == []


@pytest.mark.parametrize("room_shape", ["random", "open"])
def test_generate_level__every_level_is_valid_and_its_solution_solves_it(room_shape):
    rng = np.random.default_rng(2024)
    for width in range(7, 13):
        for height in range(7, 13):
            for n_boxes in range(1, 6):
                kwargs = dict(width=width, height=height, n_boxes=n_boxes, room_shape=room_shape)
                result = generate_level(rng, **kwargs)
                check_generated(result, width, height, n_boxes, min_pushes=4)


def test_generate_level__min_pushes_is_a_lower_bound_on_every_solution():
    for result in generate_levels(25, 3, n_boxes=3, min_pushes=12):
        check_generated(result, 10, 10, 3, min_pushes=12)


def test_generate_level__open_room_without_walls_is_a_rectangle():
    result = generate_level(np.random.default_rng(0), room_shape="open", wall_density=0.0)
    rows = result.level.rows
    assert rows[0] == rows[-1] == "#" * 10
    assert all(r[0] == r[-1] == "#" and "#" not in r[1:-1] for r in rows[1:-1])


def test_generate_level__random_room_has_the_wall_density_asked_for():
    result = generate_level(np.random.default_rng(4), width=12, height=12, wall_density=0.5)
    interior = [r[1:-1] for r in result.level.rows[1:-1]]
    n_floor = sum(len(r) - r.count("#") for r in interior)
    assert 50 <= n_floor <= 53  # 50 asked; the last brush may carve up to three more


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(width=4), "width"),
        (dict(width=129), "width"),
        (dict(height=3), "height"),
        (dict(height=7.5), "height"),
        (dict(n_boxes=0), "n_boxes"),
        (dict(n_boxes=30), "n_boxes"),
        (dict(width=5, height=5, n_boxes=3), "n_boxes"),
        (dict(wall_density=1.0), "wall_density"),
        (dict(wall_density=-0.1), "wall_density"),
        (dict(wall_density=float("nan")), "wall_density"),
        (dict(wall_density="dense"), "wall_density"),
        (dict(room_shape="round"), "room_shape"),
        (dict(min_pushes=0), "min_pushes"),
        (dict(max_tries=0), "max_tries"),
        (dict(max_tries=True), "max_tries"),
    ],
)
def test_generate_level__bad_argument_raises_value_error_naming_it(kwargs, name):
    with pytest.raises(ValueError, match=name):
        generate_level(np.random.default_rng(0), **kwargs)


def test_generate_level__rng_must_be_a_generator():
    with pytest.raises(TypeError, match="rng"):
        generate_level(42)  # type: ignore[arg-type]


def test_generate_levels__negative_count_raises_value_error():
    with pytest.raises(ValueError, match="n must be"):
        generate_levels(-1, 0)


def test_generate_level__unreachable_difficulty_raises_runtime_error_naming_parameters():
    with pytest.raises(RuntimeError, match=r"max_tries=3 .*n_boxes=1.*min_pushes=500"):
        generate_level(np.random.default_rng(0), n_boxes=1, min_pushes=500, max_tries=3)


def test_generate_candidate__one_signature_after_mixed_calls():
    from soko_gym.engine import distance, push, reach

    kernels.warmup_generate()  # the engine-only warm-up uses the same signature
    warmup_generator()
    rng = np.random.default_rng(9)
    generate_level(rng, width=7, height=11, n_boxes=2, room_shape="open", wall_density=0.2)
    generate_level(rng, width=np.int64(9), height=8, n_boxes=np.int32(3), wall_density=0.3)
    assert len(kernels.generate_candidate.signatures) == 1
    # the engine kernels it calls keep the engine's own signature (none when loaded from cache)
    callees = (reach.reach_player, reach.player_path, push.legal_pulls, push.apply_pull)
    for kernel in (*callees, distance.push_distances, distance.side_regions):
        assert len(kernel.signatures) <= 1, (kernel, kernel.signatures)


def test_random_below__stays_in_range_and_covers_it():
    from numba import njit

    @njit
    def draws(rng, n, k):
        out = np.empty(k, dtype=np.int64)
        for i in range(k):
            out[i] = random_below(rng, n)
        return out

    state = np.array([1, 2], dtype=np.uint64)
    values = draws(state, 7, 7000)
    assert values.min() == 0 and values.max() == 6
    assert np.all(np.bincount(values, minlength=7) > 800)
