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

Agents (loaded by ``agents.models.load_agent``): a ``.zip`` saved by ``soko train``, or by
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
``--policy MODEL``, a saved Push-env model (``agents.policy_search.model_policy``, loaded once
per worker); a level larger than that model's frame gets status "does_not_fit" too.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.bench_report import (
    format_summary,
    plot_solve_rate,
    require_matplotlib,
    summary_rows,
)
from agents.models import LoadedAgent, load_agent
from agents.repeat import RULES, repeat_aware
from agents.symmetry import symmetry_averaged
from agents.zoo import resolve
from soko_gym.execution import Backend, add_backend_options, run
from soko_gym.levels import Level
from soko_gym.levels.packs import indexed_levels, split_selection

CSV_COLUMNS = (
    "source",
    "level",
    "title",
    "solver",
    "kind",
    "env_id",
    "episode",
    "solved",
    "status",
    "pushes",
    "moves",
    "seconds",
    "env_steps",
    "nodes",
)
RESULTS_NAME = "results.csv"
PLOT_NAME = "solve_rate.png"
ENV_IDS = ("Sokoban-Push-v0", "Sokoban-Macro-v0", "Sokoban-Move-v0")


@dataclass(frozen=True)
class BenchConfig:
    """What ``run_benchmark`` runs and where it writes.

    Attributes:
        levels: a level source (pack name, file or directory, with an optional ``:A-B``).
        planners: planner registry names (see ``planners.available()``).
        agents: paths of saved SB3 models (``.zip``) or RLlib checkpoint folders.
        policy: a saved Push-env model (``.zip`` or ``pretrained:NAME``) guiding the
            policy-guided planners "lts" and "phs"; required when they are listed.
        time_limit: seconds per level for each planner.
        episodes_per_level: agent episodes on each level.
        max_steps: agent step budget per episode (None: the env id's registered limit).
        jobs: worker processes for the planners (1: run in this process); with ``ray``
            ("local"), the CPUs of the local Ray.
        ray: run the planners on Ray: "local" starts a local Ray, "auto" joins the running
            cluster, or a cluster address (None: local processes).
        resume: continue an existing ``results.csv``: keep its complete rows and skip them.
        out: output directory (created if missing).
        overwrite: replace an existing ``results.csv``.
        agent_env: env id for every agent, instead of the sidecar or the model's spaces.
        symmetric: play every agent through all symmetries of the board at once, its
            log-probabilities averaged (``agents.symmetry.SymmetryAveraged``).
        on_repeat: what every agent does on a board it has met before in the episode
            (``agents.repeat.RepeatAware``: "sample" or "untried"); None plays greedily
            throughout, so a deterministic agent that meets a board twice walks a cycle.
            With ``episodes_per_level`` above 1 agents sample every step and the rule has
            nothing to change.
        deadlock_search: play every agent with the env's ``deadlock_search`` at this budget
            (the actions a bounded search proves lose masked; 0: as the agent's sidecar says).
        seed: seed of the agents' action sampling and env resets.
        plot: write ``solve_rate.png`` (needs the ``plot`` extra).
        quiet: no per-run lines on stderr.
        record: keep replays of the first N levels for every planner and agent (solved runs,
            first episode) in ``replays/`` and an ``index.html`` showing them side by side.
        json: print the summary as one JSON object (``agents.bench_report.summary_rows``)
            instead of the table, and no per-run lines.
    """

    levels: str
    planners: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    policy: str | None = None
    time_limit: float = 10.0
    episodes_per_level: int = 1
    max_steps: int | None = None
    jobs: int | None = None
    ray: str | None = None
    resume: bool = False
    out: str | Path = "bench"
    overwrite: bool = False
    agent_env: str | None = None
    symmetric: bool = False
    on_repeat: str | None = None
    deadlock_search: int = 0
    seed: int = 0
    plot: bool = True
    quiet: bool = False
    record: int = 0
    json: bool = False


# -- running ------------------------------------------------------------------------------------


_WARMUP_LEVEL = "#####\n#@$.#\n#####"


