"""Why a learned agent fails: where each unsolved episode was lost, and whether a test saw it.

Each agent plays the first ``--levels`` levels of a Boxoban set greedily (at most ``--budget``
actions, its own env arguments; ``--symmetric`` and ``--on-repeat`` play it as
``boxoban_protocol.py`` does). For every episode that does not solve its level, the
positions the episode went through are rebuilt from the env and A* (``--time-limit`` seconds
each) decides when the level was lost: the first position with no solution, found by bisection
(a lost position stays lost). Each failure gets one cause:

- ``simple deadlock``: the losing action pushed a box onto a dead square or froze it off a
  goal (what ``deadlock_termination`` ends and ``deadlock_mask`` masks);
- ``other deadlock``: the losing action left a position A* proves unsolvable that the simple
  tests pass (boxes competing for goals, closed areas ...): only a search sees it;
- ``still solvable``: the episode ran out of actions in a solvable position (looping or
  wandering);
- ``unknown``: A* ran out of time on a position that decides it.

Prints a markdown table (counts and the median action at which other deadlocks were made) and
writes ``--out/<agent>-<set>-failures.csv`` (level, cause, lost_at, actions; default
``benchmarks/results/agents``, the folder ``benchmarks/RESULTS.md`` cites). Run it from the
repository root: ``--out`` is relative to the working folder.

    python benchmarks/agent_failures.py --agents pretrained:boxoban-push,pretrained:boxoban-move
        [--set unfiltered-test] [--levels 1000] [--budget 120] [--time-limit 10] [--out DIR]
        [--symmetric] [--on-repeat sample|untried] [--deadlock-search N] [--seed S]
"""

from __future__ import annotations

import argparse
import csv
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium as gym
from boxoban_protocol import SETS  # the same sets, from the script beside this one

import planners
from agents.playing.loop import End, Recorder, Step
from agents.playing.loop import play as play_levels
from agents.playing.models import load_agent
from agents.playing.repeat import RULES, repeat_aware
from agents.playing.symmetry import symmetry_averaged
from soko_gym.levels import Level, load_levels
from soko_gym.levels.xsb import parse_levels
from soko_gym.provenance import machine_line

CAUSES = ("simple deadlock", "other deadlock", "still solvable", "unknown")


class PositionsRecorder(Recorder):
    """What the diagnosis needs of an episode: every position and whether it was a simple deadlock.

    Position 0 is the start; position ``i`` follows action ``i`` (read from the env's text
    render, so ``env`` is the single env the episode is played in).
    """

    def __init__(self, env: Any, level: Level) -> None:
        self.env = env
        self.positions = [level]
        self.simple = [False]
        self.solved = False

    def step(self, step: Step) -> None:
        """The position after the action, and whether it is a simple deadlock."""
        self.positions.append(parse_levels(self.env.render())[0])
        self.simple.append(bool(step.info["deadlock"][0]))

    def end(self, end: End) -> None:
        """Whether the episode solved the level."""
        self.solved = bool(end.info["solved"][end.slot])


def play(agent: Any, level: Level, budget: int) -> tuple[bool, list[Level], list[bool]]:
    """One episode: (solved, position after each action, simple deadlock per action).

    Played greedily by THE play loop (``agents.playing.loop.play``) in a single env (text
    renders), with a repeat rule's memory passed back when the agent has one. Position 0 is
    the start; position ``i`` follows action ``i``.
    """
    kwargs = {**agent.env_kwargs, "deadlock_termination": True}
    env = gym.make(
        agent.env_id, levels=[level], render_mode="ansi", max_episode_steps=budget, **kwargs
    )
    recorder = PositionsRecorder(env, level)
    try:
        play_levels(agent.model, env, [0], recorder, seed=0)
    finally:
        env.close()
    return recorder.solved, recorder.positions, recorder.simple


def solvable(level: Level, seconds: float) -> bool | None:
    """Whether A* finds a solution (None: it ran out of time)."""
    result = planners.solve(level, "astar", planners.SearchLimits(max_seconds=seconds))
    if result.solved:
        return True
    return False if result.status == "unsolvable" else None


