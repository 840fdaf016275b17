"""The text env's move parser, the reply parser and the prompt template, on fixed replies."""

from __future__ import annotations

import pytest

import soko_gym
from soko_gym.envs.text_prompt import (
    INVALID_PREFIX,
    LEGEND,
    make_prompt,
    parse_moves,
    parse_reply,
    split_observation,
)


@pytest.mark.parametrize(
    ("text", "moves"),
    [
        ("r", "r"),
        ("rrdLL", "rrdll"),
        ("UP", "u"),
        ("up, up left", "uul"),
        ("  down;right  ", "dr"),
        ("`rrd`", "rrd"),
        ('"LURD".', "lurd"),
        ("(up) [left]", "ul"),
        ("", None),
        ("   ", None),
        ("go left", None),
        ("r2", None),
        ("up-left", None),
        ("north", None),
    ],
)
def test_parse_moves__letters_words_or_nothing(text, moves):
    assert parse_moves(text) == moves


REPLIES = [
    ("fenced", "Let me think.\n```\nrrdLL\n```\n", "rrdll"),
    ("fenced with a language tag", "Plan:\n```text\nuu\nrr\n```", "uurr"),
    ("the last fenced block wins", "```\nll\n```\nno wait\n```\nRR\n```", "rr"),
    ("a block of prose is skipped", "```\nu\n```\n```\nI push the box\n```", "u"),
    ("inline", "rrdLL", "rrdll"),
    ("labelled", "The box must go right.\nMoves: R R D", "rrd"),
    ("answer in backticks", "Final answer: `uulD`", "uuld"),
    (
        "reasoning before the moves",
        "The player is left of the box.\nPushing it right twice reaches the goal.\nright right",
        "rr",
    ),
    ("words mixed in a line are not moves", "I will move up and then left", None),
    ("empty", "", None),
    ("only prose", "I am not sure what to do here.", None),
]


@pytest.mark.parametrize(("what", "reply", "moves"), REPLIES, ids=[r[0] for r in REPLIES])
def test_parse_reply__takes_the_last_block_or_line_of_moves(what, reply, moves):
    assert parse_reply(reply) == moves


def test_parse_reply_and_the_prompt_are_exported_by_soko_gym():
    assert soko_gym.parse_reply is parse_reply and soko_gym.parse_moves is parse_moves
    assert soko_gym.make_prompt is make_prompt


def test_make_prompt__holds_the_rules_legend_board_and_last_error():
    board = "#######\n#@$  .#\n#######"
    prompt = make_prompt(board)
    assert board in prompt and LEGEND in prompt and "every box is on a goal" in prompt
    assert "not applied" not in prompt
    prompt = make_prompt(f"{INVALID_PREFIX}move 1 of 1 (u) cannot be made: a wall\n{board}")
    assert "Your last reply was not applied: move 1 of 1 (u) cannot be made: a wall" in prompt
    assert board in prompt and INVALID_PREFIX not in prompt
    numbered = make_prompt("  0123456\n0 #######\n1 #@$  .#\n2 #######")
    assert "row numbers" in numbered


def test_make_prompt__takes_another_template():
    assert make_prompt("#@$.#", template="B:{board}|E:{error}") == "B:#@$.#|E:"


def test_split_observation__error_line_and_board():
    assert split_observation("#@$.#") == ("", "#@$.#")
    assert split_observation(f"{INVALID_PREFIX}why\n#@$.#") == ("why", "#@$.#")
