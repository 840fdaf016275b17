"""``soko grade``: the CSV of optimal figures, its output file rules, and graded sources."""

import csv

import pytest

from planners.grade import HEADER
from soko_gym.cli import main
from soko_gym.levels import Level, load_levels
from soko_gym.levels.corridor import corridor_level, corridor_levels
from soko_gym.levels.graded import COLUMNS

SOLVABLE_AND_NOT = """\
; solvable

#######
#@$  .#
#######

; a box in a corner

#####
#$ .#
#@$.#
#####
"""


def rows(path):
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_grade__corridors_have_n_pushes_and_n_moves(tmp_path, capsys):
    out = tmp_path / "grades.csv"
    assert main(["grade", "generated:corridor:7", "--out", str(out), "--quiet"]) == 0
    assert out.read_text().startswith(HEADER)
    got = rows(out)
    assert [r["title"] for r in got] == [lv.title for lv in corridor_levels(7)]
    for n, (row, level) in enumerate(zip(got, corridor_levels(7), strict=True), 1):
        assert list(row) == list(COLUMNS)
        assert (row["source"], row["level"]) == ("generated:corridor:7", str(n))
        assert (row["status"], row["moves_status"]) == ("solved", "optimal")
        assert (row["pushes"], row["moves"], row["boxes"]) == ("7", "7", "1")
        assert (row["width"], row["height"]) == (str(level.width), str(level.height))
        assert float(row["seconds"]) >= 0 and row["commit"]
        assert Level.from_xsb(row["xsb"]).rows == level.rows
    assert "4 solved, moves proven 4" in capsys.readouterr().out


def test_grade__unsolved_levels_leave_the_figures_empty_and_exit_one(tmp_path):
    source = tmp_path / "two.xsb"
    source.write_text(SOLVABLE_AND_NOT)
    out = tmp_path / "grades.csv"
    assert main(["grade", str(source), "--out", str(out), "--quiet"]) == 1
    solved, corner = rows(out)
    assert (solved["pushes"], solved["moves"], solved["status"]) == ("3", "3", "solved")
    assert (corner["pushes"], corner["moves"], corner["status"]) == ("", "", "unsolvable")
    assert corner["moves_status"] == "" and corner["title"] == "a box in a corner"
    assert load_levels(f"graded:{out}:pushes=0-99") == load_levels(f"{source}:1")
    assert load_levels(f"graded:{out}") == load_levels(str(source))  # no filter: every row


def test_grade__never_overwrites_without_asking(tmp_path, capsys):
    out = tmp_path / "keep.csv"
    out.write_text("precious\n")
    assert main(["grade", "generated:corridor:3:1", "--out", str(out)]) == 2
    assert out.read_text() == "precious\n" and "--overwrite" in capsys.readouterr().err
    args = ["grade", "generated:corridor:3:1", "--out", str(out), "--quiet"]
    assert main([*args, "--resume"]) == 2  # not a grade CSV: its header is named
    assert "columns" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0
    assert [r["title"] for r in rows(out)] == ["corridor 3 right"]


def test_grade__resume_keeps_whole_rows_and_ends_in_level_order(tmp_path):
    out = tmp_path / "grades.csv"
    args = ["grade", "corridors:1-4", "--out", str(out), "--quiet"]
    assert main(args) == 0
    lines = out.read_text().splitlines(keepends=True)
    # the row of level 2 was lost and a kill cut the last line short
    out.write_text(lines[0] + lines[1] + lines[3] + lines[4] + lines[2][:30])
    assert main([*args, "--resume"]) == 0
    now = out.read_text().splitlines(keepends=True)
    assert [now[i] for i in (0, 1, 3, 4)] == [lines[i] for i in (0, 1, 3, 4)]  # kept as written
    assert [r["level"] for r in rows(out)] == ["1", "2", "3", "4"]
    assert rows(out)[1]["moves"] == "5" and rows(out)[1]["title"] == "corridor 5 down"
    assert main(["grade", "corridors:5", "--out", str(out), "--resume", "--quiet"]) == 0
    assert len(rows(out)) == 5


def test_grade__jobs_give_the_same_rows(tmp_path):
    one, two = tmp_path / "1.csv", tmp_path / "2.csv"
    assert main(["grade", "corridors:1-6", "--out", str(one), "--quiet"]) == 0
    assert main(["grade", "corridors:1-6", "--out", str(two), "--quiet", "--jobs", "2"]) == 0

    def figures(path):
        return [(r["level"], r["pushes"], r["moves"], r["xsb"]) for r in rows(path)]

    assert figures(one) == figures(two)  # in level order though finished in any order


def test_graded__cuts_a_grading_by_moves_in_order(tmp_path, capsys):
    out = tmp_path / "grades.csv"
    assert main(["grade", "corridors:1-16", "--out", str(out), "--quiet"]) == 0
    kept = load_levels(f"graded:{out}:moves=10-15")
    assert kept == load_levels("corridors:5-12")  # lengths 10 and 15, four rotations each
    assert load_levels(f"graded:{out}:pushes=20:2") == [corridor_level(20, "down")]
    assert main(["show", f"graded:{out}:moves=5"]) == 0
    assert capsys.readouterr().out.count("; corridor 5 ") == 4


@pytest.mark.parametrize("bad", ["moves=1-x", "movess=3", "moves=9-1"])
def test_graded__a_bad_filter_stops_the_command_naming_it(tmp_path, capsys, bad):
    out = tmp_path / "grades.csv"
    assert main(["grade", "generated:corridor:3", "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["show", f"graded:{out}:{bad}"]) == 2
    assert bad in capsys.readouterr().err
