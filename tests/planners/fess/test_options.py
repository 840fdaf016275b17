"""``FessOptions``: FESS's one options type, its checks, and the flags generated from it."""

import dataclasses
import json

import pytest

import planners
from planners import SearchLimits
from planners.fess import FessOptions, FessPlanner
from planners.fess.advisors import PAPER_ADVISORS
from planners.fess.options import DEADLOCK_TESTS, make_options
from soko_gym.cli import main
from soko_gym.levels import load_levels, verify

BAD = {
    "plan": ["unordered", "sink ", None],
    "sinkless": ["ordered!", 1],
    "sink_choice": ["all", None],
    "out_of_plan": ["fed", 1, None],
    "backward": ["sinkless", 1, True, None],
    "cells": ["pareto", None],
    "room_axis": [0, "no"],
    "pi_corrals": [1, None],
    "deadlocks": ["rooms", ("rooms", "locked"), None, 3],
    "deadlock_budget": [0, 100, True, 256.0],
    "advisors": ["oop", ("nonsense",), None],
    "space": ["plan-free", None, 1],
    "advisor_weight": [-1, 1.5, True],
    "move_weight": [-1, "1"],
    "seed": [1.5, "3", True],
}


def test_fess_options_are_at_most_fifteen_fields_and_every_one_is_checked():
    names = [f.name for f in dataclasses.fields(FessOptions)]
    assert len(names) <= 15
    assert sorted(BAD) == sorted(names)  # a bad value for every field below


@pytest.mark.parametrize("field, bad", [(f, v) for f, values in BAD.items() for v in values])
def test_a_bad_value_is_refused_naming_its_field(field, bad):
    with pytest.raises(ValueError, match=field):
        FessOptions(**{field: bad})
    with pytest.raises(ValueError, match=field):
        planners.get_planner("fess", **{field: bad})


def test_unknown_and_removed_options_are_refused_by_name():
    for name in ("lazy_tests", "exhaust_all", "frozen_walls", "locked", "fallback", "nodes"):
        with pytest.raises(ValueError, match=name):
            make_options({name: 1})
        with pytest.raises(ValueError, match=name):
            FessPlanner(**{name: 1})
    with pytest.raises(ValueError, match="both be 0"):
        FessOptions(advisor_weight=0, move_weight=0)


def test_sequences_become_tuples_in_a_fixed_order_and_changed_lists_what_differs():
    opts = FessOptions(deadlocks=["rooms", "bipartite"], advisors=[])
    assert opts.deadlocks == ("bipartite", "rooms") and opts.advisors == ()
    assert opts.test("rooms") and not opts.test("corrals")
    assert FessOptions().changed() == {}
    assert FessOptions(seed=2, deadlocks=DEADLOCK_TESTS).changed() == {"seed": 2}
    assert opts.changed() == {"deadlocks": ["bipartite", "rooms"], "advisors": []}
    json.dumps(opts.changed())  # JSON-ready for a result's stats
    assert hash(opts) == hash(FessOptions(deadlocks=("bipartite", "rooms"), advisors=()))


def test_the_planner_takes_exactly_the_options_fields():
    planner = FessPlanner(seed=4, sink_choice="paper")
    assert planner.options == FessOptions(seed=4, sink_choice="paper")
    level = load_levels("microban:3")[0]
    result = planners.solve(level, "fess", SearchLimits(max_seconds=30), deadlocks=())
    assert result.solved and verify(level, result.lurd).ok


def test_soko_solve_fess_flags_are_generated_from_the_fields(tmp_path, capsys):
    path = tmp_path / "out.jsonl"
    argv = ["solve", "microban:2", "--planner", "fess", "--jsonl", str(path)]
    flags = ["--fess-seed", "3", "--fess-sink-choice", "paper", "--fess-deadlocks", "rooms"]
    assert main([*argv, *flags, "--no-fess-pi-corrals"]) == 0
    (row,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert row["solved"] and verify(load_levels("microban:2")[0], row["lurd"]).ok
    capsys.readouterr()
    # a bad value is an argparse error (exit 2) naming the flag
    with pytest.raises(SystemExit) as stop:
        main(["solve", "microban:2", "--planner", "fess", "--fess-plan", "nowhere"])
    assert stop.value.code == 2 and "--fess-plan" in capsys.readouterr().err
    # a bad value the flag's type cannot catch: the options' own message, exit 2
    assert main(["solve", "microban:2", "--planner", "fess", "--fess-deadlock-budget", "100"]) == 2
    assert "deadlock_budget" in capsys.readouterr().err
    # FESS flags with another planner are an error, not silently ignored
    assert main(["solve", "microban:2", "--planner", "astar", "--fess-seed", "1"]) == 2
    assert "--fess-seed" in capsys.readouterr().err


def test_the_default_advisors_are_the_papers_seven_and_best_is_chosen_by_name():
    assert FessOptions().advisors == PAPER_ADVISORS and "best" not in PAPER_ADVISORS
    assert FessOptions(advisors=("best",)).changed() == {"advisors": ["best"]}
    assert "diagonal" in FessOptions().deadlocks
