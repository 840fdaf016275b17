"""RLlib PPO with action masking on soko-gym's numba vector envs (``soko train --algo rllib-ppo``).

Each RLlib env runner (``gym_env_vectorize_mode="vector_entry_point"``) calls
``make_runner_env`` (``agents.rllib.env``): soko-gym's native vector env with the action mask
in the observation, the layout of RLlib's action masking. ``MaskedBoardModule`` is the torch
``RLModule`` (new API stack) with the stable-baselines3 path's networks (``agents.features``)
and illegal logits at the float minimum; ``ppo_config`` maps a ``TrainConfig`` onto RLlib's
``PPOConfig``. ``MaskedPolicy`` puts a module behind SB3's ``predict(obs, deterministic,
action_masks=...)`` for evaluation and ``soko bench``; ``save_policy`` / ``load_policy`` write
and read module checkpoint folders (metadata in a sidecar ``<folder>.json``), and
``load_policy`` also reads a whole algorithm checkpoint, without a running Ray. Needs the
``dist`` and ``rl`` extras.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

try:
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.utils.torch_utils import FLOAT_MIN
    from torch import nn
except ImportError as err:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'algo "rllib-ppo" needs Ray with RLlib and torch: pip install "soko-gym[rl,dist]" '
        "(install torch first, e.g. pip install torch)"
    ) from err

import gymnasium as gym
import numpy as np

from agents.features import BoardCNN, SquareHeads
from agents.rllib.env import (
    MASK_KEY,
    OBS_KEY,
    envs_per_runner,
    make_runner_env,
)
from agents.training.config import TrainConfig

META_FILE = "soko_meta.json"
ENV_NAME = "soko-gym-vector"  # the env creator's name in Ray's registry
MODULE_IN_ALGO = Path("learner_group", "learner", "rl_module", "default_policy")
SOLVED_METRIC = "soko_solved"  # training episodes solved in an iteration (env runner metric)
EPISODES_METRIC = "soko_episodes"  # training episodes finished in an iteration
SAMPLING_TIMER = ("timers", "env_runner_sampling_timer")


def on_episode_end(*, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
    """RLlib callback: count finished and solved training episodes (sums per iteration)."""
    info = episode.get_infos(-1) or {}
    metrics_logger.log_value(EPISODES_METRIC, 1, reduce="sum")
    metrics_logger.log_value(SOLVED_METRIC, int(bool(info.get("solved", False))), reduce="sum")


def track_sampling_time(algo: Any) -> None:
    """Report the algorithm's sampling time per iteration as a sum, not RLlib's moving average.

    PPO times each iteration's sampling under ``SAMPLING_TIMER``; a statistic logged under
    that key first keeps its reduction, so each result holds that iteration's seconds.
    """
    algo.metrics.log_value(SAMPLING_TIMER, 0.0, reduce="sum")


class ProgressLog:
    """``progress.csv`` of an RLlib run: a row per iteration, SB3's column names where they exist.

    ``record(result, seconds)`` appends the row of an ``algo.train()`` result and returns the
    env steps sampled so far; ``train_stats()`` is the last iteration's training episodes'
    (solve rate, mean return), NaN before any episode ended.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last: dict[str, float] = {}
        path.write_text("")

    def record(self, result: dict[str, Any], seconds: float) -> int:
        """Append the row of one iteration's ``result``; env steps sampled so far."""
        runners = result.get("env_runners", {})
        learner = result.get("learners", {}).get("default_policy", {})
        nan = float("nan")
        episodes = float(runners.get(EPISODES_METRIC, 0))
        row = {
            "time/iterations": result.get("training_iteration", 0),
            "time/total_timesteps": runners.get("num_env_steps_sampled_lifetime", 0),
            "time/time_elapsed": seconds,
            "rollout/ep_rew_mean": runners.get("episode_return_mean", nan),
            "rollout/ep_len_mean": runners.get("episode_len_mean", nan),
            "rollout/success_rate": runners.get(SOLVED_METRIC, 0) / episodes if episodes else nan,
            "rollout/episodes": episodes,
            "train/policy_gradient_loss": learner.get("policy_loss", nan),
            "train/value_loss": learner.get("vf_loss", nan),
            "train/entropy": learner.get("entropy", nan),
            "train/explained_variance": learner.get("vf_explained_var", nan),
            "train/learning_rate": learner.get("default_optimizer_learning_rate", nan),
            "rllib/env_steps": runners.get("num_env_steps_sampled", 0),
            "rllib/sample_seconds": result.get("timers", {}).get(SAMPLING_TIMER[1], nan),
            "rllib/iteration_seconds": result.get("time_this_iter_s", nan),
        }
        self.last = {k: float(v) for k, v in row.items()}
        with self.path.open("a", encoding="utf-8") as f:
            if f.tell() == 0:
                f.write(",".join(row) + "\n")
            f.write(",".join(f"{v:.6g}" for v in self.last.values()) + "\n")
        return int(self.last["time/total_timesteps"])

    def train_stats(self) -> tuple[float, float]:
        """(solve rate, mean return) of the last iteration's training episodes."""
        nan = float("nan")
        return self.last.get("rollout/success_rate", nan), self.last.get("rollout/ep_rew_mean", nan)


