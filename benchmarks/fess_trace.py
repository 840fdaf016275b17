"""Where FESS loses a known solution of a level it does not solve (one worker).

    python benchmarks/fess_trace.py xsokoban 29 --lurd benchmarks/results/fess-xsokoban-600s.jsonl

The known solution (a LURD string, a file holding one, or a ``bench_fess.py`` JSONL file with a
solved record of the level) is cut into macro moves (the pushes of one box in a row); the FESS
configuration traced is the default or ``--options`` (JSON). Two reports:

- *Guidance*: at each position of the solution, the weight FESS gives the solution's next
  macro move (0: an advisor picked it), which advisors picked it, its rank in the node's move
  order, and, for a difficult move, what the advisors picked instead (as a fresh search sees
  the position: no deadlock patterns learned yet). A solution FESS finds fast needs few
  difficult moves; the count says how far the advisors are from this one.
- *Search*: after ``--seconds`` of search, the solution's positions found in the tree (same
  boxes, player in the same region), the deepest one's cell and weight, and the open nodes of
  its cell that come before it (lower weight): the work that stands between the search and
  the solution's next move.
"""

from __future__ import annotations

import argparse
import collections
import json
import time
from pathlib import Path

import numpy as np
from bench_fess import fess_options

import soko_gym
from planners import SearchLimits
from planners._kernels.fess_tree import C_CELLS, C_NODES
from planners.fess.advisors import ADVISORS
from planners.fess.options import make_options
from planners.fess.run import FessRun
from soko_gym.engine.constants import FLOOR
from soko_gym.levels.lurd import lurd_to_pushes


def known_lurd(source: str, pack: str, number: int) -> str:
    """The solution: ``source`` itself, a file holding it, or a solved record in a JSONL file."""
    path = Path(source)
    if not path.exists():
        return source
    text = path.read_text()
    if path.suffix != ".jsonl":
        return text.strip()
    for line in text.splitlines():
        r = json.loads(line)
        # records of planners.records name their pack in "source" and count levels from 0;
        # the first rounds' records named it in "suite" and counted from 1
        first = 0 if "source" in r else 1
        same_pack = r.get("source", r.get("suite", pack)) == pack
        if same_pack and r.get("index") == number - 1 + first and r.get("lurd"):
            return r["lurd"]
    raise SystemExit(f"{source}: no solved record of level {number}")


def macro_moves(level, lurd: str) -> list[tuple[np.ndarray, int, int, int]]:
    """(box squares before, player before, source, destination) per macro move of ``lurd``."""
    board = level.board
    boxes = board.start_boxes.astype(np.int32).copy()
    where = {int(s): i for i, s in enumerate(boxes)}
    player = int(board.start_player)
    out: list[tuple[np.ndarray, int, int, int]] = []
    moving = -1
    for sq, d in lurd_to_pushes(level, lurd):
        b = where.pop(int(sq))
        if b != moving:
            out.append((boxes.copy(), player, int(sq), -1))
            moving = b
        dst = int(sq) + int(board.offsets[d])
        where[dst] = b
        boxes[b] = dst
        player = int(sq)
        before, p, src, _ = out[-1]
        out[-1] = (before, p, src, dst)
    return out


def region(board, boxes: set[int], start: int) -> set[int]:
    """Squares the player reaches from ``start`` with boxes on ``boxes``."""
    seen = {start}
    stack = [start]
    while stack:
        v = stack.pop()
        for d in range(4):
            w = v + int(board.offsets[d])
            if w not in seen and board.cells[w] & FLOOR and w not in boxes:
                seen.add(w)
                stack.append(w)
    return seen


