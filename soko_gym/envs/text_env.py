"""Sokoban-Text-v0: the board as a string, replies as strings, for language-model agents."""

from __future__ import annotations

import string
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from soko_gym.engine.constants import DIRECTION_DELTAS, PLANE_BOX, PLANE_PLAYER, PLANE_WALL
from soko_gym.envs.base import DEFAULT_LEVELS
from soko_gym.envs.move_env import SokobanMoveEnv
from soko_gym.envs.render.ansi import planes_to_xsb
from soko_gym.envs.rewards import StepOutcome
from soko_gym.envs.text_prompt import INVALID_PREFIX, parse_moves

CHARSET = frozenset(string.printable) - frozenset("\t\r\x0b\x0c")  # what observations are made of
MAX_REPLY = 100_000  # the action space's longest reply; longer ones are still read, never refused
_ACTION_OF = {"u": 0, "d": 1, "l": 2, "r": 3}
_EXCERPT = 40  # characters of an unreadable reply quoted back


def _excerpt(text: str) -> str:
    """A short printable quote of ``text`` for an error line (no newlines, no odd bytes)."""
    cut = text[:_EXCERPT]
    clean = "".join(ch if ch in CHARSET and ch != "\n" else "?" for ch in cut)
    return repr(clean + ("..." if len(text) > _EXCERPT else ""))


