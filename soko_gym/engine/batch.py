"""Batched steps of N envs in one call: a loop over the per-env kernels of ``engine.step``.

Env i's work is ``step._env_reset`` or ``step._env_step`` on row i of the bundles, the very
code the single envs' kernels run, so a vector env and N single envs stepped in lockstep agree
by construction. ``EnvCommands.task[i]`` says what env i does in this call: step its action,
reset to table slot ``reset_slot[i]``, or nothing. ``batch_step_<kind>`` runs the envs on the
calling thread, ``batch_step_parallel_<kind>`` spreads chunks of envs over numba's threads
(``batch_kernels(kind)`` picks the pair); both call ``step_range_<kind>``, ``_step_range`` for
that kind, which loops over the envs. As in ``engine.step``, one set per env kind, so each
compiles only its kind's code.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
from numba import njit, prange

from soko_gym.engine.actions import KIND_MACRO, KIND_MOVE, KIND_PUSH
from soko_gym.engine.step import _env_reset, _env_step

TASK_STEP = 0
TASK_RESET = 1
TASK_SKIP = 2
TASK_RESET_KEEP = 3  # reset, keeping this call's outputs (same-step autoreset's second pass)

EnvCommands = namedtuple("EnvCommands", ["task", "actions", "reset_slot"])
EnvCommands.__doc__ = """What each of N envs does in one batch call.

Fields:
    task: int8[N] TASK_STEP, TASK_RESET, TASK_SKIP or TASK_RESET_KEEP per env; a skipped env's
        outputs are left as they are.
    actions: int64[N] action per env (read for TASK_STEP).
    reset_slot: int64[N] table slot per env (read for TASK_RESET and TASK_RESET_KEEP).
