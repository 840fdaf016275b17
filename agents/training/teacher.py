"""A Push-env network as the Move env's expert: walk labels toward the push it would make.

A planner labels each position with one solution of many, and neighbouring positions may get
different ones; a trained Push-env policy (``pretrained:boxoban-push``) picks its push by one
smooth function of the board, which a Move-env network of the same kind can learn. The label
of a Move-env observation is the teacher's greedy push in the same position (its action mask
the Push env's), turned into player steps: the push itself when the player stands behind the
box, else every step that starts a shortest walk there (``agents.training.walks``).

The teacher is asked with the player on the smallest square of its region (the square the
engine normalizes positions to), not where it stands: a Push-env policy only ever saw players
beside the box they just pushed, and asked mid-walk it changes its mind from square to square
(played step by step in the Move env it then solves 3 of the first 30 unfiltered-test levels;
asked once per walk, 27; asked at the region's square, 56 of the first 60). Every position of a
walk thus gets the same push. Labelling is one batched forward pass, no search, so DAgger can
label every position its rollouts reach.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.expert.policy import push_action_mask, read_position
from agents.training.walks import position_steps
from soko_gym.engine.actions import square_push_parts
from soko_gym.engine.constants import N_DIRECTIONS, N_PLANES, PLANE_PLAYER

BATCH = 1024  # observations per forward pass


class PushTeacher:
    """Labels Move-env observations with a Push-env model's pushes, walked to.

    Args:
        model: ``pretrained:NAME`` or a saved Push-env model's ``.zip``; it must read the
            Move observations' frame and the dead-square plane.

    Raises:
        ValueError: naming ``teacher`` when the model is not a Push-env planes model.
    """

    def __init__(self, model: str) -> None:
        from agents.playing.models import load_agent

        name = str(model)
        agent = load_agent(name)  # resolves "pretrained:NAME"
        if not agent.env_id.startswith("Sokoban-Push"):
            raise ValueError(f"teacher must be a Push-env model, got {name!r} ({agent.env_id})")
        self.agent = agent
        self.name = name
        self.shape = tuple(agent.model.observation_space.shape)
        if self.shape[0] != N_PLANES + 1:
            raise ValueError(f"teacher {name!r} must read the dead-square plane (6 planes)")

    def pushes(self, observations: np.ndarray) -> tuple[list[Any], np.ndarray]:
        """(the rebuilt positions, int64[N] the teacher's Push-env action in each, -1: none).

        ``observations``: Move-env ``uint8[N, C, H, W]`` planes, C = 6 or 7.
        """
        from agents.playing.act import act

        obs = np.asarray(observations)
        if obs.ndim != 4 or tuple(obs.shape[2:]) != self.shape[1:] or obs.shape[1] < self.shape[0]:
            raise ValueError(
                f"teacher {self.name!r} reads {self.shape} planes, got observations {obs.shape}"
            )
        positions = [read_position(o) for o in obs]
        masks = np.stack([push_action_mask(p) for p in positions])
        query = np.array(obs[:, : self.shape[0]])
        query[:, PLANE_PLAYER] = 0
        width = self.shape[2]
        for i, p in enumerate(positions):  # the player on its region's smallest square
            square = p.normalized_player(p.player, p.boxes)
            query[i, PLANE_PLAYER, square // width, square % width] = 1
        pushes = np.full(len(obs), -1, dtype=np.int64)
        rows = np.flatnonzero(masks.any(axis=1))
        for start in range(0, len(rows), BATCH):
            part = rows[start : start + BATCH]
            pushes[part] = act(self.agent.model, query[part], masks[part])
        return positions, pushes

    def label(self, observations: np.ndarray) -> list[tuple[str, int, np.ndarray]]:
        """A label per Move-env observation (``uint8[N, C, H, W]``, C = 6 or 7).

        Returns:
            ("ok", the label's first step, float32[4] walk label), or ("dead", -1, zeros)
            when no push is legal.
        """
        positions, pushes = self.pushes(observations)
        return [_walk_label(p, a) for p, a in zip(positions, pushes.tolist(), strict=True)]


def _walk_label(position: Any, push: int) -> tuple[str, int, np.ndarray]:
    """The walk label toward Push-env action ``push`` in ``position`` (-1: none legal)."""
    label = np.zeros(N_DIRECTIONS, dtype=np.float32)
    if push < 0:
        return ("dead", -1, label)
    square, d = square_push_parts(push)
    stand = square - position.offsets()[d]
    if stand == position.player:
        label[d] = 1.0
        return ("ok", int(d), label)
    steps = position_steps(position, stand)
    if not steps.any():  # cannot happen for a push the mask allows: its side is reachable
        raise RuntimeError(f"no walk to the teacher's push {push} from square {position.player}")
    label[steps] = 1.0 / steps.sum()
    return ("ok", int(np.argmax(steps)), label)


class TeacherPolicy:
    """The teacher as DAgger's rollout expert: ``key`` and ``predict`` as ``PlannerPolicy``.

    Args:
        labeller: anything with ``label(observations)`` giving ``PushTeacher.label``'s labels:
            ``PushTeacher`` itself, or DAgger's ``Labeller``, whose cache then hands the
            rollout's labels to the labelling step instead of computing them twice.
    """

    def __init__(self, labeller: Any) -> None:
        self.labeller = labeller

    def key(self, position: Any) -> Any:
        """The position's key in the Move env (the player's exact square)."""
        return position.key("move")

    def predict(
        self, obs: np.ndarray, state: Any = None, episode_start: Any = None, **_: Any
    ) -> tuple[np.ndarray, None]:
        """The first step of each observation's label (0 where no push is legal)."""
        labels = self.labeller.label(np.asarray(obs))
        return np.array([max(a, 0) for _, a, _ in labels], dtype=np.int64), None
