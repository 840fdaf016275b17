"""Exhaustion test: a position is dead when a small complete push search from it runs dry.

A bounded breadth-first search over push positions, with every box on the board, that stores
at most a budget of positions. It prunes only what no solution needs: pushes onto simple dead
squares, pushes that freeze a box off goal, and, in a position with a PI-corral, the pushes
not into it (``engine.corral``: the pruned graph still reaches a solution from every position
that has one). So when the search stores every position it can reach, within the budget, and
none is solved, the start position has no solution: a deadlock. When it reaches a solved
position the answer is "solvable"; when the budget runs out, "unknown", never a deadlock.

Why a search and not another pattern: a best-first search over macro moves (FESS) marks a
position dead only once every move below it has been tried, which on a large level can take
tens of thousands of positions, while the same position's plain push graph, narrowed by
PI-corrals, is often exhausted in a few hundred (XSokoban 29: most positions the FESS tree held
after 30 s were dead, and A* with PI-corral pruning proved 38 of 40 sampled ones in at most
1,024 expansions; ``benchmarks/RESULTS.md``). The test is what a corral deadlock search would be
for the corral of every box, without the corral's "opened" exit.

Adaptive budget (``min_budget`` > 0): halved after a search that runs out and doubled (up to
the full budget) after one that proves a deadlock, as the corral searches do, so that levels
where the test rarely proves anything pay little for it.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from soko_gym.engine.board import build_board
from soko_gym.engine.bounded_search import (
    EMPTY,
    adapt_budget,
    all_on_goal,
    clear_queue,
    load_queued,
    queue_position,
)
from soko_gym.engine.constants import BOX_AT_DTYPE, HASH_DTYPE, SQUARE_DTYPE
from soko_gym.engine.corral import (
    INFO_MARK,
    N_INFO,
    best_pi_corral,
    keep_pushes_into,
    label_corrals,
)
from soko_gym.engine.deadlock import is_simple_deadlock
from soko_gym.engine.push import apply_push, legal_pushes, undo_push
from soko_gym.engine.reach import new_stamps, reach_player

# Results of ``exhaust_deadlock``.
EXHAUST_SOLVABLE = 0  # the search reached a solved position
EXHAUST_DEADLOCK = 1  # every reachable position was stored and none is solved
EXHAUST_UNKNOWN = 2  # the budget ran out

# Slots of ``ExhaustTables.params`` (int64[N_PARAMS]).
PARAM_BUDGET = 0  # the budget now (adapted between searches when PARAM_MIN_BUDGET > 0)
PARAM_MAX_BUDGET = 1  # the most positions a search stores
PARAM_MIN_BUDGET = 2  # floor of the adaptive budget, 0 for a fixed budget
N_PARAMS = 3

# Slots of ``ExhaustTables.counters`` (int64[N_COUNTERS]), only ever added to.
COUNT_SEARCHES = 0
COUNT_PROVED = 1  # searches that proved a deadlock
COUNT_CUT = 2  # searches cut short by their budget
COUNT_EXPANDED = 3  # positions expanded by all searches (their cost)
N_COUNTERS = 4


# Everything one board's exhaustion searches read and write, as one kernel argument.
ExhaustTables = namedtuple(
    "ExhaustTables",
    [
        "cells",  # uint8[n_cells] cell flags
        "dead",  # uint8[n_cells] simple dead squares
        "offsets",  # int32[4] flat index step per direction
        "zobrist",  # uint64[n_cells] Zobrist key per square
        "box_at",  # int16[n_cells] box index per square, all -1 between searches
        "nodes",  # int32[max_budget, n_boxes + 2] the queue: box squares, player, table slot
        "hashes",  # uint64[table cap] box hash per slot
        "players",  # int32[table cap] normalized player per slot, -1 for a free slot
        "rows",  # int32[table cap] row of ``nodes`` holding each slot's position
        "pos",  # int32[n_boxes] the position being expanded
        "pushes",  # int32[4 * n_boxes] legal push codes
        "stamps",  # uint32[n_cells + 1] reachability stamps
        "stack",  # int32[n_cells]
        "seen",  # uint32[n_cells + 1] freeze-test scratch
        "trail",  # int32[n_cells]
        "cstamp",  # int32[n_cells + 1] corral labels (``label_corrals``)
        "region",  # int32[n_cells] corral squares
        "barrier",  # int32[4 * n_boxes] barrier boxes
        "info",  # int32[4 * n_boxes, N_INFO] corral rows
        "params",  # int64[N_PARAMS] (PARAM_* slots)
        "counters",  # int64[N_COUNTERS] (COUNT_* slots)
    ],
)


def new_exhaust_tables(
    board, budget: int = 1024, min_budget: int = 0, capacity: int | None = None
) -> ExhaustTables:
    """Fresh ``ExhaustTables`` for ``board`` (a ``soko_gym.engine.Board``).

    Args:
        board: the board.
        budget: most positions one ``exhaust_adaptive`` search stores (>= 1).
        min_budget: with a value > 0 that budget adapts between searches (module docstring),
            never below this; 0 keeps it at ``budget``.
        capacity: most positions any search stores, for ``exhaust_deadlock`` calls given a
            budget of their own; None (or less than ``budget``): ``budget``.

    Raises:
        ValueError: when ``budget`` < 1 or ``min_budget`` is outside [0, budget].
    """
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    if not 0 <= min_budget <= budget:
        raise ValueError(f"min_budget must be in [0, budget={budget}], got {min_budget}")
    rows = budget if capacity is None else max(budget, capacity)
    n = board.n_cells
    nb = max(1, board.n_boxes)
    table = 1 << max(2, (2 * rows - 1).bit_length())
    params = np.zeros(N_PARAMS, dtype=np.int64)
    params[PARAM_BUDGET] = budget
    params[PARAM_MAX_BUDGET] = budget
    params[PARAM_MIN_BUDGET] = min_budget
    return ExhaustTables(
        cells=board.cells,
        dead=board.dead,
        offsets=board.offsets,
        zobrist=board.zobrist,
        box_at=np.full(n, -1, dtype=BOX_AT_DTYPE),
        nodes=np.zeros((rows, nb + 2), dtype=SQUARE_DTYPE),
        hashes=np.zeros(table, dtype=HASH_DTYPE),
        players=np.full(table, EMPTY, dtype=np.int32),
        rows=np.zeros(table, dtype=np.int32),
        pos=np.zeros(nb, dtype=SQUARE_DTYPE),
        pushes=np.zeros(4 * nb, dtype=SQUARE_DTYPE),
        stamps=new_stamps(board.cells),
        stack=np.empty(n, dtype=SQUARE_DTYPE),
        seen=np.zeros(n + 1, dtype=np.uint32),
        trail=np.empty(n, dtype=SQUARE_DTYPE),
        cstamp=np.zeros(n + 1, dtype=np.int32),
        region=np.zeros(n, dtype=SQUARE_DTYPE),
        barrier=np.zeros(4 * nb, dtype=SQUARE_DTYPE),
        info=np.zeros((4 * nb, N_INFO), dtype=np.int32),
        params=params,
        counters=np.zeros(N_COUNTERS, dtype=np.int64),
    )


@njit(cache=True, nogil=True, _nrt=False)
def exhaust_adaptive(et, box_pos, player):
    """``exhaust_deadlock`` with the tables' budget, then adapted to the answer.

    With ``PARAM_MIN_BUDGET`` 0 the budget stays as it is.
    """
    params = et.params
    budget = params[PARAM_BUDGET]
    status = exhaust_deadlock(et, box_pos, player, budget)
    if params[PARAM_MIN_BUDGET] > 0:
        params[PARAM_BUDGET] = adapt_budget(
            budget, status == EXHAUST_UNKNOWN, status == EXHAUST_DEADLOCK,
            params[PARAM_MIN_BUDGET], params[PARAM_MAX_BUDGET],
        )  # fmt: skip
    return status


@njit(cache=True, nogil=True, _nrt=False)
def exhaust_deadlock(et, box_pos, player, budget):
    """Run the bounded complete push search from the position (``box_pos``, ``player``).

    Args:
        et: ``ExhaustTables`` of the board; tables sized for more boxes than ``box_pos``
            holds serve too (the envs keep one per env for the most boxes of their levels).
        box_pos: int32[n_boxes] box squares of the position (read only).
        player: the player's square.
        budget: most positions to store (at most the tables' ``PARAM_MAX_BUDGET``).

    Returns:
        EXHAUST_DEADLOCK, EXHAUST_SOLVABLE or EXHAUST_UNKNOWN.
    """
    cells, dead, offsets, zobrist = et.cells, et.dead, et.offsets, et.zobrist
    box_at, nodes, hashes, players, rows = et.box_at, et.nodes, et.hashes, et.players, et.rows
    stamps, stack = et.stamps, et.stack
    seen, trail = et.seen, et.trail
    cstamp, region, barrier, info = et.cstamp, et.region, et.barrier, et.info
    m = box_pos.shape[0]
    pos, pushes = et.pos[:m], et.pushes[: 4 * m]
    col_player = nodes.shape[1] - 2  # as ``queue_position`` writes it
    limit = max(1, min(budget, nodes.shape[0]))
    h = np.uint64(0)
    for i in range(m):
        sq = box_pos[i]
        box_at[sq] = i
        h ^= zobrist[sq]
    solved = all_on_goal(cells, box_pos, np.int64(m))
    _, norm = reach_player(box_at, offsets, np.int64(player), stamps, stack)
    tail = 0
    if not solved:
        tail = queue_position(
            hashes, players, rows, nodes, np.int64(0), np.int64(limit), box_pos, box_at,
            np.int64(player), h, np.int64(norm),
        )  # fmt: skip
    for i in range(m):
        box_at[box_pos[i]] = -1
    if solved:
        return EXHAUST_SOLVABLE
    status = EXHAUST_DEADLOCK
    head = 0
    while status == EXHAUST_DEADLOCK and head < tail:
        h = load_queued(nodes, np.int64(head), np.int64(m), pos, box_at, zobrist)
        reach_player(box_at, offsets, np.int64(nodes[head, col_player]), stamps, stack)
        k = legal_pushes(cells, box_at, pos, offsets, stamps, pushes)
        n_corrals = label_corrals(
            cells, box_at, pos, offsets, stamps, cstamp, region, barrier, info
        )  # fmt: skip
        if n_corrals > 0:  # a PI-corral: only the pushes into it
            best, _ = best_pi_corral(
                dead, box_at, offsets, stamps, cstamp, barrier, info, n_corrals
            )  # fmt: skip
            if best >= 0:
                mark = np.int64(info[best, INFO_MARK])
                k = keep_pushes_into(pos, offsets, cstamp, mark, pushes, k)
        for i in range(k):
            code = np.int64(pushes[i])
            dest = np.int64(pos[code >> 2] + offsets[code & 3])
            if dead[dest]:
                continue
            child_player, h2 = apply_push(pos, box_at, offsets, zobrist, h, code)
            if not is_simple_deadlock(cells, dead, box_at, offsets, dest, seen, trail):
                if all_on_goal(cells, pos, np.int64(m)):
                    status = EXHAUST_SOLVABLE
                else:
                    _, norm = reach_player(box_at, offsets, np.int64(child_player), stamps, stack)
                    stored = queue_position(
                        hashes, players, rows, nodes, np.int64(tail), np.int64(limit), pos,
                        box_at, np.int64(child_player), h2, np.int64(norm),
                    )  # fmt: skip
                    if stored < 0:
                        status = EXHAUST_UNKNOWN
                    else:
                        tail = stored
            undo_push(pos, box_at, offsets, zobrist, h2, code)
            if status != EXHAUST_DEADLOCK:
                break
        for i in range(m):
            box_at[pos[i]] = -1
        head += 1
    clear_queue(players, nodes, tail)
    counters = et.counters
    counters[COUNT_SEARCHES] += 1
    counters[COUNT_EXPANDED] += head
    if status == EXHAUST_DEADLOCK:
        counters[COUNT_PROVED] += 1
    elif status == EXHAUST_UNKNOWN:
        counters[COUNT_CUT] += 1
    return status


def exhaust_status(board, state, budget: int = 1024) -> int:
    """The exhaustion test's answer for ``state`` (a ``soko_gym.engine.State`` of ``board``).

    Returns:
        EXHAUST_DEADLOCK, EXHAUST_SOLVABLE or EXHAUST_UNKNOWN.
    """
    et = new_exhaust_tables(board, budget)
    return int(exhaust_deadlock(et, state.box_pos, np.int64(state.player), np.int64(budget)))


def warmup_exhaust() -> None:
    """Compile or load this module's kernels, as a planner using them does."""
    rows = ("#######", "#. #  #", "# @$$.#", "#  #  #", "#######")  # a PI-corral, dead
    grid = np.array([list(row) for row in rows])
    boxes = [int(i) for i in np.flatnonzero(grid == "$")]
    board = build_board(grid == "#", grid == ".", boxes, int(np.flatnonzero(grid == "@")[0]))
    state = board.initial_state()
    et = new_exhaust_tables(board, 8, min_budget=2)
    exhaust_adaptive(et, state.box_pos, np.int64(state.player))
    exhaust_deadlock(et, state.box_pos, np.int64(state.player), np.int64(8))
