"""The corral deadlock test of a labelled position, with its memo of corral answers.

``corral_status`` runs ``engine.corral_search.corral_deadlock`` on every corral of a position
that needs a push. With a memo, each answer is stored under the sub-problem its search posed
(``corral_key``: the corral's boxes, its squares, and the player's region with only those
boxes on the board) in a direct-mapped table, and a repeated corral is answered without
searching once its exact key (``key_row``) matches too, so a hash collision never hands one
corral another's answer.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from soko_gym.engine.corral import (
    INFO_BARRIER_LEN,
    INFO_BARRIER_START,
    INFO_NEEDS_PUSH,
    INFO_REGION_LEN,
    INFO_REGION_START,
)
from soko_gym.engine.corral_search import (
    CORRAL_DEADLOCK,
    CORRAL_OPEN,
    CORRAL_UNKNOWN,
    corral_deadlock,
)
from soko_gym.engine.corral_tables import (
    COUNT_MEMO_HITS,
    COUNT_SEARCHES,
    KEY_BOXES,
    KEY_HEAD,
    KEY_LOWEST,
    OUT_N_CORRALS,
    OUT_PROOF_LEN,
    OUT_PROOF_NORM,
    PARAM_MEMO,
)
from soko_gym.engine.reach import reach_player


@njit(cache=True, nogil=True, _nrt=False)
def corral_key(ct, box_at, k, player):
    """The sub-problem ``corral_deadlock`` solves for corral ``k``, as a key.

    Returns (Zobrist hash of the corral's boxes, Zobrist hash of its squares K, the player's
    normalized square with only those boxes on the board): two positions with equal keys pose
    the same bounded search, so its answer can be reused. Arguments as in ``corral_deadlock``.
    """
    offsets, zobrist, region, barrier, info = ct.offsets, ct.zobrist, ct.region, ct.barrier, ct.info
    sub_box_at, stamps, stack = ct.sub_box_at, ct.stamps, ct.stack
    h_boxes = np.uint64(0)
    h_region = np.uint64(0)
    bstart = info[k, INFO_BARRIER_START]
    for j in range(bstart, bstart + info[k, INFO_BARRIER_LEN]):
        sq = barrier[j]
        h_boxes ^= zobrist[sq]
        sub_box_at[sq] = 0
    rstart = info[k, INFO_REGION_START]
    for j in range(rstart, rstart + info[k, INFO_REGION_LEN]):
        sq = region[j]
        h_region ^= zobrist[sq]
        if box_at[sq] >= 0:
            h_boxes ^= zobrist[sq]
            sub_box_at[sq] = 0
    _, norm = reach_player(sub_box_at, offsets, player, stamps, stack)
    for j in range(bstart, bstart + info[k, INFO_BARRIER_LEN]):
        sub_box_at[barrier[j]] = -1
    for j in range(rstart, rstart + info[k, INFO_REGION_LEN]):
        sub_box_at[region[j]] = -1
    return h_boxes, h_region, norm


@njit(cache=True, nogil=True, _nrt=False)
def _sort_run(row, start, n):
    """Sort ``row[start : start + n]`` in place, increasing (insertion sort: a few squares)."""
    for i in range(start + 1, start + n):
        x = row[i]
        j = i - 1
        while j >= start and row[j] > x:
            row[j + 1] = row[j]
            j -= 1
        row[j + 1] = x


@njit(cache=True, nogil=True, _nrt=False)
def key_row(ct, box_at, k, row):
    """Write corral ``k``'s exact memo key into ``row`` (int16); False when it does not fit.

    The row holds (``KEY_*`` head) the number of the corral's boxes B and the smallest square
    of K, then B's squares, increasing; ``row[KEY_BOXES]`` is -1 when they do not fit. With
    ``corral_key``'s norm it names the sub-problem exactly: B fixes the board, the norm the
    player's region P on it; the barrier is the boxes of B next to P (an interior box touches
    only K, walls and the barrier, none in P), and K, closed but for walls and the barrier, is
    the component of the other squares holding its smallest square. Arguments as in
    ``corral_deadlock``.
    """
    width = row.shape[0]
    n = KEY_HEAD
    bstart = ct.info[k, INFO_BARRIER_START]
    for j in range(bstart, bstart + ct.info[k, INFO_BARRIER_LEN]):
        if n == width:
            row[KEY_BOXES] = -1
            return False
        row[n] = ct.barrier[j]
        n += 1
    lowest = ct.cells.shape[0]
    rstart = ct.info[k, INFO_REGION_START]
    for j in range(rstart, rstart + ct.info[k, INFO_REGION_LEN]):
        sq = ct.region[j]
        lowest = min(lowest, sq)
        if box_at[sq] >= 0:
            if n == width:
                row[KEY_BOXES] = -1
                return False
            row[n] = sq
            n += 1
    n_boxes = n - KEY_HEAD
    _sort_run(row, KEY_HEAD, n_boxes)
    row[KEY_BOXES] = n_boxes
    row[KEY_LOWEST] = lowest
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _memo_row_matches(ct, box_at, k, slot):
    """True when memo ``slot``, whose hashes match corral ``k``'s key, holds that very key.

    Run only on a hash match, so a hash collision never hands one corral another's answer.
    A key too long for its row is a corral with more boxes than a search takes, whose search
    says unknown at once: such a slot answers (unknown) any such corral, and no other.
    """
    stored = ct.memo_key[slot]
    probe = ct.key_probe
    if not key_row(ct, box_at, k, probe) or stored[KEY_BOXES] < 0:
        return probe[KEY_BOXES] < 0 and stored[KEY_BOXES] < 0
    for j in range(KEY_HEAD + probe[KEY_BOXES]):
        if probe[j] != stored[j]:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _memo_slot(h_boxes, h_region, norm, mask):
    """Memo slot of a ``corral_key`` triple (a mix of all three, masked)."""
    x = h_boxes ^ (h_region * np.uint64(0x9E3779B97F4A7C15))
    x ^= np.uint64(norm) * np.uint64(0xC2B2AE3D27D4EB4F)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(29)
    return np.int64(x & np.uint64(mask))


@njit(cache=True, nogil=True, _nrt=False)
def _write_proof(ct, box_at, k, norm):
    """Store corral ``k``'s box squares (barrier, then the boxes in K) and ``norm`` as proof."""
    m = 0
    bstart = ct.info[k, INFO_BARRIER_START]
    for j in range(bstart, bstart + ct.info[k, INFO_BARRIER_LEN]):
        ct.proof[m] = ct.barrier[j]
        m += 1
    rstart = ct.info[k, INFO_REGION_START]
    for j in range(rstart, rstart + ct.info[k, INFO_REGION_LEN]):
        sq = ct.region[j]
        if box_at[sq] >= 0:
            ct.proof[m] = sq
            m += 1
    ct.out[OUT_PROOF_LEN] = m
    ct.out[OUT_PROOF_NORM] = norm


