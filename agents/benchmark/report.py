"""Reports of ``soko bench``: the terminal summary table and ``solve_rate.png``.

Both read the rows of ``results.csv`` as ``agents.benchmark.run_benchmark`` returns them (or as
``csv.DictReader`` reads them back: ``solved`` may be the string "True").
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _fmean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def summary_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One dict per solver: the figures of ``format_summary`` (``soko bench --json``).

    Keys: solver, kind, runs, solved, rate, pushes, moves (means over solved runs),
    common_levels, common_pushes, common_moves (means on the levels every solver solved),
    seconds_per_run, steps_per_run (agents; both without levels too large for the agent).
    Means with nothing to average are None.
    """
    solvers: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        solvers.setdefault(row["solver"], []).append(row)
    solved_by = {s: {r["level"] for r in rs if _truthy(r["solved"])} for s, rs in solvers.items()}
    common = set.intersection(*solved_by.values()) if solved_by else set()
    out = []
    for solver, rs in solvers.items():
        ok = [r for r in rs if _truthy(r["solved"])]
        first: dict[int, dict[str, Any]] = {}
        for r in ok:
            first.setdefault(r["level"], r)
        shared = [r for lvl, r in first.items() if lvl in common]
        played = [r for r in rs if r["status"] != "does_not_fit"]  # runs that took time
        steps = [float(r["env_steps"]) for r in played if r["env_steps"] != ""]
        out.append(
            {
                "solver": solver,
                "kind": rs[0]["kind"],
                "runs": len(rs),
                "solved": len(ok),
                "rate": len(ok) / len(rs),
                "pushes": _fmean([float(r["pushes"]) for r in ok]),
                "moves": _fmean([float(r["moves"]) for r in ok]),
                "common_levels": len(common),
                "common_pushes": _fmean([float(r["pushes"]) for r in shared]),
                "common_moves": _fmean([float(r["moves"]) for r in shared]),
                "seconds_per_run": _fmean([float(r["seconds"]) for r in played]),
                "steps_per_run": _fmean(steps),
            }
        )
    return out


def format_summary(rows: Sequence[dict[str, Any]]) -> str:
    """A Markdown table with one line per solver (the figures of ``summary_rows``).

    Columns: runs, solved runs, solve rate, mean pushes and moves of the solved runs, the same
    means on the levels every solver solved ("common", with their count), mean seconds per run
    and mean env steps per run (agents; both without the levels too large for the agent).
    """
    summary = summary_rows(rows)
    common = summary[0]["common_levels"] if summary else 0

    def one(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    lines = [
        f"| solver | kind | runs | solved | rate | pushes | moves | pushes (common {common})"
        " | moves (common) | s/run | steps/run |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in summary:
        secs = "-" if r["seconds_per_run"] is None else f"{r['seconds_per_run']:.3f}"
        lines.append(
            f"| {r['solver']} | {r['kind']} | {r['runs']} | {r['solved']} | {r['rate']:.1%} | "
            f"{one(r['pushes'])} | {one(r['moves'])} | {one(r['common_pushes'])} | "
            f"{one(r['common_moves'])} | {secs} | {one(r['steps_per_run'])} |"
        )
    return "\n".join(lines)


def _truthy(value: Any) -> bool:
    return value is True or str(value) == "True"


def require_matplotlib() -> None:
    """Raise an ImportError naming the ``plot`` extra when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as err:
        raise ImportError(
            'solve_rate.png needs matplotlib: pip install "soko-gym[plot]" (or pass --no-plot)'
        ) from err


def _curve(values: list[float], n_runs: int, grid: Sequence[float]) -> list[float]:
    return [sum(v <= x for v in values) / n_runs for x in grid]


def plot_solve_rate(
    rows: Sequence[dict[str, Any]],
    path: str | Path,
    time_limit: float | None = None,
    max_steps: int | None = None,
) -> Path:
    """Write the solve-rate plot: planners against time, agents against env steps.

    Args:
        rows: CSV rows as ``run_benchmark`` returns them.
        path: the PNG to write.
        time_limit: right end of the time axis (default: the slowest run).
        max_steps: right end of the step axis (default: the longest episode).

    Returns:
        The path written.
    """
    require_matplotlib()
    from matplotlib.figure import Figure

    by_solver: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        by_solver.setdefault((row["kind"], row["solver"], row["env_id"]), []).append(row)
    kinds = [k for k in ("planner", "agent") if any(key[0] == k for key in by_solver)]
    fig = Figure(figsize=(5.0 * len(kinds), 4.0), layout="constrained")
    axes = fig.subplots(1, len(kinds), sharey=True, squeeze=False)[0]
    for ax, kind in zip(axes, kinds, strict=True):
        if kind == "planner":
            slowest = max(float(r["seconds"]) for r in rows if r["kind"] == kind)
            right = max(time_limit or 0.0, slowest) or 1.0
            fastest = [float(r["seconds"]) / 2 for r in rows if r["kind"] == kind]
            left = max(min([right / 1000, *fastest]), 1e-6)
            grid = [left * (right / left) ** (i / 200) for i in range(201)]
            ax.set_xscale("log")
            ax.set_xlabel("time budget per level (s)")
            ax.set_title("planners")
        else:
            steps = [int(r["env_steps"]) for r in rows if r["kind"] == "agent"]
            right = max(max_steps or 0, *steps, 1)
            grid = list(range(0, int(right) + 1))
            ax.set_xlabel("step budget per episode (env steps)")
            ax.set_title("agents")
        for (k, solver, env_id), rs in by_solver.items():
            if k != kind:
                continue
            key = "seconds" if kind == "planner" else "env_steps"
            values = [float(r[key]) for r in rs if _truthy(r["solved"])]
            label = solver if kind == "planner" else f"{Path(solver).name} ({env_id})"
            ax.step(grid, _curve(values, len(rs), grid), where="post", label=label)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize="small")
    axes[0].set_ylabel("solve rate")
    path = Path(path)
    fig.savefig(path, dpi=120)
    return path
