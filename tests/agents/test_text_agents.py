"""Text agents: the reply harness and ``soko bench --agents text:MODULE:FUNCTION``."""

from __future__ import annotations

import csv
import textwrap

import pytest

from agents.benchmark import BenchConfig, run_benchmark
from agents.benchmark.text_agents import load_text_agent
from planners import solve
from soko_gym.envs.text_agent import play_text_agent
from soko_gym.envs.text_prompt import split_observation
from soko_gym.levels import Level, verify
from soko_gym.levels.packs import indexed_levels

LEVEL = indexed_levels("microban:2")[0][1]


def _solution_agent(level: Level, per_turn: int):
    """A scripted agent that replies with a planner's solution, ``per_turn`` moves a reply."""
    lurd = solve(level, "astar").lurd
    chunks = [lurd[i : i + per_turn] for i in range(0, len(lurd), per_turn)]
    prompts: list[str] = []

    def agent(prompt: str) -> str:
        prompts.append(prompt)
        return f"Thinking about the board...\n```\n{chunks[len(prompts) - 1]}\n```"

    return agent, prompts, lurd


@pytest.mark.parametrize("per_turn", [1, 5, 10_000])
def test_play_text_agent__a_planners_solution_solves_the_level(per_turn):
    agent, prompts, lurd = _solution_agent(LEVEL, per_turn)
    episode = play_text_agent(agent, LEVEL)
    assert episode.solved and episode.status == "solved" and episode.lurd == lurd
    assert episode.replies == len(prompts) == -(-len(lurd) // per_turn)
    assert episode.invalid_replies == 0 and verify(LEVEL, episode.lurd).ok
    assert episode.moves == len(lurd) and episode.pushes == sum(c.isupper() for c in lurd)
    assert str(LEVEL) in prompts[0]


def test_play_text_agent__garbage_replies_reach_the_reply_limit_all_invalid():
    prompts: list[str] = []

    def garbage(prompt: str) -> str:
        prompts.append(prompt)
        return "I don't know, maybe try the box?"

    episode = play_text_agent(garbage, LEVEL, max_replies=7)
    assert not episode.solved and episode.status == "reply_limit"
    assert episode.replies == episode.invalid_replies == 7 and episode.moves == 0
    assert "Your last reply was not applied" in prompts[1]
    assert split_observation("x")[0] == ""


def test_play_text_agent__an_agent_that_raises_or_returns_no_text_ends_its_episode():
    def boom(prompt: str) -> str:
        raise RuntimeError("rate limited")

    episode = play_text_agent(boom, LEVEL)
    assert episode.status.startswith("error: RuntimeError: rate limited") and episode.replies == 0
    episode = play_text_agent(lambda prompt: None, LEVEL)  # type: ignore[arg-type, return-value]
    assert episode.status.startswith("error:") and not episode.solved
    with pytest.raises(ValueError, match="max_replies"):
        play_text_agent(boom, LEVEL, max_replies=0)


def test_soko_bench__text_agents_sit_beside_planners_in_one_csv(tmp_path, monkeypatch):
    (tmp_path / "scripted_agents.py").write_text(
        textwrap.dedent(
            """
            from planners import solve
            from soko_gym.envs.text_prompt import split_observation
            from soko_gym.levels import Level

            def oracle(prompt):
                board = prompt.split("Board:\\n", 1)[1].split("\\n\\n", 1)[0]
                return "Moves: " + solve(Level.from_xsb(board), "astar").lurd

            def garbage(prompt):
                return "beep"
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    config = BenchConfig(
        "microban:1-3",
        planners=("astar",),
        agents=("text:scripted_agents:oracle", "text:scripted_agents:garbage"),
        max_steps=4,
        out=tmp_path / "bench",
        plot=False,
        quiet=True,
        record=1,
    )
    rows = run_benchmark(config)
    with (tmp_path / "bench" / "results.csv").open() as f:
        written = list(csv.DictReader(f))
    assert len(rows) == len(written) == 9
    oracle = [r for r in written if r["solver"] == "text:scripted_agents:oracle"]
    garbage = [r for r in written if r["solver"] == "text:scripted_agents:garbage"]
    assert [r["solved"] for r in oracle] == ["True"] * 3
    assert all(r["env_id"] == "Sokoban-Text-v0" and r["env_steps"] == "1" for r in oracle)
    assert all(r["invalid_replies"] == "0" for r in oracle)
    assert [(r["status"], r["env_steps"], r["invalid_replies"]) for r in garbage] == [
        ("reply_limit", "4", "4")
    ] * 3
    page = (tmp_path / "bench" / "replays" / "level-1.html").read_text()
    assert "text:scripted_agents:oracle" in page  # the replay pages show the text agent too
    planner_rows = [r for r in written if r["solver"] == "astar"]
    assert [r["moves"] for r in planner_rows] == [r["moves"] for r in oracle]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("text:nomodule_here_xyz:f", "cannot import"),
        ("text:json:no_such_function", "no callable"),
        ("text:json", "text:MODULE:FUNCTION"),
    ],
)
def test_load_text_agent__bad_entries_name_themselves(spec, message):
    with pytest.raises(ValueError, match=message):
        load_text_agent(spec)
