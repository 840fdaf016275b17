import numpy as np
import pytest

import planners
from planners import SearchLimits
from planners._kernels.fess_move_data import (
    DL_DEAD_SQUARE,
    DL_FREEZE,
    DL_RETROGRADE,
    DL_ROOM,
    M_OOP,
    M_PACKED,
)
from planners._kernels.fess_tree import C_NODES, K_DST, K_SRC
from planners.fess.options import FessOptions
from planners.fess.packing_plan import compute_packing_plan
from planners.fess.run import FessRun
from planners.fess.search import FessPlanner
from planners.fess.stages import Stage
from soko_gym.engine.constants import FLOOR
from soko_gym.levels import Level, load_levels, verify


def solve(level, **options):
    return planners.solve(level, "fess", SearchLimits(max_seconds=60), **options)


def test_fess_is_registered():
    assert "fess" in planners.available()


@pytest.mark.parametrize("selection", ["microban:1-12", "xsokoban:1", "xsokoban:3"])
def test_fess_solves_small_and_medium_levels(selection):
    for level in load_levels(selection):
        result = solve(level)
        assert result.solved, (level.title, result.status)
        check = verify(level, result.lurd)
        assert check.ok and check.pushes == result.pushes and check.moves == result.moves


def test_stats_report_nodes_cells_advisors_deadlocks_and_times():
    result = solve(load_levels("xsokoban:1")[0])
    s = result.stats
    assert s["nodes"] >= 2 and s["cells"] >= 1
    assert sum(s["advisor_hits"].values()) > 0
    assert set(s["deadlocks"]) == {
        "dead_square", "freeze", "pattern", "bipartite", "retrograde", "room", "corral", "learned",
        "diagonal",
    }  # fmt: skip
    assert s["plan_seconds"] > 0 and s["search_seconds"] > 0
    assert s["sink_room"] >= 0 and s["plan_complete"]


def test_a_fixed_seed_gives_the_same_solution_twice():
    level = load_levels("microban:5")[0]
    a = solve(level, seed=7)
    b = solve(level, seed=7)
    assert a.solved and a.lurd == b.lurd and a.stats["nodes"] == b.stats["nodes"]
    assert solve(level).lurd == solve(level).lurd  # no seed: deterministic too


def test_an_unsolvable_level_is_proven_unsolvable():
    # two boxes, two goals, but the lower-right box is in a corner off goal after one push
    level = Level.from_xsb("#######\n#.    #\n# $ $ #\n#.  @ #\n#  ## #\n# #   #\n#######")
    astar = planners.solve(level, "astar", SearchLimits(max_seconds=30))
    result = solve(level)
    assert result.status == ("solved" if astar.solved else "unsolvable")
    no_way = Level.from_xsb("#####\n#@$.#\n#####\n#.$ #\n#####")  # second part unreachable
    assert solve(no_way).status == "unsolvable"


def test_limits_stop_the_search():
    level = load_levels("xsokoban:10")[0]
    result = planners.solve(level, "fess", SearchLimits(max_nodes=50))
    assert result.status == "node_limit" and not result.lurd
    assert result.generated == 50
    result = planners.solve(level, "fess", SearchLimits(max_memory_mb=1))
    assert result.status == "memory_limit" and not result.lurd
    hard = load_levels("xsokoban:29")[0]  # far from solved in half a second
    result = planners.solve(hard, "fess", SearchLimits(max_seconds=0.5))
    assert result.status == "timeout" and result.seconds < 10


def test_the_tree_grows_without_changing_the_search(monkeypatch):
    # the kernels stop for more room and go on where they were: the same search as with
    # room enough from the start
    import planners.fess.run as run_module

    level = load_levels("xsokoban:31")[0]
    big = planners.solve(level, "fess", SearchLimits(max_nodes=3000))
    monkeypatch.setattr(run_module, "_FIRST_NODES", 8)
    monkeypatch.setattr(run_module, "_FIRST_MOVES", 16)
    small = planners.solve(level, "fess", SearchLimits(max_nodes=3000))
    assert big.generated == small.generated == 3000
    for key in ("expanded_moves", "transpositions", "cells", "deadlocks", "advisor_hits"):
        assert big.stats[key] == small.stats[key], key
    solved = planners.solve(load_levels("microban:20")[0], "fess")
    assert solved.solved and verify(load_levels("microban:20")[0], solved.lurd).ok


def test_weights_and_advisors_are_options():
    level = load_levels("microban:3")[0]
    assert solve(level, advisor_weight=1, move_weight=100).solved
    assert solve(level, advisors=()).solved  # no advisor: every move weighs the same
    with pytest.raises(ValueError, match="advisor"):
        planners.get_planner("fess", advisors=("nonsense",))
    with pytest.raises(ValueError, match="move_weight"):
        planners.get_planner("fess", move_weight=-1)
    with pytest.raises(ValueError, match="both be 0"):
        planners.get_planner("fess", advisor_weight=0, move_weight=0)


