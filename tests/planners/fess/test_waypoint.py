import numpy as np
import pytest

from planners import SearchLimits
from planners._kernels.fess import count_regions
from planners.fess import search as fess_search
from planners.fess.basins import push_reachable
from planners.fess.options import FessOptions
from planners.fess.search import FessPlanner
from planners.fess.waypoint import Waypoint, find_waypoint, finish_pushes, waypoint_board
from soko_gym.engine.constants import BOX_AT_DTYPE, FLOOR, GOAL
from soko_gym.engine.reach import new_stamps, reach_player
from soko_gym.levels import load_levels, pushes_to_lurd, verify
from soko_gym.levels.generator import _to_level


def _pushable_to(board) -> np.ndarray:
    """Squares a lone box from a start square can be pushed to (player access relaxed)."""
    floor = (board.cells & FLOOR) != 0
    ok = np.zeros(board.n_cells, dtype=bool)
    stack = board.start_boxes.tolist()
    ok[stack] = True
    while stack:
        sq = stack.pop()
        for d in board.offsets.tolist():
            if floor[sq + d] and floor[sq - d] and not ok[sq + d]:
                ok[sq + d] = True
                stack.append(sq + d)
    return ok


def _regions(board, boxes) -> int:
    box_at = np.full(board.n_cells, -1, dtype=BOX_AT_DTYPE)
    box_at[boxes] = np.arange(len(boxes))
    label = np.full(board.n_cells, -1, dtype=np.int32)
    stack = np.zeros(board.n_cells, dtype=np.int32)
    return int(count_regions(board.cells, box_at, board.offsets, board.floor, label, stack))


@pytest.mark.parametrize("selection", ["microban3:58", "microban:2", "xsokoban:1"])
def test_the_pulls_lead_from_the_solved_position_to_the_waypoint(selection):
    board = load_levels(selection)[0].board
    wp = find_waypoint(board, 500)
    assert 1 <= wp.nodes <= 500 and wp.pulls
    boxes = set(board.goals.tolist())
    reachable = push_reachable(board)
    for src, dst, _ in wp.pulls:
        assert src in boxes and dst not in boxes and reachable[dst]
        boxes = (boxes - {src}) | {dst}
    assert sorted(boxes) == wp.boxes.tolist()
    assert wp.regions == _regions(board, wp.boxes)
    # the player's square is free floor of the waypoint
    assert board.cells[wp.player] & FLOOR and wp.player not in boxes


def test_the_backward_search_loosens_a_checkerboard_into_one_region():
    # Microban III 58: 40 boxes on a checkerboard of targets, the solved position in dozens
    # of regions; the waypoint leaves the player one area, boxes well off the targets
    board = load_levels("microban3:58")[0].board
    wp = find_waypoint(board, 3000)
    assert _regions(board, board.goals) > 20
    assert wp.regions == 1 and wp.score > 20
    with pytest.raises(ValueError, match="max_nodes"):
        find_waypoint(board, 0)


def test_the_waypoint_board_keeps_the_squares_and_the_start():
    board = load_levels("microban:2")[0].board
    wp = find_waypoint(board, 200)
    sub = waypoint_board(board, wp)
    assert (sub.height, sub.width) == (board.height, board.width)
    assert np.array_equal(sub.cells & ~GOAL, board.cells & ~GOAL)
    assert sub.goals.tolist() == wp.boxes.tolist()
    assert sub.start_boxes.tolist() == board.start_boxes.tolist()
    assert sub.start_player == board.start_player


@pytest.mark.parametrize("selection", ["microban3:58", "microban:2", "xsokoban:1"])
def test_the_finishing_pushes_solve_the_level_from_the_waypoint(selection):
    level = load_levels(selection)[0]
    wp = find_waypoint(level.board, 500)
    pushes = finish_pushes(level.board, wp, wp.player)
    assert pushes is not None and len(pushes) >= len(wp.pulls)
    at_waypoint = _to_level(level.board.cells, wp.boxes, wp.player, level.board.width)
    assert verify(at_waypoint, pushes_to_lurd(at_waypoint, pushes)).ok


