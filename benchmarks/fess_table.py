"""The solver-strength table (issue 12) from ``bench_fess.py`` records, checked as it is built.

    python benchmarks/fess_table.py benchmarks/results/fess-*.jsonl
    python benchmarks/fess_table.py RECORDS... --limits 10,60,600 --no-verify

Records of any runs and sources mix: per source, a level is solved within a limit when some
record solved it that fast, unsolved when some record ran it at least that long without, and
"not run" otherwise (``planners.records.solved_within``). Every solution a count relies on is
replayed with the engine's verifier first (``--no-verify`` skips that), so the table cannot
count a record whose solution is wrong. Prints one markdown row per source: solved and total
time at each limit, the levels left, and the records and commits the row comes from.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from planners.records import read_records, solved_within
from soko_gym.levels import Level, load_levels, verify


def records_by_source(paths: list[Path]) -> dict[str, list[tuple[str, dict]]]:
    """Records per source, each with the file it came from (FESS records only)."""
    out: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for path in paths:
        try:
            records = read_records(path)
        except ValueError as e:
            raise SystemExit(str(e)) from None
        for r in records:
            if r.get("planner", "fess") == "fess":
                out[r["source"]].append((path.name, r))
    return out


def check_solutions(source: str, records: list[tuple[str, dict]], levels: list[Level]) -> None:
    """Replay every solved record's LURD on its level; exit naming the first bad one."""
    for name, r in records:
        if not r["solved"]:
            continue
        i = int(r["index"])
        if i >= len(levels) or str(levels[i].title) != str(r["title"]):
            raise SystemExit(f"{name}: {source} level {i + 1} is not titled {r['title']!r}")
        check = verify(levels[i], r["lurd"])
        if not check.ok:
            raise SystemExit(
                f"{name}: {source} #{r['title']}: the solution fails at move {check.index}: "
                f"{check.reason}"
            )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("records", nargs="+", type=Path, help="bench_fess.py JSONL files")
    p.add_argument("--limits", default="10,60,600", help="seconds per level, e.g. 10,60,600")
    p.add_argument("--no-verify", action="store_true", help="trust the records' solutions")
    a = p.parse_args()
    try:
        limits = [float(x) for x in a.limits.split(",")]
    except ValueError:
        p.error(f"--limits: numbers separated by commas, got {a.limits!r}")
    missing = [str(x) for x in a.records if not x.is_file()]
    if missing:
        p.error(f"no such record file: {', '.join(missing)}")
    head = " | ".join(f"within {x:g} s (time on them)" for x in limits)
    print(f"| suite | levels | {head} | left at {limits[-1]:g} s | records (commits) |")
    print("|---|---:|" + "---:|" * len(limits) + "---|---|")
    for source, recs in sorted(records_by_source(a.records).items()):
        levels = load_levels(source)
        titles = [str(lv.title) for lv in levels]
        if not a.no_verify:
            check_solutions(source, recs, levels)
        rows = solved_within([r for _, r in recs], limits, titles)
        cells = []
        for s in rows:
            cell = f"**{s.solved}** ({s.seconds:.1f} s)"
            if s.not_run:
                cell += f"; {len(s.not_run)} not run"
            cells.append(cell)
        last = rows[-1]
        left = ", ".join(f"#{t}" for t in last.unsolved) or "none"
        if last.not_run:
            left += "; not run: " + ", ".join(f"#{t}" for t in last.not_run)
        files = sorted({name for name, _ in recs})
        commits = sorted({r["commit"].removeprefix("git:")[:7] for _, r in recs})
        print(
            f"| `{source}` | {len(titles)} | {' | '.join(cells)} | {left} | "
            f"{', '.join(files)} ({', '.join(commits)}) |"
        )


if __name__ == "__main__":
    main()
