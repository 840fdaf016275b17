import itertools
from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import soko_gym
from soko_gym.engine import lowerbound as lb
from soko_gym.engine.constants import DIST_INF, FLOOR, GOAL
from soko_gym.levels.generator import generate_level

INF = int(DIST_INF)


def board_of(xsb):
    return soko_gym.Level.from_xsb(xsb).board


def full_bound(board, box_pos):
    match, work = lb.new_match_state(board.n_boxes)
    return lb.matching_bound_full(board.goal_dist, box_pos, match, work)


def is_bipartite_deadlock(board, box_pos):
    seen, work = lb.new_bipartite_scratch(board.n_cells, board.n_boxes)
    return bool(
        lb.bipartite_deadlock(
            board.cells,
            board.dead,
            board.goals,
            board.goal_dist,
            np.asarray(box_pos, dtype=np.int32),
            board.offsets,
            seen,
            work,
        )
    )


def brute_force_matching(goal_dist, box_pos):
    n = box_pos.shape[0]
    best = lb.INFINITE_BOUND
    for perm in itertools.permutations(range(n)):
        costs = [int(goal_dist[perm[i], box_pos[i]]) for i in range(n)]
        if INF not in costs:
            best = min(best, sum(costs))
    return best


def assert_valid_state(goal_dist, box_pos, match):
    """Dual feasibility, tight assigned pairs, and a permutation assignment."""
    n = box_pos.shape[0]
    cost = goal_dist[:, box_pos].T.astype(np.int64)
    cost[cost == INF] = 1 << 32
    u, v = match[lb.MATCH_U], match[lb.MATCH_V]
    goal_of, box_of = match[lb.MATCH_GOAL_OF], match[lb.MATCH_BOX_OF]
    assert np.all(u[:, None] + v[None, :] <= cost)
    assert sorted(goal_of.tolist()) == list(range(n))
    assert np.array_equal(box_of[goal_of], np.arange(n))
    assert np.all(u + v[goal_of] == cost[np.arange(n), goal_of])


def push_optimal_distances(board):
    """Plain-Python BFS over (box set, normalized player): pushes to solve each reachable state.

    Returns a dict state -> fewest pushes to a solved state, for every state reachable from
    the start that can still be solved (unsolvable states are absent).
    """
    cells, offsets = board.cells, board.offsets.tolist()

    def reach(boxes, player):
        seen = {player}
        todo = [player]
        while todo:
            sq = todo.pop()
            for off in offsets:
                nb = sq + off
                if nb not in seen and cells[nb] & FLOOR and nb not in boxes:
                    seen.add(nb)
                    todo.append(nb)
        return seen

    start_boxes = frozenset(board.start_boxes.tolist())
    start = (start_boxes, min(reach(start_boxes, board.start_player)))
    parents = {start: []}
    todo = deque([start])
    while todo:
        state = todo.popleft()
        boxes, player = state
        reached = reach(boxes, player)
        for box in boxes:
            for off in offsets:
                dest = box + off
                if box - off in reached and cells[dest] & FLOOR and dest not in boxes:
                    new_boxes = (boxes - {box}) | {dest}
                    nxt = (new_boxes, min(reach(new_boxes, box)))
                    if nxt not in parents:
                        parents[nxt] = []
                        todo.append(nxt)
                    parents[nxt].append(state)
    solved = [s for s in parents if all(cells[b] & GOAL for b in s[0])]
    dist = dict.fromkeys(solved, 0)
    todo = deque(solved)
    while todo:
        state = todo.popleft()
        for prev in parents[state]:
            if prev not in dist:
                dist[prev] = dist[state] + 1
                todo.append(prev)
    return dist, parents


def test_simple_bound__sums_nearest_goal_distances():
    board = board_of("#######\n#.    #\n#  $$ #\n#@  . #\n#######")
    boxes = board.start_boxes
    expected = int(board.nearest_goal_dist[boxes].astype(np.int64).sum())
    assert lb.simple_bound(board.nearest_goal_dist, boxes) == expected == 3


def test_simple_bound__infinite_when_a_box_reaches_no_goal():
    board = board_of("#######\n#$    #\n#   $ #\n#@ .. #\n#######")
    assert lb.simple_bound(board.nearest_goal_dist, board.start_boxes) == lb.INFINITE_BOUND


