"""Moves-optimal solutions (``planners.fewest_moves``) and push-optimal A* on corridors."""

from collections import deque

import pytest

from planners import solve
from planners.fewest_moves import fewest_moves
from soko_gym.errors import SolutionError
from soko_gym.levels import Level, load_levels, verify
from soko_gym.levels.corridor import corridor_suite

# Microban levels whose whole move graph a plain Python BFS walks in well under a second; on
# 6, 10, 13, 15, 17, 19 and 20 the push-optimal solution is not the moves-optimal one
MICROBAN = (1, 2, 3, 6, 10, 13, 15, 17, 19, 20)


def fewest_moves_by_brute_force(level):
    """Breadth-first over every (player, boxes) position: the fewest moves, no pruning."""
    walls, goals = level.walls, frozenset(level.goals)
    start = (level.player, frozenset(level.boxes))
    seen, queue = {start}, deque([(start, 0)])
    while queue:
        (player, boxes), moves = queue.popleft()
        if boxes == goals:
            return moves
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            step = (player[0] + dr, player[1] + dc)
            if step in walls:
                continue
            moved = boxes
            if step in boxes:
                to = (step[0] + dr, step[1] + dc)
                if to in walls or to in boxes:
                    continue
                moved = boxes - {step} | {to}
            if (step, moved) not in seen:
                seen.add((step, moved))
                queue.append(((step, moved), moves + 1))
    return None


def test_corridors__astar_and_fewest_moves_give_n_pushes_and_n_moves():
    for level in corridor_suite():
        length = int(level.title.split()[1])
        result = solve(level, "astar")
        assert result.solved and result.optimal and result.pushes == length, level.title
        best = fewest_moves(level, result.lurd)
        assert best.optimal and (best.moves, best.pushes) == (length, length), level.title


def test_corridors__bfs_agrees_on_the_pushes():
    for level in corridor_suite()[::7]:
        assert solve(level, "bfs").pushes == int(level.title.split()[1])


@pytest.mark.parametrize("number", MICROBAN)
def test_fewest_moves__matches_a_brute_force_search(number):
    level = load_levels(f"microban:{number}")[0]
    result = solve(level, "astar")
    best = fewest_moves(level, result.lurd)
    assert best.optimal and best.moves == fewest_moves_by_brute_force(level)
    check = verify(level, best.lurd)
    assert check.ok and (check.moves, check.pushes) == (best.moves, best.pushes)
    assert best.moves <= result.moves and best.pushes >= result.pushes


def test_fewest_moves__says_when_the_level_is_too_large_for_the_budget():
    level = load_levels("microban:6")[0]
    lurd = solve(level, "astar").lurd
    small = fewest_moves(level, lurd, max_positions=10)
    assert small.status == "too_large" and not small.optimal and small.moves == 0
    assert fewest_moves(level, lurd, max_seconds=1e-9).status == "timeout"


def test_fewest_moves__refuses_a_wrong_solution_and_takes_a_solved_level():
    level = Level.from_xsb("#####\n#@$.#\n#####")
    with pytest.raises(SolutionError):
        fewest_moves(level, "L")
    solved = fewest_moves(Level.from_xsb("####\n#@*#\n####"), "")
    assert solved.optimal and (solved.moves, solved.pushes) == (0, 0)
