"""Sokoban-Text-v0: text observations, text replies that never raise, the Move env's game."""

from __future__ import annotations

import random
import string

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import soko_gym  # noqa: F401  (registers the env ids)
from planners import solve
from soko_gym.envs.render.ansi import planes_to_xsb
from soko_gym.envs.text_env import SokobanTextEnv, number_board
from soko_gym.envs.text_prompt import INVALID_PREFIX
from soko_gym.levels import Level, verify
from soko_gym.levels.packs import indexed_levels

CORRIDOR = "#######\n#@$  .#\n#######"


def _text_env(levels="microban:1-5", **kwargs) -> gym.Env:
    return gym.make("Sokoban-Text-v0", levels=levels, level_order="sequential", **kwargs)


def test_text_env__passes_gymnasiums_env_checker():
    check_env(SokobanTextEnv("microban:1-3"), skip_render_check=True)


def test_text_env__reset_shows_the_level_as_xsb():
    env = _text_env()
    obs, info = env.reset(seed=0, options={"level_index": 0})
    level = indexed_levels("microban:1")[0][1]
    assert Level.from_xsb(obs).board.start_boxes.tolist() == level.board.start_boxes.tolist()
    assert info["invalid"] == "" and info["moves"] == 0 and not info["solved"]
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("number", [1, 2, 3])
def test_text_env__solves_a_level_fed_a_planners_solution_one_move_at_a_time(number):
    level = indexed_levels(f"microban:{number}")[0][1]
    lurd = solve(level, "astar").lurd
    env = _text_env([level], max_episode_steps=len(lurd) + 1)
    env.reset(seed=0)
    made = []
    for i, move in enumerate(lurd):
        obs, reward, terminated, truncated, info = env.step(move)
        assert info["invalid"] == "" and info["applied"] == 1
        made.append(info["last_lurd"])
        assert terminated == (i == len(lurd) - 1)
    assert info["solved"] and "".join(made) == lurd and verify(level, "".join(made)).ok


@pytest.mark.parametrize("number", [1, 2, 3])
def test_text_env__solves_a_level_fed_a_planners_solution_all_at_once(number):
    level = indexed_levels(f"microban:{number}")[0][1]
    lurd = solve(level, "astar").lurd
    env = _text_env([level])
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(lurd)
    assert terminated and not truncated and info["solved"]
    assert info["applied"] == len(lurd) and info["last_lurd"] == lurd
    assert reward == pytest.approx(-0.1 * len(lurd) + level.n_boxes * 1.0 + 10.0, abs=2.0)


def test_text_env__moves_after_the_solving_one_are_ignored():
    env = _text_env([Level.from_xsb(CORRIDOR)])
    env.reset(seed=0)
    _, _, terminated, _, info = env.step("RRRllll")
    assert terminated and info["applied"] == 3 and info["last_lurd"] == "RRR"


@pytest.mark.parametrize(
    ("reply", "moves"),
    [("r", "R"), ("R", "R"), ("right", "R"), ("RIGHT", "R"), ("r, r", "RR"), ("right right", "RR")],
)
def test_text_env__reads_letters_and_words_in_either_case(reply, moves):
    env = _text_env([Level.from_xsb(CORRIDOR)])
    env.reset(seed=0)
    _, _, _, _, info = env.step(reply)
    assert info["invalid"] == "" and info["last_lurd"] == moves


def test_text_env__a_move_into_a_wall_changes_nothing_costs_the_step_and_says_why():
    env = _text_env([Level.from_xsb(CORRIDOR)])
    obs0, _ = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("u")
    assert reward == pytest.approx(-0.1) and not terminated and not truncated
    assert info["applied"] == 0 and info["moves"] == 0 and "wall" in info["invalid"]
    first, _, board = obs.partition("\n")
    assert first == INVALID_PREFIX + info["invalid"] and board == obs0
    obs, _, _, _, info = env.step("r")  # the next applied reply clears the line
    assert info["invalid"] == "" and not obs.startswith(INVALID_PREFIX)


def test_text_env__a_blocked_box_stops_a_reply_where_it_is_blocked():
    env = _text_env([Level.from_xsb("########\n#@$$.. #\n########")])
    env.reset(seed=0)
    _, reward, _, _, info = env.step("rr")
    assert info["applied"] == 0 and "box" in info["invalid"] and "move 1 of 2" in info["invalid"]
    env.reset(seed=0)
    _, reward, _, _, info = env.step("lrr")  # l: a wall; the rest is ignored
    assert info["applied"] == 0 and "move 1 of 3" in info["invalid"]
    level = Level.from_xsb("########\n#.@$ $.#\n########")
    env = _text_env([level])
    env.reset(seed=0)
    _, reward, _, _, info = env.step("rrr")  # one push, then the box meets the other
    assert info["applied"] == 1 and info["last_lurd"] == "R" and "move 2 of 3" in info["invalid"]
    assert reward == pytest.approx(-0.1 - 0.1)


