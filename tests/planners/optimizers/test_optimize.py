import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import planners
import soko_gym
from planners import SearchLimits
from planners.optimizers import available_methods, optimize
from soko_gym.cli import main
from soko_gym.errors import SolutionError
from soko_gym.levels import generate_level

MICROBAN_1 = "dlUrrrdLullddrUluRuulDrddrruLdlUU"


def test_optimize__rewalks_a_wasteful_solution_by_shortest_paths():
    level = soko_gym.load_levels("microban:1")[0]
    wasteful = "dudu" + MICROBAN_1  # a detour before the first push
    result = optimize(level, wasteful, methods=[])
    assert result.input_moves == 37 and result.moves == 33 and result.pushes == 8
    assert soko_gym.verify(level, result.lurd).ok


def test_optimize__planners_optimize_is_the_same_call():
    level = soko_gym.load_levels("microban:1")[0]
    assert planners.optimize(level, MICROBAN_1, methods=[]).lurd == MICROBAN_1


@pytest.mark.parametrize(
    ("lurd", "index"),
    [(MICROBAN_1[:5] + "X" + MICROBAN_1[6:], 5), ("dlUu", 3), (MICROBAN_1[:-1], 32)],
)
def test_optimize__invalid_input_names_the_first_bad_step(lurd, index):
    level = soko_gym.load_levels("microban:1")[0]
    with pytest.raises(SolutionError) as info:
        optimize(level, lurd)
    assert info.value.index == index


def test_optimize__bad_arguments_raise_value_error():
    level = soko_gym.load_levels("microban:1")[0]
    with pytest.raises(ValueError, match="metric"):
        optimize(level, MICROBAN_1, metric="time")
    with pytest.raises(ValueError, match="unknown methods"):
        optimize(level, MICROBAN_1, methods=["magic"])


def detoured(level, lurd, rng, n):
    """A valid solution with ``n`` back-and-forth detours inserted where they are legal."""
    out = lurd
    for _ in range(n):
        i = int(rng.integers(len(out) + 1))
        for pair in ("lr", "rl", "ud", "du"):
            candidate = out[:i] + pair + out[i:]
            if soko_gym.verify(level, candidate).ok:
                out = candidate
                break
    return out


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), metric=st.sampled_from(["moves", "pushes"]))
def test_optimize__random_valid_solutions_come_back_valid_and_not_worse(seed, metric):
    rng = np.random.default_rng(seed)
    made = generate_level(rng, width=7, height=7, n_boxes=int(rng.integers(1, 4)))
    level = made.level
    lurd = detoured(level, made.solution, rng, 3)
    before = soko_gym.verify(level, lurd)
    result = optimize(level, lurd, metric, limits=SearchLimits(max_seconds=3))
    after = soko_gym.verify(level, result.lurd)
    assert after.ok
    key = (lambda r: (r.moves, r.pushes)) if metric == "moves" else (lambda r: (r.pushes, r.moves))
    assert key(after) <= key(before)
    assert (result.moves, result.pushes) == (after.moves, after.pushes)
    assert set(result.methods) == set(available_methods())


def test_soko_optimize__jsonl_from_soko_solve(tmp_path, capsys):
    solved = tmp_path / "solved.jsonl"
    out = tmp_path / "optimized.jsonl"
    assert main(["solve", "microban:1-3", "--jsonl", str(solved), "--quiet"]) == 0
    code = main(
        [
            "optimize",
            "microban:1-3",
            "--solutions",
            str(solved),
            "--time-limit",
            "2",
            "--jsonl",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["index"] for r in rows] == [0, 1, 2]
    assert all(r["moves"] <= r["input_moves"] for r in rows)
    assert "| 3 |" in capsys.readouterr().out


def test_soko_solve__optimize_records_both_figures(tmp_path):
    out = tmp_path / "s.jsonl"
    main(
        [
            "solve",
            "microban:1",
            "--optimize",
            "--optimize-time",
            "2",
            "--jsonl",
            str(out),
            "--quiet",
        ]
    )
    row = json.loads(out.read_text())
    assert row["planner_moves"] >= row["moves"] and row["pushes"] == 8
    assert soko_gym.verify(soko_gym.load_levels("microban:1")[0], row["lurd"]).ok