def test_matching_bound_full__equals_brute_force_on_random_costs():
    rng = np.random.default_rng(1)
    for _ in range(2000):
        n = int(rng.integers(1, 7))
        n_cells = n + int(rng.integers(0, 5))
        goal_dist = rng.integers(0, 30, size=(n, n_cells)).astype(np.uint16)
        goal_dist[rng.random((n, n_cells)) < rng.random() * 0.7] = DIST_INF
        box_pos = rng.choice(n_cells, size=n, replace=False).astype(np.int32)
        match, work = lb.new_match_state(n)
        bound = lb.matching_bound_full(goal_dist, box_pos, match, work)
        assert bound == brute_force_matching(goal_dist, box_pos)
        assert lb.matching_bound_of(match) == bound
        assert_valid_state(goal_dist, box_pos, match)


def test_matching_bound_update__equals_full_solve_on_random_costs():
    rng = np.random.default_rng(2)
    for _ in range(300):
        n = int(rng.integers(1, 7))
        n_cells = 2 * n + 4
        goal_dist = rng.integers(0, 30, size=(n, n_cells)).astype(np.uint16)
        goal_dist[rng.random((n, n_cells)) < rng.random() * 0.6] = DIST_INF
        box_pos = rng.choice(n_cells, size=n, replace=False).astype(np.int32)
        match, work = lb.new_match_state(n)
        lb.matching_bound_full(goal_dist, box_pos, match, work)
        for _ in range(20):
            box = int(rng.integers(n))
            free = np.setdiff1d(np.arange(n_cells), box_pos)
            box_pos[box] = rng.choice(free)
            bound = lb.matching_bound_update(goal_dist, box_pos, match, box, work)
            assert bound == brute_force_matching(goal_dist, box_pos)
            assert_valid_state(goal_dist, box_pos, match)


@pytest.mark.parametrize("source", ["microban:5", "xsokoban:1", "xsokoban:3", "xsokoban:10"])
def test_matching_bound_update__equals_full_solve_over_random_box_moves(source):
    board = soko_gym.load_levels(source)[0].board
    rng = np.random.default_rng(3)
    n = board.n_boxes
    box_pos = board.start_boxes.copy()
    occupied = set(box_pos.tolist())
    floor = board.floor.tolist()
    match, work = lb.new_match_state(n)
    lb.matching_bound_full(board.goal_dist, box_pos, match, work)
    offsets = board.offsets.tolist()
    for step in range(3000):
        box = int(rng.integers(n))
        old = int(box_pos[box])
        if step % 5 == 0:  # a jump anywhere: also through dead squares and back
            dest = floor[int(rng.integers(len(floor)))]
        else:  # a push-like step to a free neighbour
            dest = old + offsets[int(rng.integers(4))]
        if dest in occupied or not board.cells[dest] & FLOOR:
            continue
        occupied.discard(old)
        occupied.add(dest)
        box_pos[box] = dest
        bound = lb.matching_bound_update(board.goal_dist, box_pos, match, box, work)
        assert bound == full_bound(board, box_pos)
        assert lb.matching_bound_of(match) == bound
        if step % 50 == 0:
            assert_valid_state(board.goal_dist, box_pos, match)


def test_matching_bound_update__parent_copy_stays_unchanged():
    board = soko_gym.load_levels("xsokoban:1")[0].board
    box_pos = board.start_boxes.copy()
    parent, work = lb.new_match_state(board.n_boxes)
    parent_bound = lb.matching_bound_full(board.goal_dist, box_pos, parent, work)
    saved = parent.copy()
    for box in range(board.n_boxes):
        for off in board.offsets.tolist():
            dest = int(box_pos[box]) + off
            if not board.cells[dest] & FLOOR or dest in box_pos:
                continue
            child_pos = box_pos.copy()
            child_pos[box] = dest
            child = parent.copy()
            bound = lb.matching_bound_update(board.goal_dist, child_pos, child, box, work)
            assert bound == full_bound(board, child_pos)
            assert np.array_equal(parent, saved)
    assert lb.matching_bound_of(parent) == parent_bound


