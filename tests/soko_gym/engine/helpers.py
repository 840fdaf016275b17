"""Plain-Python reference implementations the engine is checked against."""

from collections import deque

from soko_gym.engine.constants import FLOOR


def python_reach(board, state):
    """Squares the player reaches without pushing, by a plain flood fill."""
    seen = {state.player}
    todo = [state.player]
    while todo:
        sq = todo.pop()
        for off in board.offsets.tolist():
            nb = sq + off
            if nb not in seen and board.cells[nb] & FLOOR and state.box_at[nb] < 0:
                seen.add(nb)
                todo.append(nb)
    return seen


def python_legal_pushes(board, state):
    """Push codes (box * 4 + direction) legal in ``state``, by brute force."""
    reached = python_reach(board, state)
    legal = set()
    for b, sq in enumerate(state.box_pos.tolist()):
        for d, off in enumerate(board.offsets.tolist()):
            dest = sq + off
            free = board.cells[dest] & FLOOR and state.box_at[dest] < 0
            if sq - off in reached and free:
                legal.add(b * 4 + d)
    return legal


def python_walk_length(board, state, start, target):
    """BFS distance of the player from start to target, or -1."""
    dist = {start: 0}
    q = deque([start])
    while q:
        sq = q.popleft()
        if sq == target:
            return dist[sq]
        for off in board.offsets.tolist():
            nb = sq + off
            if nb not in dist and board.cells[nb] & FLOOR and state.box_at[nb] < 0:
                dist[nb] = dist[sq] + 1
                q.append(nb)
    return -1
