"""SearchLimits: how long, how many nodes and how much memory a planner may use."""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_MEMORY_SHARE = 0.5  # of the machine's memory, when max_memory_mb is not given


def machine_memory_mb() -> int:
    """Physical memory of this machine in MB (4096 when it cannot be read)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20)
    except (ValueError, OSError, AttributeError):
        return 4096


@dataclass(frozen=True)
class SearchLimits:
    """Budgets a planner stops at, with status "timeout", "node_limit" or "memory_limit".

    Attributes:
        max_seconds: wall-clock budget (None: no limit).
        max_nodes: expanded nodes (None: no limit).
        max_memory_mb: memory for the planner's own tables (None: half of the machine's memory).
    """

    max_seconds: float | None = None
    max_nodes: int | None = None
    max_memory_mb: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_seconds", "max_nodes", "max_memory_mb"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(
                    f"SearchLimits.{name} must be a positive number or None, got {value!r}"
                )

    @property
    def memory_bytes(self) -> int:
        """The memory budget in bytes (the default share when ``max_memory_mb`` is None)."""
        mb = self.max_memory_mb
        if mb is None:
            mb = machine_memory_mb() * DEFAULT_MEMORY_SHARE
        return int(mb * 2**20)