@pytest.mark.parametrize(
    "options",
    [
        {"plan": "targets"},
        {"plan": "sinks"},
        {"sinkless": "unordered"},
        {"room_axis": False},
        {"deadlock_budget": 256},
        {"sink_choice": "paper"},
        {"seed": 3},
        {"cells": "lexicographic"},
        {"deadlocks": ()},
    ],
)
def test_search_variants_solve_and_verify(options):
    for level in load_levels("microban:1-4") + load_levels("xsokoban:1"):
        result = solve(level, **options)
        assert result.solved and verify(level, result.lurd).ok, (level.title, options)


def test_out_of_plan_off_makes_every_box_in_plan_and_still_solves():
    # XSokoban 29's sink basin holds the bottom corridor, not the top area: the boxes up
    # there start out of plan; with the axis off no box ever is, and the plan is the same
    level = load_levels("xsokoban:29")[0]
    limits = SearchLimits(max_nodes=2_000)
    on = FessRun(FessOptions(), level.board, limits, None)
    off = FessRun(FessOptions(out_of_plan=False), level.board, limits, None)
    floor = (level.board.cells & FLOOR) != 0
    assert np.array_equal(off.plan.basin.astype(bool), floor)
    assert np.array_equal(off.plan.dst, on.plan.dst) and np.array_equal(off.plan.src, on.plan.src)
    on.run(), off.run()
    k_on, k_off = int(on.tree.ctr[C_NODES]), int(off.tree.ctr[C_NODES])
    assert on.tree.feat[0, 0] > 0 and k_on > 1
    assert not off.tree.feat[:k_off, 0].any()
    # levels it solves in seconds (Sasquatch 19 took 50-105 s, by the machine: too close to
    # the limit for a test)
    for selection in ("xsokoban:1", "xsokoban:3", "microban:60", "sasquatch:1"):
        level = load_levels(selection)[0]
        result = solve(level, out_of_plan=False)
        assert result.solved and verify(level, result.lurd).ok, selection
    for bad in ("yes", 1, 0, None, "fed"):
        with pytest.raises(ValueError, match="out_of_plan"):
            FessPlanner(out_of_plan=bad)


def test_bad_variant_options_are_refused():
    with pytest.raises(ValueError, match="plan"):
        planners.get_planner("fess", plan="sinkless")
    for budget in (0, 100, 8, True, 256.0):
        with pytest.raises(ValueError, match="deadlock_budget"):
            planners.get_planner("fess", deadlock_budget=budget)
    for choice in ("all", 1, None):
        with pytest.raises(ValueError, match="sink_choice"):
            planners.get_planner("fess", sink_choice=choice)
    with pytest.raises(ValueError, match="cells"):
        planners.get_planner("fess", cells="pareto")
    for tests in ("rooms", ("rooms", "locked"), None):
        with pytest.raises(ValueError, match="deadlocks"):
            planners.get_planner("fess", deadlocks=tests)
    for seed in (1.5, "3", True):
        with pytest.raises(ValueError, match="seed"):
            planners.get_planner("fess", seed=seed)
    # the options of earlier versions that measured worse are gone, by name
    for old in ("locked", "exhaust", "frozen_walls", "lazy", "fallback", "plan_sinks"):
        with pytest.raises(ValueError, match=old):
            planners.get_planner("fess", **{old: 1})


def test_cell_rules__a_trade_between_features_opens_a_cell_only_when_dominance_decides():
    """The paper's example (Section 3): from cell (packed 2, connectivity 5), (2, 6) is worse
    under both rules; (1, 3) trades a packed box for connectivity: worse in the feature order,
    not dominated."""
    from collections import namedtuple

    from planners._kernels.fess_tree import cell_worse

    Cells = namedtuple("Cells", ["cell_feat"])  # rows: oop, -packed, connectivity, rooms
    tree = Cells(np.array([[0, -2, 5, 0], [0, -2, 6, 0], [0, -1, 3, 0], [0, -3, 5, 0]]))
    for dominated in (0, 1):
        assert cell_worse(tree, 1, 0, dominated)  # (2, 6) from (2, 5)
        assert not cell_worse(tree, 3, 0, dominated)  # a box packed: better
        assert not cell_worse(tree, 0, 0, dominated)  # the same cell
    assert cell_worse(tree, 2, 0, 0)  # (1, 3): fewer packed comes first in the order
    assert not cell_worse(tree, 2, 0, 1)  # but better connectivity: its own cell


def _run(xsb):
    level = Level.from_xsb(xsb)
    run = FessRun(FessOptions(), level.board, SearchLimits(), None)
    pos = level.board.start_boxes.astype(np.int32).copy()
    run._load(pos)
    return level.board, run, pos


