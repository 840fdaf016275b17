"""One environment step on a framed board: THE per-env step kernel and the per-kind kernels.

``_env_step`` and ``_env_reset`` are THE implementation of one env's transition: action
decoding, the move, reward, episode end, the illegal-action no-op and the action mask. The
single envs call them for their one env, the batch kernels (``engine.batch``) loop over them,
so both behave identically by construction. Their building blocks: the move and push kinds'
moves and masks (``engine.moves``), the macro kind's (``engine.macro``), the masks without lost
actions (``engine.deadlock_mask``); their arguments are the bundles of ``engine.env_bundles``.

Each env kind gets kernels of its own (``env_kernels(kind)``: ``env_reset_push`` and
``env_step_push`` for the push kind, and so on): the kind is a constant inside them, so numba
drops the other kinds' branches before typing and a push env never compiles the macro or move
code (a third of an env's cold start).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import njit, types
from numba.extending import overload, register_jitable

from soko_gym.engine.actions import (
    KIND_MACRO,
    KIND_MOVE,
    KIND_PUSH,
    NOOP_ACTION,
    macro_parts,
    square_push_parts,
)
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.deadlock_mask import mask_dead_actions, mask_searched_deadlocks
from soko_gym.engine.exhaust import ExhaustTables
from soko_gym.engine.macro import macro_mask, macro_plan
from soko_gym.engine.moves import (
    ACT_ILLEGAL,
    ACT_NOOP,
    ACT_PUSH,
    count_on_goal,
    mark_trail,
    move_mask,
    move_step,
    place_boxes,
    push_mask,
    push_step,
    write_planes,
)
from soko_gym.engine.reach import reset_stamps

LURD_ASCII = np.frombuffer(b"udlrUDLR", dtype=np.uint8).copy()  # direction + 4 * is_push

# How the per-env kernels below (and the batch loop over them) are compiled:
# - ``_nrt=False``: they never allocate or keep an array, and without numba's runtime no
#   reference counting is emitted for the arrays inside the bundles; with it, a step costs
#   4 to 10 times more (every use of a bundle counts every array it holds).
# - ``inline="always"`` on ``_env_step`` and its parts: the batch loop gets the step's body
#   instead of a call that passes every bundle per env, and the kind-constant ``kind`` argument
#   of the per-kind kernels reaches every branch on it, which numba then prunes before typing.


def compiled(kernel: Any, *args: Any) -> Callable[..., Any]:
    """``kernel`` compiled (or loaded from the cache) for the types of ``args``.

    ``Dispatcher.compile`` returns the compiled function itself: calling it skips numba's
    per-call typing of the arguments, which costs microseconds for bundles of arrays. Call it
    only with arguments of exactly these types (the same bundles, or bundles built alike).
    """
    return kernel.compile(tuple(numba.typeof(a) for a in args))


@njit(cache=True, nogil=True, _nrt=False)
def _record(lurd, at, walk, length, d):
    """Write ``walk[:length]`` and the push ``d`` as LURD letters at ``lurd[at:]``, if they fit."""
    if at + length < lurd.shape[0]:
        for j in range(length):
            lurd[at + j] = LURD_ASCII[walk[j]]
        lurd[at + length] = LURD_ASCII[d + 4]


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _act(kind, cells, offsets, state, scratch, i, action):
    """Decode and apply env i's ``action``.

    Returns:
        (ACT_* status, moves, pushes, change in boxes on goal, square the last moved box ended
        on or -1); an illegal action changes nothing and returns zeros.
    """
    box_at = state.box_at[i]
    box_pos = state.box_pos[i]
    obs = state.obs[i]
    lurd = scratch.lurd[i]
    if kind == KIND_MOVE:
        mark_trail(obs, cells.shape[0], state.player[i])
        if action == NOOP_ACTION:
            return ACT_NOOP, 0, 0, 0, -1
        status, p, delta, moved_to = move_step(
            cells, box_at, box_pos, offsets, obs, state.player[i], action
        )
        if status == ACT_ILLEGAL:
            return ACT_ILLEGAL, 0, 0, 0, -1
        state.player[i] = p
        pushes = 1 if status == ACT_PUSH else 0
        if lurd.shape[0] > 0:
            lurd[0] = LURD_ASCII[action + 4 * pushes]
        return status, 1, pushes, delta, moved_to
    stamps = scratch.stamps[i]
    stack = scratch.stack[i]
    parent8 = scratch.parent8[i]
    walk = scratch.walk[i]
    if kind == KIND_PUSH:
        square, d = square_push_parts(action)
        status, p, w, delta = push_step(
            cells,
            box_at,
            box_pos,
            offsets,
            obs,
            state.player[i],
            square,
            d,
            stamps,
            stack,
            parent8,
            walk,
        )
        if status == ACT_ILLEGAL:
            return ACT_ILLEGAL, 0, 0, 0, -1
        state.player[i] = p
        _record(lurd, np.int64(0), walk, w, d)  # int64, not a literal: one compilation
        return ACT_PUSH, w + 1, 1, delta, square + offsets[d]
    src, dst = macro_parts(action, cells.shape[0])
    plan = scratch.plan[i]
    k = np.int64(
        macro_plan(
            cells,
            box_at,
            offsets,
            state.player[i],
            src,
            dst,
            stamps,
            stack,
            scratch.dist[i],
            scratch.parent[i],
            scratch.queue[i],
            plan,
        )
    )
    if k < 0:
        return ACT_ILLEGAL, 0, 0, 0, -1
    p = state.player[i]
    moves = 0
    delta = 0
    sq = src
    for j in range(k):
        d = np.int64(plan[j])
        _, p, w, gd = push_step(
            cells, box_at, box_pos, offsets, obs, p, sq, d, stamps, stack, parent8, walk
        )
        _record(lurd, moves, walk, w, d)
        moves += w + 1
        delta += gd
        sq += offsets[d]
    state.player[i] = p
    return ACT_PUSH, moves, k, delta, dst


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _write_mask(kind, opts, cells, dead, offsets, state, scratch, i):
    """Write env i's action mask into ``state.masks[i]`` (``dead``: the level's dead squares).

    With ``opts.deadlock_mask`` the actions whose push makes a simple deadlock are left out,
    unless every legal action does: the position is lost either way, and a mask without a
    legal action breaks masked policies. With ``opts.deadlock_search`` those too, then the
    ones the exhaustion test proves lose (``mask_searched_deadlocks``), under the same rule.
    """
    _legal_mask(kind, opts, cells, offsets, state, scratch, i)
    if opts.deadlock_mask or opts.deadlock_search > 0:
        kept, cleared = mask_dead_actions(
            np.int64(kind),  # not the literal: one compiled kernel for the three kinds
            cells,
            dead,
            state.box_at[i],
            offsets,
            state.player[i],
            scratch.seen[i],
            scratch.trail[i],
            state.masks[i],
        )
        if kept == 0 and cleared > 0:
            _legal_mask(kind, opts, cells, offsets, state, scratch, i)
        elif opts.deadlock_search > 0:
            _search_mask(
                np.int64(kind), opts.deadlock_search, cells, dead, offsets, state, scratch,
                scratch.search, i,
            )  # fmt: skip


def _search_mask(kind, budget, cells, dead, offsets, state, scratch, search, i):
    """``mask_searched_deadlocks`` on env i's mask: the actions cleared (0 without a search).

    Compiled through its overload below, which picks the body by the type of ``search``: a
    kernel given no ``EnvSearch`` never compiles the search (half an env's cold start).
    """
    if search is None:
        return 0
    return _run_search_mask(kind, budget, cells, dead, offsets, state, scratch, search, i)


@overload(_search_mask, inline="always")
def _search_mask_overload(kind, budget, cells, dead, offsets, state, scratch, search, i):
    if isinstance(search, types.NoneType):
        return lambda kind, budget, cells, dead, offsets, state, scratch, search, i: 0
    return _run_search_mask


@register_jitable
def _run_search_mask(kind, budget, cells, dead, offsets, state, scratch, search, i):
    et = ExhaustTables(
        cells, dead, offsets, search.zobrist, search.box_at[i], search.nodes[i],
        search.hashes[i], search.players[i], search.rows[i], search.pos[i], search.pushes[i],
        scratch.stamps[i], scratch.stack[i], scratch.seen[i], scratch.trail[i],
        search.cstamp[i], search.region[i], search.barrier[i], search.info[i],
        search.params[i], search.counters[i],
    )  # fmt: skip
    return mask_searched_deadlocks(
        kind, et, state.box_at[i], state.box_pos[i], state.n_boxes[i], state.player[i],
        np.int64(budget), scratch.dist[i], scratch.parent[i], scratch.queue[i], state.masks[i],
        search.cleared[i],
    )  # fmt: skip


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _legal_mask(kind, opts, cells, offsets, state, scratch, i):
    """Write env i's legal actions into ``state.masks[i]``."""
    mask = state.masks[i]
    if kind == KIND_MOVE:
        move_mask(cells, state.box_at[i], offsets, state.player[i], mask)
        if opts.noop_action:
            mask[NOOP_ACTION] = True
    elif kind == KIND_PUSH:
        push_mask(
            cells,
            state.box_at[i],
            state.box_pos[i],
            state.n_boxes[i],
            offsets,
            state.player[i],
            scratch.stamps[i],
            scratch.stack[i],
            mask,
        )
    else:
        macro_mask(
            cells,
            state.box_at[i],
            state.box_pos[i],
            state.n_boxes[i],
            offsets,
            state.player[i],
            scratch.stamps[i],
            scratch.stack[i],
            scratch.dist[i],
            scratch.parent[i],
            scratch.queue[i],
            mask,
        )


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _env_reset(kind, opts, tables, state, scratch, i, slot):
    """Start env i's episode on table slot ``slot``: position, planes, counters and mask."""
    cells = tables.cells[slot]
    if slot != state.slot[i]:  # another level: its walls go into the reachability stamps
        reset_stamps(cells, scratch.stamps[i])
    state.slot[i] = slot
    state.n_boxes[i] = place_boxes(
        state.box_at[i], state.box_pos[i], tables.start_boxes[slot], tables.n_boxes[slot]
    )
    state.player[i] = tables.start_player[slot]
    write_planes(cells, state.box_pos[i], state.n_boxes[i], state.player[i], state.obs[i])
    state.on_goal[i] = count_on_goal(cells, state.box_pos[i], state.n_boxes[i])
    state.steps[i] = 0
    state.moves[i] = 0
    state.pushes[i] = 0
    _write_mask(kind, opts, cells, tables.dead[slot], tables.offsets, state, scratch, i)


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _env_step(kind, opts, tables, state, scratch, i, action):
    """Step env i with ``action`` (in range for ``kind``): THE env transition.

    Decodes the action, moves, counts, tests for a simple deadlock after a push (with
    ``opts.deadlock_termination``), pays the reward, ends the episode when solved, deadlocked
    or out of steps, and writes the new mask (without deadlocking pushes with
    ``opts.deadlock_mask``). An illegal action changes nothing but the step
    count: it pays the step reward and leaves the mask as it was. With a nonzero-width
    ``scratch.lurd``, the action's LURD letters go to ``scratch.lurd[i, :moves]``.

    Returns:
        (reward, terminated, truncated, illegal, deadlock, moves, pushes) of this action.
    """
    s = state.slot[i]
    cells = tables.cells[s]
    offsets = tables.offsets
    status, moves, pushes, delta, moved_to = _act(kind, cells, offsets, state, scratch, i, action)
    state.steps[i] += 1
    state.moves[i] += moves
    state.pushes[i] += pushes
    state.on_goal[i] += delta
    solved = state.on_goal[i] == state.n_boxes[i]
    deadlock = False
    if opts.deadlock_termination and pushes > 0 and not solved:
        deadlock = is_simple_deadlock(
            cells,
            tables.dead[s],
            state.box_at[i],
            offsets,
            moved_to,
            scratch.seen[i],
            scratch.trail[i],
        )
    rewards = opts.rewards
    reward = rewards[0]
    if delta > 0:
        reward += rewards[1] * delta
    elif delta < 0:
        reward -= rewards[2] * delta
    if solved:
        reward += rewards[3]
    # as gymnasium.wrappers.TimeLimit: the limit truncates even a step that terminates
    truncated = opts.max_steps > 0 and state.steps[i] >= opts.max_steps
    illegal = status == ACT_ILLEGAL
    if not illegal:  # an illegal action moved nothing: the mask stands
        _write_mask(kind, opts, cells, tables.dead[s], offsets, state, scratch, i)
    return reward, solved or deadlock, truncated, illegal, deadlock, moves, pushes


# The per-kind kernels: ``_env_reset`` / ``_env_step`` with the kind as a constant. Arguments
# and results as theirs (``kind`` left out); ``env_kernels`` picks the pair of a kind.


@njit(cache=True, nogil=True, _nrt=False)
def env_reset_move(opts, tables, state, scratch, i, slot):
    """``_env_reset`` of a move env."""
    _env_reset(KIND_MOVE, opts, tables, state, scratch, i, slot)


@njit(cache=True, nogil=True, _nrt=False)
def env_step_move(opts, tables, state, scratch, i, action):
    """``_env_step`` of a move env."""
    return _env_step(KIND_MOVE, opts, tables, state, scratch, i, action)


@njit(cache=True, nogil=True, _nrt=False)
def env_reset_push(opts, tables, state, scratch, i, slot):
    """``_env_reset`` of a push env."""
    _env_reset(KIND_PUSH, opts, tables, state, scratch, i, slot)


@njit(cache=True, nogil=True, _nrt=False)
def env_step_push(opts, tables, state, scratch, i, action):
    """``_env_step`` of a push env."""
    return _env_step(KIND_PUSH, opts, tables, state, scratch, i, action)


@njit(cache=True, nogil=True, _nrt=False)
def env_reset_macro(opts, tables, state, scratch, i, slot):
    """``_env_reset`` of a macro env."""
    _env_reset(KIND_MACRO, opts, tables, state, scratch, i, slot)


@njit(cache=True, nogil=True, _nrt=False)
def env_step_macro(opts, tables, state, scratch, i, action):
    """``_env_step`` of a macro env."""
    return _env_step(KIND_MACRO, opts, tables, state, scratch, i, action)


def env_kernels(kind: int) -> tuple[Any, Any]:
    """The ``(env_reset_*, env_step_*)`` kernels of env kind ``kind`` (``actions.KIND_*``).

    Raises:
        ValueError: for an unknown kind.
    """
    kernels = {
        KIND_MOVE: (env_reset_move, env_step_move),
        KIND_PUSH: (env_reset_push, env_step_push),
        KIND_MACRO: (env_reset_macro, env_step_macro),
    }
    if kind not in kernels:
        raise ValueError(f"kind must be one of {sorted(kernels)}, got {kind!r}")
    return kernels[kind]
