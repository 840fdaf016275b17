"""The expert's labels of observations for DAgger: a planner's action, or every push ranked.

A label is the first action of a fresh plan from the position rebuilt from the observation
planes (``label_observation``, as ``agents.expert.policy`` reads them); with
``DaggerConfig.teacher``, walk labels toward a Push-env model's push instead
(``agents.training.teacher``). With ranked labels
(``DaggerConfig.targets="ranked"``, Push env) every legal push is applied and the position
after it solved (``rank_observation``), its cost turned into a distribution over the pushes
(``ranked_targets``). Ranked walk labels (``targets="ranked-walk"``, Move env) rank the
pushes of the player's region the same way and label the steps toward the nearest cheapest
push (``nearest_best_label``). ``Labeller`` labels each position once (``Position.key``),
in position order on ``soko_gym.execution`` (this process, ``--jobs`` local processes or
Ray), so every backend gives the same labels.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from agents.expert.policy import (
    ACTION_SPACES,
    PositionKey,
    plan_actions,
    push_action_mask,
    read_position,
)
from agents.training.config import DaggerConfig
from soko_gym.engine.constants import MOVE_CHARS, N_DIRECTIONS
from soko_gym.execution import Backend, run_ordered

# a label: ("ok", action), ("dead", -1) (proved unsolvable) or ("failed", -1) (not solved
# within the limit)
Label = tuple[str, int]
# a ranked label: the same and every push's cost (``rank_observation``)
RankedLabel = tuple[str, int, np.ndarray]


def label_observation(
    planes: np.ndarray,
    planner: str = "astar",
    max_seconds: float = 5.0,
    action_space: str = "push",
) -> Label:
    """The expert's label of one observation: the first action of a fresh plan from it.

    The position is rebuilt from ``planes`` (``agents.expert.policy.read_position``), solved by
    ``planners.solve`` and the solution's first action is given in ``action_space``'s encoding
    (``agents.expert.policy.plan_actions``), what ``PlannerPolicy`` plays from that position when it
    has no plan through it yet.

    Returns:
        ("ok", action), ("dead", -1) when the planner proves the position unsolvable, or
        ("failed", -1) when it does not solve it within ``max_seconds`` (or it is solved).
    """
    position, lurd, status = _fresh_plan(planes, planner, max_seconds)
    if lurd:
        steps = plan_actions(position, lurd, action_space)
        if steps:
            return ("ok", int(steps[0][1]))
    return (status if status != "ok" else "failed", -1)


def _fresh_plan(planes: np.ndarray, planner: str, max_seconds: float) -> tuple[Any, str, str]:
    """(the position rebuilt from ``planes``, the planner's LURD from it or "", a status).

    The status is "ok" with a solution, "dead" when the planner proves the position
    unsolvable, "failed" when it runs out of time or the position is already solved.
    """
    import planners

    position = read_position(np.asarray(planes))
    if position.solved:
        return position, "", "failed"
    limits = planners.SearchLimits(max_seconds=float(max_seconds))
    result = planners.solve(position.to_level(), planner, limits)
    if result.solved:
        return position, result.lurd, "ok"
    return position, "", "dead" if result.status == "unsolvable" else "failed"


def rank_observation(
    payload: tuple[np.ndarray, np.ndarray],
    planner: str = "astar",
    max_seconds: float = 5.0,
) -> RankedLabel:
    """A Push-env observation's pushes ranked by the planner (``DaggerConfig.targets="ranked"``).

    Every legal push of ``payload = (planes, action_mask)`` is applied to the rebuilt position
    and the position after it is solved: its cost is 1 + the pushes of that solution
    (push-optimal with A*), ``inf`` when the planner proves the level unsolvable after it,
    ``nan`` when it is illegal or the planner runs out of time.

    Returns:
        ("ok", a cheapest push, costs float32[n_actions]) when some push has a cost, else
        ("dead", -1, costs) when every legal push loses the level, else ("failed", -1, costs).
    """
    planes, mask = payload
    costs = push_costs(read_position(np.asarray(planes)), mask, planner, max_seconds)
    finite = np.isfinite(costs)
    if finite.any():
        return ("ok", int(np.argmin(np.where(finite, costs, np.inf))), costs)
    legal = np.asarray(mask, dtype=bool)
    return ("dead" if np.isinf(costs[legal]).all() else "failed", -1, costs)


def push_costs(
    position: Any, mask: np.ndarray, planner: str = "astar", max_seconds: float = 5.0
) -> np.ndarray:
    """float32[n_actions]: each legal push's cost to go (``rank_observation``), nan elsewhere."""
    import planners

    costs = np.full(len(mask), np.nan, dtype=np.float32)
    limits = planners.SearchLimits(max_seconds=float(max_seconds))
    for action in np.flatnonzero(mask).tolist():
        child = position.after_push(action)
        if child.solved:
            costs[action] = 1.0
            continue
        result = planners.solve(child.to_level(), planner, limits)
        if result.solved:
            costs[action] = 1.0 + sum(c.isupper() for c in result.lurd)
        elif result.status == "unsolvable":
            costs[action] = np.inf
    return costs


def nearest_best_label(position: Any, costs: np.ndarray) -> RankedLabel:
    """A Move-env position's steps toward the nearest of its cheapest pushes, alike.

    ``costs`` are its pushes' costs (``push_costs``). Of the pushes with the least finite
    cost, the ones whose square behind the box is nearest the player are the targets; the
    label weighs alike every step that starts a shortest walk to one of those squares, or the
    push itself when the player stands there. Walking toward the nearest target keeps it the
    nearest, so a policy that follows the label never switches target halfway.

    Returns:
        ("ok", a labelled step, float32[4] label), ("dead", -1, zeros) when every legal push
        loses the level, ("failed", -1, zeros) when none has a known cost.
    """
    from agents.training.walks import position_steps, walk_map

    label = np.zeros(N_DIRECTIONS, dtype=np.float32)
    finite = np.isfinite(costs)
    if not finite.any():
        legal = ~np.isnan(costs)
        return ("dead" if legal.any() and np.isinf(costs[legal]).all() else "failed", -1, label)
    best = np.flatnonzero(finite & (costs == costs[finite].min()))
    squares, dirs = np.divmod(best, N_DIRECTIONS)
    offsets = np.array(position.offsets())
    stands = squares - offsets[dirs]
    dist = walk_map(position, position.player)[stands]
    near = dist == dist.min()
    if dist.min() == 0:
        label[dirs[near]] = 1.0
    else:
        for stand in np.unique(stands[near]).tolist():
            label += position_steps(position, stand)
    label = label > 0
    return ("ok", int(np.argmax(label)), (label / label.sum()).astype(np.float32))


def rank_region(
    payload: np.ndarray, planner: str = "astar", max_seconds: float = 5.0
) -> np.ndarray:
    """``push_costs`` of a Move-env observation's position (its player's region's pushes)."""
    position = read_position(np.asarray(payload))
    return push_costs(position, push_action_mask(position), planner, max_seconds)


def walk_observation(
    planes: np.ndarray, planner: str = "astar", max_seconds: float = 5.0
) -> RankedLabel:
    """A Move-env observation labelled with every first step of a shortest walk to a push.

    The position is solved as in ``label_observation``; the label weighs alike every step
    that starts a shortest walk to the square the plan's first push is made from (the push
    itself when the player stands there), as ``agents.training.walks`` labels a dataset
    (``DaggerConfig.targets="walk"``).

    Returns:
        ("ok", the plan's first step, float32[4] label), or ("dead" / "failed", -1, zeros).
    """
    from agents.training.walks import position_steps

    position, lurd, status = _fresh_plan(planes, planner, max_seconds)
    label = np.zeros(N_DIRECTIONS, dtype=np.float32)
    if not lurd:
        return (status if status != "ok" else "failed", -1, label)
    first = MOVE_CHARS.index(lurd[0].lower())
    label[first] = 1.0
    walk = len(lurd) - len(lurd.lstrip(MOVE_CHARS))
    if walk > 0:
        offsets = position.offsets()
        stand = position.player + sum(offsets[MOVE_CHARS.index(c)] for c in lurd[:walk])
        steps = position_steps(position, stand)
        if steps[first]:
            label = (steps / steps.sum()).astype(np.float32)
    return ("ok", first, label)


def ranked_targets(costs: np.ndarray, temperature: float) -> np.ndarray:
    """Soft labels float32[N, n_actions] from push costs: ``exp(-(cost - best) / temperature)``.

    Each row sums to 1 over its pushes with a finite cost; the others (losing, unknown or
    illegal) get 0. Every row needs at least one finite cost.
    """
    costs = np.asarray(costs, dtype=np.float64)
    finite = np.isfinite(costs)
    if not finite.any(axis=1).all():
        raise ValueError("every row of costs needs a push with a finite cost")
    best = np.where(finite, costs, np.inf).min(axis=1, keepdims=True)
    weights = np.where(finite, np.exp(-(np.where(finite, costs, 0.0) - best) / temperature), 0.0)
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


class Labeller:
    """Labels observations with the planner, once per position (``Position.key``).

    Args:
        dagger: the planner, its time limit and the backend's jobs.
        action_space: "push", "macro" or "move".
        ray: None (no Ray), "local", "auto" or a cluster address (``soko_gym.execution``);
            with "local", ``dagger.jobs`` above 1 sets the local Ray's CPUs (1: every CPU).

    Raises:
        ValueError: naming the argument for an unknown planner or action space, or ranked
            labels outside the Push env.
    """

    def __init__(self, dagger: DaggerConfig, action_space: str, ray: str | None = None) -> None:
        import planners

        if dagger.planner not in planners.available():
            raise ValueError(
                f"planner must be one of {planners.available()}, got {dagger.planner!r}"
            )
        if action_space not in ACTION_SPACES:
            raise ValueError(f"action_space must be one of {ACTION_SPACES}, got {action_space!r}")
        self.action_space = action_space
        self.ranked = dagger.targets == "ranked"
        self.walk = dagger.targets == "walk"
        self.ranked_walk = dagger.targets == "ranked-walk"
        # labels carry a distribution (third field)
        self.soft = self.ranked or self.walk or self.ranked_walk
        if self.ranked_walk and (action_space != "move" or dagger.teacher):
            raise ValueError(
                "ranked-walk labels label player steps by the planner's costs: the action space "
                f"must be 'move' and no teacher set, got {action_space!r} and teacher "
                f"{dagger.teacher!r}"
            )
        if self.ranked and action_space != "push":
            raise ValueError(
                f"ranked labels rank pushes: the action space must be 'push', got {action_space!r}"
            )
        if self.walk and action_space != "move":
            raise ValueError(
                f"walk labels label player steps: the action space must be 'move', got "
                f"{action_space!r}"
            )
        self.teacher = None
        if dagger.teacher:
            from agents.training.teacher import PushTeacher

            if action_space != "move":
                raise ValueError(
                    f"a teacher labels player steps: the action space must be 'move', got "
                    f"{action_space!r}"
                )
            self.teacher = PushTeacher(dagger.teacher)
            self.walk = self.soft = True
        limits = {"planner": dagger.planner, "max_seconds": dagger.time_limit}
        self.limits = limits
        self.fn: Callable[[Any], Any] = (
            partial(rank_observation, **limits)
            if self.ranked
            else partial(walk_observation, **limits)
            if self.walk
            else partial(label_observation, **limits, action_space=action_space)
        )
        jobs = dagger.jobs if ray is None or dagger.jobs > 1 else None
        self.backend = Backend(jobs=jobs, ray=ray)
        self.cache: dict[PositionKey, Any] = {}
        # ranked-walk: each player region's legal pushes and their costs, ranked once for
        # every square of the region
        self.region_costs: dict[PositionKey, tuple[np.ndarray, np.ndarray]] = {}
        self.seconds = 0.0

    def key(self, planes: np.ndarray) -> PositionKey:
        """The position key of one observation."""
        return read_position(planes).key(self.action_space)

    def label(self, observations: np.ndarray, masks: np.ndarray | None = None) -> list[Any]:
        """A label per observation; positions not in the cache are planned (in parallel).

        Ranked labels (``RankedLabel``) need each observation's action mask, ``masks``.
        """
        keys = [self.key(o) for o in observations]
        if self.ranked and (masks is None or len(masks) != len(observations)):
            raise ValueError("ranked labels need one action mask per observation")
        todo: dict[PositionKey, int] = {}
        for i, k in enumerate(keys):
            if k not in self.cache and k not in todo:
                todo[k] = i
        if todo:
            start = time.perf_counter()
            rows = list(todo.values())
            payloads: list[Any] = (
                [(observations[i], masks[i]) for i in rows]
                if self.ranked and masks is not None  # masks checked above
                else [observations[i] for i in rows]
            )
            labels = (
                self.teacher.label(np.stack(payloads))
                if self.teacher is not None
                else self._ranked_walks(payloads)
                if self.ranked_walk
                else run_ordered(self.fn, payloads, self.backend)
            )
            self.seconds += time.perf_counter() - start
            self.cache.update(zip(todo, labels, strict=True))
        return [self.cache[k] for k in keys]

    def _ranked_walks(self, observations: list[np.ndarray]) -> list[RankedLabel]:
        """``nearest_best_label`` of each Move-env observation, each region ranked once."""
        positions = [read_position(o) for o in observations]
        regions = [p.key("push") for p in positions]
        todo: dict[PositionKey, int] = {}
        for i, k in enumerate(regions):
            if k not in self.region_costs and k not in todo:
                todo[k] = i
        if todo:
            fn = partial(rank_region, **self.limits)
            ranked = run_ordered(fn, [observations[i] for i in todo.values()], self.backend)
            for k, costs in zip(todo, ranked, strict=True):
                legal = np.flatnonzero(~np.isnan(costs))
                self.region_costs[k] = (legal, costs[legal])
        out = []
        for position, k in zip(positions, regions, strict=True):
            legal, known = self.region_costs[k]
            costs = np.full(position.n_cells * N_DIRECTIONS, np.nan, dtype=np.float32)
            costs[legal] = known
            out.append(nearest_best_label(position, costs))
        return out
