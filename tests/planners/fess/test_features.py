import numpy as np
import pytest

import soko_gym
from planners._kernels import fess as kernels
from planners._kernels import fess_hotspots as hotspots
from planners._kernels import fess_pull_closure as closures
from planners._kernels import fess_room_count as room_count
from planners.fess.features import FeatureEvaluator, hotspot_table
from soko_gym.engine.board import State
from soko_gym.engine.constants import DIST_INF, FLOOR
from soko_gym.engine.macro import box_paths
from soko_gym.engine.reach import new_stamps
from soko_gym.levels import Level, load_levels

TWO_ROOMS = """
#########
#   #   #
# $   . #
#@  #   #
#########
"""

TOUCHING = """
#######
#   ###
#@$ ###
###   #
###  .#
#######
"""

OPEN_ROOM = """
######
#    #
# $. #
#  @ #
######
"""

# the right box stands in the left box's only path to the goals
BLOCKING = """
########
#@$ $..#
########
"""

# the box on the far goal does not block the other box's goal
ON_GOAL = """
######
#@$.*#
######
"""

# row 1 is dead (no goal on it); every other square is alive
MOBILITY = """
########
#      #
# $  $ #
#  @   #
#.    .#
########
"""

# three goals in a row, boxes placed by each test
ROW = """
#########
#@ $$$  #
#   ... #
#########
"""


def evaluator(xsb):
    board = Level.from_xsb(xsb).board
    return board, FeatureEvaluator(board)


def state(board, squares, player):
    return State.from_squares(
        board, [board.square(r, c) for r, c in squares], board.square(*player)
    )


def test_connectivity__four_regions_at_the_start_of_xsokoban_1():
    board = soko_gym.load_levels("xsokoban:1")[0].board
    start = board.initial_state()
    assert FeatureEvaluator(board).connectivity(start.box_at) == 4


def test_connectivity__one_region_in_an_open_room():
    board, features = evaluator(OPEN_ROOM)
    assert features.connectivity(board.initial_state().box_at) == 1


def test_connectivity__a_box_in_the_doorway_splits_the_level():
    board, features = evaluator(TWO_ROOMS)
    blocked = state(board, [(2, 4)], (3, 1))
    assert features.connectivity(blocked.box_at) == 2
    labels = features.region_labels(blocked.box_at)
    assert labels[board.square(2, 4)] == -1
    assert labels[board.square(1, 1)] != labels[board.square(1, 7)]


def test_room_connectivity__rises_to_one_when_a_box_stands_in_the_doorway():
    board, features = evaluator(TWO_ROOMS)
    assert features.room_connectivity(board.initial_state().box_at) == 0
    blocked = state(board, [(2, 4)], (3, 1))
    assert features.room_connectivity(blocked.box_at) == 1


def test_room_connectivity__a_box_on_the_contact_of_touching_rooms_breaks_their_edge():
    board, features = evaluator(TOUCHING)
    assert features.room_connectivity(state(board, [(2, 2)], (1, 1)).box_at) == 0
    assert features.room_connectivity(state(board, [(3, 3)], (1, 1)).box_at) == 1


def test_room_connectivity__a_box_inside_a_room_breaks_nothing():
    board, features = evaluator(TWO_ROOMS)
    inside = state(board, [(2, 6)], (3, 1))
    assert features.room_connectivity(inside.box_at) == 0


def test_room_connectivity__all_three_edges_broken_at_the_start_of_xsokoban_1():
    board = soko_gym.load_levels("xsokoban:1")[0].board
    assert FeatureEvaluator(board).room_connectivity(board.initial_state().box_at) == 3


def test_hotspots__the_box_in_the_only_path_is_a_hotspot():
    board, features = evaluator(BLOCKING)
    start = board.initial_state()
    assert features.hotspots(start.box_pos) == 1
    # box 0 on col 2 blocks nothing; box 1 on col 4 blocks box 0
    assert features.hotspot_counts(start.box_pos).tolist() == [0, 1]


def test_hotspots__a_box_on_a_goal_is_no_hotspot_for_taking_it():
    board, features = evaluator(ON_GOAL)
    assert features.hotspots(board.initial_state().box_pos) == 0


