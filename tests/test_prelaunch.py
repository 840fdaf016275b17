"""The test session's own machinery: sharing a cold check's kernels with the main process."""

from tests._prelaunch import share_cache


def test_share_cache__copies_only_kernels_the_session_has_not_cached(tmp_path):
    source, target = tmp_path / "cold", tmp_path / "session"
    (source / "engine_ab").mkdir(parents=True)
    (target / "engine_ab").mkdir(parents=True)
    for name, text in [
        ("reach.flood-10.py311.nbi", "index A"),
        ("reach.flood-10.py311.1.nbc", "data A"),
        ("reach.flood-100.py311.nbi", "index B"),
        ("reach.flood-100.py311.1.nbc", "data B"),
    ]:
        (source / "engine_ab" / name).write_text(text)
    (target / "engine_ab" / "reach.flood-100.py311.nbi").write_text("the session's index")
    (target / "engine_ab" / "reach.flood-100.py311.1.nbc").write_text("the session's data")

    assert share_cache(source, target) == 2
    folder = target / "engine_ab"
    assert (folder / "reach.flood-10.py311.nbi").read_text() == "index A"
    assert (folder / "reach.flood-10.py311.1.nbc").read_text() == "data A"
    assert (folder / "reach.flood-100.py311.nbi").read_text() == "the session's index"
    assert (folder / "reach.flood-100.py311.1.nbc").read_text() == "the session's data"
    assert not [f for f in folder.iterdir() if f.name.endswith(".part")]
