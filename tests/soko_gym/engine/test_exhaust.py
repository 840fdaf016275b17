import numpy as np
import pytest
from numba import njit

import planners
import soko_gym
from planners import SearchLimits
from soko_gym.engine.exhaust import (
    COUNT_CUT,
    COUNT_EXPANDED,
    COUNT_PROVED,
    COUNT_SEARCHES,
    EXHAUST_DEADLOCK,
    EXHAUST_SOLVABLE,
    EXHAUST_UNKNOWN,
    PARAM_BUDGET,
    exhaust_adaptive,
    exhaust_deadlock,
    exhaust_status,
    new_exhaust_tables,
)
from soko_gym.levels import verify
from tests.soko_gym.engine.test_corral import (
    CORRAL_DEAD,
    CORRAL_OPENS,
    _random_positions,
    colliding,
    position,
)

# two positions of XSokoban 29 that FESS reached with eight targets packed and had not found
# dead: each has two legal pushes, and the exhaustion search runs dry after 2 and 5 positions;
# the corral of the boxes outside the player's reach holds all 16 boxes, more than a corral
# search takes
XSOKOBAN_29_SHUT_IN = """\
#####
#   ##
#    #########
## # #       ######
##$#    # #   #   #
#  #        #   $ #
#  ### #########$##
# $## *....... # ##
## ## *******. # ##
#  ########## ##  #
# $@   $  $   $   #
#  #   #   #   #  #
###################"""
XSOKOBAN_29_NO_WAY_IN = """\
#####
#   ##
#    #########
## # #       ######
##$#    # #   #   #
#  #        #   $ #
#  ### ######### ##
#  ## *..*.... # ##
##$## *******. # ##
# @########## ##$ #
#  $ $   $        #
#  #   #   #   #  #
###################"""


def test_exhaust__proves_a_closed_room_dead_and_finds_a_solution_of_a_small_level():
    board, state = position(CORRAL_DEAD)
    assert exhaust_status(board, state) == EXHAUST_DEADLOCK
    assert planners.solve(CORRAL_DEAD, "bfs").status == "unsolvable"
    board, state = position(CORRAL_OPENS)
    assert exhaust_status(board, state) == EXHAUST_SOLVABLE
    assert planners.solve(CORRAL_OPENS, "bfs").solved


@pytest.mark.parametrize("xsb", [XSOKOBAN_29_SHUT_IN, XSOKOBAN_29_NO_WAY_IN])
def test_exhaust__proves_dead_what_a_corral_search_cannot_hold(xsb):
    from soko_gym.engine.corral_analysis import corral_deadlock_status
    from soko_gym.engine.corral_search import CORRAL_UNKNOWN

    board, state = position(xsb)
    assert board.n_boxes == 16
    assert corral_deadlock_status(board, state, budget=1024) == CORRAL_UNKNOWN  # 16 > 12 boxes
    assert exhaust_status(board, state, budget=1024) == EXHAUST_DEADLOCK
    assert planners.solve(xsb, "astar", SearchLimits(max_seconds=60)).status == "unsolvable"


def test_exhaust__a_budget_too_small_says_unknown_never_dead():
    board, state = position(CORRAL_DEAD)
    assert exhaust_status(board, state, budget=1) == EXHAUST_UNKNOWN
    assert exhaust_status(board, state, budget=64) == EXHAUST_DEADLOCK
    board, state = position(CORRAL_OPENS)
    for budget in (1, 2, 3, 5, 8, 13):
        assert exhaust_status(board, state, budget=budget) != EXHAUST_DEADLOCK


def test_exhaust__a_table_where_every_box_set_collides_answers_as_the_real_one():
    # every box set hashes alike: a search fooled by the hash stores one position per player
    # region and runs dry on a solvable position; it must search position by position as it
    # does with the real keys
    board, state = position(CORRAL_OPENS)
    assert exhaust_status(colliding(board), state) == EXHAUST_SOLVABLE
    answers = {EXHAUST_SOLVABLE: 0, EXHAUST_DEADLOCK: 0, EXHAUST_UNKNOWN: 0}
    for level in soko_gym.load_levels("microban:1-10"):
        real = new_exhaust_tables(level.board, 256)
        fake = new_exhaust_tables(colliding(level.board), 256)
        for state in _random_positions(level, n_walks=4, length=12, seed=3):
            player = np.int64(state.player)
            status = exhaust_deadlock(real, state.box_pos, player, 256)
            assert exhaust_deadlock(fake, state.box_pos, player, 256) == status
            answers[status] += 1
        assert fake.counters[COUNT_EXPANDED] == real.counters[COUNT_EXPANDED]
    assert min(answers.values()) > 0  # every answer was exercised


