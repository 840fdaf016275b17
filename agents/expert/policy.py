"""PlannerPolicy: a planner as an agent, behind stable-baselines3's ``PolicyPredictor`` protocol.

The policy sees observation planes only (wall, floor, goal, box, player, in the order of
``soko_gym.engine.constants``), rebuilds the position from them, solves it with
``planners.solve`` and plays the solution in the env's action encoding. Every position along a
plan is cached, so a level is planned once per episode (and once per process when it comes back),
and a position that is not on any plan (the env went elsewhere) is solved again: a replan.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from soko_gym.engine.actions import macro_action, square_push_action, square_push_parts
from soko_gym.engine.constants import (
    BOX_AT_DTYPE,
    DIRECTION_DELTAS,
    FLOOR,
    GOAL,
    LURD_DIRECTION,
    LURD_IS_PUSH,
    PLANE_BOX,
    PLANE_FLOOR,
    PLANE_GOAL,
    PLANE_PLAYER,
    PLANE_WALL,
    SQUARE_DTYPE,
    WALL,
)
from soko_gym.engine.moves import move_mask, push_mask
from soko_gym.engine.reach import new_stamps, reach_player
from soko_gym.levels import Level

ACTION_SPACES = ("push", "macro", "move")
ENV_ACTION_SPACES = {"Push": "push", "Macro": "macro", "Move": "move"}  # by env id's 2nd part

# a position: (frame shape, static layout bytes, sorted box squares, player or its region key)
PositionKey = tuple[tuple[int, int], bytes, tuple[int, ...], int]


def action_space_of(env_id: str) -> str:
    """THE action space of a soko-gym env id, as ``PlannerPolicy`` names it.

    "Sokoban-Push-v0" and "Sokoban-Push-Gen-v0" are "push", and so on for Macro and Move.

    Raises:
        ValueError: naming ``env_id`` when it is not a registered soko-gym env id.
    """
    import soko_gym

    if env_id not in soko_gym.ENV_IDS:
        raise ValueError(f"env_id must be one of {sorted(soko_gym.ENV_IDS)}, got {env_id!r}")
    return ENV_ACTION_SPACES[env_id.split("-")[1]]


@dataclass
class ExpertStats:
    """What a ``PlannerPolicy`` has done so far (counts add up over every ``predict`` call).

    Attributes:
        plans: planner runs at the start of an episode.
        replans: planner runs in the middle of an episode, on a position off every plan.
        failures: positions the planner did not solve within the limits (each counted once).
        fallback_actions: actions returned for unsolved positions (legal ones when any exists).
        cache_hits: actions read from a plan made earlier.
        planner_seconds: wall time spent in the planner.
    """

    plans: int = 0
    replans: int = 0
    failures: int = 0
    fallback_actions: int = 0
    cache_hits: int = 0
    planner_seconds: float = 0.0


@dataclass(frozen=True)
class Position:
    """A position rebuilt from observation planes, in frame squares (``row * W + col``).

    Attributes:
        shape: (H, W) of the frame.
        layout: bytes of the wall, floor and goal planes (what never changes in a level).
        floor: bool[H*W] squares the player may stand on.
        goal: bool[H*W] goal squares.
        boxes: sorted box squares.
        player: the player's square.
        walls: bool[H, W] the level's walls as drawn.
        cells: uint8[H*W] engine cell flags (FLOOR, GOAL; WALL off the floor) for the kernels.
    """

    shape: tuple[int, int]
    layout: bytes
    floor: np.ndarray
    goal: np.ndarray
    boxes: tuple[int, ...]
    player: int
    walls: np.ndarray
    cells: np.ndarray

    @property
    def width(self) -> int:
        """Frame width W."""
        return self.shape[1]

    @property
    def solved(self) -> bool:
        """True when every box stands on a goal."""
        return all(self.goal[b] for b in self.boxes)

    @property
    def n_cells(self) -> int:
        """Squares of the frame, H * W."""
        return self.shape[0] * self.shape[1]

    def offsets(self) -> tuple[int, int, int, int]:
        """Flat index step per direction (engine order up, down, left, right)."""
        w = self.width
        return tuple(dr * w + dc for dr, dc in DIRECTION_DELTAS)  # type: ignore[return-value]

    def box_arrays(self, boxes: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Engine occupancy of ``boxes`` (default: this position's boxes).

        Returns:
            (box_at int16[H*W] box index per square or -1, box_pos int32[n] sorted squares).
        """
        squares = np.array(sorted(self.boxes if boxes is None else boxes), dtype=SQUARE_DTYPE)
        box_at = np.full(self.n_cells, -1, dtype=BOX_AT_DTYPE)
        box_at[squares] = np.arange(squares.shape[0], dtype=BOX_AT_DTYPE)
        return box_at, squares

    def normalized_player(self, player: int, boxes: Any) -> int:
        """Smallest square the player reaches from ``player`` with boxes on ``boxes``.

        The engine's reachability (``reach_player``): positions whose players share a region
        get the same square.
        """
        box_at, _ = self.box_arrays(boxes)
        stamps = new_stamps(self.cells)
        stack = np.empty(self.n_cells, dtype=SQUARE_DTYPE)
        offsets = np.array(self.offsets(), dtype=SQUARE_DTYPE)
        return int(reach_player(box_at, offsets, player, stamps, stack)[1])

    def key(self, action_space: str) -> PositionKey:
        """The cache key of this position in ``action_space``.

        The exact player square for moves; for pushes and macro moves the player's region (its
        normalized square), since every square of a region has the same pushes. What
        ``PlannerPolicy`` caches its plans by, and DAgger's labeller its labels.
        """
        if action_space == "move":
            player = self.player
        else:
            player = self.normalized_player(self.player, self.boxes)
        return self.shape, self.layout, self.boxes, player

    def after_push(self, action: int) -> Position:
        """The position after Push-env action ``action`` (the player stands where the box was).

        Raises:
            ValueError: when ``action`` pushes no box, or pushes it into a wall or a box.
        """
        square, direction = square_push_parts(action)
        to = square + self.offsets()[direction]
        boxes = set(self.boxes)
        if square not in boxes or to in boxes or not 0 <= to < self.n_cells or not self.floor[to]:
            raise ValueError(f"push action {action} is not a push in this position")
        return replace(self, boxes=tuple(sorted((boxes - {square}) | {to})), player=square)

    def to_level(self) -> Level:
        """The position as a Level, cropped to the bounding box of the walls."""
        walls = self.walls
        rows, cols = np.nonzero(walls)
        if rows.size == 0:
            raise ValueError("observation has no walls: not a soko-gym planes observation")
        r0, r1, c0, c1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
        h, w = self.shape
        chars = np.full(h * w, " ", dtype="<U1")
        chars[walls.ravel()] = "#"
        chars[self.goal] = "."
        for b in self.boxes:
            chars[b] = "*" if self.goal[b] else "$"
        chars[self.player] = "+" if self.goal[self.player] else "@"
        grid = chars.reshape(h, w)[r0:r1, c0:c1]
        text = "\n".join("".join(row).rstrip() for row in grid) + "\n"
        return Level.from_xsb(text)


