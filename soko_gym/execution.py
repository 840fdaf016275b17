"""Per-level work on local worker processes or on a Ray cluster, streamed back as it finishes.

One execution layer for every command that runs the same function over many levels (``soko
solve``, ``optimize``, ``collect``, ``bench`` and the benchmark scripts). ``run(fn, items,
backend)`` yields one ``Outcome`` per item as soon as its task finishes, in completion order,
with the item's key (the level index), so a caller writes its JSONL line at once.

Backends (``Backend``): in this process (``jobs=1``), ``jobs`` local processes (spawned: they
load the numba cache, no fork of a threaded parent), or Ray (``ray="local"`` starts a local Ray,
``"auto"`` joins the running cluster, or an address). Tasks carry what the function needs (the
level text, never a path), and hold several items, sized from the measured seconds per item
so a task lasts about half a second: per-task overhead stays small for millisecond levels while
slow levels still spread over every worker. At most two tasks per CPU are in flight, so a long
or unbounded item stream (generated levels) never piles up in the driver.

Faults: an exception raised by ``fn`` is caught in the worker and the item retried alone. A
task whose worker or node dies is retried (by Ray itself first; locally on a fresh pool), its
items one per task; a death counts against an item only when its task was the one lost (a
dead local worker breaks the whole pool, so items lost together rerun one at a time). An
item that fails ``attempts`` times yields an ``Outcome`` with ``error`` set (the exception
text), never a gap. Closing the iterator (Ctrl-C in the caller's loop) cancels every
outstanding task (on Ray by ending the connection this module opened, which makes Ray stop the
job's tasks; cancelling them one by one races with their completion inside Ray 2.60's core
worker and can abort the driver); outcomes already yielded are the caller's.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import sys
import time
import traceback
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

TARGET_TASK_SECONDS = 0.5  # a task's intended length once item times are known
MAX_BATCH = 64  # items per task at most
INFLIGHT_PER_CPU = 2  # tasks in flight per worker CPU


@dataclass(frozen=True)
class Backend:
    """Where ``run`` executes tasks.

    Attributes:
        jobs: local worker processes (1: in this process); with ``ray="local"`` the CPUs of the
            local Ray (None: 1 locally, every CPU for a local Ray).
        ray: None (no Ray), "local" (start a local Ray), "auto" (join the running cluster) or
            a cluster address ("10.0.0.5:6379", "ray://host:10001").
        batch_size: items per task (None: sized from measured item times).
        attempts: tries per item before it is reported as an error (at least 1).
    """

    jobs: int | None = None
    ray: str | None = None
    batch_size: int | None = None
    attempts: int = 2

    def __post_init__(self) -> None:
        if self.jobs is not None and (
            isinstance(self.jobs, bool) or not isinstance(self.jobs, int) or self.jobs < 1
        ):
            raise ValueError(f"--jobs must be an integer of at least 1, got {self.jobs!r}")
        if self.batch_size is not None and (
            isinstance(self.batch_size, bool)
            or not isinstance(self.batch_size, int)
            or self.batch_size < 1
        ):
            raise ValueError(
                f"--batch-size must be an integer of at least 1, got {self.batch_size!r}"
            )
        if not isinstance(self.attempts, int) or self.attempts < 1:
            raise ValueError(f"attempts must be an integer of at least 1, got {self.attempts!r}")
        if self.ray is not None and (not isinstance(self.ray, str) or not self.ray.strip()):
            raise ValueError(f"--ray must be 'auto', an address or empty, got {self.ray!r}")

    @property
    def local_jobs(self) -> int:
        """Worker processes of the local backend (1: in this process)."""
        return self.jobs or 1

    def describe(self) -> str:
        """A short human description ("2 local processes", "Ray at auto")."""
        if self.ray == "local":
            return f"local Ray ({self.jobs or os.cpu_count()} CPUs)"
        if self.ray is not None:
            return f"Ray at {self.ray}"
        return "this process" if self.local_jobs == 1 else f"{self.local_jobs} local processes"

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Backend:
        """The backend of ``--jobs``, ``--ray`` and ``--batch-size`` (``add_backend_options``)."""
        return cls(
            jobs=getattr(args, "jobs", None),
            ray=getattr(args, "ray", None),
            batch_size=getattr(args, "batch_size", None),
        )


def add_backend_options(parser: argparse.ArgumentParser, what: str = "levels") -> None:
    """Add ``--jobs``, ``--ray [ADDRESS]`` and ``--batch-size`` to a command's parser."""
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="K",
        help=f"worker processes for the {what} (default 1: this process); with --ray and no "
        "address, the CPUs of the local Ray",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="run on Ray: no ADDRESS starts a local Ray, 'auto' joins the running cluster "
        "(`ray start --head`), or a cluster address (needs the `dist` extra)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        metavar="N",
        help=f"{what} per task (default: sized so a task takes about half a second)",
    )