def test_a_player_shut_out_of_the_waypoints_region_gets_no_finish():
    board = load_levels("microban2:131")[0].board
    wp = find_waypoint(board, 300)
    assert wp.regions > 1
    box_at = np.full(board.n_cells, -1, dtype=BOX_AT_DTYPE)
    box_at[wp.boxes] = np.arange(len(wp.boxes))
    stamps = new_stamps(board.cells)
    stack = np.zeros(board.n_cells, dtype=np.int32)
    reach_player(box_at, board.offsets, wp.player, stamps, stack)
    mark = stamps[board.n_cells]
    elsewhere = [sq for sq in board.floor.tolist() if box_at[sq] < 0 and stamps[sq] != mark]
    assert elsewhere
    assert finish_pushes(board, wp, elsewhere[0]) is None
    assert finish_pushes(board, wp, wp.player) is not None


def test_the_waypoint_solves_microban3_58_through_its_waypoint():
    # the level no other configuration solves in 600 s (benchmarks/RESULTS.md, item 49);
    # a node budget, not the clock, bounds the search
    level = load_levels("microban3:58")[0]
    result = FessPlanner(backward="waypoint").solve(level, SearchLimits(max_nodes=200_000))
    assert result.solved and verify(level, result.lurd).ok
    via = result.stats["via"]
    assert via["status"] == "solved" and via["finished"] and via["regions"] == 1


def test_the_waypoint_solves_small_levels_and_falls_back_when_its_level_is_lost(monkeypatch):
    for level in load_levels("microban:1-8"):
        result = FessPlanner(backward="waypoint").solve(level, SearchLimits(max_seconds=60))
        assert result.solved and verify(level, result.lurd).ok, level.title
        assert "via" in result.stats
    # a waypoint whose level is unsolvable (a target in a corner no box reaches): the plain
    # search takes over and solves the level itself
    level = load_levels("microban:3")[0]
    board = level.board
    wp = find_waypoint(board, 50)
    corner = next(  # a square no box can be pushed to, whatever the targets
        sq
        for sq in board.floor.tolist()
        if not _pushable_to(board)[sq] and sq != board.start_player
    )
    lost = Waypoint(
        boxes=np.sort(np.append(wp.boxes[1:], corner)).astype(np.int32),
        player=wp.player,
        regions=wp.regions,
        score=wp.score,
        pulls=wp.pulls,
        nodes=wp.nodes,
        seconds=wp.seconds,
    )
    monkeypatch.setattr(fess_search, "find_waypoint", lambda *args, **kwargs: lost)
    result = FessPlanner(backward="waypoint").solve(level, SearchLimits(max_seconds=60))
    assert result.solved and verify(level, result.lurd).ok
    assert result.stats["via"]["status"] == "unsolvable"


def test_the_waypoint_stage_runs_only_on_levels_without_a_sink_room():
    from planners.fess.stages import NO_SINK_ROOM, Stage

    with_sink = load_levels("xsokoban:1")[0]
    # as a stage, on a level with a sink room it is skipped: the next stage's unordered plan
    # is the one searched (no waypoint in the result)
    planner = FessPlanner()
    planner.stages = (
        (
            Stage("waypoint", {"backward": "waypoint"}, 1000.0, NO_SINK_ROOM),
            FessOptions(backward="waypoint"),
        ),
        (Stage("next", {"sinkless": "unordered"}, None), FessOptions(sinkless="unordered")),
    )
    result = planner.solve(with_sink, SearchLimits(max_seconds=60))
    assert result.solved and "via" not in result.stats
    assert [s["name"] for s in result.stats["stages"]] == ["next"]
    alone = FessPlanner(backward="waypoint").solve(with_sink, SearchLimits(max_seconds=60))
    assert alone.stats["via"]


@pytest.mark.parametrize(
    "options", [{"backward": "always"}, {"backward": True}, {"backward": None}]
)
def test_bad_backward_options_are_refused(options):
    with pytest.raises(ValueError, match="backward"):
        FessPlanner(**options)


def test_a_waypoint_stage_out_of_time_hands_over_to_the_next_stage():
    # the stage's waypoint search runs out of its (tiny) time: no plain tree to go on with,
    # so the next stage starts from the start and solves the level
    from planners.fess.stages import Stage

    level = load_levels("microban:1")[0]
    planner = FessPlanner()
    planner.stages = (
        (Stage("waypoint", {"backward": "waypoint"}, 1e-6), FessOptions(backward="waypoint")),
        (Stage("plain", {}, None), FessOptions()),
    )
    result = planner.solve(level, SearchLimits(max_seconds=60))
    assert result.solved and verify(level, result.lurd).ok
    assert [(s["name"], s["went_on"]) for s in result.stats["stages"]] == [
        ("waypoint", False),
        ("plain", False),
    ]
    assert "via" not in result.stats