@pytest.mark.parametrize("reply", ["", "go left", "hello", "u1", "🙂", "left!?", "\x00\x01"])
def test_text_env__an_unreadable_reply_changes_nothing_and_says_why(reply):
    env = _text_env([Level.from_xsb(CORRIDOR)])
    obs0, _ = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(reply)
    assert reward == pytest.approx(-0.1) and not (terminated or truncated)
    assert info["invalid"] and info["applied"] == 0 and obs.endswith(obs0)
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("reply", [None, 3, 2.5, ["r"], b"\xff\xfe", bytearray(b"r")])
def test_text_env__replies_that_are_not_strings_never_raise(reply):
    env = _text_env([Level.from_xsb(CORRIDOR)])
    env.reset(seed=0)
    _, _, _, _, info = env.step(reply)
    assert info["invalid"] or info["applied"] == 1


def test_text_env__ten_thousand_random_replies_in_a_row_never_raise():
    rng = random.Random(0)
    words = ["up", "down", "left", "right", "u", "d", "l", "r", "UP", "rrdLL", "the", "box", "?"]
    env = _text_env("microban:1-20", max_episode_steps=200)
    env.reset(seed=0)
    for i in range(10_000):
        kind = i % 4
        if kind == 0:
            reply = bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
        elif kind == 1:
            reply = " ".join(rng.choice(words) for _ in range(rng.randrange(1, 8)))
        elif kind == 2:
            reply = "".join(rng.choice("udlrUDLR") for _ in range(rng.randrange(1, 3000)))
        else:
            reply = "".join(rng.choice(string.printable) for _ in range(rng.randrange(200)))
        obs, _, terminated, truncated, info = env.step(reply)
        assert info["invalid"] or info["applied"] >= 1
        assert isinstance(obs, str) and env.observation_space.contains(obs)
        if terminated or truncated:
            env.reset()


def test_text_env__plays_in_lockstep_with_the_move_env():
    levels = [lv for _, lv in indexed_levels("microban:1-10")]
    text = _text_env(levels)
    move = gym.make("Sokoban-Move-v0", levels=levels, level_order="sequential")
    rng = np.random.default_rng(0)
    for index in range(len(levels)):
        obs, _ = text.reset(options={"level_index": index})
        move.reset(options={"level_index": index})
        for _ in range(60):
            a = int(rng.integers(4))
            obs, r_text, t_text, tr_text, info = text.step("udlr"[a])
            _, r_move, t_move, tr_move, move_info = move.step(a)
            board = planes_to_xsb(move.unwrapped.planes())
            assert obs.split("\n")[-board.count("\n") - 1 :] == board.split("\n")
            assert r_text == pytest.approx(r_move) and t_text == t_move
            assert info["moves"] == move_info["moves"] and info["pushes"] == move_info["pushes"]
            if t_move:
                break


def test_text_env__max_moves_truncates_and_max_episode_steps_counts_replies():
    env = _text_env([Level.from_xsb("#########\n#@$    .#\n#########")], max_moves=3)
    env.reset(seed=0)
    _, _, terminated, truncated, info = env.step("rrrrr")
    assert truncated and not terminated and info["applied"] == 3
    env = _text_env([Level.from_xsb(CORRIDOR)], max_episode_steps=2)
    env.reset(seed=0)
    assert not env.step("junk")[3]
    assert env.step("junk")[3]  # the second reply ends it, though no move was made


def test_text_env__bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="max_moves"):
        SokobanTextEnv("microban:1", max_moves=0)
    with pytest.raises(gym.error.ResetNeeded):
        SokobanTextEnv("microban:1").step("r")


def test_text_env__coords_number_rows_and_columns():
    env = _text_env([Level.from_xsb(CORRIDOR)], coords=True)
    obs, _ = env.reset(seed=0)
    assert obs.split("\n") == ["  0123456", "0 #######", "1 #@$  .#", "2 #######"]
    wide = number_board("#" * 12)
    assert wide.split("\n")[:2] == ["            11", "  012345678901"]


def test_text_env__renders_ansi_and_rgb():
    env = _text_env([Level.from_xsb(CORRIDOR)], render_mode="ansi")
    obs, _ = env.reset(seed=0)
    assert env.render() == obs
    env = _text_env([Level.from_xsb(CORRIDOR)], render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8