@functools.cache
def _policy_options(path: str) -> dict[str, Any]:
    """Options of "lts"/"phs" guided by the model at ``path`` (loaded once per process)."""
    from agents.models import load_model
    from agents.policy_search import model_policy, push_frame

    model = load_model(path)[0]
    return {"policy": model_policy(model), **push_frame(model)}


def _planner_options(name: str, policy: str | None) -> dict[str, Any]:
    """Options a planner runs with in the benchmark: a policy for the policy-guided ones."""
    from agents.policy_search import POLICY_PLANNERS

    if name in POLICY_PLANNERS and policy is not None:
        return _policy_options(policy)
    return {}


@functools.cache
def _warm_up_planner(name: str, policy: str | None = None) -> None:
    """Solve a one-push level once per process, so compile and cache loading are not timed."""
    from planners import solve

    solve(_WARMUP_LEVEL, planner=name, **_planner_options(name, policy))


def _run_planner(time_limit: float, policy: str | None, payload: tuple[str, str]) -> dict[str, Any]:
    """One planner on one level, ``(planner name, XSB text)`` (a task); its CSV fields.

    ``policy`` is the model path guiding "lts" and "phs" (None when neither runs).
    """
    from planners import SearchLimits, solve

    name, text = payload
    options = _planner_options(name, policy)
    level = Level.from_xsb(text)
    if "obs_size" in options:
        height, width = options["obs_size"]
        if level.height > height or level.width > width:
            return {**_EMPTY_RESULT, "status": "does_not_fit", "lurd": ""}
    _warm_up_planner(name, policy)
    res = solve(level, planner=name, limits=SearchLimits(max_seconds=time_limit), **options)
    return {
        "solved": res.solved,
        "status": res.status,
        "pushes": res.pushes if res.solved else "",
        "moves": res.moves if res.solved else "",
        "seconds": round(res.seconds, 6),
        "env_steps": "",
        "nodes": res.nodes,
        "lurd": res.lurd if res.solved else "",  # for --record; not a CSV column
    }


def _planner_rows(
    config: BenchConfig, items: list[tuple[int, Level]], done: set[tuple[str, int, int]]
) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(planner, level number, result) for every planner and level not ``done``, as they finish.

    A level whose every attempt raised or lost its worker gets status "error: <text>".
    """
    tasks = [
        ((name, number), (name, level.to_xsb(with_title=False)))
        for name in config.planners
        for number, level in items
        if (name, number, 0) not in done
    ]
    backend = Backend(jobs=config.jobs, ray=config.ray)
    task = functools.partial(_run_planner, config.time_limit, config.policy)
    with closing(run(task, tasks, backend, total=len(tasks))) as outcomes:
        for outcome in outcomes:
            name, number = outcome.key
            if outcome.ok:
                yield name, number, outcome.value
            else:
                yield name, number, {**_EMPTY_RESULT, "status": f"error: {outcome.error}"}


_EMPTY_RESULT = {
    "solved": False,
    "status": "",
    "pushes": "",
    "moves": "",
    "seconds": 0.0,
    "env_steps": "",
    "nodes": "",
}


def _make_agent_env(agent: LoadedAgent, levels: list[Level], max_steps: int | None) -> Any:
    import gymnasium as gym

    import soko_gym  # noqa: F401  (registers the env ids)

    spec = gym.spec(agent.env_id)
    steps = max_steps if max_steps is not None else spec.max_episode_steps
    return gym.make(
        agent.env_id,
        levels=levels,
        level_order="sequential",
        max_episode_steps=steps,
        disable_env_checker=True,
        **agent.env_kwargs,
    )


def play_episode(
    agent: LoadedAgent, env: Any, level: Level, level_index: int, deterministic: bool, seed: int
) -> dict[str, Any]:
    """One agent episode on ``env``'s level ``level_index``; the agent's part of a CSV row.

    The LURD of the episode is the concatenation of ``info["last_lurd"]``; a solved episode
    counts only when ``soko_gym.levels.verify`` accepts that LURD on ``level``.
    """
    from soko_gym.levels import verify

    start = time.perf_counter()
    obs, info = env.reset(seed=seed, options={"level_index": level_index})
    steps = 0
    parts: list[str] = []
    status = "step_limit"
    state: Any = None  # a policy's memory (agents.repeat), passed back each step
    while True:
        kwargs: dict[str, Any] = {"state": state, "episode_start": np.array([steps == 0])}
        if agent.masked:
            from sb3_contrib.common.maskable.utils import get_action_masks

            mask = get_action_masks(env)
            if not mask.any():
                status = "stuck"  # no legal action left (push and macro envs)
                break
            kwargs["action_masks"] = mask
        action, state = agent.model.predict(obs, deterministic=deterministic, **kwargs)
        obs, _, terminated, truncated, info = env.step(int(action))
        steps += 1
        parts.append(info.get("last_lurd", ""))
        if terminated or truncated:
            if info.get("solved"):
                status = "solved"
            elif info.get("deadlock"):
                status = "deadlock"
            break
    seconds = time.perf_counter() - start
    solved = status == "solved"
    pushes: int | str = ""
    moves: int | str = ""
    if solved:
        check = verify(level, "".join(parts))
        if check.ok:
            pushes, moves = check.pushes, check.moves
        else:
            solved, status = False, "verify_failed"
    return {
        "solved": solved,
        "status": status,
        "pushes": pushes,
        "moves": moves,
        "seconds": round(seconds, 6),
        "env_steps": steps,
        "nodes": "",
        "lurd": "".join(parts) if solved else "",  # for --record; not a CSV column
    }


def _warm_up_agent(agent: LoadedAgent, env: Any) -> None:
    """One untimed prediction, so torch's first-call overhead is not in the first episode."""
    obs, _ = env.reset(options={"level_index": 0})
    kwargs: dict[str, Any] = {}
    if agent.masked:
        kwargs["action_masks"] = env.get_wrapper_attr("action_masks")()
    agent.model.predict(obs, deterministic=True, **kwargs)


