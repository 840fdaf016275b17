import dataclasses

import numpy as np
import pytest
from numba import njit

import planners
import soko_gym
from planners import SearchLimits
from soko_gym.engine.bounded_search import adapt_budget
from soko_gym.engine.constants import RIGHT, SQUARE_DTYPE
from soko_gym.engine.corral import (
    INFO_BARRIER_LEN,
    INFO_BARRIER_START,
    INFO_NEEDS_PUSH,
    INFO_REGION_LEN,
    INFO_REGION_START,
)
from soko_gym.engine.corral_analysis import (
    CorralAnalysis,
    corral_deadlock_status,
    corral_label,
    corral_pi_sq_pushes,
    pi_corral_pushes_of,
)
from soko_gym.engine.corral_memo import corral_key, corral_status
from soko_gym.engine.corral_search import (
    CORRAL_DEADLOCK,
    CORRAL_OPEN,
    CORRAL_UNKNOWN,
    corral_deadlock,
)
from soko_gym.engine.corral_tables import (
    COUNT_EXPANDED,
    COUNT_MEMO_HITS,
    COUNT_SEARCHES,
    OUT_N_CORRALS,
    OUT_PROOF_LEN,
    OUT_PROOF_NORM,
    PARAM_MEMO,
    new_corral_tables,
)
from soko_gym.engine.deadlock import is_wall_line_deadlock, wall_lines
from soko_gym.engine.push import legal_pushes
from soko_gym.engine.reach import new_stamps, reach_player
from soko_gym.levels import verify

# the doorway box fences the right room, whose goal is free: only pushing it right is kept
PI_CUT = "#########\n#    #  #\n# $@ $ .#\n#.   #  #\n#########"
# the box under the goal alcove could also be pushed right along it: no PI-corral
PI_NO_CUT = "########\n##.#   #\n# $  @ #\n#    * #\n########"
# the doorway box is blocked by the box inside: a PI-corral with no push, a deadlock
PI_NO_PUSH = "#######\n#. #  #\n# @$$.#\n#  #  #\n#######"
# the doorway box can go one square into the room, then both boxes are stuck
CORRAL_DEAD = "#########\n#.  #   #\n#   #   #\n# @ $ $.#\n#   #   #\n#   #   #\n#########"
# the same room with the inner box one row lower: solvable, the corral opens
CORRAL_OPENS = "#########\n#.  #   #\n#   #   #\n# @ $  .#\n#   # $ #\n#   #   #\n#########"
# the top row is a wall line with one goal; with two goals it may hold two boxes
WALL_LINE_ONE_GOAL = "#######\n#.    #\n# $ $ #\n#@    #\n#    .#\n#######"
WALL_LINE_TWO_GOALS = "#######\n#.   .#\n# $ $ #\n#@    #\n#     #\n#######"


def colliding(board):
    """``board`` with every Zobrist key 0: every box set hashes alike (a forced collision)."""
    return dataclasses.replace(board, zobrist=np.zeros_like(board.zobrist))


def position(xsb, boxes=None):
    board = soko_gym.Level.from_xsb(xsb).board
    if boxes is None:
        return board, board.initial_state()
    squares = [board.square(r, c) for r, c in boxes]
    return board, soko_gym.engine.State.from_squares(board, squares, board.start_player)


def n_legal_pushes(board, state):
    stamps = new_stamps(board.cells)
    stack = np.empty(board.n_cells, dtype=SQUARE_DTYPE)
    reach_player(state.box_at, board.offsets, int(state.player), stamps, stack)
    out = np.zeros(4 * board.n_boxes, dtype=SQUARE_DTYPE)
    return int(legal_pushes(board.cells, state.box_at, state.box_pos, board.offsets, stamps, out))


def test_pi_corral__keeps_only_the_pushes_into_the_corral():
    board, state = position(PI_CUT)
    assert pi_corral_pushes_of(board, state) == [(board.square(2, 5), RIGHT)]
    assert n_legal_pushes(board, state) > 1  # the left box's pushes are cut


def test_pi_corral__not_when_a_barrier_box_can_leave_along_the_barrier():
    board, state = position(PI_NO_CUT)
    assert pi_corral_pushes_of(board, state) is None


