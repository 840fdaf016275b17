"""Learned agents on Boxoban under two protocols: solve rate against the step budget.

Each agent plays every level of each set once, greedily (or, with ``--on-repeat``, greedily
until it meets a board it has seen before in the episode: ``agents.playing.repeat``), for at most
``--budget`` actions (default 120). Per level it records whether the episode solved the level,
its actions, pushes and player moves (walks included), written to
``--out/<agent>-<set>.csv`` (default ``benchmarks/results/agents``, the folder
``benchmarks/RESULTS.md`` cites). Two protocols read the same episodes:

- **Push protocol** (this project's): solved within B pushes (a Push-env action is one push;
  the walk to it is free);
- **Boxoban protocol** (the published setting, Guez et al. 2019): solved within B player steps
  (moves), as an agent playing ``Sokoban-Move-v0`` for 120 steps. A Push-env agent's episode
  counts when its pushes and walks together fit in B steps: the same play in the Move env.

Prints a markdown table (solve rates at B = 120 for both protocols) and writes
``solve_rate.png`` (solve rate against B, both protocols) when matplotlib is installed.

    python benchmarks/boxoban_protocol.py --agents pretrained:boxoban-push,planner:astar
        [--sets unfiltered-test,...] [--levels 1000] [--budget 120] [--out DIR]
        [--deadlock-mask] [--deadlock-search N] [--symmetric] [--on-repeat sample|untried]
        [--seed S]

``planner:NAME`` plays a planner through ``agents.expert.PlannerPolicy`` in the Push env, the
expert the agents learn from, as a reference row. A Move-env agent (``pretrained:boxoban-move``)
plays B player steps: the Boxoban protocol itself; the Push protocol does not apply to it
("n/a": its budget is steps, not pushes).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path
from typing import Any

import numpy as np

import soko_gym
from agents.expert import PlannerPolicy
from agents.playing.loop import End, Recorder
from agents.playing.loop import play as play_levels
from agents.playing.models import LoadedAgent, load_agent
from agents.playing.repeat import RULES, repeat_aware
from agents.playing.symmetry import symmetry_averaged
from soko_gym.levels import load_levels
from soko_gym.provenance import machine_line

SETS = {
    "unfiltered-test": "boxoban-unfiltered-test",
    "medium-valid": "boxoban-medium-valid",
    "hard": "boxoban-hard",
    "unfiltered-valid": "boxoban-unfiltered-valid",  # for choosing play options, not reporting
}
DEFAULT_SETS = ("unfiltered-test", "medium-valid", "hard")
COLUMNS = ("level", "solved", "actions", "pushes", "moves")


class ProtocolRecorder(Recorder):
    """What the protocols read of each level's episode: solved, actions, pushes and moves."""

    def __init__(self, n_levels: int) -> None:
        self.rows: list[dict[str, int]] = [{} for _ in range(n_levels)]

    def end(self, end: End) -> None:
        """The level's row (levels numbered from 1)."""
        self.rows[end.level] = {
            "level": end.level + 1,
            "solved": int(bool(end.info["solved"][end.slot])),
            "actions": end.length,
            "pushes": int(end.info["pushes"][end.slot]),
            "moves": int(end.info["moves"][end.slot]),
        }


def play(agent: Any, levels: list[Any], budget: int, seed: int = 0) -> list[dict[str, int]]:
    """One episode of ``agent`` per level, at most ``budget`` actions: a row per level.

    Played by THE play loop (``agents.playing.loop.play``) on a vector env of up to 100 levels
    at a time. Greedy unless the agent plays a repeat rule (``agents.playing.repeat``), whose
    memory is passed back step by step and cleared at each episode's start. ``seed`` seeds the
    env's resets: a slot whose episode has ended plays on (unrecorded) in a level the env
    draws, and with a rule that samples, those steps draw from the agent's generator too, so
    the same seed must give the same levels for the recorded play to repeat.
    """
    venv = soko_gym.make_vec(
        agent.env_id,
        min(100, len(levels)),
        levels=levels,
        max_episode_steps=budget,
        **agent.env_kwargs,
    )
    recorder = ProtocolRecorder(len(levels))
    try:
        play_levels(agent.model, venv, range(len(levels)), recorder, seed=seed)
    finally:
        venv.close()
    return recorder.rows


def is_move(agent: Any) -> bool:
    """Whether ``agent`` acts in the Move env (one action = one player step)."""
    return str(agent.env_id).startswith("Sokoban-Move")


def solve_rate(rows: list[dict[str, int]], key: str, budget: int) -> float:
    """Share of levels solved with at most ``budget`` of ``key`` (pushes or moves)."""
    return sum(r["solved"] and r[key] <= budget for r in rows) / len(rows)