def test_retrograde_analysis_finds_a_target_walled_in_by_a_packed_box():
    # the box packed in the corner seals the target beside it
    board, run, pos = _run("######\n#*.###\n# ####\n#  $ #\n# $@.#\n######")
    assert run._node_deadlock(pos, board.start_player, board.square(1, 1)) == DL_RETROGRADE
    board, run, pos = _run("######\n#*   #\n#  $ #\n#@ . #\n######")
    assert run._node_deadlock(pos, board.start_player, board.square(1, 1)) == -1


def test_room_deadlock_positive_and_negative():
    # the right-hand target is walled off: no box of the room can ever reach it
    xsb = "#########\n#   #   #\n# $ $ @ #\n#   #   #\n####.#.##\n   #######"
    board, run, pos = _run(xsb)
    assert run.rooms.n_rooms == 2
    assert run._node_deadlock(pos, board.start_player, board.square(2, 2)) == DL_ROOM
    board, run, pos = _run("######\n#*   #\n#  $ #\n#@ . #\n######")
    assert run._node_deadlock(pos, board.start_player, board.square(2, 3)) == -1


def test_move_generator_rejects_dead_square_and_frozen_moves():
    # the box may go right (free) or left into the corner (dead square)
    board, run, pos = _run("#######\n#     #\n# $ @.#\n#######")
    level_root = _root(run, board, pos)
    dsts = {int(m[K_DST]) for m in level_root.moves}
    assert board.square(2, 1) not in dsts and board.square(2, 5) in dsts
    assert run.kinds[DL_DEAD_SQUARE] > 0
    # pushed up beside the box at the top wall, the lower box freezes with it off goal
    board, run, pos = _run("########\n# $  ..#\n#  $   #\n#  @   #\n########")
    root = _root(run, board, pos)
    pairs = {(int(m[K_SRC]), int(m[K_DST])) for m in root.moves}
    assert (board.square(2, 3), board.square(1, 3)) not in pairs
    assert (board.square(2, 3), board.square(2, 4)) in pairs
    assert run.kinds[DL_FREEZE] > 0


def _root(run, board, pos):
    return run.node_moves(pos, int(board.start_player))


def test_packing_plan_of_a_goal_room_level_fills_the_deepest_target_first():
    level = Level.from_xsb(
        "##########\n#        #\n#  $$$   ####\n#  @      ...#\n#        #####\n##########"
    )
    plan = compute_packing_plan(level.board)
    assert plan.sink_room >= 0 and plan.complete
    assert plan.describe(level.board) == ["in -> (3, 12)", "in -> (3, 11)", "in -> (3, 10)"]
    assert plan.basin[level.board.start_boxes].all()


def test_packing_plan_without_a_sink_room_orders_the_targets_only():
    level = load_levels("microban:1")[0]
    plan = compute_packing_plan(level.board)
    assert plan.sink_room == -1
    assert (plan.src == -1).all()
    assert sorted(plan.dst.tolist()) == sorted(level.board.goals.tolist())


def test_adaptive_budget_halves_after_a_search_that_ran_out_and_doubles_after_a_proof():
    from planners._kernels.fess_search import ADAPT_MIN, _adapt

    i = np.int64
    assert _adapt(i(1024), True, False, i(1024)) == 512
    assert _adapt(i(ADAPT_MIN), True, False, i(1024)) == ADAPT_MIN  # never below the floor
    assert _adapt(i(256), False, True, i(1024)) == 512
    assert _adapt(i(1024), False, True, i(1024)) == 1024  # never above the scratch
    assert _adapt(i(256), False, False, i(1024)) == 256  # an open room or corral: unchanged


def test_room_searches_that_only_run_out_get_cheaper():
    # Microban IV 86: one room holding its own targets; its room search must pack every box
    # to end, so at 1,024 positions it mostly runs out and proves nothing
    level = load_levels("microban4:86")[0]
    run = FessRun(FessOptions(), level.board, SearchLimits(max_nodes=2000), None)
    run.run()
    assert run.work.room_budget.min() < 1024


def test_unordered_plan_counts_boxes_on_targets_in_any_order():
    from planners._kernels.fess import count_packed
    from planners.fess.packing_plan import unordered_plan

    level = load_levels("microban:1")[0]
    board = level.board
    plan = unordered_plan(board)
    assert sorted(plan.dst.tolist()) == sorted(board.goals.tolist())
    ordered = compute_packing_plan(board)
    box_at = np.full(board.n_cells, -1, dtype=np.int16)
    # one box on the target the ordered plan fills last: packed for the unordered plan only
    box_at[ordered.dst[-1]] = 0
    assert count_packed(box_at, plan.src, plan.dst) == 1
    assert count_packed(box_at, ordered.src, ordered.dst) == 0
    box_at[board.goals] = np.arange(board.goals.shape[0])
    assert count_packed(box_at, plan.src, plan.dst) == board.goals.shape[0]