def test_pi_corral__without_a_push_into_it_is_a_deadlock():
    board, state = position(PI_NO_PUSH)
    assert pi_corral_pushes_of(board, state) == []
    assert planners.solve(PI_NO_PUSH, "bfs").status == "unsolvable"


def test_corral_deadlock__proves_a_closed_room_deadlocked():
    board, state = position(CORRAL_DEAD)
    assert corral_deadlock_status(board, state) == CORRAL_DEADLOCK
    assert planners.solve(CORRAL_DEAD, "bfs").status == "unsolvable"


def test_corral_deadlock__keeps_a_corral_that_opens():
    board, state = position(CORRAL_OPENS)
    assert corral_deadlock_status(board, state) == CORRAL_OPEN
    assert planners.solve(CORRAL_OPENS, "bfs").solved


def test_corral_deadlock__budget_too_small_says_unknown():
    board, state = position(CORRAL_DEAD)
    assert corral_deadlock_status(board, state, budget=1) == CORRAL_UNKNOWN
    assert corral_deadlock_status(board, state, budget=2) == CORRAL_DEADLOCK
    board, state = position(CORRAL_OPENS)
    for budget in range(1, 8):  # a cut-short search is never a deadlock
        assert corral_deadlock_status(board, state, budget=budget) != CORRAL_DEADLOCK


def test_corral_deadlock__too_many_boxes_says_unknown():
    board, state = position(CORRAL_DEAD)
    assert corral_deadlock_status(board, state, max_boxes=1) == CORRAL_UNKNOWN


@pytest.mark.parametrize("selection", ["xsokoban:1", "xsokoban:3", "microban:60"])
def test_corral_deadlock__never_calls_a_position_of_a_solution_dead(selection):
    # soundness: every position of a solution is solvable, whatever the box limit
    level = soko_gym.load_levels(selection)[0]
    known = planners.solve(level, "fess", SearchLimits(max_nodes=200_000))  # not the clock
    assert known.solved
    board = level.board
    searched = 0
    for i, ch in enumerate(known.lurd):
        if not ch.isupper():
            continue
        state = verify(level, known.lurd[: i + 1]).state
        for max_boxes in (1, 2, 3, 12):
            analysis = CorralAnalysis(board, max_boxes=max_boxes)
            analysis.label(state)
            assert analysis.deadlock_status() != CORRAL_DEADLOCK, (selection, i, max_boxes)
            searched += analysis.searches
    assert searched > 0


@pytest.mark.parametrize(
    ("xsb", "boxes", "dead"),
    [
        (WALL_LINE_ONE_GOAL, [(1, 3), (1, 5)], True),  # two boxes, one goal on the line
        (WALL_LINE_ONE_GOAL, [(1, 3), (2, 4)], False),  # one box on the line
        (WALL_LINE_TWO_GOALS, [(1, 3), (1, 4)], False),  # two boxes, two goals
    ],
)
def test_wall_line__more_boxes_than_goals_is_a_deadlock(xsb, boxes, dead):
    board, state = position(xsb, boxes)
    line_of, lines = wall_lines(board.cells, board.offsets)
    sq = board.square(*boxes[0])
    assert bool(is_wall_line_deadlock(line_of, lines, state.box_at, sq)) == dead


def test_wall_line__only_lines_that_can_overfill_are_kept():
    board, _ = position(WALL_LINE_ONE_GOAL)
    line_of, lines = wall_lines(board.cells, board.offsets)
    top = {int(line_of[0, board.square(1, c)]) for c in range(1, 6)}
    assert len(top) == 1 and top != {-1}  # the whole top row is one line
    assert line_of[0, board.square(2, 2)] == -1  # an inner row has no wall beside it
    assert line_of[1, board.square(2, 2)] == -1  # nor has an inner column
    assert lines.shape[0] == 4  # top and bottom rows, left and right columns
    board, _ = position("####\n#..#\n#$$#\n#@ #\n####")
    line_of, lines = wall_lines(board.cells, board.offsets)
    assert line_of[0, board.square(1, 1)] == -1  # two squares, two goals: cannot overfill


