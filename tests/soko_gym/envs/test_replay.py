import argparse
import base64
import io
import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from soko_gym.envs.render.replay import (
    frame_tile_ids,
    make_replay,
    output_format,
    replay_frames,
    replay_html,
    write_gif,
    write_html,
    write_mp4,
    write_replays,
)
from soko_gym.envs.render.replay_cli import add_parsers
from soko_gym.levels import Level
from soko_gym.levels.picture import (
    TILE_BOX,
    TILE_BOX_ON_GOAL,
    draw_level,
    level_tile_ids,
    png_bytes,
    tile_atlas,
)

LEVEL = """\
####
# .#
#  ###
#*@  #
#  $ #
#  ###
####
"""
SOLUTION = "dlUrrrdLullddrUluRuulDrddrruLdlUU"  # 33 moves, 8 pushes

# 10x10 with one box: 298 steps of walking, then the two pushes that solve it
ROOM = """\
##########
#        #
#        #
#        #
#   @$ . #
#        #
#        #
#        #
#        #
##########
"""
LONG_SOLUTION = "ud" * 149 + "RR"

BOX_FILL = (204, 138, 56)  # the fill colours of the box and box-on-goal tiles (picture.py)
BOX_ON_GOAL_FILL = (72, 172, 84)


@pytest.fixture(scope="module")
def replay():
    return make_replay(Level.from_xsb(LEVEL, title="micro 1"), SOLUTION)


def _parser():
    parser = argparse.ArgumentParser(prog="soko")
    add_parsers(parser.add_subparsers(dest="command", required=True), "levels")
    return parser


def _level_file(tmp_path, *levels):
    path = tmp_path / "levels.xsb"
    path.write_text("\n".join(f"; L{i + 1}\n\n{x}" for i, x in enumerate(levels)))
    return str(path)


# -- checking and frames -----------------------------------------------------------------------


def test_make_replay__counts_moves_and_pushes(replay):
    assert (replay.moves, replay.pushes) == (33, 8)
    assert replay.label == "micro 1"


def test_make_replay__bad_step_names_level_and_step():
    level = Level.from_xsb(LEVEL, title="micro 1")
    with pytest.raises(ValueError, match=r"micro 1: bad solution at step 5 of 5 \('U'\)"):
        make_replay(level, "dlUUU")  # the fifth step pushes the box into the wall
    with pytest.raises(ValueError, match="micro 1: bad solution at step 1 of 1 \\('x'\\)"):
        make_replay(level, "x")
    with pytest.raises(ValueError, match="micro 1: the solution does not solve the level"):
        make_replay(level, SOLUTION[:-1])


def test_frame_tile_ids__start_is_the_level_and_last_is_solved(replay):
    ids = frame_tile_ids(replay)
    assert ids.shape == (34, 7, 6)
    assert np.array_equal(ids[0], level_tile_ids(replay.level))
    assert not (ids[-1] == TILE_BOX).any()
    assert (ids[-1] == TILE_BOX_ON_GOAL).sum() == replay.level.n_boxes
    assert np.array_equal(replay_frames(replay, 8)[0], draw_level(replay.level, 8))


# -- GIF and MP4 -------------------------------------------------------------------------------


def test_write_gif__one_frame_per_move_plus_start_and_last_solved(replay, tmp_path):
    path = tmp_path / "r.gif"
    assert write_gif(replay, path, fps=10, tile_size=16) == 34
    expected = replay_frames(replay, 16)
    with Image.open(path) as gif:
        assert gif.n_frames == replay.moves + 1
        assert gif.info["loop"] == 0
        assert np.array_equal(np.asarray(gif.convert("RGB")), expected[0])
        gif.seek(gif.n_frames - 1)
        last = np.asarray(gif.convert("RGB"))
    assert np.array_equal(last, expected[-1])


def test_write_gif__without_pillow_names_the_extra(replay, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"soko-gym\[data\]"):
        write_gif(replay, tmp_path / "r.gif")


def test_write_gif__bad_fps(replay, tmp_path):
    with pytest.raises(ValueError, match="fps"):
        write_gif(replay, tmp_path / "r.gif", fps=0)


def test_write_mp4__frames_then_one_second_on_the_solved_position(replay, tmp_path):
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg", reason="the `video` extra is missing")
    path = tmp_path / "r.mp4"
    assert write_mp4(replay, path, fps=8, tile_size=15) == 34  # odd size: padded to even
    n_frames, _ = imageio_ffmpeg.count_frames_and_secs(str(path))
    assert n_frames == replay.moves + 1 + 8
    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    assert tuple(meta["size"]) == (90, 106)  # 6 x 7 tiles of 15 px, height padded to even
    *_, last = reader
    picture = np.frombuffer(last, dtype=np.uint8).reshape(106, 90, 3)[:105].astype(int)
    frames = replay_frames(replay, 15).astype(int)
    off_solved = np.abs(picture - frames[-1]).mean()  # lossy H.264 (yuv420p): nearest, not equal
    assert off_solved < min(np.abs(picture - f).mean() for f in frames[:-1])


