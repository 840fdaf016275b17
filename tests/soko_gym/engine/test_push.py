import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import soko_gym
from soko_gym.engine import push, reach
from soko_gym.engine.constants import MOVE_CHARS, PUSH_CHARS, STEP_PUSH_BLOCKED, STEP_REASONS
from soko_gym.engine.verify import verify_lurd
from soko_gym.engine.zobrist import full_hash

from .helpers import python_legal_pushes, python_reach

WALK_LEVELS = [
    "microban:1",
    "microban:2",
    "microban:10",
    "microban:54",
    "microban2:7",
    "xsokoban:1",
    "sasquatch:1",
    "sasquatch:49",
    "boxoban-hard:1",
    "boxoban-unfiltered-train:7",
]


class Scratch:
    def __init__(self, board):
        n = board.n_cells
        self.stamps = reach.new_stamps(board.cells)
        self.stack = np.empty(n, dtype=np.int32)
        self.parent = np.empty(n, dtype=np.int8)
        self.walk = np.empty(n, dtype=np.int8)
        self.out = np.empty(4 * board.n_boxes, dtype=np.int32)


def walk_to(board, state, scratch, target):
    k = reach.player_path(
        state.box_at,
        board.offsets,
        state.player,
        target,
        scratch.stamps,
        scratch.stack,
        scratch.parent,
        scratch.walk,
    )
    return None if k < 0 else "".join(MOVE_CHARS[d] for d in scratch.walk[:k])


def check_invariants(board, state):
    assert state.box_pos.shape[0] == board.n_boxes
    assert len(set(state.box_pos.tolist())) == board.n_boxes  # no overlap
    assert np.count_nonzero(state.box_at >= 0) == board.n_boxes
    assert np.array_equal(state.box_at[state.box_pos], np.arange(board.n_boxes))
    assert all(board.cells[state.box_pos] & 2)  # boxes on floor
    assert state.box_hash == full_hash(board.zobrist, state.box_pos)


@settings(max_examples=40, deadline=None)
@given(source=st.sampled_from(WALK_LEVELS), choices=st.lists(st.integers(0, 10**6), max_size=25))
def test_push__random_walk_keeps_engine_invariants(source, choices):
    board = soko_gym.load_levels(source)[0].board
    state = board.initial_state()
    s = Scratch(board)
    lurd = ""
    for choice in choices:
        n_reached, lowest = reach.reach_player(
            state.box_at, board.offsets, state.player, s.stamps, s.stack
        )
        reached = python_reach(board, state)
        assert n_reached == len(reached) and lowest == min(reached)
        assert {sq for sq in range(board.n_cells) if reach.is_reached(s.stamps, sq)} == reached
        n = push.legal_pushes(
            board.cells, state.box_at, state.box_pos, board.offsets, s.stamps, s.out
        )
        legal = set(s.out[:n].tolist())
        assert legal == python_legal_pushes(board, state)
        for code in range(4 * board.n_boxes):
            assert push.is_legal_push(
                board.cells, state.box_at, state.box_pos, board.offsets, s.stamps, code
            ) == (code in legal)
        # every legal push replays through verify; every illegal one is rejected
        for code in range(4 * board.n_boxes):
            b, d = divmod(code, 4)
            stand = int(state.box_pos[b] - board.offsets[d])
            walk = walk_to(board, state, s, stand) if board.cells[stand] & 2 else None
            if walk is None:
                assert code not in legal
                continue
            result = verify_lurd(board, walk + PUSH_CHARS[d], state)
            if code in legal:
                assert result.index in (None, len(walk) + 1), result
            else:
                assert (
                    result.index == len(walk) and result.reason == STEP_REASONS[STEP_PUSH_BLOCKED]
                )
        if not legal:
            break
        code = sorted(legal)[choice % len(legal)]
        b, d = divmod(code, 4)
        walk = walk_to(board, state, s, int(state.box_pos[b] - board.offsets[d]))
        before = state.copy()
        state.apply_push(board, code)
        check_invariants(board, state)
        undone = state.copy()
        undone.undo_push(board, code)
        assert np.array_equal(undone.box_pos, before.box_pos)
        assert np.array_equal(undone.box_at, before.box_at)
        assert undone.box_hash == before.box_hash
        assert undone.player == before.box_pos[b] - board.offsets[d]
        lurd += walk + PUSH_CHARS[d]
    replay = verify_lurd(board, lurd)
    assert replay.index in (None, len(lurd))
    assert np.array_equal(replay.state.box_pos, state.box_pos)


def test_push__pull_undoes_the_opposite_push():
    level = soko_gym.Level.from_xsb("#######\n#     #\n# @$ .#\n#     #\n#######\n")
    board = level.board
    state = board.initial_state()
    s = Scratch(board)
    reach.reach_player(state.box_at, board.offsets, state.player, s.stamps, s.stack)
    start = state.copy()
    state.apply_push(board, 0 * 4 + 3)  # box right
    reach.reach_player(state.box_at, board.offsets, state.player, s.stamps, s.stack)
    n = push.legal_pulls(board.cells, state.box_at, state.box_pos, board.offsets, s.stamps, s.out)
    pulls = set(s.out[:n].tolist())
    assert pulls == {2}  # only left: up, down and right have a wall behind the player
    player, h = push.apply_pull(
        state.box_pos, state.box_at, board.offsets, board.zobrist, state.box_hash, 2
    )
    assert np.array_equal(state.box_pos, start.box_pos) and h == start.box_hash
    assert player == start.box_pos[0] - 1  # the player steps back beyond the box
    back, h2 = push.undo_pull(
        state.box_pos, state.box_at, board.offsets, board.zobrist, np.uint64(h), 2
    )
    assert state.box_pos[0] == start.box_pos[0] + 1 and back == start.box_pos[0]


def test_push__no_pull_into_wall_or_box():
    level = soko_gym.Level.from_xsb("#####\n#@$.#\n#####\n")
    board = level.board
    state = board.initial_state()
    s = Scratch(board)
    reach.reach_player(state.box_at, board.offsets, state.player, s.stamps, s.stack)
    assert (
        push.legal_pulls(board.cells, state.box_at, state.box_pos, board.offsets, s.stamps, s.out)
        == 0
    )