def _agent_rows(
    config: BenchConfig,
    agents: list[LoadedAgent],
    items: list[tuple[int, Level]],
    done: set[tuple[str, int, int]],
) -> Iterator[tuple[str, str, int, int, dict[str, Any]]]:
    """(agent path, env id, level number, episode, result) for every agent, level, episode."""
    from soko_gym.levels.frame import level_fits

    deterministic = config.episodes_per_level == 1
    for path, agent in zip(config.agents, agents, strict=True):
        if not deterministic:
            agent.model.set_random_seed(config.seed)
        size = agent.env_kwargs.get("obs_size")
        if isinstance(size, int):
            size = (size, size)
        fits = [(n, lv) for n, lv in items if size is None or level_fits(lv, size)]
        env = _make_agent_env(agent, [lv for _, lv in fits], config.max_steps) if fits else None
        index_of = {n: i for i, (n, _) in enumerate(fits)}
        if env is not None:
            _warm_up_agent(agent, env)
        try:
            for number, level in items:
                for episode in range(config.episodes_per_level):
                    if (path, number, episode) in done:
                        continue
                    if number not in index_of:
                        res = {
                            "solved": False,
                            "status": "does_not_fit",
                            "pushes": "",
                            "moves": "",
                            "seconds": 0.0,
                            "env_steps": 0,
                            "nodes": "",
                        }
                    else:
                        seed = config.seed + 1000 * episode + number
                        res = play_episode(agent, env, level, index_of[number], deterministic, seed)
                    yield path, agent.env_id, number, episode, res
        finally:
            if env is not None:
                env.close()


