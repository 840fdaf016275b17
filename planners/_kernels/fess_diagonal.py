"""Diagonal deadlocks: a closed diagonal run of empty squares that no push can open well.

A *void* square is an empty square, not the player's, whose four neighbours are walls or
boxes: the player can never stand there, so a box enters it only by a push from outside. A
*diagonal* is a run of void squares along a diagonal, each the corner of the next, closed at
both ends (by a wall or box on the diagonal, or by a corner of two walls). The squares beside
the run (its two rails) each touch two consecutive void squares, so every box on a rail can
only be pushed into the run, and every such push fills a void square and closes the rest.

Scanning the run from one end, a rail box off a target, or an upper part that cannot end with
its boxes on targets, must be opened by pushing a box into the void square below it, which
leaves that box there: the upper part is then good only when that square is a target. When the
scan reaches the far end with the part above still to open, or ends on a box off a target, no
order of pushes can finish the diagonal: the position is dead. A void target on the way, with
the part above good, lets a push from below open the rest without harm: no proof.

The test and its reasoning are those of the diagonal test of Festival (Y. Shoham's FESS
solver, ``diags.cpp``); this is the project's own code. It is a node-level test of FESS.
"""

from __future__ import annotations

from numba import njit

from soko_gym.engine.constants import FLOOR, GOAL


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _wall(cells, sq):
    return not (cells[sq] & FLOOR)


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _occupied(cells, box_at, sq):
    return not (cells[sq] & FLOOR) or box_at[sq] >= 0


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _loose_box(cells, box_at, sq):
    """A box off the targets."""
    return box_at[sq] >= 0 and not (cells[sq] & GOAL)


@njit(cache=True, nogil=True, _nrt=False)
def _void(cells, offsets, box_at, player, sq):
    """An empty square, not the player's, whose four neighbours are all walls or boxes."""
    if not (cells[sq] & FLOOR) or box_at[sq] >= 0 or sq == player:
        return False
    for d in range(4):
        if not _occupied(cells, box_at, sq + offsets[d]):
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _diagonal_dead(cells, box_at, start, n, up, side, step):
    """The scan of one closed diagonal (module docstring): True when it proves a deadlock.

    ``start``: its first void square; ``n`` void squares, ``step`` apart; ``up``: the offset
    from a void square to its rail square towards the run's start on one side, ``side`` on the
    other (so ``start + up + side`` is the start's closing corner).
    """
    good = not _loose_box(cells, box_at, start + up + side)
    cur = start
    for i in range(n + 1):
        cur = start + i * step
        if _loose_box(cells, box_at, cur + up) or _loose_box(cells, box_at, cur + side) or not good:
            if i == n:  # the end is closed: the part above can never be opened
                return True
            good = (cells[cur] & GOAL) != 0  # opened by a box pushed into cur
            continue
        if i == n:
            break
        if cells[cur] & GOAL:  # a push from below opens the rest, the part above kept
            return False
    return _loose_box(cells, box_at, cur)


@njit(cache=True, nogil=True, _nrt=False)
def diagonal_deadlock(cells, offsets, floor, box_at, player):
    """True when the position (``box_at``, the player on ``player``) holds a dead diagonal.

    ``offsets``: up, down, left, right (``soko_gym.engine.constants``' direction order);
    ``floor``: the board's floor squares. Diagonals run down-right and down-left from their
    upper end; a run that starts below a void square is the tail of a longer one, scanned too
    when two walls close it there (as Festival does).
    """
    up = offsets[0]
    for f in range(floor.shape[0]):
        sq = floor[f]
        if not _void(cells, offsets, box_at, player, sq):
            continue
        for side in (offsets[2], offsets[3]):  # the run goes down and away from ``side``
            step = -up - side
            corner = sq + up + side
            if not (
                _occupied(cells, box_at, corner)
                or (_wall(cells, sq + up) and _wall(cells, sq + side))
            ):
                continue
            n = 1
            while _void(cells, offsets, box_at, player, sq + n * step):
                n += 1
            end = sq + n * step
            if not (
                _occupied(cells, box_at, end)
                or (_wall(cells, end + up) and _wall(cells, end + side))
            ):
                continue
            if _diagonal_dead(cells, box_at, sq, n, up, side, step):
                return True
    return False
