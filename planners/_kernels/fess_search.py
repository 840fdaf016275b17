"""The FESS search loop in kernels: the cycle over the cells, move generation, node tests.

``planners.fess.run`` builds the level's tables and the root, then calls ``fess_run`` in
slices of expansions; Python only checks the deadline between slices, grows the arrays when a
kernel asks for room (``FessTree`` is replaced by a larger copy, ``grow_tree``) and rebuilds
the solution at the end. The search itself (Shoham, Sections 1, 3 and 7, see the module
docstring of ``planners.fess.search``) is done here, on the tree of ``fess_tree`` (its rows,
transposition table, cells and heaps):

- *Nodes* are rows of ``FessTree``: box squares, player, parent, the macro move that made the
  node, weight, features, cell, and the node's slice of the move pool (moves with their
  weights, order and advisor bits) with a cursor to the next move to expand.
- *Transposition table*: open addressing on the Zobrist hash of the boxes mixed with the
  normalized player square.
- *Cells*: one per feature-space point reached (``cell_tab`` maps the packed features to a
  cell id); each active cell keeps its nodes in a skew heap threaded through the node rows
  (a node is in at most one heap, with at most one entry, keyed by its next move); the active
  cells are visited round robin, the least-weight move of each expanded in turn. A new node
  enters its heap before its moves are generated, keyed by the cheapest move it could have;
  popped, it gets its moves and goes back in (``_generate_late``).
- *Node-level deadlock tests* on every new node: diagonal deadlocks (``fess_diagonal``),
  retrograde analysis, bipartite matching with frozen boxes as walls, learned patterns, the
  room deadlock search (its answers remembered by ``room_key`` in a direct-mapped memo) and
  the corral deadlock search; room and corral proofs become learned patterns. Each room's
  search budget adapts to what its searches prove.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from planners._kernels.fess_diagonal import diagonal_deadlock
from planners._kernels.fess_frozen import frozen_bipartite_deadlock
from planners._kernels.fess_learned import learned_add, match_learned
from planners._kernels.fess_meet import meet_find
from planners._kernels.fess_move_data import (
    DL_BIPARTITE,
    DL_CORRAL,
    DL_DIAGONAL,
    DL_LEARNED,
    DL_RETROGRADE,
    DL_ROOM,
    M_OOP,
    M_PACKED,
)
from planners._kernels.fess_moves import keep_first_pushes, push_moves
from planners._kernels.fess_order import N_ADVISORS, OrderNode, order_moves
from planners._kernels.fess_retrograde import retrograde_deadlock
from planners._kernels.fess_room_deadlock import (
    ROOM_DEADLOCK,
    ROOM_UNKNOWN,
    room_deadlock,
    room_key,
)
from planners._kernels.fess_tree import (
    C_ACTIVE,
    C_ADVISOR,
    C_EXPANDED,
    C_GENERATED,
    C_LABELLED,
    C_LEARNED_HITS,
    C_MOVES_USED,
    C_NODES,
    C_PI_CORRAL_NODES,
    C_ROUND,
    C_SOLVED,
    C_TESTED,
    C_TRANSPOSITIONS,
    C_WMIN,
    K_BOX,
    K_CONN,
    K_DST,
    K_HOT,
    K_MOB,
    K_NORM,
    K_OOP,
    K_PACKED,
    K_PLAYER,
    K_ROOMS,
    K_SRC,
    KEEP,
    MS_LAZY,
    N_KEEP,
    cell_of,
    cell_worse,
    close_move,
    enter_heap,
    hash_slot,
    load_node,
    mark_dead,
    pop_heap,
    push_node,
    tt_find,
)
from soko_gym.engine.bounded_search import adapt_budget
from soko_gym.engine.corral_analysis import corral_label, corral_pi_sq_pushes
from soko_gym.engine.corral_memo import corral_status
from soko_gym.engine.corral_search import CORRAL_DEADLOCK
from soko_gym.engine.corral_tables import OUT_PROOF_LEN, OUT_PROOF_NORM

# FessTables.opts
O_RETROGRADE = 0
O_FROZEN = 1  # bipartite test with frozen boxes as walls
O_LEARNED = 2
O_ROOMS = 3
O_CORRALS = 4
O_PI_CORRALS = 5
O_ROOM_AXIS = 6
O_SEEDED = 7
O_NODE_LIMIT = 8  # most nodes, -1 for none
O_DOMINATED = 9  # a child joins its parent's cell only when no feature of its own is better
O_SPACE = 10  # the feature space: SPACE_PAPER or SPACE_FREE
O_DIAGONAL = 11  # the diagonal deadlock test on new nodes
N_OPTS = 12

SPACE_PAPER = 0  # cells (out of plan, packed, connectivity, rooms): the paper's Section 3
SPACE_FREE = 1  # cells (connectivity, rooms): nothing of the packing plan (stuck boxes rank)


ADAPT_MIN = 32  # the smallest budget an adaptive room search falls to


# statuses of fess_run
S_SLICE = 0  # the slice's expansions are done; call again
S_SOLVED = 1  # ctr[C_SOLVED] holds the node (solved, or in the meet table: its count[1])
S_UNSOLVABLE = 2  # every reachable position searched
S_GROW = 3  # the tree needs more room (grow_tree), then call again
S_NODE_LIMIT = 4

FessTables = namedtuple(
    "FessTables",
    [
        "mt",  # MoveTables of the move generator
        "ot",  # OrderTables of the advisors and the move order
        "goal",  # uint8[n_cells] 1 on targets
        "room_area",  # uint8[n_rooms, n_cells] a room and the corridor squares next to it
        "room_sq",  # int32[...] those squares, room r's in room_sq[room_start[r]:room_start[r+1]]
        "room_start",  # int32[n_rooms + 1]
        "opts",  # int64[N_OPTS] (O_* slots)
        "meet",  # MeetTables of ``fess_meet``: a backward search's positions (count 0: none)
    ],
)

FessScratch = namedtuple(
    "FessScratch",
    [
        "box_at",  # int16[n_cells] the position at hand
        "box_pos",  # int32[n_boxes] its boxes
        "moves",  # int32[cap, N_MOVE_COLS] the move generator's output
        "wts",  # int64[cap] move weights (order_moves)
        "order",  # int64[cap]
        "picked",  # int64[cap]
        "tiebreak",  # int64[cap]
        "features",  # int64[6] features of the node whose moves are ordered
        "pi_sq_pushes",  # int64[4 * n_boxes] first square pushes PI-corral pruning keeps
        "proof",  # int32[n_boxes] squares of a pattern to learn
        "sub_box_at",  # int16[n_cells] all -1
        "room",  # RoomScratch of room_deadlock
        "memo_hash",  # uint64[cap] room memo by room_key: the boxes' hash
        "memo_info",  # int64[cap] room * 2^32 + normalized player
        "memo_status",  # int8[cap] the answer, -1 for an empty slot
        "memo_squares",  # int16[cap, room max boxes + 1] the boxes' count and squares (exact key)
        "rng",  # uint64[1] xorshift state of the seeded tie-breaks
        "room_budget",  # int64[n_rooms] each room's current search budget (``_adapt``)
    ],
)


DeadlockTables = namedtuple(
    "DeadlockTables",
    [  # what the node-level deadlock tests keep between nodes
        "learned",  # LearnedTables: the patterns learned from room and corral proofs
        "frozen",  # FrozenTables: the bipartite test with frozen boxes as walls
        "corral",  # CorralTables of ``soko_gym.engine.corral`` (scratch and memo)
    ],
)


@njit(cache=True, nogil=True, _nrt=False)
def _next_random(w):
    x = w.rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    w.rng[0] = x
    return x * np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _room_boxes(box_at, squares, row, write):
    """Compare (or, with ``write``, set) a room memo row with the boxes on the area ``squares``.

    ``row``: the count, then the squares in area order; -1 for more boxes than fit, as many as
    a room search takes, whose search says ROOM_UNKNOWN at once. Returns True when the row
    holds those boxes, or both hold too many: a hash match never hands a room another's proof.
    """
    n = 0
    for i in range(squares.shape[0]):
        sq = squares[i]
        if box_at[sq] >= 0:
            n += 1
            if n == row.shape[0]:
                if write:
                    row[0] = -1
                return row[0] < 0
            if write:
                row[n] = sq
            elif row[n] != sq:
                return False
    if write:
        row[0] = n
    return row[0] == n


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _room_test(t, sc, w, learned, player, dst):
    """The room deadlock search on the room the moved box ends in (or next to); True: dead."""
    mt = t.mt
    room = mt.room_id[dst]
    if room < 0:  # a corridor square next to a room belongs to that room's area
        for o in mt.offsets:
            if mt.room_id[dst + o] >= 0:
                room = mt.room_id[dst + o]
                break
    if room < 0:
        return False
    squares = t.room_sq[t.room_start[room] : t.room_start[room + 1]]
    h, norm = room_key(
        mt.offsets, mt.zobrist, w.box_at, squares, player, w.sub_box_at, sc.stamps, sc.stack
    )
    info = (np.int64(room) << 32) | np.int64(norm)
    s = hash_slot(h ^ np.uint64(info * 0x94D049BB133111EB), w.memo_hash.shape[0] - 1)
    if (
        w.memo_status[s] >= 0
        and w.memo_hash[s] == h
        and w.memo_info[s] == info
        and _room_boxes(w.box_at, squares, w.memo_squares[s], False)
    ):
        return w.memo_status[s] == ROOM_DEADLOCK
    limit = w.room_budget[room]
    status = room_deadlock(mt, sc, w.room, w.box_at, t.room_area[room], squares, player, limit)
    w.room_budget[room] = _adapt(limit, status == ROOM_UNKNOWN, status == ROOM_DEADLOCK,
                                 np.int64(w.room.nodes.shape[0]))  # fmt: skip
    w.memo_hash[s] = h
    w.memo_info[s] = info
    w.memo_status[s] = status
    _room_boxes(w.box_at, squares, w.memo_squares[s], True)
    if status == ROOM_DEADLOCK and t.opts[O_LEARNED]:
        n = 0
        for i in range(squares.shape[0]):
            if w.box_at[squares[i]] >= 0:
                w.proof[n] = squares[i]
                n += 1
        learned_add(learned, w.proof, np.int64(n), np.int64(norm))
    return status == ROOM_DEADLOCK


@njit(cache=True, nogil=True, _nrt=False)
def _adapt(budget, ran_out, proved, cap):
    """The next budget of a room's deadlock search (``adapt_budget``, floor ``ADAPT_MIN``).

    Where the searches pay, they stay deep; where they only burn positions (a room holding its
    own targets, as in most Microban levels, whose search must pack every box to end), they
    become cheap. Per room; the corral searches adapt per corral size in their own tables.
    """
    return adapt_budget(budget, ran_out, proved, np.int64(ADAPT_MIN), cap)


@njit(cache=True, nogil=True, _nrt=False)
def node_deadlock(t, sc, w, tree, dt, node, player, dst):
    """Node-level deadlock tests of the position in ``w``; returns the DL_* kind, or -1.

    Not inlined: ``_expand`` and the tests (through ``FessRun``) call it.

    ``dt``: ``DeadlockTables``. ``player``: the player's square; ``dst``: the moved box's
    square. ``node``: the position's node (-1 for none); the corral scratch is marked as
    holding its corrals, which its move generation reuses.
    """
    mt = t.mt
    opts = t.opts
    learned = dt.learned
    corral = dt.corral
    if opts[O_DIAGONAL] and diagonal_deadlock(mt.cells, mt.offsets, mt.floor, w.box_at, player):
        return DL_DIAGONAL
    if opts[O_RETROGRADE] and retrograde_deadlock(
        mt.cells, mt.dead, mt.offsets, mt.goals, w.box_at, w.box_pos, sc.seen, sc.trail,
        w.sub_box_at,
    ):  # fmt: skip
        return DL_RETROGRADE
    if opts[O_FROZEN] and frozen_bipartite_deadlock(dt.frozen, w.box_pos):
        return DL_BIPARTITE
    # the parent and its move generation saw the patterns stored before tree.lseen[parent]:
    # the player reaches the same region of a pattern's board as in the parent unless the
    # pattern holds the moved box, so only one holding dst could match, and the move
    # generation rejected those; a box pushed back to its square is checked on every pattern
    first = np.int64(0)
    if node >= 0 and tree.parent[node] >= 0 and tree.moved[node, 1] != dst:
        first = np.int64(tree.lseen[tree.parent[node]])
    if opts[O_LEARNED] and (
        match_learned(
            learned,
            w.box_at,
            w.box_pos,
            player,
            mt.offsets,
            w.sub_box_at,
            sc.stamps,
            sc.stack,
            first,
        )
        >= 0
    ):
        tree.ctr[C_LEARNED_HITS] += 1
        return DL_LEARNED
    if opts[O_ROOMS] and t.room_start.shape[0] > 1 and _room_test(t, sc, w, learned, player, dst):
        return DL_ROOM
    if opts[O_CORRALS]:
        corral_label(corral, w.box_at, w.box_pos, player)
        tree.ctr[C_LABELLED] = node
        if corral_status(corral, w.box_at, w.box_pos, player) == CORRAL_DEADLOCK:
            n = corral.out[OUT_PROOF_LEN]
            if opts[O_LEARNED] and n > 0:
                for i in range(n):
                    w.proof[i] = corral.proof[i]
                learned_add(learned, w.proof, np.int64(n), corral.out[OUT_PROOF_NORM])
            return DL_CORRAL
    return -1


@njit(cache=True, nogil=True, _nrt=False)
def generate_moves(t, sc, w, tree, dt, node):
    """Generate, order and store the moves of ``node`` (loaded); returns their count.

    Not inlined: the root and the late generation call it, and each inlined copy would be
    compiled again (one call costs nothing beside the generation itself).
    """
    player = np.int64(tree.player[node])
    corral = dt.corral
    tree.lseen[node] = dt.learned.count[0]
    k = push_moves(t.mt, sc, dt.learned, w.box_at, w.box_pos, player, w.moves)
    ctr = tree.ctr
    if t.opts[O_PI_CORRALS] and k:
        if ctr[C_LABELLED] != node:
            corral_label(corral, w.box_at, w.box_pos, player)
            ctr[C_LABELLED] = node
        n = corral_pi_sq_pushes(corral, w.box_at, w.box_pos, player, w.pi_sq_pushes)
        if n >= 0:
            k = keep_first_pushes(w.moves, k, w.pi_sq_pushes[:n])
            ctr[C_PI_CORRAL_NODES] += 1
            if k == 0:
                sc.kinds[DL_CORRAL] += 1
    if k and t.opts[O_SPACE] == SPACE_FREE:  # the plan's features rank nothing here
        for i in range(k):
            w.moves[i, M_OOP] = 0
            w.moves[i, M_PACKED] = 0
    if k:
        for i in range(6):
            w.features[i] = tree.feat[node, i]
        tb = w.tiebreak[:k]
        if t.opts[O_SEEDED]:  # a seeded random order among moves that tie on every feature
            for i in range(k):
                tb[i] = i
            for i in range(k - 1, 0, -1):
                j = np.int64(_next_random(w) % np.uint64(i + 1))
                tb[i], tb[j] = tb[j], tb[i]
        else:
            tb[:] = 0
        order_moves(
            w.moves, k, t.ot, OrderNode(w.features, w.box_pos, sc.hot_out, tb), w.wts, w.order,
            w.picked,
        )  # fmt: skip
    base = ctr[C_MOVES_USED]
    for i in range(k):
        r = base + i
        for c in range(N_KEEP):
            tree.rows[r, c] = w.moves[i, KEEP[c]]
        tree.mwts[r] = w.wts[i]
        tree.morder[r] = w.order[i]
        tree.advised[r] = w.picked[i]
    ctr[C_MOVES_USED] = base + k
    ctr[C_GENERATED] += 1
    tree.mstart[node] = base
    tree.mcount[node] = k
    tree.mnext[node] = 0
    tree.n_open[node] = k
    return k


@njit(cache=True, nogil=True, _nrt=False)
def _is_solved(t, w):
    for b in range(w.box_pos.shape[0]):
        if not t.goal[w.box_pos[b]]:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _cell(t, tree, oop, packed, conn, rooms):
    """The cell of a position with these features, in the search's feature space."""
    r = np.int64(rooms) if t.opts[O_ROOM_AXIS] else np.int64(0)
    # int64 features at every call: one compiled cell_of, not one per argument type
    if t.opts[O_SPACE] == SPACE_FREE:  # stored as (conn, rooms, 0, 0): that order
        return cell_of(tree, np.int64(conn), -r, np.int64(0), np.int64(0))
    return cell_of(tree, np.int64(oop), np.int64(packed), np.int64(conn), r)


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _expand(t, sc, w, tree, dt, node, j):
    """Make move ``j`` of ``node`` (loaded); returns S_SOLVED or S_SLICE."""
    ctr = tree.ctr
    ctr[C_EXPANDED] += 1
    m = tree.mstart[node] + j
    bits = tree.advised[m]
    for a in range(N_ADVISORS):
        if (bits >> a) & 1:
            ctr[C_ADVISOR + a] += 1
    row = tree.rows[m]
    box = np.int64(row[K_BOX])
    src = np.int64(row[K_SRC])
    dst = np.int64(row[K_DST])
    norm = np.int64(row[K_NORM])
    z = t.mt.zobrist
    h = tree.hash[node] ^ z[src] ^ z[dst]
    found, slot = tt_find(tree, h, norm, w.box_at, src, dst)
    if found >= 0:
        ctr[C_TRANSPOSITIONS] += 1
        close_move(tree, node)
        return S_SLICE
    child = ctr[C_NODES]
    ctr[C_NODES] = child + 1
    tree.tt[slot] = child
    for b in range(tree.box_pos.shape[1]):  # a loop: a row copy compiles shape errors
        tree.box_pos[child, b] = tree.box_pos[node, b]
    tree.box_pos[child, box] = dst
    tree.hash[child] = h
    tree.player[child] = row[K_PLAYER]
    tree.norm[child] = norm
    tree.parent[child] = node
    tree.moved[child, 0] = box
    tree.moved[child, 1] = src
    tree.weight[child] = tree.weight[node] + tree.mwts[m]
    tree.feat[child, 0] = row[K_OOP]
    tree.feat[child, 1] = row[K_PACKED]
    tree.feat[child, 2] = row[K_CONN]
    tree.feat[child, 3] = row[K_ROOMS]
    tree.feat[child, 4] = row[K_HOT]
    tree.feat[child, 5] = row[K_MOB]
    c = _cell(t, tree, row[K_OOP], row[K_PACKED], row[K_CONN], row[K_ROOMS])
    if cell_worse(tree, c, tree.cell[node], t.opts[O_DOMINATED]):
        c = tree.cell[node]  # worse than its parent's: the cell of its best ancestor
    tree.cell[child] = c
    tree.dead[child] = 0
    tree.mcount[child] = 0
    tree.mnext[child] = 0
    tree.n_open[child] = 0
    # the child's position: one box moved
    w.box_at[src] = -1
    w.box_at[dst] = box
    w.box_pos[box] = dst
    if _is_solved(t, w):
        ctr[C_SOLVED] = child
        return S_SOLVED
    if t.meet.count[0] > 0:  # a position a backward search stored: solved through it
        e = meet_find(t.meet, h, norm, w.box_at)
        if e >= 0:
            t.meet.count[1] = e
            ctr[C_SOLVED] = child
            return S_SOLVED
    ctr[C_TESTED] += 1
    kind = node_deadlock(t, sc, w, tree, dt, child, np.int64(row[K_PLAYER]), dst)
    if kind >= 0:
        sc.kinds[kind] += 1
        tree.dead[child] = 1
        close_move(tree, node)
        return S_SLICE
    tree.mstart[child] = MS_LAZY  # its moves when its cell reaches it (_generate_late)
    tree.lseen[child] = dt.learned.count[0]  # the patterns its node test saw
    push_node(tree, child)
    return S_SLICE


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _generate_late(t, sc, w, tree, dt, node):
    """Generate the moves of ``node``, popped from its cell; back in, or dead.

    The patterns learned since its node test are tested first: its children's node tests
    skip every pattern its move generation saw (``node_deadlock``), which is sound only when
    the position itself holds none of them.
    """
    load_node(tree, w, node)
    learned = dt.learned
    if t.opts[O_LEARNED] and learned.count[0] > tree.lseen[node]:
        if (
            match_learned(
                learned,
                w.box_at,
                w.box_pos,
                np.int64(tree.player[node]),
                t.mt.offsets,
                w.sub_box_at,
                sc.stamps,
                sc.stack,
                np.int64(tree.lseen[node]),
            )
            >= 0
        ):
            tree.ctr[C_LEARNED_HITS] += 1
            sc.kinds[DL_LEARNED] += 1
            mark_dead(tree, node)
            return
    if generate_moves(t, sc, w, tree, dt, node) == 0:
        mark_dead(tree, node)
    else:  # back in its cell, keyed by its first move
        enter_heap(tree, node)


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _start(t, sc, w, tree, dt):
    """Store the root (node 0, written by the caller), generate its moves, put it in its cell."""
    ctr = tree.ctr
    ctr[C_NODES] = 1
    ctr[C_SOLVED] = -1
    ctr[C_LABELLED] = -1
    ctr[C_WMIN] = min(t.ot.weights[0], t.ot.weights[1])
    root = np.int64(0)
    f = tree.feat[0]
    tree.cell[0] = _cell(t, tree, f[0], f[1], f[2], f[3])
    tree.parent[0] = -1
    tree.dead[0] = 0
    for b in range(w.box_pos.shape[0]):  # nothing loaded yet
        w.box_pos[b] = tree.box_pos[0, b]
    load_node(tree, w, root)
    none = np.int64(-1)  # no box moved (int64: one compiled tt_find)
    _, slot = tt_find(tree, tree.hash[0], np.int64(tree.norm[0]), w.box_at, none, none)
    tree.tt[slot] = 0
    generate_moves(t, sc, w, tree, dt, root)
    tree.lseen[0] = 0  # no node test ran on the root: its children test every pattern
    push_node(tree, root)