def read_position(planes: np.ndarray) -> Position:
    """Rebuild the position from one observation, uint8[C, H, W] planes (C = 5, 6 or 7).

    Raises:
        ValueError: when ``planes`` is not a planes observation with exactly one player.
    """
    if planes.ndim != 3 or planes.shape[0] not in (5, 6, 7):
        raise ValueError(
            f"observation must be uint8[C, H, W] planes with C = 5, 6 or 7 (obs_mode='planes'), "
            f"got shape {planes.shape}"
        )
    _, h, w = planes.shape
    flat = planes.reshape(planes.shape[0], h * w) != 0
    players = np.flatnonzero(flat[PLANE_PLAYER])
    if players.size != 1:
        raise ValueError(f"observation must show one player, found {players.size}")
    layout = np.ascontiguousarray(planes[[PLANE_WALL, PLANE_FLOOR, PLANE_GOAL]]).tobytes()
    floor = flat[PLANE_FLOOR].copy()
    goal = flat[PLANE_GOAL].copy()
    cells = np.where(floor, FLOOR, WALL).astype(np.uint8)
    cells[goal] |= GOAL
    return Position(
        shape=(h, w),
        layout=layout,
        floor=floor,
        goal=goal,
        boxes=tuple(np.flatnonzero(flat[PLANE_BOX]).tolist()),
        player=int(players[0]),
        walls=planes[PLANE_WALL] != 0,
        cells=cells,
    )