"""

StepOutputs = namedtuple(
    "StepOutputs",
    ["rewards", "terminated", "truncated", "illegal", "deadlock", "last_moves", "last_pushes"],
)
StepOutputs.__doc__ = """What the last batch call did per env (``env_step``'s results by env).

Fields:
    rewards: float64[N].
    terminated, truncated, illegal, deadlock: bool[N].
    last_moves, last_pushes: int64[N] moves and pushes of the action.
A reset writes reward 0, False and 0 (TASK_RESET_KEEP leaves the step's outputs).
"""


def new_commands(n_env: int) -> EnvCommands:
    """``EnvCommands`` for ``n_env`` envs, every env skipping."""
    return EnvCommands(
        np.full(n_env, TASK_SKIP, dtype=np.int8),
        np.zeros(n_env, dtype=np.int64),
        np.zeros(n_env, dtype=np.int64),
    )


def new_step_outputs(n_env: int) -> StepOutputs:
    """Zeroed ``StepOutputs`` for ``n_env`` envs."""
    return StepOutputs(
        np.zeros(n_env, dtype=np.float64),
        np.zeros(n_env, dtype=bool),
        np.zeros(n_env, dtype=bool),
        np.zeros(n_env, dtype=bool),
        np.zeros(n_env, dtype=bool),
        np.zeros(n_env, dtype=np.int64),
        np.zeros(n_env, dtype=np.int64),
    )


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _step_range(kind, lo, hi, opts, tables, state, scratch, out, cmd):
    """Reset or step envs ``lo`` to ``hi - 1``; returns how many episodes ended by a step."""
    n_done = 0
    for i in range(lo, hi):
        task = cmd.task[i]
        if task == TASK_SKIP:
            continue
        if task == TASK_STEP:
            reward, term, trunc, illegal, dead, moves, pushes = _env_step(
                kind, opts, tables, state, scratch, i, cmd.actions[i]
            )
            if term or trunc:
                n_done += 1
        else:
            _env_reset(kind, opts, tables, state, scratch, i, cmd.reset_slot[i])
            if task == TASK_RESET_KEEP:
                continue
            reward, term, trunc, illegal, dead, moves, pushes = (
                0.0,
                False,
                False,
                False,
                False,
                0,
                0,
            )
        out.rewards[i] = reward
        out.terminated[i] = term
        out.truncated[i] = trunc
        out.illegal[i] = illegal
        out.deadlock[i] = dead
        out.last_moves[i] = moves
        out.last_pushes[i] = pushes
    return n_done


# The per-kind kernels. ``_step_range`` with the kind as a constant is each kind's loop; the
# batch kernels call it (not inlined: inside a ``prange`` body, an inlined loop with its own
# ``continue`` and counter gave wrong results).


@njit(cache=True, nogil=True, _nrt=False)
def step_range_move(lo, hi, opts, tables, state, scratch, out, cmd):
    """``_step_range`` of move envs."""
    return _step_range(KIND_MOVE, lo, hi, opts, tables, state, scratch, out, cmd)


@njit(cache=True, nogil=True, _nrt=False)
def step_range_push(lo, hi, opts, tables, state, scratch, out, cmd):
    """``_step_range`` of push envs."""
    return _step_range(KIND_PUSH, lo, hi, opts, tables, state, scratch, out, cmd)


@njit(cache=True, nogil=True, _nrt=False)
def step_range_macro(lo, hi, opts, tables, state, scratch, out, cmd):
    """``_step_range`` of macro envs."""
    return _step_range(KIND_MACRO, lo, hi, opts, tables, state, scratch, out, cmd)


@njit(cache=True, nogil=True, _nrt=False)
def batch_step_move(opts, tables, state, scratch, out, cmd):
    """Reset or step every move env on the calling thread; returns the episodes it ended.

    Args:
        opts: ``env_bundles.EnvOptions``.
        tables: ``env_bundles.EnvTables``.
        state: ``env_bundles.EnvState`` of N envs; updated.
        scratch: ``env_bundles.EnvScratch`` of N envs.
        out: ``StepOutputs`` of N envs; written.
        cmd: ``EnvCommands`` of N envs.
    """
    return step_range_move(np.int64(0), cmd.task.shape[0], opts, tables, state, scratch, out, cmd)


@njit(cache=True, nogil=True, _nrt=False)
def batch_step_push(opts, tables, state, scratch, out, cmd):
    """``batch_step_move`` for push envs."""
    return step_range_push(np.int64(0), cmd.task.shape[0], opts, tables, state, scratch, out, cmd)


@njit(cache=True, nogil=True, _nrt=False)
def batch_step_macro(opts, tables, state, scratch, out, cmd):
    """``batch_step_move`` for macro envs."""
    return step_range_macro(np.int64(0), cmd.task.shape[0], opts, tables, state, scratch, out, cmd)


@njit(cache=True, nogil=True, parallel=True)
def batch_step_parallel_move(n_chunks, opts, tables, state, scratch, out, cmd):
    """``batch_step_move`` over ``n_chunks`` chunks of envs spread on numba's threads.

    ``n_chunks`` comes first (a few per thread balance the load; asking numba for its thread
    count inside a kernel would make it uncacheable); the rest is as ``batch_step_move``.
    """
    n_env = cmd.task.shape[0]
    n_chunks = max(1, min(n_env, n_chunks))
    done = np.zeros(n_chunks, dtype=np.int64)
    for c in prange(n_chunks):
        lo = c * n_env // n_chunks
        hi = (c + 1) * n_env // n_chunks
        done[c] = step_range_move(lo, hi, opts, tables, state, scratch, out, cmd)
    return done.sum()


@njit(cache=True, nogil=True, parallel=True)
def batch_step_parallel_push(n_chunks, opts, tables, state, scratch, out, cmd):
    """``batch_step_parallel_move`` for push envs."""
    n_env = cmd.task.shape[0]
    n_chunks = max(1, min(n_env, n_chunks))
    done = np.zeros(n_chunks, dtype=np.int64)
    for c in prange(n_chunks):
        lo = c * n_env // n_chunks
        hi = (c + 1) * n_env // n_chunks
        done[c] = step_range_push(lo, hi, opts, tables, state, scratch, out, cmd)
    return done.sum()


@njit(cache=True, nogil=True, parallel=True)
def batch_step_parallel_macro(n_chunks, opts, tables, state, scratch, out, cmd):
    """``batch_step_parallel_move`` for macro envs."""
    n_env = cmd.task.shape[0]
    n_chunks = max(1, min(n_env, n_chunks))
    done = np.zeros(n_chunks, dtype=np.int64)
    for c in prange(n_chunks):
        lo = c * n_env // n_chunks
        hi = (c + 1) * n_env // n_chunks
        done[c] = step_range_macro(lo, hi, opts, tables, state, scratch, out, cmd)
    return done.sum()


def batch_kernels(kind: int) -> tuple[Any, Any]:
    """The ``(batch_step_*, batch_step_parallel_*)`` kernels of env kind ``kind``.

    Raises:
        ValueError: for an unknown kind.
    """
    kernels = {
        KIND_MOVE: (batch_step_move, batch_step_parallel_move),
        KIND_PUSH: (batch_step_push, batch_step_parallel_push),
        KIND_MACRO: (batch_step_macro, batch_step_parallel_macro),
    }
    if kind not in kernels:
        raise ValueError(f"kind must be one of {sorted(kernels)}, got {kind!r}")
    return kernels[kind]
