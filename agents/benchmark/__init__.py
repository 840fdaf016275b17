"""``soko bench``: agents and planners on the same levels (``run_benchmark``, ``BenchConfig``)."""

from agents.benchmark.config import BenchConfig
from agents.benchmark.run import run_benchmark

__all__ = ["BenchConfig", "run_benchmark"]
