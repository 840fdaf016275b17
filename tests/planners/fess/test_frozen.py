"""FrozenBipartite: the bipartite deadlock test with frozen boxes as walls."""

import numpy as np
import pytest

import planners
from planners import SearchLimits
from planners._kernels.fess_frozen import (
    FC_BUILT,
    FC_HITS,
    frozen_bipartite_deadlock,
    new_frozen_tables,
)
from planners._kernels.fess_pull_closure import pull_closure
from planners.fess.frozen import FrozenBipartite
from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_INF, GOAL, SQUARE_DTYPE
from soko_gym.engine.lowerbound import bipartite_deadlock, mark_frozen_boxes
from soko_gym.engine.reach import new_stamps
from soko_gym.levels import Level, load_levels, verify

# two boxes frozen on targets in a 1-wide shaft seal the target above them; the third box
# could reach that target on the empty board, so only the frozen-wall test sees the deadlock
SEALED = "#######\n###.###\n###*###\n###*  #\n#  $  #\n#  @  #\n#######"
# a box frozen on a corner target; the other box still reaches the other target
OPEN = "######\n#*   #\n#  $ #\n# .@ #\n######"


def _start(xsb):
    board = Level.from_xsb(xsb).board
    return board, board.start_boxes.astype(np.int32).copy()


def _empty_board_deadlock(board, pos):
    seen = np.zeros(board.n_cells + 1, dtype=np.uint32)
    work = np.zeros((4, board.n_boxes), dtype=SQUARE_DTYPE)
    return bool(
        bipartite_deadlock(
            board.cells, board.dead, board.goals, board.goal_dist, pos, board.offsets, seen, work
        )
    )


def test_frozen_boxes_sealing_a_target_are_a_deadlock_the_empty_board_test_misses():
    board, pos = _start(SEALED)
    fb = FrozenBipartite(board)
    assert fb.frozen_squares(pos).tolist() == [board.square(2, 3), board.square(3, 3)]
    assert not _empty_board_deadlock(board, pos)
    assert fb.is_deadlock(pos)


def test_frozen_box_on_a_target_with_the_rest_reachable_is_no_deadlock():
    board, pos = _start(OPEN)
    fb = FrozenBipartite(board)
    assert fb.frozen_squares(pos).tolist() == [board.square(1, 1)]
    assert not fb.is_deadlock(pos)


def test_reach_table_walls_off_frozen_targets_and_is_cached_per_frozen_set():
    board, pos = _start(SEALED)
    fb = FrozenBipartite(board)
    frozen = fb.frozen_squares(pos)
    table = fb.reach_table(frozen)
    goals = board.goals.tolist()
    assert table.shape == (len(goals), board.n_cells)
    for g, goal in enumerate(goals):
        if goal in frozen.tolist():
            assert (table[g] == DIST_INF).all()  # a target under a frozen box is taken
    sealed = goals.index(board.square(1, 3))
    assert table[sealed, board.square(4, 3)] == DIST_INF  # the free box cannot get there
    built, hits = fb.tables_built, fb.cache_hits
    again = fb.reach_table(frozen.copy())
    assert np.array_equal(again, table) and fb.tables_built == built
    assert fb.cache_hits == hits + 1
    assert fb.is_deadlock(pos) and fb.tables_built == built  # same frozen set: no rebuild
    assert fb.cache_hits == hits + 2
    other = fb.reach_table(frozen[:1])
    assert fb.tables_built == built + 1 and not np.array_equal(other, table)
    # only the upper box as a wall: its target stays taken, the lower one is reachable again
    assert (other[goals.index(board.square(2, 3))] == DIST_INF).all()
    assert other[goals.index(board.square(3, 3)), board.square(4, 3)] == 0

    board, pos = _start(OPEN)
    fb = FrozenBipartite(board)
    table = fb.reach_table(fb.frozen_squares(pos))
    assert table[board.goals.tolist().index(board.square(3, 2)), board.square(2, 3)] == 0


