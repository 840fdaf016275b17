"""SokobanEnv: what the push, macro and move envs share (levels, frame, rewards, masks, render).

A single env is a batch of one for the engine's per-env kernels: ``reset`` and ``step`` call
its kind's ``engine.step.env_kernels(kind)`` (``env_reset_*``, ``env_step_*``) on row 0 of
its bundles, the code a vector env loops over. Subclasses name their ``kind``
(``engine.actions.KIND_*``) and document it.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from soko_gym.engine.actions import n_actions
from soko_gym.engine.constants import DIRECTION_DELTAS, N_PLANES, PLANE_NAMES, SQUARE_DTYPE
from soko_gym.engine.env_bundles import new_env_options, new_env_scratch, new_env_state
from soko_gym.engine.step import compiled, env_kernels
from soko_gym.envs.observation import observation_space
from soko_gym.envs.rewards import RewardFn, RewardScheme, StepOutcome, resolve_reward
from soko_gym.envs.sources import LevelSource

OBS_MODES = ("planes", "rgb")
ILLEGAL_ACTION_MODES = ("noop", "raise")
DEFAULT_LEVELS = "boxoban-unfiltered-train"


def frame_offsets(width: int) -> np.ndarray:
    """int32[4] flat index step per direction on a frame ``width`` squares wide."""
    return np.array([dr * width + dc for dr, dc in DIRECTION_DELTAS], dtype=SQUARE_DTYPE)


def as_action(action: Any, n_actions: int) -> int:
    """``action`` as a Python int in ``[0, n_actions)``.

    Raises:
        ValueError: naming the action when it is not an integer or out of range.
    """
    if type(action) is int or type(action) is np.int64:  # the common case, checked fast
        if 0 <= action < n_actions:
            return int(action)
        raise ValueError(
            f"action {action} is out of range: the action space is Discrete({n_actions})"
        )
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action[()]
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        raise ValueError(f"action must be an integer, got {action!r} ({type(action).__name__})")
    a = int(action)
    if not 0 <= a < n_actions:
        raise ValueError(f"action {a} is out of range: the action space is Discrete({n_actions})")
    return a


class SokobanEnv(gym.Env[np.ndarray, np.int64], ABC):
    """Base class of the soko-gym environments (see the subclasses for the documentation)."""

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 8}
    trail_plane = False  # the Move env's option: a plane of the player's square one action ago

    def __init__(
        self,
        levels: Any = DEFAULT_LEVELS,
        *,
        obs_size: int | tuple[int, int] | None = None,
        obs_mode: str = "planes",
        dead_plane: bool = False,
        tile_size: int = 8,
        reward_scheme: str | RewardScheme | RewardFn = "boxoban",
        illegal_action: str = "noop",
        deadlock_termination: bool = False,
        deadlock_mask: bool = False,
        deadlock_search: int = 0,
        level_order: str = "random",
        generator_kwargs: dict[str, Any] | None = None,
        render_mode: str | None = None,
        **unknown: Any,
    ) -> None:
        if unknown:
            raise ValueError(
                f"unknown argument(s) {sorted(unknown)} for {type(self).__name__}; see its "
                "docstring for the arguments"
            )
        if obs_mode not in OBS_MODES:
            raise ValueError(f"obs_mode must be one of {OBS_MODES}, got {obs_mode!r}")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(
                f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {illegal_action!r}"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        if isinstance(tile_size, bool) or not isinstance(tile_size, int) or tile_size < 1:
            raise ValueError(f"tile_size must be a positive int, got {tile_size!r}")
        if (
            isinstance(deadlock_search, bool)
            or not isinstance(deadlock_search, int | np.integer)
            or deadlock_search < 0
        ):
            raise ValueError(
                f"deadlock_search must be an int >= 0 (positions per search; 0: off), "
                f"got {deadlock_search!r}"
            )
        self.render_mode = render_mode
        self.obs_mode = obs_mode
        self.dead_plane = bool(dead_plane)
        self.tile_size = tile_size
        self.illegal_action = illegal_action
        self.deadlock_termination = bool(deadlock_termination)
        self.deadlock_mask = bool(deadlock_mask)
        self.deadlock_search = int(deadlock_search)
        self._coef, self._reward_fn = resolve_reward(reward_scheme)
        self._source = LevelSource(
            levels,
            obs_size=obs_size,
            level_order=level_order,
            generator_kwargs=generator_kwargs,
        )
        self.obs_size = self._source.size
        height, width = self.obs_size
        n = height * width
        self._n = n
        self._offsets = frame_offsets(width)
        self._n_planes = N_PLANES + int(self.dead_plane) + int(self.trail_plane)
        self.observation_space = observation_space(
            self.obs_size, obs_mode, self._n_planes, tile_size
        )
        self.action_space = gym.spaces.Discrete(self._n_actions())
        table = self._source.table
        self._opts = new_env_options(
            self.kind,
            self._coef,
            0,  # no step limit here: gym.make's TimeLimit truncates the single env
            self.deadlock_termination,
            getattr(self, "noop_action", False),
            self.deadlock_mask,
            self.deadlock_search,
        )
        self._tables = table.kernel_tables(self._offsets)
        self._state = new_env_state(1, n, table.max_boxes, self._n_planes, int(self.action_space.n))
        self._scratch = new_env_scratch(
            1, n, self.kind, True, table.max_boxes, self.deadlock_search
        )
        self._kernels: tuple[Any, Any] | None = None  # compiled env_reset and env_step
        self._slot = -1  # table slot of the current level; -1 before the first reset
        self._level_index = -1
        self._human = None
        _show_wrapped_envs_in_ipython()

    # -- hooks for the subclasses -------------------------------------------------------------

    @property
    @abstractmethod
    def kind(self) -> int:
        """The env kind, ``engine.actions.KIND_MOVE``, ``KIND_PUSH`` or ``KIND_MACRO``."""

    def _n_actions(self) -> int:
        """Size of the Discrete action space."""
        return n_actions(self.kind, self._n, getattr(self, "noop_action", False))

    # -- gymnasium API ------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode on a level drawn from the source (or ``options["level_index"]``)."""
        super().reset(seed=seed)
        options = options or {}
        unknown = set(options) - {"level_index"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; known: ['level_index']")
        src = self._source
        if seed is not None:
            src.restart()
        if src.generated:
            if options.get("level_index") is not None:
                raise ValueError("options['level_index'] needs fixed levels, not 'generated'")
            slot = src.load(0, self.np_random)
            self._level_index = src.n_generated - 1
            # the slot now holds a new level: forget it, so the reset re-reads its walls
            self._state.slot[0] = -1
        else:
            self._level_index = src.choose(self.np_random, options.get("level_index"))
            slot = src.load(self._level_index, self.np_random)
        self._slot = slot
        reset_kernel = self._compiled()[0]
        reset_kernel(self._opts, self._tables, self._state, self._scratch, 0, slot)
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info(False, False, 0, 0, "")

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one action; see the class docstring for its meaning and the rewards."""
        if self._slot < 0:
            raise gym.error.ResetNeeded("call reset() before step()")
        a = as_action(action, int(self.action_space.n))
        state = self._state
        reward_fn = self._reward_fn
        before = state.on_goal.item() if reward_fn is not None else 0
        step_kernel = (self._kernels or self._compiled())[1]
        reward, terminated, _, illegal, deadlock, moves, pushes = step_kernel(
            self._opts, self._tables, state, self._scratch, 0, a
        )
        if illegal and self.illegal_action == "raise":
            raise ValueError(f"action {a} is illegal in this position (illegal_action='raise')")
        if reward_fn is not None:
            on_goal, n_boxes = state.on_goal.item(), state.n_boxes.item()
            outcome = StepOutcome(
                before, on_goal, n_boxes, on_goal == n_boxes, moves, pushes, illegal, deadlock
            )
            reward = float(reward_fn(outcome))
        if self.render_mode == "human":
            self.render()
        lurd = self._scratch.lurd[0, :moves].tobytes().decode("ascii")
        info = self._info(illegal, deadlock, moves, pushes, lurd)
        return self._observation(), reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the current position: bool[n_actions] (MaskablePPO convention)."""
        if self._slot < 0:
            raise gym.error.ResetNeeded("call reset() before action_masks()")
        return self._state.masks[0].copy()

    def render(self) -> str | np.ndarray | None:
        """XSB text ("ansi"), an RGB frame ("rgb_array"), or a window ("human")."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode=...")
            return None
        if self._slot < 0:
            raise gym.error.ResetNeeded("call reset() before render()")
        planes = self.planes()
        if self.render_mode == "ansi":
            from soko_gym.envs.render.ansi import planes_to_xsb

            return planes_to_xsb(planes)
        from soko_gym.envs.render.rgb import draw_planes

        frame = draw_planes(planes, tile_size=max(self.tile_size, 16))
        if self.render_mode == "rgb_array":
            return frame
        if self._human is None:
            from soko_gym.envs.render.human import HumanRenderer

            self._human = HumanRenderer(caption=type(self).__name__)
        self._human.show(frame, self.metadata["render_fps"])
        return None

    def _repr_png_(self) -> bytes | None:
        """The current position as PNG bytes, so Jupyter shows the env as a picture.

        None before the first reset, so the text repr is shown instead.
        """
        if self._slot < 0:
            return None
        from soko_gym.envs.render.rgb import draw_planes
        from soko_gym.levels.picture import png_bytes

        return png_bytes(draw_planes(self.planes(), tile_size=max(self.tile_size, 16)))

    def close(self) -> None:
        """Close the human-render window, if any."""
        if self._human is not None:
            self._human.close()
            self._human = None

    # -- helpers ------------------------------------------------------------------------------

    def planes(self) -> np.ndarray:
        """The current observation planes, uint8[C, H, W] (a copy), whatever ``obs_mode``."""
        return self._state.obs[0].reshape(self._n_planes, *self.obs_size).copy()

    @property
    def level(self):
        """The Level being played (None before the first reset)."""
        return None if self._slot < 0 else self._source.table.levels[self._slot]

    def square(self, row: int, col: int) -> int:
        """Frame square of the current level's ``(row, col)`` (as in ``Level.grid``).

        Action indices use frame squares (see ``soko_gym.engine.actions``):
        ``square_push_action(square, direction)`` in the push env,
        ``macro_action(from_square, to_square, H * W)`` in the macro env.
        """
        level = self.level
        if level is None:
            raise gym.error.ResetNeeded("call reset() before square()")
        if not (0 <= row < level.height and 0 <= col < level.width):
            raise ValueError(f"(row, col) = ({row}, {col}) is outside the level")
        height, width = self.obs_size
        r0, c0 = (height - level.height) // 2, (width - level.width) // 2
        return (row + r0) * width + col + c0

    @property
    def plane_names(self) -> tuple[str, ...]:
        """Names of the observation planes, in channel order."""
        return PLANE_NAMES[: self._n_planes]

    def _compiled(self) -> tuple[Any, Any]:
        """``env_reset`` and ``env_step`` compiled for this env's bundles (bound on first use)."""
        if self._kernels is None:
            args = (self._opts, self._tables, self._state, self._scratch, 0, 0)
            reset, step = env_kernels(self.kind)
            self._kernels = (compiled(reset, *args), compiled(step, *args))
        return self._kernels

    def _observation(self) -> np.ndarray:
        planes = self._state.obs[0].reshape(self._n_planes, *self.obs_size)
        if self.obs_mode == "planes":
            return planes.copy()
        from soko_gym.envs.render.rgb import draw_planes

        return draw_planes(planes, tile_size=self.tile_size)

    def _info(
        self, illegal: bool, deadlock: bool, last_moves: int, last_pushes: int, last_lurd: str
    ) -> dict:
        state = self._state
        on_goal = state.on_goal.item()
        level = self._source.table.levels[self._slot]
        return {
            "pushes": state.pushes.item(),
            "moves": state.moves.item(),
            "boxes_on_goals": on_goal,
            "solved": on_goal == state.n_boxes.item(),
            "level_index": self._level_index,
            "level_title": level.title,
            "illegal_action": illegal,
            "deadlock": deadlock,
            "last_moves": last_moves,
            "last_lurd": last_lurd,
            "action_mask": state.masks[0].copy(),
        }

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_human"] = None  # a window does not pickle; a copy opens its own
        state["_kernels"] = None  # compiled functions do not pickle; a copy binds its own
        return state


def _wrapper_png(wrapper: gym.Wrapper) -> bytes | None:
    """PNG of a wrapped soko-gym env (a wrapper's own ``_repr_png_`` comes first)."""
    own = getattr(type(wrapper), "_repr_png_", None)
    if own is not None:
        return own(wrapper)
    env = wrapper.unwrapped
    return env._repr_png_() if isinstance(env, SokobanEnv) else None


def _show_wrapped_envs_in_ipython() -> None:
    """Let IPython draw what ``gym.make`` returns (wrappers around the env) as the env.

    Gymnasium's wrappers do not forward ``_repr_png_``, so without this only
    ``env.unwrapped`` shows as a picture in Jupyter. Only acts inside a running IPython
    (never imports it); other wrapped envs keep their usual repr.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(gym.Wrapper, _wrapper_png)