@pytest.mark.parametrize("selection", ["xsokoban:1", "xsokoban:3", "microban:60"])
def test_exhaust__never_calls_a_position_of_a_solution_dead(selection):
    level = soko_gym.load_levels(selection)[0]
    known = planners.solve(level, "fess", SearchLimits(max_nodes=200_000))  # not the clock
    assert known.solved
    board = level.board
    tables = new_exhaust_tables(board, 4096)
    for i, ch in enumerate(known.lurd):
        if not ch.isupper():
            continue
        state = verify(level, known.lurd[: i + 1]).state
        status = exhaust_deadlock(tables, state.box_pos, np.int64(state.player), 4096)
        assert status != EXHAUST_DEADLOCK, (selection, i)
    assert tables.counters[COUNT_PROVED] == 0


def test_exhaust__agrees_with_the_bfs_oracle_on_random_positions():
    proved = solvable = 0
    for level in soko_gym.load_levels("microban:1-10"):
        board = level.board
        tables = new_exhaust_tables(board, 2048)
        for state in _random_positions(level, n_walks=4, length=8, seed=len(level.rows)):
            status = exhaust_deadlock(tables, state.box_pos, np.int64(state.player), 2048)
            if status == EXHAUST_UNKNOWN:
                continue
            xsb = _xsb(level, state)
            oracle = planners.solve(xsb, "bfs", SearchLimits(max_nodes=2_000_000))
            assert oracle.status in ("solved", "unsolvable")
            assert oracle.solved == (status == EXHAUST_SOLVABLE), xsb
            proved += status == EXHAUST_DEADLOCK
            solvable += status == EXHAUST_SOLVABLE
    assert proved > 5 and solvable > 5  # both answers were exercised


def _xsb(level, state):
    board = level.board
    grid = [list(row.ljust(level.width)) for row in soko_gym.Level.from_xsb(str(level)).rows]
    for row in grid:
        for c, ch in enumerate(row):
            if ch in "$@":
                row[c] = " "
            elif ch in "*+":
                row[c] = "."
    for sq in state.box_pos:
        r, c = board.row_col(int(sq))
        grid[r][c] = "*" if grid[r][c] == "." else "$"
    r, c = board.row_col(int(state.player))
    grid[r][c] = "+" if grid[r][c] == "." else "@"
    return "\n".join("".join(row).rstrip() for row in grid)


def test_exhaust_adaptive_budget__falls_after_running_out_and_climbs_after_a_proof():
    level = soko_gym.load_levels("xsokoban:1")[0]
    tables = new_exhaust_tables(level.board, 256, min_budget=32)
    start = level.board.initial_state()
    assert exhaust_adaptive(tables, start.box_pos, np.int64(start.player)) == EXHAUST_UNKNOWN
    assert tables.params[PARAM_BUDGET] == 128
    for _ in range(5):
        exhaust_adaptive(tables, start.box_pos, np.int64(start.player))
    assert tables.params[PARAM_BUDGET] == 32  # never below the floor
    board, state = position(XSOKOBAN_29_NO_WAY_IN)
    tables = new_exhaust_tables(board, 256, min_budget=32)
    tables.params[PARAM_BUDGET] = 32
    assert exhaust_adaptive(tables, state.box_pos, np.int64(state.player)) == EXHAUST_DEADLOCK
    assert tables.params[PARAM_BUDGET] == 64
    c = tables.counters
    assert (c[COUNT_SEARCHES], c[COUNT_PROVED], c[COUNT_CUT]) == (1, 1, 0)
    assert 0 < c[COUNT_EXPANDED] <= 32


def test_exhaust__a_repeated_search_answers_the_same():
    # the table is emptied after each search: a second search must not meet stale keys
    board, state = position(XSOKOBAN_29_SHUT_IN)
    tables = new_exhaust_tables(board, 1024)
    player = np.int64(state.player)
    answers = [exhaust_deadlock(tables, state.box_pos, player, 1024) for _ in range(3)]
    assert answers == [EXHAUST_DEADLOCK] * 3
    assert (tables.players == -1).all()


def test_exhaust_tables__hold_a_capacity_above_the_adaptive_budget():
    board, state = position(XSOKOBAN_29_SHUT_IN)
    tables = new_exhaust_tables(board, 4, min_budget=2, capacity=64)
    assert tables.nodes.shape[0] == 64 and tables.params[PARAM_BUDGET] == 4
    player = np.int64(state.player)
    assert exhaust_deadlock(tables, state.box_pos, player, 64) == EXHAUST_DEADLOCK
    assert tables.params[PARAM_BUDGET] == 4  # a call with its own budget adapts nothing


def test_exhaust_tables__reject_bad_budgets():
    board = soko_gym.load_levels("microban:1")[0].board
    with pytest.raises(ValueError, match="budget"):
        new_exhaust_tables(board, 0)
    with pytest.raises(ValueError, match="min_budget"):
        new_exhaust_tables(board, 64, min_budget=65)


@njit
def _status_in_njit(tables, box_pos, player):
    return exhaust_deadlock(tables, box_pos, player, 64), exhaust_adaptive(tables, box_pos, player)


def test_exhaust_kernel__callable_from_njit_code():
    board, state = position(CORRAL_DEAD)
    tables = new_exhaust_tables(board, 64)
    statuses = _status_in_njit(tables, state.box_pos, np.int64(state.player))
    assert statuses == (EXHAUST_DEADLOCK, EXHAUST_DEADLOCK)
