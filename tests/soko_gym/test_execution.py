"""The execution layer on its local backends: streaming, batching, retries, errors, resume."""

import json
import os
from functools import partial
from pathlib import Path

import pytest

from soko_gym.cli import main
from soko_gym.execution import Backend, Progress, run, run_ordered


def square(x: int) -> int:
    return x * x


def fail_on(bad: int, x: int) -> int:
    if x == bad:
        raise ValueError(f"no good: {x}")
    return x


def fail_once(marker_dir: str, x: int) -> int:
    """Raises the first time it sees ``x`` (a marker file remembers across processes)."""
    marker = Path(marker_dir) / f"{x}.seen"
    if not marker.exists():
        marker.touch()
        raise RuntimeError(f"first try of {x}")
    return x


def die_once(marker_dir: str, x: int) -> int:
    """Kills its worker process the first time it sees ``x``."""
    marker = Path(marker_dir) / f"{x}.died"
    if not marker.exists():
        marker.touch()
        os._exit(3)
    return x + 100


def die_on(bad: int, x: int) -> int:
    """Kills its worker process whenever it sees ``bad``."""
    if x == bad:
        os._exit(3)
    return x


@pytest.mark.parametrize("jobs", [1, 2])
def test_run__every_item_once_with_its_key(jobs):
    items = [(f"k{i}", i) for i in range(40)]
    outcomes = list(run(square, items, Backend(jobs=jobs), total=40))
    assert sorted((o.key, o.value) for o in outcomes) == sorted((f"k{i}", i * i) for i in range(40))
    assert all(o.ok and o.attempts == 1 for o in outcomes)


@pytest.mark.parametrize("jobs", [1, 2])
def test_run__an_item_that_always_raises_is_an_error_after_two_attempts(jobs):
    outcomes = {
        o.key: o for o in run(partial(fail_on, 3), [(i, i) for i in range(6)], Backend(jobs))
    }
    assert sorted(outcomes) == list(range(6))
    bad = outcomes[3]
    assert not bad.ok and bad.attempts == 2 and "ValueError: no good: 3" in bad.error
    assert all(outcomes[i].ok and outcomes[i].value == i for i in (0, 1, 2, 4, 5))


@pytest.mark.parametrize("jobs", [1, 2])
def test_run__a_failed_attempt_is_retried(tmp_path, jobs):
    fn = partial(fail_once, str(tmp_path))
    outcomes = list(run(fn, [(i, i) for i in range(5)], Backend(jobs=jobs)))
    assert sorted(o.value for o in outcomes) == list(range(5))
    assert all(o.ok and o.attempts == 2 for o in outcomes)


def test_run__a_dead_worker_process_loses_no_item(tmp_path):
    fn = partial(die_once, str(tmp_path))
    outcomes = list(run(fn, [(i, i) for i in range(6)], Backend(jobs=2, batch_size=2)))
    assert sorted(o.key for o in outcomes) == list(range(6))
    assert all(o.ok for o in outcomes) and sorted(o.value for o in outcomes) == list(
        range(100, 106)
    )


def test_run__an_item_that_always_kills_its_worker_is_an_error_and_hurts_no_other():
    outcomes = {o.key: o for o in run(partial(die_on, 4), [(i, i) for i in range(8)], Backend(2))}
    assert sorted(outcomes) == list(range(8))
    assert not outcomes[4].ok and "worker lost" in outcomes[4].error
    assert all(outcomes[i].ok and outcomes[i].value == i for i in range(8) if i != 4)


def test_run_ordered__keeps_the_payload_order_and_refuses_failures():
    assert run_ordered(square, range(10), Backend(jobs=2)) == [i * i for i in range(10)]
    with pytest.raises(RuntimeError, match="item 2 failed: ValueError"):
        run_ordered(partial(fail_on, 2), range(4))


def test_run__items_are_drawn_lazily():
    drawn = []

    def items():
        for i in range(1000):
            drawn.append(i)
            yield i, i

    stream = run(square, items(), Backend(jobs=1))
    assert next(stream).value == 0 and len(drawn) == 1
    stream.close()


@pytest.mark.parametrize(
    ("kwargs", "flag"),
    [({"jobs": 0}, "--jobs"), ({"batch_size": 0}, "--batch-size"), ({"ray": " "}, "--ray")],
)
def test_backend__bad_options_name_their_flag(kwargs, flag):
    with pytest.raises(ValueError, match=flag):
        Backend(**kwargs)


def test_backend__ray_without_the_extra_names_it(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray":
            raise ImportError("no ray here")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ImportError, match=r"soko-gym\[dist\]"):
        list(run(square, [(0, 0)], Backend(ray="local")))


