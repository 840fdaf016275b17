"""Policy-guided push search: Levin tree search ("lts") and PHS* ("phs") over the Push env's space.

Both planners search the space of ``Sokoban-Push-v0``: one action is one box push (the player
walks to the push side for free) and a node is the position after a sequence of pushes. A
*policy* guides them: any callable ``policy(observations, masks) -> probabilities`` where

- ``observations`` is ``uint8[N, C, H, W]``: the planes the Push env would show for N positions
  (wall, floor, goal, box, player, plus the dead-square plane with ``dead_plane=True``) in an
  ``H x W`` frame, the level centred as the env centres it;
- ``masks`` is ``bool[N, 4 * H * W]``: the Push env's action masks of those positions;
- the result is ``float[N, 4 * H * W]`` *probabilities* (not log-probabilities) over the Push
  env's actions (``square * 4 + direction``). Mass on illegal actions is ignored and the rest
  is renormalised over the legal actions, so a policy need not be exact about the mask.

The policy is called once per expanded node (``batch_size`` nodes per call); a child's
probability is its parent's times the renormalised probability of the push that made it.
Levin tree search (Orseau, Lelis, Lattimore and Weber, 2018) expands nodes in increasing
``d(n) / pi(n)`` (``d``: pushes so far); PHS* (Orseau and Lelis, 2021) in increasing
``(g(n) + h(n)) / pi(n)`` with ``h`` the engine's minimum-matching push lower bound, the bound
A* uses. A solved child ends the search as soon as it is generated.

Pruning is sound only: a push that makes a simple deadlock (a dead square, a frozen box off
goal: ``soko_gym.engine.deadlock``) is never generated, nor (PHS*) a position whose matching
bound proves it dead. A position met again (same boxes, same player region) is skipped when
an earlier copy has no more pushes and at least as much probability; otherwise the new copy
replaces the copies it dominates. A search that empties its queue has therefore seen every
position reachable from the start: the level is "unsolvable". The planners never invent a
policy: ``policy`` is required.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from planners.base import Outcome, Planner, Push
from planners.limits import SearchLimits
from soko_gym.engine.actions import square_push_parts
from soko_gym.engine.board import Board
from soko_gym.engine.constants import (
    BOX_AT_DTYPE,
    GOAL,
    N_PLANES,
    SQUARE_DTYPE,
)
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.lowerbound import INFINITE_BOUND, matching_bound_full, new_match_state
from soko_gym.engine.moves import push_mask, write_planes
from soko_gym.engine.reach import new_stamps, reach_player
from soko_gym.levels import Level
from soko_gym.levels.frame import frame, parse_obs_size

Policy = Callable[[np.ndarray, np.ndarray], Any]
Position = tuple[tuple[int, ...], int]  # (sorted box squares in the frame, player square)

# rough bytes per stored node (tuples, lists, heap and dict entries), for max_memory_mb
_NODE_BYTES = 400
_BOX_BYTES = 40


def frame_size(level: Level, obs_size: int | Sequence[int] | None) -> tuple[int, int]:
    """The ``(H, W)`` frame for ``level``: ``obs_size`` or, when None, the level's own size.

    The Push env made with ``levels=[level]`` and no ``obs_size`` uses the level's size too.

    Raises:
        ValueError: naming ``obs_size`` when it is malformed, out of [3, 128] or too small.
    """
    if obs_size is None:
        return level.height, level.width
    size = parse_obs_size(obs_size)
    if level.height > size[0] or level.width > size[1]:
        raise ValueError(
            f"obs_size {size} is too small for the level, which is "
            f"{level.height}x{level.width} (rows x cols)"
        )
    return size


class PushSpace:
    """A level framed as the Push env frames it: positions, their planes, masks and pushes.

    Squares are frame squares (``row * W + col`` in the observation). The framing, the cell
    flags of the planes and the mask are the env's own (``soko_gym.envs.observation`` centres
    the level the same way; ``engine.moves.write_planes`` and ``push_mask`` are shared), so the
    policy sees exactly what it would see playing ``Sokoban-Push-v0``.

    Attributes:
        level: the level.
        size: (H, W) of the frame.
        n_planes: C, 5 or 6 (``dead_plane``).
        n_actions: 4 * H * W, the Push env's action count.
        board: the engine Board of the framed level (dead squares, distances).
        start: the start position.
    """

    def __init__(
        self,
        level: Level,
        obs_size: int | Sequence[int] | None = None,
        dead_plane: bool = False,
    ) -> None:
        if not isinstance(dead_plane, bool):
            raise ValueError(f"dead_plane must be a bool, got {dead_plane!r}")
        self.level = level
        self.size = frame_size(level, obs_size)
        height, width = self.size
        self.n_cells = height * width
        self.n_planes = N_PLANES + int(dead_plane)
        self.n_actions = 4 * self.n_cells
        framed = frame(level, self.size)  # the envs' own framing
        self.r0, self.c0 = framed.r0, framed.c0
        self.board: Board = framed.board
        self.cells = framed.cells  # the env's table cells: engine flags plus DEAD and DRAWN_WALL
        boxes = [int(b) for b in framed.board.start_boxes]
        player = framed.player
        self.start: Position = (tuple(sorted(boxes)), int(player))
        self._stamps = new_stamps(self.board.cells)
        self._stack = np.empty(self.n_cells, dtype=SQUARE_DTYPE)
        self._seen = np.zeros(self.n_cells + 1, dtype=np.uint32)
        self._trail = np.empty(self.n_cells, dtype=SQUARE_DTYPE)

    # -- what the env shows --------------------------------------------------------------------

    def box_arrays(self, boxes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(box_at int16[H*W] box index per square or -1, box_pos int32[n]) of ``boxes``."""
        box_pos = np.array(boxes, dtype=SQUARE_DTYPE)
        box_at = np.full(self.n_cells, -1, dtype=BOX_AT_DTYPE)
        box_at[box_pos] = np.arange(box_pos.shape[0], dtype=BOX_AT_DTYPE)
        return box_at, box_pos

    def write(self, position: Position, obs: np.ndarray, mask: np.ndarray) -> None:
        """Write ``position``'s planes into ``obs`` (uint8[C*H*W]) and mask into ``mask``."""
        boxes, player = position
        box_at, box_pos = self.box_arrays(boxes)
        n = len(boxes)
        write_planes(self.cells, box_pos, n, player, obs)
        push_mask(
            self.cells,
            box_at,
            box_pos,
            n,
            self.board.offsets,
            player,
            self._stamps,
            self._stack,
            mask,
        )

    def observation(self, position: Position) -> np.ndarray:
        """The Push env's observation of ``position``: uint8[C, H, W] planes."""
        obs = np.zeros(self.n_planes * self.n_cells, dtype=np.uint8)
        self.write(position, obs, np.zeros(self.n_actions, dtype=bool))
        return obs.reshape(self.n_planes, *self.size)

    def action_mask(self, position: Position) -> np.ndarray:
        """The Push env's action mask of ``position``: bool[4 * H * W]."""
        mask = np.zeros(self.n_actions, dtype=bool)
        self.write(position, np.zeros(self.n_planes * self.n_cells, dtype=np.uint8), mask)
        return mask

    # -- moves -------------------------------------------------------------------------------

    def push(self, position: Position, action: int) -> Position:
        """The position after the Push env's ``action`` (assumed legal in ``position``)."""
        square, d = square_push_parts(int(action))
        dest = square + int(self.board.offsets[d])
        boxes = sorted(dest if b == square else b for b in position[0])
        return tuple(boxes), square

    def is_solved(self, position: Position) -> bool:
        """True when every box stands on a goal."""
        cells = self.board.cells
        return all(cells[b] & GOAL for b in position[0])

    def region(self, position: Position) -> int:
        """The smallest square the player reaches: positions with equal regions are equal."""
        box_at, _ = self.box_arrays(position[0])
        return int(
            reach_player(box_at, self.board.offsets, position[1], self._stamps, self._stack)[1]
        )

    def dead_after(self, box_at: np.ndarray, square: int) -> bool:
        """True when the box just pushed onto ``square`` (``box_at`` after the push) is lost."""
        return bool(
            is_simple_deadlock(
                self.board.cells,
                self.board.dead,
                box_at,
                self.board.offsets,
                square,
                self._seen,
                self._trail,
            )
        )

    def level_push(self, action: int) -> Push:
        """The push ``(square on level.board, direction)`` of a Push env action."""
        square, d = square_push_parts(int(action))
        row, col = divmod(square, self.size[1])
        return (row - self.r0) * self.level.width + (col - self.c0), d