@pytest.mark.parametrize(
    "selection, options",
    [("microban4:71", {}), ("microban4:71", {"sinkless": "unordered"}), ("microban3:43", {})],
)
def test_every_push_of_a_known_solution_survives_the_move_generator(selection, options):
    # soundness of what the move generator drops (dead squares, freeze, 4x4 patterns, the
    # bipartite test, learned patterns, PI-corral pruning): after a search has learned its
    # patterns, each position of another planner's solution still gets the move to the next
    # one, and no node-level test calls any of them dead
    from planners._kernels.fess_move_data import M_DST, M_NORM, M_SRC
    from soko_gym.engine.reach import new_stamps, reach_player

    level = load_levels(selection)[0]
    board = level.board
    known = planners.solve(level, "greedy", SearchLimits(max_seconds=30))
    assert known.solved
    run = FessRun(FessOptions(**options), board, SearchLimits(max_nodes=3000), None)
    run.run()
    if selection == "microban4:71":  # the search there learns patterns: they are tested too
        assert len(run.learned) > 0
    stamps = new_stamps(board.cells)
    stack = np.zeros(board.n_cells, dtype=np.int32)
    state = verify(level, "").state
    pos, player = state.box_pos.astype(np.int32).copy(), int(state.player)
    checked = 0
    for i, ch in enumerate(known.lurd):
        if not ch.isupper():
            continue
        after = verify(level, known.lurd[: i + 1]).state
        nxt = after.box_pos.astype(np.int32).copy()
        (box,) = np.flatnonzero(nxt != pos)
        box_at = np.full(board.n_cells, -1, dtype=np.int16)
        box_at[nxt] = np.arange(nxt.shape[0])
        _, norm = reach_player(box_at, board.offsets, int(after.player), stamps, stack)
        moves = run.node_moves(pos, player).full
        hit = moves[:, M_SRC] == pos[box]
        hit &= (moves[:, M_DST] == nxt[box]) & (moves[:, M_NORM] == norm)
        assert hit.any(), (selection, i, board.row_col(pos[box]), board.row_col(nxt[box]))
        run._load(nxt)
        assert run._node_deadlock(nxt, int(after.player), int(nxt[box])) == -1, (selection, i)
        pos, player = nxt, int(after.player)
        checked += 1
    assert checked == known.pushes


@pytest.mark.parametrize("selection", ["xsokoban:1", "xsokoban:13", "microban:10"])
def test_move_features_match_the_feature_evaluator_on_the_child(selection):
    from planners.fess.features import FeatureEvaluator
    from soko_gym.engine.board import State

    level = load_levels(selection)[0]
    board, run, pos = level.board, None, None
    run = FessRun(FessOptions(pi_corrals=False), board, SearchLimits(), None)
    pos = board.start_boxes.astype(np.int32).copy()
    root = _root(run, board, pos)
    ev = FeatureEvaluator(board, run.rooms, run.features.hot)
    plan = run.plan
    assert root.moves.shape[0] > 0
    for m in root.moves:
        child = pos.copy()
        child[m[0]] = m[K_DST]
        state = State.from_squares(board, child.tolist(), int(m[3]))
        packed = ev.packed(state.box_at, plan.src, plan.dst)
        assert m[6] == packed
        assert m[5] == ev.out_of_plan(child, plan.basin, plan.src, plan.dst, packed)
        assert m[7] == ev.connectivity(state.box_at)
        assert m[8] == ev.room_connectivity(state.box_at)
        assert m[9] == ev.hotspots(child)
        assert m[10] == ev.mobility(state.box_at, child, int(m[3]))[0]


def test_soko_solve_runs_fess_and_can_optimize(tmp_path, capsys):
    from soko_gym.cli import main

    path = tmp_path / "fess.jsonl"
    args = ["solve", "microban:4-5", "--planner", "fess", "--optimize", "--jsonl", str(path)]
    assert main(args) == 0
    import json

    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["planner"] for r in rows] == ["fess", "fess"] and all(r["solved"] for r in rows)
    for row, level in zip(rows, load_levels("microban:4-5"), strict=True):
        assert verify(level, row["lurd"]).ok


def _kernel_moves(run, pos):
    """All move rows of the start position, every column (``push_moves`` as in ``_generate``)."""
    from planners._kernels.fess_moves import push_moves

    run._load(pos)
    k = push_moves(run.move_tables, run.scratch, run._learned_tables, run.box_at, pos,
                   int(run.board.start_player), run.work.moves)  # fmt: skip
    return run.work.moves[:k]


