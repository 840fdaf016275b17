"""Collection shards: episodes on disk as they arrive, the resume index, the streaming merge.

``agents.expert.collect.collect_dataset`` (``soko collect``) hands every finished level to a
``ShardWriter``, which writes a few hundred levels at a time to a shard file and drops them, so
the driver's memory does not grow with the level count. At the end the shards are merged into
one dataset without loading them all (``merge_npz``, ``merge_minari``). A stopped collection
keeps its shards; a resumed one runs only the levels they do not hold (``ShardIndex.done``).

Where: beside an npz output, ``OUT.npz.shards/``; for a Minari dataset, ``.soko-shards/ID/``
under the Minari root (a hidden folder: Minari's own listing skips it). A shard folder holds
``manifest.json`` (the collection's arguments; a resume must match them) and
``shard-NNNNNN.npz`` files in the npz layout of ``agents.expert.datasets`` (without ``meta``, with
``unsolved_title``), each written under a temporary name and renamed: whole or absent.

Which record counts for a level found in several shards (a level retried by a resume): its
episode if any shard has one, else its last non-error status, else its last error. Levels whose
task failed ("error: ...") are run again by a resume; every other recorded level is not.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.expert.datasets import (
    EPISODE_ARRAYS,
    Episode,
    Unsolved,
    episode_arrays,
    meta_array,
    write_minari,
    write_npz,
)
from soko_gym.levels import Level

SHARD_LEVELS = 256  # levels per shard at most
SHARD_BYTES = 16 << 20  # array bytes per shard at most (observations and masks dominate)
MANIFEST = "manifest.json"
ERROR_PREFIX = "error: "
_CACHED_SHARDS = 4  # shards held while the Minari merge reads episodes in level order


def shard_folder(out: str | Path, format: str) -> Path:
    """The shard folder of an output: ``OUT.npz.shards``, or ``.soko-shards/ID`` (Minari)."""
    if format == "npz":
        out = Path(out)
        return out.with_name(out.name + ".shards")
    from minari.storage.datasets_root_dir import get_dataset_path

    return Path(get_dataset_path()) / ".soko-shards" / str(out)


def open_shards(folder: Path, manifest: dict[str, Any], resume: bool, overwrite: bool) -> None:
    """Prepare ``folder`` for a collection: create it, replace it, or check it for a resume.

    Raises:
        ValueError: when it exists without ``resume`` or ``overwrite``, or when a resumed
            folder was written by a collection with other arguments (naming them).
    """
    if folder.exists() and not _shard_files(folder):  # stopped before its first shard
        shutil.rmtree(folder)
    if folder.exists():
        if overwrite:
            shutil.rmtree(folder)
        elif not resume:
            raise ValueError(
                f"{folder} holds the shards of an unfinished collection: pass --resume to go "
                "on from them, or --overwrite to start again"
            )
        else:
            saved = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
            wanted = json.loads(json.dumps(manifest))
            differ = sorted(
                k for k in wanted.keys() | saved.keys() if wanted.get(k) != saved.get(k)
            )
            if differ:
                raise ValueError(
                    f"--resume: the shards in {folder} were collected with other arguments "
                    f"({', '.join(differ)} differ); pass the same ones, or --overwrite"
                )
            for partial in folder.glob("*.partial.npz"):  # a write cut short: never renamed
                partial.unlink()
            return
    folder.mkdir(parents=True)
    text = json.dumps(manifest, indent=1, sort_keys=True)
    (folder / MANIFEST).write_text(text + "\n", encoding="utf-8")


def remove_shards(folder: Path) -> None:
    """Delete a shard folder (after a complete merge), and ``.soko-shards`` folders left empty."""
    shutil.rmtree(folder, ignore_errors=True)
    parent = folder.parent
    while parent.name and parent.name != ".soko-shards" and _is_empty(parent):
        parent.rmdir()
        parent = parent.parent
    if parent.name == ".soko-shards" and _is_empty(parent):
        parent.rmdir()


def _is_empty(folder: Path) -> bool:
    return folder.is_dir() and not any(folder.iterdir())


def _shard_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("shard-*.npz") if not p.name.endswith(".partial.npz"))


class ShardWriter:
    """Buffers finished levels and writes them as a shard every ``SHARD_LEVELS`` levels.

    Also flushes early once the buffered arrays pass ``SHARD_BYTES``. ``flush`` writes what is
    buffered (call it when the collection ends or is interrupted).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        existing = _shard_files(folder)
        self.number = int(existing[-1].stem.split("-")[1]) + 1 if existing else 1
        self.episodes: list[Episode] = []
        self.unsolved: list[Unsolved] = []
        self.bytes = 0

    def add(self, item: Episode | Unsolved) -> None:
        """Buffer one level's record; write a shard when enough are buffered."""
        if isinstance(item, Episode):
            self.episodes.append(item)
            self.bytes += sum(getattr(item, name).nbytes for name in EPISODE_ARRAYS)
        else:
            self.unsolved.append(item)
        if len(self.episodes) + len(self.unsolved) >= SHARD_LEVELS or self.bytes >= SHARD_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the buffered levels as one shard (nothing when none are buffered)."""
        if not self.episodes and not self.unsolved:
            return
        arrays = episode_arrays(self.episodes, self.unsolved)
        arrays["unsolved_title"] = np.array([u.title for u in self.unsolved], dtype=str)
        path = self.folder / f"shard-{self.number:06d}.npz"
        tmp = path.with_name(path.stem + ".partial.npz")
        np.savez_compressed(tmp, **arrays)
        os.replace(tmp, path)
        self.number += 1
        self.episodes, self.unsolved, self.bytes = [], [], 0


@dataclass
class ShardIndex:
    """Which record of which shard each level keeps (module docstring), read from the shards.

    Attributes:
        shards: the shard files, in write order.
        shard: int64[n_episodes] the shard of each kept episode, episodes in level order.
        row: int64[n_episodes] the episode's position in its shard.
        level_index: int64[n_episodes] its level.
        lengths: int64[n_episodes] its steps.
        unsolved: the levels with no episode, in level order.
        done: the levels a resume does not run again (episodes and non-error statuses).
        shapes: per episode array, its dtype and the shape of one row (from the headers).
        text_chars: longest ``level_xsb`` and ``solution`` strings (characters).
    """

    shards: list[Path]
    shard: np.ndarray
    row: np.ndarray
    level_index: np.ndarray
    lengths: np.ndarray
    unsolved: list[Unsolved]
    done: set[int]
    shapes: dict[str, tuple[np.dtype, tuple[int, ...]]] = field(default_factory=dict)
    text_chars: dict[str, int] = field(default_factory=dict)

    @property
    def n_episodes(self) -> int:
        """Episodes kept."""
        return int(self.level_index.shape[0])

    @property
    def n_steps(self) -> int:
        """Steps of the episodes kept."""
        return int(self.lengths.sum())

    @classmethod
    def read(cls, folder: Path) -> ShardIndex:
        """Index the shards of ``folder``: only their small arrays and array headers are read."""
        shards = _shard_files(folder)
        ep_parts: list[tuple[np.ndarray, ...]] = []
        statuses: dict[int, tuple[str, str]] = {}  # level -> (title, last status)
        shapes: dict[str, tuple[np.dtype, tuple[int, ...]]] = {}
        chars = {"level_xsb": 1, "solution": 1}
        for s, path in enumerate(shards):
            with np.load(path, allow_pickle=False) as f:
                index, lengths = f["level_index"], f["episode_lengths"]
                u_index, u_status = f["unsolved_index"], f["unsolved_status"]
                u_title = f["unsolved_title"]
            rows = np.arange(index.shape[0], dtype=np.int64)
            ep_parts.append((np.full(rows.shape, s, dtype=np.int64), rows, index, lengths))
            for i, status, title in zip(u_index.tolist(), u_status, u_title, strict=True):
                before = statuses.get(i)
                is_error = str(status).startswith(ERROR_PREFIX)
                # the last non-error status wins; an error replaces only an error
                if before is None or not is_error or before[1].startswith(ERROR_PREFIX):
                    statuses[i] = (str(title), str(status))
            if index.shape[0]:
                headers = _npz_headers(path)
                for name in EPISODE_ARRAYS:
                    shape, dtype = headers[name]
                    shapes[name] = (dtype, shape[1:])
                for name in chars:
                    chars[name] = max(chars[name], headers[name][1].itemsize // 4)
        if ep_parts:
            shard, row, level_index, lengths = (
                np.concatenate(p) for p in zip(*ep_parts, strict=True)
            )
        else:
            shard = row = level_index = lengths = np.zeros(0, dtype=np.int64)
        _, first = np.unique(level_index, return_index=True)  # sorted by level; first copy
        shard, row, level_index, lengths = (
            shard[first],
            row[first],
            level_index[first],
            lengths[first],
        )
        solved = set(level_index.tolist())
        unsolved = [
            Unsolved(i, title, status)
            for i, (title, status) in sorted(statuses.items())
            if i not in solved
        ]
        done = solved | {u.level_index for u in unsolved if not u.status.startswith(ERROR_PREFIX)}
        return cls(shards, shard, row, level_index, lengths, unsolved, done, shapes, chars)


def _npz_headers(path: Path) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Shape and dtype of every array of an npz file, from the ``.npy`` headers alone."""
    out = {}
    with zipfile.ZipFile(path) as zf:
        for member in zf.namelist():
            with zf.open(member) as f:
                major, _ = np.lib.format.read_magic(f)
                read = (
                    np.lib.format.read_array_header_1_0
                    if major == 1
                    else np.lib.format.read_array_header_2_0
                )
                shape, _, dtype = read(f)
            out[member.removesuffix(".npy")] = (shape, dtype)
    return out


