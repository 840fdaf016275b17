"""A training run's bookkeeping: checkpoints, held-out evaluations, ``eval.csv``, progress lines.

``RunTracker`` is called by the training loop (an SB3 callback, ``sb3_callback``, or the
RLlib loop of ``agents.training.train``) after every step it reports; it checkpoints and
evaluates when due, keeps the best model, writes a row of ``eval.csv`` per evaluation and a
progress line every 30 seconds, and says when the time budget is spent.
"""

from __future__ import annotations

import csv
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agents.playing.evaluation import EvalResult, evaluate
from agents.playing.models import save_model
from agents.training.config import TrainConfig

EVAL_COLUMNS = (
    "phase",
    "timesteps",
    "seconds",
    "solve_rate",
    "mean_pushes",
    "mean_reward",
    "mean_length",
    "n_levels",
    "train_success_rate",
    "train_reward",
)


class RunTracker:
    """Checkpoints, evaluations, eval.csv and progress lines of one run.

    ``saver(model, path, meta)`` saves a model to ``path`` (``<name><suffix>``) and
    ``train_stats(model)`` gives the recent training episodes' (success rate, mean reward):
    SB3's by default, the RLlib path's own for ``rllib-ppo``.
    """

    def __init__(
        self,
        config: TrainConfig,
        out: Path,
        meta: dict[str, Any],
        eval_env: Any,
        n_eval: int,
        *,
        suffix: str = ".zip",
        saver: Callable[[Any, Path, dict[str, Any]], Path] | None = None,
        train_stats: Callable[[Any], tuple[float, float]] | None = None,
        resumed: tuple[int, float] | None = None,
    ) -> None:
        self.config = config
        self.suffix = suffix
        self.saver = saver or save_model
        self.train_stats = train_stats or sb3_train_stats
        self.out = out
        self.meta = meta
        self.eval_env = eval_env
        self.n_eval = n_eval
        at, spent = resumed if resumed is not None else (0, 0.0)
        self.session_start = time.perf_counter()  # ``max_seconds`` is per session
        self.start = self.session_start - spent  # a resumed run's seconds add to its past
        self.next_eval = config.eval_every or None
        self.next_ckpt = config.checkpoint_every or None
        if at and self.next_eval is not None:
            self.next_eval = (at // config.eval_every + 1) * config.eval_every
        if at and self.next_ckpt is not None:
            self.next_ckpt = (at // config.checkpoint_every + 1) * config.checkpoint_every
        self.last_eval_at = -1
        self.best = -1.0
        self.last_line = self.session_start
        self.final: EvalResult | None = None
        (out / "checkpoints").mkdir(parents=True, exist_ok=True)
        if resumed is None or not (out / "eval.csv").exists():  # resumed: rows appended
            with (out / "eval.csv").open("w", newline="") as f:
                csv.writer(f).writerow(EVAL_COLUMNS)
        else:  # the best model so far stays unless a resumed evaluation beats it
            with (out / "eval.csv").open(newline="") as f:
                rates = [float(r["solve_rate"]) for r in csv.DictReader(f) if r.get("solve_rate")]
            self.best = max(rates, default=-1.0)

    def seconds(self) -> float:
        """Wall seconds of the run: this session's and, resumed, the earlier sessions'."""
        return time.perf_counter() - self.start

    def log(self, line: str) -> None:
        """A progress line on stderr (none with ``quiet``)."""
        if not self.config.quiet:
            print(line, file=sys.stderr, flush=True)

    def on_step(self, model: Any, t: int, total: int) -> bool:
        """Checkpoint, evaluate or report when due; False when the time budget is spent."""
        if self.next_ckpt is not None and t >= self.next_ckpt:
            self.save(model, self.out / "checkpoints" / f"model_{t}_steps{self.suffix}", t)
            self.next_ckpt = (t // self.config.checkpoint_every + 1) * self.config.checkpoint_every
        if self.next_eval is not None and t >= self.next_eval:
            self.evaluate(model, t, "rl")
            self.next_eval = (t // self.config.eval_every + 1) * self.config.eval_every
        elif time.perf_counter() - self.last_line > 30:
            self.last_line = time.perf_counter()
            success, reward = self.train_stats(model)
            self.log(
                f"[{t}/{total}] {t / max(self.seconds(), 1e-9):.0f} steps/s, training "
                f"episodes solved {success:.1%}, reward {reward:.2f}, {self.seconds():.0f} s"
            )
        session = time.perf_counter() - self.session_start
        if self.config.max_seconds and session >= self.config.max_seconds:
            self.log(f"time budget of {self.config.max_seconds:.0f} s spent at {t} steps")
            return False
        return True

    def save(self, model: Any, path: Path, t: int) -> Path:
        """Save ``model`` to ``path`` with the run's metadata at ``t`` steps."""
        meta = {**self.meta, "timesteps": int(t), "seconds": round(self.seconds(), 1)}
        return self.saver(model, path, meta)

    def evaluate(self, model: Any, t: int, phase: str) -> EvalResult | None:
        """Evaluate on the held-out levels (once per ``t``): a row of eval.csv, the best model."""
        if self.eval_env is None or t == self.last_eval_at:
            return self.final
        res = evaluate(model, self.eval_env, self.n_eval)
        self.final, self.last_eval_at = res, t
        success, reward = self.train_stats(model)
        row = [phase, t, f"{self.seconds():.1f}", f"{res.solve_rate:.4f}", f"{res.mean_pushes:.3f}"]
        row += [f"{res.mean_reward:.4f}", f"{res.mean_length:.2f}", res.n_levels]
        row += [f"{success:.4f}", f"{reward:.4f}"]
        with (self.out / "eval.csv").open("a", newline="") as f:
            csv.writer(f).writerow(row)
        if res.solve_rate > self.best:
            self.best = res.solve_rate
            self.save(model, self.out / f"best_model{self.suffix}", t)
        self.last_line = time.perf_counter()
        self.log(
            f"[{t} steps, {self.seconds():.0f} s] eval: solved {res.solve_rate:.1%} of "
            f"{res.n_levels}, mean pushes {res.mean_pushes:.2f}; training episodes solved "
            f"{success:.1%}"
        )
        return res


def sb3_train_stats(model: Any) -> tuple[float, float]:
    """(success rate, mean reward) of the recent training episodes (nan before any)."""
    succ = list(getattr(model, "ep_success_buffer", None) or [])
    infos = list(getattr(model, "ep_info_buffer", None) or [])
    success = float(np.mean(succ)) if succ else float("nan")
    reward = float(np.mean([e["r"] for e in infos])) if infos else float("nan")
    return success, reward


def sb3_callback(rl: Any, run: RunTracker, total: int) -> Any:
    """An SB3 callback that calls ``run.on_step`` after every step (False stops training)."""

    class RunCallback(rl.BaseCallback):
        def _on_step(self) -> bool:
            return run.on_step(self.model, self.num_timesteps, total)

    return RunCallback()