@dataclass
class Outcome:
    """One item's result: ``value`` from ``fn``, or ``error`` after the last failed attempt."""

    key: Any
    value: Any = None
    error: str | None = None
    attempts: int = 1
    where: str = ""  # the worker of the last attempt: "host:pid", on Ray "node <id>"

    @property
    def ok(self) -> bool:
        """Whether ``fn`` returned (``value`` holds its result)."""
        return self.error is None


@dataclass
class _Item:
    key: Any
    payload: Any
    attempts: int = 0


def _error_text(err: BaseException) -> str:
    """The exception's type and message, with the innermost frame for context."""
    frames = traceback.extract_tb(err.__traceback__)
    where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(err).__name__}: {err}{where}"


def worker_name() -> str:
    """This worker's name: its Ray node ("node 1a2b3c4d") inside a Ray task, else "host:pid"."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        with contextlib.suppress(Exception):  # not inside a task or worker: the host name
            return "node " + ray.get_runtime_context().get_node_id()[:8]
    return f"{platform.node()}:{os.getpid()}"


def run_batch(fn: Callable[[Any], Any], batch: list[tuple[Any, Any]]) -> list[tuple]:
    """Run ``fn`` on each payload of a task (in the worker).

    Returns (key, ok, value or error text, seconds, worker name) per payload.
    """
    where = worker_name()
    out = []
    for key, payload in batch:
        start = time.perf_counter()
        try:
            value, ok = fn(payload), True
        except Exception as err:  # the item is retried or reported, never lost
            value, ok = _error_text(err), False
        out.append((key, ok, value, time.perf_counter() - start, where))
    return out


class _Sizer:
    """Items per task from the mean measured seconds per item (module docstring)."""

    def __init__(self, fixed: int | None) -> None:
        self.fixed = fixed
        self.seconds = 0.0
        self.count = 0

    def record(self, seconds: float) -> None:
        self.seconds += seconds
        self.count += 1

    def size(self, workers: int, remaining: int | None) -> int:
        if self.fixed is not None:
            return self.fixed
        if self.count == 0:
            return 1  # the first tasks measure
        per_item = max(self.seconds / self.count, 1e-6)
        size = int(min(MAX_BATCH, max(1, TARGET_TASK_SECONDS / per_item)))
        if remaining is not None:  # leave work for every worker at the end
            size = min(size, max(1, math.ceil(remaining / (2 * workers))))
        return size


def run(
    fn: Callable[[Any], Any],
    items: Iterable[tuple[Any, Any]],
    backend: Backend | None = None,
    *,
    total: int | None = None,
) -> Iterator[Outcome]:
    """Yield an ``Outcome`` per ``(key, payload)`` item, ``fn(payload)`` run by ``backend``.

    ``fn`` must be picklable (a module-level function or a ``functools.partial`` of one) for
    the process and Ray backends. ``total`` (the number of items, when known) keeps the last
    tasks small enough to spread over every worker.
    """
    backend = backend or Backend()
    if backend.ray is not None:
        yield from _RayRunner(backend).run(fn, items, total)
    elif backend.local_jobs > 1:
        yield from _PoolRunner(backend).run(fn, items, total)
    else:
        yield from _run_here(fn, items, backend.attempts)


def run_ordered(
    fn: Callable[[Any], Any], payloads: Iterable[Any], backend: Backend | None = None
) -> list[Any]:
    """``fn`` of every payload, in payload order (benchmark tables); no item may fail.

    Raises:
        RuntimeError: naming the first payload position whose every attempt failed.
    """
    items = list(enumerate(payloads))
    results: list[Any] = [None] * len(items)
    for outcome in run(fn, items, backend, total=len(items)):
        if not outcome.ok:
            raise RuntimeError(f"item {outcome.key} failed: {outcome.error}")
        results[outcome.key] = outcome.value
    return results


def _run_here(fn: Callable, items: Iterable[tuple[Any, Any]], attempts: int) -> Iterator[Outcome]:
    for key, payload in items:
        for attempt in range(1, attempts + 1):
            ((_, ok, value, _, where),) = run_batch(fn, [(key, payload)])
            if ok:
                yield Outcome(key, value, attempts=attempt, where=where)
                break
            if attempt == attempts:
                yield Outcome(key, error=value, attempts=attempt, where=where)


class _Runner(ABC):
    """The shared driver loop: feed tasks, collect finished ones, retry, yield outcomes."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.sizer = _Sizer(backend.batch_size)
        self.retry: deque[_Item] = deque()
        self.suspects: deque[_Item] = deque()  # lost with others: run alone, one at a time
        self.running: dict[Any, list[_Item]] = {}  # task handle -> its items

    precise = False  # whether a lost task is always the one whose worker died

    @abstractmethod
    def workers(self) -> int:
        """CPUs that run tasks now (sets how many tasks are kept in flight)."""

    @abstractmethod
    def submit(self, fn: Callable, batch: list[_Item]) -> Any:
        """Start a task on ``batch``; its handle."""

    @abstractmethod
    def wait_some(self) -> list[tuple[Any, list[tuple] | BaseException]]:
        """Block until a task ends: (handle, ``run_batch`` result or the task's failure)."""

    @abstractmethod
    def cancel_all(self) -> None:
        """Stop every outstanding task (Ctrl-C or an error in the caller)."""

    @abstractmethod
    def close(self) -> None:
        """Release the backend (after normal end or cancellation)."""

    def _settle(self, item: _Item, ok: bool, value: Any, where: str = "") -> Outcome | None:
        """The outcome of one attempt, or None when the item goes back for another."""
        item.attempts += 1
        if ok:
            return Outcome(item.key, value, attempts=item.attempts, where=where)
        if item.attempts < self.backend.attempts:
            self.retry.append(item)
            return None
        return Outcome(item.key, error=str(value), attempts=item.attempts, where=where)

    def run(
        self, fn: Callable, items: Iterable[tuple[Any, Any]], total: int | None
    ) -> Iterator[Outcome]:
        source = iter(items)
        exhausted = False
        consumed = 0
        try:
            while True:
                workers = max(1, self.workers())
                while len(self.running) < INFLIGHT_PER_CPU * workers:
                    if self.suspects:  # alone, so a death is that item's own
                        if not self.running:
                            batch = [self.suspects.popleft()]
                            self.running[self.submit(fn, batch)] = batch
                        break
                    if self.retry:  # retried items run alone: a failing one hurts no other
                        batch = [self.retry.popleft()]
                    elif not exhausted:
                        remaining = None if total is None else max(1, total - consumed)
                        size = self.sizer.size(workers, remaining)
                        batch = []
                        for key, payload in source:
                            batch.append(_Item(key, payload))
                            if len(batch) >= size:
                                break
                        else:
                            exhausted = True
                        consumed += len(batch)
                        if not batch:
                            continue
                    else:
                        break
                    self.running[self.submit(fn, batch)] = batch
                if not self.running:
                    if self.retry or self.suspects:
                        continue
                    return
                finished = self.wait_some()
                lost = sum(isinstance(result, BaseException) for _, result in finished)
                for handle, result in finished:
                    batch = self.running.pop(handle)
                    if isinstance(result, BaseException):  # the task died, not fn
                        if len(batch) > 1 or not (self.precise or lost == 1):
                            # which item killed it is unknown: each runs again, alone
                            (self.retry if self.precise else self.suspects).extend(batch)
                            continue
                        outcome = self._settle(batch[0], False, f"worker lost: {result}")
                        if outcome is not None:
                            yield outcome
                        continue
                    for item, (_, ok, value, seconds, where) in zip(batch, result, strict=True):
                        if ok:
                            self.sizer.record(seconds)
                        outcome = self._settle(item, ok, value, where)
                        if outcome is not None:
                            yield outcome
        except BaseException:
            self.cancel_all()
            raise
        finally:
            self.close()