def test_hotspot_table__pairs_of_the_blocking_corridor():
    board = Level.from_xsb(BLOCKING).board
    hot = hotspot_table(board)
    fi = board.floor_index
    left, right = board.square(1, 2), board.square(1, 4)
    assert hot[fi[left], fi[right]] == 1
    assert hot[fi[right], fi[left]] == 0


def test_mobility__counts_pushes_off_dead_squares():
    board, features = evaluator(MOBILITY)
    start = board.initial_state()
    # each box: down, left and right; up would reach the dead top row
    assert features.mobility(start.box_at, start.box_pos, start.player) == (6, 2)


def test_mobility__the_player_region_limits_the_pushes():
    board, features = evaluator(BLOCKING)
    start = board.initial_state()
    # only the left box, only to the right
    assert features.mobility(start.box_at, start.box_pos, start.player) == (1, 1)


@pytest.fixture
def row_plan():
    board = Level.from_xsb(ROW).board
    far, mid, near = board.square(2, 6), board.square(2, 5), board.square(2, 4)
    park = board.square(1, 7)
    # park a box at (1, 7), fill the far goal, move the parked box to the middle goal, then near
    src = np.array([-1, -1, park, -1], dtype=np.int32)
    dst = np.array([park, far, mid, near], dtype=np.int32)
    return board, src, dst


@pytest.mark.parametrize(
    ("boxes", "packed"),
    [
        ([(1, 1), (1, 2), (1, 3)], 0),
        ([(1, 7), (1, 2), (1, 3)], 1),
        ([(1, 7), (2, 6), (1, 3)], 2),
        ([(2, 5), (2, 6), (1, 3)], 3),
        ([(2, 4), (2, 5), (2, 6)], 4),
        ([(2, 4), (1, 2), (1, 3)], 0),  # near goal filled out of order
    ],
)
def test_packed__follows_the_plan_order_with_parking(row_plan, boxes, packed):
    board, src, dst = row_plan
    pos = state(board, boxes, (1, 1) if (1, 1) not in boxes else (2, 1))
    assert FeatureEvaluator.packed(pos.box_at, src, dst) == packed


def test_out_of_plan__boxes_outside_basin_and_plan(row_plan):
    board, src, dst = row_plan
    features = FeatureEvaluator(board)
    basin = np.zeros(board.n_cells, dtype=np.uint8)
    basin[[board.square(1, c) for c in (2, 3, 4)]] = 1
    # parked (1, 7) and packed (2, 6) are in plan, (1, 3) in the basin, (2, 2) out of plan
    pos = state(board, [(1, 7), (2, 6), (2, 2)], (1, 1))
    n_done = features.packed(pos.box_at, src, dst)
    assert n_done == 2
    assert features.out_of_plan(pos.box_pos, basin, src, dst, n_done) == 1
    # after step 3 the parking square is expected empty: a box left there is out of plan
    pos = state(board, [(1, 7), (2, 6), (2, 5)], (1, 1))
    assert features.packed(pos.box_at, src, dst) == 3
    assert features.out_of_plan(pos.box_pos, basin, src, dst, 3) == 1


def test_kernels__one_compiled_signature_each():
    board = soko_gym.load_levels("xsokoban:1")[0].board
    features = FeatureEvaluator(board)
    s = board.initial_state()
    features.connectivity(s.box_at)
    features.room_connectivity(s.box_at)
    features.mobility(s.box_at, s.box_pos, s.player)
    features.hotspots(s.box_pos)
    src = np.full(1, -1, dtype=np.int32)
    dst = board.goals[:1].copy()
    n = features.packed(s.box_at, src, dst)
    features.out_of_plan(s.box_pos, np.zeros(board.n_cells, np.uint8), src, dst, n)
    hotspot_table(board)
    m = board.n_cells
    free = np.full(m, -1, dtype=np.int16)
    stack, queue = np.zeros(m, dtype=np.int32), np.zeros(4 * m, dtype=np.int32)
    seen = np.zeros(4 * m, dtype=np.uint8)
    goal = int(board.goals[0])
    closures.pull_closure(
        board.cells, free, board.offsets, goal, new_stamps(board.cells), stack, seen, queue
    )
    for module, name in (
        (kernels, "count_regions"),
        (room_count, "count_broken_room_edges"),
        (kernels, "count_mobility"),
        (hotspots, "count_hotspots"),
        (kernels, "count_packed"),
        (kernels, "count_out_of_plan"),
        (hotspots, "fill_hotspot_table"),
        (closures, "pull_closure"),
    ):
        assert len(getattr(module, name).signatures) == 1, name


