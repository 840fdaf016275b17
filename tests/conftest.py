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
