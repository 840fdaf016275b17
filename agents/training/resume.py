"""``soko train --resume``: where a run left off, so a long training can span sessions.

A run resumes from its latest checkpoint in its output folder: ``checkpoints/model_<t>_steps.zip``
(maskable-ppo, ppo, dqn: the model with its optimizer, at ``t`` env steps) or
``checkpoints/model_dagger_<i>.zip`` (dagger: the policy after iteration ``i``; the samples of
every iteration are in ``dagger_samples.npz``). The resumed config must be the run's own
(``config.json``) but for the budgets (``RESUMABLE``): a longer ``steps`` or more
``dagger.iterations`` continue it. Each checkpoint's sidecar records the wall seconds the run
had spent, so the run's time (and a model card's) sums over its sessions.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.training.config import TrainConfig

RESUMABLE = (  # the budgets and reporting a resumed run may change
    "steps",
    "max_seconds",
    "quiet",
    "resume",
    "overwrite",
    "eval_every",
    "checkpoint_every",
    "init_model",  # where the first session started: a resumed run starts from its checkpoint
)
RESUMABLE_DAGGER = ("iterations",)
_RL_CHECKPOINT = re.compile(r"model_(\d+)_steps\.zip")
_DAGGER_CHECKPOINT = re.compile(r"model_dagger_(\d+)\.zip")


@dataclass(frozen=True)
class ResumePoint:
    """The checkpoint a run resumes from.

    Attributes:
        path: the checkpoint's ``.zip``.
        at: env steps (RL algos) or the last finished DAgger iteration.
        seconds: the run's wall seconds when the checkpoint was saved (0 if not recorded).
    """

    path: Path
    at: int
    seconds: float


def _plain(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples as lists), for comparing configs."""
    return json.loads(json.dumps(value))


def _differences(config: TrainConfig, saved: dict[str, Any]) -> list[str]:
    """The fields of ``config`` that differ from the run's ``config.json`` and may not."""
    new = _plain(asdict(config))
    differ = []
    for key, value in new.items():
        if key in RESUMABLE:
            continue
        old = saved.get(key)
        if key == "dagger" and isinstance(value, dict) and isinstance(old, dict):
            differ += [
                f"dagger.{k}"
                for k, v in value.items()
                if k not in RESUMABLE_DAGGER and v != old.get(k)
            ]
        elif value != old:
            differ.append(key)
    return differ


def resume_point(out: Path, config: TrainConfig) -> ResumePoint:
    """The latest checkpoint of the run in ``out`` that ``config`` continues.

    Raises:
        ValueError: naming ``--resume`` when ``out`` holds no run, its config differs in
            more than the budgets (the fields are named), or it has no checkpoint.
    """
    try:
        saved = json.loads((out / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ValueError(
            f"resume (--resume): {out} holds no run to resume (no config.json)"
        ) from None
    differ = _differences(config, saved)
    if differ:
        raise ValueError(
            f"resume (--resume): the run in {out} was made with other settings ({', '.join(differ)}"
            "); only the budgets (--steps, --max-seconds, --dagger-iterations ...) may change"
        )
    pattern = _DAGGER_CHECKPOINT if config.algo == "dagger" else _RL_CHECKPOINT
    found = []
    for path in (out / "checkpoints").glob("*.zip"):
        match = pattern.fullmatch(path.name)
        if match:
            found.append((int(match.group(1)), path))
    if not found:
        raise ValueError(f"resume (--resume): {out / 'checkpoints'} holds no checkpoint to resume")
    at, path = max(found)
    return ResumePoint(path, at, _recorded_seconds(path))


def _recorded_seconds(checkpoint: Path) -> float:
    """The run's seconds in ``checkpoint``'s sidecar; 0 for one saved before they were kept."""
    try:
        return float(json.loads(checkpoint.with_suffix(".json").read_text())["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0


__all__ = ["RESUMABLE", "ResumePoint", "resume_point"]
