"""Pick a numba cache folder named by a hash of every kernel source file.

Numba does not invalidate a cached caller when a callee in another file changes, so tests and
CI point ``NUMBA_CACHE_DIR`` at a folder that changes whenever any kernel source does. This
module imports nothing heavy; run it as a script to print the folder.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
KERNEL_DIRS = ("soko_gym/engine", "soko_gym/levels", "planners/_kernels")


def kernel_source_hash() -> str:
    """Short hex digest of every .py file under the kernel folders."""
    digest = hashlib.sha256()
    for folder in KERNEL_DIRS:
        for path in sorted((_ROOT / folder).rglob("*.py")):
            digest.update(str(path.relative_to(_ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def numba_cache_dir(base: Path | None = None) -> Path:
    """The cache folder for the current kernel sources (under ``base``, default the repo)."""
    return (base or _ROOT / ".numba_cache") / kernel_source_hash()


if __name__ == "__main__":
    print(numba_cache_dir())
