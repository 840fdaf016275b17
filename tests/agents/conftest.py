import json

import pytest

# a box against the top wall with no goal along it: unsolvable
DEAD_WALL = """\
######
# $  #
#  @ #
#   .#
######
"""


@pytest.fixture
def minari_dir(tmp_path, monkeypatch):
    pytest.importorskip("minari")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    return tmp_path / "minari"


@pytest.fixture(scope="module")
def tiny_agent(tmp_path_factory):
    """An untrained MaskablePPO on the push env of microban:1-3, saved with its sidecar."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from soko_gym.envs.sb3 import SokobanVecEnv

    folder = tmp_path_factory.mktemp("agent")
    env = SokobanVecEnv("Sokoban-Push-v0", 1, seed=0, levels="microban:1-3")
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, seed=0)
    path = folder / "model.zip"
    model.save(path)
    (folder / "model.json").write_text(json.dumps({"env_id": "Sokoban-Push-v0"}))
    return path


def collect_tiny(path, seed=1, limit=20, **env_kwargs):
    """A* episodes on ``limit`` generated 6x6 one-box levels, as an npz dataset at ``path``."""
    from agents.expert.collect import collect_dataset

    collect_dataset(
        "Sokoban-Push-v0",
        "generated",
        "astar",
        path,
        format="npz",
        limit=limit,
        seed=seed,
        generator_kwargs={"width": 6, "height": 6, "n_boxes": 1},
        env_kwargs={"dead_plane": True, **env_kwargs},
        progress=False,
    )
    return path
