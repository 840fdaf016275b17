"""The one JSONL record schema of solve results (``planners.records``)."""

import pytest

from planners import solve
from planners.records import HEADER_FIELDS, RESULT_FIELDS, solve_record
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