def _check_config(config: BenchConfig) -> None:
    from planners import available

    known = available()
    unknown = [p for p in config.planners if p not in known]
    if unknown:
        raise ValueError(f"unknown planner(s) {unknown}; available: {', '.join(known)}")
    if not config.planners and not config.agents:
        raise ValueError("nothing to run: give --planners and/or --agents")
    from agents.policy_search import POLICY_PLANNERS

    guided = [p for p in config.planners if p in POLICY_PLANNERS]
    if guided and config.policy is None:
        raise ValueError(
            f"--planners {','.join(guided)} need --policy MODEL (a saved Push-env model)"
        )
    if config.policy is not None:
        if not guided:
            raise ValueError(f"--policy is only used by the planners {', '.join(POLICY_PLANNERS)}")
        if not resolve(config.policy).exists():
            raise ValueError(f"--policy model {config.policy} not found")
        _policy_options(config.policy)  # not a Push-env model: ValueError now
    Backend(jobs=config.jobs, ray=config.ray)  # a bad --jobs or --ray: ValueError now
    if config.resume and config.overwrite:
        raise ValueError("--resume and --overwrite exclude each other")
    if config.on_repeat is not None and config.on_repeat not in RULES:
        raise ValueError(f"--on-repeat must be one of {', '.join(RULES)}, got {config.on_repeat!r}")
    if config.episodes_per_level < 1:
        raise ValueError(
            f"--episodes-per-level must be at least 1, got {config.episodes_per_level}"
        )
    if config.time_limit <= 0:
        raise ValueError(f"--time-limit must be positive, got {config.time_limit}")
    if config.record < 0:
        raise ValueError(f"--record must be at least 0, got {config.record}")
    if isinstance(config.deadlock_search, bool) or config.deadlock_search < 0:
        raise ValueError(f"--deadlock-search must be at least 0, got {config.deadlock_search}")
    if config.max_steps is not None and config.max_steps < 1:
        raise ValueError(f"--max-steps must be at least 1, got {config.max_steps}")
    if config.agent_env is not None and config.agent_env.replace("-Gen", "") not in ENV_IDS:
        raise ValueError(f"--agent-env must be one of {ENV_IDS}, got {config.agent_env!r}")
    for path in config.agents:
        if not resolve(path).exists():  # a .zip, an RLlib checkpoint folder, pretrained:NAME
            raise ValueError(f"agent model {path} not found")
    if config.plot:
        require_matplotlib()


def run_benchmark(config: BenchConfig) -> list[dict[str, Any]]:
    """Run every planner and agent of ``config`` on its levels; write the CSV, table and plot.

    Returns:
        The CSV rows as dicts (also those written before a Ctrl-C, which is re-raised after
        the summary and plot of the partial results).

    Raises:
        ValueError: unknown planners, missing models, bad budgets, or an existing
            ``results.csv`` without ``overwrite``.
    """
    _check_config(config)
    out = Path(config.out)
    csv_path = out / RESULTS_NAME
    if csv_path.exists() and not (config.overwrite or config.resume):
        raise ValueError(
            f"{csv_path} exists; pass --resume to continue it or --overwrite to replace it"
        )
    agents = [load_agent(path, config.agent_env) for path in config.agents]  # errors come first
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
            for name, number, res in _planner_rows(config, items, done):
                emit(name, "planner", "", number, 0, res)
            for path, env_id, number, episode, res in _agent_rows(config, agents, items, done):
                emit(path, "agent", env_id, number, episode, res)
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


def _resumed_rows(csv_path: Path, source: str) -> list[dict[str, Any]]:
    """The complete rows of an earlier run of the same source (``--resume``).

    A row cut short by a kill or an "error" row is dropped, so its run is done again; rows of
    another source are a ValueError (resume continues the same benchmark).
    """
    with csv_path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != CSV_COLUMNS:
            raise ValueError(f"{csv_path} is not a results.csv of soko bench (its columns differ)")
        kept = []
        for row in reader:
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
                for column in ("pushes", "moves", "env_steps", "nodes"):
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


# -- command line -------------------------------------------------------------------------------


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(x.strip() for x in (text or "").split(",") if x.strip())


