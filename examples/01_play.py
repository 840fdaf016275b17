"""Watch a planner play a level in a soko-gym env, frame by frame, as text.

A ``PlannerPolicy`` (the expert of ``agents.expert.policy``) plans once from the observation
planes and plays the plan through the env's own action encoding; every frame is the env's
``ansi`` render.

    python examples/01_play.py --level microban:5 --env Sokoban-Move-v0 --delay 0.1
    python examples/01_play.py --smoke   # Microban 1 in the push env, no delay
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from soko_gym.cli import parse_dataclass_args


@dataclass
class Args:
    """Command-line arguments (each field is one ``--option``).

    Attributes:
        level: one level: a pack selection such as microban:3, or an XSB file holding one level.
        env: env id: Sokoban-Move-v0 (steps), Sokoban-Push-v0 (pushes) or Sokoban-Macro-v0.
        planner: registry name of the planner.
        time_limit: planner seconds.
        max_steps: stop after this many actions.
        delay: seconds between frames.
        smoke: tiny run for the tests: Microban 1 in the push env, no delay.
    """

    level: str = "microban:3"
    env: str = "Sokoban-Move-v0"
    planner: str = "astar"
    time_limit: float = 30.0
    max_steps: int = 1000
    delay: float = 0.05
    smoke: bool = False


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, one ``--option`` per field (help from the field docs)."""
    return parse_dataclass_args(Args, argv, __doc__)


def main(argv: list[str] | None = None) -> int:
    """Play the level; exit code 0 when the expert solves it."""
    args = parse_args(argv)
    if args.smoke:
        args.level, args.env, args.delay, args.time_limit = "microban:1", "Sokoban-Push-v0", 0.0, 5
    import gymnasium as gym

    import soko_gym  # noqa: F401  (registers the envs)
    from agents.expert import PlannerPolicy
    from agents.expert.policy import action_space_of

    levels = soko_gym.load_levels(args.level)
    if len(levels) != 1:
        raise ValueError(f"--level must select one level, got {len(levels)}")
    env = gym.make(args.env, levels=levels, render_mode="ansi", max_episode_steps=args.max_steps)
    policy = PlannerPolicy(args.planner, args.time_limit, action_space_of(args.env))
    obs, info = env.reset(seed=0)
    print(env.render())
    total = 0.0
    for step in range(1, args.max_steps + 1):
        action, _ = policy.predict(obs, episode_start=[step == 1])
        obs, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        print(f"step {step}: action {int(action)} ({info['last_lurd']}), reward {reward:+.1f}")
        print(env.render())
        if terminated or truncated:
            break
        time.sleep(args.delay)
    verdict = "solved" if info["solved"] else "not solved"
    print(
        f"{verdict} in {step} actions, {info['moves']} moves, {info['pushes']} pushes, "
        f"return {total:.1f}; planner runs: {policy.stats.plans + policy.stats.replans}"
    )
    return 0 if info["solved"] else 1


if __name__ == "__main__":
    sys.exit(main())
