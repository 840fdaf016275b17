from collections import deque

import numpy as np
import pytest

import planners
import soko_gym
from soko_gym.engine import patterns
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.patterns import (
    is_pattern_deadlock,
    is_pattern_deadlock_of,
    level_patterns,
    pattern_library,
)
from soko_gym.levels import lurd_to_pushes
from soko_gym.levels.generator import generate_level

# Three boxes next to a pocket: pushing the middle box into the pocket freezes it there, and
# nothing else frees the top pair; no box is frozen now, so the freeze test misses it.
POCKET = (
    "##########\n"
    "#        #\n"
    "#   #$   #\n"
    "#  # $$  #\n"
    "#   #    #\n"
    "#        #\n"
    "# ...   @#\n"
    "##########\n"
)


def python_is_deadlock(h, w, walls, boxes):
    """Reference: forward search of the relaxed problem (module docstring), every start."""
    wall = {divmod(i, w) for i in range(h * w) if walls >> i & 1}
    start = frozenset(divmod(i, w) for i in range(h * w) if boxes >> i & 1)

    def inside(sq):
        return 0 <= sq[0] < h and 0 <= sq[1] < w

    def region(bx, sq):
        seen = {sq}
        todo = [sq]
        while todo:
            r, c = todo.pop()
            for nb in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if -1 <= nb[0] <= h and -1 <= nb[1] <= w and nb not in seen:
                    if nb not in wall and nb not in bx:
                        seen.add(nb)
                        todo.append(nb)
        return frozenset(seen)

    free = [(r, c) for r in range(-1, h + 1) for c in range(-1, w + 1)]
    free = [sq for sq in free if sq not in wall and sq not in start]
    starts = {region(start, sq) for sq in free}
    seen = {(start, reg) for reg in starts}
    todo = deque(seen)
    while todo:
        bx, reg = todo.popleft()
        if not bx:
            return False
        for r, c in bx:
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                side, dest = (r - dr, c - dc), (r + dr, c + dc)
                if side not in reg or dest in wall or dest in bx:
                    continue
                nbx = bx - {(r, c)}
                if inside(dest):
                    nbx = nbx | {dest}
                nxt = (frozenset(nbx), region(nbx, (r, c)))
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
    return True


def embed(pattern):
    """An open room with the pattern in its middle and the goals in a far corner."""
    h, w, walls, boxes = (int(x) for x in pattern)
    rows = [["#"] * (w + 8) for _ in range(h + 8)]
    for r in range(1, h + 7):
        for c in range(1, w + 7):
            rows[r][c] = " "
    for i in range(h * w):
        r, c = divmod(i, w)
        rows[r + 4][c + 4] = "#" if walls >> i & 1 else "$" if boxes >> i & 1 else " "
    for k in range(bin(boxes).count("1")):
        rows[h + 6][1 + k] = "."
    rows[1][w + 6] = "@"
    return soko_gym.Level.from_xsb("\n".join("".join(r) for r in rows) + "\n")


def fires_somewhere(board, state, placed):
    return any(
        is_pattern_deadlock_of(board, state, int(sq), placed) for sq in state.box_pos.tolist()
    )


def test_pattern_library__is_small_canonical_and_generated_once():
    lib = pattern_library()
    assert pattern_library() is lib
    assert 0 < lib.patterns.shape[0] <= lib.n_deadlocks
    keys = [tuple(int(x) for x in p) for p in lib.patterns]
    assert len(set(keys)) == len(keys)
    for h, w, walls, boxes in keys:
        assert 2 <= h <= w <= 4 and not walls & boxes
        assert 1 <= bin(boxes).count("1") <= patterns.MAX_PATTERN_BOXES
        assert patterns._canonical(h, w, walls, boxes) == (h, w, walls, boxes)


