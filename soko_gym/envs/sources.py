"""Level sources of the envs: a fixed list (pack, file, Level objects) or the level generator.

A source owns the ``LevelTable`` the kernels read and decides, from the env's ``np_random``
only, which level each reset gets, so the same seed always gives the same levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from soko_gym.envs.observation import LevelTable
from soko_gym.levels import Level
from soko_gym.levels.frame import level_fits, parse_obs_size
from soko_gym.levels.spec import generated_source, load_sources

LEVEL_ORDERS = ("random", "sequential")


class LevelSource:
    """The levels of one env (or one vector env), framed in a table.

    Fixed sources use one table slot per level (framed on first use); the generated source
    keeps one slot per sub-env and refills it at every reset.

    Attributes:
        levels: the fixed levels, or None for generated levels.
        size: the frame (height, width).
        table: the framed levels.
    """

    def __init__(
        self,
        levels: Any,
        *,
        obs_size: int | tuple[int, int] | None,
        level_order: str,
        generator_kwargs: dict[str, Any] | None,
        n_envs: int = 1,
    ) -> None:
        if level_order not in LEVEL_ORDERS:
            raise ValueError(f"level_order must be one of {LEVEL_ORDERS}, got {level_order!r}")
        self.level_order = level_order
        self.generator_kwargs = dict(generator_kwargs or {})
        size = None if obs_size is None else parse_obs_size(obs_size)
        self._next = 0  # sequential order: the next level index
        self.n_generated = 0
        spec = generated_source(levels)
        if spec is not None:
            self.levels: list[Level] | None = None
            kw = spec.with_generator_kwargs(self.generator_kwargs)
            self.generator_kwargs = kw
            self._check_generator_kwargs(kw)
            gen_size = (int(kw.get("height", 10)), int(kw.get("width", 10)))
            self.size = size or gen_size
            if not (gen_size[0] <= self.size[0] and gen_size[1] <= self.size[1]):
                raise ValueError(
                    f"obs_size {self.size} is smaller than the generated levels {gen_size}"
                )
            self.table = LevelTable(self.size, int(kw.get("n_boxes", 4)), n_envs)
            from soko_gym.levels.generator import warmup_generator

            warmup_generator()  # compile now, not on the first reset
            return
        if generator_kwargs:
            raise ValueError('generator_kwargs is only used with levels="generated[:WxH][:N]"')
        self.levels = _resolve_levels(levels)
        self.size = size or (
            max(lv.height for lv in self.levels),
            max(lv.width for lv in self.levels),
        )
        for i, lv in enumerate(self.levels):
            if not level_fits(lv, self.size):
                raise ValueError(
                    f"obs_size {self.size} is too small for level {i + 1} "
                    f"({lv.title or 'untitled'}), which is {lv.height}x{lv.width} (rows x cols)"
                )
        self.table = LevelTable(self.size, max(lv.n_boxes for lv in self.levels), len(self.levels))

    @staticmethod
    def _check_generator_kwargs(kw: dict[str, Any]) -> None:
        import inspect

        from soko_gym.levels.generator import generate_level

        allowed = set(inspect.signature(generate_level).parameters) - {"rng"}
        unknown = sorted(set(kw) - allowed)
        if unknown:
            raise ValueError(
                f"generator_kwargs has unknown keys {unknown}; allowed: {sorted(allowed)}"
            )

    @property
    def generated(self) -> bool:
        """True for the generated source."""
        return self.levels is None

    @property
    def n_levels(self) -> int:
        """Number of fixed levels (0 for generated levels)."""
        return 0 if self.levels is None else len(self.levels)

    def restart(self) -> None:
        """Start the sequential order, and the count of generated levels, over (seeded reset).

        A generated level's ``level_index`` is its number since the last seeded reset, so it
        depends on the seed alone.
        """
        self._next = 0
        self.n_generated = 0

    def choose(self, rng: np.random.Generator, level_index: int | None) -> int:
        """Index of the fixed level for the next reset.

        Raises:
            ValueError: for a ``level_index`` out of range, or one given to a generated source.
        """
        if self.levels is None:
            raise RuntimeError("choose() is for fixed levels")
        n = len(self.levels)
        if level_index is not None:
            if isinstance(level_index, bool) or not isinstance(level_index, int | np.integer):
                raise ValueError(f"options['level_index'] must be an int, got {level_index!r}")
            if not 0 <= level_index < n:
                raise ValueError(f"options['level_index'] = {level_index} is not in [0, {n})")
            return int(level_index)
        if self.level_order == "sequential":
            index = self._next % n
            self._next = index + 1
            return index
        return int(rng.integers(n))

    def load(self, slot_or_index: int, rng: np.random.Generator) -> int:
        """Make the table slot ready for a reset; returns the slot to read.

        For fixed levels ``slot_or_index`` is the level index (its slot); for generated levels
        it is the sub-env's slot, refilled with a new level drawn from ``rng``.
        """
        if self.levels is not None:
            if self.table.levels[slot_or_index] is None:
                self.table.put(slot_or_index, self.levels[slot_or_index])
            return slot_or_index
        from soko_gym.levels.generator import generate_level

        made = generate_level(rng, **self.generator_kwargs)
        self.table.put(slot_or_index, made.level)
        self.n_generated += 1
        return slot_or_index


def _resolve_levels(levels: Any) -> list[Level]:
    if isinstance(levels, Level):
        resolved = [levels]
    elif isinstance(levels, str | Path):
        resolved = load_sources(levels)
    elif isinstance(levels, Sequence) and all(isinstance(lv, Level) for lv in levels):
        resolved = list(levels)
    else:
        raise ValueError(
            "levels must be a pack name or selection, a path, a Level, a list of Level or "
            f"'generated[:WxH][:N]'; got {type(levels).__name__}"
        )
    if not resolved:
        raise ValueError("levels is empty: give at least one level")
    return resolved
