"""Random levels by reverse play: boxes pulled away from their goals, the pulls' LURD solution.

Levels are solvable by construction: boxes start on their goals and random walks of the player
pull them away; the pulls taken back in reverse order are pushes that solve the level.
``generate_candidate`` makes one attempt: a room (``engine.rooms``), goals, the walks, the
solution; its random draws come from ``engine.xorshift``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from soko_gym.engine.constants import (
    GOAL,
    MOVE_CHARS,
    OPPOSITE,
    PUSH_CHARS,
    WALL,
)
from soko_gym.engine.distance import push_distances, side_regions
from soko_gym.engine.push import apply_pull, legal_pulls
from soko_gym.engine.reach import WALL_STAMP, player_path, reach_player
from soko_gym.engine.rooms import ROOM_OPEN, carve_room, place_goals
from soko_gym.engine.xorshift import random_below, random_unit
from soko_gym.engine.zobrist import full_hash, zobrist_table

# Status codes of ``generate_candidate`` (kernels never raise).
GEN_OK = 0
GEN_SMALL_ROOM = 1  # the carved room has too few floor squares for the boxes and the player
GEN_TOO_EASY = 2  # no walk reached a position that needs ``min_pushes`` pushes
GEN_NO_REPLAY = 3  # the pushes did not replay to a solved position (a kernel bug if seen)

GEN_REASONS = {
    GEN_OK: "ok",
    GEN_SMALL_ROOM: "room too small",
    GEN_TOO_EASY: "no position far enough from the goals",
    GEN_NO_REPLAY: "solution did not replay",
}

_OPPOSITE = np.array(OPPOSITE, dtype=np.int64)
_MOVE_CODES = np.frombuffer(MOVE_CHARS.encode("ascii"), dtype=np.uint8).copy()
_PUSH_CODES = np.frombuffer(PUSH_CHARS.encode("ascii"), dtype=np.uint8).copy()
_KEY_MIX = np.uint64(0x9E3779B97F4A7C15)  # spreads the player square over the 64 key bits
_BIG = 1 << 40  # larger than any sum of push distances

GenSpec = namedtuple(
    "GenSpec",
    [  # what ``generate_candidate`` makes (``gen_spec`` builds it with exact types)
        "height",  # rows of the grid, outer walls included
        "width",  # columns of the grid, outer walls included
        "n_floor",  # floor squares wanted (see ``carve_room``)
        "shape",  # ROOM_RANDOM or ROOM_OPEN
        "n_walks",  # random walks per attempt
        "max_steps",  # pulls per walk
        "keep_prob",  # chance of pulling the last pulled box again when it can move (float)
        "max_switches",  # box switches the score counts at most (see ``_walk_pulls``)
        "min_pushes",  # smallest acceptable ``_push_lower_bound`` of the start position
    ],
)

GenLevel = namedtuple(
    "GenLevel",
    [  # the level ``generate_candidate`` writes
        "cells",  # uint8[height * width] WALL / FLOOR / GOAL flags
        "goals",  # int32[n_boxes] goal squares
        "boxes",  # int32[n_boxes] box squares at the start
        "lurd",  # uint8[max_steps * (height * width + 1)] the solution's ASCII characters
    ],
)

WalkBoard = namedtuple(
    "WalkBoard",
    [  # the room the walks of one attempt pull in
        "cells",  # uint8[n_cells] static cell flags
        "offsets",  # int32[4] flat index step per direction
        "zobrist",  # uint64[n_cells] key per square
        "goal_dist",  # int64[n_goals, n_cells] from ``_goal_distances``
    ],
)

WalkState = namedtuple(
    "WalkState",
    [  # the position a walk moves and its scratch
        "box_pos",  # int32[n_boxes] box squares
        "box_at",  # int16[n_cells] box index per square, -1 for none
        "stamps",  # uint32[n_cells + 1] reach stamps (see ``engine.reach``)
        "stack",  # int32[n_cells]
        "pull_buf",  # int32[4 * n_boxes] for ``legal_pulls``
        "hist_pull",  # int32[max_steps] the walk's loop-free pull history
        "hist_switch",  # int32[max_steps + 1] box switches up to each history length
        "hist_key",  # uint64[max_steps + 1] position key after each history length
        "table",  # int32[2**k >= 2 * (max_steps + 1)] key slot -> history length
    ],
)

BestWalk = namedtuple(
    "BestWalk",
    [  # the best position over the walks of one attempt
        "info",  # int64[4] (score, history length, lower bound, player square); 0 before
        "pulls",  # int32[max_steps] its pull history
        "boxes",  # int32[n_boxes] its box squares
    ],
)


def gen_spec(
    height: int,
    width: int,
    n_floor: int,
    shape: int,
    n_walks: int,
    max_steps: int,
    keep_prob: float,
    max_switches: int,
    min_pushes: int,
) -> GenSpec:
    """A ``GenSpec`` with ints and a float (one compiled signature of ``generate_candidate``)."""
    return GenSpec(
        int(height), int(width), int(n_floor), int(shape), int(n_walks), int(max_steps),
        float(keep_prob), int(max_switches), int(min_pushes),
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# How far a position is from solved: lone-box push distances, a push lower bound
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _goal_distances(cells, offsets, goals):
    """Lone-box push distances to each goal, minimised over the player's side.

    Args:
        cells: uint8[n_cells] static cell flags.
        offsets: int32[4] flat index step per direction.
        goals: int32[n_goals] goal squares.

    Returns:
        int64[n_goals, n_cells] fewest pushes from each square to each goal; 65535 (the
        engine's DIST_INF) where no push path exists.
    """
    dist = push_distances(cells, offsets, goals, side_regions(cells, offsets))
    n_goals, n_cells = dist.shape[0], dist.shape[1]
    out = np.empty((n_goals, n_cells), dtype=np.int64)
    for g in range(n_goals):
        for sq in range(n_cells):
            best = dist[g, sq, 0]
            for s in range(1, 4):
                if dist[g, sq, s] < best:
                    best = dist[g, sq, s]
            out[g, sq] = best
    return out


@njit(cache=True, nogil=True)
def _push_lower_bound(goal_dist, box_pos):
    """A lower bound on the pushes that solve a position, from lone-box push distances.

    Each box needs at least its distance to the nearest goal, and each goal at least the
    distance of the nearest box; the bound is the larger of the two sums.

    Args:
        goal_dist: int64[n_goals, n_cells] from ``_goal_distances``.
        box_pos: int32[n_boxes] box squares.

    Returns:
        The bound (huge when some box or goal is cut off from every partner).
    """
    n_goals = goal_dist.shape[0]
    n_boxes = box_pos.shape[0]
    by_box = 0
    for b in range(n_boxes):
        best = _BIG
        for g in range(n_goals):
            v = goal_dist[g, box_pos[b]]
            if v < best:
                best = v
        by_box += best
    by_goal = 0
    for g in range(n_goals):
        best = _BIG
        for b in range(n_boxes):
            v = goal_dist[g, box_pos[b]]
            if v < best:
                best = v
        by_goal += best
    return max(by_box, by_goal)


# ---------------------------------------------------------------------------------------------
# Reverse play
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _walk_pulls(board, spec, rng, player, ws, best):
    """One random walk of pulls from the current position, keeping the best position seen.

    Each step makes a random legal pull, preferring (with probability ``spec.keep_prob``) the
    box pulled last. When a step returns to a position already on the walk (same boxes, same
    player region) the loop between them is erased, so the kept history never repeats a
    position. A position scores ``lower_bound * (1 + min(box switches in its history,
    spec.max_switches))`` (more switches stop paying off, so the score then favours a higher
    lower bound); when it beats the best score so far, its history and boxes are copied to
    ``best``. A player stuck with no legal pull takes the last pull back.

    A pull is recorded by squares, ``from_square * 4 + direction``: the box moved from
    ``from_square`` one square in ``direction``, the player from beside it one square further.

    Args:
        board: ``WalkBoard`` of the room.
        spec: ``GenSpec``: ``max_steps`` pulls are made (fewer if the player gets stuck).
        rng: uint64[2] generator state; advanced in place.
        player: player square at the start of the walk (floor, no box).
        ws: ``WalkState``: the position (moved by the walk) and scratch.
        best: ``BestWalk``, updated in place when the walk improves on it.

    Returns:
        True when the walk improved on ``best``.
    """
    cells = board.cells
    offsets = board.offsets
    zobrist = board.zobrist
    keep_prob = spec.keep_prob
    box_pos = ws.box_pos
    box_at = ws.box_at
    stamps = ws.stamps
    stack = ws.stack
    pull_buf = ws.pull_buf
    hist_pull = ws.hist_pull
    hist_switch = ws.hist_switch
    hist_key = ws.hist_key
    table = ws.table
    mask = table.shape[0] - 1
    table[:] = -1
    h = full_hash(zobrist, box_pos)
    _, lowest = reach_player(box_at, offsets, player, stamps, stack)
    key = h ^ (np.uint64(lowest) * _KEY_MIX)
    hist_key[0] = key
    hist_switch[0] = 0
    table[np.int64(key & np.uint64(mask))] = 0
    length = 0
    improved = False
    for _ in range(spec.max_steps):
        k = legal_pulls(cells, box_at, box_pos, offsets, stamps, pull_buf)
        if k == 0:
            if length == 0:
                break
            # stuck: take the last pull back (the box returns, the player stands beside it)
            length -= 1
            code = hist_pull[length]
            src = code >> 2
            dest = src + offsets[code & 3]
            b = box_at[dest]
            box_at[dest] = -1
            box_at[src] = b
            box_pos[b] = src
            h ^= zobrist[src] ^ zobrist[dest]
            player = dest
            reach_player(box_at, offsets, player, stamps, stack)
            continue
        last_box = -1
        if length > 0:
            code = hist_pull[length - 1]
            last_box = box_at[(code >> 2) + offsets[code & 3]]
        pick = -1
        if last_box >= 0 and random_unit(rng) < keep_prob:
            n_same = np.int64(0)
            for i in range(k):
                if pull_buf[i] >> 2 == last_box:
                    n_same += 1
            if n_same > 0:
                j = random_below(rng, n_same)
                for i in range(k):
                    if pull_buf[i] >> 2 == last_box:
                        if j == 0:
                            pick = pull_buf[i]
                            break
                        j -= 1
        if pick < 0:
            pick = pull_buf[random_below(rng, k)]
        b = pick >> 2
        d = pick & 3
        src = box_pos[b]
        player, h = apply_pull(box_pos, box_at, offsets, zobrist, h, pick)
        hist_pull[length] = src * 4 + d
        switched = 0
        if length > 0:
            prev = hist_pull[length - 1]
            if (prev >> 2) + offsets[prev & 3] != src:
                switched = 1
        hist_switch[length + 1] = hist_switch[length] + switched
        length += 1
        _, lowest = reach_player(box_at, offsets, player, stamps, stack)
        key = h ^ (np.uint64(lowest) * _KEY_MIX)
        slot = np.int64(key & np.uint64(mask))
        seen_at = table[slot]
        if 0 <= seen_at < length and hist_key[seen_at] == key:
            length = seen_at  # back at an earlier position: erase the loop
            continue
        table[slot] = length
        hist_key[length] = key
        lb = _push_lower_bound(board.goal_dist, box_pos)
        score = lb * (1 + min(hist_switch[length], spec.max_switches))
        info = best.info
        if score > info[0]:
            info[0] = score
            info[1] = length
            info[2] = lb
            info[3] = player
            for i in range(length):  # element loops: no shape-check code to compile
                best.pulls[i] = hist_pull[i]
            for i in range(box_pos.shape[0]):
                best.boxes[i] = box_pos[i]
            improved = True
    return improved


@njit(cache=True, nogil=True)
def _pulls_to_lurd(offsets, ws, player, pulls, parent, walk, lurd):
    """Write the LURD solution that takes back ``pulls`` in reverse order, in place.

    Args:
        offsets: int32[4] flat index step per direction.
        ws: ``WalkState`` holding the level's start position (``box_pos`` and the matching
            ``box_at``, replayed to the end); its ``stamps`` and ``stack`` are scratch.
        player: the level's start square for the player.
        pulls: int32[n_pulls] pull history (``from_square * 4 + direction``, see
            ``_walk_pulls``) that led from the solved position to the start.
        parent: int8[n_cells] scratch.
        walk: int8[n_cells] scratch.
        lurd: uint8[n_pulls * (n_cells + 1)] receives the ASCII LURD characters.

    Returns:
        Number of characters written, or -1 when some push side cannot be reached.
    """
    box_pos = ws.box_pos
    box_at = ws.box_at
    n = 0
    for i in range(pulls.shape[0] - 1, -1, -1):
        src = pulls[i] >> 2
        d = pulls[i] & 3
        box_sq = src + offsets[d]
        stand = box_sq + offsets[d]
        k = player_path(box_at, offsets, player, stand, ws.stamps, ws.stack, parent, walk)
        if k < 0:
            return -1
        for j in range(k):
            lurd[n] = _MOVE_CODES[walk[j]]
            n += 1
        lurd[n] = _PUSH_CODES[_OPPOSITE[d]]
        n += 1
        b = box_at[box_sq]
        box_at[box_sq] = -1
        box_at[src] = b
        box_pos[b] = src
        player = box_sq
    return n


@njit(cache=True, nogil=True)
def generate_candidate(spec, zobrist, rng, out):
    """One attempt at a level: carve a room, place goals, pull boxes away, write the solution.

    Every walk starts from the solved position (boxes on goals) with the player on a random
    free square; the best-scoring position over all walks becomes the level, with the player
    moved to a random square of its region. Scratch arrays are allocated once per attempt.

    Args:
        spec: ``GenSpec`` of the level wanted (``gen_spec``).
        zobrist: uint64[height * width] key per square.
        rng: uint64[2] generator state; advanced in place.
        out: ``GenLevel`` receiving the level and its solution (``goals`` and ``boxes`` sized
            to the boxes wanted).

    Returns:
        (status GEN_*, player square, pushes in the solution, characters written to
        ``out.lurd``, push lower bound of the start position); only the status is meaningful
        unless GEN_OK.
    """
    height = spec.height
    width = spec.width
    max_steps = spec.max_steps
    cells = out.cells
    goals = out.goals
    boxes = out.boxes
    n_cells = height * width
    n_boxes = goals.shape[0]
    offsets = np.array([-width, width, -1, 1], dtype=np.int32)
    stack = np.empty(n_cells, dtype=np.int32)
    order = np.empty(n_cells, dtype=np.int32)
    seen = np.empty(n_cells, dtype=np.int32)
    carved = carve_room(cells, height, width, spec.n_floor, spec.shape, rng, order, seen, stack)
    if carved < n_boxes + 2:
        return GEN_SMALL_ROOM, -1, 0, 0, 0
    n_free = place_goals(cells, rng, order, goals) - n_boxes
    board = WalkBoard(cells, offsets, zobrist, _goal_distances(cells, offsets, goals))

    stamps = np.zeros(n_cells + 1, dtype=np.uint32)  # layout of engine.reach.new_stamps
    for sq in range(n_cells):
        if cells[sq] & WALL:
            stamps[sq] = WALL_STAMP
    size = 16
    while size < 2 * (max_steps + 1):
        size *= 2
    ws = WalkState(
        box_pos=np.empty(n_boxes, dtype=np.int32),
        box_at=np.full(n_cells, -1, dtype=np.int16),
        stamps=stamps,
        stack=stack,
        pull_buf=np.empty(4 * n_boxes, dtype=np.int32),
        hist_pull=np.empty(max_steps, dtype=np.int32),
        hist_switch=np.empty(max_steps + 1, dtype=np.int32),
        hist_key=np.empty(max_steps + 1, dtype=np.uint64),
        table=np.empty(size, dtype=np.int32),
    )
    box_pos = ws.box_pos
    box_at = ws.box_at
    best = BestWalk(np.zeros(4, dtype=np.int64), np.empty(max_steps, dtype=np.int32), boxes)
    for _ in range(spec.n_walks):
        box_at[:] = -1
        for b in range(n_boxes):
            box_pos[b] = goals[b]
            box_at[goals[b]] = b
        # a random free floor square: place_goals left them in order[n_boxes:carved]
        start = np.int64(order[n_boxes + random_below(rng, n_free)])
        _walk_pulls(board, spec, rng, start, ws, best)
    best_len = best.info[1]
    best_lb = best.info[2]
    best_player = best.info[3]
    if best_len <= 0 or best_lb < spec.min_pushes:
        return GEN_TOO_EASY, -1, 0, 0, 0

    # the player starts anywhere in the region the last pull left it in
    box_at[:] = -1
    for b in range(n_boxes):
        box_pos[b] = boxes[b]
        box_at[boxes[b]] = b
    reach_player(box_at, offsets, best_player, stamps, stack)
    mark = stamps[n_cells]
    n_reached = np.int64(0)
    for sq in range(n_cells):
        if stamps[sq] == mark:
            n_reached += 1
    j = random_below(rng, n_reached)
    player = best_player
    for sq in range(n_cells):
        if stamps[sq] == mark:
            if j == 0:
                player = sq
                break
            j -= 1

    parent = np.empty(n_cells, dtype=np.int8)
    walk = np.empty(n_cells, dtype=np.int8)
    n_chars = _pulls_to_lurd(offsets, ws, player, best.pulls[:best_len], parent, walk, out.lurd)
    if n_chars < 0:
        return GEN_NO_REPLAY, -1, 0, 0, 0
    for b in range(n_boxes):
        if not (cells[box_pos[b]] & GOAL):
            return GEN_NO_REPLAY, -1, 0, 0, 0
    return GEN_OK, player, best_len, n_chars, best_lb


def warmup_generate() -> None:
    """Compile (or load from the numba cache) ``generate_candidate`` on a tiny open room.

    Uses only the engine, so ``soko_gym.engine.warmup()`` may call it; the levels package's
    ``warmup_generator()`` compiles the same kernel through a full ``generate_level``.
    """
    height = width = 6
    n_cells = height * width
    max_steps = 8
    rng = np.array([0x9E3779B97F4A7C15, 0xD1B54A32D192ED03], dtype=np.uint64)
    status = GEN_TOO_EASY
    for _ in range(100):  # a handful of attempts always suffices; the bound only guards
        status, _, _, _, _ = generate_candidate(
            gen_spec(height, width, 16, ROOM_OPEN, 2, max_steps, 0.5, 1, 1),
            zobrist_table(n_cells),
            rng,
            GenLevel(
                np.empty(n_cells, dtype=np.uint8),
                np.empty(1, dtype=np.int32),
                np.empty(1, dtype=np.int32),
                np.empty(max_steps * (n_cells + 1), dtype=np.uint8),
            ),
        )
        if status == GEN_OK:
            return
    raise AssertionError(f"warm-up room not generated: {GEN_REASONS[int(status)]}")
