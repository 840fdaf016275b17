"""Portfolio solving: ``planners.solve(..., workers=N)`` and ``soko solve --workers N``."""

import json
import multiprocessing

import pytest

import planners
from planners import SearchLimits
from planners.fess.search import (
    PORTFOLIO_FALLBACK_AFTER,
    PORTFOLIO_PROBE_SECONDS,
    PORTFOLIO_SINKS_SECONDS,
    PORTFOLIO_VIA_SECONDS,
    FessPlanner,
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
    assert info["winner"] in info["finished"] and len(info["options"]) == 2
    # every worker process was stopped and joined (a fork server, if any, is no Process)
    assert set(multiprocessing.active_children()) <= before


def test_fess_portfolio_sinks_stage_restarts_only_where_it_changes_the_plan():
    # worker 1's stages as its planner builds them: a stage keeps what its fallback leaves
    # unnamed, so the stage after "sinks" must name the paper's plan again
    from planners.fess.search import _same_search

    probe = FessPlanner(**FessPlanner.portfolio_options(2, {})[1])
    via = probe._with(probe.fallback)
    sinks = via._with(via.fallback)
    other = sinks._with(sinks.fallback)
    assert via.via == "sinkless" and sinks.via is False and other.via is False
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


def test_fess_portfolio_options_keep_the_callers_options():
    configs = FessPlanner.portfolio_options(4, {"seed": 7})
    # worker 0: the caller's search; after the minute, on levels with several fed sink
    # rooms, again with the out-of-plan axis neutral (item 46)
    assert len(configs) == 4 and configs[0] == {
        "seed": 7,
        "fallback": {"out_of_plan": "fed"},
        "fallback_after": PORTFOLIO_FALLBACK_AFTER,
    }
    for own in ({"out_of_plan": True}, {"fallback": {"cells": "lexicographic"}}):
        assert FessPlanner.portfolio_options(2, own)[0] == own
    assert [c["seed"] for c in configs] == [7, 8, 9, 10]  # no two workers search alike
    # worker 1, first stage: worker 0's search without PI-corral pruning, for a short probe
    one = configs[1]
    assert one["pi_corrals"] is False and "room_axis" not in one and "cells" not in one
    assert one["fallback_after"] == PORTFOLIO_PROBE_SECONDS
    # second stage, on levels without a sink room: the search through a waypoint
    via = one["fallback"]
    assert via["via"] == "sinkless" and via["fallback_after"] == PORTFOLIO_VIA_SECONDS
    assert "seed" not in via and via["sinkless"] == "ordered"  # a caller's seed holds
    assert FessPlanner.portfolio_options(2, {})[1]["fallback"]["seed"] is None
    # third stage: the other feature space and cell rule with every fed sink room at once
    sinks = via["fallback"]
    assert sinks["via"] is False and sinks["seed"] == 8  # the stage's own options back
    assert sinks["plan"] == "sinks" and sinks["fallback_after"] == PORTFOLIO_SINKS_SECONDS
    assert sinks["room_axis"] is False and sinks["pi_corrals"] is False
    # fourth stage: the same with the paper's sink room, until the minute is up
    third = sinks["fallback"]
    assert third["room_axis"] is False and third["plan_sinks"] == 1 and third["plan"] == "sink"
    assert third["cells"] == "lexicographic" and third["pi_corrals"] is False
    assert (
        PORTFOLIO_PROBE_SECONDS + PORTFOLIO_SINKS_SECONDS + third["fallback_after"]
        == PORTFOLIO_FALLBACK_AFTER
    )
    # fifth stage: the targets plan with PI-corral pruning
    assert third["fallback"] == {"plan": "targets", "pi_corrals": True}
    # worker 2: the third stage's configuration alone; worker 3 repeats worker 1
    assert "fallback" not in configs[2]
    assert {k: v for k, v in configs[2].items() if k != "seed"} == {
        k: v for k, v in third.items() if "fallback" not in k and k != "plan"
    }
    assert _unseeded(configs[3]) == _unseeded(one)
    # a caller's plan drops the targets stage; a caller's fallback replaces the stages
    planned = FessPlanner.portfolio_options(2, {"plan": "unordered"})[1]["fallback"]["fallback"]
    assert "fallback" not in planned and "plan" not in planned
    # a caller's via drops the waypoint stage, and holds for every worker
    own_via = FessPlanner.portfolio_options(2, {"via": True})
    assert own_via[1]["fallback"]["plan"] == "sinks"
    assert all(c["via"] is True for c in own_via)
    own = FessPlanner.portfolio_options(2, {"fallback": {"plan": "targets"}})[1]
    assert own["fallback"] == {"plan": "targets"} and own["cells"] == "lexicographic"
    fixed = FessPlanner.portfolio_options(
        3,
        {
            "room_axis": False,
            "plan_sinks": 2,
            "sinkless": "ordered",
            "pi_corrals": True,
            "cells": "lexicographic",
        },
    )
    assert all(
        c["room_axis"] is False
        and c["plan_sinks"] == 2
        and c["sinkless"] == "ordered"
        and c["pi_corrals"] is True
        and c["cells"] == "lexicographic"
        for c in fixed
    )
    assert len({c["seed"] for c in fixed[1:]}) == 2
    for config in configs:
        FessPlanner(**config)  # every configuration is a valid planner


def _unseeded(config):
    """A worker's stages without their seeds (workers differ only there)."""
    out = {k: v for k, v in config.items() if k != "seed"}
    if isinstance(out.get("fallback"), dict):
        out["fallback"] = _unseeded(out["fallback"])
    return out


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
    planner = FessPlanner(**FessPlanner.portfolio_options(2, {})[0])
    assert planner.fallback is not None
    calls = []
    planner.stop_check = lambda: calls.append(1) or len(calls) == 2
    result = planner.solve(load_levels("xsokoban:29")[0], SearchLimits(max_seconds=60))
    assert result.status == "timeout" and len(calls) == 2
    assert "fallback" not in result.stats  # no later stage started


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
    # XSokoban 29 has two fed sink rooms: "fed" makes its basin every floor square, a new
    # search; XSokoban 1 has one: the same search, so worker 0 goes on with its tree
    from planners.fess.search import _same_search

    worker0 = FessPlanner(**FessPlanner.portfolio_options(2, {})[0])
    later = worker0._with(worker0.fallback)
    assert later.out_of_plan == "fed" and later.fallback is None
    two = load_levels("xsokoban:29")[0].board
    one = load_levels("xsokoban:1")[0].board
    assert not _same_search(worker0, later, two) and _same_search(worker0, later, one)


def test_fess_portfolio_locked_boxes_are_off_unless_the_caller_turns_them_on():
    for config in FessPlanner.portfolio_options(3, {}):
        stage = FessPlanner(**config)
        while stage is not None:
            assert stage.locked is False
            stage = stage._with(stage.fallback) if stage.fallback else None
    assert all(c["locked"] is True for c in FessPlanner.portfolio_options(3, {"locked": True}))
