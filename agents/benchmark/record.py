"""``soko bench --record N``: the solutions of the first N levels as replays side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.benchmark.config import PLOT_NAME, RESULTS_NAME
from agents.benchmark.report import format_summary
from soko_gym.levels import Level


def write_record_pages(
    out: Path, rows: list[dict[str, Any]], items: list[tuple[int, Level]], plotted: bool
) -> Path:
    """Write the replays of ``items`` and the summary page; the path of ``index.html``.

    ``replays/level-N.html`` shows every solver's solution of level N side by side;
    ``index.html`` holds the summary table, the plot and those replays. Runs without a
    solution (unsolved, or kept from a resumed run) are listed by status.
    """
    import html

    from soko_gym.envs.render.replay import make_replay, write_html

    folder = out / "replays"
    folder.mkdir(exist_ok=True)
    sections = []
    for number, level in items:
        runs = [r for r in rows if r["level"] == number and r.get("episode", 0) == 0]
        replays = [
            make_replay(level, r["lurd"], f"{Path(str(r['solver'])).name} ({r['kind']})")
            for r in runs
            if r.get("lurd")
        ]
        missing = [
            f"{html.escape(Path(str(r['solver'])).name)}: {html.escape(str(r['status']))}"
            for r in runs
            if not r.get("lurd")
        ]
        named = level.title and level.title != str(number)
        title = html.escape(f"level {number}" + (f": {level.title}" if named else ""))
        part = f"<h2>{title}</h2>"
        if replays:
            name = f"level-{number}.html"
            write_html(replays, folder / name)
            height = 140 + 24 * level.height
            part += (
                f'<p><a href="replays/{name}">open</a></p><iframe src="replays/{name}" '
                f'width="100%" height="{height}" style="border:0"></iframe>'
            )
        if missing:
            part += "<p>no solution: " + "; ".join(missing) + "</p>"
        sections.append(part)
    table = format_summary(rows)
    plot = f'<img src="{PLOT_NAME}" alt="solve rate" style="max-width:100%">' if plotted else ""
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>soko bench</title></head>"
        "<body style='font-family:sans-serif'><h1>soko bench</h1>"
        f"<p><a href='{RESULTS_NAME}'>{RESULTS_NAME}</a></p>"
        f"<pre>{html.escape(table)}</pre>{plot}{''.join(sections)}</body></html>"
    )
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