class PlannerPolicy:
    """A planner playing a soko-gym env: stable-baselines3's ``PolicyPredictor`` protocol.

    ``predict`` takes one observation (``uint8[C, H, W]`` planes) or a batch
    (``uint8[N, C, H, W]``), so it plugs into ``evaluate_policy`` and any vector env, including
    ``soko_gym.envs.sb3.SokobanVecEnv``. The position is read from the planes alone; the policy
    keeps no per-env state, only a cache from positions to the next action of a plan through
    them. The planner runs when a position is in no plan yet: at the start of an episode (a
    plan) or when the env left the plan (a replan; e.g. a macro move whose fewest-push path
    leaves the player in another region than the planner's path). A position the planner does
    not solve within ``limits`` gets a legal action (or 0 when none is legal) and is counted in
    ``stats``.

    Args:
        planner: registry name of the planner (``planners.available()``): "astar", "fess" ...
        limits: a ``SearchLimits``, or seconds per planner run; None for 10 seconds.
        action_space: the env's action encoding (``soko_gym.engine.actions``): "push"
            (``Sokoban-Push-v0``: ``square_push_action``), "macro" (``Sokoban-Macro-v0``:
            ``macro_action``) or "move" (``Sokoban-Move-v0``: a direction).
        **planner_options: options of the planner, passed to ``planners.solve``.

    Raises:
        ValueError: naming the argument for an unknown planner or action space, or bad limits.

    Example:
        >>> policy = PlannerPolicy("astar", action_space="push")  # doctest: +SKIP
        >>> evaluate_policy(policy, SokobanVecEnv("Sokoban-Push-v0", 4, levels="microban:1-4"))
    """

    def __init__(
        self,
        planner: str = "astar",
        limits: Any = None,
        action_space: str = "push",
        **planner_options: Any,
    ) -> None:
        import planners

        if planner not in planners.available():
            raise ValueError(f"planner must be one of {planners.available()}, got {planner!r}")
        if action_space not in ACTION_SPACES:
            raise ValueError(f"action_space must be one of {ACTION_SPACES}, got {action_space!r}")
        if limits is None:
            limits = planners.SearchLimits(max_seconds=10.0)
        elif isinstance(limits, int | float) and not isinstance(limits, bool):
            if limits <= 0:
                raise ValueError(f"limits must be positive seconds, got {limits!r}")
            limits = planners.SearchLimits(max_seconds=float(limits))
        elif not isinstance(limits, planners.SearchLimits):
            raise ValueError(
                f"limits must be a SearchLimits, seconds or None, got {type(limits).__name__}"
            )
        planners.get_planner(planner, **planner_options)  # bad options: ValueError now
        self.planner = planner
        self.limits = limits
        self.action_space = action_space
        self.planner_options = dict(planner_options)
        self.stats = ExpertStats()
        self._next: dict[PositionKey, int] = {}  # position -> next action of a plan
        self._failed: set[PositionKey] = set()
        self._last_layout: dict[int, bytes] = {}  # batch slot -> layout seen last call

    # -- the PolicyPredictor protocol ----------------------------------------------------------

    def predict(
        self,
        observation: np.ndarray,
        state: tuple[np.ndarray, ...] | None = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...] | None]:
        """Next action for each observation.

        Args:
            observation: ``uint8[C, H, W]`` planes or a batch ``uint8[N, C, H, W]``.
            state: passed through unchanged (the policy is not recurrent).
            episode_start: bool[N], True where an episode starts (used to tell plans from
                replans in ``stats``); None to guess it from the level shown in each slot.
            deterministic: ignored: the planner is deterministic.

        Returns:
            (actions, state): int64[N] for a batch, a 0-d int64 array for one observation.

        Raises:
            ValueError: for observations that are not planes.
        """
        obs = np.asarray(observation)
        single = obs.ndim == 3
        batch = obs[None] if single else obs
        if batch.ndim != 4:
            raise ValueError(
                "observation must be uint8[C, H, W] planes or a batch uint8[N, C, H, W], "
                f"got shape {obs.shape}"
            )
        starts = None if episode_start is None else np.asarray(episode_start).reshape(-1)
        actions = np.zeros(batch.shape[0], dtype=np.int64)
        for i in range(batch.shape[0]):
            position = read_position(batch[i])
            if starts is not None:
                fresh = bool(starts[i])
            else:
                fresh = self._last_layout.get(i) != position.layout
            self._last_layout[i] = position.layout
            actions[i] = self._act(position, fresh)
        if single:
            return actions[0].copy().reshape(()), state
        return actions, state

    # -- planning ------------------------------------------------------------------------------

    def key(self, position: Position) -> PositionKey:
        """Cache key of a position (``Position.key`` in this policy's action space)."""
        return position.key(self.action_space)

    def add_plan(self, observation: np.ndarray, lurd: str) -> None:
        """Cache a known solution: ``lurd`` played from the position of ``observation``.

        Raises:
            ValueError: when ``lurd`` does not replay from that position.
        """
        position = read_position(np.asarray(observation))
        for key, action in plan_actions(position, lurd, self.action_space):
            self._next[key] = action

    def clear_cache(self) -> None:
        """Forget every plan and failure (``stats`` are kept)."""
        self._next.clear()
        self._failed.clear()
        self._last_layout.clear()

    def _act(self, position: Position, fresh: bool) -> int:
        key = self.key(position)
        action = self._next.get(key)
        if action is not None:
            self.stats.cache_hits += 1
            return action
        if position.solved:
            return legal_action(position, self.action_space)
        if key not in self._failed:
            if fresh:
                self.stats.plans += 1
            else:
                self.stats.replans += 1
            if self._plan(position):
                return self._next[key]
            self.stats.failures += 1
            self._failed.add(key)
        self.stats.fallback_actions += 1
        return legal_action(position, self.action_space)

    def _plan(self, position: Position) -> bool:
        """Solve ``position``; on success every position of the plan is cached."""
        import planners

        level = position.to_level()
        start = time.perf_counter()
        result = planners.solve(level, self.planner, self.limits, **self.planner_options)
        self.stats.planner_seconds += time.perf_counter() - start
        if not result.solved:
            return False
        # LURD is relative, so the cropped level's solution replays on the frame as it is
        for key, action in plan_actions(position, result.lurd, self.action_space):
            self._next[key] = action
        return True


