"""Corral tests of a position: the bundle kernels a search calls, and their Python wrapper.

``corral_label`` labels a position's corrals (``engine.corral``); ``corral_status``
(``engine.corral_memo``) and ``corral_pi_sq_pushes`` then answer for it. ``CorralAnalysis``
wraps the three for Python callers and tests.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.board import build_board
from soko_gym.engine.corral import (
    INFO_MARK,
    best_pi_corral,
    keep_pushes_into,
    label_corrals,
    pi_corral_pushes,
)
from soko_gym.engine.corral_memo import corral_key, corral_status, key_row
from soko_gym.engine.corral_search import corral_deadlock
from soko_gym.engine.corral_tables import (
    COUNT_CUT,
    COUNT_EXPANDED,
    COUNT_MEMO_HITS,
    COUNT_SEARCHES,
    OUT_N_CORRALS,
    OUT_PROOF_LEN,
    OUT_PROOF_NORM,
    PARAM_MEMO,
    new_corral_tables,
)
from soko_gym.engine.deadlock import is_wall_line_deadlock, wall_lines
from soko_gym.engine.push import legal_pushes
from soko_gym.engine.reach import reach_player


@njit(cache=True, nogil=True, _nrt=False)
def corral_label(ct, box_at, box_pos, player):
    """Find the corrals of a position (``reach_player`` then ``label_corrals``).

    The later ``corral_status`` and ``corral_pi_sq_pushes`` calls answer for this position.

    Args:
        ct: ``CorralTables`` of the board; ``out[OUT_N_CORRALS]`` receives the count.
        box_at: int16[n_cells] box index per square, -1 for none.
        box_pos: int32[n_boxes] square of each box.
        player: the player's square.

    Returns:
        The number of corrals found.
    """
    stamps = ct.stamps
    reach_player(box_at, ct.offsets, np.int64(player), stamps, ct.stack)
    n = label_corrals(
        ct.cells, box_at, box_pos, ct.offsets, stamps, ct.cstamp, ct.region, ct.barrier,
        ct.info,
    )  # fmt: skip
    ct.out[OUT_N_CORRALS] = n
    return n


@njit(cache=True, nogil=True, _nrt=False)
def corral_pi_sq_pushes(ct, box_at, box_pos, player, out):
    """Pushes PI-corral pruning keeps in the position labelled by ``corral_label``.

    Re-reaches the player (``corral_status`` overwrites the fill), so call order is free.

    Args:
        ct, box_at, box_pos, player: as in ``corral_label``.
        out: int64[>= 4 * n_boxes] receives square pushes ``box square * 4 + direction``: the legal
            pushes into the PI-corral with the fewest of them, in ``legal_pushes`` order,
            those onto a simple dead square dropped.

    Returns:
        The number of square pushes written (0: the position is a deadlock), or -1 when no corral
        is a PI-corral.
    """
    offsets = ct.offsets
    reach_player(box_at, offsets, np.int64(player), ct.stamps, ct.stack)
    best, _ = best_pi_corral(
        ct.dead, box_at, offsets, ct.stamps, ct.cstamp, ct.barrier, ct.info,
        ct.out[OUT_N_CORRALS],
    )  # fmt: skip
    if best < 0:
        return -1
    n_push = legal_pushes(ct.cells, box_at, box_pos, offsets, ct.stamps, ct.pushes)
    mark = np.int64(ct.info[best, INFO_MARK])
    kept = keep_pushes_into(box_pos, offsets, ct.cstamp, mark, ct.pushes, n_push)
    n = 0
    for i in range(kept):
        code = np.int64(ct.pushes[i])
        sq = np.int64(box_pos[code >> 2])
        d = code & 3
        if ct.dead[sq + offsets[d]] == 0:
            out[n] = sq * 4 + d
            n += 1
    return n


class CorralAnalysis:
    """Corral tests of positions of one board: a Python wrapper over the corral kernels.

    ``label(state)`` finds the corrals of a position once (``corral_label``);
    ``pi_corral_pushes()`` and ``deadlock_status()`` then answer for that position
    (``corral_pi_sq_pushes``, ``corral_status``). Not thread-safe.

    With ``memo`` > 0, ``deadlock_status`` remembers the answer of each corral search by the
    sub-problem it posed (``corral_key``: the corral's boxes, its squares and the player's
    region with only those boxes on the board) and answers a repeated corral without searching:
    during one search most positions repeat a corral of an earlier one. The memo is a
    direct-mapped table of ``memo`` slots (rounded up to a power of two); a new answer whose
    slot is taken overwrites it, so memory stays bounded.

    Args:
        board: a ``soko_gym.engine.Board``.
        budget: most positions each bounded corral search stores.
        max_boxes: largest corral (barrier and interior boxes) searched.
        memo: most remembered corral answers; 0 remembers none.
        min_budget: with a value > 0 each corral size's budget adapts (``engine.corral_search``).
    """

    def __init__(
        self,
        board,
        budget: int = 256,
        max_boxes: int = 12,
        memo: int = 0,
        min_budget: int = 0,
    ) -> None:
        self.tables = new_corral_tables(board, budget, max_boxes, memo, min_budget)
        self.board = board
        self.budget = budget
        self.memo_size = int(self.tables.params[PARAM_MEMO])
        self.proof: tuple[np.ndarray, int] | None = None
        self.codes = np.zeros(4 * max(1, board.n_boxes), dtype=np.int64)
        self.state = None
        self.n_corrals = 0

    @property
    def memo_hits(self) -> int:
        """Corral answers taken from the memo so far."""
        return int(self.tables.counters[COUNT_MEMO_HITS])

    @property
    def searches(self) -> int:
        """Bounded corral searches run so far."""
        return int(self.tables.counters[COUNT_SEARCHES])

    @property
    def cut_short(self) -> int:
        """Searches so far that ran out of budget before an answer."""
        return int(self.tables.counters[COUNT_CUT])

    @property
    def expanded(self) -> int:
        """Positions the searches so far expanded."""
        return int(self.tables.counters[COUNT_EXPANDED])

    def label(self, state) -> int:
        """Find the corrals of ``state`` (a ``State``; kept by reference); returns their count."""
        self.state = state
        self.n_corrals = int(
            corral_label(self.tables, state.box_at, state.box_pos, int(state.player))
        )
        return self.n_corrals

    def pi_corral_pushes(self) -> list[tuple[int, int]] | None:
        """Pushes kept by PI-corral pruning in the labelled position (``pi_corral_pushes_of``).

        Re-reaches the player (``deadlock_status`` overwrites the fill), so call order is free.
        """
        sq_pushes = self.pi_corral_sq_pushes()
        return None if sq_pushes is None else [(int(c >> 2), int(c & 3)) for c in sq_pushes]

    def pi_corral_sq_pushes(self) -> np.ndarray | None:
        """``pi_corral_pushes`` as square pushes ``box square * 4 + direction`` (int64), or None."""
        st = self.state
        n = corral_pi_sq_pushes(self.tables, st.box_at, st.box_pos, int(st.player), self.codes)
        return None if n < 0 else self.codes[:n].copy()

    def deadlock_status(self) -> int:
        """The corral deadlock test on the labelled position (see ``corral_deadlock_status``).

        When a search of a plain corral (not the memo) proves a deadlock, ``proof`` holds what
        it proved: the squares of the corral's boxes and the player's normalized square with
        only those boxes on the board (a pattern every position containing both is dead in);
        else None.
        """
        ct = self.tables
        st = self.state
        status = int(corral_status(ct, st.box_at, st.box_pos, int(st.player)))
        m = int(ct.out[OUT_PROOF_LEN])
        self.proof = (ct.proof[:m].copy(), int(ct.out[OUT_PROOF_NORM])) if m else None
        return status


def pi_corral_pushes_of(board, state) -> list[tuple[int, int]] | None:
    """The pushes PI-corral pruning keeps in a position, or None when it has no PI-corral.

    Args:
        board: a ``soko_gym.engine.Board``.
        state: a ``soko_gym.engine.State`` of it.

    Returns:
        (box square, direction) of each push into the PI-corral with the fewest of them (an
        empty list: the position is a deadlock), or None when no corral is a PI-corral.
    """
    analysis = CorralAnalysis(board)
    analysis.label(state)
    return analysis.pi_corral_pushes()


def corral_deadlock_status(board, state, budget: int = 256, max_boxes: int = 12) -> int:
    """Run the corral deadlock test on every corral of a position that needs a push.

    Args:
        board: a ``soko_gym.engine.Board``.
        state: a ``soko_gym.engine.State`` of it.
        budget: most positions each bounded search stores.
        max_boxes: largest corral (barrier and interior boxes) searched.

    Returns:
        CORRAL_DEADLOCK when some corral is proven a deadlock, else CORRAL_UNKNOWN when some
        search was cut short, else CORRAL_OPEN.
    """
    analysis = CorralAnalysis(board, budget, max_boxes)
    analysis.label(state)
    return analysis.deadlock_status()


# A corral that is both a PI-corral and a deadlock: every corral kernel runs on it.
_WARMUP_ROWS = (
    "#########",
    "#.  #   #",
    "#   #   #",
    "# @ $ $.#",
    "#   #   #",
    "#   #   #",
    "#########",
)


def warmup_corral() -> None:
    """Compile or load every kernel of this module and the wall-line check, as planners do."""
    grid = np.array([list(row) for row in _WARMUP_ROWS])
    boxes = [int(i) for i in np.flatnonzero(grid == "$")]
    board = build_board(grid == "#", grid == ".", boxes, int(np.flatnonzero(grid == "@")[0]))
    state = board.initial_state()
    corral_deadlock_status(board, state, budget=4)
    pi_corral_pushes_of(board, state)
    analysis = CorralAnalysis(board, memo=4)
    analysis.label(state)
    analysis.deadlock_status()  # the memo path of corral_status
    # the kernels the bundle kernels call, by name too: loaded from the cache with their
    # callers they would show no signature of their own
    ct = analysis.tables
    reach_player(state.box_at, ct.offsets, np.int64(state.player), ct.stamps, ct.stack)
    n = label_corrals(
        ct.cells, state.box_at, state.box_pos, ct.offsets, ct.stamps, ct.cstamp, ct.region,
        ct.barrier, ct.info,
    )  # fmt: skip
    best_pi_corral(ct.dead, state.box_at, ct.offsets, ct.stamps, ct.cstamp, ct.barrier, ct.info,
                   ct.out[OUT_N_CORRALS])  # fmt: skip
    n_push = legal_pushes(ct.cells, state.box_at, state.box_pos, ct.offsets, ct.stamps, ct.pushes)
    keep_pushes_into(state.box_pos, ct.offsets, ct.cstamp, np.int64(0), ct.pushes, n_push)
    if n:
        pi_corral_pushes(
            board.dead, state.box_at, board.offsets, ct.stamps, ct.cstamp, ct.barrier, ct.info, 0
        )
        label_corrals(  # afresh: the search below needs the position's labels
            ct.cells, state.box_at, state.box_pos, ct.offsets, ct.stamps, ct.cstamp, ct.region,
            ct.barrier, ct.info,
        )  # fmt: skip
        corral_key(ct, state.box_at, 0, np.int64(state.player))
        key_row(ct, state.box_at, 0, ct.memo_key[0].copy())  # the memo's exact key
        corral_deadlock(ct, state.box_at, 0, np.int64(state.player))
    line_of, lines = wall_lines(board.cells, board.offsets)
    is_wall_line_deadlock(line_of, lines, state.box_at, int(state.box_pos[0]))
