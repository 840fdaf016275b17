import numpy as np
import pytest

from planners import SearchLimits
from planners.fess.meet import MeetTable, backward_search
from planners.fess.search import FessPlanner
from soko_gym.engine.constants import BOX_AT_DTYPE
from soko_gym.engine.reach import new_stamps, reach_player
from soko_gym.levels import Level, load_levels, pushes_to_lurd, verify
from soko_gym.levels.generator import _to_level


def _filled(selection: str, nodes: int) -> tuple:
    level = load_levels(selection)[0]
    table = MeetTable(level.board, mb=16)
    stats = backward_search(level.board, table, max_nodes=nodes)
    return level, table, stats


@pytest.mark.parametrize("selection", ["microban:2", "microban3:58", "xsokoban:1"])
def test_every_stored_position_is_solved_by_its_pulls_reversed(selection):
    level, table, stats = _filled(selection, 400)
    assert stats.stored == table.size and 1 < table.size <= 400
    t = table.tables
    for e in np.linspace(0, table.size - 1, 12).astype(int).tolist():
        boxes = np.sort(t.boxes[e])
        player = int(t.player[e])
        pushes = table.finish(e, player)
        assert pushes is not None and len(pushes) >= int(t.depth[e])
        at_entry = _to_level(level.board.cells, boxes, player, level.board.width)
        assert verify(at_entry, pushes_to_lurd(at_entry, pushes)).ok
        assert table.find(boxes, player) == e


def test_a_hit_is_exact_the_same_boxes_with_the_player_elsewhere_are_not_met():
    level, table, _ = _filled("microban2:131", 300)
    board = level.board
    t = table.tables
    for e in range(table.size):  # an entry whose boxes cut the floor into regions
        if t.conn[e] > 1:
            break
    else:
        pytest.fail("no stored position with two player regions")
    boxes = t.boxes[e]
    box_at = np.full(board.n_cells, -1, dtype=BOX_AT_DTYPE)
    box_at[boxes] = np.arange(len(boxes))
    stamps = new_stamps(board.cells)
    stack = np.zeros(board.n_cells, dtype=np.int32)
    reach_player(box_at, board.offsets, int(t.player[e]), stamps, stack)
    mark = stamps[board.n_cells]
    other = next(sq for sq in board.floor.tolist() if box_at[sq] < 0 and stamps[sq] != mark)
    assert table.find(boxes, int(t.player[e])) == e
    assert table.find(boxes, other) != e  # same boxes, another region: another position
    assert table.finish(e, other) is None


def test_the_table_size_is_bounded_and_checked():
    board = load_levels("microban:2")[0].board
    for bad in (0, -1, float("nan"), float("inf"), "8", True, None):
        with pytest.raises(ValueError, match="mb"):
            MeetTable(board, mb=bad)
    with pytest.raises(ValueError, match="mb"):
        MeetTable(board, mb=1e-6)  # smaller than one position
    big = load_levels("xsokoban:1")[0].board
    small = MeetTable(big, mb=0.001)
    stats = backward_search(big, small)
    assert small.size == small.capacity and stats.stop == "full"
    with pytest.raises(ValueError, match="max_nodes"):
        backward_search(board, MeetTable(board, mb=1), max_nodes=0)


def test_the_backward_search_stops_when_it_reaches_the_start():
    # Sasquatch 50: pulling towards the start solves it outright (0.1 s, about 8,000 positions)
    level, table, stats = _filled("sasquatch:50", 200_000)
    assert stats.stop == "start" and stats.stored < 200_000
    e = table.find(level.board.start_boxes, int(level.board.start_player))
    assert e >= 0
    pushes = table.finish(e, int(level.board.start_player))
    assert verify(level, pushes_to_lurd(level, pushes)).ok


def test_the_matching_cost_is_the_least_assignment():
    from itertools import permutations

    from planners._kernels.fess_meet import match_cost

    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 5, 6):
        dist = rng.integers(-1, 30, size=(n, 40)).astype(np.int32)  # -1: unreachable
        boxes = rng.choice(40, size=n, replace=False).astype(np.int32)
        work = np.zeros((6, n + 1), dtype=np.int64)
        far = 1_000_000
        best = min(
            sum(far if dist[j, boxes[i]] < 0 else int(dist[j, boxes[i]]) for i, j in enumerate(p))
            for p in permutations(range(n))
        )
        assert match_cost(dist, boxes, work) == best


def test_the_matching_ranking_reaches_starts_the_walking_one_does_not():
    # Microban IV 100 and Sasquatch 27: each box's push distance, assigned one box per start
    # square, leads the pull search to the start (0.1 and 0.4 s); by walking distance the
    # table fills first. Sasquatch 42 is the other way round: the portfolio runs both.
    for selection, reaches in (("microban4:100", "match"), ("sasquatch:42", "walk")):
        level = load_levels(selection)[0]
        for ranking in ("walk", "match"):
            table = MeetTable(level.board, mb=64)
            stats = backward_search(level.board, table, max_nodes=300_000, ranking=ranking)
            assert (stats.stop == "start") == (ranking == reaches), (selection, ranking)
    with pytest.raises(ValueError, match="ranking"):
        backward_search(level.board, MeetTable(level.board, mb=1), ranking="closest")


def test_a_level_the_pulls_never_reach_is_searched_out_backward():
    # the box starts in the corridor's dead end: no pull brings it there from the target
    level = Level.from_xsb("######\n#$ @.#\n######\n")
    table = MeetTable(level.board, mb=1)
    stats = backward_search(level.board, table)
    assert stats.stop == "exhausted" and 1 <= table.size < 10
    assert table.find(level.board.start_boxes, int(level.board.start_player)) < 0


@pytest.mark.parametrize("selection", ["microban:1-6", "xsokoban:1"])
def test_the_forward_search_finishes_through_the_table_and_the_solution_verifies(selection):
    met = 0
    for level in load_levels(selection):
        result = FessPlanner(backward="meet").solve(level, SearchLimits(max_seconds=60))
        assert result.solved and verify(level, result.lurd).ok, level.title
        runs = result.stats["backward"]
        assert runs[0]["ranking"] == "walk" and len(runs) <= 2
        for back in runs:
            assert back["stored"] >= 1
            assert back["stop"] in ("start", "time", "nodes", "full", "exhausted")
        met += result.stats["met"] >= 0
    assert met >= 1  # small levels are searched out backward: the forward search meets them
