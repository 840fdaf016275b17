"""``soko bench``: its flags (``add_bench_parser``) and the command (``run_bench_command``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agents.benchmark.config import RESULTS_NAME, BenchConfig
from agents.benchmark.run import run_benchmark
from agents.playing.repeat import RULES
from soko_gym.execution import add_backend_options


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(x.strip() for x in (text or "").split(",") if x.strip())


def add_bench_parser(sub: Any, source_help: str) -> None:
    """Add the ``bench`` subcommand to the ``soko`` argument parser."""
    bench = sub.add_parser(
        "bench",
        help="planners and RL agents on the same levels: results.csv, summary, solve_rate.png",
        description="Run planners (through planners.solve) and saved SB3 agents (through the "
        "env) on the same levels; see agents/benchmark/run.py for the outputs.",
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
            "pretrained:NAME, an agent shipped with the package (agents.playing.zoo.available()), "
            "or text:MODULE:FUNCTION, a prompt -> reply callable (a language model) played in "
            "Sokoban-Text-v0"
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
    bench.add_argument(
        "--protocol",
        choices=("boxoban", "push"),
        default=None,
        help="instead of the benchmark: one greedy attempt per level, solved within 120 steps "
        "(boxoban: Sokoban-Move-v0, or a Push-env agent's pushes and walks) or 120 pushes (push); "
        "prints the rate with a 95%% bootstrap interval, writes DIR/protocol.csv "
        "(agents only; planner:NAME adds a planner as a reference)",
    )
    bench.set_defaults(func=run_bench_command)


def run_protocol_command(args: argparse.Namespace) -> int:
    """``soko bench --protocol``: the agents' rates with their intervals, and protocol.csv."""
    from agents.benchmark.protocol import PROTOCOL_NAME, format_protocol, run_protocol
    from soko_gym.levels import load_levels

    agents = _names(args.agents)
    if not agents:
        raise ValueError("--protocol needs --agents (planner:NAME adds a planner)")
    if _names(args.planners):
        raise ValueError("--protocol plays agents only; add a planner as --agents planner:NAME")
    out = Path(args.out)
    if (out / PROTOCOL_NAME).exists() and not args.overwrite:
        raise ValueError(f"{out / PROTOCOL_NAME} exists; pass --overwrite to replace it")
    results, _ = run_protocol(
        agents,
        load_levels(args.levels),
        args.protocol,
        out=out,
        seed=args.seed,
        symmetric=args.symmetric,
        on_repeat=args.on_repeat,
        deadlock_search=args.deadlock_search,
    )
    print(format_protocol(results, args.levels))
    print(f"wrote {out / PROTOCOL_NAME}", file=sys.stderr)
    return 0


def run_bench_command(args: argparse.Namespace) -> int:
    """Run ``soko bench``; returns the exit code (0 done, 130 on Ctrl-C)."""
    if args.protocol is not None:
        return run_protocol_command(args)
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
