import warnings

import pytest

import soko_gym
from soko_gym.errors import LevelFormatError
from soko_gym.levels import Level, dump_levels, load_levels, parse_levels

SIMPLE = """\
#####
#@$.#
#####
"""

PACK_SIZES = {
    "xsokoban": 90,
    "microban": 155,
    "microban2": 135,
    "microban3": 101,
    "microban4": 102,
    "sasquatch": 50,
    "boxoban-unfiltered-train": 1000,
    "boxoban-unfiltered-valid": 1000,
    "boxoban-unfiltered-test": 1000,
    "boxoban-medium-train": 1000,
    "boxoban-medium-valid": 1000,
    "boxoban-hard": 1000,
    "corridors": 80,
}


@pytest.mark.parametrize("name", list(PACK_SIZES))
def test_load_levels__bundled_pack_has_its_count(name):
    levels = load_levels(name)
    assert len(levels) == PACK_SIZES[name]
    assert all(lv.n_boxes == len(lv.goals) >= 1 for lv in levels)


def test_packs__lists_every_bundled_pack_with_credit():
    assert soko_gym.packs() == list(PACK_SIZES)
    for name in PACK_SIZES:
        info = soko_gym.pack_info(name)
        assert info.n_levels == PACK_SIZES[name] and info.credit


def test_load_levels__credits_file_names_every_collection():
    from importlib import resources

    text = (resources.files("soko_gym.levels") / "data" / "CREDITS.md").read_text()
    for author in ("David W. Skinner", "Thinking Rabbit", "DeepMind", "Apache"):
        assert author in text


def test_load_levels__selection_is_one_based_and_inclusive():
    all_levels = load_levels("xsokoban")
    assert load_levels("xsokoban:1") == all_levels[:1]
    assert load_levels("xsokoban:3-5") == all_levels[2:5]
    assert load_levels("microban:155")[0].title == "155 'The Dungeon'"
    assert load_levels("boxoban-hard:1")[0].title == "0"  # DeepMind's 0-based index kept


@pytest.mark.parametrize(
    "selection", ["microban:0", "microban:156", "microban:5-3", "xsokoban:1-91"]
)
def test_load_levels__selection_out_of_range_raises(selection):
    with pytest.raises(LevelFormatError, match="out of range"):
        load_levels(selection)


def test_load_levels__unknown_source_names_it():
    with pytest.raises(ValueError, match="no-such-pack"):
        load_levels("no-such-pack")
    with pytest.raises(ValueError, match="on_error"):
        load_levels("microban", on_error="ignore")


def test_load_levels__path_with_selection(tmp_path):
    path = tmp_path / "my_levels.xsb"
    path.write_text(dump_levels(load_levels("microban:1-6")))
    assert load_levels(f"{path}:5") == load_levels("microban:5")
    assert load_levels(path) == load_levels("microban:1-6")


def test_load_levels__directory_of_boxoban_files(tmp_path):
    # DeepMind's layout: plain-text files of "; N" titles and 10-row boards
    (tmp_path / "001.txt").write_text(dump_levels(load_levels("boxoban-hard:3-4")))
    (tmp_path / "000.txt").write_text(dump_levels(load_levels("boxoban-hard:1-2")))
    (tmp_path / "README.md").write_text("not levels")
    levels = load_levels(tmp_path)
    assert levels == load_levels("boxoban-hard:1-4")
    assert load_levels(f"{tmp_path}:3")[0].title == "2"


def test_parse__rle_rows_equal_plain_rows():
    plain = parse_levels("######\n#    #\n#@$. #\n######\n")[0]
    assert parse_levels("6#\n#4-#\n#@$.-#\n6#\n")[0] == plain
    assert parse_levels("6#|#4 #|#@$._#|6#\n")[0] == plain
    assert parse_levels("6#|#2(2-)#|#@$.-#|3(2#)\n")[0] == plain


def test_parse__dash_and_underscore_are_floor():
    assert Level.from_xsb("#####\n#@$.#\n#-_-#\n#####") == Level.from_xsb(
        "#####\n#@$.#\n#   #\n#####"
    )


def test_parse__titles_and_comments_from_semicolons_and_title_lines():
    text = """; My collection
; by someone

; First
; a comment

#####
#@$.#
#####

#####
#.$@#
#####
Title: Second

Title: Third
######
#+$* #
######
"""
    a, b, c = parse_levels(text)
    assert (a.title, a.comments) == ("a comment", ("First",))
    assert b.title == "Second"
    assert c.title == "Third"


def test_level__xsb_round_trip_is_lossless_for_every_bundled_level():
    for name in soko_gym.packs():
        levels = load_levels(name)
        assert parse_levels(dump_levels(levels)) == levels
    lv = Level(("#####", "#@$.#", "#####"), "", ("note one", "note two"))
    assert Level.from_xsb(lv.to_xsb()) == lv