def _positions(level, lurd):
    """Box squares at the start and after every push of ``lurd`` (replayed by ``verify``)."""
    yield level.board.start_boxes.astype(np.int32)
    for i, ch in enumerate(lurd):
        if ch.isupper():
            yield verify(level, lurd[: i + 1]).state.box_pos


@pytest.mark.parametrize("planner", ["fess", "astar"])
def test_no_position_on_a_solution_path_is_reported_dead(planner):
    # FESS prunes what the test reports, so A*'s paths (which never consult it) check it too
    for level in load_levels("microban:1-10") + load_levels("xsokoban:1"):
        # a node limit, not seconds: the first FESS call compiles its kernels in this time
        result = planners.solve(level, planner, SearchLimits(max_nodes=500_000))
        assert result.solved and verify(level, result.lurd).ok, level.title
        fb = FrozenBipartite(level.board)
        for pos in _positions(level, result.lurd):
            assert not fb.is_deadlock(pos.astype(np.int32)), (level.title, pos.tolist())


def _scratch_deadlock(board, pos):
    """The frozen-wall test computed from scratch in Python, without any cache."""
    n = board.n_cells
    seen = np.zeros(n + 1, dtype=np.uint32)
    if mark_frozen_boxes(board.cells, board.dead, pos, board.offsets, seen) == 0:
        return False
    frozen = np.sort(pos[seen[pos] == seen[-1]])
    if not (board.cells[frozen] & GOAL).any():
        return False
    walls = np.full(n, -1, dtype=BOX_AT_DTYPE)
    walls[frozen] = 0
    table = np.full((board.goals.shape[0], n), DIST_INF, dtype=np.uint16)
    states = np.zeros(4 * n, dtype=np.uint8)
    for g, goal in enumerate(board.goals.tolist()):
        if walls[goal] < 0:
            pull_closure(
                board.cells, walls, board.offsets, goal, new_stamps(board.cells),
                np.zeros(n, dtype=SQUARE_DTYPE), states, np.zeros(4 * n, dtype=SQUARE_DTYPE),
            )  # fmt: skip
            table[g, states.reshape(n, 4).any(axis=1)] = 0
    work = np.zeros((4, board.n_boxes), dtype=SQUARE_DTYPE)
    return bool(
        bipartite_deadlock(
            board.cells, board.dead, board.goals, table, pos, board.offsets, seen, work
        )
    )


def _random_positions(board, rng, count):
    """Random box placements on non-dead floor, biased to goals so that boxes freeze on them."""
    floor = board.floor[board.dead[board.floor] == 0]
    goals = board.goals
    for _ in range(count):
        k = rng.integers(0, board.n_boxes + 1)
        on_goals = rng.choice(goals, size=k, replace=False)
        rest = np.setdiff1d(floor, on_goals)
        others = rng.choice(rest, size=board.n_boxes - k, replace=False)
        yield np.sort(np.concatenate([on_goals, others])).astype(np.int32)


@pytest.mark.parametrize("spec", ["xsokoban:1", "xsokoban:2", "microban:10", "SEALED", "OPEN"])
@pytest.mark.parametrize("cache_size", [1, 2, None])
def test_kernel_agrees_with_a_from_scratch_computation(spec, cache_size):
    if spec in ("SEALED", "OPEN"):
        board = Level.from_xsb(globals()[spec]).board
    else:
        board = load_levels(spec)[0].board
    ft = new_frozen_tables(board, cache_size)
    rng = np.random.default_rng(7)
    positions = list(_random_positions(board, rng, 300))
    expected = [_scratch_deadlock(board, pos) for pos in positions]
    assert any(expected) or spec in ("SEALED", "OPEN")  # the test does find deadlocks
    for _ in range(2):  # the second round runs on a warm (and, for tiny caches, churned) cache
        got = [bool(frozen_bipartite_deadlock(ft, pos)) for pos in positions]
        assert got == expected
    assert ft.counters[FC_BUILT] >= 1
    if cache_size is None:
        assert ft.counters[FC_HITS] > 0
    assert ft.cache_len.shape[0] & (ft.cache_len.shape[0] - 1) == 0