# -- npz -------------------------------------------------------------------------------------


def merge_npz(index: ShardIndex, folder: Path, path: Path, meta: dict[str, Any]) -> Path:
    """Write the kept episodes of the shards as one npz (the ``write_npz`` layout).

    Each array is first filled as an uncompressed ``.npy`` file in ``folder/merge`` (one shard
    in memory at a time, rows written at their offsets with ``os.pwrite``: nothing is mapped
    into this process, so its resident memory stays that of one shard), then deflated into the
    zip; the npz is written under a temporary name and renamed.
    """
    if index.n_episodes == 0:
        return write_npz([], index.unsolved, path, meta)
    work = folder / "merge"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    n = index.n_episodes
    lengths = index.lengths
    ends = np.cumsum(lengths)
    starts = ends - lengths
    steps = int(ends[-1])
    files: dict[str, _NpyFile] = {}
    for name in EPISODE_ARRAYS:
        dtype, row_shape = index.shapes[name]
        rows = steps + n if name in ("observations", "action_masks") else steps
        files[name] = _NpyFile(work / f"{name}.npy", dtype, (rows, *row_shape))
    for name in ("level_xsb", "solution"):
        files[name] = _NpyFile(work / f"{name}.npy", np.dtype(f"<U{index.text_chars[name]}"), (n,))
    try:
        for s, shard_path in enumerate(index.shards):
            dest = np.flatnonzero(index.shard == s)
            if not dest.size:
                continue
            with np.load(shard_path, allow_pickle=False) as f:
                data = {name: f[name] for name in (*EPISODE_ARRAYS, "level_xsb", "solution")}
                src_lengths = f["episode_lengths"]
            src_ends = np.cumsum(src_lengths)
            src_starts = src_ends - src_lengths
            for d in dest.tolist():
                r = int(index.row[d])
                a, b, da = int(src_starts[r]), int(src_ends[r]), int(starts[d])
                for name in EPISODE_ARRAYS:
                    if name in ("observations", "action_masks"):  # one more row per episode
                        files[name].write(da + d, data[name][a + r : b + r + 1])
                    else:
                        files[name].write(da, data[name][a:b])
                for name in ("level_xsb", "solution"):
                    files[name].write(d, data[name][r : r + 1].astype(files[name].dtype))
    finally:
        for npy in files.values():
            npy.close()
    small = {
        "episode_lengths": lengths.astype(np.int64),
        "level_index": index.level_index.astype(np.int64),
        "unsolved_index": np.array([u.level_index for u in index.unsolved], dtype=np.int64),
        "unsolved_status": np.array([u.status for u in index.unsolved], dtype=str),
        "meta": meta_array(meta),
    }
    tmp = path.with_name(path.name + ".partial.npz")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        for name, npy in files.items():
            zf.write(npy.path, arcname=f"{name}.npy")
        for name, array in small.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, array, allow_pickle=False)
    os.replace(tmp, path)
    shutil.rmtree(work, ignore_errors=True)
    return path