def number_board(board: str) -> str:
    """``board`` with 0-based column numbers on top and row numbers on the left.

    Columns of 10 or more get a tens line above the units line; numbers match ``Level.grid``'s
    ``(row, col)`` of the board as shown.
    """
    rows = board.split("\n")
    width = max((len(r) for r in rows), default=0)
    label = len(str(max(len(rows) - 1, 0)))
    pad = " " * (label + 1)
    header = []
    if width > 10:
        header.append(pad + "".join(str(c // 10) if c >= 10 else " " for c in range(width)))
    header.append(pad + "".join(str(c % 10) for c in range(width)))
    body = [f"{r:>{label}} {row}".rstrip() for r, row in enumerate(rows)]
    return "\n".join([h.rstrip() for h in header] + body)


class SokobanTextEnv(gym.Env[str, str]):
    """Sokoban for agents that read and write text: the board as XSB, moves as letters or words.

    ## Description
    The game of ``Sokoban-Move-v0`` (the player walks one square per move and pushes a box by
    walking into it) with text in and out, as language-model agents and reasoning benchmarks
    play it. Levels come from the same sources as every soko-gym env.

    ## Action Space
    ``Text``: a reply. ``u``/``d``/``l``/``r`` in either case, ``up``/``down``/``left``/
    ``right``, or several moves (``"rrdLL"``, ``"up, up, left"``; see
    ``soko_gym.envs.text_prompt.parse_moves``), made in order until the first one that cannot
    be made (a wall, or a box that cannot move), which changes nothing; the rest of the reply
    is ignored. A reply that is not moves changes nothing. Neither ever raises: the reason is
    in ``info["invalid"]`` ("" after a reply applied in full) and on the next observation's
    first line (``"Invalid reply: ..."``). Any string is accepted, of any length; bytes are
    read as UTF-8. A model's whole reply, reasoning included, is reduced to its moves by
    ``soko_gym.envs.text_prompt.parse_reply`` (the harness does this).

    ## Observation Space
    ``Text``: the board in XSB characters, rows separated by newlines (``#`` wall, space floor,
    ``.`` goal, ``$`` box, ``*`` box on goal, ``@`` player, ``+`` player on goal). With
    ``coords=True``, 0-based column numbers on top and row numbers on the left. After a reply
    that was not (fully) applied, a first line says why.

    ## Rewards
    As ``Sokoban-Move-v0`` per move made, summed over the reply (``reward_scheme``, default
    "boxoban": -0.1 per move, +1 / -1 per box onto / off a goal, +10 when solved). The move
    that cannot be made, or a reply that is not moves, costs one move's step penalty.

    ## Episode End
    ``terminated`` when the level is solved (or, with ``deadlock_termination=True``, when a
    push makes a simple deadlock); the rest of that reply is ignored. ``truncated`` after
    ``max_episode_steps`` replies (120 with ``gym.make``), or once ``max_moves`` moves have
    been made (None: no move limit).

    ## Information
    ``invalid`` (why the reply was not applied, or ""), ``applied`` (moves made by this reply),
    ``last_lurd`` (their LURD, uppercase for pushes), ``moves``, ``pushes``,
    ``boxes_on_goals``, ``solved``, ``deadlock``, ``level_index``, ``level_title``.

    ## Arguments
    ``gym.make("Sokoban-Text-v0", levels=..., coords=False, max_moves=None,
    reward_scheme="boxoban", deadlock_termination=False, level_order="random",
    generator_kwargs=None, render_mode=None, tile_size=8, max_episode_steps=120)``.
    ``render_mode``: "ansi" (the board), "rgb_array" and "human" as the other envs.

    ## Version History
    v0: initial release.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 8}

    def __init__(
        self,
        levels: Any = DEFAULT_LEVELS,
        *,
        coords: bool = False,
        max_moves: int | None = None,
        reward_scheme: Any = "boxoban",
        deadlock_termination: bool = False,
        level_order: str = "random",
        generator_kwargs: dict[str, Any] | None = None,
        render_mode: str | None = None,
        tile_size: int = 8,
        obs_size: int | tuple[int, int] | None = None,
    ) -> None:
        if max_moves is not None and (
            isinstance(max_moves, bool) or not isinstance(max_moves, int) or max_moves < 1
        ):
            raise ValueError(f"max_moves must be a positive int or None, got {max_moves!r}")
        self._inner = SokobanMoveEnv(
            levels,
            obs_size=obs_size,
            reward_scheme=reward_scheme,
            deadlock_termination=deadlock_termination,
            level_order=level_order,
            generator_kwargs=generator_kwargs,
            render_mode=render_mode,
            tile_size=tile_size,
        )
        self.render_mode = render_mode
        self.coords = bool(coords)
        self.max_moves = max_moves
        height, width = self._inner.obs_size
        self.observation_space = gym.spaces.Text(
            max_length=(height + 3) * (width + 8) + 200, min_length=1, charset=CHARSET
        )
        self.action_space = gym.spaces.Text(
            max_length=MAX_REPLY, min_length=0, charset=frozenset(string.printable)
        )
        self._error = ""
        self._started = False

    # -- gymnasium API ------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode (``options["level_index"]`` picks a fixed level, as in the others)."""
        super().reset(seed=seed)
        _, info = self._inner.reset(seed=seed, options=options)
        self._error = ""
        self._started = True
        return self._observation(), self._info(info, "", 0, "")

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one reply; see the class docstring. Never raises for what the reply holds."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        inner = self._inner
        reply = action
        if isinstance(reply, bytes | bytearray):
            reply = bytes(reply).decode("utf-8", errors="replace")
        elif isinstance(reply, np.str_):
            reply = str(reply)
        moves = parse_moves(reply) if isinstance(reply, str) else None
        info: dict[str, Any] | None = None  # the last move's, or the position's when none is made
        reward = 0.0
        terminated = truncated = False
        lurd: list[str] = []
        applied = 0
        if not isinstance(reply, str):
            error = f"the reply is a {type(reply).__name__}, not text"
        elif moves is None:
            error = (
                f"{_excerpt(reply)} is not moves (write u, d, l, r or up, down, left, right, "
                "e.g. rrdLL)"
            )
        else:
            error = ""
            for i, letter in enumerate(moves):
                action_id = _ACTION_OF[letter]
                if not inner.action_masks()[action_id]:
                    why = self._blocked(action_id)
                    error = f"move {i + 1} of {len(moves)} ({letter}) cannot be made: {why}"
                    break
                _, r, terminated, _, info = inner.step(action_id)
                reward += float(r)
                lurd.append(info["last_lurd"])
                applied += 1
                if terminated:
                    break
                if self.max_moves is not None and info["moves"] >= self.max_moves:
                    truncated = True
                    break
        if info is None:
            info = inner._info(False, False, 0, 0, "")
        if error:
            reward += self._step_penalty(info)
        self._error = error
        return (
            self._observation(),
            reward,
            bool(terminated),
            truncated,
            self._info(info, error, applied, "".join(lurd)),
        )

    def render(self) -> str | np.ndarray | None:
        """The board text ("ansi"), an RGB frame ("rgb_array") or a window ("human")."""
        if self.render_mode == "ansi":
            if not self._started:
                raise gym.error.ResetNeeded("call reset() before render()")
            return self.board()
        return self._inner.render()

    def close(self) -> None:
        """Close the human-render window, if any."""
        self._inner.close()

    # -- helpers ------------------------------------------------------------------------------

    @property
    def level(self):
        """The Level being played (None before the first reset)."""
        return self._inner.level

    def board(self) -> str:
        """The current board as XSB text (numbered with ``coords=True``), without an error line."""
        text = planes_to_xsb(self._inner.planes())
        return number_board(text) if self.coords else text

    def _observation(self) -> str:
        board = self.board()
        return f"{INVALID_PREFIX}{self._error}\n{board}" if self._error else board

    def _blocked(self, action_id: int) -> str:
        """Why the move ``action_id`` cannot be made in the current position."""
        planes = self._inner.planes()
        r, c = np.argwhere(planes[PLANE_PLAYER])[0]
        dr, dc = DIRECTION_DELTAS[action_id]
        height, width = planes.shape[1:]

        def at(plane: int, k: int) -> bool:
            rr, cc = r + k * dr, c + k * dc
            return bool(0 <= rr < height and 0 <= cc < width and planes[plane, rr, cc])

        if at(PLANE_WALL, 1):
            return "a wall is in the way"
        if at(PLANE_BOX, 1):
            behind = "another box" if at(PLANE_BOX, 2) else "a wall"
            return f"the box cannot be pushed ({behind} is behind it)"
        return "there is no floor there"

    def _step_penalty(self, info: dict[str, Any]) -> float:
        """The reward of a move that changes nothing, as the Move env pays it."""
        inner = self._inner
        if inner._reward_fn is None:
            return float(inner._coef[0])
        on_goal = info["boxes_on_goals"]
        n_boxes = inner._state.n_boxes.item()
        outcome = StepOutcome(on_goal, on_goal, n_boxes, on_goal == n_boxes, 0, 0, True, False)
        return float(inner._reward_fn(outcome))

    def _info(
        self, inner_info: dict[str, Any], error: str, applied: int, lurd: str
    ) -> dict[str, Any]:
        keys = (
            "moves",
            "pushes",
            "boxes_on_goals",
            "solved",
            "deadlock",
            "level_index",
            "level_title",
        )
        info = {key: inner_info[key] for key in keys}
        info.update(invalid=error, applied=applied, last_lurd=lurd)
        return info


__all__ = ["CHARSET", "SokobanTextEnv", "number_board"]
