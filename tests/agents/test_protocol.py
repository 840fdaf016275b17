"""The Boxoban and Push protocols: one greedy attempt per level, rates with a 95% interval."""

from __future__ import annotations

import csv
import re

import gymnasium as gym
import numpy as np
import pytest

import soko_gym  # noqa: F401  (registers the env ids)
from agents.benchmark.protocol import (
    BUDGET,
    bootstrap_interval,
    load_protocol_agent,
    run_protocol,
)
from agents.playing.zoo import available
from soko_gym.cli import main as soko
from soko_gym.levels import load_levels

SLICE = "boxoban-unfiltered-valid:1-6"


def _by_hand(spec: str, levels: list, protocol: str) -> list[int]:
    """Each level played through a single env with the agent's greedy predictions."""
    agent = load_protocol_agent(spec)
    outcomes = []
    for level in levels:
        env = gym.make(agent.env_id, levels=[level], max_episode_steps=BUDGET, **agent.env_kwargs)
        obs, info = env.reset(seed=0)
        done = False
        while not done:
            action, _ = agent.model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        key = "moves" if protocol == "boxoban" else "pushes"
        outcomes.append(int(bool(info["solved"]) and info[key] <= BUDGET))
    return outcomes


@pytest.mark.parametrize(
    ("spec", "protocol"),
    [("planner:astar", "push"), ("planner:astar", "boxoban"), ("planner:astar:move", "boxoban")],
)
def test_run_protocol__gives_the_rate_of_the_same_levels_played_by_hand(spec, protocol):
    levels = load_levels(SLICE)
    figures, rows = run_protocol([spec], levels, protocol)
    expected = _by_hand(spec, levels, protocol)
    assert [r[protocol] for r in rows] == expected
    (figure,) = figures
    assert (figure.solved, figure.levels) == (sum(expected), len(levels))
    assert figure.low <= figure.rate <= figure.high


def test_bootstrap_interval__from_the_per_level_outcomes():
    outcomes = np.array([1] * 300 + [0] * 700)
    low, high = bootstrap_interval(outcomes, seed=0)
    half = 1.96 * np.sqrt(0.3 * 0.7 / 1000)  # the normal approximation, for comparison
    assert low == pytest.approx(0.3 - half, abs=0.006) and high == pytest.approx(
        0.3 + half, abs=0.006
    )
    assert bootstrap_interval(outcomes, seed=0) == (low, high)  # seeded: the same interval
    assert bootstrap_interval([1, 1, 1]) == (1.0, 1.0)
    assert bootstrap_interval([0, 0]) == (0.0, 0.0)
    small = bootstrap_interval([1, 0, 1, 1, 0, 1, 0, 1, 1, 1])
    assert 0.3 <= small[0] < 0.7 < small[1] <= 1.0
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_interval([])


def test_run_protocol__refuses_the_push_protocol_for_a_move_agent():
    with pytest.raises(ValueError, match="push protocol counts pushes"):
        run_protocol(["planner:astar:move"], load_levels(SLICE), "push")
    with pytest.raises(ValueError, match="protocol must be one of"):
        run_protocol(["planner:astar"], load_levels(SLICE), "sokoban")


def test_soko_bench_protocol__prints_the_rate_and_interval_and_writes_the_csv(tmp_path, capsys):
    out = tmp_path / "proto"
    argv = ["bench", "--levels", SLICE, "--agents", "planner:astar", "--protocol", "boxoban"]
    assert soko([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| planner:astar | boxoban | Sokoban-Push-v0 | greedy | 6 |" in printed
    assert "95% interval" in printed
    with (out / "protocol.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 and {r["boxoban"] for r in rows} <= {"0", "1"}
    assert all(r["push"] in {"", "0", "1"} for r in rows)
    assert soko([*argv, "--out", str(out)]) == 2  # an existing protocol.csv is kept
    assert soko(["bench", "--levels", SLICE, "--protocol", "push", "--out", str(out)]) == 2


CARD_SLICE = re.compile(
    r"\*\*Fixed slice\*\* \(`soko bench --levels (\S+) --agents\s+pretrained:(\S+)"
    r" --protocol (\w+) --out DIR`.*?: (\d+) of 50\.",
    re.DOTALL,
)


@pytest.mark.parametrize("name", available())  # every shipped model, old versions too
def test_shipped_models__solve_exactly_their_cards_count_on_the_fixed_slice(name):
    pytest.importorskip("stable_baselines3")
    from agents.playing.zoo import model_card

    match = CARD_SLICE.search(model_card(name))
    assert match is not None, f"{name}'s card has no fixed-slice line"
    source, card_name, protocol, count = match.groups()
    assert card_name == name
    figures, _ = run_protocol([f"pretrained:{name}"], load_levels(source), protocol)
    assert figures[0].levels == 50 and figures[0].solved == int(count)