def _random_positions(level, n_walks, length, seed):
    """Positions along seeded random push walks from the start (dead ends end a walk)."""
    board = level.board
    rng = np.random.default_rng(seed)
    stamps = new_stamps(board.cells)
    stack = np.empty(board.n_cells, dtype=SQUARE_DTYPE)
    out = np.zeros(4 * board.n_boxes, dtype=SQUARE_DTYPE)
    for _ in range(n_walks):
        box_pos = board.start_boxes.astype(SQUARE_DTYPE).copy()
        player = int(board.start_player)
        for _ in range(length):
            state = soko_gym.engine.State.from_squares(board, box_pos, player)
            yield state
            reach_player(state.box_at, board.offsets, player, stamps, stack)
            k = legal_pushes(board.cells, state.box_at, state.box_pos, board.offsets, stamps, out)
            if k == 0:
                break
            code = int(out[rng.integers(k)])
            box, d = code >> 2, code & 3
            player = int(box_pos[box])
            box_pos = box_pos.copy()
            box_pos[box] += int(board.offsets[d])


def test_corral_deadlock__a_hash_collision_never_proves_a_live_corral_dead():
    # with every box set hashing alike the search tells its positions apart by their squares;
    # fooled by the hash, it stored one position per player region, ran dry and said dead
    board, state = position(CORRAL_OPENS)
    assert corral_deadlock_status(colliding(board), state) == CORRAL_OPEN
    assert planners.solve(CORRAL_OPENS, "bfs").solved


def test_corral_status__a_table_where_every_box_set_collides_answers_as_the_real_one():
    # the same searches, position by position (as many expanded), and a memo whose keys all
    # hash alike answers each corral as its own search does
    searched = hits = 0
    for level in soko_gym.load_levels("microban:1-12") + soko_gym.load_levels("xsokoban:3"):
        real = new_corral_tables(level.board, max_boxes=4)
        fake = new_corral_tables(colliding(level.board), max_boxes=4)
        memo = new_corral_tables(colliding(level.board), max_boxes=4, memo=64)
        for state in _random_positions(level, n_walks=4, length=25, seed=5):
            args = (state.box_at, state.box_pos, int(state.player))
            for ct in (real, fake, memo):
                corral_label(ct, *args)
            status = corral_status(real, *args)
            where = (level.title, state.box_pos.tolist())
            assert corral_status(fake, *args) == status, where
            assert corral_status(memo, *args) == status, where
        assert fake.counters[COUNT_EXPANDED] == real.counters[COUNT_EXPANDED]
        searched += int(real.counters[COUNT_EXPANDED] - real.counters[COUNT_SEARCHES])
        hits += int(memo.counters[COUNT_MEMO_HITS])
    assert searched > 0  # searches went past their first position: their tables were read
    assert hits > 0


def test_corral_memo__a_colliding_key_never_answers_for_another_corral():
    # the dead corral's inner box on (3, 6), a live one's on (4, 6): with one key for both
    # squares the two corrals' keys collide, and the memo must not hand the live one "dead"
    board, dead = position(CORRAL_DEAD)
    board.zobrist[board.square(4, 6)] = board.zobrist[board.square(3, 6)]
    live = soko_gym.engine.State.from_squares(
        board, [board.square(3, 4), board.square(4, 6)], board.start_player
    )
    analysis = CorralAnalysis(board, memo=16)
    ct = analysis.tables
    keys = []
    for state in (dead, live):
        assert analysis.label(state) == 1
        keys.append(corral_key(ct, state.box_at, 0, np.int64(state.player)))
    assert keys[0] == keys[1]
    analysis.label(dead)
    assert analysis.deadlock_status() == CORRAL_DEADLOCK
    analysis.label(live)
    assert analysis.deadlock_status() == CORRAL_OPEN
    assert (analysis.memo_hits, analysis.searches) == (0, 2)
    analysis.label(live)
    assert analysis.deadlock_status() == CORRAL_OPEN  # its own key: from the memo
    assert (analysis.memo_hits, analysis.searches) == (1, 2)


def test_corral_memo__answers_as_a_fresh_search_and_reuses_repeated_corrals():
    hits = 0
    for level in soko_gym.load_levels("microban:1-12"):
        analysis = CorralAnalysis(level.board, memo=1 << 12)
        tiny = CorralAnalysis(level.board, memo=1)  # starts over at every new answer
        for state in _random_positions(level, n_walks=6, length=25, seed=7):
            fresh = corral_deadlock_status(level.board, state)
            for memo in (analysis, tiny):
                memo.label(state)
                assert memo.deadlock_status() == fresh, (level.title, state.box_pos.tolist())
        hits += analysis.memo_hits
    assert hits > 0