def check_policy(policy: Any) -> Policy:
    """``policy`` when it is callable.

    Raises:
        ValueError: naming ``policy`` when it is missing (None) or not callable.
    """
    if policy is None:
        raise ValueError(
            "policy is required: a callable policy(observations uint8[N, C, H, W], "
            "masks bool[N, A]) -> probabilities float[N, A] over the Push env's actions "
            '(planners.solve(level, "lts", policy=...); a trained model: '
            "agents.playing.policy_search.model_policy, "
            "or soko bench --planners lts --policy MODEL)"
        )
    if not callable(policy):
        raise ValueError(
            f"policy must be callable as policy(observations, masks) -> probabilities, "
            f"got {type(policy).__name__}"
        )
    return policy


def legal_probabilities(
    probs: Any, masks: np.ndarray, n_actions: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each row's legal actions and their probabilities renormalised over them.

    Raises:
        ValueError: naming ``policy`` when its output has the wrong shape, negative or
            non-finite entries on legal actions, or no mass on any legal action.
    """
    try:
        out = np.asarray(probs, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"policy returned something that is not an array of numbers: {err}"
        ) from None
    if out.shape != (masks.shape[0], n_actions):
        raise ValueError(
            f"policy returned shape {out.shape}; expected {(masks.shape[0], n_actions)} "
            "(one probability per Push env action for each observation)"
        )
    rows = []
    for i in range(masks.shape[0]):
        legal = np.flatnonzero(masks[i])
        p = out[i, legal]
        if legal.size == 0:
            rows.append((legal, p))
            continue
        if not np.all(np.isfinite(p)) or np.any(p < 0):
            raise ValueError(
                "policy returned negative or non-finite probabilities on legal actions "
                "(it must return probabilities, not logits or log-probabilities)"
            )
        total = p.sum()
        if total <= 0:
            raise ValueError("policy put no probability on any legal action of a position")
        rows.append((legal, p / total))
    return rows


class _Search:
    """One best-first search over a ``PushSpace`` ordered by ``cost(g, h) - log pi``."""

    def __init__(self, space: PushSpace, policy: Policy, heuristic: bool, batch: int) -> None:
        self.space = space
        self.policy = policy
        self.heuristic = heuristic
        self.batch = batch
        self.board = space.board
        n_boxes = len(space.start[0])
        self.match, self.work = new_match_state(max(1, n_boxes))
        self.node_bytes = _NODE_BYTES + _BOX_BYTES * n_boxes
        # node store: position, parent node, action that made it, pushes, log pi
        self.positions: list[Position] = []
        self.parents: list[int] = []
        self.actions: list[int] = []
        self.depths: list[int] = []
        self.log_pi: list[float] = []
        self.stale: set[int] = set()
        self.seen: dict[Position, list[int]] = {}  # (boxes, region) -> live node ids
        self.heap: list[tuple[float, int, int, int]] = []  # priority, -g, order, node
        self.counter = 0
        self.generated = 0
        self.duplicates = 0
        self.deadlocks = 0
        self.policy_calls = 0

    def bound(self, boxes: tuple[int, ...]) -> int:
        """The matching push lower bound of ``boxes`` (INFINITE_BOUND when dead)."""
        box_pos = np.array(boxes, dtype=SQUARE_DTYPE)
        return int(matching_bound_full(self.board.goal_dist, box_pos, self.match, self.work))

    def add(self, position: Position, parent: int, action: int, depth: int, lp: float) -> bool:
        """Store a node unless a copy dominates it; True when it was stored."""
        h = 0
        if self.heuristic:
            h = self.bound(position[0])
            if h >= INFINITE_BOUND:
                self.deadlocks += 1
                return False
        key = (position[0], self.space.region(position))
        copies = self.seen.get(key)
        if copies is not None:
            for j in copies:
                if self.depths[j] <= depth and self.log_pi[j] >= lp:
                    self.duplicates += 1
                    return False
            keep = []
            for j in copies:
                if depth <= self.depths[j] and lp >= self.log_pi[j]:
                    self.stale.add(j)
                else:
                    keep.append(j)
            copies[:] = keep
        else:
            copies = self.seen[key] = []
        node = len(self.positions)
        copies.append(node)
        self.positions.append(position)
        self.parents.append(parent)
        self.actions.append(action)
        self.depths.append(depth)
        self.log_pi.append(lp)
        cost = depth + h
        priority = math.inf if lp == -math.inf else (math.log(cost) if cost > 0 else -math.inf) - lp
        heapq.heappush(self.heap, (priority, -depth, self.counter, node))
        self.counter += 1
        return True

    def pushes(self, node: int, last: int) -> list[Push]:
        """The level pushes from the start to ``node`` and then ``last`` (-1: none)."""
        actions = [] if last < 0 else [last]
        while self.parents[node] >= 0:
            actions.append(self.actions[node])
            node = self.parents[node]
        return [self.space.level_push(a) for a in reversed(actions)]

    def expand(self, node: int, legal: np.ndarray, probs: np.ndarray) -> list[Push] | None:
        """Generate ``node``'s children; the solution when one of them is solved."""
        space = self.space
        boxes, _ = self.positions[node]
        depth = self.depths[node] + 1
        lp = self.log_pi[node]
        box_at, _ = space.box_arrays(boxes)
        offsets = self.board.offsets
        goal = self.board.cells
        with np.errstate(divide="ignore"):
            logs = np.log(probs)
        for action, log_q in zip(legal.tolist(), logs.tolist(), strict=True):
            square, d = square_push_parts(action)
            dest = square + int(offsets[d])
            child = space.push(self.positions[node], action)
            self.generated += 1
            if all(goal[b] & GOAL for b in child[0]):
                return self.pushes(node, action)
            b = box_at[square]
            box_at[square] = -1
            box_at[dest] = b
            dead = space.dead_after(box_at, dest)
            box_at[dest] = -1
            box_at[square] = b
            if dead:
                self.deadlocks += 1
                continue
            self.add(child, node, action, depth, lp + log_q)
        return None

    def run(self, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Search until solved, exhausted or out of budget."""
        space = self.space
        if space.is_solved(space.start):
            return Outcome("solved", [], 0, 0, self.stats())
        if not self.add(space.start, -1, -1, 0, 0.0):
            return Outcome("unsolvable", None, 0, 0, self.stats())
        max_nodes = limits.max_nodes
        memory = limits.memory_bytes
        expanded = 0
        obs = np.zeros((self.batch, space.n_planes * space.n_cells), dtype=np.uint8)
        masks = np.zeros((self.batch, space.n_actions), dtype=bool)
        while self.heap:
            if max_nodes is not None and expanded >= max_nodes:
                return self.outcome("node_limit", expanded)
            if deadline is not None and time.perf_counter() >= deadline:
                return self.outcome("timeout", expanded)
            if len(self.positions) * self.node_bytes > memory:
                return self.outcome("memory_limit", expanded)
            room = self.batch if max_nodes is None else min(self.batch, max_nodes - expanded)
            batch: list[int] = []
            while self.heap and len(batch) < room:
                node = heapq.heappop(self.heap)[3]
                if node in self.stale:
                    continue
                space.write(self.positions[node], obs[len(batch)], masks[len(batch)])
                batch.append(node)
            if not batch:
                break
            k = len(batch)
            shaped = obs[:k].reshape(k, space.n_planes, *space.size)
            self.policy_calls += 1
            rows = legal_probabilities(self.policy(shaped, masks[:k]), masks[:k], space.n_actions)
            for node, (legal, probs) in zip(batch, rows, strict=True):
                expanded += 1
                found = self.expand(node, legal, probs)
                if found is not None:
                    return Outcome("solved", found, expanded, self.generated, self.stats())
        return self.outcome("unsolvable", expanded)

    def outcome(self, status: str, expanded: int) -> Outcome:
        """An unsolved outcome with the counters."""
        return Outcome(status, None, expanded, self.generated, self.stats())

    def stats(self) -> dict[str, Any]:
        """Planner-specific figures for ``SearchResult.stats``."""
        return {
            "stored": len(self.positions),
            "duplicates": self.duplicates,
            "deadlocks": self.deadlocks,
            "policy_calls": self.policy_calls,
            "obs_size": list(self.space.size),
        }


class PolicySearchPlanner(Planner):
    """Best-first push search guided by a policy (the base of "lts" and "phs").

    Args:
        policy: required callable ``policy(observations uint8[N, C, H, W], masks bool[N, A])
            -> float[N, A]`` probabilities over the Push env's ``A = 4 * H * W`` actions (see
            the module docstring); any callable: a function, a lambda, an object with
            ``__call__`` (``agents.playing.policy_search.model_policy`` wraps a trained model).
        obs_size: the frame ``H x W`` the policy expects (an int or ``(H, W)``); None for the
            level's own size (what ``gym.make("Sokoban-Push-v0", levels=[level])`` uses).
        dead_plane: add the dead-square plane (C = 6), as the env's ``dead_plane=True``.
        batch_size: expanded nodes per policy call (the best ``batch_size`` of the queue):
            1 keeps the exact expansion order; more means fewer, larger calls.

    Raises:
        ValueError: naming ``policy`` when it is missing or not callable, or the bad option.
    """

    heuristic: ClassVar[bool] = False

    def __init__(
        self,
        policy: Policy | None = None,
        obs_size: int | Sequence[int] | None = None,
        dead_plane: bool = False,
        batch_size: int = 1,
    ) -> None:
        self.policy = check_policy(policy)
        if obs_size is not None:
            parse_obs_size(obs_size)  # the form now; whether a level fits, per level
        if not isinstance(dead_plane, bool):
            raise ValueError(f"dead_plane must be a bool, got {dead_plane!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        self.obs_size = obs_size
        self.dead_plane = dead_plane
        self.batch_size = batch_size

    def search(self, level: Level, limits: SearchLimits, deadline: float | None) -> Outcome:
        """Search ``level``'s push space in the order of the planner's cost."""
        space = PushSpace(level, self.obs_size, self.dead_plane)
        return _Search(space, self.policy, self.heuristic, self.batch_size).run(limits, deadline)


class LevinTreeSearch(PolicySearchPlanner):
    """Levin tree search ("lts"): expand in increasing ``d(n) / pi(n)``."""

    name = "lts"


class PolicyHeuristicSearch(PolicySearchPlanner):
    """PHS* ("phs"): expand in increasing ``(g(n) + h(n)) / pi(n)``, h the matching bound."""

    name = "phs"
    heuristic = True