class _NpyFile:
    """An ``.npy`` file of a known dtype and shape, written row range by row range."""

    def __init__(self, path: Path, dtype: np.dtype, shape: tuple[int, ...]) -> None:
        self.path, self.dtype = path, np.dtype(dtype)
        self.row_bytes = self.dtype.itemsize * int(np.prod(shape[1:], dtype=np.int64))
        header = {
            "descr": np.lib.format.dtype_to_descr(self.dtype),
            "fortran_order": False,
            "shape": shape,
        }
        with open(path, "wb") as f:
            np.lib.format.write_array_header_1_0(f, header)
            self.offset = f.tell()
            f.truncate(self.offset + self.row_bytes * shape[0])
        self.fd = os.open(path, os.O_WRONLY)

    def write(self, row: int, rows: np.ndarray) -> None:
        """Write ``rows`` (this file's dtype and row shape) starting at row ``row``."""
        data = np.ascontiguousarray(rows, dtype=self.dtype).tobytes()
        os.pwrite(self.fd, data, self.offset + row * self.row_bytes)

    def close(self) -> None:
        """Close the file descriptor."""
        os.close(self.fd)


# -- Minari ----------------------------------------------------------------------------------


def iter_episodes(index: ShardIndex) -> Iterator[Episode]:
    """The kept episodes in level order, read from the shards a few shards at a time.

    Shards hold levels in completion order, which is close to level order, so a small cache of
    loaded shards serves consecutive episodes.
    """
    cache: OrderedDict[int, dict[str, np.ndarray]] = OrderedDict()
    for d in range(index.n_episodes):
        s, r = int(index.shard[d]), int(index.row[d])
        data = cache.get(s)
        if data is None:
            with np.load(index.shards[s], allow_pickle=False) as f:
                data = {name: f[name] for name in f.files}
            data["_ends"] = np.cumsum(data["episode_lengths"])
            cache[s] = data
            if len(cache) > _CACHED_SHARDS:
                cache.popitem(last=False)
        else:
            cache.move_to_end(s)
        b = int(data["_ends"][r])
        a = b - int(data["episode_lengths"][r])
        yield Episode(
            observations=data["observations"][a + r : b + r + 1].copy(),
            actions=data["actions"][a:b].copy(),
            rewards=data["rewards"][a:b].copy(),
            terminations=data["terminations"][a:b].copy(),
            truncations=data["truncations"][a:b].copy(),
            action_masks=data["action_masks"][a + r : b + r + 1].copy(),
            level_index=int(data["level_index"][r]),
            level=Level.from_xsb(str(data["level_xsb"][r])),
            solution=str(data["solution"][r]),
        )


def merge_minari(
    index: ShardIndex,
    dataset_id: str,
    env_id: str,
    spec_kwargs: dict[str, Any],
    *,
    planner: str,
    n_levels: int,
    interrupted: bool,
) -> str | None:
    """Write the kept episodes of the shards as one Minari dataset, replacing an existing one.

    Episodes go to Minari in chunks (``write_minari``), read from the shards as they are
    written. Returns the id, or None when no shard holds an episode.
    """
    return write_minari(
        iter_episodes(index),
        dataset_id,
        env_id,
        spec_kwargs,
        planner=planner,
        n_levels=n_levels,
        unsolved=index.unsolved,
        interrupted=interrupted,
        overwrite=True,
    )
