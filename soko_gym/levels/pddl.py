"""Levels as PDDL planning tasks, and planners' plans back as LURD solutions.

Two styles (``STYLES``), both STRIPS with typing and unit action costs:

- ``"ipc2008"``: the IPC-2008 sequential Sokoban vocabulary. A player and stones placed with
  ``(at ?thing ?loc)``, ``(clear ?loc)`` for a square with neither, ``(move-dir ?from ?to ?dir)``,
  ``(is-goal ?loc)``/``(is-nongoal ?loc)``, ``(at-goal ?stone)``; actions ``move``,
  ``push-to-nongoal`` and ``push-to-goal``; the goal is every stone ``at-goal``. The original
  counts pushes with ``:action-costs``; this one leaves costs out (pyperplan has none).
- ``"ipc2023"``: the IPC-2023 learning-track vocabulary. ``(at-robot ?l)``, ``(at ?b ?l)``,
  ``(clear ?l)`` for a square without a box, ``(adjacent ?from ?to ?dir)``; actions ``move``
  and ``push``. Its goal names a square for each box, chosen by ``goal_assignment``: a
  minimum-cost matching of lone-box push distances. That asks more than the puzzle (any box on
  any goal), so a fixed assignment can make a plan longer, or a solvable level unsolvable.

Locations are the floor squares the player's area covers (boxes count as floor there), named
``pos-RR-CC`` with 1-based row and column, zero-padded to two digits (``pos-03-12``); walls and
the outside are not objects. ``plan_to_lurd`` reads a plan (one ``(action args...)`` per line,
any case, ``;`` comments) and replays it on the level, raising ``ValueError`` with the line
number at the first name it does not know or the first action that is not legal there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from soko_gym.engine.constants import DIRECTION_DELTAS, DIRECTION_NAMES, DIST_INF, FLOOR
from soko_gym.engine.lowerbound import (
    INFINITE_BOUND,
    MATCH_GOAL_OF,
    matching_bound_full,
    new_match_state,
)
from soko_gym.levels.level import Level, Square

STYLES = ("ipc2008", "ipc2023")
DOMAIN_NAMES = {"ipc2008": "sokoban-sequential", "ipc2023": "sokoban"}
PLAYER_2008 = "player-01"
_DIRECTIONS = {  # direction object names by style, in the engine's order (up, down, left, right)
    "ipc2008": tuple(f"dir-{d}" for d in DIRECTION_NAMES),
    "ipc2023": DIRECTION_NAMES,
}
_MOVE_CHARS = "udlr"

_DOMAIN_2008 = """\
; Sokoban in the style of the IPC-2008 sequential domain, written by soko-gym.
; Unit action costs: the original's :action-costs (a cost per push) are left out.
(define (domain sokoban-sequential)
  (:requirements :typing)
  (:types thing location direction - object
          player stone - thing)
  (:predicates
    (clear ?l - location)
    (at ?t - thing ?l - location)
    (at-goal ?s - stone)
    (is-goal ?l - location)
    (is-nongoal ?l - location)
    (move-dir ?from ?to - location ?dir - direction))

  (:action move
    :parameters (?p - player ?from ?to - location ?dir - direction)
    :precondition (and (at ?p ?from) (clear ?to) (move-dir ?from ?to ?dir))
    :effect (and (not (at ?p ?from)) (not (clear ?to)) (at ?p ?to) (clear ?from)))

  (:action push-to-nongoal
    :parameters (?p - player ?s - stone ?ppos ?from ?to - location ?dir - direction)
    :precondition (and (at ?p ?ppos) (at ?s ?from) (clear ?to)
                       (move-dir ?ppos ?from ?dir) (move-dir ?from ?to ?dir)
                       (is-nongoal ?to))
    :effect (and (not (at ?p ?ppos)) (not (at ?s ?from)) (not (clear ?to))
                 (at ?p ?from) (at ?s ?to) (clear ?ppos) (not (at-goal ?s))))

  (:action push-to-goal
    :parameters (?p - player ?s - stone ?ppos ?from ?to - location ?dir - direction)
    :precondition (and (at ?p ?ppos) (at ?s ?from) (clear ?to)
                       (move-dir ?ppos ?from ?dir) (move-dir ?from ?to ?dir)
                       (is-goal ?to))
    :effect (and (not (at ?p ?ppos)) (not (at ?s ?from)) (not (clear ?to))
                 (at ?p ?from) (at ?s ?to) (clear ?ppos) (at-goal ?s))))
