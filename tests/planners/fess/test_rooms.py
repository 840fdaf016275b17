import numpy as np

import soko_gym
from planners.fess.rooms import NO_ROOM, analyze_rooms
from soko_gym.levels import Level

# two 3x3 rooms joined by the doorway at row 2, col 4
TWO_ROOMS = """
#########
#   #   #
# $   . #
#@  #   #
#########
"""

OPEN_ROOM = """
######
#    #
# $. #
#  @ #
######
"""

# 2-wide strips: no 2x3 block fits, so every square is a passage
NARROW = """
#######
#@ $ .#
#######
"""


def test_analyze_rooms__two_rooms_joined_by_a_doorway():
    board = Level.from_xsb(TWO_ROOMS).board
    rooms = analyze_rooms(board)
    assert rooms.n_rooms == 2
    assert rooms.edges.tolist() == [[0, 1]]
    doorway = board.square(2, 4)
    assert rooms.room_id[doorway] == NO_ROOM
    assert rooms.connecting_squares(0).tolist() == [doorway]
    assert rooms.room_squares(0).tolist() == [
        board.square(r, c) for r in (1, 2, 3) for c in (1, 2, 3)
    ]
    assert rooms.adjacency.tolist() == [[0, 1], [1, 0]]


# two rooms that touch at (2, 3)-(3, 3) with no block across the contact
TOUCHING = """
#######
#   ###
#@$ ###
###   #
###  .#
#######
"""


def test_analyze_rooms__touching_rooms_share_an_edge_without_squares():
    board = Level.from_xsb(TOUCHING).board
    rooms = analyze_rooms(board)
    assert rooms.n_rooms == 2
    assert rooms.edges.tolist() == [[0, 1]]
    assert rooms.connecting_squares(0).size == 0
    assert rooms.room_id[board.square(2, 3)] == 0
    assert rooms.room_id[board.square(3, 3)] == 1


def test_analyze_rooms__open_room_is_one_room_without_edges():
    rooms = analyze_rooms(Level.from_xsb(OPEN_ROOM).board)
    assert rooms.n_rooms == 1
    assert rooms.n_edges == 0
    assert rooms.n_passages == 0


def test_analyze_rooms__corridor_too_narrow_for_a_room():
    board = Level.from_xsb(NARROW).board
    rooms = analyze_rooms(board)
    assert rooms.n_rooms == 0
    assert rooms.n_passages == 1
    assert (rooms.passage_id[board.floor] == 0).all()


def test_analyze_rooms__xsokoban_1_has_three_rooms_all_connected():
    board = soko_gym.load_levels("xsokoban:1")[0].board
    rooms = analyze_rooms(board)
    assert rooms.n_rooms == 3
    assert rooms.edges.tolist() == [[0, 1], [0, 2], [1, 2]]
    # the upper room is rows 1-4, cols 5-7; the goal room rows 6-8, cols 14-17
    assert rooms.room_id[board.square(1, 5)] == rooms.room_id[board.square(4, 7)] == 0
    assert rooms.room_id[board.square(8, 17)] == 2
    assert np.all(rooms.room_id[board.goals] == 2)


# The adjacency matrix of the paper's Figure 10 (XSokoban 13, rooms numbered 1-8 there).
PAPER_13 = [
    [0, 0, 1, 1, 0, 0, 0, 0],
    [0, 0, 0, 1, 1, 1, 0, 1],
    [1, 0, 0, 1, 0, 0, 1, 0],
    [1, 1, 1, 0, 1, 1, 1, 1],
    [0, 1, 0, 1, 0, 1, 0, 1],
    [0, 1, 0, 1, 1, 0, 0, 1],
    [0, 0, 1, 1, 0, 0, 0, 0],
    [0, 1, 0, 1, 1, 1, 0, 0],
]


def _isomorphic(a: np.ndarray, b: np.ndarray) -> bool:
    """Brute-force graph isomorphism for small graphs, pruned by vertex degrees."""
    import itertools

    n = a.shape[0]
    if b.shape[0] != n or sorted(a.sum(1)) != sorted(b.sum(1)):
        return False
    da, db = a.sum(1), b.sum(1)
    choices = [[j for j in range(n) if db[j] == da[i]] for i in range(n)]
    for perm in itertools.product(*choices):
        if len(set(perm)) == n and np.array_equal(a, b[np.ix_(perm, perm)]):
            return True
    return False


def test_rooms_of_xsokoban_13_are_the_papers_figure_10():
    board = soko_gym.load_levels("xsokoban:13")[0].board
    rooms = analyze_rooms(board)
    assert rooms.n_rooms == 8
    assert _isomorphic(rooms.adjacency.astype(int), np.array(PAPER_13))
    # the open spaces between the pillars of the target area are no rooms
    assert int((rooms.room_id[board.goals] == NO_ROOM).sum()) == 7


def test_blocks_sharing_only_one_square_are_two_rooms_and_the_square_neither():
    # a 2x3 block (rows 1-2, cols 1-3) and one (rows 2-3, cols 3-5) share square (2, 3) only
    board = Level.from_xsb("#######\n#@  ###\n#     #\n###$ .#\n#######").board
    rooms = analyze_rooms(board)
    assert rooms.n_rooms == 2
    assert rooms.room_id[board.square(2, 3)] == NO_ROOM
    left, right = rooms.room_id[board.square(1, 1)], rooms.room_id[board.square(3, 5)]
    assert left >= 0 and right >= 0 and left != right
    assert rooms.adjacency[left, right] == 1  # joined through the shared square
