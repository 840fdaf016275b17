"""The one grammar of level sources, shared by the envs, the planners' CLI and training.

A *level source* is one of:

- a bundled pack name, a file (XSB/SOK/TXT) or a directory of Boxoban files, optionally with a
  1-based selection: ``microban``, ``xsokoban:1-10``, ``levels.xsb:3``;
- ``generated[:WxH][:N]``: fresh levels from the level generator, W columns, H rows, N boxes
  (``generated`` alone: the generator's defaults, 10x10 with 4 boxes).

Several sources joined by ``+`` (``generated:7x7:2+microban``) are *mixed*: fixed sources are
concatenated, and a training vector env splits its sub-envs between the parts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

GENERATED = "generated"
_GENERATED = re.compile(r"^generated(?::(?P<w>\d+)x(?P<h>\d+))?(?::(?P<n>\d+))?$")


@dataclass(frozen=True)
class SourceSpec:
    """One parsed level source (a part of a ``+`` mix).

    Attributes:
        text: the source as written.
        generated: True for ``generated[:WxH][:N]``.
        generator_kwargs: ``width``/``height``/``n_boxes`` given in the spec (generated only;
            the generator's defaults for those left out).
    """

    text: str
    generated: bool
    generator_kwargs: dict[str, int] = field(default_factory=dict)

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

    ``"generated:7x7:2"`` is generated with width 7, height 7, 2 boxes; anything not starting
    with ``generated`` is a pack, file or selection, passed on as written (``load_levels``
    checks it).

    Raises:
        ValueError: for a malformed ``generated`` spec or a spec containing ``+``.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"a level source must be a non-empty string, got {spec!r}")
    if "+" in spec:
        raise ValueError(f"level source {spec!r} mixes sources: split it with split_sources")
    if not spec.startswith(GENERATED):
        return SourceSpec(spec, False)
    m = _GENERATED.match(spec)
    if m is None:
        raise ValueError(
            f"generated level source {spec!r}: write generated[:WxH][:N], e.g. generated:7x7:2"
        )
    kwargs: dict[str, int] = {}
    if m["w"]:
        kwargs.update(width=int(m["w"]), height=int(m["h"]))
    if m["n"]:
        kwargs["n_boxes"] = int(m["n"])
    return SourceSpec(spec, True, kwargs)


def parse_sources(spec: str) -> list[SourceSpec]:
    """Every part of a ``+`` spec, parsed."""
    return [parse_source(part) for part in split_sources(spec)]
