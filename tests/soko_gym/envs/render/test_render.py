import os
import subprocess
import sys

import numpy as np
import pytest

import soko_gym
from soko_gym.engine.board import outside_mask
from soko_gym.engine.constants import (
    N_PLANES,
    PLANE_BOX,
    PLANE_DEAD,
    PLANE_FLOOR,
    PLANE_GOAL,
    PLANE_PLAYER,
    PLANE_WALL,
)
from soko_gym.envs.render import (
    HumanRenderer,
    draw_planes,
    draw_planes_batch,
    planes_to_xsb,
    rgb,
    tile_atlas,
)

LEVEL = """\
  ####
###  ####
#     $ #
# #  #$ #
# . .#@ #
#########
"""

EVERY_TILE = """\
#######
#  $ .#
# @*  #
#######
"""


def level_planes(level, height=None, width=None, dead=False):
    """uint8[C, height, width] planes of a level, centred in a frame padded with outside."""
    grid = level.grid
    h, w = grid.shape
    height = height or h + 4
    width = width or w + 5
    planes = np.zeros((N_PLANES + int(dead), height, width), dtype=np.uint8)
    r0, c0 = (height - h) // 2, (width - w) // 2
    view = planes[:, r0 : r0 + h, c0 : c0 + w]
    wall = grid == "#"
    view[PLANE_WALL] = wall
    view[PLANE_FLOOR] = ~wall & ~outside_mask(wall)
    view[PLANE_GOAL] = np.isin(grid, list(".*+"))
    view[PLANE_BOX] = np.isin(grid, list("$*"))
    view[PLANE_PLAYER] = np.isin(grid, list("@+"))
    return planes


def tile_at(picture, row, col, tile_size):
    return picture[row * tile_size : (row + 1) * tile_size, col * tile_size : (col + 1) * tile_size]


def without_blank_columns(rows):
    cut = min(len(r) - len(r.lstrip(" ")) for r in rows)
    return tuple(r[cut:] for r in rows)


# --- ansi ---------------------------------------------------------------------------------


def test_planes_to_xsb__inline_level_round_trips():
    level = soko_gym.Level.from_xsb(LEVEL)
    text = planes_to_xsb(level_planes(level))
    assert text == LEVEL.rstrip("\n")
    assert soko_gym.Level.from_xsb(text) == level


@pytest.mark.parametrize(
    "pack, stride", [("microban", 1), ("xsokoban", 1), ("sasquatch", 1), ("boxoban-hard", 97)]
)
def test_planes_to_xsb__bundled_levels_round_trip(pack, stride):
    levels = soko_gym.load_levels(pack)[::stride]
    for level in levels:
        text = planes_to_xsb(level_planes(level, level.height + 3, level.width + 6))
        back = soko_gym.Level.from_xsb(text)
        assert back.rows == without_blank_columns(level.rows), level.title
        assert back.board.n_boxes == level.board.n_boxes


def test_planes_to_xsb__same_text_whatever_the_padding():
    level = soko_gym.load_levels("microban:3")
    level = level[0] if isinstance(level, list) else level
    texts = {planes_to_xsb(level_planes(level, h, w)) for h, w in [(8, 12), (17, 30), (9, 11)]}
    assert len(texts) == 1


def test_planes_to_xsb__every_tile_character():
    level = soko_gym.Level.from_xsb("#######\n#.$*@ #\n#######\n")
    assert planes_to_xsb(level_planes(level)) == "#######\n#.$*@ #\n#######"
    on_goal = soko_gym.Level.from_xsb("#####\n#+$ #\n#####\n")
    assert planes_to_xsb(level_planes(on_goal)) == "#####\n#+$ #\n#####"


def test_planes_to_xsb__dead_plane_is_not_shown():
    level = soko_gym.Level.from_xsb(LEVEL)
    planes = level_planes(level, dead=True)
    planes[PLANE_DEAD] = planes[PLANE_FLOOR]
    assert planes_to_xsb(planes) == LEVEL.rstrip("\n")


def test_planes_to_xsb__all_outside_is_empty():
    assert planes_to_xsb(np.zeros((N_PLANES, 4, 4), dtype=np.uint8)) == ""


