"""A collection into one dataset: expert episodes written to shards, merged, resumable.

``collect_dataset`` runs ``agents.expert.episodes.collect_episodes`` and hands each level to a
``ShardWriter`` as it finishes (``agents.expert.shards``); at the end the shards are merged into
one Minari dataset or npz file without holding it in memory. Ctrl-C merges what is done and
keeps the shards, so ``resume=True`` goes on. ``report`` prints the summary and every
unsolved level. ``soko collect`` is ``agents.expert.cli``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.expert.datasets import FORMATS, CollectResult, import_minari
from agents.expert.episodes import (
    CollectPlan,
    EpisodeStream,
    jsonable,
    plan_collection,
    resolve_backend,
)
from agents.expert.shards import (
    ShardIndex,
    ShardWriter,
    merge_minari,
    merge_npz,
    open_shards,
    remove_shards,
    shard_folder,
)


def collect_dataset(
    env_id: str,
    levels: Any,
    planner: str = "astar",
    out: str | Path | None = None,
    *,
    format: str = "minari",
    overwrite: bool = False,
    resume: bool = False,
    **options: Any,
) -> CollectResult:
    """Collect expert episodes (``collect_episodes``) into one Minari dataset or npz file.

    Episodes are written to shard files as they arrive (``agents.expert.shards``:
    ``OUT.npz.shards/`` beside an npz, ``.soko-shards/ID/`` under the Minari root) and merged
    into the dataset at the end without holding it in memory; the shard folder is then
    removed. Ctrl-C merges the levels done so far into the dataset and keeps the shards, so
    ``resume=True`` goes on.

    Args:
        env_id: the soko-gym env id.
        levels: a level source or "generated[:WxH][:N]".
        planner: registry name of the planner.
        out: the Minari dataset id, or the npz path (".npz" is appended when missing); None
            to write nothing (the result counts the episodes).
        format: "minari" (``data`` extra) or "npz".
        overwrite: replace an existing dataset and shard folder (otherwise a ValueError).
        resume: go on from the shard folder of a stopped collection with the same arguments:
            the levels it holds are not run again (those whose task failed are).
        **options: the keyword arguments of ``collect_episodes`` (``backend``, ``jobs``,
            ``limit``, ``seed`` ...).

    Raises:
        ValueError: naming the bad argument; ImportError naming the extra for Minari.
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    if resume and overwrite:
        raise ValueError("--resume and --overwrite exclude each other")
    if resume and out is None:
        raise ValueError("resume needs out (the dataset whose shards to go on from)")
    stream_options = {k: v for k, v in options.items() if k not in ("backend", "jobs")}
    stream_options.setdefault("progress", True)
    progress = stream_options.pop("progress")
    plan = plan_collection(env_id, levels, planner, **_plan_options(stream_options))
    backend = resolve_backend(options.get("backend"), options.get("jobs"))
    if out is None:
        stream = EpisodeStream(plan, backend, set(), progress)
        _drain(stream, None)
        return stream.result
    out, folder = _prepare_output(out, format, levels, plan, overwrite, resume)
    done = ShardIndex.read(folder).done if resume else set()
    stream = EpisodeStream(plan, backend, done, progress)
    _drain(stream, ShardWriter(folder))
    result = stream.result
    index = ShardIndex.read(folder)
    result.n_episodes, result.n_steps, result.unsolved = (
        index.n_episodes,
        index.n_steps,
        index.unsolved,
    )
    if format == "npz":
        meta = {"env_id": env_id, "env_kwargs": plan.spec_kwargs, "planner": planner}
        result.out = str(merge_npz(index, folder, out, jsonable(meta)))
    else:
        result.out = merge_minari(
            index,
            str(out),
            env_id,
            plan.spec_kwargs,
            planner=planner,
            n_levels=plan.n_levels,
            interrupted=result.interrupted,
        )
    result.format = format if result.out else None
    if result.interrupted:
        result.shards = str(folder)
    else:
        remove_shards(folder)
    return result


def _prepare_output(
    out: str | Path, format: str, levels: Any, plan: CollectPlan, overwrite: bool, resume: bool
) -> tuple[str | Path, Path]:
    """Check the output and ready its shard folder: (the npz path or Minari id, the folder).

    Raises:
        ValueError: when the dataset or a shard folder exists without ``overwrite`` or
            ``resume``, or ``resume`` finds nothing to go on from.
    """
    if format == "npz":
        out = Path(out) if str(out).endswith(".npz") else Path(f"{out}.npz")
        exists = out.exists()
    else:
        import_minari()
        from minari.dataset.minari_dataset import parse_dataset_id
        from minari.storage.datasets_root_dir import get_dataset_path

        if not isinstance(levels, str):
            raise ValueError(
                "levels must be a source name or path for Minari datasets (the env spec is "
                "saved as JSON); use format='npz' for Level objects"
            )
        parse_dataset_id(str(out))  # a malformed id: ValueError before any work
        exists = Path(get_dataset_path(str(out))).exists()
    folder = shard_folder(out, format)
    if folder.exists() and not (overwrite or resume):
        open_shards(folder, plan.manifest(), resume, overwrite)  # the ValueError naming --resume
    if exists and not (overwrite or resume):
        raise ValueError(f"{_name(out, format)} exists; pass --overwrite to replace it")
    if exists and resume and not folder.exists():
        raise ValueError(
            f"--resume: {_name(out, format)} has no shard folder ({folder}): it was collected "
            "to the end; pass --overwrite to collect it again"
        )
    open_shards(folder, plan.manifest(), resume, overwrite)
    return out, folder


def _drain(stream: EpisodeStream, writer: ShardWriter | None) -> None:
    """Run the stream to its end (or Ctrl-C), handing each level to ``writer``."""
    try:
        for item in stream:
            if writer is not None:
                writer.add(item)
    except KeyboardInterrupt:  # between two levels: the stream catches the others
        stream.result.interrupted = True
    finally:
        stream.close()
        if writer is not None:
            writer.flush()


def _plan_options(options: dict[str, Any]) -> dict[str, Any]:
    """``collect_episodes`` options for ``_plan`` (a TypeError for an unknown one, as a call)."""
    allowed = ("limit", "time_limit", "seed", "generator_kwargs", "env_kwargs")
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(f"collect_dataset() got unexpected keyword arguments {unknown}")
    defaults = {"limit": None, "time_limit": 10.0, "seed": 0}
    return {k: options.get(k, defaults.get(k)) for k in allowed}


def _name(out: str | Path, format: str) -> str:
    return str(out) if format == "npz" else f"Minari dataset {str(out)!r}"


def report(result: CollectResult, out: Callable[[str], None] = print) -> None:
    """Print the summary and every unsolved level."""
    stop = " (interrupted: the dataset holds the levels done so far)" if result.interrupted else ""
    out(f"{result.n_episodes}/{result.n_levels} levels collected in {result.seconds:.1f} s{stop}")
    if result.resumed:
        out(f"resumed: {result.resumed} levels were already in the shards")
    if result.unsolved:
        out(f"unsolved ({len(result.unsolved)}):")
        for u in result.unsolved:
            title = f" {u.title!r}" if u.title else ""
            out(f"  level {u.level_index + 1}{title}: {u.status}")
    if result.out:
        out(f"written: {result.out}")
    elif result.n_levels and not result.n_episodes:
        out("nothing written: no episode was collected")
    if result.shards:
        out(f"shards kept in {result.shards}: --resume goes on from them")