# -- the network --------------------------------------------------------------------------------


def _init(module: nn.Module, gain: float) -> None:
    """Orthogonal weights with ``gain`` and zero biases (SB3's ``ortho_init``)."""
    for layer in module.modules():
        if isinstance(layer, nn.Linear | nn.Conv2d):
            nn.init.orthogonal_(layer.weight, gain=gain)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)


def _mlp(n_in: int, hidden: Sequence[int]) -> tuple[nn.Module, int]:
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(n_in, int(width)), nn.ReLU()]
        n_in = int(width)
    return nn.Sequential(*layers), n_in


class MaskedBoardModule(TorchRLModule, ValueFunctionAPI):
    """PPO's RLModule on soko-gym planes with masked logits: the SB3 path's networks.

    The observation space is ``ActionMaskObservations``'s Dict. ``model_config`` keys:
    ``kind`` ("square": ``BoardCNN`` flattened, a 1x1 convolution giving each square's four
    push logits and ``SquareHeads``'s value head, for the Push env; "cnn": ``BoardCNN``
    features, then policy and value MLPs of ``net_arch``), ``features`` (``BoardCNN``
    arguments), ``net_arch``, ``value_hidden`` and ``value_head``. The trunk is shared by
    the policy and the value (as SB3 shares its features extractor); weights start as SB3's
    (orthogonal, gain sqrt 2; 0.01 for the logits, 1 for the value).
    """

    def setup(self) -> None:
        """Build the trunk and the heads from ``model_config``."""
        cfg = dict(self.model_config or {})
        planes = self.observation_space[OBS_KEY]
        n_actions = int(self.action_space.n)
        kind = cfg.get("kind", "square")
        features = dict(cfg.get("features") or {})
        if kind == "square":
            _, height, width = planes.shape
            if n_actions != 4 * height * width:
                raise ValueError(
                    f"network.policy 'square' is for the Push env (4 * H * W actions); got "
                    f"{self.action_space} on a {height}x{width} board"
                )
            features.update(pooling="flatten", features_dim=0)
            self.trunk = BoardCNN(planes, **features)
            value = int(cfg.get("value_hidden", 64)), str(cfg.get("value_head", "conv"))
            self.heads = SquareHeads(self.trunk.convs[-1].out_channels, height, width, 4, *value)
            self.value_out = nn.Linear(self.heads.latent_dim_vf, 1)
            _init(self, 2**0.5)
            _init(self.heads.logits, 0.01)
        elif kind == "cnn":
            self.trunk = BoardCNN(planes, **features)
            net_arch = list(cfg.get("net_arch") or [])
            self.pi_mlp, n_pi = _mlp(self.trunk.features_dim, net_arch)
            self.vf_mlp, n_vf = _mlp(self.trunk.features_dim, net_arch)
            self.logits = nn.Linear(n_pi, n_actions)
            self.value_out = nn.Linear(n_vf, 1)
            _init(self, 2**0.5)
            _init(self.logits, 0.01)
        else:
            raise ValueError(f"model_config kind must be 'square' or 'cnn', got {kind!r}")
        self.kind = kind
        _init(self.value_out, 1.0)

    def _split(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        return obs[OBS_KEY], obs[MASK_KEY]

    def _logits(self, embeddings: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.kind == "square":
            logits = self.heads.forward_actor(embeddings)
        else:
            logits = self.logits(self.pi_mlp(embeddings))
        return logits.masked_fill(mask == 0, FLOAT_MIN)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        planes, mask = self._split(batch)
        return {Columns.ACTION_DIST_INPUTS: self._logits(self.trunk(planes), mask)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        planes, mask = self._split(batch)
        embeddings = self.trunk(planes)
        return {
            Columns.ACTION_DIST_INPUTS: self._logits(embeddings, mask),
            Columns.EMBEDDINGS: embeddings,
        }

    def compute_values(
        self, batch: dict[str, Any], embeddings: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Value estimates float[B] (from the trunk's ``embeddings`` when given)."""
        if embeddings is None:
            embeddings = self.trunk(self._split(batch)[0])
        if self.kind == "square":
            latent = self.heads.forward_critic(embeddings)
        else:
            latent = self.vf_mlp(embeddings)
        return self.value_out(latent).squeeze(-1)


def module_spec(
    model_config: dict[str, Any],
    observation_space: gym.Space | None = None,
    action_space: gym.Space | None = None,
) -> Any:
    """The ``RLModuleSpec`` of ``MaskedBoardModule`` with ``model_config`` (spaces: the env's)."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    return RLModuleSpec(
        module_class=MaskedBoardModule,
        observation_space=observation_space,
        action_space=action_space,
        model_config=model_config,
    )


def build_policy(env_config: dict[str, Any], model_config: dict[str, Any]) -> MaskedPolicy:
    """A fresh local module for the runners' env (``runner_env_config``), as a ``MaskedPolicy``.

    Raises:
        ValueError: a network that does not fit the env (built here, not first on a runner).
    """
    env = make_runner_env({**env_config, "num_envs": len(env_config["sources"])})
    try:
        spec = module_spec(model_config, env.single_observation_space, env.single_action_space)
    finally:
        env.close()
    return MaskedPolicy(spec.build())


# -- the algorithm ------------------------------------------------------------------------------


def ppo_config(
    config: TrainConfig, env_config: dict[str, Any], model_config: dict[str, Any]
) -> Any:
    """RLlib's ``PPOConfig`` for ``config`` (new API stack, one local learner).

    The ``ppo`` section maps onto RLlib's names (learning_rate -> lr with ``lr_end`` as a
    linear schedule over ``steps``, batch_size -> minibatch_size, n_epochs -> num_epochs,
    gae_lambda -> lambda_, clip_range -> clip_param, ent_coef -> entropy_coeff, vf_coef ->
    vf_loss_coeff, max_grad_norm -> grad_clip by global norm); no KL penalty, as in SB3's
    PPO. ``rllib.train_batch_size`` 0 means ``runners x envs x ppo.n_steps``.
    """
    from ray.rllib.algorithms.ppo import PPOConfig as RLlibPPOConfig
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_runner_env)  # RLlib builds registered envs on every runner
    ppo, rl = config.ppo, config.rllib
    runners = rl.env_runners
    n_envs = envs_per_runner(config)
    batch = rl.train_batch_size or max(1, runners) * n_envs * ppo.n_steps
    lr: Any = ppo.learning_rate
    if ppo.lr_end is not None:
        lr = [[0, ppo.learning_rate], [config.steps, ppo.lr_end]]
    algo = (
        RLlibPPOConfig()
        .environment(env=ENV_NAME, env_config=env_config)
        .framework("torch")
        .env_runners(
            num_env_runners=runners,
            num_envs_per_env_runner=n_envs,
            gym_env_vectorize_mode=gym.VectorizeMode.VECTOR_ENTRY_POINT,
            rollout_fragment_length="auto",
            num_cpus_per_env_runner=1,
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=batch,
            minibatch_size=min(ppo.batch_size, batch),
            num_epochs=ppo.n_epochs,
            lr=lr,
            gamma=ppo.gamma,
            lambda_=ppo.gae_lambda,
            clip_param=ppo.clip_range,
            entropy_coeff=ppo.ent_coef,
            vf_loss_coeff=ppo.vf_coef,
            use_kl_loss=False,
            grad_clip=ppo.max_grad_norm,
            grad_clip_by="global_norm",
        )
        .rl_module(rl_module_spec=module_spec(model_config))
        .callbacks(on_episode_end=on_episode_end)
        .debugging(seed=config.seed, log_level="ERROR")
    )
    return algo


def connect_ray(address: str | None, env_runners: int, quiet: bool = True) -> bool:
    """Start a local Ray (``address`` None or "local") or join one ("auto", an address).

    Returns True when this call started Ray (the caller then shuts it down). A local Ray gets
    at least one CPU per env runner, so the runners never wait for CPUs that do not exist.
    """
    from soko_gym.execution import Backend
    from soko_gym.execution import connect_ray as connect

    cpus = max(os.cpu_count() or 1, env_runners)
    return connect(Backend(jobs=cpus, ray=address or "local"), log_to_driver=not quiet)


def learner_weights(algo: Any) -> dict[str, Any]:
    """The current weights of the learner's module (a torch state dict of numpy arrays)."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    return algo.learner_group.get_weights([DEFAULT_MODULE_ID])[DEFAULT_MODULE_ID]


# -- playing, saving and loading a module -------------------------------------------------------


class MaskedPolicy:
    """A ``MaskedBoardModule`` behind stable-baselines3's ``predict`` (MaskablePPO's form).

    ``predict(obs, deterministic=True, action_masks=None)`` takes planes ``(C, H, W)`` or a
    batch ``(N, C, H, W)`` and the env's masks (None: every action legal) and returns
    ``(actions, None)``: the most likely legal action, or one sampled from the masked
    distribution. Runs on the CPU without Ray.
    """

    def __init__(self, module: Any) -> None:
        self.module = module
        self.observation_space = module.observation_space[OBS_KEY]
        self.action_space = module.action_space
        self.generator = torch.Generator().manual_seed(0)
        module.eval()

    def set_random_seed(self, seed: int) -> None:
        """Seed the sampling of non-deterministic actions."""
        self.generator.manual_seed(int(seed))

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
        action_masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray, None]:
        """Actions for ``observation`` (a single one or a batch), legal under the masks."""
        obs = np.asarray(observation)
        single = obs.ndim == len(self.observation_space.shape)
        if single:
            obs = obs[None]
        n_actions = int(self.action_space.n)
        if action_masks is None:
            masks = np.ones((len(obs), n_actions), dtype=np.uint8)
        else:
            masks = np.asarray(action_masks).reshape(len(obs), n_actions).astype(np.uint8)
        batch = {Columns.OBS: {OBS_KEY: torch.from_numpy(obs), MASK_KEY: torch.from_numpy(masks)}}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
            if deterministic:
                actions = logits.argmax(dim=-1)
            else:
                probs = torch.softmax(logits, dim=-1)
                actions = torch.multinomial(probs, 1, generator=self.generator)[:, 0]
        out = actions.numpy().astype(np.int64)
        return (out[0] if single else out), None


def save_policy(policy: MaskedPolicy, path: str | Path, meta: dict[str, Any]) -> Path:
    """Save ``policy``'s module to the folder ``path``, with ``meta`` beside and inside it."""
    path = Path(path)
    policy.module.save_to_path(str(path.resolve()))
    text = json.dumps(meta, indent=2)
    (path / META_FILE).write_text(text, encoding="utf-8")
    path.with_name(path.name + ".json").write_text(text, encoding="utf-8")
    return path


def save_algorithm(algo: Any, path: Path, meta: dict[str, Any]) -> Path:
    """Save RLlib's whole checkpoint of ``algo`` to the folder ``path``, ``meta`` beside it."""
    algo.save_to_path(str(path.resolve()))
    path.with_name(path.name + ".json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return path


def module_folder(path: str | Path) -> Path:
    """The module checkpoint inside ``path``: ``path`` itself, or an algorithm checkpoint's.

    Raises:
        ValueError: when ``path`` holds neither.
    """
    path = Path(path)
    from ray.rllib.utils.checkpoints import Checkpointable

    for candidate in (path / MODULE_IN_ALGO, path):  # an algorithm's folder has the file too
        if (candidate / Checkpointable.CLASS_AND_CTOR_ARGS_FILE_NAME).is_file():
            return candidate
    raise ValueError(
        f"{path} is not an RLlib checkpoint (no RLModule in it or in {MODULE_IN_ALGO})"
    )


def read_policy_meta(path: str | Path) -> dict[str, Any]:
    """The soko-gym metadata of a saved policy folder: its sidecar JSON, else the inner one."""
    path = Path(path)
    for candidate in (path.with_name(path.name + ".json"), path / META_FILE):
        if candidate.is_file():
            data = json.loads(candidate.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError(f"{candidate}: expected a JSON object")
            return data
    return {}


def load_policy(path: str | Path) -> tuple[MaskedPolicy, dict[str, Any]]:
    """Load a saved module (``save_policy``) or an algorithm checkpoint's: ``(policy, meta)``.

    Raises:
        ValueError: a folder that is not an RLlib checkpoint or holds another module class.
    """
    from ray.rllib.core.rl_module.rl_module import RLModule

    folder = module_folder(path)
    module = RLModule.from_checkpoint(str(folder.resolve()))
    if not isinstance(module, MaskedBoardModule):
        raise ValueError(
            f"{path} holds a {type(module).__name__}, not the MaskedBoardModule of "
            "soko train --algo rllib-ppo"
        )
    return MaskedPolicy(module), read_policy_meta(path)