def test_matching_bound_full__at_least_simple_bound_on_bundled_levels(microban):
    for level in [*microban, *soko_gym.load_levels("xsokoban:1-20")]:
        board = level.board
        simple = lb.simple_bound(board.nearest_goal_dist, board.start_boxes)
        matching = full_bound(board, board.start_boxes)
        assert simple <= matching < lb.INFINITE_BOUND


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(
    seed=st.integers(0, 2**32 - 1),
    width=st.integers(6, 7),
    height=st.integers(6, 7),
    n_boxes=st.integers(1, 3),
    room_shape=st.sampled_from(["random", "open"]),
)
def test_matching_bound__admissible_and_no_false_deadlocks_on_random_levels(
    seed, width, height, n_boxes, room_shape
):
    rng = np.random.default_rng(seed)
    try:
        generated = generate_level(
            rng, width=width, height=height, n_boxes=n_boxes, room_shape=room_shape
        )
    except RuntimeError:
        assume(False)
    board = generated.level.board
    dist, parents = push_optimal_distances(board)
    for boxes, _ in parents:
        box_pos = np.array(sorted(boxes), dtype=np.int32)
        matching = full_bound(board, box_pos)
        simple = lb.simple_bound(board.nearest_goal_dist, box_pos)
        assert simple <= matching
        if any(state in dist for state in parents if state[0] == boxes):
            assert not is_bipartite_deadlock(board, box_pos)
    for (boxes, _player), pushes in dist.items():
        box_pos = np.array(sorted(boxes), dtype=np.int32)
        assert full_bound(board, box_pos) <= pushes
    start = min(d for (b, _), d in dist.items() if b == frozenset(board.start_boxes.tolist()))
    assert start <= generated.pushes


def test_bipartite_deadlock__two_boxes_with_one_reachable_goal():
    # both boxes are stuck on the top row, whose only goal is in the corner
    board = board_of("#######\n#.$ $ #\n#     #\n#  @ .#\n#######")
    assert is_bipartite_deadlock(board, board.start_boxes)
    assert full_bound(board, board.start_boxes) == lb.INFINITE_BOUND


def test_bipartite_deadlock__frozen_pair_off_goals():
    # each box alone reaches its own goal, but the pair along the wall can never move
    board = board_of("########\n#. $$ .#\n#      #\n#  @   #\n########")
    assert full_bound(board, board.start_boxes) < lb.INFINITE_BOUND
    assert is_bipartite_deadlock(board, board.start_boxes)


@pytest.mark.parametrize(
    "xsb",
    [
        "#######\n#**   #\n#  $  #\n#@  . #\n#######",  # frozen pair on goals
        "#######\n#.    #\n#  $$ #\n#@  . #\n#######",
        "######\n#*.$ #\n#    #\n#@   #\n######",  # a frozen box on goal, a movable one
    ],
)
def test_bipartite_deadlock__solvable_positions_are_not_cut(xsb):
    board = board_of(xsb)
    assert not is_bipartite_deadlock(board, board.start_boxes)


def test_mark_frozen_boxes__marks_only_boxes_that_can_never_move():
    board = board_of("########\n#** $  #\n#      #\n#@  .  #\n########")
    seen = np.zeros(board.n_cells + 1, dtype=np.uint32)
    box_pos = board.start_boxes
    n = lb.mark_frozen_boxes(board.cells, board.dead, box_pos, board.offsets, seen)
    frozen = {int(sq) for sq in box_pos if seen[sq] == seen[-1]}
    assert n == 2
    assert frozen == {board.square(1, 1), board.square(1, 2)}


# two boxes that never move again (walled off from the squares they are pushed from), on
# goals, with a third box that reaches the goal left above them
MARKED_ON_GOALS = """\
####
#  ##
#  .#
#  $#
##  ###
 # @  #
 #**  #
 #  ###
 ####"""
# the same boxes off their goals
MARKED_OFF_GOALS = """\
####
#. ##
#.  #
#. $#
##  ###
 # @  #
 #$$  #
 #  ###
 ####"""


def _mark(board, squares):
    """``seen`` stamps marking ``squares`` as the boxes that never move."""
    seen = np.zeros(board.n_cells + 1, dtype=np.uint32)
    seen[-1] = 1
    seen[list(squares)] = 1
    return seen