def test_corral_memo__a_repeated_corral_is_answered_without_a_search():
    board, state = position(CORRAL_DEAD)
    analysis = CorralAnalysis(board, memo=16)
    analysis.label(state)
    assert analysis.deadlock_status() == CORRAL_DEADLOCK
    assert analysis.memo_hits == 0
    # the player elsewhere in its region: the same sub-problem
    moved = soko_gym.engine.State.from_squares(board, state.box_pos, board.square(1, 1))
    analysis.label(moved)
    assert analysis.deadlock_status() == CORRAL_DEADLOCK
    assert analysis.memo_hits == 1
    with pytest.raises(ValueError, match="memo"):
        CorralAnalysis(board, memo=-1)


def test_corral_counters__say_how_many_searches_ran_out_and_what_they_cost():
    # fess_profile reports these: a search cut by its budget answers "unknown" and is counted
    board, state = position(CORRAL_DEAD)
    full = CorralAnalysis(board, budget=256)
    full.label(state)
    assert full.deadlock_status() == CORRAL_DEADLOCK
    assert (full.searches, full.cut_short, full.expanded) == (1, 0, 2)  # both positions, dead
    cut = CorralAnalysis(board, budget=1)
    cut.label(state)
    assert cut.deadlock_status() == CORRAL_UNKNOWN
    assert (cut.searches, cut.cut_short, cut.expanded) == (1, 1, 1)


def test_adapt_budget__halves_after_running_out_doubles_after_a_proof_within_bounds():
    i = np.int64
    assert adapt_budget(i(1024), True, False, i(64), i(1024)) == 512
    assert adapt_budget(i(64), True, False, i(64), i(1024)) == 64  # never below the floor
    assert adapt_budget(i(256), False, True, i(64), i(1024)) == 512
    assert adapt_budget(i(1024), False, True, i(64), i(1024)) == 1024  # never above the cap
    assert adapt_budget(i(256), False, False, i(64), i(1024)) == 256  # an open corral


def test_corral_adaptive_budget__each_corral_size_searches_with_its_own_budget():
    board, state = position(CORRAL_DEAD)  # proven dead after storing 2 positions
    fixed = CorralAnalysis(board, budget=256)
    fixed.label(state)
    assert fixed.deadlock_status() == CORRAL_DEADLOCK
    assert (fixed.tables.size_budget == 256).all()  # min_budget 0: no adapting
    adaptive = CorralAnalysis(board, budget=256, min_budget=1)
    adaptive.tables.size_budget[:] = 1  # as after searches of every size that ran out
    adaptive.label(state)
    assert adaptive.deadlock_status() == CORRAL_UNKNOWN  # one position is not enough
    assert adaptive.cut_short == 1 and (adaptive.tables.size_budget == 1).all()  # the floor
    adaptive.tables.size_budget[:] = 2
    assert adaptive.deadlock_status() == CORRAL_DEADLOCK
    (size,) = np.flatnonzero(adaptive.tables.size_budget == 4)  # its size doubled, no other
    assert (np.delete(adaptive.tables.size_budget, size) == 2).all()
    for bad in (-1, 257):
        with pytest.raises(ValueError, match="min_budget"):
            new_corral_tables(board, budget=256, min_budget=bad)


def _expected_status_and_proof(ct, state):
    """What ``corral_status`` must answer without a memo, from the per-corral kernels in Python.

    Runs ``corral_deadlock`` on each corral needing a push in order; the first deadlock gives
    the proof: the barrier squares, then the boxes inside K, and ``corral_key``'s norm.
    """
    player = int(state.player)
    result = CORRAL_OPEN
    for k in range(int(ct.out[OUT_N_CORRALS])):
        if ct.info[k, INFO_NEEDS_PUSH] == 0:
            continue
        status = corral_deadlock(ct, state.box_at, k, player)
        if status == CORRAL_DEADLOCK:
            _, _, norm = corral_key(ct, state.box_at, k, player)
            bs, bl = ct.info[k, INFO_BARRIER_START], ct.info[k, INFO_BARRIER_LEN]
            rs, rl = ct.info[k, INFO_REGION_START], ct.info[k, INFO_REGION_LEN]
            region = ct.region[rs : rs + rl]
            inside = region[state.box_at[region] >= 0]
            return CORRAL_DEADLOCK, (ct.barrier[bs : bs + bl].tolist() + inside.tolist(), norm)
        if status == CORRAL_UNKNOWN:
            result = CORRAL_UNKNOWN
    return result, None


