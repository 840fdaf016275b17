"""The FESS move generator's graph kernels against plain flood fills on real positions."""

import numpy as np
import pytest

from planners._kernels.fess import count_regions
from planners._kernels.fess_blocks import block_box_paths, edge_blocks
from planners._kernels.fess_move_data import new_move_scratch
from soko_gym.engine.constants import BOX_AT_DTYPE, DIST_INF, FLOOR
from soko_gym.engine.distance import dead_sides
from soko_gym.engine.macro import box_paths
from soko_gym.engine.reach import new_stamps, reach_player
from soko_gym.levels import load_levels


def _positions(selection, n_random, seed=0):
    """Each level's start position plus random box placements on its floor."""
    rng = np.random.default_rng(seed)
    for level in load_levels(selection):
        b = level.board
        yield b, b.start_boxes.astype(np.int32), int(b.start_player)
        for _ in range(n_random):
            squares = rng.permutation(b.floor)[: b.n_boxes + 1]
            yield b, squares[:-1].astype(np.int32), int(squares[-1])


def _box_at(b, box_pos):
    box_at = np.full(b.n_cells, -1, dtype=BOX_AT_DTYPE)
    box_at[box_pos] = np.arange(box_pos.shape[0])
    return box_at


def _connected_without(b, box_at, q, s, t, stamps, stack):
    """Flood-fill answer: are neighbours s and t of q connected once q is blocked too."""
    box_at[q] = 0
    reach_player(box_at, b.offsets, s, stamps, stack)
    box_at[q] = -1
    return stamps[t] == stamps[-1]


def _region_root(b, box_at, sq):
    """The smallest square of the player region holding free square ``sq`` (a flood fill)."""
    label = np.full(b.n_cells, -1, dtype=np.int32)
    stack = np.zeros(b.n_cells, dtype=np.int32)
    count_regions(b.cells, box_at, b.offsets, b.floor, label, stack)
    return int(np.flatnonzero(label == label[sq])[0]), label


@pytest.mark.parametrize("selection", ["microban:1-20", "xsokoban:1-3"])
def test_edge_blocks_match_flood_fills(selection):
    # one scratch for a level's positions: the numbers of earlier calls must read as
    # unvisited; every other position starts where the numbers are cleared and begin again
    sc = None
    for i, (b, box_pos, _) in enumerate(_positions(selection, 3)):
        box_at = _box_at(b, box_pos)
        if sc is None or sc.disc.shape[0] != b.n_cells:
            sc = new_move_scratch(b.cells, b.n_boxes, 0)
        if i % 2:
            sc.dfs_info[2] = (1 << 30) + 1
        stamps = new_stamps(b.cells)
        stack = np.zeros(b.n_cells, dtype=np.int32)
        free = ((b.cells & FLOOR) != 0) & (box_at < 0)
        roots = set()
        for q in b.floor.tolist():
            if free[q]:
                roots.add(_region_root(b, box_at, q)[0])
        for root in sorted(roots):
            _, label = _region_root(b, box_at, root)
            edge_blocks(b.cells, box_at, b.offsets, root, sc)
            region = np.flatnonzero(label == label[root])
            tagged = np.flatnonzero(sc.region == sc.region[root])
            assert np.array_equal(tagged, region)  # exactly the region's squares hold its tag
            assert sorted(sc.order[: sc.dfs_info[0]].tolist()) == region.tolist()
            assert sc.order[0] == root
            _check_blocks(b, box_at, sc, region, free, stamps, stack)


def _check_blocks(b, box_at, sc, region, free, stamps, stack):
    """Neighbours of a square share an edge block exactly when they stay connected without it."""
    for q in region.tolist():
        sides = [d for d in range(4) if free[q + int(b.offsets[d])]]
        for i, s in enumerate(sides):
            for t in sides[i + 1 :]:
                same = sc.block[q * 4 + s] == sc.block[q * 4 + t]
                qs, qt = q + int(b.offsets[s]), q + int(b.offsets[t])
                assert same == _connected_without(b, box_at, q, qs, qt, stamps, stack)