def add_bench_parser(sub: Any, source_help: str) -> None:
    """Add the ``bench`` subcommand to the ``soko`` argument parser."""
    bench = sub.add_parser(
        "bench",
        help="planners and RL agents on the same levels: results.csv, summary, solve_rate.png",
        description="Run planners (through planners.solve) and saved SB3 agents (through the "
        "env) on the same levels; see agents/benchmark.py for the outputs.",
    )
    bench.add_argument("--levels", required=True, metavar="SOURCE", help=source_help)
    bench.add_argument(
        "--planners", default="", help="comma-separated planner names (see `soko planners`)"
    )
    bench.add_argument(
        "--agents",
        default="",
        help=(
            "comma-separated saved models (model.zip, or rllib-ppo's model/ folder, ...) or "
            "pretrained:NAME, an agent shipped with the package (agents.zoo.available())"
        ),
    )
    bench.add_argument(
        "--policy",
        default=None,
        metavar="MODEL",
        help="saved Push-env model (model.zip or pretrained:NAME) guiding --planners lts,phs",
    )
    bench.add_argument(
        "--time-limit",
        type=float,
        default=10.0,
        metavar="S",
        help="planner seconds per level (default 10)",
    )
    bench.add_argument(
        "--episodes-per-level",
        type=int,
        default=1,
        metavar="N",
        help="agent episodes per level (default 1: greedy actions; more: sampled actions)",
    )
    bench.add_argument(
        "--max-steps",
        type=int,
        default=None,
        metavar="N",
        help="agent step budget per episode (default: the env id's limit, e.g. 200 pushes)",
    )
    add_backend_options(bench, what="planners (agents run in this process)")
    bench.add_argument(
        "--agent-env",
        default=None,
        metavar="ENV_ID",
        help="env id of the agents when no sidecar <model>.json says it",
    )
    bench.add_argument(
        "--symmetric",
        action="store_true",
        help="agents play every symmetry of the board at once, their log-probabilities "
        "averaged (8 forward passes a step on a square frame)",
    )
    bench.add_argument(
        "--on-repeat",
        choices=RULES,
        default=None,
        help="what agents do on a board met before in the episode: sample from the policy, or "
        "take its most likely action not yet tried there (default: greedy throughout)",
    )
    bench.add_argument(
        "--deadlock-search",
        type=int,
        default=0,
        metavar="N",
        help="agents play with the env's deadlock_search=N: the actions a bounded search of N "
        "positions proves lose the level are masked (default 0: as the agent was trained)",
    )
    bench.add_argument("--seed", type=int, default=0, help="seed of agent sampling (default 0)")
    bench.add_argument("--out", required=True, metavar="DIR", help="output directory")
    bench.add_argument(
        "--overwrite", action="store_true", help="replace an existing DIR/results.csv"
    )
    bench.add_argument(
        "--resume",
        action="store_true",
        help="continue an existing DIR/results.csv: keep its rows, run only what is missing",
    )
    bench.add_argument("--no-plot", action="store_true", help="do not write solve_rate.png")
    bench.add_argument("--quiet", action="store_true", help="no per-run lines on stderr")
    bench.add_argument(
        "--json", action="store_true", help="print the summary as one JSON object, per solver"
    )
    bench.add_argument(
        "--record",
        type=int,
        default=0,
        metavar="N",
        help="keep replays of the first N levels for every planner and agent, side by side in "
        "DIR/index.html",
    )
    bench.set_defaults(func=run_bench_command)


def run_bench_command(args: argparse.Namespace) -> int:
    """Run ``soko bench``; returns the exit code (0 done, 130 on Ctrl-C)."""
    config = BenchConfig(
        levels=args.levels,
        planners=_names(args.planners),
        agents=_names(args.agents),
        policy=args.policy,
        time_limit=args.time_limit,
        episodes_per_level=args.episodes_per_level,
        max_steps=args.max_steps,
        jobs=args.jobs,
        ray=args.ray,
        resume=args.resume,
        out=args.out,
        overwrite=args.overwrite,
        agent_env=args.agent_env,
        symmetric=args.symmetric,
        on_repeat=args.on_repeat,
        deadlock_search=args.deadlock_search,
        seed=args.seed,
        plot=not args.no_plot,
        quiet=args.quiet,
        json=args.json,
        record=args.record,
    )
    try:
        run_benchmark(config)
    except ImportError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted; rows so far are in {Path(args.out) / RESULTS_NAME}", file=sys.stderr)
        return 130
    print(f"wrote {Path(args.out) / RESULTS_NAME}", file=sys.stderr)
    return 0
