import json
import shutil
from types import SimpleNamespace

import pytest
from gymnasium import spaces

pytest.importorskip("sb3_contrib")

from agents.playing.models import env_from_spaces, load_agent, load_model, read_meta  # noqa: E402
from soko_gym.levels import load_levels  # noqa: E402

LEVELS = "microban:1-3"  # the tiny_agent fixture's levels (conftest.py)


def _copy(model, folder, name):
    path = folder / name
    shutil.copyfile(model, path)
    return path


def test_load_agent__env_from_the_model_spaces_without_sidecar(tiny_agent, tmp_path):
    bare = _copy(tiny_agent, tmp_path, "bare.zip")
    agent = load_agent(bare)
    assert agent.env_id == "Sokoban-Push-v0" and agent.masked
    levels = load_levels(LEVELS)
    size = (max(lv.height for lv in levels), max(lv.width for lv in levels))
    assert agent.env_kwargs == {"obs_size": size, "dead_plane": False}
    assert load_agent(tiny_agent).env_id == "Sokoban-Push-v0"


def _spaces_model(planes, n):
    """A stand-in model with 10x10 observations of ``planes`` planes and ``n`` actions."""
    return SimpleNamespace(
        observation_space=spaces.Box(0, 1, (planes, 10, 10)), action_space=spaces.Discrete(n)
    )


@pytest.mark.parametrize(
    ("planes", "n", "env_id", "extra"),
    [
        (6, 4 * 100, "Sokoban-Push-v0", {}),
        (5, 100 * 100, "Sokoban-Macro-v0", {}),
        (6, 4, "Sokoban-Move-v0", {"noop_action": False}),
        (7, 5, "Sokoban-Move-v0", {"noop_action": True, "trail_plane": True}),
    ],
)
def test_env_from_spaces__reads_the_env_from_planes_and_actions(planes, n, env_id, extra):
    got_id, kwargs = env_from_spaces(_spaces_model(planes, n))
    assert got_id == env_id
    assert kwargs == {"obs_size": (10, 10), "dead_plane": planes > 5, **extra}


def test_env_from_spaces__a_trail_plane_outside_the_move_env_is_refused():
    with pytest.raises(ValueError, match="7 observation planes.*Move-env.*Discrete\\(400\\)"):
        env_from_spaces(_spaces_model(7, 400))
    with pytest.raises(ValueError, match="cannot tell the env"):
        env_from_spaces(_spaces_model(8, 400))


def test_load_agent__not_a_model(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_text("nope")
    with pytest.raises(ValueError, match="not a stable-baselines3 model"):
        load_agent(bad)
    with pytest.raises(ValueError, match="not found"):
        load_model(tmp_path / "missing.zip")


def test_load_model__metadata_from_the_sidecar_else_from_the_zip(tiny_agent, tmp_path):
    from sb3_contrib import MaskablePPO

    from agents.playing.models import save_model

    model, meta = load_model(tiny_agent)
    assert isinstance(model, MaskablePPO) and meta == {"env_id": "Sokoban-Push-v0"}
    _, height, width = model.observation_space.shape
    saved = {
        "env_id": "Sokoban-Push-v0",
        "env_kwargs": {"obs_size": [height, width], "dead_plane": False, "levels": "x"},
        "algo": "maskable-ppo",
    }
    path = save_model(model, tmp_path / "model.zip", saved)
    assert load_model(path, require_meta=True)[1] == saved == read_meta(path)
    path.with_suffix(".json").unlink()
    assert read_meta(path) == saved  # what save_model stored in the zip
    agent = load_agent(path)
    assert agent.env_id == "Sokoban-Push-v0" and agent.masked
    assert agent.env_kwargs == {"obs_size": (height, width), "dead_plane": False}


def test_load_model__require_meta_refuses_a_model_without_soko_gym_metadata(tiny_agent, tmp_path):
    bare = _copy(tiny_agent, tmp_path, "bare.zip")
    with pytest.raises(ValueError, match="no soko-gym metadata"):
        load_model(bare, require_meta=True)
    model, meta = load_model(bare)
    assert type(model).__name__ == "MaskablePPO" and meta == {}
    (tmp_path / "bare.zip.json").write_text(json.dumps(["not", "an", "object"]))
    with pytest.raises(ValueError, match="expected a JSON object"):
        load_model(bare)