def test_explorer_column_counts_only_pushes_from_newly_reached_squares():
    from planners._kernels.fess_move_data import M_DST, M_NEW_PUSHES, M_PLAYER, M_SRC

    # one box in an open room: a push frees only the box's own square, nothing new opens
    board, run, pos = _run("#######\n#     #\n# $ . #\n#  @  #\n#######")
    rows = _kernel_moves(run, pos)
    assert rows.shape[0] > 0 and (rows[:, M_NEW_PUSHES] == 0).all()
    # box A blocks the door to the right room, where box B waits
    board, run, pos = _run("##########\n#   #    #\n# @ $    #\n#   #  $ #\n#   #..  #\n##########")
    rows = _kernel_moves(run, pos)
    door, sq = board.square(2, 4), board.square

    def new_pushes(dst, player=None):
        (hit,) = [
            m[M_NEW_PUSHES]
            for m in rows
            if m[M_SRC] == door and m[M_DST] == dst and player in (None, m[M_PLAYER])
        ]
        return int(hit)

    # one push: the player steps into the door square, still shut out by the box
    assert new_pushes(sq(2, 5), door) == 0
    # two pushes: the player gets past the box into the right room and can push box B
    assert new_pushes(sq(2, 6)) > 0


def _node_tests_along_solutions(board_of) -> int:
    """Run the node-level tests twice along A* solutions of Microban 1-10 and XSokoban 1.

    Each position is tested on ``board_of(level).board`` and must not be called dead; returns
    the room and corral memo slots filled (the second pass reads them).
    """
    remembered = 0
    for level in load_levels("microban:1-10") + load_levels("xsokoban:1"):
        result = planners.solve(level, "astar", SearchLimits(max_seconds=30))
        assert result.solved
        board = board_of(level).board
        run = FessRun(FessOptions(), board, SearchLimits(), None)
        steps = []
        before = board.start_boxes.astype(np.int32)
        for i, ch in enumerate(result.lurd):
            if ch.isupper():
                state = verify(level, result.lurd[: i + 1]).state
                pos = state.box_pos.astype(np.int32).copy()
                dst = int(np.setdiff1d(pos, before)[0])
                steps.append((pos, int(state.player), dst))
                before = pos
        for _ in range(2):
            for pos, player, dst in steps:
                run._load(pos)
                assert run._node_deadlock(pos, player, dst) == -1, (level.title, pos.tolist())
        remembered += int((run.work.memo_status >= 0).sum() + (run.corrals.memo_status >= 0).sum())
    return remembered


def test_node_deadlock_tests_with_their_memos_never_stop_a_solution_path():
    # the room and corral answers are remembered by sub-problem: a second pass over the same
    # positions is answered from the memos and must agree with the first
    assert _node_tests_along_solutions(lambda level: level) > 0


def _colliding(level):
    """A copy of ``level`` whose board has every Zobrist key 0: every box set hashes alike."""
    copy = Level.from_xsb(str(level))
    copy.board.zobrist[:] = 0
    return copy


def test_fess_under_a_zobrist_table_where_every_box_set_collides_still_solves():
    # only the box squares tell positions apart now, in the transposition table, the feature
    # cache and the deadlock searches' tables and memos; trusting the hash, FESS took each
    # child for a transposition of its parent and called every one of these levels unsolvable
    for level in load_levels("microban:1-10"):
        result = planners.solve(_colliding(level), "fess", SearchLimits(max_nodes=20_000))
        assert result.solved, level.title
        assert verify(level, result.lurd).ok


def test_the_transposition_table_takes_a_colliding_position_for_no_stored_one():
    from planners._kernels.fess_tree import tt_find
    from planners.fess.tree import new_tree

    tree = new_tree(2, 4, 8)
    tree.box_pos[0] = [5, 9]
    tree.hash[0], tree.norm[0] = 77, 1
    box_at = np.full(16, -1, dtype=np.int16)
    box_at[[5, 9]] = [0, 1]
    _, slot = tt_find(tree, np.uint64(77), 1, box_at, -1, -1)
    tree.tt[slot] = 0
    h = np.uint64(77)  # the hash of the stored boxes, as a colliding box set would have it
    assert tt_find(tree, h, 1, box_at, 9, 10)[0] == -1  # boxes on 5 and 10: a new position
    assert tt_find(tree, h, 2, box_at, -1, -1)[0] == -1  # another player region
    box_at[[5, 9]] = -1
    box_at[[9, 12]] = [0, 1]
    assert tt_find(tree, h, 1, box_at, 12, 5)[0] == 0  # boxes on 9 and 5: the stored one


def test_node_deadlock_tests_and_their_memos_under_colliding_hashes_never_stop_a_solution():
    # the room and corral searches and their memos with every box set hashing alike: each
    # memo slot is met by many sub-problems, none of which may take another's answer
    assert _node_tests_along_solutions(_colliding) > 0


