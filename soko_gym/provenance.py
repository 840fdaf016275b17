"""Which code produced a result: the ``commit`` field of every JSONL record the project writes."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path


@functools.cache
def code_version() -> str:
    """``git:<hash>`` (``+dirty`` with uncommitted changes) in a git checkout, else the version.

    Computed once per process; a record carries it so that a figure can be traced to the code
    that measured it.
    """
    from soko_gym import __version__

    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return f"soko-gym {__version__}"
    if not head:
        return f"soko-gym {__version__}"
    return f"git:{head}" + ("+dirty" if dirty else "")


def machine_line() -> str:
    """One markdown line describing the machine and the library versions (benchmark tables)."""
    import os
    import platform

    import numba
    import numpy as np

    cpu = platform.processor()
    if not cpu:  # empty on most Linux systems: fall back to the kernel's CPU model name
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as f:
                names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
            cpu = names[0] if names else "?"
        except OSError:
            cpu = "?"
    return (
        f"**Machine:** {cpu} / {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
        f"code {code_version()}"
    )