class _PoolRunner(_Runner):
    """``jobs`` spawned local processes; a pool broken by a dead worker is replaced."""

    def __init__(self, backend: Backend) -> None:
        super().__init__(backend)
        self.pool = self._new_pool()

    def _new_pool(self) -> Any:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        # spawn: workers load the numba cache; no fork of a threaded parent
        return ProcessPoolExecutor(self.backend.local_jobs, mp_context=get_context("spawn"))

    def workers(self) -> int:
        return self.backend.local_jobs

    def submit(self, fn: Callable, batch: list[_Item]) -> Any:
        from concurrent.futures.process import BrokenProcessPool

        try:
            return self.pool.submit(run_batch, fn, [(i.key, i.payload) for i in batch])
        except BrokenProcessPool:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._new_pool()
            return self.pool.submit(run_batch, fn, [(i.key, i.payload) for i in batch])

    def wait_some(self) -> list[tuple[Any, list[tuple] | BaseException]]:
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        done, _ = wait(list(self.running), return_when=FIRST_COMPLETED)
        out: list[tuple[Any, list[tuple] | BaseException]] = []
        broken = False
        for fut in done:
            err = fut.exception()
            out.append((fut, err if err is not None else fut.result()))
            broken |= isinstance(err, BrokenProcessPool)
        if broken:  # every task of the dead pool is lost: report them all, start a new pool
            lost = [fut for fut in self.running if fut not in done]
            out.extend((fut, BrokenProcessPool("a worker process died")) for fut in lost)
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._new_pool()
        return out

    def cancel_all(self) -> None:
        processes = list(getattr(self.pool, "_processes", {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        for proc in processes:  # running tasks are not cancelled by shutdown: stop them
            if proc.is_alive():
                proc.terminate()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class _RayRunner(_Runner):
    """Tasks on Ray: one CPU each; Ray retries a task whose worker dies, then this loop does."""

    precise = True  # Ray fails only the tasks of the dead worker or node

    def __init__(self, backend: Backend) -> None:
        super().__init__(backend)
        self.ray = import_ray()
        self.started = connect_ray(backend)
        self.remote = self.ray.remote(num_cpus=1, max_retries=2)(run_batch)
        self.cpus = 1
        self.checked = 0.0

    def workers(self) -> int:
        now = time.monotonic()
        if now - self.checked > 2.0:  # nodes join and leave: follow the cluster's CPUs
            self.cpus = max(1, int(self.ray.cluster_resources().get("CPU", 1)))
            self.checked = now
        return self.cpus

    def submit(self, fn: Callable, batch: list[_Item]) -> Any:
        return self.remote.remote(fn, [(i.key, i.payload) for i in batch])

    def wait_some(self) -> list[tuple[Any, list[tuple] | BaseException]]:
        ready, _ = self.ray.wait(list(self.running), num_returns=1, timeout=None)
        more, _ = self.ray.wait(list(self.running), num_returns=len(self.running), timeout=0)
        out: list[tuple[Any, list[tuple] | BaseException]] = []
        for ref in dict.fromkeys(ready + more):
            try:
                out.append((ref, self.ray.get(ref)))
            except Exception as err:  # worker or node died (after Ray's own retries)
                out.append((ref, err))
        return out

    def cancel_all(self) -> None:
        if self.started:  # our connection: ending it makes Ray kill this job's tasks
            self.ray.shutdown()
            self.started = False
        else:  # the caller's session stays: cancel our tasks one by one
            for ref in self.running:
                with contextlib.suppress(Exception):  # already finished or its node is gone
                    self.ray.cancel(ref, force=True)
        self.running.clear()

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


def import_ray() -> Any:
    """The ``ray`` module, or an ImportError naming the extra that provides it."""
    try:
        import ray
    except ImportError as err:
        raise ImportError(
            "--ray needs Ray: pip install 'soko-gym[dist]' (on every node of the cluster)"
        ) from err
    return ray


def connect_ray(backend: Backend, *, log_to_driver: bool = True) -> bool:
    """Start or join Ray for ``backend``; True when this call started (and owns) it.

    A Ray already initialised in this process is used as it is (and stays the caller's).
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    import logging

    kwargs: dict[str, Any] = {
        "include_dashboard": False,
        "logging_level": logging.WARNING,
        "log_to_driver": log_to_driver,
    }
    if backend.ray == "local":
        kwargs["num_cpus"] = backend.jobs or os.cpu_count() or 1
        # a new Ray of this machine, never a running cluster's (plain ray.init() would join
        # one); its workers inherit this environment (the numba cache folder above all)
        ray.init(address="local", **kwargs)
    else:
        ray.init(address=backend.ray, **kwargs)
    return True


@dataclass
class Progress:
    """One stderr status line: done/total, a count of good results, rate and ETA.

    Redrawn in place on a terminal; elsewhere (logs, CI) one line every ``every`` seconds.
    """

    total: int | None
    enabled: bool = True
    good_label: str = "solved"
    every: float = 5.0
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    start: float = field(default_factory=time.perf_counter)

    def __post_init__(self) -> None:
        self.last = self.start
        self.tty = self.stream.isatty()
        self.done = 0
        self.good = 0
        self.errors = 0

    def line(self) -> str:
        """The status text ("[40/100] solved 38, errors 1, 12.3 levels/s, ETA 0:05")."""
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        rate = self.done / elapsed
        total = "?" if self.total is None else str(self.total)
        text = f"[{self.done}/{total}] {self.good_label} {self.good}"
        if self.errors:
            text += f", errors {self.errors}"
        text += f", {rate:.1f} levels/s"
        if self.total is not None and 0 < rate and self.done < self.total:
            eta = int((self.total - self.done) / rate)
            text += f", ETA {eta // 3600}:{eta // 60 % 60:02d}:{eta % 60:02d}"
        return text

    def update(self, good: bool, error: bool = False) -> None:
        """Count one finished item and redraw when due."""
        self.done += 1
        self.good += bool(good)
        self.errors += bool(error)
        self.draw()

    def draw(self, final: bool = False) -> None:
        """Show the line (on a terminal always, else when ``every`` seconds passed or final)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if not (self.tty or final or now - self.last >= self.every):
            return
        self.last = now
        if self.tty:
            self.stream.write("\r" + self.line() + ("\n" if final else ""))
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
