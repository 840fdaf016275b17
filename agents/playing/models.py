"""Saved SB3 models and their soko-gym metadata: the class that loads a zip and the env it plays.

``save_model`` writes ``model.zip`` and a sidecar ``model.json`` (the same dict is
also stored in the zip's data as ``soko_meta``): ``{"env_id": ..., "env_kwargs": {...},
"algo": ..., ...}``. ``load_model`` reads that metadata (the sidecar ``model.json`` or
``model.zip.json``, else the zip's ``soko_meta``) and loads the model with the class its
``algo`` names ("maskable-ppo", "ppo" or "dqn"); a zip saved by plain stable-baselines3 or
sb3-contrib loads too, with the class its policy was stored from. ``load_agent`` adds the env
the model plays in (``LoadedAgent``): from the metadata, from an explicit env id, or else from
the model's spaces (planes observation ``(C, H, W)``; ``Discrete(4 H W)`` is the push env,
``Discrete((H W)^2)`` the macro env, ``Discrete(4|5)`` the move env).

A folder is an RLlib checkpoint of ``soko train --algo rllib-ppo`` (``model/``, or the whole
``algorithm/`` checkpoint): ``agents.rllib.ppo.load_policy`` loads its module, without Ray running,
as a ``MaskedPolicy`` whose ``predict`` takes ``action_masks`` as MaskablePPO's does.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.playing.act import uses_masks

RL_HINT = (
    'saved models need torch, stable-baselines3 and sb3-contrib: pip install "soko-gym[rl]" '
    "(install torch first, e.g. pip install torch)"
)
SB3_ALGOS = ("maskable-ppo", "ppo", "dqn")
# env kwargs a sidecar may carry that whoever plays the model sets itself
_OWN_ENV_KWARGS = {"levels", "level_order", "generator_kwargs", "render_mode", "max_episode_steps"}


@dataclass
class LoadedAgent:
    """A saved SB3 model with the env it plays in.

    Attributes:
        model: the loaded model (``predict(obs, deterministic=..., [action_masks=...])``).
        env_id: a soko-gym env id.
        env_kwargs: env arguments (obs_size, dead_plane ... matching the model's observation).
        masked: True when ``predict`` takes ``action_masks`` (MaskablePPO).
    """

    model: Any
    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    masked: bool = False


def sb3_classes() -> dict[str, Any]:
    """The SB3 model classes by ``algo`` name, or an ImportError naming the ``rl`` extra."""
    try:
        from sb3_contrib import MaskablePPO
        from stable_baselines3 import DQN, PPO
    except ImportError as err:
        raise ImportError(RL_HINT) from err
    return dict(zip(SB3_ALGOS, (MaskablePPO, PPO, DQN), strict=True))


def _zip_data(path: Path) -> dict[str, Any]:
    """The ``data`` JSON that SB3 stores in a model zip."""
    try:
        with zipfile.ZipFile(path) as zf:
            data = json.loads(zf.read("data"))
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not a stable-baselines3 model zip ({err})") from None
    return data if isinstance(data, dict) else {}


def read_meta(path: str | Path) -> dict[str, Any]:
    """The soko-gym metadata of a saved model: its sidecar JSON, else the zip's ``soko_meta``.

    The sidecar is ``model.json`` or ``model.zip.json`` next to ``model.zip``. A model saved
    without soko-gym has none: ``{}``.

    Raises:
        ValueError: a sidecar that is not a JSON object, or (without a sidecar) a file that is
            not an SB3 model zip.
    """
    path = Path(path)
    for candidate in (path.with_suffix(".json"), path.with_name(path.name + ".json")):
        if candidate.is_file():
            with candidate.open(encoding="utf-8") as f:
                data = json.load(f)
            if not isinstance(data, dict):
                raise ValueError(f"{candidate}: expected a JSON object")
            if data:
                return data
            break
    return dict(_zip_data(path).get("soko_meta") or {})


def algo_of(path: str | Path, meta: dict[str, Any]) -> str:
    """The ``algo`` name of a saved model: its metadata's, else the zip's stored policy class."""
    algo = str(meta.get("algo") or "").lower()
    if algo in SB3_ALGOS:
        return algo
    policy = _zip_data(Path(path)).get("policy_class")
    module = str(policy.get("__module__", "")) if isinstance(policy, dict) else ""
    if "maskable" in module:
        return "maskable-ppo"
    if ".dqn." in module:
        return "dqn"
    return "ppo"


def load_model(path: str | Path, *, require_meta: bool = False) -> tuple[Any, dict[str, Any]]:
    """Load a saved SB3 model (or an RLlib checkpoint folder) on the CPU: ``(model, meta)``.

    Args:
        path: the model's ``.zip``, an RLlib checkpoint folder (``agents.rllib.ppo``) or
            ``pretrained:NAME``, an agent shipped with the package (``agents.playing.zoo``).
        require_meta: refuse a model without soko-gym metadata naming its ``algo`` (one
            ``agents.training.train`` did not save); otherwise such a model loads with
            ``meta == {}``.

    Returns:
        The model and its metadata (``read_meta``): ``env_id``, ``env_kwargs`` (``obs_size``,
        ``dead_plane`` ... to build the env it plays), ``algo``, ``max_episode_steps``,
        ``timesteps``, ``levels`` and ``seed`` for models saved by ``agents.training.train``.

    Raises:
        ValueError: a missing or unreadable model, or no metadata with ``require_meta``.
        ImportError: naming the ``rl`` extra when stable-baselines3 is missing.
    """
    from agents.playing.zoo import resolve

    path = resolve(path)  # "pretrained:NAME": a shipped agent (agents.playing.zoo)
    if path.is_dir():
        from agents.rllib.ppo import load_policy

        policy, meta = load_policy(path)
        if require_meta and not meta.get("algo"):
            raise ValueError(f"{path} has no soko-gym metadata (sidecar {path.name}.json)")
        return policy, meta
    classes = sb3_classes()
    if not path.is_file():
        raise ValueError(f"model {path} not found")
    meta = read_meta(path)
    if require_meta and str(meta.get("algo") or "").lower() not in SB3_ALGOS:
        raise ValueError(
            f"{path} has no soko-gym metadata (sidecar {path.with_suffix('.json').name} "
            "or in the zip)"
        )
    model = classes[algo_of(path, meta)].load(str(path), device="cpu")
    return model, meta


def env_from_spaces(model: Any) -> tuple[str, dict[str, Any]]:
    """Env id and kwargs of a planes model, read from its observation and action spaces.

    Raises:
        ValueError: when the spaces are not those of a soko-gym planes env.
    """
    from soko_gym.engine.constants import N_PLANES

    shape = tuple(model.observation_space.shape or ())
    n = int(getattr(model.action_space, "n", 0))
    if len(shape) != 3 or shape[0] not in (N_PLANES, N_PLANES + 1, N_PLANES + 2):
        raise ValueError(
            f"cannot tell the env of a model with observations of shape {shape}; give a sidecar "
            '<model>.json with {"env_id": ..., "env_kwargs": {...}} or --agent-env'
        )
    _, height, width = shape
    kwargs: dict[str, Any] = {"obs_size": (height, width), "dead_plane": shape[0] > N_PLANES}
    cells = height * width
    move, trail = n in (4, 5), shape[0] == N_PLANES + 2
    if trail and not move:  # the trail plane is the Move env's only
        raise ValueError(
            f"a model with {shape[0]} observation planes (the trail plane) must be a Move-env "
            f"model, but it has Discrete({n}) actions; give a sidecar <model>.json"
        )
    if n == 4 * cells:
        return "Sokoban-Push-v0", kwargs
    if n == cells * cells:
        return "Sokoban-Macro-v0", kwargs
    if move:
        if trail:
            kwargs["trail_plane"] = True
        return "Sokoban-Move-v0", {**kwargs, "noop_action": n == 5}
    raise ValueError(f"cannot tell the env of a model with Discrete({n}) actions; use --agent-env")


def load_agent(path: str | Path, env_id: str | None = None) -> LoadedAgent:
    """Load a saved SB3 model and the env it was trained on.

    The env arguments that set levels, their order, rendering or the step limit
    (``_OWN_ENV_KWARGS``) are left out: whoever plays the model sets those.

    Args:
        path: the model's ``.zip``.
        env_id: overrides the metadata's env id (its ``env_kwargs`` are still used).

    Raises:
        ValueError: a missing or unreadable model, or an env that cannot be determined or does
            not fit the model's spaces.
        ImportError: naming the ``rl`` extra when stable-baselines3 is missing (``dist`` too
            for an RLlib checkpoint).
    """
    model, meta = load_model(path)
    kwargs = {
        k: v for k, v in dict(meta.get("env_kwargs") or {}).items() if k not in _OWN_ENV_KWARGS
    }
    chosen = env_id or meta.get("env_id")
    if chosen is None:
        chosen, inferred = env_from_spaces(model)
        kwargs = {**inferred, **kwargs}
    else:
        try:
            spaces_id, inferred = env_from_spaces(model)
        except ValueError:  # e.g. rgb observations: the metadata's env_kwargs must say enough
            spaces_id, inferred = None, {}
        if spaces_id is not None and spaces_id != str(chosen).replace("-Gen", ""):
            raise ValueError(
                f"{path}: the model's spaces fit {spaces_id}, not the env {chosen} it was given"
            )
        if "obs_size" not in kwargs:
            kwargs = {**inferred, **kwargs}
    if isinstance(kwargs.get("obs_size"), list):
        kwargs["obs_size"] = tuple(kwargs["obs_size"])
    return LoadedAgent(model, str(chosen), kwargs, uses_masks(model))


def save_model(model: Any, path: Path, meta: dict[str, Any]) -> Path:
    """Save ``model`` to ``path`` (.zip) with ``meta`` in the zip and in a sidecar .json."""
    model.soko_meta = meta  # saved with the model's data; back as an attribute after load
    model.save(str(path))
    with path.with_suffix(".json").open("w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
    return path
