"""Agents against planners on the same levels: ``soko bench``, one CSV, one table, one plot.

Planners run through ``planners.solve`` with a time budget per level (``--jobs K`` solves levels
in K worker processes); agents (stable-baselines3 models) play the levels through the env they
were trained on, with a step budget per episode, and every solution they find is rebuilt as
LURD from the env's ``info["last_lurd"]`` and checked with ``soko_gym.levels.verify``.

Usage::

    soko bench --levels microban:1-20 --planners astar,fess --agents runs/ppo/model.zip
        --time-limit 10 --max-steps 200 --jobs 2 --out bench/   (one command line)

    from agents.benchmark import BenchConfig, run_benchmark
    rows = run_benchmark(BenchConfig("microban:1-20", planners=("astar",), out="bench"))

Outputs in ``--out``:

- ``results.csv``: one row per level, solver and episode (planners have episode 0) with the
  columns ``CSV_COLUMNS``: ``source``, ``level`` (1-based index in the source, as in
  ``microban:3``), ``title``, ``solver`` (planner name or model path), ``kind`` ("planner" or
  "agent"), ``env_id`` (agents), ``episode``, ``solved``, ``status``, ``pushes`` and ``moves``
  (of the solution; empty when not solved), ``seconds`` (wall time of the run or episode),
  ``env_steps`` (agents: actions taken, solved or not) and ``nodes`` (planners). Rows are
  written as they finish, so Ctrl-C keeps every row already written; an existing
  ``results.csv`` is never replaced without ``--overwrite``.
- ``solve_rate.png``: two panels sharing the y axis. Left: planners' solve rate against the
  time budget (fraction of levels solved within t seconds, log x up to ``--time-limit``).
  Right: agents' solve rate against the step budget (fraction of episodes solved within b env
  steps, up to ``--max-steps``). A run solved in t seconds or b steps would also be solved with
  any larger budget, so one run per level at the full budget gives the whole curve. Agents'
  steps are actions of their own action space (a push, a macro move or one step), so compare
  curves of agents with the same env id.
- The terminal summary per solver: runs, solved, solve rate, mean pushes and moves of the
  solved runs, the same means on the levels every solver solved ("common"), mean seconds
  per run and mean env steps.

Agents (loaded by ``agents.playing.models.load_agent``): a ``.zip`` saved by ``soko train``, or by
stable-baselines3 or sb3-contrib (MaskablePPO, PPO or DQN, named by the sidecar's ``algo`` or
found from the policy class stored in the zip), or the RLlib checkpoint folder of ``soko train
--algo rllib-ppo`` (``model/`` or ``algorithm/``, masked). The env id and env arguments come
from a sidecar JSON next to the model (``model.json`` or ``model.zip.json``: ``{"env_id": ...,
"env_kwargs": {...}}``; else the metadata ``soko train`` stores in the zip), from
``--agent-env``, or else from the model's spaces (planes observation ``(C, H, W)``;
``Discrete(4 H W)`` is the push env, ``Discrete((H W)^2)`` the macro env, ``Discrete(4|5)`` the
move env). Maskable models get the env's action masks. Episodes take the policy's most likely
action with one episode per level, and sample actions (seeded by ``--seed``) with more. A level
larger than the model's frame gets status "does_not_fit".

The policy-guided planners "lts" and "phs" (``planners.policy_search``) take their policy from
``--policy MODEL``, a saved Push-env model (``agents.playing.policy_search.model_policy``,
loaded once per worker); a level larger than that model's frame gets status "does_not_fit" too.

The modules: ``config`` (``BenchConfig``, its checks, the CSV columns), ``planners`` and
``episodes`` (the two kinds of solvers, each yielding rows as runs finish), ``run`` (this:
the CSV, resume, the summary), ``report`` (the table and plot), ``record`` (``--record``'s
replays) and ``cli``.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

from agents.benchmark.config import (
    CSV_COLUMNS,
    PLOT_NAME,
    RESULTS_NAME,
    BenchConfig,
    check_config,
)
from agents.benchmark.episodes import agent_rows
from agents.benchmark.planners import planner_rows
from agents.benchmark.record import write_record_pages
from agents.benchmark.report import format_summary, plot_solve_rate, summary_rows
from agents.benchmark.text_agents import is_text_agent, text_agent_rows
from agents.playing.models import load_agent
from agents.playing.repeat import repeat_aware
from agents.playing.symmetry import symmetry_averaged
from soko_gym.levels.packs import indexed_levels, split_selection


def run_benchmark(config: BenchConfig) -> list[dict[str, Any]]:
    """Run every planner and agent of ``config`` on its levels; write the CSV, table and plot.

    Returns:
        The CSV rows as dicts (also those written before a Ctrl-C, which is re-raised after
        the summary and plot of the partial results).

    Raises:
        ValueError: unknown planners, missing models, bad budgets, or an existing
            ``results.csv`` without ``overwrite``.
    """
    check_config(config)
    out = Path(config.out)
    csv_path = out / RESULTS_NAME
    if csv_path.exists() and not (config.overwrite or config.resume):
        raise ValueError(
            f"{csv_path} exists; pass --resume to continue it or --overwrite to replace it"
        )
    texts = [path for path in config.agents if is_text_agent(path)]
    paths = [path for path in config.agents if not is_text_agent(path)]
    agents = [load_agent(path, config.agent_env) for path in paths]  # errors come first
    if config.deadlock_search > 0:
        for agent in agents:
            agent.env_kwargs["deadlock_search"] = config.deadlock_search
    if config.symmetric:
        agents = [symmetry_averaged(agent) for agent in agents]
    if config.on_repeat is not None:
        agents = [repeat_aware(agent, config.on_repeat, config.seed) for agent in agents]
    items = [(i + 1, level) for i, level in indexed_levels(config.levels)]  # 1-based numbers
    titles = {number: level.title for number, level in items}
    source = split_selection(config.levels)[0]
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    if config.resume and csv_path.exists():
        rows = _resumed_rows(csv_path, source)
    done = {(r["solver"], int(r["level"]), int(r["episode"])) for r in rows}
    interrupted = False
    with csv_path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)  # a resumed run's kept rows, then the new ones
        f.flush()

        def emit(solver: str, kind: str, env_id: str, number: int, episode: int, res: dict):
            row = {
                "source": source,
                "level": number,
                "title": titles[number],
                "solver": solver,
                "kind": kind,
                "env_id": env_id,
                "episode": episode,
                **res,
            }
            writer.writerow(row)
            f.flush()
            rows.append(row)
            if not (config.quiet or config.json):
                figures = (
                    f"{res['pushes']} pushes, {res['moves']} moves"
                    if res["solved"]
                    else res["status"]
                )
                print(
                    f"{solver} level {number} #{episode}: {figures} ({res['seconds']:.2f} s)",
                    file=sys.stderr,
                )

        try:
            for name, number, res in planner_rows(config, items, done):
                emit(name, "planner", "", number, 0, res)
            for path, env_id, number, episode, res in agent_rows(
                config, paths, agents, items, done
            ):
                emit(path, "agent", env_id, number, episode, res)
            for spec, env_id, number, episode, res in text_agent_rows(
                texts, items, done, config.episodes_per_level, config.max_steps
            ):
                emit(spec, "agent", env_id, number, episode, res)
        except KeyboardInterrupt:
            interrupted = True
    if config.json:
        print(json.dumps({"results": str(csv_path), "solvers": summary_rows(rows)}))
    else:
        print(format_summary(rows))
    if config.plot and rows:
        plot_solve_rate(rows, out / PLOT_NAME, config.time_limit, config.max_steps)
    if config.record:
        write_record_pages(out, rows, items[: config.record], plotted=config.plot and bool(rows))
    if interrupted:
        raise KeyboardInterrupt
    return rows


def _resumed_rows(csv_path: Path, source: str) -> list[dict[str, Any]]:
    """The complete rows of an earlier run of the same source (``--resume``).

    A row cut short by a kill or an "error" row is dropped, so its run is done again; rows of
    another source are a ValueError (resume continues the same benchmark).
    """
    with csv_path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        columns = tuple(reader.fieldnames or ())
        if columns not in (CSV_COLUMNS, CSV_COLUMNS[:-1]):  # before text agents: no last column
            raise ValueError(f"{csv_path} is not a results.csv of soko bench (its columns differ)")
        kept = []
        for row in reader:
            row.setdefault("invalid_replies", "")
            if any(row.get(c) is None for c in CSV_COLUMNS) or None in row:
                continue  # cut short
            if row["source"] != source:
                raise ValueError(
                    f"{csv_path} holds results of {row['source']!r}, not {source!r}; "
                    "--resume continues the same benchmark"
                )
            if row["status"].startswith("error"):
                continue
            try:
                row["level"], row["episode"] = int(row["level"]), int(row["episode"])
                row["seconds"] = float(row["seconds"])
                for column in ("pushes", "moves", "env_steps", "nodes", "invalid_replies"):
                    row[column] = int(row[column]) if row[column] else ""
            except ValueError:
                continue
            row["solved"] = row["solved"] == "True"
            kept.append(row)
    seen: set[tuple[str, str, str]] = set()
    unique = []
    for row in kept:
        key = (row["solver"], row["level"], row["episode"])
        if key not in seen:
            seen.add(key)
            unique.append(row)
    print(f"resuming {csv_path}: {len(unique)} runs done", file=sys.stderr)
    return unique
