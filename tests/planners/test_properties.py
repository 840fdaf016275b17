"""Properties every planner keeps on random small levels: pruning never cuts the only solution,
and the push-optimal planners agree with a plain BFS that prunes nothing."""

from collections import deque

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import planners
import soko_gym
from planners import SearchLimits
from soko_gym.levels import generate_level


def plain_push_bfs(level):
    """Fewest pushes by breadth-first search over (boxes, player region), no pruning."""
    grid = level.grid
    h, w = grid.shape
    floor = {(r, c) for r in range(h) for c in range(w) if grid[r, c] != "#"}
    goals = {(r, c) for r, c in floor if grid[r, c] in ".*+"}
    steps = ((-1, 0), (1, 0), (0, -1), (0, 1))

    def region(boxes, player):
        seen, todo = {player}, [player]
        while todo:
            r, c = todo.pop()
            for dr, dc in steps:
                nxt = (r + dr, c + dc)
                if nxt in floor and nxt not in boxes and nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    start = frozenset(level.boxes)
    reach = region(start, level.player)
    seen = {(start, min(reach))}
    queue = deque([(start, reach, 0)])
    while queue:
        boxes, reach, depth = queue.popleft()
        if boxes <= goals:
            return depth
        for r, c in boxes:
            for dr, dc in steps:
                dest = (r + dr, c + dc)
                if (r - dr, c - dc) in reach and dest in floor and dest not in boxes:
                    nxt = (boxes - {(r, c)}) | {dest}
                    nreach = region(nxt, (r, c))
                    key = (nxt, min(nreach))
                    if key not in seen:
                        seen.add(key)
                        queue.append((nxt, nreach, depth + 1))
    return None


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.integers(6, 7), n_boxes=st.integers(1, 3))
def test_planners__never_cut_the_only_solution(seed, size, n_boxes):
    made = generate_level(
        np.random.default_rng(seed), width=size, height=size, n_boxes=n_boxes, min_pushes=1
    )
    level = made.level
    optimum = plain_push_bfs(level)
    assert optimum is not None and optimum <= made.pushes
    limits = SearchLimits(max_seconds=20)
    for name in ("astar", "idastar", "bfs", "iddfs-zobrist", "greedy", "zobrist-dfs"):
        result = planners.solve(level, name, limits)
        assert result.solved, (name, level.to_xsb())
        assert soko_gym.verify(level, result.lurd).ok
        if result.optimal:
            assert result.pushes == optimum, (name, level.to_xsb())
    for bound in ("simple", "matching"):
        assert planners.solve(level, "astar", limits, bound=bound).pushes == optimum
    assert planners.solve(level, "astar", limits, tunnels=False).pushes == optimum


def _boxes_moved(level, rng):
    """``level`` with its boxes put on random floor squares (often unsolvable then)."""
    grid = level.grid.copy()
    for r, c in level.boxes:
        grid[r, c] = "." if grid[r, c] == "*" else " "
    floor = [(int(r), int(c)) for r, c in np.argwhere(grid != "#")]
    floor.remove(level.player)
    for i in rng.choice(len(floor), size=level.n_boxes, replace=False):
        r, c = floor[i]
        grid[r, c] = "*" if grid[r, c] == "." else "$"
    return soko_gym.Level.from_xsb("\n".join("".join(row) for row in grid))


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    size=st.integers(6, 7),
    n_boxes=st.integers(1, 3),
    moved=st.booleans(),
)
def test_fess__solves_what_the_oracle_solves_and_nothing_else(seed, size, n_boxes, moved):
    rng = np.random.default_rng(seed)
    level = generate_level(rng, width=size, height=size, n_boxes=n_boxes, min_pushes=1).level
    if moved:
        level = _boxes_moved(level, rng)
    optimum = plain_push_bfs(level)
    result = planners.solve(level, "fess", SearchLimits(max_seconds=20))
    if optimum is None:  # proven unsolvable: FESS must not claim a solution
        assert result.status != "solved" and not result.lurd, level.to_xsb()
    else:  # not push-optimal, but it must solve it and never call it unsolvable
        assert result.solved, (result.status, level.to_xsb())
        check = soko_gym.verify(level, result.lurd)
        assert check.ok and check.pushes >= optimum
