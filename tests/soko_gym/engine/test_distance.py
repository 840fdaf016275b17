from collections import deque

import numpy as np
import pytest

import soko_gym
from soko_gym.engine.constants import DIST_INF, FLOOR
from soko_gym.engine.distance import dead_sides


def brute_force_push_distance(board, box, player, goal):
    """Fewest pushes of a lone box from `box` (player at `player`) to `goal`, by BFS."""
    start = (box, player)
    dist = {start: 0}
    q = deque([start])
    offsets = board.offsets.tolist()
    while q:
        b, p = q.popleft()
        if b == goal:
            return dist[(b, p)]
        for off in offsets:
            nxt = p + off
            if not board.cells[nxt] & FLOOR:
                continue
            if nxt == b:
                dest = b + off
                if not board.cells[dest] & FLOOR:
                    continue
                state, cost = (dest, b), 1
            else:
                state, cost = (b, nxt), 0
            if state not in dist:
                dist[state] = dist[(b, p)] + cost
                (q.appendleft if cost == 0 else q.append)(state)
    return None


@pytest.mark.parametrize("source", ["microban:1", "microban:3", "microban:8"])
def test_push_distances__equal_brute_force(source):
    board = soko_gym.load_levels(source)[0].board
    for g, goal in enumerate(board.goals.tolist()):
        for sq in board.floor.tolist():
            for side in range(4):
                player = sq + int(board.offsets[side])
                got = board.push_dist[g, sq, side]
                if not board.cells[player] & FLOOR:
                    continue
                expected = brute_force_push_distance(board, sq, player, goal)
                assert got == (DIST_INF if expected is None else expected), (sq, side)


def test_push_distances__honour_the_players_side():
    # the box sits in a one-wide corridor: pushing right needs the player on its left
    level = soko_gym.Level.from_xsb("#######\n#@ $ .#\n### ###\n  ###\n")
    board = level.board
    w = board.width
    box, goal = 1 * w + 3, 1 * w + 5
    left, right = 2, 3
    assert board.push_dist[0, box, left] == 2
    assert board.push_dist[0, box, right] == DIST_INF  # player stuck beyond the box
    assert board.goal_dist[0, box] == 2 and board.nearest_goal_dist[goal] == 0


def test_dead_squares__corners_off_goal_are_dead():
    level = soko_gym.Level.from_xsb("######\n#    #\n# $@ #\n#.   #\n######\n")
    board = level.board
    w = board.width
    dead = {divmod(int(sq), w) for sq in np.flatnonzero(board.dead)}
    assert dead == {(1, 1), (1, 2), (1, 3), (1, 4), (2, 4), (3, 4)}
    assert not board.dead[board.goals[0]]


def test_push_distances__walled_in_box_on_goal_is_not_dead():
    # microban 155 has boxes on goals with walls on all four sides
    level = soko_gym.Level.from_xsb("#######\n###*###\n#@$ .##\n#######\n")
    board = level.board
    w = board.width
    walled = 1 * w + 3
    assert board.nearest_goal_dist[walled] == 0 and not board.dead[walled]
    assert all(board.goal_dist[g, goal] == 0 for g, goal in enumerate(board.goals.tolist()))


def test_dead_sides__one_way_corridor_from_the_wrong_end():
    # the goal is at the corridor's right end: a box in it is live with the player on its
    # left and dead with the player on its right, though no corridor square is dead
    level = soko_gym.Level.from_xsb("#######\n#@ $ .#\n### ###\n  ###\n")
    board = level.board
    w = board.width
    box = 1 * w + 3
    left, right = 2, 3
    sides = dead_sides(board.push_dist).reshape(-1, 4)
    assert not board.dead[box]
    assert sides[box, right] == 1 and sides[box, left] == 0
    # a dead square is dead from every side; a goal from none
    corner = 1 * w + 1
    assert board.dead[corner] and sides[corner].all()
    assert not sides[int(board.goals[0])].any()
