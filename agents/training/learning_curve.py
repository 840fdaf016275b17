"""The learning-curve figure of a training run, drawn from its CSV logs (``plot`` extra).

Panels: held-out and training solve rate against env steps (``eval.csv``, ``progress.csv``),
mean training episode reward, and for behaviour cloning the accuracy against gradient steps
(``bc.csv``) beside chance.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

PLOT_HINT = 'matplotlib is needed for the learning curve: pip install "soko-gym[plot]"'


def _read_csv(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file() or path.stat().st_size == 0:
        return {}
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return {}

    def column(key: str) -> np.ndarray:
        return np.array([float(r[key]) if r.get(key) not in (None, "") else np.nan for r in rows])

    return {k: column(k) for k in rows[0] if k != "phase"}


def plot_learning_curve(out: str | Path) -> Path:
    """Draw ``learning_curve.png`` in a run folder from its CSV logs; returns its path.

    Raises:
        ImportError: naming the ``plot`` extra when matplotlib is missing.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ImportError(PLOT_HINT) from err
    out = Path(out)
    ev = _read_csv(out / "eval.csv")
    prog = _read_csv(out / "progress.csv")
    bc = _read_csv(out / "bc.csv")
    panels = 3 if bc else 2
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 3.8))
    ax = axes[0]
    if ev:
        ax.plot(ev["timesteps"], ev["solve_rate"], "o-", label="held-out levels (greedy)")
    if prog and "rollout/success_rate" in prog:
        ax.plot(
            prog["time/total_timesteps"], prog["rollout/success_rate"], label="training episodes"
        )
    ax.set(xlabel="env steps", ylabel="solve rate", ylim=(-0.02, 1.02), title="Levels solved")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax = axes[1]
    if prog and "rollout/ep_rew_mean" in prog:
        ax.plot(prog["time/total_timesteps"], prog["rollout/ep_rew_mean"])
    ax.set(xlabel="env steps", ylabel="mean episode reward", title="Training reward")
    ax.grid(alpha=0.3)
    if bc:
        ax = axes[2]
        ax.plot(bc["step"], bc["accuracy"], label="training batch")
        if "val_accuracy" in bc:
            ax.plot(bc["step"], bc["val_accuracy"], label="held-out episodes")
        ax.plot(bc["step"], bc["chance"], "--", label="chance (uniform legal)")
        ax.set(xlabel="gradient steps", ylabel="accuracy", ylim=(0, 1), title="Behaviour cloning")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "learning_curve.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