@pytest.mark.parametrize("selection", ["microban:1-20", "xsokoban:1-3"])
def test_block_box_paths_equal_the_engines_box_paths(selection):
    moved = 0
    cut = 0
    firsts = 0
    for b, box_pos, player in _positions(selection, 2, seed=1):
        if b.n_boxes == 0:
            continue
        box_at = _box_at(b, box_pos)
        sc = new_move_scratch(b.cells, b.n_boxes, 0)
        stamps = new_stamps(b.cells)
        stack = np.zeros(b.n_cells, dtype=np.int32)
        count_regions(b.cells, box_at, b.offsets, b.floor, sc.pos_label, stack)
        own = int(sc.pos_label[player])
        dist = np.zeros(4 * b.n_cells, dtype=np.uint16)
        parent = np.zeros(4 * b.n_cells, dtype=np.int32)
        queue = np.zeros(4 * b.n_cells, dtype=np.int32)
        dead_side = dead_sides(b.push_dist)
        no_dead = np.zeros_like(dead_side)
        for src in box_pos.tolist():
            box_paths(b.cells, box_at, b.offsets, player, src, stamps, stack, dist, parent, queue)
            expected = dist.copy()
            k = box_at[src]
            box_at[src] = -1
            edge_blocks(b.cells, box_at, b.offsets, _region_root(b, box_at, src)[0], sc)
            block_box_paths(b.cells, no_dead, box_at, b.offsets, src, sc, 1, sc.kinds, own)
            assert np.array_equal(sc.dist, expected)
            firsts += _check_first_pushes(b, box_at, k, src, sc, expected, player)
            # with dead states cut: the live states keep their distances, the dead ones are
            # never reached (but for the box's own square)
            block_box_paths(b.cells, dead_side, box_at, b.offsets, src, sc, 2, sc.kinds, own)
            box_at[src] = k
            expected[(dead_side == 1) & (expected != 0)] = DIST_INF
            assert np.array_equal(sc.dist, expected)
            moved += int((expected[4:] != DIST_INF).sum() > 1)
            cut += int((dist != expected).sum())
    assert moved > 10  # the comparison covered boxes that really move
    assert cut > 0  # and dead states the plain search reaches
    assert firsts > 100


def _check_first_pushes(b, box_at, k, src, sc, dist, player):
    """Each reached state's ``sc.first`` starts one of its shortest push paths.

    The box on ``src`` is lifted (``box_at[src] == -1``; ``k`` its index): push it once in
    that direction and the state is one push closer. Returns the states checked.
    """
    states = np.flatnonzero((dist != DIST_INF) & (dist > 0))
    stamps = new_stamps(b.cells)
    stack = np.zeros(b.n_cells, dtype=np.int32)
    after = np.zeros_like(dist)
    parent = np.zeros(4 * b.n_cells, dtype=np.int32)
    queue = np.zeros(4 * b.n_cells, dtype=np.int32)
    for d in np.unique(sc.first[states]).tolist():
        nxt = src + int(b.offsets[d])
        box_at[nxt] = k
        box_paths(b.cells, box_at, b.offsets, src, nxt, stamps, stack, after, parent, queue)
        box_at[nxt] = -1
        mine = states[sc.first[states] == d]
        assert np.array_equal(after[mine], dist[mine] - 1)
    return len(states)


def test_bipartite_shortcut_only_skips_moves_that_keep_a_perfect_matching():
    from planners._kernels.fess_moves import _may_break_matching, goal_bit_table
    from soko_gym.engine.lowerbound import bipartite_deadlock

    skipped = 0
    for b, box_pos, _ in _positions("microban:1-30", 4, seed=2):
        seen = np.zeros(b.n_cells + 1, dtype=np.uint32)
        work = np.zeros((4, max(1, b.n_boxes)), dtype=np.int32)

        def dead(pos, b=b, seen=seen, work=work):
            return bipartite_deadlock(
                b.cells, b.dead, b.goals, b.goal_dist, pos, b.offsets, seen, work
            )

        if dead(box_pos):
            continue
        bits = goal_bit_table(b.goal_dist)
        occupied = set(box_pos.tolist())
        for i, src in enumerate(box_pos.tolist()):
            for dst in b.floor.tolist():
                if dst in occupied or b.dead[dst]:
                    continue
                if not _may_break_matching(b.cells, bits, src, dst):
                    moved = box_pos.copy()
                    moved[i] = dst
                    # a box frozen off goal is rejected by the freeze test, which runs first
                    assert not dead(moved) or _frozen_off_goal(b, moved)
                    skipped += 1
    assert skipped > 100