def test_pattern_library__every_pattern_is_a_minimal_deadlock_by_the_reference_search():
    for pattern in pattern_library().patterns:
        h, w, walls, boxes = (int(x) for x in pattern)
        assert python_is_deadlock(h, w, walls, boxes)
        for i in range(h * w):
            if (walls | boxes) >> i & 1:
                assert not python_is_deadlock(h, w, walls & ~(1 << i), boxes & ~(1 << i))
        assert not patterns._is_frozen(h, w, walls, boxes)


@pytest.mark.parametrize(("h", "w"), [(2, 3), (3, 3), (3, 4), (4, 4)])
def test_shape_tables__agree_with_the_reference_search(h, w):
    visited = np.zeros(1 + (1 << 16) * 36, dtype=np.uint32)
    tab = patterns._shape_tables(h, w, 3, visited)
    rng = np.random.default_rng(h * 10 + w)
    for _ in range(150):
        walls = int(rng.integers(0, 1 << (h * w))) & int(rng.integers(0, 1 << (h * w)))
        free = [i for i in range(h * w) if not walls >> i & 1]
        k = int(rng.integers(1, min(3, len(free)) + 1)) if free else 0
        boxes = sum(1 << int(i) for i in rng.choice(free, size=k, replace=False)) if k else 0
        assert tab.is_deadlock(walls, boxes) == python_is_deadlock(h, w, walls, boxes)


def test_is_pattern_deadlock__catches_what_the_freeze_test_misses():
    level = soko_gym.Level.from_xsb(POCKET)
    board = level.board
    state = board.initial_state()
    sq = 3 * board.width + 6  # the right box, as if just pushed there
    seen = np.zeros(board.n_cells + 1, dtype=np.uint32)
    trail = np.empty(board.n_cells, dtype=np.int32)
    for box in state.box_pos.tolist():
        assert not is_simple_deadlock(
            board.cells, board.dead, state.box_at, board.offsets, box, seen, trail
        )
    placed = level_patterns(board)
    assert is_pattern_deadlock_of(board, state, sq, placed)
    # and the level really is lost: a complete search finds no solution
    result = planners.solve(level, "astar", planners.SearchLimits(max_seconds=20))
    assert result.status == "unsolvable"


def test_is_pattern_deadlock__silent_when_a_goal_is_in_the_window():
    level = soko_gym.Level.from_xsb(
        POCKET.replace("#   #    #", "#   #.   #").replace("...", ".. ")
    )
    placed = level_patterns(level.board)
    state = level.board.initial_state()
    assert not fires_somewhere(level.board, state, placed)


def test_is_pattern_deadlock__fires_on_every_library_pattern_placed_in_a_room():
    for pattern in pattern_library().patterns:
        level = embed(pattern)
        board = level.board
        state = board.initial_state()
        assert fires_somewhere(board, state, level_patterns(board)), pattern


def replay_silent(level, lurd):
    board = level.board
    state = board.initial_state()
    placed = level_patterns(board)
    for sq, d in lurd_to_pushes(level, lurd):
        state.apply_push(board, int(state.box_at[sq]) * 4 + d)
        dest = sq + int(board.offsets[d])
        assert not is_pattern_deadlock(
            state.box_at, dest, placed.square_start, placed.square_instance, placed.instance_boxes
        )
    assert not fires_somewhere(board, state, placed)
    return placed.n_instances


def test_is_pattern_deadlock__never_fires_along_microban_astar_solutions():
    n_instances = 0
    for level in soko_gym.load_levels("microban:1-40"):
        result = planners.solve(level, "astar", planners.SearchLimits(max_seconds=20))
        assert result.solved
        n_instances += replay_silent(level, result.lurd)
    assert n_instances > 0  # the check is not vacuous


@pytest.mark.parametrize("n_boxes", [2, 3, 4])
def test_is_pattern_deadlock__never_fires_along_generated_solutions(n_boxes):
    for seed in range(25):
        gen = generate_level(np.random.default_rng(seed), width=7, height=7, n_boxes=n_boxes)
        replay_silent(gen.level, gen.solution)


def test_warmup_patterns__compiles_the_kernel():
    patterns.warmup_patterns()
    assert is_pattern_deadlock.signatures