def test_tiny_cache_rebuilds_after_a_collision_and_counts_hits():
    board = load_levels("xsokoban:1")[0].board
    fb = FrozenBipartite(board, cache_size=1)
    assert fb.cache_size == 1
    goals = board.goals.tolist()
    a = np.array(goals[:1], dtype=SQUARE_DTYPE)
    b = np.array(goals[1:2], dtype=SQUARE_DTYPE)
    ta = fb.reach_table(a)
    assert fb.tables_built == 1 and fb.cache_hits == 0
    assert np.array_equal(fb.reach_table(a), ta) and fb.cache_hits == 1
    tb = fb.reach_table(b)  # one slot: replaces a's table
    assert fb.tables_built == 2
    assert np.array_equal(fb.reach_table(a), ta) and fb.tables_built == 3
    assert np.array_equal(fb.reach_table(b), tb) and fb.tables_built == 4
    assert fb.cache_hits == 1
    # the empty frozen set is a valid key (hash 0), distinct from an empty slot
    fb = FrozenBipartite(board, cache_size=1)
    empty = fb.reach_table(np.zeros(0, dtype=SQUARE_DTYPE))
    assert fb.tables_built == 1
    assert np.array_equal(fb.reach_table(np.zeros(0, dtype=SQUARE_DTYPE)), empty)
    assert fb.tables_built == 1 and fb.cache_hits == 1
    assert (empty == 0).sum() > 0


def test_cache_size_is_checked_and_defaults_to_a_bounded_power_of_two():
    board = load_levels("xsokoban:1")[0].board
    with pytest.raises(ValueError):
        new_frozen_tables(board, 0)
    ft = new_frozen_tables(board)
    slots = ft.cache_len.shape[0]
    assert 16 <= slots <= 2048 and slots & (slots - 1) == 0
    assert ft.cache_reach.nbytes <= 32 << 20 or slots == 16
    assert new_frozen_tables(board, 3).cache_len.shape[0] == 4
    assert (ft.cache_len == -1).all() and ft.counters[FC_BUILT] == 0


@pytest.mark.parametrize(
    "spec", ["xsokoban:1", "xsokoban:66", "microban2:131", "sasquatch:12", "SEALED"]
)
def test_reach_table_equals_a_pull_closure_per_target(spec):
    # the table's player regions come from one side partition per square: the rows must be
    # exactly what a lone-box pull search with a player fill per state gives
    if spec == "SEALED":
        board = Level.from_xsb(SEALED).board
    else:
        board = load_levels(spec)[0].board
    fb = FrozenBipartite(board, cache_size=1)
    rng = np.random.default_rng(3)
    floor = board.floor
    n = board.n_cells
    stamps, stack = new_stamps(board.cells), np.zeros(n, dtype=SQUARE_DTYPE)
    seen, queue = np.zeros(4 * n, dtype=np.uint8), np.zeros(4 * n, dtype=SQUARE_DTYPE)
    for k in sorted({0, 1, min(3, board.n_boxes), min(8, board.n_boxes), board.n_boxes}):
        squares = np.sort(rng.choice(floor, size=min(k, floor.shape[0]), replace=False))
        squares = squares.astype(SQUARE_DTYPE)
        table = fb.reach_table(squares)
        walls = np.full(n, -1, dtype=BOX_AT_DTYPE)
        walls[squares] = 0
        for g, goal in enumerate(board.goals):
            if walls[goal] >= 0:
                assert (table[g] == DIST_INF).all()
                continue
            pull_closure(board.cells, walls, board.offsets, int(goal), stamps, stack, seen, queue)
            reached = seen.reshape(n, 4).any(axis=1)
            assert np.array_equal(table[g] == 0, reached), (spec, k, g)
