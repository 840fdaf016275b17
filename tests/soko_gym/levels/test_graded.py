"""Graded suites: ``graded:FILE.csv[:KEY=A-B]...`` loads the rows of a soko grade CSV."""

import csv

import pytest

from soko_gym.levels import Level, load_levels
from soko_gym.levels.graded import COLUMNS, level_cell, parse_graded
from soko_gym.levels.packs import indexed_levels

ROOMS = [
    Level.from_xsb("#####\n#@$.#\n#####", title="one push"),
    Level.from_xsb("######\n#@$ .#\n######", title="two, pushes"),
    Level.from_xsb("  #####\n### @ #\n#.$ $.#\n#     #\n#######", title='"two boxes"'),
    Level.from_xsb("#######\n#@$  .#\n#######", title="unsolved"),
]
# (pushes, moves) per room; the last has no figures (not solved), the third no proven moves
FIGURES = [("1", "1"), ("2", "2"), ("4", ""), ("", "")]


@pytest.fixture
def grades(tmp_path):
    path = tmp_path / "grades.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(COLUMNS)
        for n, (level, (pushes, moves)) in enumerate(zip(ROOMS, FIGURES, strict=True), 1):
            row = {
                "source": "rooms", "level": str(n), "title": level.title,
                "boxes": str(level.n_boxes), "width": str(level.width),
                "height": str(level.height), "pushes": pushes, "moves": moves,
                "status": "solved" if pushes else "timeout",
                "moves_status": "optimal" if moves else "", "seconds": "0.001",
                "commit": "test", "xsb": level_cell(level),
            }  # fmt: skip
            out.writerow([row[c] for c in COLUMNS])
    return path


def test_level_cell__is_one_line_that_loads_the_board_again():
    for level in ROOMS:
        cell = level_cell(level)
        assert "\n" not in cell and " " not in cell
        assert Level.from_xsb(cell).rows == level.rows


def test_graded__loads_every_row_in_order_with_titles(grades):
    assert load_levels(f"graded:{grades}") == ROOMS


def test_graded__a_filter_keeps_the_rows_in_range_and_leaves_out_rows_without_the_figure(grades):
    assert load_levels(f"graded:{grades}:pushes=2-4") == ROOMS[1:3]
    assert load_levels(f"graded:{grades}:moves=1-100") == ROOMS[:2]  # unproven moves left out
    assert load_levels(f"graded:{grades}:moves=2") == ROOMS[1:2]
    assert load_levels(f"graded:{grades}:boxes=1:pushes=1-4") == ROOMS[:2]  # both must hold
    assert load_levels(f"graded:{grades}:width=7") == ROOMS[2:]


def test_graded__a_selection_counts_the_rows_kept(grades):
    assert load_levels(f"graded:{grades}:pushes=1-9:2-3") == ROOMS[1:3]
    assert [i for i, _ in indexed_levels(f"graded:{grades}:pushes=1-9:3")] == [2]
    assert load_levels(f"graded:{grades}:2") == ROOMS[1:2]


def test_parse_graded__splits_the_file_from_its_filters():
    assert parse_graded("graded:a.csv") == ("a.csv", [])
    assert parse_graded("graded:dir:x/a.csv:moves=5-9:boxes=2") == (
        "dir:x/a.csv",
        [("moves", 5, 9), ("boxes", 2, 2)],
    )


@pytest.mark.parametrize(
    ("tail", "match"),
    [
        (":moves=9-5", "empty range"),
        (":moves=a-b", "bad filter"),
        (":seconds=1-2", "bad filter"),
        (":moves=", "bad filter"),
        (":moves=500", "keeps no level"),
    ],
)
def test_graded__a_bad_filter_is_a_value_error_naming_the_spec(grades, tail, match):
    spec = f"graded:{grades}{tail}"
    with pytest.raises(ValueError, match=match) as err:
        load_levels(spec)
    assert repr(spec) in str(err.value)


def test_graded__a_missing_file_or_column_is_named(tmp_path):
    with pytest.raises(ValueError, match="no file"):
        load_levels(f"graded:{tmp_path / 'none.csv'}")
    with pytest.raises(ValueError, match="names no file"):
        load_levels("graded:")
    path = tmp_path / "other.csv"
    path.write_text("title,xsb\nx,#####|#@$.#|#####\n")
    assert load_levels(f"graded:{path}")[0].title == "x"
    with pytest.raises(ValueError, match="no column moves"):
        load_levels(f"graded:{path}:moves=1")
