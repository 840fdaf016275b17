"""Portfolio solving: ``planners.solve(..., workers=N)`` and ``soko solve --workers N``."""

import json
import multiprocessing
from dataclasses import replace

import pytest

import planners
from planners import SearchLimits
from planners.fess.options import FessOptions
from planners.fess.search import FessPlanner
from planners.fess.stages import (
    FED_SINKS,
    MAIN,
    NO_SINK_ROOM,
    OTHER,
    STAGED,
    describe,
    worker_plans,
)
from soko_gym.cli import main
from soko_gym.levels import load_levels, verify


def test_fess_portfolio_returns_a_verified_solution_and_stops_its_workers():
    level = load_levels("microban:1")[0]
    before = set(multiprocessing.active_children())
    result = planners.solve(level, "fess", SearchLimits(max_seconds=30), workers=2)
    assert result.solved and verify(level, result.lurd).ok
    info = result.stats["portfolio"]
    assert info["workers"] == 2 and info["winner"] in (0, 1)
    assert info["winner"] in info["finished"] and len(info["configs"]) == 2
    assert [st["name"] for st in info["configs"][1]["stages"]] == [st.name for st in STAGED]
    # every worker process was stopped and joined (a fork server, if any, is no Process)
    assert set(multiprocessing.active_children()) <= before


def test_fess_portfolio_sinks_stage_restarts_only_where_it_changes_the_plan():
    from planners.fess.search import _same_search

    stages = dict((st.name, opts) for st, opts in worker_plans(2, {})[1].stages)
    probe, via, sinks, other = (stages[n] for n in ("meet", "waypoint", "sinks", "other"))
    assert probe.backward == "meet" and via.backward == "waypoint"
    assert sinks.backward == other.backward == "none"
    assert sinks.plan == "sinks" and other.plan == "sink"
    assert sinks.seed == probe.seed == 1 and via.seed is None
    two_fed = load_levels("xsokoban:66")[0].board  # two fed sink rooms: its own stage
    one_fed = load_levels("xsokoban:1")[0].board  # one: the same search goes on
    assert not _same_search(sinks, other, two_fed)
    assert _same_search(sinks, other, one_fed)
    assert not _same_search(probe, sinks, one_fed)


def test_bad_worker_counts_and_planners_without_a_portfolio_are_refused():
    level = load_levels("microban:1")[0]
    with pytest.raises(ValueError, match="portfolio"):
        planners.solve(level, "astar", workers=2)
    for workers in (0, "2", 1.0, True):
        with pytest.raises(ValueError, match="workers"):
            planners.solve(level, "fess", workers=workers)


def test_fess_portfolio_runs_the_stage_table():
    # each worker's planner runs exactly the table's stages, with the options worker_plans
    # gives them: the table the docs print is the one the portfolio runs
    for workers in (2, 3, 4):
        pairs = zip(FessPlanner.portfolio(workers, {}), worker_plans(workers, {}), strict=True)
        for i, (planner, plan) in enumerate(pairs):
            table = MAIN if i == 0 else STAGED if i % 2 else OTHER
            assert [st for st, _ in plan.stages] == list(table)
            if len(plan.stages) > 1:
                assert planner.stages == plan.stages
            else:
                assert planner.stages == () and planner.options == plan.stages[0][1]
    assert [st.name for st in STAGED] == ["meet", "waypoint", "sinks", "other", "targets"]
    # worker 1's stages before "targets" share worker 0's first minute
    assert sum(st.seconds for st in STAGED if st.name != "waypoint" and st.seconds) == (
        MAIN[0].seconds
    )
    assert [st.when for st in STAGED].count(NO_SINK_ROOM) == 1 and MAIN[1].when == FED_SINKS
    # one worker: the plain search, no stages
    (alone,) = worker_plans(1, {"seed": 3})
    assert [(st.name, st.seconds) for st, _ in alone.stages] == [("main", None)]
    assert alone.stages[0][1] == FessOptions(seed=3)


def test_fess_portfolio_options_keep_the_callers_options():
    plans = worker_plans(4, {"seed": 7})
    # worker 0: the caller's search; after the minute, on levels with several fed sink
    # rooms, again with the out-of-plan axis neutral
    (main_, basin_off) = plans[0].stages
    assert main_[1] == FessOptions(seed=7) and basin_off[1] == FessOptions(
        seed=7, out_of_plan=False
    )
    assert [p.stages[0][1].seed for p in plans] == [7, 8, 9, 10]  # no two workers alike
    one = dict((st.name, o) for st, o in plans[1].stages)
    assert one["meet"] == FessOptions(
        seed=8, pi_corrals=False, sinkless="unordered", backward="meet"
    )
    assert one["waypoint"].seed == 8  # a caller's seed holds; without one, board order
    assert dict((st.name, o) for st, o in worker_plans(2, {})[1].stages)["waypoint"].seed is None
    assert one["other"] == FessOptions(
        seed=8, pi_corrals=False, sinkless="unordered", room_axis=False,
        sink_choice="paper", cells="lexicographic",
    )  # fmt: skip
    assert one["targets"] == FessOptions(
        seed=8, plan="targets", sinkless="unordered", room_axis=False,
        sink_choice="paper", cells="lexicographic",
    )  # fmt: skip
    # worker 2: the "other" configuration alone; worker 3 repeats worker 1 with its seed
    assert [(st.name, o) for st, o in plans[2].stages] == [("other", replace(one["other"], seed=9))]
    assert [(st.name, replace(o, seed=None)) for st, o in plans[3].stages] == [
        (st.name, replace(o, seed=None)) for st, o in plans[1].stages
    ]
    # a caller's field holds for every stage; a caller's plan drops the targets stage, its
    # via the waypoint stage, its out_of_plan worker 0's second stage
    fixed = {
        "room_axis": False,
        "sinkless": "ordered",
        "pi_corrals": True,
        "cells": "lexicographic",
    }
    for plan in worker_plans(3, fixed):
        for _, o in plan.stages:
            assert (o.room_axis, o.sinkless, o.pi_corrals, o.cells) == (
                False, "ordered", True, "lexicographic",
            )  # fmt: skip
    assert "targets" not in [st.name for st, _ in worker_plans(2, {"plan": "sinks"})[1].stages]
    own_via = worker_plans(2, {"backward": "waypoint"})
    assert "waypoint" not in [st.name for st, _ in own_via[1].stages]
    assert all(o.backward == "waypoint" for p in own_via for _, o in p.stages)
    assert [st.name for st, _ in worker_plans(2, {"out_of_plan": True})[0].stages] == ["main"]
    with pytest.raises(ValueError, match="fallback"):
        worker_plans(2, {"fallback": {"plan": "targets"}})
    with pytest.raises(ValueError, match="cells"):
        FessPlanner.portfolio(2, {"cells": "pareto"})


