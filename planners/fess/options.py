"""FESS's options: one frozen dataclass, checked in one place, and the budgets it does not expose.

``FessPlanner(**fields)``, ``planners.solve(level, "fess", **fields)`` and the ``--fess-*`` flags
of ``soko solve`` (generated from the fields) all build a ``FessOptions``. The defaults are the
one-worker search the benchmarks measure; the portfolio's stages (``planners.fess.stages``)
change a few of them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from planners.fess.advisors import ADVISORS, PAPER_ADVISORS

PLANS = ("sink", "sinks", "targets")
SINKLESS_PLANS = ("ordered", "unordered")
SINK_CHOICES = ("best", "paper")
CELL_RULES = ("dominated", "lexicographic")
SPACES = ("paper", "free")
BACKWARDS = ("none", "waypoint", "meet")
DEADLOCK_TESTS = ("bipartite", "retrograde", "rooms", "corrals", "learned", "diagonal")

# budgets that are not options (each measured once; RESULTS.md's FESS section)
PLAN_NODES = 3000  # positions of the packing-plan search per sink room tried
PLAN_FIRST_NODES = 30_000  # ... for the paper's sink room searched on (sink_choice="best")
PLAN_SINKS = 4  # sink rooms the "best" choice tries
PLAN_SECONDS = 15.0  # the packing plan's time (and at most a fifth of the level's)
SINKLESS_NODES = 30  # the ordered plan of a level without a sink room (Microban IV 96)
VIA_NODES = 3000  # positions of the waypoint's backward search


@dataclass(frozen=True)
class FessOptions:
    """What a FESS search does; every field is checked when the object is made.

    Attributes:
        plan: the packing plan: "sink" (the paper's Section 6: boxes pulled into a sink room
            leave the board), "sinks" (every fed sink room at once on a level whose targets
            are fed from several areas; elsewhere "sink") or "targets" (no sink room: the
            targets in the order a backward search vacates them).
        sinkless: the plan of a level without a sink room: "ordered" (targets in the order a
            short backward search vacates them) or "unordered" (any target in any order).
        sink_choice: "best" tries up to four sink rooms and searches the paper's on when its
            plan is incomplete; "paper" takes the paper's sink room at the first budget.
        out_of_plan: the out-of-plan axis counts boxes outside the plan's basin (Section 6);
            False makes every floor square the basin, so the axis is neutral.
        backward: the backward (pull) search run before the forward one: "none";
            "waypoint" (``planners.fess.waypoint``: boxes pulled off the targets to a loose
            position, that position solved as the level's targets, the pulls reversed to
            finish); "meet" (``planners.fess.meet``: a third of the time pulling towards the
            start, every position stored; the forward search finishes on meeting any of them).
        space: the feature space: "paper" (cells by out of plan, packed, connectivity and
            room connectivity: the paper's Section 3) or "free" (no packing plan: cells by
            connectivity and room connectivity, moves ranked by them, then by the boxes off
            the targets that no push can move, then by mobility; as Festival's plan-free
            forward search, whose one advisor is ``best``).
        cells: which new positions join their parent's cell (Section 3): "dominated" (those
            better on no feature and worse on one) or "lexicographic" (those worse in the
            feature order).
        room_axis: room connectivity is the feature space's fourth axis (the paper's choice);
            False searches the 3-D space, room connectivity still ranking moves.
        pi_corrals: where a PI-corral exists, keep only the macro moves whose first push goes
            into it (sound: the search stays complete).
        deadlocks: the node-level deadlock tests to run, of "bipartite", "retrograde",
            "rooms", "corrals", "learned" (patterns stored from room and corral proofs) and
            "diagonal" (closed diagonals of squares the player can never enter).
        deadlock_budget: most positions one room or corral deadlock search stores (a power
            of two >= 16); searches that only run out fall to smaller budgets.
        advisors: the advisors to consult (``planners.fess.advisors.ADVISORS``).
        advisor_weight: the weight of a move an advisor picked (the paper: 0).
        move_weight: the weight of every other move (the paper: 1).
        seed: None breaks ties between equal moves in board order; an integer by a random
            permutation drawn from it (the same seed gives the same search).
    """

    plan: str = "sink"
    sinkless: str = "ordered"
    sink_choice: str = "best"
    out_of_plan: bool = True
    backward: str = "none"
    space: str = "paper"
    cells: str = "dominated"
    room_axis: bool = True
    pi_corrals: bool = True
    deadlocks: tuple[str, ...] = DEADLOCK_TESTS
    deadlock_budget: int = 1024
    advisors: tuple[str, ...] = PAPER_ADVISORS
    advisor_weight: int = 0
    move_weight: int = 1
    seed: int | None = None

    def __post_init__(self) -> None:
        for name, choices in (
            ("plan", PLANS),
            ("sinkless", SINKLESS_PLANS),
            ("sink_choice", SINK_CHOICES),
            ("cells", CELL_RULES),
            ("space", SPACES),
            ("backward", BACKWARDS),
        ):
            value = getattr(self, name)
            if value not in choices:
                raise ValueError(f"FESS option {name} must be one of {choices}, got {value!r}")
        for name in ("out_of_plan", "room_axis", "pi_corrals"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(
                    f"FESS option {name} must be True or False, got {getattr(self, name)!r}"
                )
        for name, known in (("deadlocks", DEADLOCK_TESTS), ("advisors", tuple(ADVISORS))):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, tuple | list | frozenset | set):
                raise ValueError(f"FESS option {name} must be a sequence of names, got {value!r}")
            unknown = [v for v in value if v not in known]
            if unknown:
                raise ValueError(f"FESS option {name}: unknown {unknown}; known: {known}")
            object.__setattr__(self, name, tuple(v for v in known if v in value))
        budget = self.deadlock_budget
        if not _is_int(budget) or budget < 16 or budget & (budget - 1):
            raise ValueError(
                f"FESS option deadlock_budget must be a power of two >= 16, got {budget!r}"
            )
        for name in ("advisor_weight", "move_weight"):
            value = getattr(self, name)
            if not _is_int(value) or value < 0:
                raise ValueError(f"FESS option {name} must be an int >= 0, got {value!r}")
        if self.advisor_weight == 0 and self.move_weight == 0:
            raise ValueError("FESS options advisor_weight and move_weight cannot both be 0")
        if self.seed is not None and not _is_int(self.seed):
            raise ValueError(f"FESS option seed must be an int or None, got {self.seed!r}")

    def test(self, name: str) -> bool:
        """Whether the node-level deadlock test ``name`` (of ``DEADLOCK_TESTS``) runs."""
        return name in self.deadlocks

    def changed(self) -> dict[str, Any]:
        """The fields that differ from the defaults (JSON-ready: tuples as lists)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


def make_options(options: Any) -> FessOptions:
    """``FessOptions(**options)`` with an unknown name as a ``ValueError`` that names it."""
    known = {f.name for f in fields(FessOptions)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(f"unknown FESS options {unknown}; known: {', '.join(sorted(known))}")
    return FessOptions(**options)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


__all__ = ["FessOptions", "make_options"]