def _frozen_off_goal(b, box_pos):
    from soko_gym.engine.constants import GOAL
    from soko_gym.engine.lowerbound import mark_frozen_boxes

    seen = np.zeros(b.n_cells + 1, dtype=np.uint32)
    if mark_frozen_boxes(b.cells, b.dead, box_pos, b.offsets, seen) == 0:
        return False
    frozen = box_pos[seen[box_pos] == seen[-1]]
    return bool(((b.cells[frozen] & GOAL) == 0).any())


def test_the_feature_cache_gives_the_moves_a_fresh_generator_gives():
    # one FESS run's positions through push_moves twice with one scratch (the second pass is
    # answered from the feature cache) and once per position with a fresh scratch
    from planners import SearchLimits
    from planners._kernels.fess_moves import push_moves
    from planners.fess.options import FessOptions
    from planners.fess.run import FessRun

    for level in load_levels("xsokoban:1") + load_levels("microban:60"):
        b = level.board
        run = FessRun(FessOptions(), b, SearchLimits(max_nodes=300), None)
        run.run()
        positions = run.positions()[:150]
        shared = new_move_scratch(b.cells, b.n_boxes, run.rooms.n_rooms, cache_bits=12)

        def moves(sc, pos, player, run=run):
            run._load(pos)
            k = push_moves(run.move_tables, sc, run.learned.tables, run.box_at, pos, player,
                           run.work.moves)  # fmt: skip
            return run.work.moves[:k].copy()

        for _ in range(2):
            for pos, player in positions:
                fresh = new_move_scratch(b.cells, b.n_boxes, run.rooms.n_rooms, cache_bits=2)
                assert np.array_equal(moves(shared, pos, player), moves(fresh, pos, player))
        assert (shared.cache_val[:, 0] != -2).sum() > 0  # the cache was filled and used


@pytest.mark.parametrize("selection", ["xsokoban:1", "xsokoban:10", "microban:20", "xsokoban:31"])
def test_each_move_has_the_child_region_mobility_and_explorer_count_a_fill_gives(selection):
    # the generator fills the child's player region only where the moved box splits it; the
    # normalized square, mobility and explorer count must equal those of a fill everywhere
    from planners import SearchLimits
    from planners._kernels.fess_moves import (
        M_BOX,
        M_DST,
        M_MOB,
        M_NEW_PUSHES,
        M_NORM,
        M_PLAYER,
        M_ROOMS,
    )  # fmt: skip
    from planners.fess.features import FeatureEvaluator
    from planners.fess.options import FessOptions
    from planners.fess.run import FessRun
    from soko_gym.engine.board import State

    level = load_levels(selection)[0]
    b = level.board
    run = FessRun(FessOptions(pi_corrals=False), b, SearchLimits(max_nodes=400), None)
    run.run()
    ev = FeatureEvaluator(b, run.rooms, run.features.hot)
    stamps, stack = new_stamps(b.cells), np.zeros(b.n_cells, dtype=np.int32)
    checked = 0
    split = 0
    for pos, player in run.positions()[::7]:
        parent = State.from_squares(b, pos.tolist(), player)
        reach_player(parent.box_at, b.offsets, player, stamps, stack)
        known = (stamps[:-1] == stamps[-1]) | (parent.box_at >= 0)
        for m in run.node_moves(pos, player).full:
            child = pos.copy()
            child[m[M_BOX]] = m[M_DST]
            state = State.from_squares(b, child.tolist(), int(m[M_PLAYER]))
            _, norm = reach_player(state.box_at, b.offsets, int(m[M_PLAYER]), stamps, stack)
            region = stamps[:-1] == stamps[-1]
            assert m[M_NORM] == norm
            around = [int(m[M_DST]) + int(o) for o in b.offsets]
            split += any(
                b.cells[v] & FLOOR and state.box_at[v] < 0 and not region[v] for v in around
            )
            assert m[M_MOB] == ev.mobility(state.box_at, child, int(m[M_PLAYER]))[0]
            assert m[M_ROOMS] == ev.room_connectivity(state.box_at)
            new = 0
            for q in child.tolist():
                for d in range(4):
                    side, ahead = q - int(b.offsets[d]), q + int(b.offsets[d])
                    if (
                        region[side]
                        and not known[side]
                        and b.cells[ahead] & FLOOR
                        and state.box_at[ahead] < 0
                        and not b.dead[ahead]
                    ):
                        new += 1
            assert m[M_NEW_PUSHES] == new
            checked += 1
        # one move per player region around the box: never two with the same region
        keys = [
            (int(m[M_BOX]), int(m[M_DST]), int(m[M_NORM])) for m in run.node_moves(pos, player).full
        ]
        assert len(keys) == len(set(keys))
    assert checked >= 5
    assert split > 0  # moves whose box cuts its region in parts (the sums, not a fill)