@njit(cache=True, nogil=True, _nrt=False)
def corral_status(ct, box_at, box_pos, player):
    """Corral deadlock test of the position labelled by ``corral_label`` (same arguments).

    Runs ``corral_deadlock`` on every corral that needs a push, stopping at the first
    deadlock. With a memo (``params[PARAM_MEMO]`` > 0) each answer is stored under its
    ``corral_key`` in a direct-mapped table (a colliding key overwrites the slot) and a
    repeated key is answered without searching, once its exact key (``key_row``) matches
    too. When a search (not the memo) proves a deadlock, ``proof[:out[OUT_PROOF_LEN]]`` and
    ``out[OUT_PROOF_NORM]`` hold the corral's box squares and the normalized player square;
    else ``out[OUT_PROOF_LEN]`` is 0.

    Returns:
        CORRAL_DEADLOCK when some corral is proven a deadlock, else CORRAL_UNKNOWN when some
        search was cut short or some corral was too large, else CORRAL_OPEN.
    """
    player = np.int64(player)
    ct.out[OUT_PROOF_LEN] = 0
    mask = ct.params[PARAM_MEMO] - 1
    result = CORRAL_OPEN
    for k in range(ct.out[OUT_N_CORRALS]):
        if ct.info[k, INFO_NEEDS_PUSH] == 0:
            continue
        slot = np.int64(-1)
        h_boxes = np.uint64(0)
        h_region = np.uint64(0)
        norm = np.int64(-1)
        if mask >= 0:
            h_boxes, h_region, norm = corral_key(ct, box_at, k, player)
            slot = _memo_slot(h_boxes, h_region, norm, mask)
            status = ct.memo_status[slot]
            if (
                status >= 0
                and ct.memo_boxes[slot] == h_boxes
                and ct.memo_region[slot] == h_region
                and ct.memo_norm[slot] == norm
                and _memo_row_matches(ct, box_at, k, slot)
            ):
                ct.counters[COUNT_MEMO_HITS] += 1
                if status == CORRAL_DEADLOCK:
                    return CORRAL_DEADLOCK
                if status == CORRAL_UNKNOWN:
                    result = CORRAL_UNKNOWN
                continue
        status = corral_deadlock(ct, box_at, k, player)
        ct.counters[COUNT_SEARCHES] += 1
        if slot >= 0:
            ct.memo_boxes[slot] = h_boxes
            ct.memo_region[slot] = h_region
            ct.memo_norm[slot] = norm
            ct.memo_status[slot] = status
            key_row(ct, box_at, k, ct.memo_key[slot])
        if status == CORRAL_DEADLOCK:
            if slot < 0:
                _, _, norm = corral_key(ct, box_at, k, player)
            _write_proof(ct, box_at, k, norm)
            return CORRAL_DEADLOCK
        if status == CORRAL_UNKNOWN:
            result = CORRAL_UNKNOWN
    return result
