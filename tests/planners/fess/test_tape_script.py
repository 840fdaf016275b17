"""``benchmarks/fess_tape.py``: Microban II 131 cut to shorter bands, the levels its table runs."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from planners import SearchLimits, solve
from soko_gym.levels import verify
from soko_gym.levels.packs import indexed_levels

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("fess_tape", ROOT / "benchmarks" / "fess_tape.py")
fess_tape = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fess_tape)
band_level = fess_tape.band_level


def test_band_level__the_full_band_is_the_published_level():
    assert band_level(11).rows == indexed_levels("microban2:131")[0][1].rows


def test_band_level__each_row_cut_takes_four_boxes_and_four_targets():
    for rows in range(5, 12):
        level = band_level(rows)
        assert level.n_boxes == len(level.goals) == 4 * rows


def test_band_level__a_short_band_is_a_level_fess_solves():
    level = band_level(5)
    result = solve(level, "fess", SearchLimits(max_seconds=30))
    assert result.solved and verify(level, result.lurd).ok


def test_band_level__rejects_a_length_it_cannot_cut_to():
    for rows in (4, 12):
        with pytest.raises(ValueError, match="rows must be between 5 and 11"):
            band_level(rows)


def test_fess_tape__prints_a_row_per_band_length():
    out = subprocess.run(
        [sys.executable, "benchmarks/fess_tape.py", "--sizes", "5", "--seconds", "20"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[-1].startswith("| 5 | 20 | solved |")