@pytest.mark.parametrize("xsb", [MOBILITY, TWO_ROOMS, BLOCKING])
def test_pull_closure__agrees_with_forward_box_paths(xsb):
    board = Level.from_xsb(xsb).board
    n = board.n_cells
    box_at = np.full(n, -1, dtype=np.int16)
    stamps = new_stamps(board.cells)
    stack = np.zeros(n, dtype=np.int32)
    seen = np.zeros(4 * n, dtype=np.uint8)
    queue = np.zeros(4 * n, dtype=np.int32)
    dist = np.zeros(4 * n, dtype=np.uint16)
    parent = np.zeros(4 * n, dtype=np.int32)
    for goal in board.goals.tolist():
        closures.pull_closure(board.cells, box_at, board.offsets, goal, stamps, stack, seen, queue)
        closure = seen.copy()
        for x in board.floor.tolist():
            for side in range(4):
                player = x + int(board.offsets[side])
                if not board.cells[player] & FLOOR:
                    continue
                box_at[x] = 0
                box_paths(
                    board.cells,
                    box_at,
                    board.offsets,
                    player,
                    x,
                    stamps,
                    stack,
                    dist,
                    parent,
                    queue,
                )
                box_at[x] = -1
                forward = bool((dist[goal * 4 : goal * 4 + 4] != DIST_INF).any())
                assert bool(closure[x * 4 + side]) == forward, (goal, x, side)


@pytest.mark.parametrize(
    "spec", ["xsokoban:1", "xsokoban:13", "xsokoban:29", "sasquatch:12", "sasquatch:50"]
)
def test_room_connectivity__recount_after_one_move_agrees_with_the_full_count(spec):
    # the move generator counts broken room edges again only in the rooms whose search a
    # box's two squares can change (planners._kernels.fess_room_count.room_areas)
    board = soko_gym.load_levels(spec)[0].board
    features = FeatureEvaluator(board)
    r = features.rooms
    assert r.n_rooms > 1 and r.edges.shape[0] > 0
    areas = room_count.room_areas(r.room_id, r.passage_id, r.edges, board.offsets, board.floor)
    live = board.floor[board.dead[board.floor] == 0]
    n = board.n_cells
    label, stack = np.full(n, -1, dtype=np.int32), np.zeros(n, dtype=np.int32)
    # one scratch remembers rooms' rows across positions, the other remembers nothing
    memo = room_count.new_room_count(label, stack, r.n_rooms, memo_bits=6)
    plain = room_count.new_room_count(label, stack, r.n_rooms, memo_bits=0)
    # per square: the squares the searches of the rooms a box there affects may walk
    reach_size = np.diff(areas.reach_start)
    walk = [
        int(reach_size[areas.aff_room[areas.aff_start[q] : areas.aff_start[q + 1]]].sum())
        for q in range(n)
    ]
    rng = np.random.default_rng(3)
    changed = 0
    by_bits = 0
    for _ in range(300):
        k = int(rng.integers(1, min(board.n_boxes, live.size - 1) + 1))
        squares = rng.choice(live, size=k + 1, replace=False)
        box_at = np.full(n, -1, dtype=np.int16)
        box_at[squares[:k]] = np.arange(k)
        box_pos = squares[:k].astype(np.int32)
        before = features.room_connectivity(box_at)
        intact0 = features._intact.copy()
        for rc in (memo, plain):
            assert (
                room_count.count_rooms(box_at, box_pos, board.offsets, areas, board.zobrist, rc)
                == before
            )
            assert (rc.intact == intact0).all()
        # a box moves from a to b; a == b: none moves
        a = int(squares[int(rng.integers(k))])
        b = a if rng.random() < 0.05 else int(squares[k])
        if a != b:
            box_at[b], box_at[a] = box_at[a], -1
        full = features.room_connectivity(box_at)
        for rc in (memo, plain):
            got = room_count.recount_rooms(
                box_at, board.offsets, areas, board.zobrist, a, b, intact0, rc
            )
            assert got == full, (spec, a, b)
            assert (rc.intact == features._intact).all()
        changed += full != before
        # the one-pass count, which the recount takes where room searches would walk over
        # twice the squares the floor has, agrees everywhere
        one_pass = room_count._count_by_bits(
            box_at, board.offsets, areas, label, stack, plain.intact, plain.bits
        )
        assert one_pass == full, (spec, a, b)
        assert (plain.intact == features._intact).all()
        by_bits += walk[a] + walk[b] > 2 * board.floor.shape[0]
    assert (memo.memo_key != 0).sum() > 10  # the memo was used and holds rows
    assert changed > 10
    if spec == "sasquatch:50":
        assert by_bits > 100  # its lattice of passages joins all eight rooms


