"""The search driver of the kernel planners (astar, greedy, idastar, bfs, dfs ..., packing order).

Each of these searches is a numba kernel run in slices: ``SliceSearch.run`` checks the node and
time limits, calls the kernel for at most ``slice_nodes`` expansions, grows the array group
the kernel reports full (``Store``, within the memory budget) and maps the kernel's final
status to the outcome's. A planner module holds only its options (a frozen dataclass checked
with the ``check_*`` helpers), the arrays its kernel takes and the kernel call.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from planners._kernels.common import (
    C_EXPANDED,
    C_GENERATED,
    EXHAUSTED,
    FOUND,
    GROW_HEAP,
    GROW_NODES,
    GROW_TABLE,
    RUNNING,
)
from planners._kernels.table import Table, new_table, rehash
from planners.base import Outcome, Planner, Push
from planners.limits import SearchLimits


def check_bool(option: str, value: Any) -> None:
    """ValueError naming ``option`` unless ``value`` is a bool."""
    if not isinstance(value, bool):
        raise ValueError(f"option {option} must be True or False, got {value!r}")


def check_int(
    option: str, value: Any, low: int, high: int | None = None, allow_none: bool = False
) -> None:
    """ValueError naming ``option`` unless ``value`` is an int in ``low..high``.

    Bools are not ints here; None passes when ``allow_none``.
    """
    if value is None and allow_none:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        bounds = f">= {low}" if high is None else f"in {low}..{high}"
        extra = " or None" if allow_none else ""
        raise ValueError(f"option {option} must be an int {bounds}{extra}, got {value!r}")


def check_choice(option: str, value: Any, choices: tuple[str, ...]) -> None:
    """ValueError naming ``option`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"option {option} must be one of {choices}, got {value!r}")


def power_of_two(n: int, least: int = 2) -> int:
    """The smallest power of two >= ``n`` and >= ``least``."""
    return max(least, 1 << (n - 1).bit_length())


def group_bytes(group: tuple) -> int:
    """Bytes held by the arrays of a group."""
    return sum(a.nbytes for a in group)


def _doubled(group: tuple) -> tuple:
    """``group`` with twice the slots (a ``Table``, rehashed) or twice the rows (kept)."""
    if isinstance(group, Table):
        bigger = new_table(2 * group.hashes.shape[0])
        rehash(*group, *bigger)
        return bigger
    rows = []
    for a in group:
        new = np.zeros((2 * a.shape[0], *a.shape[1:]), dtype=a.dtype)
        new[: a.shape[0]] = a
        rows.append(new)
    return type(group)(*rows)


class Store:
    """The growable arrays of one search, against a memory budget.

    Each group is a namedtuple of arrays a kernel takes as one argument, by name: a ``Table``
    grows by rehashing into twice the slots, any other group by doubling the rows (first
    axis) of every array. ``used`` counts the bytes of every group, ``peak`` its largest value
    within the budget (a search whose first arrays pass the budget never runs).
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.groups: dict[str, tuple] = {}
        self.used = 0
        self.peak = 0

    def __getitem__(self, name: str) -> Any:
        return self.groups[name]

    def put(self, name: str, group: tuple) -> None:
        """Add or replace group ``name`` (whatever the budget: see ``fits``)."""
        old = self.groups.get(name)
        self.used += group_bytes(group) - (0 if old is None else group_bytes(old))
        if self.used <= self.budget:
            self.peak = max(self.peak, self.used)
        self.groups[name] = group

    def fits(self) -> bool:
        """Whether the groups stay within the budget."""
        return self.used <= self.budget

    def grow(self, name: str) -> bool:
        """Double group ``name``; False (and no change) when that would pass the budget."""
        old = self.groups[name]
        if self.used + group_bytes(old) > self.budget:
            return False
        self.put(name, _doubled(old))
        return True


class SliceSearch(ABC):
    """One search run by its kernel in slices, with the limits checked between slices.

    Subclasses allocate their ``store`` groups and set up ``counters`` (int64, ``common``
    slots first), and implement ``step`` (one kernel call), ``plan`` and ``stats``; those with
    more than one kernel run (iterations) or other statuses override ``finished``.
    """

    grows: ClassVar[dict[int, str]] = {
        GROW_NODES: "nodes",
        GROW_TABLE: "table",
        GROW_HEAP: "heap",
    }  # the store group each GROW_* status names

    def __init__(
        self, limits: SearchLimits, deadline: float | None, slice_nodes: int, n_counters: int
    ) -> None:
        self.limits = limits
        self.deadline = deadline
        self.slice_nodes = slice_nodes
        self.store = Store(limits.memory_bytes)
        self.counters = np.zeros(n_counters, dtype=np.int64)

    @property
    def expanded(self) -> int:
        """Nodes expanded so far."""
        return int(self.counters[C_EXPANDED])

    @abstractmethod
    def step(self, budget: int) -> int:
        """Call the kernel for at most ``budget`` expansions; returns its status."""

    @abstractmethod
    def plan(self) -> list[Push]:
        """The solution's pushes, after ``finished`` said "solved"."""

    @abstractmethod
    def stats(self) -> dict[str, Any]:
        """The planner's statistics."""

    def finished(self, status: int) -> str | None:
        """The outcome of a final kernel status, or None to go on (say, a new iteration)."""
        if status == FOUND:
            return "solved"
        if status == EXHAUSTED:
            return "unsolvable"
        raise RuntimeError(f"{type(self).__name__}: unexpected kernel status {status}")

    def grow(self, status: int) -> bool:
        """Make room after a GROW_* status; False when the memory budget forbids it."""
        return self.store.grow(self.grows[status])

    def run(self) -> str:
        """Run slices until a final status (a ``result.STATUSES`` value).

        Before each slice: "node_limit" or "timeout" when a limit is reached. A GROW_* status
        grows its group ("memory_limit" past the budget); any other status goes to
        ``finished``.
        """
        max_nodes = self.limits.max_nodes
        while True:
            if max_nodes is not None and self.expanded >= max_nodes:
                return "node_limit"
            if self.deadline is not None and time.perf_counter() >= self.deadline:
                return "timeout"
            budget = self.slice_nodes
            if max_nodes is not None:
                budget = min(budget, math.ceil(max_nodes - self.expanded))
            status = self.step(budget)
            if status == RUNNING:
                continue
            if status in self.grows:
                if not self.grow(status):
                    return "memory_limit"
                continue
            final = self.finished(status)
            if final is not None:
                return final

    def outcome(self, status: str) -> Outcome:
        """The planner's Outcome for a final ``status``."""
        return Outcome(
            status,
            self.plan() if status == "solved" else None,
            self.expanded,
            int(self.counters[C_GENERATED]),
            self.stats(),
        )

    def search(self) -> Outcome:
        """Run the search to its end; the Outcome."""
        return self.outcome(self.run())


class SlicePlanner(Planner):
    """A planner configured by a frozen options dataclass and run as a ``SliceSearch``.

    ``Planner(**options)`` builds ``options_type(**options)``, which checks every option.
    """

    options_type: ClassVar[type]

    def __init__(self, **options: Any) -> None:
        self.options = self.options_type(**options)
