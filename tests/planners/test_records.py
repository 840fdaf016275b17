"""The one JSONL record schema of solve results (``planners.records``)."""

import pytest

from planners import solve
from planners.records import (
    HEADER_FIELDS,
    RESULT_FIELDS,
    read_records,
    solve_record,
    solved_within,
)
from soko_gym.levels import load_levels, verify
from soko_gym.provenance import code_version


def test_solve_record__header_then_result_then_extras():
    level = load_levels("microban:2")[0]
    result = solve(level, "bfs")
    record = solve_record("microban", 1, level, result, suite="x")
    assert list(record)[: len(HEADER_FIELDS)] == list(HEADER_FIELDS)
    assert set(RESULT_FIELDS) <= set(record) and record["suite"] == "x"
    assert record["index"] == 1 and record["title"] == level.title
    assert record["commit"] == code_version() and record["commit"]
    assert verify(level, record["lurd"]).ok
    # a worker's as_dict() gives the same record
    assert solve_record("microban", 1, level, result.as_dict(), suite="x") == record


def test_solve_record__refuses_a_result_without_the_fields():
    level = load_levels("microban:2")[0]
    with pytest.raises(ValueError, match="lacks"):
        solve_record("microban", 1, level, {"status": "solved"})


def _rec(index, solved, seconds, limit, source="pack"):
    return {"source": source, "index": index, "title": str(index + 1), "solved": solved,
            "seconds": seconds, "limit": limit}  # fmt: skip


def test_solved_within__mixes_runs_per_level_and_says_what_was_not_run():
    records = [
        _rec(0, True, 4.0, 60),  # solved fast
        _rec(1, True, 30.0, 60),  # solved within 60 only
        _rec(2, False, 60.5, 60),  # timed out at 60 ...
        _rec(2, True, 200.0, 600),  # ... solved by a 600 s run
        _rec(3, False, 60.2, 60),  # timed out at 60, never run longer
        _rec(4, False, 601.0, 600),  # ran 600 s without
        _rec(4, True, 700.0, 900),  # a later, longer run solved it after 600 s: not within
    ]
    s10, s60, s600 = solved_within(records, [10, 60, 600], ["1", "2", "3", "4", "5", "6"])
    assert (s10.solved, s10.seconds) == (1, 4.0)
    assert s10.unsolved == ("2", "3", "4", "5") and s10.not_run == ("6",)
    assert (s60.solved, s60.seconds) == (2, 34.0) and s60.unsolved == ("3", "4", "5")
    assert (s600.solved, s600.seconds) == (3, 234.0)
    assert s600.unsolved == ("5",) and s600.not_run == ("4", "6")  # 4 stopped at 60 s


def test_solved_within__refuses_mixed_sources_and_foreign_indices():
    with pytest.raises(ValueError, match="one source"):
        solved_within([_rec(0, True, 1, 60), _rec(1, True, 1, 60, source="other")], [60])
    with pytest.raises(ValueError, match="index 3"):
        solved_within([_rec(3, True, 1, 60)], [60], ["1", "2"])
    with pytest.raises(ValueError, match="positive"):
        solved_within([_rec(0, True, 1, 60)], [0])


def test_read_records__skips_blank_lines_and_names_the_bad_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"index": 0}\n\n{"index": 1}\n', encoding="utf-8")
    assert read_records(path) == [{"index": 0}, {"index": 1}]
    path.write_text('{"index": 0}\n{"index": \n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 2: not JSON"):
        read_records(path)
