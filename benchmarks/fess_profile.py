"""Where FESS spends its time, and how far it gets, on chosen levels (one worker).

    python benchmarks/fess_profile.py xsokoban 14,15,23,28 --seconds 20
    python benchmarks/fess_profile.py xsokoban 29 --options '{"pi_corrals": false}'

Per level: the packing plan (complete or not, steps), nodes, nodes per second of search,
feature-space cells, the most plan steps any position realised, the share of positions later
marked dead, deadlocks by kind, the corral searches the run made (memo hits, searches, those cut
short by their budget, positions expanded per search),
and the time split. The search runs in one kernel, so the split is measured by replaying a
stretch of the run's own positions through each part on its own (memos and the generator's
feature cache emptied, then warmed by the ten times as many positions made just before the
stretch): the move generator, the advisors and move order (with PI-corral pruning), and each
node-level deadlock test; each part's time per position is multiplied by the positions the
search gave it (generated, tested: lazy generation leaves some positions without moves);
"loop" is what is left of the measured search time
(the cell cycle, the transposition table, dead marking). Each part's share: its time per
position times the positions the search made it handle, over the search time (or over the parts'
sum when that is larger).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from numba import njit

import soko_gym
from planners import SearchLimits
from planners._kernels.fess_move_data import FEAT_KIND
from planners._kernels.fess_moves import push_moves
from planners._kernels.fess_search import (
    O_CORRALS,
    O_FROZEN,
    O_LEARNED,
    O_RETROGRADE,
    O_ROOMS,
    generate_moves,
    node_deadlock,
)
from planners._kernels.fess_tree import C_LABELLED, C_MOVES_USED, C_NODES
from planners.fess.options import make_options
from planners.fess.run import FessRun
from planners.fess.tree import new_tree
from soko_gym.engine.corral_tables import COUNT_CUT, COUNT_EXPANDED, COUNT_MEMO_HITS, COUNT_SEARCHES

# each node test by its option slot
TESTS = {"retrograde": O_RETROGRADE, "frozen": O_FROZEN, "learned": O_LEARNED, "room": O_ROOMS,
         "corral": O_CORRALS}  # fmt: skip
TEST_SLOTS = list(TESTS.values())
COLUMNS = ("moves", "order", *TESTS, "loop")


@njit(cache=True)
def _time_parts(t, sc, w, tree, scratch_tree, dt, nodes, part):
    """Run one part (0 moves, 1 moves with order, 2 node tests) on ``nodes``; the nodes done.

    Called from Python once per part, so the timing holds no per-call dispatch.
    """
    for i in nodes:
        for b in range(w.box_pos.shape[0]):
            w.box_at[w.box_pos[b]] = -1
        for b in range(w.box_pos.shape[0]):
            w.box_pos[b] = tree.box_pos[i, b]
            w.box_at[w.box_pos[b]] = b
        player = np.int64(tree.player[i])
        if part == 0:
            push_moves(t.mt, sc, dt.learned, w.box_at, w.box_pos, player, w.moves)
        elif part == 1:
            scratch_tree.box_pos[0] = tree.box_pos[i]
            scratch_tree.player[0] = tree.player[i]
            scratch_tree.feat[0] = tree.feat[i]
            scratch_tree.ctr[C_MOVES_USED] = 0
            scratch_tree.ctr[C_LABELLED] = -1
            generate_moves(t, sc, w, scratch_tree, dt, np.int64(0))
        else:
            dst = np.int64(tree.box_pos[i, tree.moved[i, 0]])
            # as the node itself: its learned-pattern test then reads only the patterns its
            # parent's move generation had not seen, as in the search
            node_deadlock(t, sc, w, tree, dt, np.int64(i), player, dst)
    return nodes.shape[0]


def _replay(run: FessRun, nodes: np.ndarray, warm: np.ndarray) -> dict[str, float]:
    """Seconds per position of each part (module docstring) over the tree nodes ``nodes``.

    The memos are emptied, then filled by the node tests on ``warm`` (the positions made just
    before ``nodes``, untimed), so the timed ones meet memos like the search's.
    """
    scratch_tree = new_tree(run.board.n_boxes, 2, run.work.moves.shape[0])
    w = run.work
    w.box_at[:] = -1
    args = (run.tables, run.scratch, w, run.tree, scratch_tree, run.deadlock_tables, nodes)

    def timed(part: int) -> float:
        t = time.perf_counter()
        _time_parts(*args, part)
        return (time.perf_counter() - t) / nodes.shape[0]

    def fresh_generator() -> None:
        # the generator's feature cache, keyed by child box sets, holds every child of the
        # replayed positions once they have been replayed (or made by the run just before):
        # empty it, then warm it on the positions before them, as the memos below are
        run.scratch.cache_val[:, FEAT_KIND] = -2
        _time_parts(*warm_args, 0)

    warm_args = (*args[:-1], warm)
    timed(0), timed(1), timed(2)  # compile the replay kernel outside the figures
    fresh_generator()
    per = {"moves": timed(0)}
    fresh_generator()
    per["order"] = max(0.0, timed(1) - per["moves"])
    opts = run.tables.opts
    saved = opts.copy()
    for name, slot in TESTS.items():
        if not saved[slot]:
            per[name] = 0.0  # the run had it off
            continue
        opts[TEST_SLOTS] = 0
        opts[slot] = saved[slot]
        w.memo_status[:] = -1
        run.corrals.memo_status[:] = -1
        _time_parts(*warm_args, 2)
        per[name] = timed(2)
    opts[:] = saved
    return per


def profile_level(level, seconds: float, sample: int = 300, options: dict | None = None) -> dict:
    """Run FESS on one level, then replay ``sample`` of its positions; the module's figures.

    ``options``: the ``FessOptions`` fields (its defaults when None).
    """
    run = FessRun(make_options(options or {}), level.board, SearchLimits(max_seconds=seconds), None)
    run.deadline = time.perf_counter() + seconds
    out = run.run()
    s = out.stats
    tr = run.tree
    k = int(tr.ctr[C_NODES])
    counters = run.corrals.counters  # the run's own, before the replay below adds to them
    corrals = {
        "memo hits": int(counters[COUNT_MEMO_HITS]),
        "searches": int(counters[COUNT_SEARCHES]),
        "cut": int(counters[COUNT_CUT]),
        "expanded": int(counters[COUNT_EXPANDED]),
    }
    split = dict.fromkeys(COLUMNS, 0.0)
    if k > 1:
        mid = max(1, k // 2 - sample // 2)
        warm = np.arange(max(1, mid - 10 * sample), mid)
        per = _replay(run, np.arange(mid, min(k, mid + sample)), warm)
        generated = s["generated_nodes"]  # lazy generation: not every position gets moves
        spent = {"moves": per["moves"] * generated, "order": per["order"] * generated}
        spent.update({name: per[name] * s["tested_nodes"] for name in TESTS})
        total = max(s["search_seconds"], sum(spent.values()))
        split = {c: spent.get(c, 0.0) / total for c in COLUMNS}
        split["loop"] = max(0.0, 1.0 - sum(split.values()))
    return {
        "status": out.status,
        "plan": f"{'complete' if s['plan_complete'] else 'INCOMPLETE'} ({s['plan_steps']})",
        "nodes": s["nodes"],
        "rate": round(s["nodes"] / max(s["search_seconds"], 1e-9)),
        "cells": s["cells"],
        "best_packed": int(tr.feat[:k, 1].max()),
        "dead": float(tr.dead[:k].mean()),
        "deadlocks": {name: v for name, v in s["deadlocks"].items() if v},
        "split": split,
        "corrals": corrals,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack", help="bundled pack, e.g. xsokoban")
    parser.add_argument("levels", help="1-based level numbers, e.g. 14,15,23")
    parser.add_argument("--seconds", type=float, default=20.0, help="time per level")
    parser.add_argument(
        "--options", default="{}", help="FessOptions as JSON, e.g. '{\"pi_corrals\": false}'"
    )
    args = parser.parse_args()
    try:
        options = json.loads(args.options)
        if not isinstance(options, dict):
            raise ValueError("not a JSON object")
        make_options(options)
    except (ValueError, TypeError) as err:
        parser.error(f"--options: {err}")
    numbers = [int(x) for x in args.levels.split(",")]
    soko_gym.engine.warmup()
    profile_level(soko_gym.load_levels("microban:1")[0], 5)  # compile outside the figures
    head = "| level | status | plan (steps) | nodes | nodes/s | cells | best packed | dead |"
    print(head + " " + " | ".join(COLUMNS) + " | deadlocks found | corral searches |")
    print("|---:|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(COLUMNS) + "---|---|")
    for i in numbers:
        level = soko_gym.load_levels(f"{args.pack}:{i}")[0]
        r = profile_level(level, args.seconds, options=options)
        split = " | ".join(f"{100 * r['split'][c]:.0f}%" for c in COLUMNS)
        found = ", ".join(f"{k} {v:,}" for k, v in r["deadlocks"].items())
        c = r["corrals"]
        each = c["expanded"] / max(1, c["searches"])
        searched = f"{c['searches']:,} (memo {c['memo hits']:,}; cut {c['cut']:,}; "
        searched += f"{each:.1f} positions each)"
        print(
            f"| {i} | {r['status']} | {r['plan']} | {r['nodes']:,} | {r['rate']:,} | "
            f"{r['cells']} | {r['best_packed']} | {100 * r['dead']:.0f}% | {split} | {found} | "
            f"{searched} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
