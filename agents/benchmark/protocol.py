"""The Boxoban protocol and the Push protocol: one greedy attempt per level, a 95% interval.

``soko bench --protocol boxoban|push`` (and ``benchmarks/boxoban_protocol.py``) plays each agent
once per level, greedily, on a native vector env of up to 100 levels at a time:

- **boxoban** (the published setting, Guez et al. 2019): solved within 120 player steps. A
  Move-env agent plays ``Sokoban-Move-v0`` for 120 steps; a Push-env agent's episode counts when
  its pushes and the walks between them fit in 120 moves (the same play in the Move env).
- **push** (this project's): a Push-env agent solves within 120 pushes (a Push-env action is one
  push, the walk to it free). A Move-env agent has no push budget: refused.

The solve rate comes with a 95% bootstrap interval (``bootstrap_interval``: the levels
resampled with replacement, percentiles of the resampled rates). ``planner:NAME`` plays a
planner through ``agents.expert.PlannerPolicy`` in the Push env as a reference row. The network
alone is the protocol; ``symmetric``, ``on_repeat`` and ``deadlock_search`` are assisted play,
and their rows say so in ``play``.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.playing.loop import End, Recorder, play
from agents.playing.models import LoadedAgent, load_agent

PROTOCOLS = ("boxoban", "push")
BUDGET = 120  # steps (boxoban) or pushes (push) per level, as published
PROTOCOL_NAME = "protocol.csv"
LEVEL_COLUMNS = ("level", "solved", "actions", "pushes", "moves")  # ``play_levels``' rows
COLUMNS = ("solver", "env_id", "play", "title", *LEVEL_COLUMNS, *PROTOCOLS)


class _LevelRows(Recorder):
    """Each level's episode: solved (in the env, whatever it took), actions, pushes, moves."""

    def __init__(self, n_levels: int) -> None:
        self.rows: list[dict[str, int]] = [{} for _ in range(n_levels)]

    def end(self, end: End) -> None:
        self.rows[end.level] = {
            "level": end.level + 1,
            "solved": int(bool(end.info["solved"][end.slot])),
            "actions": end.length,
            "pushes": int(end.info["pushes"][end.slot]),
            "moves": int(end.info["moves"][end.slot]),
        }


def counted(row: dict[str, Any], protocol: str, budget: int = BUDGET) -> bool:
    """Whether a level's episode counts as solved under ``protocol`` (its moves or pushes)."""
    key = "moves" if protocol == "boxoban" else "pushes"
    return bool(row["solved"]) and int(row[key]) <= budget


def applies(env_id: str, protocol: str) -> bool:
    """Whether ``protocol`` can count an agent of ``env_id`` (a Move agent has no push budget)."""
    return not (protocol == "push" and str(env_id).startswith("Sokoban-Move"))


def play_levels(
    agent: LoadedAgent, levels: Sequence[Any], budget: int = BUDGET, seed: int = 0
) -> list[dict[str, int]]:
    """One greedy episode of ``agent`` per level, at most ``budget`` actions: a row per level.

    A repeat rule (``agents.playing.repeat``), if the agent plays one, breaks ties on boards met
    before; ``seed`` seeds the env's resets.
    """
    import soko_gym

    venv = soko_gym.make_vec(
        agent.env_id,
        min(100, len(levels)),
        levels=list(levels),
        max_episode_steps=budget,
        **agent.env_kwargs,
    )
    recorder = _LevelRows(len(levels))
    try:
        play(agent.model, venv, range(len(levels)), recorder, seed=seed, masked=agent.masked)
    finally:
        venv.close()
    return recorder.rows