def test_packing_plan_tries_the_next_sink_room_when_the_first_cannot_be_emptied_into():
    # XSokoban 31: the paper's sink room (the basin holding the most boxes) leaves boxes on
    # the board; the next candidate takes them all
    board = load_levels("xsokoban:31")[0].board
    first = compute_packing_plan(board, max_sinks=1)
    assert first.left > 0
    plan = compute_packing_plan(board)
    assert plan.complete and plan.left == 0 and plan.sink_room != first.sink_room
    assert plan.nodes > first.nodes  # both searches counted
    with pytest.raises(ValueError, match="max_sinks"):
        compute_packing_plan(board, max_sinks=0)


def test_packing_plan_searches_the_papers_sink_room_deeper_before_the_runners_up():
    # XSokoban 66: at 3,000 positions the paper's sink room (left) cannot empty the targets
    # through its one door and the runner-up (right) is taken, leaving the left side's boxes
    # out of plan; searched on, the paper's choice empties the board.
    from planners.fess.basins import ranked_sinks, target_basins
    from planners.fess.rooms import analyze_rooms

    board = load_levels("xsokoban:66")[0].board
    rooms = analyze_rooms(board)
    fed, rest = ranked_sinks(board, rooms, target_basins(board))
    papers = (fed + rest)[0][0]
    shallow = compute_packing_plan(board, rooms, max_seconds=None)
    deep = compute_packing_plan(board, rooms, max_seconds=None, first_nodes=30000)
    assert shallow.sink_room != papers and shallow.complete
    assert deep.sink_room == papers and deep.complete and deep.left == 0
    assert 3000 < deep.nodes <= 30000
    assert int(deep.basin[board.start_boxes].sum()) > int(shallow.basin[board.start_boxes].sum())
    # a plan already complete at the shallow budget is kept position for position
    board = load_levels("xsokoban:1")[0].board
    a, b = compute_packing_plan(board), compute_packing_plan(board, first_nodes=30000)
    assert a.src.tolist() == b.src.tolist() and a.dst.tolist() == b.dst.tolist()
    assert a.nodes == b.nodes
    with pytest.raises(ValueError, match="first_nodes"):
        compute_packing_plan(board, first_nodes=0)


def test_sinkless_plan_keeps_the_backward_searchs_first_pulls_only():
    # Microban IV 96 has no sink room: the plan orders its targets. At one position the
    # backward search vacates none, and every target is filled farthest from the start
    # squares first; a larger budget changes the order.
    from planners.fess.basins import walk_distance_from

    board = load_levels("microban4:96")[0].board
    geometric = compute_packing_plan(board, sinkless_nodes=1)
    depth = walk_distance_from(board, board.start_boxes)[geometric.dst]
    assert sorted(geometric.dst.tolist()) == sorted(board.goals.tolist())
    assert (geometric.src == -1).all() and (np.diff(depth.astype(int)) <= 0).all()
    assert geometric.sink_room == -1 and geometric.nodes < 10  # its roots, one per region
    small = compute_packing_plan(board, sinkless_nodes=100)
    assert small.nodes == 100 and small.dst.tolist() != geometric.dst.tolist()
    assert compute_packing_plan(board).nodes == 3000  # None: max_nodes, as before
    with pytest.raises(ValueError, match="sinkless_nodes"):
        compute_packing_plan(board, sinkless_nodes=0)
    # a level with a sink room ignores it
    sink_level = load_levels("xsokoban:1")[0].board
    a, b = compute_packing_plan(sink_level), compute_packing_plan(sink_level, sinkless_nodes=1)
    assert a.dst.tolist() == b.dst.tolist() and a.nodes == b.nodes


def test_fess_solves_a_sinkless_level_the_old_plan_budget_left_unsolved():
    # Microban IV 96: unsolved within 60 s (2.3M positions) with the 3,000-position order;
    # one worker, same search every time, so a node limit is the check
    level = load_levels("microban4:96")[0]
    result = planners.solve(level, "fess", SearchLimits(max_nodes=250_000))
    assert result.solved and verify(level, result.lurd).ok


def test_packing_plan_with_every_fed_sink_room_feeds_the_targets_from_both_sides():
    # XSokoban 66: the target room has two ways in, one from the left part of the level (11
    # boxes) and one from the right (7). The paper's single sink room serves one side only;
    # with every fed sink room at once, every box starts in the plan's basin.
    from planners.fess.basins import ranked_sinks, target_basins
    from planners.fess.rooms import analyze_rooms

    board = load_levels("xsokoban:66")[0].board
    rooms = analyze_rooms(board)
    fed, _ = ranked_sinks(board, rooms, target_basins(board))
    assert len(fed) == 2
    one = compute_packing_plan(board, rooms)
    both = compute_packing_plan(board, rooms, sinks="all")
    assert both.complete and both.sink_rooms == tuple(r for r, _ in fed)
    assert set(np.unique(rooms.room_id[both.sink == 1]).tolist()) == set(both.sink_rooms)
    assert one.sink_rooms == (one.sink_room,) and one.sink_room in both.sink_rooms
    in_basin = lambda plan: int(plan.basin[board.start_boxes].sum())  # noqa: E731
    assert in_basin(one) < board.n_boxes == in_basin(both)
    assert sorted(both.dst.tolist()) == sorted(board.goals.tolist())


