import json
import os
import signal
import subprocess
import sys
import time

from soko_gym.cli import main


def test_solve__writes_jsonl_with_every_field(tmp_path, capsys):
    path = tmp_path / "out.jsonl"
    assert main(["solve", "microban:2-3", "--planner", "astar", "--jsonl", str(path)]) == 0
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["index"] for r in rows] == [1, 2] and rows[0]["source"] == "microban"
    keys = {
        "source",
        "index",
        "title",
        "planner",
        "solved",
        "status",
        "optimal",
        "lurd",
        "pushes",
        "moves",
        "nodes",
        "generated",
        "seconds",
        "stats",
        "commit",
    }
    assert keys <= set(rows[0]) and all(r["solved"] and r["optimal"] for r in rows)
    assert rows[0]["commit"].startswith(("git:", "soko-gym "))
    out = capsys.readouterr().out
    assert "| astar | 2/2 | 2 |" in out


def test_solve__never_overwrites_without_asking(tmp_path, capsys):
    path = tmp_path / "keep.jsonl"
    path.write_text("precious\n")
    assert main(["solve", "microban:2", "--jsonl", str(path)]) == 2
    assert path.read_text() == "precious\n" and "--overwrite" in capsys.readouterr().err
    assert main(["solve", "microban:2", "--jsonl", str(path), "--overwrite"]) == 0


def test_solve__jobs_give_the_same_results(tmp_path):
    one, two = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    main(["solve", "microban:1-4", "--jsonl", str(one), "--quiet"])
    main(["solve", "microban:1-4", "--jsonl", str(two), "--quiet", "--jobs", "2"])

    def load(p):
        return sorted(
            (r["index"], r["pushes"]) for r in map(json.loads, p.read_text().split("\n")[:-1])
        )

    assert load(one) == load(two)


def test_solve__unsolved_levels_exit_one(capsys):
    assert main(["solve", "microban:144", "--node-limit", "10", "--quiet"]) == 1
    assert "node_limit 1" in capsys.readouterr().out


def test_solve__ctrl_c_keeps_written_lines(tmp_path):
    path = tmp_path / "partial.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "soko_gym.cli",
        "solve",
        "microban:1-155",
        "--time-limit",
        "60",
        "--jsonl",
        str(path),
        "--quiet",
    ]
    # a shell without job control starts background jobs with SIGINT ignored, and Python keeps
    # an ignored SIGINT: give the child the default disposition, as a terminal would
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.time() + 180  # a cold numba cache compiles A* first
    while time.time() < deadline and (not path.exists() or path.read_text().count("\n") < 3):
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130
    lines = path.read_text().splitlines()
    assert len(lines) >= 3 and all(json.loads(line)["solved"] for line in lines)
    assert "stopped" in out


def test_solve__json_summary_for_scripts(capsys):
    assert main(["solve", "microban:1-3", "--node-limit", "20", "--json"]) == 1
    captured = capsys.readouterr()
    summary = json.loads(captured.out)  # stdout holds the JSON object only
    assert summary["levels"] == 3 and summary["solved"] == 2 and summary["unsolved"] == [2]
    assert summary["statuses"] == {"solved": 2, "node_limit": 1} and not summary["interrupted"]
    assert "| planner |" not in captured.out and "[3/3]" not in captured.err
