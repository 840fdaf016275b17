"""Record a trained agent playing, as MP4 files, with gymnasium's ``RecordVideo`` wrapper.

The env renders ``rgb_array`` frames (the tile renderer of ``soko_gym.envs.render``), and
``gymnasium.wrappers.RecordVideo`` writes one MP4 per episode (it needs moviepy: the ``video``
extra). The agent is a model saved by ``soko train`` (``model.zip`` with its ``model.json``, or
an RLlib ``model/`` folder); it plays greedily, with the env's action masks.

    soko train --algo maskable-ppo --levels generated:7x7:2 --steps 2000000 --out runs/ppo7
    python examples/07_record_video.py --model runs/ppo7/model.zip --levels microban:1-5
    python examples/07_record_video.py --smoke --out /tmp/videos   # trains a tiny agent first
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from soko_gym.cli import parse_dataclass_args


@dataclass
class Args:
    """Command-line arguments (each field is one ``--option``).

    Attributes:
        model: a saved model (``model.zip`` or an RLlib ``model/`` folder).
        levels: the levels to play, one episode each (a pack selection, file or
            ``generated:WxH:N``).
        episodes: episodes to record.
        max_steps: agent steps per episode (0: the env id's limit).
        tile: pixels per square in the video.
        fps: frames per second of the video.
        out: folder of the MP4 files.
        overwrite: replace videos already in ``out`` (otherwise they are never touched).
        smoke: train a tiny agent on 6x6 one-box levels first and record two short episodes
            (for the tests).
    """

    model: str = ""
    levels: str = "microban:1-5"
    episodes: int = 5
    max_steps: int = 0
    tile: int = 32
    fps: int = 4
    out: str = "videos"
    overwrite: bool = False
    smoke: bool = False


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, one ``--option`` per field (help from the field docs)."""
    return parse_dataclass_args(Args, argv, __doc__)


def _train_tiny(out: Path) -> Path:
    """A MaskablePPO model trained for a few hundred steps (``--smoke``); its path."""
    from agents.training.config import EnvConfig, NetworkConfig, PPOConfig, TrainConfig
    from agents.training.train import train

    config = TrainConfig(
        algo="maskable-ppo",
        out=str(out),
        steps=256,
        n_envs=4,
        eval_every=0,
        eval_episodes=4,
        overwrite=True,
        quiet=True,
        env=EnvConfig(levels="generated:6x6:1", max_episode_steps=8),
        network=NetworkConfig(channels=8, n_layers=2),
        ppo=PPOConfig(n_steps=32, batch_size=64, n_epochs=1),
    )
    train(config)
    return out / "model.zip"


def record(args: Args) -> list[Path]:
    """Play ``args.episodes`` episodes with the model, recording each; the MP4 files written."""
    import gymnasium as gym
    from gymnasium.wrappers import RecordVideo
    from sb3_contrib.common.maskable.utils import get_action_masks

    import soko_gym  # noqa: F401  (registers the env ids)
    from agents.playing.models import load_agent

    agent = load_agent(args.model)
    kwargs = dict(agent.env_kwargs)
    kwargs.update(levels=args.levels, level_order="sequential", render_mode="rgb_array")
    kwargs["tile_size"] = args.tile
    if args.max_steps:
        kwargs["max_episode_steps"] = args.max_steps
    env = gym.make(agent.env_id, disable_env_checker=True, **kwargs)
    out = Path(args.out)
    env = RecordVideo(
        env, str(out), episode_trigger=lambda _: True, name_prefix="agent", fps=args.fps
    )
    for episode in range(args.episodes):
        obs, _ = env.reset(seed=episode)
        done = False
        while not done:
            extra = {"action_masks": get_action_masks(env)} if agent.masked else {}
            action, _ = agent.model.predict(obs, deterministic=True, **extra)
            obs, _, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        print(f"episode {episode}: {'solved' if info.get('solved') else 'not solved'}")
    env.close()
    return sorted(out.glob("agent-episode-*.mp4"))


def main(argv: list[str] | None = None) -> int:
    """Record the episodes and list the files; returns the exit code."""
    args = parse_args(argv)
    old = sorted(Path(args.out).glob("agent-episode-*.mp4"))
    if old and not args.overwrite:
        raise SystemExit(f"{args.out} holds {len(old)} videos; pass --overwrite to replace them")
    if args.smoke:
        args.levels, args.episodes, args.max_steps, args.tile = "generated:6x6:1", 2, 8, 16
        with tempfile.TemporaryDirectory(prefix="soko-tiny-agent-") as tmp:
            args.model = str(_train_tiny(Path(tmp)))
            files = record(args)
    elif not args.model:
        raise SystemExit("--model is required (or --smoke)")
    else:
        files = record(args)
    for path in files:
        print(f"wrote {path}")
    return 0 if len(files) == args.episodes else 1


if __name__ == "__main__":
    sys.exit(main())
