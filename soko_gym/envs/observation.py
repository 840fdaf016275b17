"""The observation frame: levels centred in one fixed H x W grid, kept as arrays for the kernels.

Every env frames its levels the same way, so a square index is ``row * W + col`` in the
observation and action indices mean the same square for every level of a source.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from gymnasium import spaces

from soko_gym.engine.constants import (
    CELL_DTYPE,
    SQUARE_DTYPE,
)
from soko_gym.engine.env_bundles import EnvTables, env_tables
from soko_gym.levels import Level
from soko_gym.levels.frame import frame_level


class LevelTable:
    """Framed levels in slots of fixed-size arrays that the step kernels index by slot.

    Attributes:
        size: (height, width) of the frame.
        cells: uint8[capacity, H*W] table cell flags.
        dead: uint8[capacity, H*W] 1 on simple dead squares.
        start_boxes: int32[capacity, max_boxes] start box squares (first ``n_boxes`` used).
        n_boxes: int64[capacity] boxes per slot.
        start_player: int64[capacity] start player square.
        levels: the Level in each slot (None until filled).
    """

    def __init__(self, size: tuple[int, int], max_boxes: int, capacity: int) -> None:
        n = size[0] * size[1]
        self.size = size
        self.cells = np.zeros((capacity, n), dtype=CELL_DTYPE)
        self.dead = np.zeros((capacity, n), dtype=CELL_DTYPE)
        self.start_boxes = np.zeros((capacity, max(1, max_boxes)), dtype=SQUARE_DTYPE)
        # int64 scalars: kernels get them as Python ints get passed, one signature for both
        self.n_boxes = np.zeros(capacity, dtype=np.int64)
        self.start_player = np.zeros(capacity, dtype=np.int64)
        self.levels: list[Level | None] = [None] * capacity

    @property
    def max_boxes(self) -> int:
        """Width of ``start_boxes``: the most boxes any slot may hold."""
        return int(self.start_boxes.shape[1])

    def kernel_tables(self, offsets: np.ndarray) -> EnvTables:
        """The step kernels' view of this table (no copy: later slot fills are seen)."""
        return env_tables(
            self.cells, self.dead, self.start_boxes, self.n_boxes, self.start_player, offsets
        )

    def put(self, slot: int, level: Level) -> None:
        """Frame ``level`` into ``slot`` (replacing what was there)."""
        if level.n_boxes > self.max_boxes:
            raise ValueError(
                f"level has {level.n_boxes} boxes; this table holds at most {self.max_boxes}"
            )
        cells, dead, boxes, player = frame_level(level, self.size)
        self.cells[slot] = cells
        self.dead[slot] = dead
        self.start_boxes[slot, : boxes.shape[0]] = boxes
        self.n_boxes[slot] = boxes.shape[0]
        self.start_player[slot] = player
        self.levels[slot] = level

    def ensure(self, slots: Sequence[int] | np.ndarray, source: Sequence[Level]) -> None:
        """Frame ``source[slot]`` into each listed slot that is still empty."""
        for slot in np.asarray(slots, dtype=np.int64).ravel().tolist():
            if self.levels[slot] is None:
                self.put(slot, source[slot])


def observation_space(
    size: tuple[int, int], obs_mode: str, n_planes: int, tile_size: int
) -> spaces.Box:
    """The observation space of one env: ``n_planes`` planes ``(C, H, W)`` or an RGB image."""
    height, width = size
    if obs_mode == "planes":
        return spaces.Box(0, 1, (n_planes, height, width), np.uint8)
    return spaces.Box(0, 255, (height * tile_size, width * tile_size, 3), np.uint8)