def _colliding(tables):
    """``MoveTables`` with every Zobrist key 0: every box set hashes alike (forced collisions)."""
    return tables._replace(zobrist=np.zeros_like(tables.zobrist))


def test_the_feature_cache_never_takes_a_colliding_box_set_for_another():
    # every child hashes alike, so each look-up after the first meets a stored hash: trusting
    # it, the cache would hand a move the deadlock verdict and features of another box set
    from planners import SearchLimits
    from planners._kernels.fess_moves import push_moves
    from planners._kernels.fess_room_count import new_room_count
    from planners.fess.options import FessOptions
    from planners.fess.run import FessRun

    rejected = 0
    for level in load_levels("xsokoban:1") + load_levels("microban:60"):
        b = level.board
        run = FessRun(FessOptions(), b, SearchLimits(max_nodes=300), None)
        run.run()
        n_rooms = run.rooms.n_rooms
        sc = new_move_scratch(b.cells, b.n_boxes, n_rooms, cache_bits=12)
        # the room counts' own memo is keyed by hash alone (a feature, never a prune): off
        sc = sc._replace(rooms=new_room_count(sc.label, sc.stack, n_rooms, memo_bits=0))

        def moves(tables, sc, pos, player, run=run):
            run._load(pos)
            k = push_moves(tables, sc, run.learned.tables, run.box_at, pos, player, run.work.moves)
            return run.work.moves[:k].copy()

        for pos, player in run.positions()[:150]:
            fresh = new_move_scratch(b.cells, b.n_boxes, n_rooms, cache_bits=2)
            got = moves(_colliding(run.move_tables), sc, pos, player)
            assert np.array_equal(got, moves(run.move_tables, fresh, pos, player))
        rejected += int(sc.kinds.sum())
    assert rejected > 0  # moves were rejected as dead, their verdicts cached


def test_the_room_search_never_takes_a_colliding_position_for_a_visited_one():
    # every position of a room search hashes alike: trusting the hash, the search would store
    # one position per player region, run dry and call a live room dead
    from planners import SearchLimits
    from planners._kernels.fess_room_deadlock import (
        ROOM_DEADLOCK,
        ROOM_OPEN,
        new_room_scratch,
        room_deadlock,
    )  # fmt: skip
    from planners.fess.options import FessOptions
    from planners.fess.run import FessRun

    answers = []
    for selection in ("xsokoban:1", "xsokoban:13"):
        b = load_levels(selection)[0].board
        run = FessRun(FessOptions(), b, SearchLimits(max_nodes=200), None)
        run.run()
        t = run.tables
        rs = new_room_scratch(b.n_cells, 256)
        for pos, player in run.positions()[:100]:
            run._load(pos)
            for r in range(t.room_start.shape[0] - 1):
                squares = t.room_sq[t.room_start[r] : t.room_start[r + 1]]
                args = (run.scratch, rs, run.box_at, t.room_area[r], squares, player, 256)
                status = room_deadlock(run.move_tables, *args)
                assert room_deadlock(_colliding(run.move_tables), *args) == status
                answers.append(int(status))
    assert ROOM_DEADLOCK in answers and ROOM_OPEN in answers
