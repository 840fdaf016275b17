from dataclasses import replace

import numpy as np
import pytest

import soko_gym
from planners._kernels.fess_move_data import (
    M_BOX,
    M_CONN,
    M_DST,
    M_HOT,
    M_MOB,
    M_NEW_PUSHES,
    M_OOP,
    M_PACKED,
    M_ROOMS,
    M_SRC,
    N_MOVE_COLS,
)
from planners.fess.advisors import (
    ADVISORS,
    PAPER_ADVISORS,
    AdvisorContext,
    Features,
    best_advisor,
    best_of,
    connectivity_advisor,
    explorer_advisor,
    hotspots_advisor,
    opener_advisor,
    out_of_plan_advisor,
    packing_advisor,
    room_connectivity_advisor,
    target_holes,
)

W = 10  # board width of the synthetic positions: square = row * W + col


def table(rows):
    """A move table from dicts of column -> value (other columns: the parent's features)."""
    out = np.zeros((len(rows), N_MOVE_COLS), dtype=np.int32)
    for i, r in enumerate(rows):
        out[i, M_OOP] = 1
        out[i, M_PACKED] = 2
        out[i, M_CONN] = 3
        out[i, M_ROOMS] = 1
        out[i, M_HOT] = 2
        out[i, M_MOB] = 10
        for col, value in r.items():
            out[i, col] = value
    return out


def context(box_pos=(11, 55), hot_counts=(0, 0), oop=(False, False), basin=None):
    basin = np.zeros(100, np.uint8) if basin is None else basin
    dist = np.where(basin > 0, 0, 5).astype(np.int32)
    return AdvisorContext(
        features=Features(oop=1, packed=2, conn=3, rooms=1, hot=2, mob=10),
        box_pos=np.array(box_pos, np.int32),
        hot_counts=np.array(hot_counts, np.int32),
        oop_mask=np.array(oop, bool),
        basin=basin,
        basin_dist=dist,
        width=W,
    )


def test_best_of_follows_the_paper_feature_order():
    moves = table([{M_PACKED: 3, M_CONN: 5}, {M_OOP: 0}, {M_OOP: 0, M_MOB: 12}])
    assert best_of(moves, np.array([True, True, True])) == 2  # OOP first, mobility last
    assert best_of(moves, np.array([True, False, False])) == 0
    assert best_of(moves, np.zeros(3, bool)) == -1


def test_packing_advisor_picks_the_best_packing_move():
    moves = table([{}, {M_PACKED: 3, M_CONN: 4}, {M_PACKED: 3, M_CONN: 2}])
    assert packing_advisor(moves, context()) == 2
    assert packing_advisor(table([{}, {}]), context()) == -1


def test_connectivity_room_and_hotspot_advisors_pick_improving_moves():
    moves = table([{M_CONN: 2}, {M_ROOMS: 0}, {M_HOT: 1}, {}])
    ctx = context()
    assert connectivity_advisor(moves, ctx) == 0
    assert room_connectivity_advisor(moves, ctx) == 1
    assert hotspots_advisor(moves, ctx) == 2


def test_explorer_advisor_needs_a_new_push():
    moves = table([{}, {M_NEW_PUSHES: 1, M_CONN: 4}, {}])
    assert explorer_advisor(moves, context()) == 1
    assert explorer_advisor(table([{}]), context()) == -1


def test_opener_pushes_the_hottest_box_or_a_neighbour_away_from_it():
    ctx = context(box_pos=(44, 46), hot_counts=(3, 0))
    # the hotspot itself can move without worsening connectivity: that move
    moves = table([{M_BOX: 1, M_SRC: 46, M_DST: 48}, {M_BOX: 0, M_SRC: 44, M_DST: 24}])
    assert opener_advisor(moves, ctx) == 1
    # it cannot (its only move worsens connectivity): push box 1 away from it, not towards
    moves = table(
        [
            {M_BOX: 0, M_SRC: 44, M_DST: 24, M_CONN: 4},
            {M_BOX: 1, M_SRC: 46, M_DST: 45},
            {M_BOX: 1, M_SRC: 46, M_DST: 48},
        ]
    )
    assert opener_advisor(moves, ctx) == 2
    assert opener_advisor(moves, context(hot_counts=(0, 0))) == -1


