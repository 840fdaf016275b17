"""Subprocess checks that start when the test session starts, not when their test comes up.

A few tests run ``soko`` or Python in a fresh interpreter on an EMPTY numba cache folder, as a
new user's first command does: minutes of compiling on one core each. The main test process
also uses one core, so these run beside it from the start (``tests/conftest.py`` starts the
jobs of the collected tests) and their test only waits for the outcome. The jobs run one at a
time, in the order they were started (the tests' order), at a lower priority: two of them
beside the main process would take half its core, and the Ray and ``--jobs`` tests' workers
would wait behind them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

# one job at a time, first started first run: a ticket per start, the turn passes on when done
_TURN = threading.Condition()
_TICKETS = [0, 0]  # next ticket handed out, ticket whose turn it is
# the subprocesses yield the CPU to the main test process and its workers
_NICE = [nice, "-n", "10"] if (nice := shutil.which("nice")) else []


class Prelaunched:
    """``work(job, folder)`` run once on a thread, in a fresh temporary folder."""

    def __init__(self, work: Callable[[Prelaunched, Path], Any]):
        self.work = work
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._stopped = False
        self._outcome: Any = None
        self._error: BaseException | None = None
        self.folder: Path | None = None

    def start(self) -> None:
        """Start the work unless it has started already."""
        with self._lock:
            if self._thread is not None:
                return
            self.folder = Path(tempfile.mkdtemp(prefix="soko-cold-"))
            with _TURN:
                ticket = _TICKETS[0]
                _TICKETS[0] += 1
            self._thread = threading.Thread(target=self._run, args=(ticket,), daemon=True)
            self._thread.start()

    def _run(self, ticket: int) -> None:
        with _TURN:
            _TURN.wait_for(lambda: _TICKETS[1] == ticket)
        try:
            self._outcome = self.work(self, self.folder)
        except BaseException as exc:  # handed to the test that waits
            self._error = exc
        finally:
            with _TURN:
                _TICKETS[1] += 1
                _TURN.notify_all()

    def run(self, argv: list[str], env: dict[str, str], cwd: Path, timeout: float):
        """``subprocess.run`` with captured text output that ``stop`` can end."""
        with self._lock:
            if self._stopped:
                raise RuntimeError("the test session ended before this check ran")
            self._proc = subprocess.Popen(
                [*_NICE, *argv],
                cwd=cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        try:
            out, err = self._proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.communicate()
            raise
        return subprocess.CompletedProcess(argv, self._proc.returncode, out, err)

    def outcome(self) -> Any:
        """Wait for the work (starting it if no one did) and return what it returned."""
        self.start()
        assert self._thread is not None
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._outcome

    def stop(self) -> None:
        """End a running subprocess and remove the folder (at the end of the session)."""
        with self._lock:
            self._stopped = True
            if self._proc is not None and self._proc.poll() is None:
                self._proc.kill()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def share_cache(source: Path, target: Path) -> int:
    """Copy the kernels a cold check compiled into the session's numba cache; returns files.

    Only kernels the session has not cached yet are copied (data first, the index last, each by
    an atomic rename), so the main process loads them instead of compiling them again and never
    reads half a file. Both caches index the same source files, so their entries agree.
    """
    copied = 0
    for index in source.rglob("*.nbi"):
        folder = target / index.parent.relative_to(source)
        if (folder / index.name).exists():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        stem = index.name[: -len("nbi")]  # "<module>.<kernel>-<line>.py311."
        kernels = [
            f for f in index.parent.iterdir() if f.suffix == ".nbc" and f.name.startswith(stem)
        ]
        for data in [*kernels, index]:
            if (folder / data.name).exists():
                continue
            partial = folder / f".{data.name}.{os.getpid()}.part"
            shutil.copyfile(data, partial)
            os.replace(partial, folder / data.name)
            copied += 1
    return copied


def prelaunch(work: Callable[[Prelaunched, Path], Any]) -> Prelaunched:
    """Decorator: ``work`` becomes a job that a test marks with ``pytest.mark.prelaunch(job)``."""
    return Prelaunched(work)
