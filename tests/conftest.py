import os

# Before numba is imported anywhere: a cache folder keyed by the kernel sources (ARCHITECTURE.md).
if "NUMBA_CACHE_DIR" not in os.environ:
    from soko_gym._numba_cache import numba_cache_dir

    os.environ["NUMBA_CACHE_DIR"] = str(numba_cache_dir())

import pytest  # noqa: E402

import soko_gym  # noqa: E402


@pytest.fixture(scope="session")
def microban():
    return soko_gym.load_levels("microban")


def pytest_collection_finish(session):
    # the fresh-interpreter compile checks of the tests that will run start now, beside the
    # main process (tests/_prelaunch.py)
    for item in session.items:
        marker = item.get_closest_marker("prelaunch")
        if marker is not None:
            marker.args[0].start()


def pytest_sessionfinish(session):
    for item in getattr(session, "items", []):
        marker = item.get_closest_marker("prelaunch")
        if marker is not None:
            marker.args[0].stop()