def test_planes_to_xsb__rejects_bad_planes():
    with pytest.raises(ValueError, match="planes"):
        planes_to_xsb(np.zeros((N_PLANES, 4, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="planes"):
        planes_to_xsb(np.zeros((3, 4, 4), dtype=np.uint8))


# --- rgb ----------------------------------------------------------------------------------


@pytest.mark.parametrize("tile_size", [1, 2, 5, 16])
def test_draw_planes__shape_and_dtype(tile_size):
    planes = level_planes(soko_gym.Level.from_xsb(LEVEL), 10, 12)
    picture = draw_planes(planes, tile_size)
    assert picture.shape == (10 * tile_size, 12 * tile_size, 3)
    assert picture.dtype == np.uint8


def test_draw_planes__default_tile_size_is_16():
    planes = level_planes(soko_gym.Level.from_xsb(LEVEL), 10, 12)
    assert draw_planes(planes).shape == (160, 192, 3)


@pytest.mark.parametrize("tile_size", [1, 2, 3, 4, 8, 24])
def test_tile_atlas__every_tile_kind_is_distinct(tile_size):
    atlas = tile_atlas(tile_size)
    assert atlas.shape == (rgb.N_TILES, tile_size, tile_size, 3)
    flat = atlas.reshape(rgb.N_TILES, -1)
    assert len({tile.tobytes() for tile in flat}) == rgb.N_TILES


def test_tile_atlas__size_one_is_one_distinct_colour_per_kind():
    colours = tile_atlas(1).reshape(rgb.N_TILES, 3)
    assert len({tuple(c) for c in colours.tolist()}) == rgb.N_TILES


def test_tile_atlas__is_cached_and_read_only():
    assert tile_atlas(7) is tile_atlas(7)
    with pytest.raises(ValueError):
        tile_atlas(7)[0, 0, 0, 0] = 1


@pytest.mark.parametrize("tile_size", [1, 6])
def test_draw_planes__each_square_is_its_tile(tile_size):
    level = soko_gym.Level.from_xsb(EVERY_TILE)
    planes = level_planes(level, 6, 9)  # level at rows 1..4, cols 1..7
    planes = np.concatenate([planes, np.zeros_like(planes[:1])])
    planes[PLANE_DEAD, 3, 2] = 1  # a dead floor square
    picture = draw_planes(planes, tile_size)
    atlas = tile_atlas(tile_size)
    expected = {
        (0, 0): rgb.TILE_OUTSIDE,
        (1, 1): rgb.TILE_WALL,
        (2, 2): rgb.TILE_FLOOR,
        (2, 4): rgb.TILE_BOX,
        (2, 6): rgb.TILE_GOAL,
        (3, 3): rgb.TILE_PLAYER,
        (3, 4): rgb.TILE_BOX_ON_GOAL,
        (3, 2): rgb.TILE_DEAD,
    }
    for (row, col), tile in expected.items():
        assert np.array_equal(tile_at(picture, row, col, tile_size), atlas[tile]), (row, col)
    on_goal = soko_gym.Level.from_xsb("####\n#+ #\n#$ #\n####\n")
    picture = draw_planes(level_planes(on_goal, 4, 4), tile_size)
    assert np.array_equal(tile_at(picture, 1, 1, tile_size), atlas[rgb.TILE_PLAYER_ON_GOAL])


def test_draw_planes_batch__equals_per_item_draw():
    levels = soko_gym.load_levels("boxoban-hard")[:12]
    batch = np.stack([level_planes(level, 10, 10) for level in levels])
    for tile_size in (1, 3, 8):
        pictures = draw_planes_batch(batch, tile_size)
        assert pictures.shape == (12, 10 * tile_size, 10 * tile_size, 3)
        assert pictures.dtype == np.uint8
        for planes, picture in zip(batch, pictures, strict=True):
            assert np.array_equal(picture, draw_planes(planes, tile_size))


@pytest.mark.parametrize("tile_size", [0, -3, 2.0, "8", True, None])
def test_draw_planes__rejects_bad_tile_size(tile_size):
    planes = level_planes(soko_gym.Level.from_xsb(LEVEL))
    with pytest.raises(ValueError, match="tile_size"):
        draw_planes(planes, tile_size)
    with pytest.raises(ValueError, match="tile_size"):
        draw_planes_batch(planes[None], tile_size)


def test_draw_planes__accepts_numpy_integer_tile_size():
    planes = level_planes(soko_gym.Level.from_xsb(LEVEL), 8, 10)
    assert draw_planes(planes, np.int64(2)).shape == (16, 20, 3)


@pytest.mark.parametrize(
    "planes",
    [
        np.zeros((N_PLANES, 4, 4), dtype=np.int64),
        np.zeros((4, 4), dtype=np.uint8),
        np.zeros((1, N_PLANES, 4, 4), dtype=np.uint8),
        np.zeros((4, 4, 4), dtype=np.uint8),
        [[[0]]],
    ],
)
def test_draw_planes__rejects_bad_planes(planes):
    with pytest.raises(ValueError, match="planes"):
        draw_planes(planes)


def test_draw_planes_batch__rejects_single_observation():
    with pytest.raises(ValueError, match="planes"):
        draw_planes_batch(np.zeros((N_PLANES, 4, 4), dtype=np.uint8))


# --- human --------------------------------------------------------------------------------


def test_human_renderer__names_the_extra_without_pygame(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)
    renderer = HumanRenderer()
    frame = np.zeros((8, 8, 3), dtype=np.uint8)
    with pytest.raises(ImportError, match=r'pip install "soko-gym\[render\]"') as info:
        renderer.show(frame, fps=30)
    assert isinstance(info.value.__cause__, ImportError)
    renderer.close()


def test_human_renderer__rejects_bad_frame():
    with pytest.raises(ValueError, match="frame"):
        HumanRenderer().show(np.zeros((8, 8), dtype=np.uint8), fps=30)
    with pytest.raises(ValueError, match="frame"):
        HumanRenderer().show(np.zeros((8, 8, 3), dtype=np.float32), fps=30)


_SHOW_SCRIPT = """
import numpy as np, pygame
from soko_gym.envs.render import HumanRenderer
renderer = HumanRenderer()
frame = np.zeros((20, 30, 3), dtype=np.uint8)
frame[:, :, 0] = 200
frame[5, 7] = (1, 2, 3)
assert renderer.show(frame, fps=0)
assert renderer.is_open
assert pygame.display.get_surface().get_size() == (30, 20)
assert tuple(pygame.display.get_surface().get_at((7, 5)))[:3] == (1, 2, 3)
assert renderer.show(np.zeros((10, 12, 3), dtype=np.uint8), fps=1000)
assert pygame.display.get_surface().get_size() == (12, 10)
pygame.event.post(pygame.event.Event(pygame.QUIT))
assert not renderer.show(frame, fps=0)
assert not renderer.is_open
assert not renderer.show(frame, fps=0)
renderer.close()
assert renderer.show(frame, fps=0)
renderer.close()
assert not renderer.is_open
print("ok")
"""


def test_human_renderer__shows_frames_and_survives_window_close():
    pytest.importorskip("pygame")
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    env["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"
    result = subprocess.run(
        [sys.executable, "-c", _SHOW_SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("ok")