def bootstrap_interval(
    outcomes: Sequence[int] | np.ndarray, *, samples: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """95% interval of the solve rate: percentiles 2.5 and 97.5 of resampled levels' rates."""
    x = np.asarray(outcomes, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("outcomes must be a non-empty vector of 0/1 per level")
    rng = np.random.default_rng(seed)
    rates = x[rng.integers(0, x.size, size=(samples, x.size))].mean(axis=1)
    low, high = np.percentile(rates, [2.5, 97.5])
    return float(low), float(high)


@dataclass(frozen=True)
class ProtocolResult:
    """One agent's figure under a protocol: the rate, its 95% interval, the levels."""

    solver: str
    protocol: str
    env_id: str
    play: str
    levels: int
    solved: int
    low: float
    high: float

    @property
    def rate(self) -> float:
        """Share of levels counted as solved."""
        return self.solved / self.levels


def load_protocol_agent(spec: str) -> LoadedAgent:
    """The agent ``spec`` names: a model, ``pretrained:NAME`` or ``planner:NAME``.

    ``planner:NAME`` plays the planner in the Push env; ``planner:NAME:move`` in the Move env.
    """
    if spec.startswith("planner:") and spec.endswith(":move"):
        from agents.expert import PlannerPolicy

        expert = PlannerPolicy(spec.split(":")[1], limits=10.0, action_space="move")
        return LoadedAgent(expert, "Sokoban-Move-v0", {"obs_size": (10, 10)})
    if spec.startswith("planner:"):
        from agents.expert import PlannerPolicy

        expert = PlannerPolicy(spec.split(":", 1)[1], limits=10.0, action_space="push")
        return LoadedAgent(expert, "Sokoban-Push-v0", {"obs_size": (10, 10)})
    return load_agent(spec)


def run_protocol(
    agents: Sequence[str],
    levels: Sequence[Any],
    protocols: Sequence[str] | str,
    *,
    out: str | Path | None = None,
    seed: int = 0,
    symmetric: bool = False,
    on_repeat: str | None = None,
    deadlock_search: int = 0,
) -> tuple[list[ProtocolResult], list[dict[str, Any]]]:
    """Play every agent once per level and count it under each of ``protocols``.

    ``levels`` are ``Level`` objects (their titles go in the rows). Returns the figures (one
    per agent and protocol that applies) and the rows (one per agent and level, ``COLUMNS``:
    ``solved`` is the env's verdict, each protocol's column its own, "" where it does not
    apply), also written to ``out/protocol.csv`` when ``out`` is given.

    Raises:
        ValueError: an unknown protocol, or a Move-env agent under the push protocol alone.
    """
    from agents.playing.repeat import repeat_aware
    from agents.playing.symmetry import symmetry_averaged

    protocols = (protocols,) if isinstance(protocols, str) else tuple(protocols)
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown or not protocols:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocols!r}")
    loaded = [load_protocol_agent(spec) for spec in agents]  # errors before any play
    for spec, agent in zip(agents, loaded, strict=True):
        if not any(applies(agent.env_id, p) for p in protocols):
            raise ValueError(
                f"{spec} plays {agent.env_id}: the push protocol counts pushes; "
                "use the boxoban protocol"
            )
    results = []
    table: list[dict[str, Any]] = []
    for spec, agent in zip(agents, loaded, strict=True):
        how = []
        if deadlock_search > 0:
            agent.env_kwargs["deadlock_search"] = deadlock_search
            how.append(f"deadlock_search={deadlock_search}")
        if symmetric and not spec.startswith("planner:"):
            agent = symmetry_averaged(agent)
            how.append("symmetric")
        if on_repeat is not None and not spec.startswith("planner:"):
            agent = repeat_aware(agent, on_repeat, seed)
            if hasattr(agent.model, "set_random_seed"):
                agent.model.set_random_seed(seed)
            how.append(f"on_repeat={on_repeat}")
        mode = "+".join(how) or "greedy"
        rows = play_levels(agent, levels, BUDGET, seed)
        verdicts = {
            p: [int(counted(r, p)) for r in rows] for p in protocols if applies(agent.env_id, p)
        }
        for p, outcomes in verdicts.items():
            low, high = bootstrap_interval(outcomes, seed=seed)
            results.append(
                ProtocolResult(spec, p, agent.env_id, mode, len(rows), sum(outcomes), low, high)
            )
        for i, (level, row) in enumerate(zip(levels, rows, strict=True)):
            entry = {"solver": spec, "env_id": agent.env_id, "play": mode}
            entry["title"] = getattr(level, "title", "")
            entry.update(row)
            entry.update({p: verdicts[p][i] if p in verdicts else "" for p in PROTOCOLS})
            table.append(entry)
    if out is not None:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / PROTOCOL_NAME).open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(table)
    return results, table


def format_protocol(results: Sequence[ProtocolResult], source: str) -> str:
    """The results as a markdown table (rate with its 95% bootstrap interval)."""
    lines = [
        f"{source}: one greedy attempt per level; boxoban: solved within {BUDGET} steps, push: "
        f"within {BUDGET} pushes",
        "",
        "| agent | protocol | env | play | levels | solved | rate | 95% interval |",
        "|---|---|---|---|---:|---:|---:|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.solver} | {r.protocol} | {r.env_id} | {r.play} | {r.levels} | {r.solved} | "
            f"{r.rate:.1%} | {r.low:.1%} - {r.high:.1%} |"
        )
    return "\n".join(lines)


__all__ = [
    "BUDGET",
    "COLUMNS",
    "PROTOCOLS",
    "ProtocolResult",
    "applies",
    "bootstrap_interval",
    "counted",
    "format_protocol",
    "load_protocol_agent",
    "play_levels",
    "run_protocol",
]