def test_progress__shows_done_total_rate_and_eta(tmp_path):
    with open(tmp_path / "log", "w+") as stream:
        bar = Progress(4, stream=stream, every=0.0)
        bar.update(True)
        bar.update(False, error=True)
        stream.seek(0)
        last = stream.read().splitlines()[-1]
    assert last.startswith("[2/4] solved 1, errors 1,") and "levels/s" in last and "ETA" in last


# -- the commands on the layer -----------------------------------------------------------------


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_solve__resume_skips_done_levels_and_writes_none_twice(tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    assert main(["solve", "microban:1-8", "--jsonl", str(path), "--quiet"]) == 0
    full = {r["index"]: r["lurd"] for r in _records(path)}
    lines = path.read_text().splitlines(keepends=True)
    error = json.dumps({**json.loads(lines[3]), "status": "error", "solved": False}) + "\n"
    # a run stopped after three levels, one error line, and a line cut by a kill
    path.write_text("".join(lines[:3]) + error + lines[4][:30])
    capsys.readouterr()
    assert main(["solve", "microban:1-8", "--jsonl", str(path), "--resume", "--jobs", "2"]) == 0
    err = capsys.readouterr().err
    assert "3 levels done" in err and "2 error or incomplete lines dropped" in err
    records = _records(path)
    assert sorted(r["index"] for r in records) == list(range(8))  # each exactly once
    assert {r["index"]: r["lurd"] for r in records} == full
    assert records[:3] == [json.loads(line) for line in lines[:3]]  # kept as they were


def test_solve__resume_refuses_another_source(tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    main(["solve", "microban:1-2", "--jsonl", str(path), "--quiet"])
    assert main(["solve", "xsokoban:1", "--jsonl", str(path), "--resume"]) == 2
    assert "not 'xsokoban'" in capsys.readouterr().err


def test_solve__a_level_that_raises_gets_an_error_line(tmp_path, monkeypatch, capsys):
    import planners.cli

    real = planners.cli.solve

    def flaky(level, planner, limits, workers=1):
        if level.n_boxes == 3:  # microban 2 has three boxes
            raise MemoryError("out of luck")
        return real(level, planner, limits, workers=workers)

    monkeypatch.setattr(planners.cli, "solve", flaky)
    path = tmp_path / "run.jsonl"
    assert main(["solve", "microban:1-2", "--jsonl", str(path), "--quiet"]) == 1
    records = {r["index"]: r for r in _records(path)}
    assert records[0]["solved"] and records[1]["status"] == "error"
    assert "MemoryError: out of luck" in records[1]["error"]
    assert "statuses: error 1, solved 1" in capsys.readouterr().out


def test_bench__resume_runs_only_what_is_missing(tmp_path):
    out = tmp_path / "bench"
    args = ["bench", "--levels", "microban:1-4", "--planners", "astar,bfs", "--out", str(out)]
    assert main([*args, "--no-plot", "--quiet"]) == 0
    csv = out / "results.csv"
    lines = csv.read_text().splitlines(keepends=True)
    csv.write_text("".join(lines[:4]) + lines[4][:15])  # three rows kept, one cut
    assert main([*args, "--no-plot", "--quiet", "--resume", "--jobs", "2"]) == 0
    rows = csv.read_text().splitlines()[1:]
    keys = [tuple(r.split(",")[i] for i in (1, 3)) for r in rows]
    assert len(keys) == 8 and len(set(keys)) == 8
    assert rows[:3] == [line.rstrip("\n") for line in lines[1:4]]


def test_optimize__jobs_give_the_same_results_and_resume(tmp_path):
    solutions = tmp_path / "solved.jsonl"
    main(["solve", "microban:1-6", "--jsonl", str(solutions), "--quiet"])
    here, two = tmp_path / "here.jsonl", tmp_path / "two.jsonl"
    common = ["optimize", "microban:1-6", "--solutions", str(solutions), "--time-limit", "2"]
    assert main([*common, "--jsonl", str(here), "--quiet"]) == 0
    assert main([*common, "--jsonl", str(two), "--quiet", "--jobs", "2"]) == 0

    def lurds(path):
        return {r["index"]: r["lurd"] for r in _records(path)}

    assert lurds(here) == lurds(two) and len(lurds(here)) == 6
    lines = two.read_text().splitlines(keepends=True)
    two.write_text("".join(lines[:2]))
    assert main([*common, "--jsonl", str(two), "--quiet", "--resume"]) == 0
    assert sorted(r["index"] for r in _records(two)) == list(range(6))