def plan_actions(position: Position, lurd: str, action_space: str) -> list[tuple[PositionKey, int]]:
    """Turn a LURD solution from ``position`` into (position key, env action) pairs.

    Each pair holds the key of the position the action is taken in, as ``PlannerPolicy.key``
    computes it for ``action_space``, and the action in that env's encoding. Macro moves are
    runs of pushes of one box (split where the box would come back to the run's start square,
    which no macro action expresses).

    Raises:
        ValueError: when ``lurd`` does not replay from ``position``.
    """
    offsets = position.offsets()
    n = position.n_cells
    boxes = set(position.boxes)
    player = position.player
    steps: list[tuple[PositionKey, int]] = []

    def region_key(p: int) -> PositionKey:
        normalized = position.normalized_player(p, boxes)
        return position.shape, position.layout, tuple(sorted(boxes)), normalized

    run_key: PositionKey | None = None  # macro: key before the current run of one box
    run_src = run_dst = -1
    for i, ch in enumerate(lurd):
        d = int(LURD_DIRECTION[ord(ch)]) if ord(ch) < 256 else -1
        if d < 0:
            raise ValueError(f"lurd has a bad character {ch!r} at index {i}")
        nxt = player + offsets[d]
        push = bool(LURD_IS_PUSH[ord(ch)])
        if not position.floor[nxt] or (nxt in boxes) != push:
            raise ValueError(f"lurd does not replay from this position (index {i})")
        if action_space == "move":
            steps.append(((position.shape, position.layout, tuple(sorted(boxes)), player), d))
        elif push:
            if action_space == "push":
                steps.append((region_key(player), square_push_action(nxt, d)))
            else:
                dest = nxt + offsets[d]
                if nxt == run_dst and dest != run_src:
                    run_dst = dest  # the same box goes on: extend the macro move
                else:
                    if run_key is not None:
                        steps.append((run_key, macro_action(run_src, run_dst, n)))
                    run_key, run_src, run_dst = region_key(player), nxt, dest
        if push:
            dest = nxt + offsets[d]
            if not position.floor[dest] or dest in boxes:
                raise ValueError(f"lurd pushes a box into a wall or box (index {i})")
            boxes.discard(nxt)
            boxes.add(dest)
        player = nxt
    if run_key is not None:
        steps.append((run_key, macro_action(run_src, run_dst, n)))
    return steps


def push_action_mask(position: Position) -> np.ndarray:
    """bool[4 * H * W]: the Push env's legal pushes in ``position`` (its ``action_mask``)."""
    offsets = np.array(position.offsets(), dtype=SQUARE_DTYPE)
    box_at, box_pos = position.box_arrays()
    mask = np.zeros(4 * position.n_cells, dtype=bool)
    stamps = new_stamps(position.cells)
    stack = np.empty(4 * position.n_cells, dtype=SQUARE_DTYPE)
    n_boxes = len(position.boxes)
    push_mask(
        position.cells, box_at, box_pos, n_boxes, offsets, position.player, stamps, stack, mask
    )
    return mask


def legal_action(position: Position, action_space: str) -> int:
    """A legal action in ``position`` for ``action_space`` (0 when none is legal).

    Read from the engine's action masks, as the envs compute them. Push and macro: the first
    legal push (in square, then direction order); macro moves that box to the adjacent square.
    Move: the first direction that is not into a wall or an immovable box.
    """
    offsets = np.array(position.offsets(), dtype=SQUARE_DTYPE)
    if action_space == "move":
        box_at, _ = position.box_arrays()
        mask = np.zeros(4, dtype=bool)
        move_mask(position.cells, box_at, offsets, position.player, mask)
    else:
        mask = push_action_mask(position)
    legal = np.flatnonzero(mask)
    if legal.size == 0:
        return 0
    action = int(legal[0])
    if action_space == "macro":
        square, d = square_push_parts(action)
        return macro_action(square, square + int(offsets[d]), position.n_cells)
    return action