def main() -> None:
    """Evaluate, write the CSVs, print the table and draw the curves."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", required=True, help="comma-separated models or pretrained:NAME")
    parser.add_argument(
        "--sets",
        default=",".join(DEFAULT_SETS),
        help=f"of {', '.join(SETS)} (default: {', '.join(DEFAULT_SETS)})",
    )
    parser.add_argument("--levels", type=int, default=1000, help="first N levels of each set")
    parser.add_argument("--budget", type=int, default=120, help="actions per episode")
    parser.add_argument("--out", default="benchmarks/results/agents", help="CSV and PNG folder")
    parser.add_argument(
        "--deadlock-mask",
        action="store_true",
        help="play with the env's deadlock_mask (pushes into simple deadlocks masked); "
        "the CSVs are named <agent>-dmask-<set>.csv",
    )
    parser.add_argument(
        "--deadlock-search",
        type=int,
        default=0,
        metavar="N",
        help="play with the env's deadlock_search=N (the actions a search of at most N "
        "positions proves lose masked); the CSVs are named <agent>-dsearchN-<set>.csv",
    )
    parser.add_argument(
        "--symmetric",
        action="store_true",
        help="play each model through every symmetry of the board at once, its "
        "log-probabilities averaged (agents.playing.symmetry.SymmetryAveraged; 8 forward passes "
        "a step); the CSVs are named <agent>-sym-<set>.csv",
    )
    parser.add_argument(
        "--on-repeat",
        choices=RULES,
        default=None,
        help="on a board met before in the episode, sample from the policy or take its most "
        "likely action not yet tried there (agents.playing.repeat.RepeatAware); the CSVs are named "
        "<agent>-repeat-<rule>-<set>.csv",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of --on-repeat's sampling and of the env"
    )
    args = parser.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        raise ValueError(f"--sets: unknown {unknown}; known: {', '.join(SETS)}")
    if args.levels < 1 or args.budget < 1:
        raise ValueError("--levels and --budget must be at least 1")
    if args.deadlock_search < 0:
        raise ValueError(f"--deadlock-search must be at least 0, got {args.deadlock_search}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[tuple[str, str], list[dict[str, int]]] = {}
    moves: dict[str, bool] = {}  # agent name -> plays the Move env
    print(f"{machine_line()}\n")
    print("| agent | env | set | levels | Push protocol: solved in <= 120 pushes | "
          "Boxoban protocol: solved in <= 120 steps |")  # fmt: skip
    print("|---|---|---|---:|---:|---:|")
    for spec in [a for a in args.agents.split(",") if a]:
        if spec.startswith("planner:"):
            expert = PlannerPolicy(spec.split(":", 1)[1], limits=10.0, action_space="push")
            agent = LoadedAgent(expert, "Sokoban-Push-v0", {"obs_size": (10, 10)})
        else:
            agent = load_agent(spec)
        name = spec.split(":", 1)[1] if ":" in spec else Path(spec).parent.name
        if args.deadlock_mask:
            agent.env_kwargs["deadlock_mask"] = True
            name += "-dmask"
        if args.deadlock_search > 0:
            agent.env_kwargs["deadlock_search"] = args.deadlock_search
            name += f"-dsearch{args.deadlock_search}"
        if args.symmetric and not spec.startswith("planner:"):
            agent = symmetry_averaged(agent)
            name += "-sym"
        if args.on_repeat is not None and not spec.startswith("planner:"):
            agent = repeat_aware(agent, args.on_repeat, args.seed)
            name += f"-repeat-{args.on_repeat}"
        for set_name in sets:
            levels = load_levels(SETS[set_name])[: args.levels]
            if args.on_repeat is not None and hasattr(agent.model, "set_random_seed"):
                agent.model.set_random_seed(args.seed)  # each set's play from the same seed
            rows = play(agent, levels, args.budget, args.seed)
            results[(name, set_name)] = rows
            with (out / f"{name}-{set_name}.csv").open("w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=COLUMNS)
                writer.writeheader()
                writer.writerows(rows)
            b = min(120, args.budget)
            push = "n/a" if is_move(agent) else f"{solve_rate(rows, 'pushes', b):.1%}"
            print(
                f"| {spec} | {agent.env_id} | {set_name} | {len(rows)} | "
                f"{push} | {solve_rate(rows, 'moves', b):.1%} |",
                flush=True,
            )
            moves[name] = is_move(agent)
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    budgets = np.arange(0, args.budget + 1)
    for ax, key, title in ((axes[0], "pushes", "Push protocol"), (axes[1], "moves", "Boxoban")):
        for (name, set_name), rows in results.items():
            if key == "pushes" and moves[name]:
                continue  # a Move-env agent's budget is steps
            ax.plot(
                budgets,
                [solve_rate(rows, key, int(b)) for b in budgets],
                label=f"{name}, {set_name}",
            )
        ax.set_xlabel(f"budget ({key})")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("solved")
    for ax in axes:
        if ax.get_legend_handles_labels()[0]:  # the Push panel is empty for Move agents only
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "solve_rate.png", dpi=100)
    print(f"\nwritten: {out}/*.csv, {out / 'solve_rate.png'}")


if __name__ == "__main__":
    main()