def test_write_mp4__without_imageio_ffmpeg_names_the_extra(replay, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    with pytest.raises(ImportError, match=r"soko-gym\[video\]"):
        write_mp4(replay, tmp_path / "r.mp4")


def test_write_replays__gif_shows_one_solution(replay, tmp_path):
    with pytest.raises(ValueError, match="--out r.gif shows one solution, got 2"):
        write_replays([replay, replay], tmp_path / "r.gif")


def test_output_format__by_suffix():
    assert [output_format(p) for p in ("a.GIF", "b.mp4", "c.html", "d.htm")] == [
        "gif",
        "mp4",
        "html",
        "html",
    ]
    with pytest.raises(ValueError, match="--out"):
        output_format("a.png")


# -- HTML --------------------------------------------------------------------------------------


def _embedded(html):
    text = re.search(r'<script id="soko-data" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(text.group(1))


def test_replay_html__self_contained_under_200_kb_for_300_moves(tmp_path):
    long = make_replay(Level.from_xsb(ROOM, title="room"), LONG_SOLUTION)
    assert long.moves == 300
    size = write_html([long], tmp_path / "r.html", tile_size=16)
    assert size < 200_000
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") == 1  # the atlas, once
    assert not re.search(r"(src|href)=\"(?!data:)", html)  # nothing fetched
    assert "http://" not in html and "https://" not in html
    for control in ('id="play"', 'id="back"', 'id="fwd"', 'id="speed"', 'id="pos"'):
        assert control in html
    data = _embedded(html)
    assert data["replays"][0]["lurd"] == LONG_SOLUTION
    assert (data["replays"][0]["moves"], data["replays"][0]["pushes"]) == (300, 2)


def test_replay_html__several_solutions_and_the_atlas_png(replay):
    other = make_replay(Level.from_xsb(ROOM), "RR", "other")
    html = replay_html([replay, other], tile_size=12)
    data = _embedded(html)
    assert [r["label"] for r in data["replays"]] == ["micro 1", "other"]
    assert data["tile"] == 12
    png = data["atlas"].split(",", 1)[1]
    with Image.open(io.BytesIO(base64.b64decode(png))) as atlas:
        strip = np.asarray(atlas.convert("RGB"))
    assert np.array_equal(strip, tile_atlas(12).reshape(-1, 12, 3))


def test_replay_html__a_label_cannot_close_the_script(replay):
    sly = make_replay(replay.level, SOLUTION, "</script><b>x")
    html = replay_html([sly])
    assert "</script><b>" not in html
    assert _embedded(html)["replays"][0]["label"] == "</script><b>x"


def _chromium(tmp_path, url, *mode, size="640,400"):
    exe = shutil.which("chromium")
    cmd = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--window-size={size}",
        "--virtual-time-budget=30000",
        *mode,
        url,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout


def _colour_count(picture, colour):
    return int(np.all(picture == np.asarray(colour, dtype=np.uint8), axis=-1).sum())


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_replay_html__chromium_plays_to_the_end_with_every_box_on_a_goal(replay, tmp_path):
    short = make_replay(replay.level, SOLUTION, "short")
    path = tmp_path / "r.html"
    write_html([replay, short], path, tile_size=16)
    url = path.as_uri()
    per_tile = _colour_count(tile_atlas(16)[TILE_BOX_ON_GOAL], BOX_ON_GOAL_FILL)
    assert per_tile == _colour_count(tile_atlas(16)[TILE_BOX], BOX_FILL) > 0

    def shot(query, name):
        _chromium(tmp_path, url + query, f"--screenshot={tmp_path / name}")
        with Image.open(tmp_path / name) as im:
            return np.asarray(im.convert("RGB"))

    start = shot("?step=0", "start.png")
    end = shot("?autoplay=1&speed=60", "end.png")
    n_boxes = 2 * replay.level.n_boxes  # two boards side by side
    off_goal_at_start = 2 * sum(
        1 for b in replay.level.boxes if level_tile_ids(replay.level)[b] == TILE_BOX
    )
    assert _colour_count(start, BOX_FILL) == off_goal_at_start * per_tile > 0
    assert _colour_count(end, BOX_FILL) == 0
    assert _colour_count(end, BOX_ON_GOAL_FILL) == n_boxes * per_tile

    dom = _chromium(tmp_path, url + "?autoplay=1&speed=max", "--dump-dom")
    assert 'data-finished="true"' in dom
    assert dom.count('data-solved="true"') == 2
    assert f'data-moves="{replay.moves}"' in dom and f'data-pushes="{replay.pushes}"' in dom


# -- the command line --------------------------------------------------------------------------


def test_render_cli__lurd_to_gif(tmp_path, capsys):
    source = _level_file(tmp_path, LEVEL)
    out = tmp_path / "r.gif"
    args = _parser().parse_args(["render", source, "--lurd", SOLUTION, "--out", str(out)])
    assert args.func(args) == 0
    assert "33 steps" in capsys.readouterr().out
    with Image.open(out) as gif:
        assert gif.n_frames == 34


def test_render_cli__bad_lurd_names_the_level_and_step(tmp_path):
    source = _level_file(tmp_path, LEVEL)
    out = str(tmp_path / "x.gif")
    args = _parser().parse_args(["render", source, "--lurd", "dlUUU", "--out", out])
    with pytest.raises(ValueError, match=r"level 1 \(L1\): bad solution at step 5 of 5"):
        args.func(args)
    assert not (tmp_path / "x.gif").exists()


def test_render_cli__lurd_needs_one_level(tmp_path):
    source = _level_file(tmp_path, LEVEL, ROOM)
    args = _parser().parse_args(["render", source, "--lurd", SOLUTION, "--out", "x.html"])
    with pytest.raises(ValueError, match="--lurd needs SOURCE to select one level"):
        args.func(args)


def test_render_cli__jsonl_files_side_by_side(tmp_path, capsys):
    source = _level_file(tmp_path, LEVEL, ROOM)
    records = [
        {"source": source, "index": 0, "planner": "astar", "solved": True, "lurd": SOLUTION},
        {"source": source, "index": 1, "planner": "astar", "solved": False, "lurd": ""},
    ]
    first = tmp_path / "a.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in records))
    second = tmp_path / "b.jsonl"
    fess = [{"index": 1, "planner": "fess", "lurd": "RR"}, {"index": 0, "lurd": SOLUTION}]
    second.write_text("".join(json.dumps(r) + "\n" for r in fess))
    out = tmp_path / "r.html"
    argv = ["render", source, "--solutions", str(first), str(second), "--out", str(out)]
    args = _parser().parse_args(argv)
    assert args.func(args) == 0
    assert "level 2 (L2) (astar) has no solution" in capsys.readouterr().err
    labels = [r["label"] for r in _embedded(out.read_text(encoding="utf-8"))["replays"]]
    assert labels == ["level 1 (L1) · astar", "level 1 (L1) · b", "level 2 (L2) · fess"]


def test_render_cli__selection_keeps_pack_indexes(tmp_path):
    source = _level_file(tmp_path, LEVEL, ROOM)
    jsonl = tmp_path / "a.jsonl"
    lines = [{"index": 0, "lurd": SOLUTION}, {"index": 1, "lurd": "RR"}]
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = tmp_path / "r.gif"
    args = _parser().parse_args(
        ["render", f"{source}:2", "--solutions", str(jsonl), "--out", str(out)]
    )
    assert args.func(args) == 0
    with Image.open(out) as gif:
        assert gif.n_frames == 3


def test_soko_render__is_a_soko_command(tmp_path):
    # needs the entry point `envs = "soko_gym.envs.render.replay_cli:add_parsers"` installed
    from soko_gym.cli import main

    source = _level_file(tmp_path, LEVEL)
    out = tmp_path / "r.html"
    assert main(["render", source, "--lurd", SOLUTION, "--out", str(out)]) == 0
    assert out.stat().st_size > 0
    assert main(["render", source, "--lurd", "dlUUU", "--out", str(out)]) == 2


# -- notebook pictures -------------------------------------------------------------------------


def test_level_repr_png__is_the_level_picture():
    level = Level.from_xsb(LEVEL)
    data = level._repr_png_()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(data)) as im:
        assert np.array_equal(np.asarray(im.convert("RGB")), draw_level(level, 16))


def test_png_bytes__rejects_a_non_picture():
    with pytest.raises(ValueError, match="picture"):
        png_bytes(np.zeros((4, 4), dtype=np.uint8))


def test_env_repr_png__current_position_after_reset():
    import gymnasium as gym

    from soko_gym.envs.render.rgb import draw_planes

    env = gym.make("Sokoban-Push-v0", levels=[Level.from_xsb(LEVEL)]).unwrapped
    assert env._repr_png_() is None
    env.reset(seed=0)
    with Image.open(io.BytesIO(env._repr_png_())) as im:
        picture = np.asarray(im.convert("RGB"))
    assert np.array_equal(picture, draw_planes(env.planes(), tile_size=16))


def test_gym_make_env__shows_as_a_picture_in_ipython():
    # what Jupyter does with a cell's value: gym.make's wrappers draw as the env's position
    import gymnasium as gym

    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    shell = interactiveshell.InteractiveShell.instance()
    try:
        env = gym.make("Sokoban-Push-v0", levels=[Level.from_xsb(LEVEL)])
        assert isinstance(env, gym.Wrapper)
        data, _ = shell.display_formatter.format(env)
        assert "image/png" not in data  # before reset: the text repr only
        env.reset(seed=0)
        data, _ = shell.display_formatter.format(env)
        assert data["image/png"] == env.unwrapped._repr_png_()
        other = gym.make("CartPole-v1")  # not ours: no picture
        assert "image/png" not in shell.display_formatter.format(other)[0]
    finally:
        interactiveshell.InteractiveShell.clear_instance()
