"""Random levels, solvable by construction: the Python driver around ``engine/generate.py``.

Every level comes with a LURD solution that ``soko_gym.verify`` accepts, and is a pure function
of the ``np.random.Generator`` state passed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from numbers import Integral

import numpy as np

from soko_gym.engine import generate as kernels
from soko_gym.engine.constants import GOAL, MAX_SIDE, WALL
from soko_gym.engine.rooms import ROOM_OPEN, ROOM_RANDOM
from soko_gym.engine.zobrist import zobrist_table
from soko_gym.levels.level import Level
from soko_gym.levels.lurd import verify

ROOM_SHAPES = {
    "random": ROOM_RANDOM,
    "open": ROOM_OPEN,
    "boxoban": ROOM_RANDOM,
}
# per room shape, when none is given ("boxoban": drawn per level, ``boxoban_wall_density``)
DEFAULT_WALL_DENSITY = {"random": 0.4, "open": 0.1, "boxoban": None}
# Quantiles (0%, 5%, ..., 100%) of the share of wall squares inside the outer wall of the
# 1,000 bundled boxoban-unfiltered-train levels (17 to 51 of 64, mean 32.2): a "boxoban" room
# draws its density from them, so its wall counts follow Boxoban's.
BOXOBAN_WALL_QUANTILES = (
    0.266, 0.328, 0.375, 0.391, 0.406, 0.438, 0.453, 0.453, 0.469, 0.484, 0.5,
    0.516, 0.531, 0.547, 0.547, 0.562, 0.594, 0.609, 0.641, 0.672, 0.797,
)  # fmt: skip
MIN_SIDE = 5  # smallest width or height, outer walls included

_N_WALKS = 8  # reverse-play walks per attempt; the best position over all of them is kept
_KEEP_PROB = 0.6  # chance a walk pulls the same box again (longer box paths)


@dataclass(frozen=True)
class GeneratedLevel:
    """A generated level with a solution.

    Attributes:
        level: the level (validated: closed, one player, as many goals as boxes).
        solution: a LURD string that solves it; not necessarily optimal.
        pushes: number of pushes in ``solution``.
        lower_bound: a lower bound on the pushes of any solution (lone-box push distances), at
            least the ``min_pushes`` asked for and at most ``pushes``.
    """

    level: Level
    solution: str
    pushes: int
    lower_bound: int


def _check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an int, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def _walk_length(n_floor: int, n_boxes: int) -> int:
    """Pulls per walk: enough to wander the whole room with every box."""
    return 2 * n_floor + 20 * n_boxes


@lru_cache(maxsize=32)
def _zobrist(n_cells: int) -> np.ndarray:
    return zobrist_table(n_cells)


def _to_level(cells: np.ndarray, boxes: np.ndarray, player: int, width: int) -> Level:
    """Validated Level from the kernel's flat cells, box squares and player square."""
    chars = np.full(cells.shape[0], ord(" "), dtype=np.uint8)
    chars[(cells & WALL) != 0] = ord("#")
    is_goal = (cells & GOAL) != 0
    chars[is_goal] = ord(".")
    chars[boxes] = np.where(is_goal[boxes], ord("*"), ord("$"))
    chars[player] = ord("+") if is_goal[player] else ord("@")
    text = chars.tobytes().decode("ascii")
    rows = [text[i : i + width].rstrip() for i in range(0, len(text), width)]
    return Level.from_xsb("\n".join(rows) + "\n")


def boxoban_wall_density(rng: np.random.Generator) -> float:
    """A wall density drawn from Boxoban's (``BOXOBAN_WALL_QUANTILES``, interpolated)."""
    q = np.asarray(BOXOBAN_WALL_QUANTILES)
    return float(np.interp(rng.random(), np.linspace(0.0, 1.0, q.size), q))


