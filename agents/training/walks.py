"""Walk labels for the Move env: every step of a shortest walk to the expert's next push.

A planner's solution walks between its pushes by one shortest path of many; cloned one-hot,
the network is taught a different tie-break in neighbouring squares and, played greedily,
steps back and forth for ever (most of the shipped Move model's unsolved levels end in such a
loop with the level still solvable). A walk label instead gives equal weight to every step
that brings the player one square nearer the square of the expert's next push (the boxes as
they stand), and the push itself at that square: any such step keeps the walk shortest, so a
policy that picks among them cannot loop while its next push stays the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from soko_gym.engine.constants import (
    DIRECTION_DELTAS,
    N_DIRECTIONS,
    PLANE_BOX,
    PLANE_FLOOR,
    PLANE_PLAYER,
    SQUARE_DTYPE,
)
from soko_gym.engine.reach import new_stamps, walk_distances

_FAR = np.int16(10_000)
_CHUNK = 65_536  # samples per distance sweep (memory: ~20 bytes a square)


def shortest_steps(free: np.ndarray, player: np.ndarray, target: np.ndarray) -> np.ndarray:
    """bool[N, 4]: the steps from ``player`` that start a shortest walk to ``target``.

    Args:
        free: bool[N, H, W] squares the player may walk on (floor without a box).
        player: int[N, 2] (row, col) of the player.
        target: int[N, 2] (row, col) to reach; a sample already there, or with no walk to it,
            gets no step.
    """
    free = np.asarray(free, dtype=bool)
    n = len(free)
    out = np.zeros((n, N_DIRECTIONS), dtype=bool)
    for start in range(0, n, _CHUNK):
        rows = slice(start, min(start + _CHUNK, n))
        out[rows] = _chunk_steps(free[rows], player[rows], target[rows])
    return out


def walk_map(position: Any, start: int) -> np.ndarray:
    """int32[H*W]: fewest player steps from ``start`` to each square without pushing, -1 unreached.

    ``position`` is an ``agents.expert.policy.Position``; its boxes stay where they stand; the
    distances are the engine's (``reach.walk_distances``).
    """
    n = position.n_cells
    box_at, _ = position.box_arrays()
    stamps = new_stamps(position.cells)
    dist = np.zeros(n, dtype=SQUARE_DTYPE)
    queue = np.empty(n, dtype=SQUARE_DTYPE)
    offsets = np.array(position.offsets(), dtype=SQUARE_DTYPE)
    mark, _ = walk_distances(box_at, offsets, start, stamps, queue, dist)
    return np.where(stamps[:n] == mark, dist, -1).astype(np.int32)


def position_steps(position: Any, stand: int) -> np.ndarray:
    """bool[4]: the steps that start a shortest walk from ``position``'s player to ``stand``.

    ``position`` is an ``agents.expert.policy.Position``; ``stand`` a frame square
    (distances from ``walk_map``).
    """
    dist = walk_map(position, stand)
    player = position.player
    steps = np.zeros(N_DIRECTIONS, dtype=bool)
    if dist[player] > 0:  # 0: already there; -1: unreachable
        for d, off in enumerate(position.offsets()):
            steps[d] = dist[player + off] == dist[player] - 1
    return steps


def _chunk_steps(free: np.ndarray, player: np.ndarray, target: np.ndarray) -> np.ndarray:
    n, h, w = free.shape
    idx = np.arange(n)
    dist = np.full((n, h + 2, w + 2), _FAR, dtype=np.int16)  # a border of unreachable squares
    dist[idx, target[:, 0] + 1, target[:, 1] + 1] = 0
    open_ = np.zeros((n, h + 2, w + 2), dtype=bool)
    open_[:, 1:-1, 1:-1] = free
    open_[idx, target[:, 0] + 1, target[:, 1] + 1] = True
    inner = dist[:, 1:-1, 1:-1]
    while True:
        near = np.minimum(
            np.minimum(dist[:, :-2, 1:-1], dist[:, 2:, 1:-1]),
            np.minimum(dist[:, 1:-1, :-2], dist[:, 1:-1, 2:]),
        )
        new = np.where(open_[:, 1:-1, 1:-1], np.minimum(inner, near + 1), _FAR)
        if np.array_equal(new, inner):
            break
        inner[...] = new
    here = dist[idx, player[:, 0] + 1, player[:, 1] + 1]
    steps = np.zeros((n, N_DIRECTIONS), dtype=bool)
    for d, (dr, dc) in enumerate(DIRECTION_DELTAS):
        there = dist[idx, player[:, 0] + 1 + dr, player[:, 1] + 1 + dc]
        steps[:, d] = (here < _FAR) & (here > 0) & (there == here - 1)
    return steps


def player_squares(observations: np.ndarray) -> np.ndarray:
    """int64[N, 2]: (row, col) of the player in each uint8[N, C, H, W] observation."""
    planes = np.asarray(observations)[:, PLANE_PLAYER]
    flat = planes.reshape(len(planes), -1).argmax(axis=1)
    return np.stack(np.divmod(flat, planes.shape[2]), axis=1)


def push_flags(observations: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """bool[N]: whether each Move-env action pushes a box (a box stands where it steps)."""
    obs = np.asarray(observations)
    _, _, h, w = obs.shape
    player = player_squares(obs)
    deltas = np.asarray(DIRECTION_DELTAS)[np.asarray(actions)]
    to = player + deltas
    inside = (to[:, 0] >= 0) & (to[:, 0] < h) & (to[:, 1] >= 0) & (to[:, 1] < w)
    r, c = np.clip(to[:, 0], 0, h - 1), np.clip(to[:, 1], 0, w - 1)
    return inside & (obs[np.arange(len(obs)), PLANE_BOX, r, c] > 0)


def walk_targets(observations: np.ndarray, actions: np.ndarray, episodes: np.ndarray) -> np.ndarray:
    """float32[N, 4] walk labels of expert Move-env episodes (uniform over each sample's set).

    Args:
        observations: uint8[N, C, H, W], the samples in episode order.
        actions: int[N] the expert's actions.
        episodes: int[N] the episode of each sample (an episode's samples are contiguous).

    A push is labelled with itself; a step of the walk before a push with every step that
    starts a shortest walk to the square the push is made from. A sample whose own action is
    not among them (the expert walked a longer way, or no push follows in its episode) keeps
    its one action.
    """
    obs = np.asarray(observations)
    actions = np.asarray(actions, dtype=np.int64)
    episodes = np.asarray(episodes)
    n = len(actions)
    is_push = push_flags(obs, actions)
    index = np.arange(n)
    # the first push at or after each sample: a running minimum from the end
    nxt = np.minimum.accumulate(np.where(is_push, index, n)[::-1])[::-1]
    follows = nxt < n
    follows[follows] = episodes[nxt[follows]] == episodes[follows]
    walking = follows & ~is_push
    sets = np.zeros((n, N_DIRECTIONS), dtype=bool)
    sets[index, actions] = True
    rows = np.flatnonzero(walking)
    if len(rows):
        free = (obs[rows, PLANE_FLOOR] > 0) & (obs[rows, PLANE_BOX] == 0)
        player = player_squares(obs[rows])
        target = player_squares(obs[nxt[rows]])
        steps = shortest_steps(free, player, target)
        keep = steps[np.arange(len(rows)), actions[rows]]
        sets[rows[keep]] = steps[keep]
    return (sets / sets.sum(axis=1, keepdims=True)).astype(np.float32)
