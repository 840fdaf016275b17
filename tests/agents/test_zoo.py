"""The pretrained agents shipped with the package: they load, act and document themselves."""

import subprocess
import sys

import gymnasium as gym
import pytest

pytest.importorskip("sb3_contrib")

import agents  # noqa: E402
from agents.playing import zoo  # noqa: E402
from soko_gym.cli import main  # noqa: E402

SHIPPED = zoo.available()


def test_available__ships_a_push_and_a_move_boxoban_agent():
    assert {"boxoban-push", "boxoban-move"} <= set(SHIPPED)
    assert agents.pretrained("boxoban-move").env_id == "Sokoban-Move-v0"


@pytest.mark.parametrize(("name", "at_least"), [("boxoban-push", 12), ("boxoban-move", 10)])
def test_pretrained__solves_boxoban_levels_it_never_trained_on(name, at_least):
    """Greedy play of the first 20 unfiltered-test levels (120 actions each): the shipped
    weights are the trained ones (the model cards report 1,000 levels: 89.0% and 67.2%; the
    Move agent solves 13 of these 20)."""
    agent = agents.pretrained(name)
    env = gym.make(agent.env_id, levels="boxoban-unfiltered-test:1-20", **agent.env_kwargs)
    solved = 0
    for k in range(20):
        obs, info = env.reset(options={"level_index": k})
        term = trunc = False
        while not (term or trunc):
            mask = info["action_mask"]
            action, _ = agent.model.predict(obs, deterministic=True, action_masks=mask)
            obs, _, term, trunc, info = env.step(int(action))
        solved += bool(info["solved"])
    assert solved >= at_least


@pytest.mark.parametrize("name", SHIPPED)
def test_pretrained__acts_legally_in_its_env(name):
    agent = agents.pretrained(name)
    env = gym.make(agent.env_id, levels="boxoban-unfiltered-test:1-3", **agent.env_kwargs)
    obs, info = env.reset(seed=0)
    for _ in range(5):
        mask = info["action_mask"]
        action, _ = agent.model.predict(obs, deterministic=True, action_masks=mask)
        assert mask[int(action)]
        obs, _, term, trunc, info = env.step(int(action))
        if term or trunc:
            break


@pytest.mark.parametrize("name", SHIPPED)
def test_model_card__names_its_data_command_time_and_solve_rates(name):
    card = zoo.model_card(name)
    for heading in ("## Data", "## Command", "## Training time", "## Solve rates"):
        assert heading in card
    assert "soko train" in card
    assert "%" in card.split("## Solve rates")[1]


def test_pretrained__loads_without_the_extras_beyond_rl():
    code = (
        "import sys, agents; agents.pretrained('boxoban-push'); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'ray', 'minari', 'matplotlib', 'pygame', 'moviepy'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_pretrained__deadlock_search_masks_its_envs_lost_pushes():
    """The first 20 unfiltered-test levels, greedy. A solving episode's actions all lead to
    solvable positions, which the search never masks: the mask keeps every level the network
    alone solves, and gains some (model card: 89.0% -> 95.3% on 1,000)."""

    def solved(agent):
        env = gym.make(agent.env_id, levels="boxoban-unfiltered-test:1-20", **agent.env_kwargs)
        won = []
        for k in range(20):
            obs, info = env.reset(options={"level_index": k})
            term = trunc = False
            while not (term or trunc):
                action, _ = agent.model.predict(
                    obs, deterministic=True, action_masks=info["action_mask"]
                )
                obs, _, term, trunc, info = env.step(int(action))
            won.append(bool(info["solved"]))
        return won

    searched = agents.pretrained("boxoban-push", deadlock_search=1024)
    assert searched.env_kwargs["deadlock_search"] == 1024
    plain, masked = solved(agents.pretrained("boxoban-push")), solved(searched)
    assert all(m for p, m in zip(plain, masked, strict=True) if p)
    assert sum(masked) > sum(plain)
    with pytest.raises(ValueError, match="deadlock_search"):
        agents.pretrained("boxoban-push", deadlock_search=-5)


def test_pretrained__unknown_name_is_a_clear_error():
    with pytest.raises(ValueError, match="no pretrained agent 'nope'; shipped: .*boxoban-push"):
        agents.pretrained("nope")


def test_bench__takes_a_pretrained_agent(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "bench"
    argv = ["bench", "--levels", "boxoban-unfiltered-test:1-2", "--out", str(out)]
    assert main([*argv, "--agents", "pretrained:boxoban-push"]) in (0, 1)
    rows = (out / "results.csv").read_text().splitlines()
    assert len(rows) == 3 and all("pretrained:boxoban-push" in r for r in rows[1:])