def test_packing_plan_with_one_fed_sink_room_is_the_same_with_every_one():
    board = load_levels("xsokoban:1")[0].board
    one, every = compute_packing_plan(board), compute_packing_plan(board, sinks="all")
    assert one.sink_rooms == every.sink_rooms and len(one.sink_rooms) == 1
    assert one.src.tolist() == every.src.tolist() and one.dst.tolist() == every.dst.tolist()
    assert np.array_equal(one.basin, every.basin)
    with pytest.raises(ValueError, match="sinks"):
        compute_packing_plan(board, sinks="some")


def test_fess_with_every_fed_sink_room_solves_and_verifies():
    level = load_levels("xsokoban:2")[0]
    result = solve(level, plan="sinks")
    assert result.solved and verify(level, result.lurd).ok
    assert len(result.stats["sink_rooms"]) >= 1


def test_push_reachable__a_pocket_no_push_can_enter_is_left_out():
    from planners.fess.basins import push_reachable

    # (3, 3) can be pushed out of (left, from the right) but never into: the square behind
    # each way in is a wall. It is no dead square, so only this test keeps pulls out of it.
    level = Level.from_xsb("#######\n#.$ @ #\n## # ##\n##   ##\n##   ##\n#######")
    board = level.board
    ok = push_reachable(board)
    assert ok[board.square(1, 3)] and ok[board.square(1, 1)]  # along the start box's row
    assert not ok[board.square(3, 3)] and not board.dead[board.square(3, 3)]
    assert not ok[board.square(2, 2)]  # a push down needs the wall above the start box


def test_packing_plan_of_xsokoban_14_is_complete_and_every_step_is_pushable():
    # the backward search used to pull a box into the pocket at (13, 14), which no push can
    # enter; stuck there, the plan stayed incomplete at any budget
    from planners.fess.basins import push_reachable

    board = load_levels("xsokoban:14")[0].board
    plan = compute_packing_plan(board)
    assert plan.complete
    # what the backward search leaves on the board stands where boxes start: the paper's
    # parking in the upper room, realised by the start itself
    held = plan.dst[: plan.left]
    assert plan.left == 0 or np.isin(held, board.start_boxes).all()
    ok = push_reachable(board)
    assert ok[plan.dst].all()
    assert ok[plan.src[plan.src >= 0]].all()


def _staged(*stages: Stage, **options) -> FessPlanner:
    """A planner running ``stages`` in turn, each with the caller's ``options`` changed."""
    planner = FessPlanner(**options)
    planner.stages = tuple((st, FessOptions(**{**options, **st.changes})) for st in stages)
    return planner


def _stage_report(result):
    return [(s["name"], s["went_on"]) for s in result.stats["stages"]]


def test_a_stage_searches_again_with_its_plan_where_that_changes_the_plan():
    # XSokoban 1 has a sink room: "targets" gives it another plan, so the second stage
    # searches from the start after the first stage's time (cut at once here)
    from planners.fess.basins import sink_candidates, target_basins
    from planners.fess.rooms import analyze_rooms

    level = load_levels("xsokoban:1")[0]
    b = level.board
    assert sink_candidates(b, analyze_rooms(b), target_basins(b))
    planner = _staged(Stage("first", {}, 1e-3), Stage("targets", {"plan": "targets"}, None))
    result = planner.solve(level, SearchLimits(max_seconds=60))
    assert result.solved and verify(level, result.lurd).ok
    assert _stage_report(result) == [("first", False), ("targets", False)]
    assert result.stats["plan_steps"] == compute_packing_plan(b, use_sink=False).n_steps


def test_a_stage_that_would_search_the_same_way_lets_the_running_search_go_on():
    # Microban 2 has no sink room: "sink" and "targets" plan it alike, so no restart; the
    # search goes on and its node count is the same as without stages
    level = load_levels("microban:2")[0]
    limits = SearchLimits(max_nodes=40)
    plain = planners.solve(level, "fess", limits)
    planner = _staged(Stage("first", {}, 1e-3), Stage("targets", {"plan": "targets"}, None))
    cut = planner.solve(level, limits)
    assert _stage_report(cut) == [("first", False), ("targets", True)]
    assert cut.status == plain.status and cut.generated == plain.generated
    assert cut.lurd == plain.lurd


