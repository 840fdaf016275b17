"""Native vector envs: N Sokoban envs stepped in one numba call, with masks and autoreset.

``soko_gym.make_vec("Sokoban-Move-v0", 1024)`` (or ``gym.make_vec(..., vectorization_mode=
"vector_entry_point")``) returns one of these. Sub-env i behaves exactly like the single env
made with the same arguments and stepped with the same actions and level choices.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numba
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from soko_gym.engine import batch as kernels
from soko_gym.engine.actions import KIND_MACRO, KIND_MOVE, KIND_PUSH
from soko_gym.engine.env_bundles import new_env_options, new_env_scratch, new_env_state
from soko_gym.engine.step import compiled
from soko_gym.envs.base import DEFAULT_LEVELS, SokobanEnv
from soko_gym.envs.macro_env import SokobanMacroEnv
from soko_gym.envs.move_env import SokobanMoveEnv
from soko_gym.envs.push_env import SokobanPushEnv
from soko_gym.envs.rewards import StepOutcome
from soko_gym.envs.sources import LevelSource

PARALLEL_FROM = 256  # auto mode: spread envs over numba threads from this many envs on
PREFRAME_UP_TO = 2048  # frame every level at construction for sources up to this size
_INFO_KEYS = (
    "pushes",
    "moves",
    "boxes_on_goals",
    "solved",
    "level_index",
    "illegal_action",
    "deadlock",
    "last_moves",
    "action_mask",
)


class SokobanVectorEnv(VectorEnv):
    """N soko-gym envs of one kind, stepped together in one numba call.

    Arguments are those of the single env (``levels``, ``obs_size``, ``reward_scheme`` ...)
    plus:

    Args:
        num_envs: number of sub-envs.
        max_episode_steps: truncate an episode after this many actions (None: never).
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default: the step after an episode ends
            resets that sub-env and returns its first observation with reward 0) or
            ``AutoresetMode.SAME_STEP`` (reset at once; the last observation and info go to
            ``info["final_obs"]`` and ``info["final_info"]``), or their string values.
        copy: return copies of the observation batch (default); False returns a view that the
            next step overwrites, which is faster.
        parallel: spread sub-envs over numba's threads; None decides by ``num_envs``.

    Info holds arrays over the sub-envs, each with its ``_key`` mask as Gymnasium's vector envs
    do: pushes, moves, boxes_on_goals, solved, level_index, illegal_action, deadlock,
    last_moves, action_mask. ``action_masks()`` returns bool[num_envs, n_actions].
    """

    single_env_class: type[SokobanEnv] = SokobanEnv
    kind: int = -1

    def __init__(
        self,
        num_envs: int = 1,
        levels: Any = DEFAULT_LEVELS,
        *,
        max_episode_steps: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        parallel: bool | None = None,
        render_mode: str | None = None,
        **env_kwargs: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if max_episode_steps is not None and (
            not isinstance(max_episode_steps, int | np.integer) or max_episode_steps < 1
        ):
            raise ValueError(
                f"max_episode_steps must be a positive int or None, got {max_episode_steps!r}"
            )
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(
                f"autoreset_mode must be NEXT_STEP or SAME_STEP, got {autoreset_mode!r}"
            ) from None
        if mode == AutoresetMode.DISABLED:
            raise ValueError("autoreset_mode DISABLED is not supported; use NEXT_STEP or SAME_STEP")
        if render_mode not in (None, "ansi", "rgb_array"):
            raise ValueError(
                f"render_mode must be 'ansi', 'rgb_array' or None, got {render_mode!r}"
            )
        n_env = int(num_envs)
        # the template validates every argument and owns spaces, rewards and fixed levels
        self._template = self.single_env_class(levels, **env_kwargs)
        tpl = self._template
        if tpl._source.generated:  # "generated[:WxH][:N]": one slot per sub-env
            self._source = LevelSource(
                "generated",
                obs_size=tpl.obs_size,
                level_order=tpl._source.level_order,
                generator_kwargs=tpl._source.generator_kwargs,
                n_envs=n_env,
            )
        else:
            self._source = tpl._source
            if self._source.n_levels <= PREFRAME_UP_TO:  # no level building mid-run
                self._source.table.ensure(np.arange(self._source.n_levels), self._source.levels)
        self.num_envs = n_env
        self.render_mode = render_mode
        self.metadata = {
            "autoreset_mode": mode,
            "render_modes": ["ansi", "rgb_array"],
            "render_fps": SokobanEnv.metadata["render_fps"],
        }
        self.single_observation_space = tpl.observation_space
        self.single_action_space = tpl.action_space
        self.observation_space = batch_space(self.single_observation_space, n_env)
        self.action_space = batch_space(self.single_action_space, n_env)
        self.copy = bool(copy)
        self.parallel = n_env >= PARALLEL_FROM if parallel is None else bool(parallel)
        self.max_episode_steps = max_episode_steps
        self._allocate(n_env)

    def _allocate(self, n_env: int) -> None:
        tpl = self._template
        n = tpl._n
        table = self._source.table
        self._opts = new_env_options(
            self.kind,
            tpl._coef,
            self.max_episode_steps or 0,
            tpl.deadlock_termination,
            getattr(tpl, "noop_action", False),
            tpl.deadlock_mask,
            tpl.deadlock_search,
        )
        self._tables = table.kernel_tables(tpl._offsets)
        self._state = new_env_state(
            n_env, n, table.max_boxes, tpl._n_planes, int(tpl.action_space.n)
        )
        self._scratch = new_env_scratch(
            n_env, n, self.kind, False, table.max_boxes, tpl.deadlock_search
        )
        self._out = kernels.new_step_outputs(n_env)
        self._cmd = kernels.new_commands(n_env)
        self._task = self._cmd.task
        self._actions = self._cmd.actions
        self._reset_slot = self._cmd.reset_slot
        self._driver: Any = None  # the batch kernel compiled for these bundles (first use)
        self._level_index = np.full(n_env, -1, dtype=np.int64)
        self._needs_reset = np.zeros(n_env, dtype=bool)
        self._all = np.ones(n_env, dtype=bool)
        self._all.flags.writeable = False
        self._started = False

    # -- kernel call --------------------------------------------------------------------------

    def _run(self) -> int:
        args = (self._opts, self._tables, self._state, self._scratch, self._out, self._cmd)
        if not self.parallel:
            if self._driver is None:
                self._driver = compiled(kernels.batch_kernels(self.kind)[0], *args)
            return int(self._driver(*args))
        n_chunks = 4 * numba.get_num_threads()
        if self._driver is None:
            self._driver = compiled(kernels.batch_kernels(self.kind)[1], n_chunks, *args)
        return int(self._driver(n_chunks, *args))

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_driver"] = None  # compiled functions do not pickle; a copy binds its own
        return state

    def _plan_resets(self, envs: np.ndarray, level_index: Any = None) -> None:
        """Choose levels for the sub-envs ``envs`` and mark them for reset in ``self._task``."""
        src = self._source
        rng = self.np_random
        if src.generated:
            if level_index is not None:
                raise ValueError("options['level_index'] needs fixed levels, not 'generated'")
            for i in envs.tolist():
                self._reset_slot[i] = src.load(i, rng)
                self._level_index[i] = src.n_generated - 1
            # each env's slot now holds a new level: forget the slot, so the kernel's reset
            # re-initialises the env's reachability stamps for the new walls (as the single
            # env does for generated levels)
            self._state.slot[envs] = -1
            return
        k = envs.shape[0]
        if level_index is not None:
            idx = np.broadcast_to(np.asarray(level_index), (self.num_envs,))[envs]
            picked = [src.choose(rng, int(x) if np.ndim(x) == 0 else x) for x in idx.tolist()]
            chosen = np.asarray(picked, dtype=np.int64)
        elif src.level_order == "sequential":
            chosen = np.array([src.choose(rng, None) for _ in range(k)], dtype=np.int64)
        else:
            chosen = rng.integers(src.n_levels, size=k)
        src.table.ensure(chosen, src.levels)
        self._reset_slot[envs] = chosen
        self._level_index[envs] = chosen

    # -- gymnasium API ------------------------------------------------------------------------

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-env (or those in ``options["reset_mask"]``).

        ``options["level_index"]``: one index for all, or one per sub-env.
        """
        if isinstance(seed, list | tuple):
            seed = seed[0] if seed else None  # one generator drives every sub-env's levels
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"level_index", "reset_mask"}
        if unknown:
            raise ValueError(
                f"unknown reset options {sorted(unknown)}; known: ['level_index', 'reset_mask']"
            )
        if seed is not None:
            self._source.restart()
        mask = options.get("reset_mask")
        if mask is None:
            mask = self._all
        else:
            mask = np.asarray(mask, dtype=bool)
            if mask.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must have shape ({self.num_envs},)")
            if not self._started and not mask.all():
                raise ValueError("the first reset must reset every sub-env")
        envs = np.flatnonzero(mask)
        self._task[:] = kernels.TASK_SKIP
        self._task[envs] = kernels.TASK_RESET
        self._plan_resets(envs, options.get("level_index"))
        self._run()
        self._needs_reset[envs] = False
        self._started = True
        return self._observations(), self._infos()

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-env with its action (sub-envs due for a NEXT_STEP reset reset)."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {acts.shape}")
        if not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be integers, got dtype {acts.dtype}")
        n_actions = int(self.single_action_space.n)
        if acts.size and (acts.min() < 0 or acts.max() >= n_actions):
            bad = np.flatnonzero((acts < 0) | (acts >= n_actions)).tolist()
            raise ValueError(f"actions out of range Discrete({n_actions}) for sub-envs {bad}")
        self._actions[:] = acts
        stepping = ~self._needs_reset
        if self._template.illegal_action == "raise":
            masks = self._state.masks
            rows = np.flatnonzero(stepping)
            bad_rows = rows[~masks[rows, self._actions[rows]]]
            if bad_rows.size:
                raise ValueError(
                    f"illegal actions for sub-envs {bad_rows.tolist()} (illegal_action='raise')"
                )
        self._task[:] = kernels.TASK_STEP
        resetting = np.flatnonzero(self._needs_reset)
        if resetting.size:
            self._task[resetting] = kernels.TASK_RESET
            self._plan_resets(resetting)
        reward_fn = self._template._reward_fn
        if reward_fn is not None:
            before = self._state.on_goal.copy()
        n_done = self._run()
        out = self._out
        rewards = out.rewards.copy()
        if reward_fn is not None:
            s = self._state
            rewards = np.asarray(
                reward_fn(
                    StepOutcome(
                        before,
                        s.on_goal.copy(),
                        s.n_boxes.copy(),
                        s.on_goal == s.n_boxes,
                        out.last_moves.copy(),
                        out.last_pushes.copy(),
                        out.illegal.copy(),
                        out.deadlock.copy(),
                    )
                ),
                dtype=np.float64,
            ).reshape(self.num_envs)
            rewards[resetting] = 0.0
        terminated = out.terminated.copy()
        truncated = out.truncated.copy()
        done = terminated | truncated
        if self.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP:
            self._needs_reset = done
            return self._observations(), rewards, terminated, truncated, self._infos()
        infos = self._infos()
        if n_done:
            ended = np.flatnonzero(done)
            final_obs = np.empty(self.num_envs, dtype=object)
            batch = self._observations(force_copy=True)
            for i in ended.tolist():
                final_obs[i] = batch[i]
            infos["final_obs"] = final_obs
            infos["_final_obs"] = done
            infos["final_info"] = {
                k: v.copy() for k, v in infos.items() if not k.startswith("_") and k != "final_obs"
            }
            infos["final_info"].update({f"_{k}": done for k in list(infos["final_info"])})
            infos["_final_info"] = done
            self._task[:] = kernels.TASK_SKIP
            self._task[ended] = kernels.TASK_RESET_KEEP
            self._plan_resets(ended)
            self._run()
            fresh = self._infos()
            for key in _INFO_KEYS:
                infos[key] = fresh[key]
        return self._observations(), rewards, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """Legal actions of every sub-env: bool[num_envs, n_actions]."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before action_masks()")
        return self._state.masks.copy()

    def render(self) -> tuple[Any, ...] | None:
        """One XSB text ("ansi") or RGB frame ("rgb_array") per sub-env."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode=...")
            return None
        planes = self.planes()
        if self.render_mode == "ansi":
            from soko_gym.envs.render.ansi import planes_to_xsb

            return tuple(planes_to_xsb(p) for p in planes)
        from soko_gym.envs.render.rgb import draw_planes_batch

        return tuple(draw_planes_batch(planes, tile_size=max(self._template.tile_size, 16)))

    def planes(self) -> np.ndarray:
        """Observation planes of every sub-env, uint8[num_envs, C, H, W] (a copy)."""
        tpl = self._template
        return self._state.obs.reshape(self.num_envs, tpl._n_planes, *tpl.obs_size).copy()

    # -- helpers ------------------------------------------------------------------------------

    def _observations(self, force_copy: bool = False) -> np.ndarray:
        tpl = self._template
        planes = self._state.obs.reshape(self.num_envs, tpl._n_planes, *tpl.obs_size)
        if tpl.obs_mode == "rgb":
            from soko_gym.envs.render.rgb import draw_planes_batch

            return draw_planes_batch(planes, tile_size=tpl.tile_size)
        return planes.copy() if (self.copy or force_copy) else planes

    def _infos(self) -> dict[str, Any]:
        s, o = self._state, self._out
        info = {
            "pushes": s.pushes.copy(),
            "moves": s.moves.copy(),
            "boxes_on_goals": s.on_goal.copy(),
            "solved": s.on_goal == s.n_boxes,
            "level_index": self._level_index.copy(),
            "illegal_action": o.illegal.copy(),
            "deadlock": o.deadlock.copy(),
            "last_moves": o.last_moves.copy(),
            "action_mask": s.masks.copy(),
        }
        for key in _INFO_KEYS:
            info[f"_{key}"] = self._all
        return info


class SokobanMoveVectorEnv(SokobanVectorEnv):
    """Vector form of ``SokobanMoveEnv`` (see ``SokobanVectorEnv`` for the extra arguments)."""

    single_env_class = SokobanMoveEnv
    kind = KIND_MOVE


class SokobanPushVectorEnv(SokobanVectorEnv):
    """Vector form of ``SokobanPushEnv`` (see ``SokobanVectorEnv`` for the extra arguments)."""

    single_env_class = SokobanPushEnv
    kind = KIND_PUSH


class SokobanMacroVectorEnv(SokobanVectorEnv):
    """Vector form of ``SokobanMacroEnv`` (see ``SokobanVectorEnv`` for the extra arguments)."""

    single_env_class = SokobanMacroEnv
    kind = KIND_MACRO


def make_vec(env_id: str, num_envs: int = 1, **kwargs: Any) -> SokobanVectorEnv:
    """The native vector env of a soko-gym id, e.g. ``make_vec("Sokoban-Push-v0", 256)``.

    Keyword arguments go to ``SokobanVectorEnv`` and the single env; the registered episode
    limit applies unless ``max_episode_steps`` is given.
    """
    import soko_gym  # noqa: F401  (registers the ids)

    env = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
    return env  # type: ignore[return-value]