def test_describe_prints_the_stage_table(capsys):
    text = describe(2)
    for st in (*MAIN, *STAGED):
        assert f"| {st.name} |" in text
    assert "| 1 | waypoint | 15 | no sink room | " in text
    assert main(["planners", "--describe", "fess"]) == 0
    out = capsys.readouterr().out
    assert text in out and "--fess-sink-choice" in out
    assert main(["planners", "--describe", "nowhere"]) == 2


def test_the_docs_hold_the_stage_table_and_every_option():
    import dataclasses
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "fess.md").read_text()
    assert describe(2) in doc  # regenerate docs/fess.md's table when the stages change
    for f in dataclasses.fields(FessOptions):
        assert f"| `{f.name}` |" in doc, f.name


def test_soko_solve_workers_writes_a_verified_record(tmp_path, capsys):
    path = tmp_path / "portfolio.jsonl"
    args = ["solve", "microban:1", "--planner", "fess", "--workers", "2", "--jsonl", str(path)]
    assert main(args) == 0
    (row,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert row["solved"] and row["stats"]["portfolio"]["workers"] == 2
    assert verify(load_levels("microban:1")[0], row["lurd"]).ok


def test_soko_solve_workers_with_astar_is_an_error(capsys):
    assert main(["solve", "microban:1", "--planner", "astar", "--workers", "2"]) == 2
    assert "portfolio" in capsys.readouterr().err
    assert main(["solve", "microban:1", "--planner", "fess", "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err


def test_stop_check_ends_a_fess_search_early():
    # the portfolio's worker 0 polls the others through stop_check; True ends its search
    planner = FessPlanner()
    calls = []
    planner.stop_check = lambda: calls.append(1) or len(calls) >= 2
    result = planner.solve(load_levels("xsokoban:29")[0], SearchLimits(max_seconds=60))
    # stopped at the second check: a search run to its time limit would poll far more often
    assert result.status == "timeout" and len(calls) == 2


def test_fess_worker_0_with_its_stages_stops_at_a_check_that_says_so_once():
    # the portfolio's check takes the winner's report off a queue, so asking again says
    # no: a stage must not ask twice and then search on to the time limit
    planner = FessPlanner.portfolio(2, {})[0]
    assert len(planner.stages) == 2
    calls = []
    planner.stop_check = lambda: calls.append(1) or len(calls) == 2
    result = planner.solve(load_levels("xsokoban:29")[0], SearchLimits(max_seconds=60))
    assert result.status == "timeout" and len(calls) == 2
    assert [st["name"] for st in result.stats["stages"]] == ["main"]  # no later stage started


def test_fess_portfolio_worker_0_stops_once_worker_1_has_solved():
    from planners.portfolio import _Inbox

    class Queue:  # the children's reports, as the portfolio's queue hands them out
        def __init__(self, items):
            self.items = list(items)

        def get_nowait(self):
            import queue

            if not self.items:
                raise queue.Empty
            return self.items.pop(0)

    level = load_levels("microban:1")[0]
    solved = planners.solve(level, "fess", SearchLimits(max_seconds=30))
    inbox = _Inbox(Queue([(1, solved, None)]), [])
    assert inbox.any_solved() and inbox.any_solved()  # True from then on
    assert not _Inbox(Queue([]), []).any_solved()


def test_fess_portfolio_worker_0_restarts_without_the_out_of_plan_axis_only_where_it_changes():
    # XSokoban 29 has two fed sink rooms: worker 0's second stage makes its basin every floor
    # square, a new search; XSokoban 1 has one: the stage does not run, the search goes on
    from planners.fess.search import _same_search, _sink_rooms

    (first, _), (later, opts) = worker_plans(2, {})[0].stages
    assert later.when == FED_SINKS and opts.out_of_plan is False
    two = load_levels("xsokoban:29")[0].board
    one = load_levels("xsokoban:1")[0].board
    assert len(_sink_rooms(two)[0]) >= 2 and len(_sink_rooms(one)[0]) == 1
    assert not _same_search(FessOptions(), opts, two)
