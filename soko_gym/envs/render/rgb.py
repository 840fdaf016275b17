"""RGB pictures of observation planes: the vectorised blitter over the shared tile atlas.

The tiles, tile ids and atlas live in ``soko_gym.levels.picture`` (so ``Level`` can draw itself
with the same tiles); their names are re-exported here.
"""

from __future__ import annotations

import numpy as np

from soko_gym.engine.constants import N_PLANES
from soko_gym.levels.picture import (
    N_TILES,
    TILE_BOX,
    TILE_BOX_ON_GOAL,
    TILE_DEAD,
    TILE_FLOOR,
    TILE_GOAL,
    TILE_NAMES,
    TILE_OUTSIDE,
    TILE_PLAYER,
    TILE_PLAYER_ON_GOAL,
    TILE_WALL,
    check_tile_size,
    gather,
    tile_atlas,
    tile_ids,
)

__all__ = [
    "N_TILES",
    "TILE_BOX",
    "TILE_BOX_ON_GOAL",
    "TILE_DEAD",
    "TILE_FLOOR",
    "TILE_GOAL",
    "TILE_NAMES",
    "TILE_OUTSIDE",
    "TILE_PLAYER",
    "TILE_PLAYER_ON_GOAL",
    "TILE_WALL",
    "check_planes",
    "draw_planes",
    "draw_planes_batch",
    "tile_atlas",
    "tile_ids",
]


def check_planes(planes: np.ndarray, ndim: int) -> None:
    """Raise ValueError unless ``planes`` is a uint8 array of ``ndim`` dims with 5 or 6 planes."""
    if not isinstance(planes, np.ndarray):
        raise ValueError(f"planes must be a numpy array, got {type(planes).__name__}")
    if planes.dtype != np.uint8:
        raise ValueError(f"planes must have dtype uint8, got {planes.dtype}")
    if planes.ndim != ndim:
        layout = "[C, H, W]" if ndim == 3 else "[N, C, H, W]"
        raise ValueError(f"planes must have shape {layout}, got {planes.shape}")
    n_channels = planes.shape[-3]
    if n_channels not in (N_PLANES, N_PLANES + 1, N_PLANES + 2):
        raise ValueError(
            f"planes must have {N_PLANES} to {N_PLANES + 2} channels, got {n_channels}"
        )


def draw_planes(planes: np.ndarray, tile_size: int = 16) -> np.ndarray:
    """Draw one observation as an RGB picture.

    Args:
        planes: uint8[C, H, W] 0/1 planes in the ``PLANE_*`` order of
            ``soko_gym.engine.constants``; C = 5, or 6 with the dead-square plane (then dead
            floor squares are drawn darker, with a faint cross).
        tile_size: side of one square in pixels, >= 1.

    Returns:
        uint8[H * tile_size, W * tile_size, 3] picture.

    Raises:
        ValueError: when ``planes`` or ``tile_size`` is malformed.
    """
    check_tile_size(tile_size)
    check_planes(planes, 3)
    return gather(tile_ids(planes[None]), int(tile_size))[0]


def draw_planes_batch(planes: np.ndarray, tile_size: int = 16) -> np.ndarray:
    """Draw a batch of observations as RGB pictures, vectorised over the batch.

    Args:
        planes: uint8[N, C, H, W] 0/1 planes, as for :func:`draw_planes`.
        tile_size: side of one square in pixels, >= 1.

    Returns:
        uint8[N, H * tile_size, W * tile_size, 3] pictures.

    Raises:
        ValueError: when ``planes`` or ``tile_size`` is malformed.
    """
    check_tile_size(tile_size)
    check_planes(planes, 4)
    return gather(tile_ids(planes), int(tile_size))
