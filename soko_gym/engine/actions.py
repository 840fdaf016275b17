"""The env action encodings: the one place that turns actions into moves and back.

Three env kinds, three action spaces over an ``H x W`` frame of ``n_cells`` squares (a square
is ``row * W + col``):

- move: a direction (the engine's order: up, down, left, right), plus ``NOOP_ACTION`` when the
  env has the no-op action;
- push: a square push, ``square * 4 + direction``: push the box on ``square`` one step;
- macro: ``from_square * n_cells + to_square``: bring the box on ``from_square`` to
  ``to_square`` by fewest pushes.

The encoders and decoders are plain Python functions that numba also compiles into the kernels
that call them (``register_jitable``), so the env kernels, the masks and Python callers such as
the expert share one definition.
"""

from __future__ import annotations

from numba.extending import register_jitable

KIND_MOVE = 0
KIND_PUSH = 1
KIND_MACRO = 2
KIND_NAMES = ("move", "push", "macro")

NOOP_ACTION = 4  # the move env's optional fifth action: legal, changes nothing


@register_jitable
def square_push_action(square, direction):
    """The push action that pushes the box on ``square`` one step in ``direction``."""
    return square * 4 + direction


@register_jitable
def square_push_parts(action):
    """``(square, direction)`` of a push action."""
    return action >> 2, action & 3


@register_jitable
def macro_action(src, dst, n_cells):
    """The macro action that brings the box on ``src`` to ``dst`` (``n_cells`` frame squares)."""
    return src * n_cells + dst


@register_jitable
def macro_parts(action, n_cells):
    """``(from_square, to_square)`` of a macro action on a frame of ``n_cells`` squares."""
    src = action // n_cells
    return src, action - src * n_cells


def n_actions(kind: int, n_cells: int, noop_action: bool = False) -> int:
    """Size of the Discrete action space of an env kind on a frame of ``n_cells`` squares."""
    if kind == KIND_MOVE:
        return 5 if noop_action else 4
    if kind == KIND_PUSH:
        return 4 * n_cells
    if kind == KIND_MACRO:
        return n_cells * n_cells
    raise ValueError(f"kind must be KIND_MOVE, KIND_PUSH or KIND_MACRO, got {kind!r}")