def test_stages_run_in_turn_and_the_last_one_finds_the_solution():
    level = load_levels("xsokoban:1")[0]
    planner = _staged(
        Stage("a", {}, 1e-3),
        Stage("b", {"pi_corrals": False}, 1e-3),
        Stage("c", {"plan": "targets"}, None),
    )
    result = planner.solve(level, SearchLimits(max_seconds=60))
    assert result.solved and verify(level, result.lurd).ok
    assert _stage_report(result) == [("a", False), ("b", False), ("c", False)]
    assert result.stats["plan_steps"] == compute_packing_plan(level.board, use_sink=False).n_steps


def test_a_stage_that_searches_like_the_last_goes_on_and_the_next_still_switches_at_its_time():
    # XSokoban 40 has one fed sink room, so a "sinks" stage searches as the first: its tree
    # goes on, and the next stage ("targets", another plan there) still takes over. The
    # level takes FESS far longer than the second here, so every stage runs out of time.
    from planners.fess.search import _same_search

    level = load_levels("xsokoban:40")[0]
    assert _same_search(FessOptions(), FessOptions(plan="sinks"), level.board)
    assert not _same_search(
        FessOptions(), FessOptions(plan="sinks"), load_levels("xsokoban:66")[0].board
    )
    planner = _staged(
        Stage("first", {}, 0.25),
        Stage("sinks", {"plan": "sinks"}, 0.25),
        Stage("targets", {"plan": "targets"}, None),
    )
    result = planner.solve(level, SearchLimits(max_seconds=1.0))
    assert result.status == "timeout"
    assert _stage_report(result) == [("first", False), ("sinks", True), ("targets", False)]
    assert result.stats["plan_steps"] == compute_packing_plan(level.board, use_sink=False).n_steps


def test_a_stage_runs_only_on_levels_that_meet_its_condition():
    from planners.fess.stages import FED_SINKS, NO_SINK_ROOM

    planner = _staged(
        Stage("first", {}, 1e-3),
        Stage("no sink", {"sinkless": "unordered"}, 1e-3, NO_SINK_ROOM),
        Stage("fed", {"out_of_plan": False}, None, FED_SINKS),
    )
    limits = SearchLimits(max_seconds=30)
    sinkless = planner.solve(load_levels("microban:2")[0], limits)  # no sink room
    assert [n for n, _ in _stage_report(sinkless)][-1] == "no sink"
    one_sink = planner.solve(load_levels("xsokoban:1")[0], limits)  # one fed sink room
    assert _stage_report(one_sink) == [("first", False)]
    many = planner.solve(load_levels("xsokoban:29")[0], SearchLimits(max_seconds=1.0))
    assert [n for n, _ in _stage_report(many)] == ["first", "fed"]


def test_bad_stages_are_refused():
    with pytest.raises(ValueError, match="plan"):
        Stage("bad", {"plan": "nowhere"}, 1.0)
    with pytest.raises(ValueError, match="no_such_option"):
        Stage("bad", {"no_such_option": 1}, 1.0)
    with pytest.raises(ValueError, match="when"):
        Stage("bad", {}, 1.0, when="sometimes")


def test_same_search_compares_the_plan_a_level_gets_and_every_search_option():
    from planners.fess.search import _same_search

    sinkless = load_levels("microban:2")[0].board
    with_sink = load_levels("xsokoban:1")[0].board
    default = FessOptions()
    targets = FessOptions(plan="targets")
    assert _same_search(default, targets, sinkless)
    assert not _same_search(default, targets, with_sink)
    assert not _same_search(default, FessOptions(sinkless="unordered"), sinkless)
    assert not _same_search(default, FessOptions(pi_corrals=False), sinkless)
    paper = FessOptions(sink_choice="paper")  # a sink room's choice: no sink, no change
    assert _same_search(default, paper, sinkless)
    assert not _same_search(default, paper, with_sink)


def test_the_plan_free_space_solves_and_reads_nothing_of_the_plan():
    level = load_levels("microban:7")[0]
    result = solve(level, space="free", advisors=("best",))
    assert result.solved and verify(level, result.lurd).ok
    run = FessRun(FessOptions(space="free", advisors=("best",)), level.board, SearchLimits(), None)
    node = run.node_moves(level.board.start_boxes.astype(np.int32), int(level.board.start_player))
    assert node.features.oop == 0 and node.features.packed == 0
    assert (node.full[:, M_OOP] == 0).all() and (node.full[:, M_PACKED] == 0).all()
    assert len(node.advised) == 1  # the one advisor picks one move


def test_microban_ii_131_the_diagonal_band_is_solved():
    """A band of 44 boxes whose cheapest-looking first pushes close diagonals (fess_diagonal)."""
    level = load_levels("microban2:131")[0]
    result = planners.solve(level, "fess", SearchLimits(max_seconds=120))
    assert result.solved, result.status
    assert verify(level, result.lurd).ok
    assert result.stats["deadlocks"]["diagonal"] > 0