def generate_level(
    rng: np.random.Generator,
    *,
    width: int = 10,
    height: int = 10,
    n_boxes: int = 4,
    wall_density: float | None = None,
    room_shape: str = "random",
    min_pushes: int = 4,
    max_tries: int = 200,
) -> GeneratedLevel:
    """Generate one random level and a solution for it.

    A room is carved, goals are placed with boxes on them, and random walks of the player pull
    the boxes away (reverse play). The position whose push lower bound times (1 + box switches
    on the way) is highest becomes the level; the pulls, taken back in reverse, solve it.

    Args:
        rng: the only source of randomness; the same generator state gives the same level.
        width: columns, outer walls included, in [5, 128].
        height: rows, outer walls included, in [5, 128].
        n_boxes: boxes (and goals), >= 1; the room needs at least ``2 * n_boxes + 2`` floor
            squares.
        wall_density: fraction of the squares inside the outer wall that are walls, in [0, 1);
            None for the shape's default (``DEFAULT_WALL_DENSITY``: 0.4 random, 0.1 open).
        room_shape: ``"random"`` carves a blob by a random walk (Boxoban-style rooms);
            ``"open"`` is a rectangle with scattered single walls that never split the floor
            (with ``wall_density=0``, an empty rectangle); ``"boxoban"`` is ``"random"`` with
            the wall density drawn per level from Boxoban's (``boxoban_wall_density``), so
            wall counts match boxoban-unfiltered-train's (``benchmarks/boxoban_stats.py``).
        min_pushes: every solution of the level needs at least this many pushes (>= 1, so the
            level is never solved at the start).
        max_tries: rooms to try before giving up (>= 1).

    Returns:
        The level, its LURD solution, the solution's pushes and the push lower bound.

    Raises:
        TypeError: when ``rng`` is not a ``np.random.Generator``.
        ValueError: naming the first argument out of range.
        RuntimeError: when no room in ``max_tries`` gave a level needing ``min_pushes``.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    width = _check_int("width", width, MIN_SIDE, MAX_SIDE)
    height = _check_int("height", height, MIN_SIDE, MAX_SIDE)
    n_boxes = _check_int("n_boxes", n_boxes, 1)
    if room_shape not in ROOM_SHAPES:
        raise ValueError(f"room_shape must be one of {sorted(ROOM_SHAPES)}, got {room_shape!r}")
    if wall_density is None:
        wall_density = DEFAULT_WALL_DENSITY[room_shape]
        if wall_density is None:  # "boxoban": this level's density, within what the boxes need
            n_inner = (width - 2) * (height - 2)
            most = 1.0 - (2 * n_boxes + 2) / max(1, n_inner)
            wall_density = min(boxoban_wall_density(rng), max(0.0, most))
    try:
        density = float(wall_density)
    except (TypeError, ValueError):
        raise ValueError(f"wall_density must be a float in [0, 1), got {wall_density!r}") from None
    if not 0.0 <= density < 1.0:  # also rejects NaN
        raise ValueError(f"wall_density must be in [0, 1), got {wall_density!r}")
    min_pushes = _check_int("min_pushes", min_pushes, 1)
    max_tries = _check_int("max_tries", max_tries, 1)
    n_inner = (width - 2) * (height - 2)
    n_floor = max(1, round((1.0 - density) * n_inner))
    if 2 * n_boxes + 2 > n_floor:
        most = max(0, (n_floor - 2) // 2)
        raise ValueError(
            f"n_boxes={n_boxes} is too many for a {width}x{height} room with "
            f"wall_density={density}: {n_floor} floor squares hold at most {most} boxes"
        )

    n_cells = width * height
    max_steps = _walk_length(n_floor, n_boxes)
    state = rng.integers(1, np.iinfo(np.uint64).max, size=2, dtype=np.uint64, endpoint=True)
    zobrist = _zobrist(n_cells)
    out = kernels.GenLevel(
        cells=np.empty(n_cells, dtype=np.uint8),
        goals=np.empty(n_boxes, dtype=np.int32),
        boxes=np.empty(n_boxes, dtype=np.int32),
        lurd=np.empty(max_steps * (n_cells + 1), dtype=np.uint8),
    )
    spec = kernels.gen_spec(
        height=height,
        width=width,
        n_floor=n_floor,
        shape=ROOM_SHAPES[room_shape],
        n_walks=_N_WALKS,
        max_steps=max_steps,
        keep_prob=_KEEP_PROB,
        max_switches=n_boxes,
        min_pushes=min_pushes,
    )
    statuses: dict[str, int] = {}
    for _ in range(max_tries):
        status, player, pushes, n_chars, bound = kernels.generate_candidate(
            spec, zobrist, state, out
        )
        if status == kernels.GEN_OK:
            level = _to_level(out.cells, out.boxes, int(player), width)
            solution = out.lurd[:n_chars].tobytes().decode("ascii")
            if verify(level, solution).ok:
                return GeneratedLevel(level, solution, int(pushes), int(bound))
            status = kernels.GEN_NO_REPLAY
        reason = kernels.GEN_REASONS[int(status)]
        statuses[reason] = statuses.get(reason, 0) + 1
    raise RuntimeError(
        f"no level found in max_tries={max_tries} rooms for width={width}, height={height}, "
        f"n_boxes={n_boxes}, wall_density={density}, room_shape={room_shape!r}, "
        f"min_pushes={min_pushes} (failures: {statuses})"
    )


def generate_levels(
    n: int, seed_or_rng: int | np.random.Generator | None = None, **kwargs: object
) -> list[GeneratedLevel]:
    """Generate ``n`` levels from one seed or generator.

    Args:
        n: number of levels, >= 0.
        seed_or_rng: an int seed (or None for fresh entropy) given to
            ``np.random.default_rng``, or a Generator that is used and advanced.
        **kwargs: keyword arguments of ``generate_level``.

    Returns:
        The levels, in the order generated.

    Raises:
        ValueError: when ``n`` is negative, or as ``generate_level`` does.
        RuntimeError: as ``generate_level`` does.
    """
    n = _check_int("n", n, 0)
    if isinstance(seed_or_rng, np.random.Generator):
        rng = seed_or_rng
    else:
        rng = np.random.default_rng(seed_or_rng)
    return [generate_level(rng, **kwargs) for _ in range(n)]  # type: ignore[arg-type]


def warmup_generator() -> None:
    """Compile (or load from the numba cache) the generator kernels on one tiny level."""
    generate_level(np.random.default_rng(0), width=6, height=6, n_boxes=1, min_pushes=1)