def diagnose(positions: list[Level], simple: list[bool], seconds: float) -> tuple[str, int]:
    """(cause, action that lost the level or -1) of an unsolved episode's positions."""
    last = solvable(positions[-1], seconds)
    if last is None:
        return "unknown", -1
    if last:
        return "still solvable", -1
    lo, hi = 0, len(positions) - 1  # positions[lo] solvable, positions[hi] lost
    while hi - lo > 1:
        mid = (lo + hi) // 2
        verdict = solvable(positions[mid], seconds)
        if verdict is None:
            return "unknown", -1
        if verdict:
            lo = mid
        else:
            hi = mid
    return ("simple deadlock" if simple[hi] else "other deadlock"), hi


def main() -> None:
    """Play, diagnose, write the CSVs and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", required=True, help="comma-separated models or pretrained:NAME")
    parser.add_argument("--set", default="unfiltered-test", help=f"one of {', '.join(SETS)}")
    parser.add_argument("--levels", type=int, default=1000, help="first N levels of the set")
    parser.add_argument("--budget", type=int, default=120, help="actions per episode")
    parser.add_argument("--time-limit", type=float, default=10.0, help="A* seconds per position")
    parser.add_argument("--out", default="benchmarks/results/agents", help="CSV folder")
    parser.add_argument(
        "--symmetric", action="store_true", help="play through the board's symmetries, averaged"
    )
    parser.add_argument(
        "--on-repeat",
        choices=RULES,
        default=None,
        help="play with a repeat rule (agents.playing.repeat)",
    )
    parser.add_argument(
        "--deadlock-search",
        type=int,
        default=0,
        metavar="N",
        help="play with the env's deadlock_search=N (the actions a push search of at most N "
        "positions proves lose masked)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of --on-repeat's sampling")
    args = parser.parse_args()
    if args.set not in SETS:
        raise ValueError(f"--set: unknown {args.set!r}; known: {', '.join(SETS)}")
    if args.levels < 1 or args.budget < 1 or not args.time_limit > 0:
        raise ValueError("--levels and --budget must be at least 1, --time-limit above 0")
    if args.deadlock_search < 0:
        raise ValueError(f"--deadlock-search must be at least 0, got {args.deadlock_search}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    levels = load_levels(SETS[args.set])[: args.levels]
    print(f"{machine_line()}\n")
    print(f"| agent | levels | unsolved | {' | '.join(CAUSES)} | other deadlocks: median action |")
    print("|---|---:|---:|" + "---:|" * (len(CAUSES) + 1))
    for spec in [a for a in args.agents.split(",") if a]:
        agent = load_agent(spec)
        name = spec.split(":", 1)[1] if ":" in spec else Path(spec).parent.name
        if args.deadlock_search > 0:
            agent.env_kwargs["deadlock_search"] = args.deadlock_search
            name += f"-dsearch{args.deadlock_search}"
        if args.symmetric:
            agent = symmetry_averaged(agent)
            name += "-sym"
        if args.on_repeat is not None:
            agent = repeat_aware(agent, args.on_repeat, args.seed)
            name += f"-repeat-{args.on_repeat}"
        rows = []
        for i, level in enumerate(levels):
            solved, positions, simple = play(agent, level, args.budget)
            if solved:
                continue
            cause, lost_at = diagnose(positions, simple, args.time_limit)
            rows.append(
                {"level": i + 1, "cause": cause, "lost_at": lost_at, "actions": len(positions) - 1}
            )
        with (out / f"{name}-{args.set}-failures.csv").open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=("level", "cause", "lost_at", "actions"))
            writer.writeheader()
            writer.writerows(rows)
        counts = Counter(r["cause"] for r in rows)
        other = [r["lost_at"] for r in rows if r["cause"] == "other deadlock"]
        median = f"{statistics.median(other):g}" if other else "-"
        cells = " | ".join(str(counts[c]) for c in CAUSES)
        print(f"| {spec} | {len(levels)} | {len(rows)} | {cells} | {median} |", flush=True)


if __name__ == "__main__":
    main()