@njit(cache=True, nogil=True, _nrt=False)
def fess_run(t, sc, w, tree, dt, budget):
    """Run the FESS cycle for at most ``budget`` expansions; returns an S_* status.

    The first call starts the search from the root (node 0: its boxes, hash, player, norm and
    features written by the caller, ``ctr`` all 0). Returns S_GROW before an expansion the
    tree has no room for (``planners.fess.run`` grows it and calls again).
    """
    ctr = tree.ctr
    if ctr[C_NODES] == 0:
        _start(t, sc, w, tree, dt)
    cap = tree.cell.shape[0]
    max_moves = w.moves.shape[0]
    limit = t.opts[O_NODE_LIMIT]
    while ctr[C_ACTIVE] > 0:
        if budget <= 0:
            return S_SLICE
        if limit >= 0 and ctr[C_NODES] >= limit:
            return S_NODE_LIMIT
        if ctr[C_NODES] + 1 >= cap or ctr[C_MOVES_USED] + max_moves > tree.rows.shape[0]:
            return S_GROW
        if ctr[C_ROUND] >= ctr[C_ACTIVE]:
            ctr[C_ROUND] = 0
        i = ctr[C_ROUND]
        c = tree.active[i]
        node = -1
        while tree.cell_root[c] >= 0:
            cand = pop_heap(tree, c)
            if not tree.dead[cand]:
                node = cand
                break
        if node < 0:  # the cell is spent: out of the active list
            n_active = ctr[C_ACTIVE]
            for k in range(i, n_active - 1):
                tree.active[k] = tree.active[k + 1]
            ctr[C_ACTIVE] = n_active - 1
            tree.cell_on[c] = 0
            continue
        if tree.mstart[node] < 0:  # reached before its moves were generated
            _generate_late(t, sc, w, tree, dt, node)
            budget -= 1
            continue  # the same cell again: its first node may be another one now
        ctr[C_ROUND] = i + 1
        j = tree.morder[tree.mstart[node] + tree.mnext[node]]
        tree.mnext[node] += 1
        push_node(tree, node)
        load_node(tree, w, node)
        if _expand(t, sc, w, tree, dt, node, j) == S_SOLVED:
            return S_SOLVED
        if tree.dead[0]:
            return S_UNSOLVABLE
        budget -= 1
    return S_UNSOLVABLE