def guidance(run: FessRun, moves, final_player: int) -> int:
    """Print the guidance report; the number of difficult moves."""
    names = list(ADVISORS)
    difficult = 0
    print("| step | macro move | weight | picked by | rank | advisors picked instead |")
    print("|---:|---|---:|---|---|---|")
    for k, (boxes, player, src, dst) in enumerate(moves):
        nm = run.node_moves(boxes, player)
        rows = [j for j, r in enumerate(nm.full) if int(r[1]) == src and int(r[2]) == dst]
        if not rows:
            difficult += 1
            print(f"| {k} | {src}->{dst} | - | not generated | - | |")
            continue
        # a macro move ends in one row per player region around the box: the solution's is
        # the row whose player square lies in the region the solution's player ends in
        after = set(boxes.tolist()) - {src} | {dst}
        player_after = moves[k + 1][1] if k + 1 < len(moves) else final_player
        reach = region(run.board, after, player_after)
        j = next((i for i in rows if int(nm.full[i][3]) in reach), rows[0])
        w = int(nm.wts[j])
        who = [names[a] for a in range(len(names)) if nm.advised.get(j, 0) >> a & 1]
        rank = list(nm.order).index(j)
        instead = ""
        if w > 0:
            difficult += 1
            instead = ", ".join(
                f"{int(nm.full[i][1])}->{int(nm.full[i][2])} ("
                + "+".join(names[a] for a in range(len(names)) if bits >> a & 1)
                + ")"
                for i, bits in nm.advised.items()
            )
        print(f"| {k} | {src}->{dst} | {w} | {'+'.join(who)} | {rank}/{len(nm.full)} | {instead} |")
    return difficult


def search(run: FessRun, moves) -> None:
    """Run the search to its deadline, then print where the solution's positions are."""
    out = run.run()
    tr = run.tree
    n = int(tr.ctr[C_NODES])
    print(f"\nsearch: {out.status}, {n:,} nodes, {int(tr.ctr[C_CELLS])} cells made active")
    index: dict[tuple[int, ...], list[int]] = {}
    for i in range(n):
        index.setdefault(tuple(sorted(tr.box_pos[i].tolist())), []).append(i)
    board = run.board
    deepest = None
    found = 0
    positions = [(m[0], m[1]) for m in moves]  # the position before each macro move
    for k, (boxes, player) in enumerate(positions):
        reach = region(board, set(boxes.tolist()), player)
        same_boxes = index.get(tuple(sorted(boxes.tolist())), [])
        hits = [i for i in same_boxes if int(tr.player[i]) in reach]
        if hits:
            found += 1
            deepest = (k, hits[0])
    print(f"solution positions in the tree: {found} of {len(positions)}")
    if deepest is None:
        return
    k, i = deepest
    cell = int(tr.cell[i])
    start, count = int(tr.mstart[i]), int(tr.mcount[i])  # start -1: moves not generated yet
    mine = int(tr.weight[i]) + (int(tr.mwts[start + int(tr.morder[start + int(tr.mnext[i])])])
                                if 0 <= start and tr.mnext[i] < count else 0)  # fmt: skip
    ahead = collections.Counter(
        int(tr.weight[j])
        for j in range(n)
        if tr.cell[j] == cell and not tr.dead[j]
        and (tr.mstart[j] < 0 or tr.mnext[j] < tr.mcount[j])  # lazy: moves not generated yet
        and int(tr.weight[j]) < mine
    )  # fmt: skip
    done = f"{int(tr.mnext[i])} of its {count} moves expanded" if start >= 0 else "lazy"
    print(
        f"deepest: step {k} (node {i}, weight {int(tr.weight[i])}, cell {cell} = "
        f"{tr.cell_feat[cell].tolist()}, {done}); "
        f"open nodes of its cell with lower weight: {sum(ahead.values()):,} "
        f"(by weight {sorted(ahead.items())})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack", help="bundled pack, e.g. xsokoban")
    parser.add_argument("level", type=int, help="1-based level number")
    parser.add_argument("--lurd", required=True, help="LURD string, file, or bench_fess JSONL")
    parser.add_argument("--seconds", type=float, default=30.0, help="search time")
    parser.add_argument("--options", default="{}", help="FESS options as JSON (default: none)")
    args = parser.parse_args()
    cfg = make_options(fess_options(parser, args.options))
    level = soko_gym.load_levels(f"{args.pack}:{args.level}")[0]
    lurd = known_lurd(args.lurd, args.pack, args.level)
    moves = macro_moves(level, lurd)
    final_player = int(lurd_to_pushes(level, lurd)[-1][0])  # where the last push starts
    print(f"{args.pack} {args.level}: known solution of {len(moves)} macro moves\n")
    run = FessRun(cfg, level.board, SearchLimits(), None)
    difficult = guidance(run, moves, final_player)
    print(f"\ndifficult moves (weight > 0) on the known solution: {difficult} of {len(moves)}")
    run = FessRun(cfg, level.board, SearchLimits(), time.perf_counter() + args.seconds)
    search(run, moves)


if __name__ == "__main__":
    main()