"""

_DOMAIN_2023 = """\
; Sokoban in the style of the IPC-2023 learning track, written by soko-gym.
; (clear ?l): no box on ?l (the robot's own square is clear).
(define (domain sokoban)
  (:requirements :strips :typing)
  (:types location direction box)
  (:predicates
    (at-robot ?l - location)
    (at ?b - box ?l - location)
    (adjacent ?from ?to - location ?dir - direction)
    (clear ?l - location))

  (:action move
    :parameters (?from ?to - location ?dir - direction)
    :precondition (and (at-robot ?from) (clear ?to) (adjacent ?from ?to ?dir))
    :effect (and (not (at-robot ?from)) (at-robot ?to)))

  (:action push
    :parameters (?rloc ?bloc ?floc - location ?dir - direction ?b - box)
    :precondition (and (at-robot ?rloc) (at ?b ?bloc) (clear ?floc)
                       (adjacent ?rloc ?bloc ?dir) (adjacent ?bloc ?floc ?dir))
    :effect (and (not (at-robot ?rloc)) (at-robot ?bloc)
                 (not (at ?b ?bloc)) (at ?b ?floc)
                 (clear ?bloc) (not (clear ?floc)))))
"""


def _check_style(style: str) -> str:
    if style not in STYLES:
        raise ValueError(f"unknown PDDL style {style!r}; styles: {', '.join(STYLES)}")
    return style


def domain_pddl(style: str) -> str:
    """The domain file of ``style`` (``"ipc2008"`` or ``"ipc2023"``)."""
    return _DOMAIN_2008 if _check_style(style) == "ipc2008" else _DOMAIN_2023


def location_name(square: Square) -> str:
    """The object name of a (row, col) square, 0-based in: ``(2, 11)`` is ``pos-03-12``."""
    return f"pos-{square[0] + 1:02d}-{square[1] + 1:02d}"


def box_names(level: Level, style: str) -> list[str]:
    """The object names of the boxes in ``level.boxes`` order (reading order)."""
    if _check_style(style) == "ipc2008":
        return [f"stone-{i + 1:02d}" for i in range(level.n_boxes)]
    return [f"box{i + 1}" for i in range(level.n_boxes)]


@dataclass(frozen=True)
class _Area:
    """The locations of a level: the player's floor area, boxes counted as floor."""

    level: Level

    @cached_property
    def squares(self) -> list[Square]:
        """The location squares in reading order.

        A box or goal outside the player's area (a level that allows it is odd, and has no
        solution unless that box sits on a goal) is a location too, with no neighbours.
        """
        grid = self.level.grid
        h, w = grid.shape
        seen = {self.level.player}
        stack = [self.level.player]
        while stack:
            r, c = stack.pop()
            for dr, dc in DIRECTION_DELTAS:
                nb = (r + dr, c + dc)
                if 0 <= nb[0] < h and 0 <= nb[1] < w and nb not in seen and grid[nb] != "#":
                    seen.add(nb)
                    stack.append(nb)
        seen.update(self.level.boxes)
        seen.update(self.level.goals)
        return sorted(seen)

    @cached_property
    def names(self) -> dict[Square, str]:
        """Square -> location name."""
        return {sq: location_name(sq) for sq in self.squares}

    @cached_property
    def by_name(self) -> dict[str, Square]:
        """Location name -> square."""
        return {name: sq for sq, name in self.names.items()}

    @cached_property
    def is_goal(self) -> frozenset[Square]:
        """The goal squares."""
        return frozenset(self.level.goals)

    def neighbour(self, square: Square, d: int) -> Square | None:
        """The location next to ``square`` in direction ``d``, None for a wall or the outside."""
        nb = (square[0] + DIRECTION_DELTAS[d][0], square[1] + DIRECTION_DELTAS[d][1])
        return nb if nb in self.names else None

    def edges(self) -> list[tuple[Square, Square, int]]:
        """Every (from, to, direction) between neighbouring locations."""
        return [
            (sq, nb, d)
            for sq in self.squares
            for d in range(4)
            if (nb := self.neighbour(sq, d)) is not None
        ]


def push_distance_table(level: Level) -> np.ndarray:
    """Lone-box push distances from each box's start to each goal: int64[n_boxes, n_goals].

    Entry ``[i, j]`` is the fewest pushes that bring box ``i`` (``level.boxes`` order), alone
    on the board, to goal ``j`` (``level.goals`` order) with the player starting where it
    stands; 0 for a box already on that goal; -1 where no push path exists.
    """
    board = level.board
    w = board.width
    player = level.player[0] * w + level.player[1]
    goal_index = {int(sq): j for j, sq in enumerate(board.goals)}
    order = [goal_index[r * w + c] for r, c in level.goals]  # level.goals -> board.goals rows
    out = np.full((level.n_boxes, len(order)), -1, dtype=np.int64)
    for i, (r, c) in enumerate(level.boxes):
        box = r * w + c
        sides = _reachable_sides(board.cells, board.offsets, box, player)
        for j, g in enumerate(order):
            if int(board.goals[g]) == box:
                out[i, j] = 0
            elif sides:
                d = min(int(board.push_dist[g, box, s]) for s in sides)
                out[i, j] = -1 if d == DIST_INF else d
    return out


def _reachable_sides(cells: np.ndarray, offsets: np.ndarray, box: int, player: int) -> list[int]:
    """The sides of ``box`` the player reaches from ``player`` with no other box on the board."""
    seen = {box, player}
    stack = [player]
    while stack:
        cur = stack.pop()
        for off in offsets:
            nb = cur + int(off)
            if cells[nb] & FLOOR and nb not in seen:
                seen.add(nb)
                stack.append(nb)
    return [s for s in range(4) if box + int(offsets[s]) in seen]


def goal_assignment(level: Level) -> list[Square]:
    """The goal square of each box (``level.boxes`` order): a minimum-cost matching.

    Costs are ``push_distance_table``'s; the matching is the engine's (the Hungarian method of
    ``engine.lowerbound``, the matching lower bound's solver) on that table.

    Raises:
        ValueError: naming the level when no matching of every box to its own goal along
            finite push distances exists.
    """
    table = push_distance_table(level)
    n = level.n_boxes
    costs = np.where(table < 0, int(DIST_INF), table).T.astype(np.uint16)  # [goal, box]
    match, work = new_match_state(n)
    bound = matching_bound_full(
        np.ascontiguousarray(costs), np.arange(n, dtype=np.int32), match, work
    )
    if bound == INFINITE_BOUND:
        label = repr(level.title) if level.title else "the level"
        raise ValueError(
            f"{label}: no assignment of its boxes to distinct goals has a push path for every "
            "box (lone-box push distances), so the ipc2023 style cannot name a goal per box"
        )
    return [level.goals[int(j)] for j in match[MATCH_GOAL_OF]]


def pddl_name(text: str, default: str = "sokoban") -> str:
    """``text`` as a PDDL name: lowercase letters, digits and ``-``, starting with a letter."""
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if not name:
        return default
    return name if name[0].isalpha() else f"{default}-{name}"


def _wrap(facts: Sequence[str], indent: str) -> str:
    return "\n".join(indent + f for f in facts)


def problem_pddl(level: Level, style: str, name: str | None = None) -> str:
    """The problem file of ``level`` in ``style``; ``name`` defaults to the title's.

    The level's board is copied into the file's leading ``;`` comment lines.

    Raises:
        ValueError: for an unknown style; with ``"ipc2023"``, as ``goal_assignment`` does.
    """
    _check_style(style)
    area = _Area(level)
    names = area.names
    dirs = _DIRECTIONS[style]
    boxes = box_names(level, style)
    assigned = goal_assignment(level) if style == "ipc2023" else []
    box_at = dict(zip(level.boxes, boxes, strict=True))
    init: list[str] = []
    if style == "ipc2008":
        init.append(f"(at {PLAYER_2008} {names[level.player]})")
        init += [f"(at {b} {names[sq]})" for sq, b in box_at.items()]
        init += [f"(at-goal {b})" for sq, b in box_at.items() if sq in area.is_goal]
        taken = {level.player, *level.boxes}
        init += [f"(clear {names[sq]})" for sq in area.squares if sq not in taken]
        init += [
            f"({'is-goal' if sq in area.is_goal else 'is-nongoal'} {names[sq]})"
            for sq in area.squares
        ]
        init += [f"(move-dir {names[a]} {names[b]} {dirs[d]})" for a, b, d in area.edges()]
        goal = [f"(at-goal {b})" for b in boxes]
        objects = [
            f"{PLAYER_2008} - player",
            " ".join(boxes) + " - stone",
            " ".join(dirs) + " - direction",
        ]
    else:
        init.append(f"(at-robot {names[level.player]})")
        init += [f"(at {b} {names[sq]})" for sq, b in box_at.items()]
        init += [f"(clear {names[sq]})" for sq in area.squares if sq not in box_at]
        init += [f"(adjacent {names[a]} {names[b]} {dirs[d]})" for a, b, d in area.edges()]
        goal = [f"(at {b} {names[g]})" for b, g in zip(boxes, assigned, strict=True)]
        objects = [" ".join(boxes) + " - box", " ".join(dirs) + " - direction"]
    squares = area.squares
    objects += [
        " ".join(names[sq] for sq in squares[i : i + 8]) + " - location"
        for i in range(0, len(squares), 8)
    ]
    header = [f"; {level.title}" if level.title else "; (untitled level)"]
    header += [f"; {row}" for row in level.rows]
    problem = pddl_name(name if name is not None else level.title)
    return (
        "\n".join(header)
        + f"\n(define (problem {problem})\n  (:domain {DOMAIN_NAMES[style]})\n"
        + "  (:objects\n"
        + _wrap(objects, "    ")
        + ")\n  (:init\n"
        + _wrap(init, "    ")
        + ")\n  (:goal (and\n"
        + _wrap(goal, "    ")
        + ")))\n"
    )


# -- plans back to LURD --------------------------------------------------------------------

# one action per line: "(name arg ...)", optionally after a "step:" number and before a
# "[duration]" (the forms planners' plan files use); ';' starts a comment
_PLAN_LINE = re.compile(r"^(?:\d+(?:\.\d+)?\s*:\s*)?\(\s*(?P<body>[^()]*?)\s*\)(?:\s*\[[^\]]*\])?$")
_ARITY = {
    "ipc2008": {"move": 4, "push-to-nongoal": 6, "push-to-goal": 6},
    "ipc2023": {"move": 3, "push": 5},
}


def read_plan(plan_text: str) -> list[tuple[int, list[str]]]:
    """The actions of a plan: (1-based line number, [name, args...]) lowercased, in order.

    Raises:
        ValueError: naming the first line that is neither blank, a comment nor one action.
    """
    actions = []
    for number, raw in enumerate(plan_text.splitlines(), 1):
        line = raw.split(";", 1)[0].strip()
        if not line:
            continue
        m = _PLAN_LINE.match(line)
        if m is None or not m["body"]:
            raise ValueError(f"plan line {number}: not an action '(name arg ...)': {raw.strip()}")
        actions.append((number, m["body"].lower().split()))
    return actions


def plan_style(plan_text: str) -> str:
    """The style a plan was made in, told by its first action's name and argument count.

    Raises:
        ValueError: for a plan with no action, or whose first action is in neither style.
    """
    actions = read_plan(plan_text)
    if not actions:
        raise ValueError("the plan holds no action")
    number, (name, *args) = actions[0]
    for style in STYLES:
        if _ARITY[style].get(name) == len(args):
            return style
    raise ValueError(
        f"plan line {number}: ({name} with {len(args)} arguments) is an action of neither "
        f"style ({', '.join(STYLES)})"
    )


class _Replay:
    """The position while a plan is replayed: the player, the boxes by name, the LURD so far."""

    def __init__(self, level: Level, style: str):
        self.area = _Area(level)
        self.style = style
        self.player = level.player
        self.box_of = dict(zip(level.boxes, box_names(level, style), strict=True))
        self.square_of = {b: sq for sq, b in self.box_of.items()}
        self.dirs = {name: d for d, name in enumerate(_DIRECTIONS[style])}
        self.lurd: list[str] = []

    def location(self, name: str) -> Square:
        if name not in self.area.by_name:
            raise ValueError(f"no location {name!r} in this level")
        return self.area.by_name[name]

    def direction(self, name: str) -> int:
        if name not in self.dirs:
            raise ValueError(f"{name!r} is not a direction ({', '.join(self.dirs)})")
        return self.dirs[name]

    def box(self, name: str) -> str:
        if name not in self.square_of:
            raise ValueError(f"no box {name!r} in this level")
        return name

    def step(self, frm: Square, to: Square, d: int) -> None:
        """Check that ``to`` is ``frm``'s neighbour in direction ``d``."""
        if self.area.neighbour(frm, d) != to:
            raise ValueError(
                f"{location_name(to)} is not the location {_DIRECTIONS[self.style][d]} "
                f"of {location_name(frm)}"
            )

    def move(self, frm: Square, to: Square, d: int) -> None:
        if self.player != frm:
            raise ValueError(
                f"the player is on {location_name(self.player)}, not on {location_name(frm)}"
            )
        self.step(frm, to, d)
        if to in self.box_of:
            raise ValueError(f"{location_name(to)} holds {self.box_of[to]}: a move needs it clear")
        self.player = to
        self.lurd.append(_MOVE_CHARS[d])

    def push(self, box: str, ppos: Square, frm: Square, to: Square, d: int) -> None:
        if self.player != ppos:
            raise ValueError(
                f"the player is on {location_name(self.player)}, not on {location_name(ppos)}"
            )
        if self.square_of[box] != frm:
            raise ValueError(
                f"{box} is on {location_name(self.square_of[box])}, not on {location_name(frm)}"
            )
        self.step(ppos, frm, d)
        self.step(frm, to, d)
        if to in self.box_of:
            raise ValueError(f"{location_name(to)} holds {self.box_of[to]}: the push is blocked")
        del self.box_of[frm]
        self.box_of[to] = box
        self.square_of[box] = to
        self.player = frm
        self.lurd.append(_MOVE_CHARS[d].upper())

    def apply(self, name: str, args: list[str]) -> None:
        arity = _ARITY[self.style]
        if name not in arity:
            raise ValueError(
                f"unknown action {name!r} (the {self.style} actions: {', '.join(arity)})"
            )
        if len(args) != arity[name]:
            raise ValueError(f"{name} takes {arity[name]} arguments, got {len(args)}")
        if self.style == "ipc2023":
            if name == "move":
                self.move(self.location(args[0]), self.location(args[1]), self.direction(args[2]))
            else:
                rloc, bloc, floc = (self.location(a) for a in args[:3])
                self.push(self.box(args[4]), rloc, bloc, floc, self.direction(args[3]))
            return
        if args[0] != PLAYER_2008:
            raise ValueError(f"{args[0]!r} is not the player ({PLAYER_2008})")
        if name == "move":
            self.move(self.location(args[1]), self.location(args[2]), self.direction(args[3]))
            return
        box = self.box(args[1])
        ppos, frm, to = (self.location(a) for a in args[2:5])
        onto_goal = to in self.area.is_goal
        if onto_goal != (name == "push-to-goal"):
            kind = "a goal" if onto_goal else "not a goal"
            raise ValueError(f"{location_name(to)} is {kind}: {name} does not apply")
        self.push(box, ppos, frm, to, self.direction(args[5]))


def plan_to_lurd(level: Level, plan_text: str, style: str | None = None) -> str:
    """The LURD string of a plan for ``level``'s problem file in ``style``.

    Every action is replayed on the level: its names must be the problem file's objects and
    its preconditions must hold. The result is legal step by step; whether it solves the level
    is ``soko_gym.verify``'s to say (an ipc2023 plan, say, may stop with its boxes on goals).

    Args:
        level: the level the problem file was written for.
        plan_text: the plan, one ``(action arg ...)`` per line, any case; ``;`` comments and
            blank lines are skipped (pyperplan's ``.soln`` files, Fast Downward's ``sas_plan``).
        style: ``"ipc2008"`` or ``"ipc2023"``; None tells it from the first action.

    Raises:
        ValueError: naming the plan line of the first unreadable line, unknown action, wrong
            argument count, unknown location, box or direction, or unmet precondition.
    """
    style = plan_style(plan_text) if style is None else _check_style(style)
    replay = _Replay(level, style)
    for number, (name, *args) in read_plan(plan_text):
        try:
            replay.apply(name, args)
        except ValueError as err:
            raise ValueError(f"plan line {number}: {err}: ({name} {' '.join(args)})") from None
    return "".join(replay.lurd)