def _pull_reference(board, walls, goal):
    n = board.n_cells
    seen = np.zeros(4 * n, dtype=np.uint8)
    closures.pull_closure(
        board.cells, walls, board.offsets, int(goal), new_stamps(board.cells),
        np.zeros(n, dtype=np.int32), seen, np.zeros(4 * n, dtype=np.int32),
    )  # fmt: skip
    return seen


@pytest.mark.parametrize("spec", ["xsokoban:1", "microban2:131", "sasquatch:12", "TOUCHING"])
def test_pull_closure_parts__marks_what_a_player_fill_per_state_marks(spec):
    # one side partition per square stands in for the player fill of every pulled state; the
    # partitions are shared by the searches of every goal and forgotten when the walls change
    board = Level.from_xsb(TOUCHING).board if spec == "TOUCHING" else load_levels(spec)[0].board
    n = board.n_cells
    rng = np.random.default_rng(11)
    parts, parts_gen = np.zeros(4 * n, dtype=np.int8), np.zeros(n + 1, dtype=np.int32)
    seen, queue = np.zeros(4 * n, dtype=np.uint8), np.zeros(4 * n, dtype=np.int32)
    stamps, stack = new_stamps(board.cells), np.zeros(n, dtype=np.int32)
    for k in (0, 1, 2, 6, 1):
        walls = np.full(n, -1, dtype=np.int16)
        walls[rng.choice(board.floor, size=min(k, board.floor.shape[0]), replace=False)] = 0
        closures.forget_parts(parts_gen)
        for goal in board.goals:
            got = closures.pull_closure_parts(
                board.cells, walls, board.offsets, int(goal), stamps, stack, parts, parts_gen,
                seen, queue,
            )  # fmt: skip
            expected = _pull_reference(board, walls, goal)
            assert np.array_equal(seen, expected), (spec, k, int(goal))
            assert got == int(expected.sum())
            assert (walls[board.floor] == 0).sum() == min(k, board.floor.shape[0])  # restored


@pytest.mark.parametrize("spec", ["BLOCKING", "TOUCHING", "xsokoban:1", "microban:10"])
def test_hotspot_table__equals_a_table_from_pull_searches_per_wall(spec):
    board = Level.from_xsb(globals()[spec]).board if spec.isupper() else load_levels(spec)[0].board
    floor, goals, n = board.floor, board.goals, board.n_cells

    def reached(walls):  # [goal, floor index] 1 where a lone box there reaches the goal
        out = np.zeros((goals.shape[0], floor.shape[0]), dtype=np.int64)
        for g, goal in enumerate(goals):
            out[g] = _pull_reference(board, walls, goal).reshape(n, 4)[floor].any(axis=1)
        return out

    free = np.full(n, -1, dtype=np.int16)
    base = reached(free)
    expected = np.zeros((floor.shape[0], floor.shape[0]), dtype=np.uint8)
    for y, wall in enumerate(floor):
        walls = free.copy()
        walls[wall] = 1
        walled = reached(walls)
        other = goals != wall
        before = base[other].sum(axis=0)
        after = walled[other].sum(axis=0)
        expected[:, y] = after < before
        expected[y, y] = 0
    assert np.array_equal(hotspot_table(board), expected)
    assert expected.any() or spec == "TOUCHING"
