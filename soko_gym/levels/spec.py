"""The one grammar of level sources, shared by the envs, the planners' CLI and training.

A *level source* is one of:

- a bundled pack name, a file (XSB/SOK/TXT) or a directory of Boxoban files, optionally with a
  1-based selection: ``microban``, ``xsokoban:1-10``, ``levels.xsb:3``;
- ``generated[:WxH][:N][:STYLE]``: fresh levels from the level generator, W columns, H rows,
  N boxes, room style ``random`` (the default), ``open`` or ``boxoban`` (wall counts drawn
  like Boxoban's) (``generated`` alone: the generator's defaults, 10x10 with 4 boxes);
- ``generated:corridor:N[:A-B]``: the one-box corridor of length N in its four rotations
  (``levels/corridor.py``): fixed levels, the same every time, so a fixed source here;
- ``graded:FILE.csv[:KEY=A-B]...[:A-B]``: the levels a ``soko grade`` CSV lists whose figure
  ``KEY`` (pushes, moves, boxes, width, height) lies in A..B (``levels/graded.py``).

Several sources joined by ``+`` (``generated:7x7:2+microban``) are *mixed*: fixed sources are
concatenated, and a training vector env splits its sub-envs between the parts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from soko_gym.levels.corridor import corridor_length, is_corridor_spec
from soko_gym.levels.level import Level
from soko_gym.levels.packs import load_levels, split_selection

GENERATED = "generated"
_GENERATED = re.compile(
    r"^generated(?::(?P<w>\d+)x(?P<h>\d+))?(?::(?P<n>\d+))?(?::(?P<shape>random|open|boxoban))?$"
)


@dataclass(frozen=True)
class SourceSpec:
    """One parsed level source (a part of a ``+`` mix).

    Attributes:
        text: the source as written.
        generated: True for ``generated[:WxH][:N][:STYLE]``.
        generator_kwargs: ``width``/``height``/``n_boxes``/``room_shape`` given in the spec
            (generated only; the generator's defaults for those left out).
    """

    text: str
    generated: bool
    generator_kwargs: dict[str, Any] = field(default_factory=dict)

    def with_generator_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The spec's ``WxH:N`` joined with the generator arguments given beside it.

        Raises:
            ValueError: when a key is given in both with different values.
        """
        for key, value in self.generator_kwargs.items():
            if key in kwargs and kwargs[key] != value:
                raise ValueError(
                    f"levels {self.text!r} gives {key}={value} but generator_kwargs gives "
                    f"{key}={kwargs[key]!r}"
                )
        return {**self.generator_kwargs, **kwargs}

    @property
    def size(self) -> tuple[int, int]:
        """(rows, cols) of generated levels (10x10 when the spec gives none)."""
        kw = self.generator_kwargs
        return int(kw.get("height", 10)), int(kw.get("width", 10))


def split_sources(spec: str) -> list[str]:
    """The parts of a source spec: ``"a+b"`` gives ``["a", "b"]``.

    Raises:
        ValueError: for an empty spec or an empty part around ``+``.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"a level source must be a non-empty string, got {spec!r}")
    parts = spec.split("+")
    if not all(parts):
        raise ValueError(f"level source {spec!r} has an empty part around '+'")
    return parts


def parse_source(spec: str) -> SourceSpec:
    """Parse one part of a source spec (no ``+``).

    ``"generated:7x7:2"`` is generated with width 7, height 7, 2 boxes; the corridors
    ``generated:corridor:N[:A-B]`` are fixed levels; anything else is a pack, file, graded
    suite or selection, passed on as written (``load_levels`` checks it).

    Raises:
        ValueError: for a malformed ``generated`` spec (corridors included) or a spec
            containing ``+``.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"a level source must be a non-empty string, got {spec!r}")
    if "+" in spec:
        raise ValueError(f"level source {spec!r} mixes sources: split it with split_sources")
    if not spec.startswith(GENERATED):
        return SourceSpec(spec, False)
    if is_corridor_spec(spec):
        corridor_length(split_selection(spec)[0], spec)  # a bad length: ValueError now
        return SourceSpec(spec, False)
    m = _GENERATED.match(spec)
    if m is None:
        raise ValueError(
            f"generated level source {spec!r}: write generated[:WxH][:N][:random|open|boxoban], "
            "e.g. generated:7x7:2 or generated:10x10:4:boxoban (or the corridors "
            "generated:corridor:N, e.g. generated:corridor:25)"
        )
    kwargs: dict[str, Any] = {}
    if m["w"]:
        kwargs.update(width=int(m["w"]), height=int(m["h"]))
    if m["n"]:
        kwargs["n_boxes"] = int(m["n"])
    if m["shape"]:
        kwargs["room_shape"] = m["shape"]
    return SourceSpec(spec, True, kwargs)


def parse_sources(spec: str) -> list[SourceSpec]:
    """Every part of a ``+`` spec, parsed."""
    return [parse_source(part) for part in split_sources(spec)]


def generated_source(levels: Any) -> SourceSpec | None:
    """The parsed spec when ``levels`` names generated levels (one env's source), else None.

    Raises:
        ValueError: when generated levels are mixed with other sources (``a+b``): one env
            draws from one source; a training vector env mixes them across its sub-envs.
    """
    if not isinstance(levels, str) or GENERATED not in levels:
        return None
    specs = parse_sources(levels)
    if not any(s.generated for s in specs):
        return None
    if len(specs) > 1:
        raise ValueError(
            f"levels {levels!r} mixes generated levels with other sources; an env draws from "
            "one generated source (soko train mixes sources across its sub-envs)"
        )
    return specs[0]


def load_sources(spec: str | Path) -> list[Level]:
    """The fixed levels of a spec: its ``+`` parts' levels, concatenated in order.

    A path that exists is read as it is, even when its name holds a ``+``.
    """
    if isinstance(spec, Path) or "+" not in spec or Path(spec).exists():
        return load_levels(spec)
    return [level for part in split_sources(spec) for level in load_levels(part)]
