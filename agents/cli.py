"""The agents' ``soko`` subcommands: ``collect`` (expert datasets), ``train`` and ``bench``.

``soko_gym.cli`` finds ``add_parsers`` through the ``soko_gym.commands`` entry point
(``pyproject.toml``). Each subcommand's parser is built by the module that owns it; this module
only gathers them, so ``soko --help`` stays fast (torch, stable-baselines3 and minari load
inside the commands).
"""

from __future__ import annotations

import argparse


def add_parsers(sub: argparse._SubParsersAction, source_help: str) -> None:
    """Add the agents' subcommands to the ``soko`` parser ``sub``."""
    # one line per subcommand module: `from agents.X import add_X_parser; add_X_parser(...)`
    from agents.collect_cli import add_collect_parser

    add_collect_parser(sub, source_help)
    from agents.train import add_train_parser

    add_train_parser(sub, source_help)
    from agents.benchmark import add_bench_parser

    add_bench_parser(sub, source_help)