def test_level__exposes_board_geometry():
    lv = Level.from_xsb(" ####\n #@ ###\n #.$*.#\n ## $ #\n  #####\n")
    assert (lv.width, lv.height) == (7, 5)
    assert lv.player == (1, 2)
    assert lv.boxes == ((2, 3), (2, 4), (3, 4))
    assert lv.goals == ((2, 2), (2, 4), (2, 5))
    assert (0, 1) in lv.walls and (1, 2) not in lv.walls


def _error(text, **kw):
    with pytest.raises(LevelFormatError) as info:
        parse_levels(text, **kw)
    return info.value


def test_parse__unknown_character_names_line_and_column():
    err = _error("#####\n#@$.#\n#.x$#\n#####\n")
    assert (err.line, err.col) == (3, 3) and "'x'" in err.problem


def test_parse__unknown_character_in_rle_row_names_source_column():
    err = _error("5#\n#@$.#\n#2-?#\n5#\n")
    assert (err.line, err.col) == (3, 4)


def test_parse__no_player():
    err = _error("; t\n#####\n# $.#\n#####\n")
    assert err.line == 2 and "no player" in err.problem


def test_parse__two_players_points_at_the_second():
    err = _error("######\n#@$.@#\n######\n")
    assert (err.line, err.col) == (2, 5) and "players" in err.problem


def test_parse__boxes_and_goals_differ():
    err = _error("######\n#@$$.#\n######\n")
    assert err.line == 1 and "2 boxes but 1 goals" in err.problem


def test_parse__no_boxes():
    err = _error("####\n#@ #\n####\n")
    assert "no boxes" in err.problem


@pytest.mark.parametrize(
    ("text", "what", "where"),
    [
        ("#####\n#@$.#\n#   \n#####\n", "player", (2, 2)),  # gap in the right wall
        ("#####\n @$.#\n#####\n", "player", (2, 2)),
        ("#####\n#@$ #\n#####\n .*\n", "goal", (4, 2)),  # goal and box outside a closed room
    ],
)
def test_parse__open_board_is_rejected(text, what, where):
    err = _error(text)
    assert "outside the walls" in err.problem and what in err.problem
    if where:
        assert (err.line, err.col) == where


def test_parse__open_board_with_box_outside_reports_its_square():
    err = _error("#####\n#@ .#\n#####\n  $\n")
    assert "box" in err.problem and (err.line, err.col) == (4, 3)


def test_parse__empty_file():
    for text in ("", "\n\n", "; only a comment\n"):
        err = _error(text)
        assert "no level" in err.problem and (err.line, err.col) == (1, 1)


def test_parse__board_over_128_is_rejected():
    row = "#" * 130
    text = "\n".join([row, "#@$." + " " * 125 + "#", row]) + "\n"
    err = _error(text)
    assert "130x3" in err.problem and "128" in err.problem


def test_load_levels__bad_level_in_a_collection_names_which_one(tmp_path):
    good = dump_levels(load_levels("microban:1-3"))
    bad = "#####\n#@$$#\n#####\n"
    path = tmp_path / "pack.xsb"
    path.write_text(good + "\n; broken\n\n" + bad + "\n" + dump_levels(load_levels("microban:4")))
    with pytest.raises(LevelFormatError) as info:
        load_levels(path)
    err = info.value
    assert err.level_index == 3 and str(path) in str(err) and "level 4" in str(err)
    assert err.line == good.count("\n") + 4
    with pytest.warns(UserWarning, match="skipping bad level"):
        levels = load_levels(path, on_error="skip")
    assert levels == load_levels("microban:1-4")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_levels(f"{path}:1-3") == load_levels("microban:1-3")  # bad one not selected


def test_level_format_error__is_a_value_error_and_pickles():
    import pickle

    err = _error("#####\n#@$.#\n#.x$#\n#####\n")
    assert isinstance(err, ValueError)
    again = pickle.loads(pickle.dumps(err))
    assert (again.line, again.col, str(again)) == (err.line, err.col, str(err))


def test_level__pickles_without_its_compiled_board():
    import pickle

    lv = load_levels("microban:2")[0]
    _ = lv.board
    again = pickle.loads(pickle.dumps(lv))
    assert again == lv and "board" not in again.__dict__


@pytest.mark.parametrize("row", ["999999999#", "9999(9999(#-))"])
def test_parse__huge_run_length_is_an_error_not_a_hang(row):
    err = _error(f"#####\n#@$.#\n{row}\n#####\n")
    assert err.line == 3 and "run length" in err.problem
