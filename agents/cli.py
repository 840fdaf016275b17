"""The agents' ``soko`` subcommands: ``collect``, ``train``, ``bench`` and ``warmup``.

``soko_gym.cli`` finds ``add_parsers`` through the ``soko_gym.commands`` entry point
(``pyproject.toml``). Each subcommand's parser is built by the module that owns it; this module
only gathers them, so ``soko --help`` stays fast (torch, stable-baselines3 and minari load
inside the commands). ``warmup`` lives here because it compiles both the envs' and the
planners' kernels, and only this top layer may import both.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable


def add_parsers(sub: argparse._SubParsersAction, source_help: str) -> None:
    """Add the agents' subcommands to the ``soko`` parser ``sub``."""
    # one line per subcommand module: `from agents.X import add_X_parser; add_X_parser(...)`
    from agents.expert.cli import add_collect_parser

    add_collect_parser(sub, source_help)
    from agents.training.cli import add_train_parser

    add_train_parser(sub, source_help)
    from agents.benchmark.cli import add_bench_parser

    add_bench_parser(sub, source_help)
    add_warmup_parser(sub)


def add_warmup_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``soko warmup``: compile the kernels ahead of time into the numba cache."""
    warm = sub.add_parser(
        "warmup",
        help="compile the numba kernels ahead of time (engine and envs; --all: planners too)",
        description="Compile (or load) soko-gym's numba kernels into the cache folder, so the "
        "first env step, solve or training run does not wait for them.",
    )
    warm.add_argument(
        "--all", action="store_true", help="also every planner and the solution optimizers"
    )
    warm.add_argument(
        "--planner",
        action="append",
        default=[],
        metavar="NAME",
        help="also this planner (repeatable; see `soko planners`)",
    )
    warm.set_defaults(func=run_warmup)


def _warm_envs() -> None:
    """One reset and step of every env kind, single and vector (serial and parallel)."""
    import gymnasium as gym
    import numpy as np

    import soko_gym

    for env_id in ("Sokoban-Push-v0", "Sokoban-Macro-v0", "Sokoban-Move-v0"):
        env = gym.make(env_id, levels="microban:1")
        _, info = env.reset(seed=0)
        env.step(int(np.flatnonzero(info["action_mask"])[0]))
        for parallel in (False, True):
            venv = soko_gym.make_vec(env_id, 2, levels="microban:1", parallel=parallel)
            venv.reset(seed=0)
            venv.step(np.array([int(np.flatnonzero(m)[0]) for m in venv.action_masks()]))


def run_warmup(args: argparse.Namespace) -> int:
    """Run ``soko warmup``: each group's seconds and compilations; 0 when done."""
    from planners import available, get_planner
    from planners.warmup import CompileWatch, numba_cache_folder, warm_up_planner
    from soko_gym.engine import warmup as warm_engine

    for name in args.planner:
        get_planner(name)  # an unknown name: ValueError before any work
    from agents.playing.policy_search import POLICY_PLANNERS

    # lts and phs need a policy to run, and call only engine kernels (warmed below)
    every = [name for name in available() if name not in POLICY_PLANNERS]
    planners = every if args.all else list(dict.fromkeys(args.planner))
    groups: list[tuple[str, Callable[[], object]]] = [
        ("engine", warm_engine),
        ("envs (push, macro, move; single and vector)", _warm_envs),
    ]
    groups += [(f"planner {name}", lambda name=name: warm_up_planner(name)) for name in planners]
    if args.all:
        groups.append(("optimizers", lambda: warm_up_planner("astar", optimizer=True)))
    print(f"numba cache: {numba_cache_folder()}", file=sys.stderr)
    total, compiled = 0.0, 0
    print("| kernels | seconds | compiled |")
    print("|---|---:|---:|")
    for label, fn in groups:
        start = time.perf_counter()
        with CompileWatch() as watch:
            fn()
        seconds = time.perf_counter() - start
        total += seconds
        compiled += watch.count
        print(f"| {label} | {seconds:.1f} | {watch.count} |", flush=True)
    print(f"| total | {total:.1f} | {compiled} |")
    return 0