def test_bipartite_deadlock_marked__marked_boxes_on_goals_take_their_goals():
    board = board_of(MARKED_ON_GOALS)
    box_pos = board.start_boxes
    work = np.zeros((4, board.n_boxes), dtype=np.int32)
    seen = _mark(board, (board.square(6, 2), board.square(6, 3)))
    assert not lb.bipartite_deadlock_marked(
        board.cells, board.goals, board.goal_dist, box_pos, seen, work
    )
    off = board_of(MARKED_OFF_GOALS)  # marked boxes off their goals: a deadlock
    seen = _mark(off, (off.square(6, 2), off.square(6, 3)))
    assert lb.bipartite_deadlock_marked(
        off.cells, off.goals, off.goal_dist, off.start_boxes, seen, work
    )


def test_bipartite_deadlock__no_bundled_microban_start_is_cut(microban):
    for level in microban:
        assert not is_bipartite_deadlock(level.board, level.board.start_boxes), level.title


def test_bipartite_deadlock__never_cuts_along_a_solution():
    level = soko_gym.load_levels("microban:1")[0]
    board = level.board
    state = board.initial_state()
    deltas = dict(zip("udlr", board.offsets.tolist(), strict=True))
    match, work = lb.new_match_state(board.n_boxes)
    lb.matching_bound_full(board.goal_dist, state.box_pos, match, work)
    solution = "dlUrrrdLullddrUluRuulDrddrruLdlUU"
    remaining = sum(ch.isupper() for ch in solution)
    player = state.player
    for ch in solution:
        player += deltas[ch.lower()]
        if ch.isupper():
            box = int(state.box_at[player])
            dest = player + deltas[ch.lower()]
            state.box_at[player], state.box_at[dest] = -1, box
            state.box_pos[box] = dest
            remaining -= 1
            assert not is_bipartite_deadlock(board, state.box_pos)
            bound = lb.matching_bound_update(board.goal_dist, state.box_pos, match, box, work)
            assert bound <= remaining
    assert bound == 0
    assert state.is_solved(board)


@pytest.mark.parametrize("spec", ["xsokoban:1", "xsokoban:10", "sasquatch:35", "sasquatch:12"])
def test_bipartite_deadlock_from__agrees_with_the_full_test_after_one_move(spec):
    # the FESS move generator tests each move from its position's matching
    board = soko_gym.load_levels(spec)[0].board
    seen, work = lb.new_bipartite_scratch(board.n_cells, board.n_boxes)
    live = board.floor[board.dead[board.floor] == 0]
    rng = np.random.default_rng(5)
    answers = []
    for _ in range(400):
        pos = rng.choice(live, size=board.n_boxes + 1, replace=False).astype(np.int32)
        box_pos, free = pos[:-1].copy(), int(pos[-1])
        parent_dead = is_bipartite_deadlock(board, box_pos)
        start = np.full(board.n_boxes, -1, dtype=np.int32)
        if not parent_dead:
            lb.bipartite_deadlock(
                board.cells, board.dead, board.goals, board.goal_dist, box_pos, board.offsets,
                seen, work,
            )  # fmt: skip
            start[:] = work[0]
        moved = int(rng.integers(board.n_boxes))
        box_pos[moved] = free
        full = is_bipartite_deadlock(board, box_pos)
        got = lb.bipartite_deadlock_from(
            board.cells, board.dead, board.goals, board.goal_dist, box_pos, board.offsets, seen,
            work, start, moved,
        )  # fmt: skip
        assert bool(got) == full, (spec, box_pos.tolist(), moved)
        answers.append((parent_dead, full))
    assert any(not p and f for p, f in answers)  # a move that breaks the matching
    assert any(not p and not f for p, f in answers)


def test_warmup_lowerbound__leaves_one_signature_per_kernel():
    board = soko_gym.load_levels("microban:2")[0].board
    lb.warmup_lowerbound(board)
    test_matching_bound_update__parent_copy_stays_unchanged()
    lb.warmup_lowerbound(board)
    kernels = [
        lb.simple_bound,
        lb.matching_bound_full,
        lb.matching_bound_update,
        lb.matching_bound_of,
        lb.mark_frozen_boxes,
        lb.bipartite_deadlock,
        lb.bipartite_deadlock_marked,
        lb.bipartite_deadlock_from,
    ]
    for kernel in kernels:
        assert len(kernel.signatures) == 1, kernel
