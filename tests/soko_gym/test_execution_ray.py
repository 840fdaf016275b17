"""The execution layer's Ray backend on a local Ray (2 CPUs, no dashboard)."""

import json
import signal
import subprocess
import sys
import time
from functools import partial

import pytest

ray = pytest.importorskip("ray", reason="the Ray backend needs the `dist` extra")

from soko_gym.cli import main  # noqa: E402
from soko_gym.execution import Backend, run  # noqa: E402
from tests.soko_gym import test_execution as helpers  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.cloudpickle.register_pickle_by_value(helpers)  # workers need not import the tests
    yield
    ray.shutdown()


RAY = Backend(ray="local")  # an initialized Ray is used as it is


def test_ray__every_item_once_with_its_key(local_ray):
    outcomes = list(run(helpers.square, [(i, i) for i in range(50)], RAY, total=50))
    assert sorted((o.key, o.value) for o in outcomes) == [(i, i * i) for i in range(50)]


def test_ray__a_task_that_raises_is_retried_then_an_error(local_ray, tmp_path):
    flaky = list(run(partial(helpers.fail_once, str(tmp_path)), [(i, i) for i in range(4)], RAY))
    assert all(o.ok and o.attempts == 2 for o in flaky)
    outcomes = {o.key: o for o in run(partial(helpers.fail_on, 2), [(i, i) for i in range(4)], RAY)}
    assert not outcomes[2].ok and outcomes[2].attempts == 2
    assert "ValueError: no good: 2" in outcomes[2].error
    assert all(outcomes[i].ok for i in (0, 1, 3))


def test_ray__a_dead_worker_loses_no_item(local_ray, tmp_path):
    fn = partial(helpers.die_once, str(tmp_path))
    outcomes = list(run(fn, [(i, i) for i in range(6)], Backend(ray="local", batch_size=2)))
    assert sorted(o.key for o in outcomes) == list(range(6))
    assert all(o.ok for o in outcomes) and sorted(o.value for o in outcomes) == list(
        range(100, 106)
    )


def _solutions(path):
    return {r["index"]: (r["solved"], r["lurd"]) for r in map(json.loads, path.open())}


def test_solve__ray_gives_the_same_solutions_as_jobs(local_ray, tmp_path):
    jobs, on_ray = tmp_path / "jobs.jsonl", tmp_path / "ray.jsonl"
    assert main(["solve", "microban:1-30", "--jsonl", str(jobs), "--quiet", "--jobs", "2"]) == 0
    assert main(["solve", "microban:1-30", "--jsonl", str(on_ray), "--quiet", "--ray"]) == 0
    assert _solutions(on_ray) == _solutions(jobs) and len(_solutions(jobs)) == 30


def test_solve__ray_resume_writes_no_level_twice(local_ray, tmp_path):
    path = tmp_path / "run.jsonl"
    main(["solve", "microban:1-12", "--jsonl", str(path), "--quiet", "--ray"])
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:5]))
    assert (
        main(["solve", "microban:1-12", "--jsonl", str(path), "--quiet", "--resume", "--ray"]) == 0
    )
    indexes = [json.loads(line)["index"] for line in path.read_text().splitlines()]
    assert sorted(indexes) == list(range(12))


def test_solve__ctrl_c_on_ray_keeps_written_lines(tmp_path):
    path = tmp_path / "partial.jsonl"
    cmd = [sys.executable, "-m", "soko_gym.cli", "solve", "microban:1-155", "--time-limit", "60"]
    cmd += ["--jsonl", str(path), "--quiet", "--ray", "--jobs", "2", "--batch-size", "1"]
    proc = subprocess.Popen(  # its own local Ray; SIGINT as a terminal would send it
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.time() + 180
    while time.time() < deadline and (not path.exists() or path.read_text().count("\n") < 5):
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, err[-2000:]
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) >= 5 and all(r["solved"] for r in records)
    assert len({r["index"] for r in records}) == len(records) and "stopped" in out