def test_out_of_plan_advisor_pushes_the_oop_box_into_the_basin():
    basin = np.zeros(100, np.uint8)
    basin[[71, 72, 73]] = 1
    ctx = context(box_pos=(52, 53), oop=(True, False), basin=basin)
    moves = table(
        [
            {M_BOX: 0, M_SRC: 52, M_DST: 42},
            {M_BOX: 0, M_SRC: 52, M_DST: 72},
            {M_BOX: 1, M_SRC: 53, M_DST: 73},
        ]
    )
    assert out_of_plan_advisor(moves, ctx) == 1
    # the OOP box cannot reach the basin: a nearby box goes in to make room
    assert out_of_plan_advisor(moves[[0, 2]], ctx) == 1
    assert out_of_plan_advisor(moves, context(box_pos=(52, 53), basin=basin)) == -1


def test_every_advisor_is_registered():
    assert set(ADVISORS) == {
        "packing",
        "connectivity",
        "room_connectivity",
        "hotspots",
        "explorer",
        "opener",
        "out_of_plan",
        "best",
    }
    assert PAPER_ADVISORS == tuple(a for a in ADVISORS if a != "best")


def test_best_advisor_pushes_into_a_target_hole_first_else_the_best_move():
    moves = table(
        [
            {M_BOX: 0, M_SRC: 11, M_DST: 12, M_CONN: 1},  # the best by the feature order
            {M_BOX: 1, M_SRC: 55, M_DST: 56, M_CONN: 3},
            {M_BOX: 1, M_SRC: 55, M_DST: 57, M_CONN: 4},
        ]
    )
    assert best_advisor(moves, context()) == 0  # no holes: the best, though it packs nothing
    holes = np.zeros(100, np.uint8)
    holes[57] = 1
    assert best_advisor(moves, replace(context(), holes=holes)) == 2


@pytest.mark.parametrize("name", sorted(ADVISORS))
def test_advisors_accept_an_empty_move_table(name):
    assert ADVISORS[name](table([]), context(hot_counts=(1, 0), oop=(True, False))) == -1


def _python_picks(run, node, moves):
    """Each Python advisor's pick on a real node (the reference for the ordering kernel)."""
    p = run.plan
    count = np.zeros(run.board.n_cells, dtype=np.int32)
    np.add.at(count, p.dst[: node.features.packed], 1)
    src = p.src[: node.features.packed]
    np.add.at(count, src[src >= 0], -1)
    ctx = AdvisorContext(
        features=node.features,
        box_pos=node.box_pos,
        hot_counts=run.features.hotspot_counts(node.box_pos),
        oop_mask=(p.basin[node.box_pos] == 0) & (count[node.box_pos] <= 0),
        basin=p.basin,
        basin_dist=run.basin_dist,
        width=run.board.width,
        holes=target_holes(run.board),
    )
    return {name: fn(moves, ctx) for name, fn in ADVISORS.items()}


@pytest.mark.parametrize("selection", ["xsokoban:1", "xsokoban:2", "microban:20"])
def test_ordering_kernel_picks_what_the_python_advisors_pick(selection):
    import planners
    from planners import SearchLimits
    from planners.fess.options import FessOptions
    from planners.fess.run import FessRun
    from soko_gym.levels import verify

    # every advisor on, the best one too: each must pick what its Python reference picks
    level = soko_gym.load_levels(selection)[0]
    lurd = planners.solve(level, "astar", SearchLimits(max_seconds=60)).lurd
    run = FessRun(
        FessOptions(pi_corrals=False, advisors=tuple(ADVISORS)), level.board, SearchLimits(), None
    )
    checked = 0
    pushes = [i for i, c in enumerate(lurd) if c.isupper()]
    for i in [-1, *pushes[:: max(1, len(pushes) // 8)]]:  # start and positions on the path
        state = verify(level, lurd[: i + 1]).state if i >= 0 else None
        pos = (state.box_pos if state else level.board.start_boxes).astype(np.int32).copy()
        player = int(state.player if state else level.board.start_player)
        node = run.node_moves(pos, player)
        n_moves = node.moves.shape[0]
        if n_moves == 0:
            continue
        expected = _python_picks(run, node, node.full)
        for a, name in enumerate(ADVISORS):
            picked = [j for j, bits in node.advised.items() if (bits >> a) & 1]
            assert picked == ([expected[name]] if expected[name] >= 0 else []), name
        assert np.array_equal(np.sort(node.order), np.arange(n_moves))
        checked += 1
    assert checked >= 5
