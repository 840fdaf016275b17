"""Batched steps of N envs in one call: resets, actions, rewards, episode ends, action masks.

Each env's work goes through the same per-env kernels as the single envs (``engine.step``), so
a vector env and N single envs stepped in lockstep agree exactly. ``task[i]`` says what env i
does in this call: step its action, reset to table slot ``reset_slot[i]``, or nothing. The
``*_parallel`` drivers spread envs over numba's threads; the others run on the calling thread.
The env loop lives inside one kernel that takes a range of envs: the drivers pass the long
argument list once per call (or per chunk of envs), never once per env.

Shared arguments of the drivers (N envs, n = H * W squares, B = most boxes, A = actions):
    kind: KIND_MOVE, KIND_PUSH or KIND_MACRO.
    task: int8[N] TASK_STEP, TASK_RESET, TASK_SKIP or TASK_RESET_KEEP per env; a skipped env's
        outputs are left as they are.
    actions: int64[N] action per env (read for TASK_STEP).
    reset_slot: int32[N] table slot per env (read for TASK_RESET).
    t_cells, t_dead: uint8[L, n] table cell flags and dead squares.
    t_boxes: int32[L, B] start box squares; t_n_boxes, t_player: int32[L].
    offsets: int32[4] flat index step per direction.
    params: float64[8] step, box_on, box_off, solved rewards, max steps (<= 0: none),
        deadlock termination (0/1), no-op action (0/1), unused.
    slot, player, n_boxes, on_goal, steps, moves, pushes: int32[N] per-env state; updated.
    box_at: int16[N, n]; box_pos: int32[N, B]; obs: uint8[N, C * n]; masks: bool[N, A]: updated.
    stamps, seen: uint32[N, n + 1]; stack, queue, parent: int32[N, 4n]; dist: uint16[N, 4n];
        plan, parent8, walk: int8[N, 4n] / int8[N, n] / int8[N, n]; trail: int32[N, n]: scratch.
    rewards: float64[N]; terminated, truncated, illegal, deadlock: bool[N]; last_moves: int32[N]:
        outputs of this call.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.reach import reset_stamps
from soko_gym.engine.step import (
    ACT_ILLEGAL,
    ACT_PUSH,
    count_on_goal,
    macro_mask,
    macro_step,
    move_mask,
    move_step,
    place_boxes,
    push_mask,
    push_step,
    write_planes,
)

KIND_MOVE = 0
KIND_PUSH = 1
KIND_MACRO = 2
TASK_STEP = 0
TASK_RESET = 1
TASK_SKIP = 2
TASK_RESET_KEEP = 3  # reset, keeping this call's outputs (same-step autoreset's second pass)


@njit(cache=True, nogil=True)
def _step_range(
    lo,
    hi,
    kind,
    task,
    actions,
    reset_slot,
    t_cells,
    t_dead,
    t_boxes,
    t_n_boxes,
    t_player,
    offsets,
    params,
    slot,
    player,
    n_boxes,
    on_goal,
    steps,
    moves,
    pushes,
    box_at,
    box_pos,
    obs,
    masks,
    stamps,
    seen,
    stack,
    queue,
    parent,
    dist,
    plan,
    parent8,
    walk,
    trail,
    rewards,
    terminated,
    truncated,
    illegal,
    deadlock,
    last_moves,
):
    """Reset or step envs ``lo`` to ``hi - 1``; returns how many episodes ended by a step."""
    n_done = 0
    for i in range(lo, hi):
        what = task[i]
        if what == TASK_SKIP:
            continue
        if what != TASK_RESET_KEEP:
            rewards[i] = 0.0
            terminated[i] = False
            truncated[i] = False
            illegal[i] = False
            deadlock[i] = False
            last_moves[i] = 0
        if what == TASK_RESET or what == TASK_RESET_KEEP:
            s = reset_slot[i]
            cells = t_cells[s]
            if s != slot[i]:
                reset_stamps(cells, stamps[i])
            slot[i] = s
            n_boxes[i] = place_boxes(box_at[i], box_pos[i], t_boxes[s], t_n_boxes[s])
            player[i] = t_player[s]
            write_planes(cells, box_pos[i], n_boxes[i], player[i], obs[i])
            on_goal[i] = count_on_goal(cells, box_pos[i], n_boxes[i])
            steps[i] = 0
            moves[i] = 0
            pushes[i] = 0
        else:
            s = slot[i]
            cells = t_cells[s]
            a = actions[i]
            n_moves = 0
            n_pushes = 0
            delta = 0
            moved_to = -1
            status = ACT_ILLEGAL
            if kind == KIND_MOVE:
                if a == 4:
                    status = 3  # the no-op action: legal, changes nothing
                else:
                    status, p, delta, moved_to = move_step(
                        cells, box_at[i], box_pos[i], offsets, obs[i], player[i], a
                    )
                    player[i] = p
                    if status != ACT_ILLEGAL:
                        n_moves = 1
                        if status == ACT_PUSH:
                            n_pushes = 1
            elif kind == KIND_PUSH:
                sq = a >> 2
                d = a & 3
                status, p, w, delta = push_step(
                    cells,
                    box_at[i],
                    box_pos[i],
                    offsets,
                    obs[i],
                    player[i],
                    sq,
                    d,
                    stamps[i],
                    stack[i],
                    parent8[i],
                    walk[i],
                )
                player[i] = p
                if status != ACT_ILLEGAL:
                    n_moves = w + 1
                    n_pushes = 1
                    moved_to = sq + offsets[d]
            else:
                n = cells.shape[0]
                src = a // n
                dst = a - src * n
                status, p, k, mv, delta = macro_step(
                    cells,
                    box_at[i],
                    box_pos[i],
                    offsets,
                    obs[i],
                    player[i],
                    src,
                    dst,
                    stamps[i],
                    stack[i],
                    dist[i],
                    parent[i],
                    queue[i],
                    plan[i],
                    parent8[i],
                    walk[i],
                )
                player[i] = p
                if status != ACT_ILLEGAL:
                    n_moves = mv
                    n_pushes = k
                    moved_to = dst
            steps[i] += 1
            moves[i] += n_moves
            pushes[i] += n_pushes
            on_goal[i] += delta
            solved = on_goal[i] == n_boxes[i]
            dl = False
            if params[5] > 0 and n_pushes > 0 and not solved:
                dl = is_simple_deadlock(
                    cells, t_dead[s], box_at[i], offsets, moved_to, seen[i], trail[i]
                )
            r = params[0]
            if delta > 0:
                r += params[1] * delta
            elif delta < 0:
                r -= params[2] * delta
            if solved:
                r += params[3]
            rewards[i] = r
            illegal[i] = status == ACT_ILLEGAL
            deadlock[i] = dl
            last_moves[i] = n_moves
            terminated[i] = solved or dl
            # as gymnasium.wrappers.TimeLimit: the limit truncates even a step that terminates
            truncated[i] = params[4] > 0 and steps[i] >= params[4]
            if terminated[i] or truncated[i]:
                n_done += 1
            if status == ACT_ILLEGAL:
                continue  # nothing moved: the mask stands
        # the legal actions of the new position
        if kind == KIND_MOVE:
            move_mask(cells, box_at[i], offsets, player[i], masks[i])
            if params[6] > 0:
                masks[i, 4] = True
        elif kind == KIND_PUSH:
            push_mask(
                cells,
                box_at[i],
                box_pos[i],
                n_boxes[i],
                offsets,
                player[i],
                stamps[i],
                stack[i],
                masks[i],
            )
        else:
            macro_mask(
                cells,
                box_at[i],
                box_pos[i],
                n_boxes[i],
                offsets,
                player[i],
                stamps[i],
                stack[i],
                dist[i],
                parent[i],
                queue[i],
                masks[i],
            )
    return n_done


@njit(cache=True, nogil=True)
def batch_step(
    kind,
    task,
    actions,
    reset_slot,
    t_cells,
    t_dead,
    t_boxes,
    t_n_boxes,
    t_player,
    offsets,
    params,
    slot,
    player,
    n_boxes,
    on_goal,
    steps,
    moves,
    pushes,
    box_at,
    box_pos,
    obs,
    masks,
    stamps,
    seen,
    stack,
    queue,
    parent,
    dist,
    plan,
    parent8,
    walk,
    trail,
    rewards,
    terminated,
    truncated,
    illegal,
    deadlock,
    last_moves,
):
    """Reset or step every env on the calling thread; returns the number of episodes it ended."""
    return _step_range(
        0,
        task.shape[0],
        kind,
        task,
        actions,
        reset_slot,
        t_cells,
        t_dead,
        t_boxes,
        t_n_boxes,
        t_player,
        offsets,
        params,
        slot,
        player,
        n_boxes,
        on_goal,
        steps,
        moves,
        pushes,
        box_at,
        box_pos,
        obs,
        masks,
        stamps,
        seen,
        stack,
        queue,
        parent,
        dist,
        plan,
        parent8,
        walk,
        trail,
        rewards,
        terminated,
        truncated,
        illegal,
        deadlock,
        last_moves,
    )


@njit(cache=True, nogil=True, parallel=True)
def batch_step_parallel(
    n_chunks,
    kind,
    task,
    actions,
    reset_slot,
    t_cells,
    t_dead,
    t_boxes,
    t_n_boxes,
    t_player,
    offsets,
    params,
    slot,
    player,
    n_boxes,
    on_goal,
    steps,
    moves,
    pushes,
    box_at,
    box_pos,
    obs,
    masks,
    stamps,
    seen,
    stack,
    queue,
    parent,
    dist,
    plan,
    parent8,
    walk,
    trail,
    rewards,
    terminated,
    truncated,
    illegal,
    deadlock,
    last_moves,
):
    """``batch_step`` over ``n_chunks`` chunks of envs spread on numba's threads.

    ``n_chunks`` comes first (a few per thread balance the load; asking numba for its thread
    count inside a kernel would make it uncacheable); the rest is as ``batch_step``.
    """
    n_env = task.shape[0]
    n_chunks = max(1, min(n_env, n_chunks))
    done = np.zeros(n_chunks, dtype=np.int64)
    for c in prange(n_chunks):
        lo = c * n_env // n_chunks
        hi = (c + 1) * n_env // n_chunks
        done[c] = _step_range(
            lo,
            hi,
            kind,
            task,
            actions,
            reset_slot,
            t_cells,
            t_dead,
            t_boxes,
            t_n_boxes,
            t_player,
            offsets,
            params,
            slot,
            player,
            n_boxes,
            on_goal,
            steps,
            moves,
            pushes,
            box_at,
            box_pos,
            obs,
            masks,
            stamps,
            seen,
            stack,
            queue,
            parent,
            dist,
            plan,
            parent8,
            walk,
            trail,
            rewards,
            terminated,
            truncated,
            illegal,
            deadlock,
            last_moves,
        )
    return done.sum()