def test_corral_kernels__agree_with_the_wrapper_and_the_per_corral_searches():
    proofs = hits = 0
    for level in soko_gym.load_levels("microban:1-8"):
        board = level.board
        plain = new_corral_tables(board)
        memo = new_corral_tables(board, memo=1 << 10)
        check = new_corral_tables(board)
        analysis = CorralAnalysis(board)
        out = np.zeros(4 * board.n_boxes, dtype=np.int64)
        for state in _random_positions(level, n_walks=4, length=25, seed=11):
            args = (state.box_at, state.box_pos, int(state.player))
            where = (level.title, state.box_pos.tolist())
            n = corral_label(plain, *args)
            assert corral_label(memo, *args) == corral_label(check, *args) == n
            assert analysis.label(state) == n == plain.out[OUT_N_CORRALS]
            expected, proof = _expected_status_and_proof(check, state)
            status = corral_status(plain, *args)
            assert status == expected == analysis.deadlock_status(), where
            assert corral_status(memo, *args) == expected, where
            if proof is None:
                assert plain.out[OUT_PROOF_LEN] == 0 and analysis.proof is None
            else:
                proofs += 1
                m = int(plain.out[OUT_PROOF_LEN])
                assert (plain.proof[:m].tolist(), int(plain.out[OUT_PROOF_NORM])) == proof
                assert (analysis.proof[0].tolist(), analysis.proof[1]) == proof
            k = corral_pi_sq_pushes(plain, *args, out)
            codes = analysis.pi_corral_sq_pushes()
            assert (k < 0) == (codes is None), where
            if k >= 0:
                assert out[:k].tolist() == codes.tolist(), where
        assert plain.counters[COUNT_MEMO_HITS] == 0
        hits += int(memo.counters[COUNT_MEMO_HITS])
    assert proofs > 0 and hits > 0


def test_corral_tables__memo_rounds_to_a_power_of_two_and_needs_the_whole_key():
    board, state = position(CORRAL_OPENS)
    assert new_corral_tables(board).params[PARAM_MEMO] == 0
    assert new_corral_tables(board, memo=1).params[PARAM_MEMO] == 1
    ct = new_corral_tables(board, memo=5)
    assert ct.params[PARAM_MEMO] == 8 and ct.memo_status.shape == (8,)
    with pytest.raises(ValueError, match="memo"):
        new_corral_tables(board, memo=-1)
    ct = new_corral_tables(board, memo=1)  # one slot: every key maps to it
    args = (state.box_at, state.box_pos, int(state.player))
    corral_label(ct, *args)
    assert corral_status(ct, *args) == CORRAL_OPEN
    assert ct.counters[COUNT_SEARCHES] == 1 and ct.memo_status[0] == CORRAL_OPEN
    ct.memo_status[0] = CORRAL_DEADLOCK  # a forged answer for a key differing only in norm
    ct.memo_norm[0] += 1
    assert corral_status(ct, *args) == CORRAL_OPEN  # not a hit: searched again
    assert ct.counters[COUNT_MEMO_HITS] == 0 and ct.counters[COUNT_SEARCHES] == 2
    assert corral_status(ct, *args) == CORRAL_OPEN  # the search overwrote the slot: a hit
    assert ct.counters[COUNT_MEMO_HITS] == 1 and ct.counters[COUNT_SEARCHES] == 2


@njit
def _label_status_codes(ct, box_at, box_pos, player, out):
    n = corral_label(ct, box_at, box_pos, player)
    status = corral_status(ct, box_at, box_pos, player)
    return n, status, corral_pi_sq_pushes(ct, box_at, box_pos, player, out)


def test_corral_kernels__callable_from_njit_code():
    board, state = position(PI_NO_PUSH)
    ct = new_corral_tables(board, memo=4)
    out = np.zeros(4 * board.n_boxes, dtype=np.int64)
    n, status, k = _label_status_codes(ct, state.box_at, state.box_pos, int(state.player), out)
    analysis = CorralAnalysis(board)
    assert n == analysis.label(state) > 0
    assert status == analysis.deadlock_status()
    assert k == 0 and analysis.pi_corral_sq_pushes().tolist() == []
