"""SearchResult: what a planner returns, solved or not, with its figures and statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STATUSES = ("solved", "timeout", "node_limit", "memory_limit", "unsolvable", "exhausted")
# "exhausted": an incomplete planner (greedy, packing order ...) ran out of moves to try,
# which proves nothing about the level.


@dataclass(frozen=True)
class SearchResult:
    """Outcome of one planner run on one level.

    Attributes:
        planner: registry name of the planner.
        status: one of STATUSES; "unsolvable" only when a complete search proved it.
        lurd: the solution in LURD ("" when not solved), verified by ``soko_gym.verify``.
        pushes: pushes of the solution (0 when not solved).
        moves: moves of the solution (0 when not solved).
        nodes: expanded nodes.
        generated: generated (successor) nodes.
        seconds: wall time of the run.
        optimal: True only when the planner guarantees push-optimality and finished.
        stats: planner-specific figures (pruned nodes by rule, peak memory ...).
    """

    planner: str
    status: str
    lurd: str = ""
    pushes: int = 0
    moves: int = 0
    nodes: int = 0
    generated: int = 0
    seconds: float = 0.0
    optimal: bool = False
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def solved(self) -> bool:
        """True when a verified solution was found."""
        return self.status == "solved"

    def as_dict(self) -> dict[str, Any]:
        """Plain-JSON form (used by ``soko solve --jsonl``)."""
        return {
            "planner": self.planner,
            "solved": self.solved,
            "status": self.status,
            "optimal": self.optimal,
            "lurd": self.lurd,
            "pushes": self.pushes,
            "moves": self.moves,
            "nodes": self.nodes,
            "generated": self.generated,
            "seconds": round(self.seconds, 6),
            "stats": self.stats,
        }
