"""Env throughput: steps per second of the single and vector envs with random legal actions.

Every timing includes observations, rewards, masks and resets (autoreset in the vector envs),
on the bundled ``boxoban-unfiltered-train`` levels; numba compilation is warmed up first.
Also times the level generator (10x10, 4 boxes) and, for the vector Move env, where a step's
time goes. Prints a markdown table with the machine it ran on; ``benchmarks/RESULTS.md`` cites
the full output as a file:

    python benchmarks/bench_envs.py > benchmarks/results/envs.md
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np

import soko_gym
from soko_gym.engine import batch as batch_kernels
from soko_gym.levels import generate_level
from soko_gym.provenance import machine_line

LEVELS = "boxoban-unfiltered-train"
SEED = 2024
ENV_IDS = ("Sokoban-Move-v0", "Sokoban-Push-v0", "Sokoban-Macro-v0")
VECTOR_SIZES = {
    "Sokoban-Move-v0": (1, 64, 1024, 4096),
    "Sokoban-Push-v0": (1, 64, 1024, 4096),
    "Sokoban-Macro-v0": (1, 64, 256),  # masks are (H*W)^2 = 10,000 wide: 4096 envs is 41 MB
}
SEARCH_MASK_IDS = ("Sokoban-Move-v0", "Sokoban-Push-v0")  # timed with deadlock_search too
SEARCH_BUDGET = 1024
BOTH_DRIVERS_FROM = 256  # at this many envs and more, time parallel=False and parallel=True

# Issue targets (steps/s).
TARGET_SINGLE_MOVE = 200_000
TARGET_VECTOR_MOVE = 8_000_000  # at 1024+ envs
TARGET_VECTOR_PUSH = 2_000_000  # at 1024+ envs
TARGET_FROM = 1024

# Reference figures, measured elsewhere on a comparable 2-core machine: quoted, not measured.
REF_PYTHON_SINGLE = 190_000  # pure-Python Gymnasium Boxoban env, move-steps/s, one env
REF_JAX_4096 = 970_000  # JAX Sokoban env, move-steps/s at 4096 envs
REF_NUMBA_LOOP = 11_000_000  # bare numba loop stepping 1,024 boards + observation planes


@dataclass(frozen=True)
class Settings:
    """How much work each measurement does.

    Attributes:
        seconds: wall time of one timing (steps are run until it has passed).
        repeats: timings per measurement; the best one is reported.
        warmup_steps: untimed steps before the timings of each env (numba, caches).
        generator_levels: generated levels in the timed run.
    """

    seconds: float
    repeats: int
    warmup_steps: int
    generator_levels: int


@dataclass(frozen=True)
class Row:
    """One line of the results table.

    Attributes:
        what: the measurement.
        envs: number of envs stepped together ("1" for the single env).
        random: rate with uniformly random legal actions.
        first: rate with the cheap policy "first legal action".
        ratio: rate measured here over a quoted reference, labelled.
        note: anything else (targets, costs).
    """

    what: str
    envs: str
    random: str
    first: str = ""
    ratio: str = ""
    note: str = ""


# ---------------------------------------------------------------------------------------------
# Timing helpers
# ---------------------------------------------------------------------------------------------


def best_rate(run: Callable[[], int], cfg: Settings) -> float:
    """Best rate (work units per second) of repeated calls of ``run``.

    Each timing calls ``run`` until ``cfg.seconds`` have passed; ``run`` returns the units of
    work it did (env-steps, levels).

    Args:
        run: one chunk of work; returns its size.
        cfg: timing settings.

    Returns:
        Units per second of the best timing.
    """
    best = 0.0
    for _ in range(cfg.repeats):
        done = 0
        t0 = time.perf_counter()
        end = t0 + cfg.seconds
        while True:
            done += run()
            now = time.perf_counter()
            if now >= end:
                break
        best = max(best, done / (now - t0))
    return best


def best_seconds(run: Callable[[], object], cfg: Settings) -> float:
    """Best wall time of one ``run()`` call.

    One untimed call sizes the timings: each runs ``run`` about ``cfg.seconds / 3`` seconds'
    worth of calls (1 to 10,000); ``cfg.repeats`` timings, the best one is kept.

    Args:
        run: the work to time.
        cfg: timing settings.

    Returns:
        Seconds per call of the best timing.
    """
    t0 = time.perf_counter()
    run()
    one = time.perf_counter() - t0
    calls = int(min(10_000, max(1, cfg.seconds / 3 / max(one, 1e-9))))
    best = float("inf")
    for _ in range(cfg.repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            run()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def fmt_rate(rate: float) -> str:
    """A rate with thousands separators, no decimals."""
    return f"{rate:,.0f}"


def verdict(rate: float, target: float) -> str:
    """``**PASS**`` or ``**MISS**`` for ``rate`` against ``target``."""
    return "**PASS**" if rate >= target else "**MISS**"


# ---------------------------------------------------------------------------------------------
# Action samplers
# ---------------------------------------------------------------------------------------------


def sample_legal(masks: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row of ``masks``, vectorised.

    Picks the ``floor(u * count)``-th legal action of each row among the row-major indices of
    ``np.flatnonzero(masks)``: one pass over the masks, no random number per action.

    Args:
        masks: bool[N, A] legal actions per env.
        u: float64[N] uniform numbers in [0, 1), one per env.

    Returns:
        int64[N] actions; 0 (an illegal no-op) for a row with no legal action.
    """
    n_env, n_actions = masks.shape
    counts = np.count_nonzero(masks, axis=1)
    flat = np.flatnonzero(masks)
    if flat.size == 0:
        return np.zeros(n_env, dtype=np.int64)
    pick = np.cumsum(counts) - counts + (u * counts).astype(np.int64)
    actions = flat[np.minimum(pick, flat.size - 1)] - np.arange(n_env) * n_actions
    actions[counts == 0] = 0
    return actions


def sample_legal_keys(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The textbook vectorised sampler: a random key per action, argmax over the legal ones.

    Args:
        masks: bool[N, A] legal actions per env.
        rng: source of the keys (N * A floats per call).

    Returns:
        int64[N] actions (0 for a row with no legal action).
    """
    return np.where(masks, rng.random(masks.shape), -1.0).argmax(axis=1)


def first_legal(masks: np.ndarray) -> np.ndarray:
    """The first legal action of each row (0 when none): int64[N]. The cheap policy."""
    return masks.argmax(axis=1)


# ---------------------------------------------------------------------------------------------
# Single env
# ---------------------------------------------------------------------------------------------


class SingleRollout:
    """A ``gym.make`` env stepped in chunks with random legal actions, resetting as needed.

    Args:
        env_id: registered soko-gym id.
        seed: seeds the env and the action draws.
        chunk: steps per ``run_*`` call.
    """

    def __init__(self, env_id: str, seed: int, chunk: int = 500, **env_kwargs: Any) -> None:
        self.env = gym.make(env_id, levels=LEVELS, **env_kwargs)
        self.is_move = env_id == "Sokoban-Move-v0"
        self.chunk = chunk
        rng = np.random.default_rng(seed)
        self.draws = 1 << 16
        self.u = rng.random(self.draws).tolist()  # Python floats: cheap to index
        self.d = rng.integers(4, size=self.draws).tolist()
        self.k = 0
        _, self.info = self.env.reset(seed=seed)

    def _random_action(self, mask: np.ndarray) -> int:
        k = self.k
        self.k = (k + 1) & (self.draws - 1)
        if self.is_move:  # rejection sampling over the 4 directions: uniform among legal ones
            for j in range(8):
                d = self.d[(k + j) & (self.draws - 1)]
                if mask[d]:
                    return d
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            return 0  # boxed in: an illegal no-op
        return int(legal[int(self.u[k] * legal.size)])

    def run_random(self) -> int:
        """Step ``chunk`` times with uniformly random legal actions; returns ``chunk``."""
        env, info = self.env, self.info
        choose = self._random_action
        for _ in range(self.chunk):
            _, _, terminated, truncated, info = env.step(choose(info["action_mask"]))
            if terminated or truncated:
                _, info = env.reset()
        self.info = info
        return self.chunk

    def run_first(self) -> int:
        """Step ``chunk`` times with the first legal action; returns ``chunk``."""
        env, info = self.env, self.info
        for _ in range(self.chunk):
            _, _, terminated, truncated, info = env.step(int(info["action_mask"].argmax()))
            if terminated or truncated:
                _, info = env.reset()
        self.info = info
        return self.chunk

    def choice_seconds(self, cfg: Settings) -> float:
        """Seconds per random legal action choice alone, on masks recorded from a rollout."""
        masks = []
        info = self.info
        for _ in range(256):
            mask = info["action_mask"]
            masks.append(mask)
            _, _, terminated, truncated, info = self.env.step(self._random_action(mask))
            if terminated or truncated:
                _, info = self.env.reset()
        self.info = info
        choose = self._random_action

        def run() -> None:
            for m in masks:
                choose(m)

        return best_seconds(run, cfg) / len(masks)


def bench_single(cfg: Settings) -> list[Row]:
    """Single env through ``gym.make`` (TimeLimit, OrderEnforcing, PassiveEnvChecker) per id.

    Args:
        cfg: timing settings.

    Returns:
        Table rows.
    """
    rows = []
    for env_id in ENV_IDS:
        roll = SingleRollout(env_id, SEED)
        for _ in range(max(1, cfg.warmup_steps // roll.chunk)):
            roll.run_random()
        rand = best_rate(roll.run_random, cfg)
        first = best_rate(roll.run_first, cfg)
        choice = roll.choice_seconds(cfg)
        step_only = 1.0 / max(1.0 / rand - choice, 1e-12)
        how = "rejection over the 4 directions" if roll.is_move else "flatnonzero(mask)[u * k]"
        note = (
            f"random choice ({how}) {choice * 1e9:,.0f} ns of {1e9 / rand:,.0f} ns per step; "
            f"random rate without it {fmt_rate(step_only)}/s"
        )
        ratio = ""
        if roll.is_move:
            note = f"target >= {TARGET_SINGLE_MOVE:,}: {verdict(rand, TARGET_SINGLE_MOVE)}; {note}"
            ratio = f"x{rand / REF_PYTHON_SINGLE:.2f} vs pure-Python gym env (190k)"
        rows.append(
            Row(
                f"{env_id}, single env (gym.make)",
                "1",
                fmt_rate(rand),
                fmt_rate(first),
                ratio,
                note,
            )
        )
        roll.env.close()
        if env_id in SEARCH_MASK_IDS:
            rows.append(bench_search_mask(env_id, cfg, rand))
    return rows


def bench_search_mask(env_id: str, cfg: Settings, plain: float) -> Row:
    """The single env with ``deadlock_search=SEARCH_BUDGET``: what the search mask costs."""
    roll = SingleRollout(env_id, SEED, chunk=50, deadlock_search=SEARCH_BUDGET)
    roll.run_random()  # compiles (or loads) the search's kernels
    rand = best_rate(roll.run_random, cfg)
    first = best_rate(roll.run_first, cfg)
    roll.env.close()
    return Row(
        f"{env_id}, single env, deadlock_search={SEARCH_BUDGET}",
        "1",
        fmt_rate(rand),
        fmt_rate(first),
        f"x{rand / plain:.3f} vs the plain env above",
        f"{1e6 / rand - 1e6 / plain:,.0f} us per step more (random legal): the exhaustion "
        "test on each pushing action's position",
    )


# ---------------------------------------------------------------------------------------------
# Vector env
# ---------------------------------------------------------------------------------------------


class VectorRollout:
    """A native vector env stepped with vectorised random legal (or first legal) actions.

    Args:
        env_id: registered soko-gym id.
        num_envs: sub-envs.
        copy: the vector env's ``copy`` argument.
        parallel: its ``parallel`` argument.
        seed: seeds the env and the action draws.
    """

    def __init__(self, env_id: str, num_envs: int, copy: bool, parallel: bool, seed: int):
        self.env = soko_gym.make_vec(env_id, num_envs, levels=LEVELS, copy=copy, parallel=parallel)
        self.n = num_envs
        rng = np.random.default_rng(seed)
        self.pool = rng.random((64, num_envs))  # one uniform per env and step, cycled
        self.k = 0
        _, self.info = self.env.reset(seed=seed)

    def run_random(self) -> int:
        """One step with uniformly random legal actions; returns the env-steps done."""
        u = self.pool[self.k]
        self.k = (self.k + 1) & 63
        _, _, _, _, self.info = self.env.step(sample_legal(self.info["action_mask"], u))
        return self.n

    def run_first(self) -> int:
        """One step with the first legal action of each env; returns the env-steps done."""
        _, _, _, _, self.info = self.env.step(first_legal(self.info["action_mask"]))
        return self.n


def sampling_note(masks: np.ndarray, cfg: Settings) -> str:
    """Cost of the action samplers on one mask batch, as a table note."""
    n_env = masks.shape[0]
    rng = np.random.default_rng(SEED)
    u = rng.random(n_env)
    ours = best_seconds(lambda: sample_legal(masks, u), cfg)
    keys = best_seconds(lambda: sample_legal_keys(masks, rng), cfg)
    first = best_seconds(lambda: first_legal(masks), cfg)
    return (
        f"sampling per batch: flatnonzero {ours * 1e6:,.1f} µs, random keys "
        f"{keys * 1e6:,.1f} µs, first legal {first * 1e6:,.1f} µs"
    )


def vector_ratio_and_note(env_id: str, n_env: int, rand: float, first: float) -> tuple[str, str]:
    """Reference ratios and target verdicts for one vector row (at 1024+ envs)."""
    if n_env < TARGET_FROM or env_id == "Sokoban-Macro-v0":
        return "", ""
    ratio = ""
    target = TARGET_VECTOR_PUSH
    if env_id == "Sokoban-Move-v0":
        target = TARGET_VECTOR_MOVE
        ratio = f"x{rand / REF_NUMBA_LOOP:.2f} vs bare numba loop (11M)"
        if n_env == 4096:
            ratio += f"; x{rand / REF_JAX_4096:.2f} vs JAX (970k)"
    note = (
        f"target >= {target / 1e6:g}M: random {verdict(rand, target)}, "
        f"first legal {verdict(first, target)}"
    )
    return ratio, note


def bench_vector(cfg: Settings, sizes: dict[str, tuple[int, ...]]) -> list[Row]:
    """Native vector envs over sizes, ``copy`` and (from 256 envs) ``parallel``.

    Args:
        cfg: timing settings.
        sizes: env id -> numbers of envs to time.

    Returns:
        Table rows.
    """
    rows = []
    for env_id, env_sizes in sizes.items():
        for n_env in env_sizes:
            drivers = (False, True) if n_env >= BOTH_DRIVERS_FROM else (n_env >= 512,)
            first_config = True
            for parallel in drivers:
                for copy in (True, False):
                    roll = VectorRollout(env_id, n_env, copy, parallel, SEED)
                    for _ in range(max(2, cfg.warmup_steps // n_env)):
                        roll.run_random()
                    rand = best_rate(roll.run_random, cfg)
                    first = best_rate(roll.run_first, cfg)
                    ratio, note = vector_ratio_and_note(env_id, n_env, rand, first)
                    if first_config:
                        extra = sampling_note(roll.info["action_mask"], cfg)
                        note = f"{note}; {extra}" if note else extra
                        first_config = False
                    what = f"{env_id}, make_vec, copy={copy}, parallel={parallel}"
                    rows.append(
                        Row(what, f"{n_env:,}", fmt_rate(rand), fmt_rate(first), ratio, note)
                    )
                    roll.env.close()
    return rows


# ---------------------------------------------------------------------------------------------
# Where a vector Move step's time goes (uses the vector env's private members)
# ---------------------------------------------------------------------------------------------


def bench_breakdown(cfg: Settings, n_env: int) -> list[Row]:
    """Time the pieces of one vector Move step at ``n_env`` envs, serial and parallel driver.

    Pieces: the public ``step`` with first-legal actions; the numba driver alone (every env
    stepping); the driver with every env skipped (its per-env call overhead); the observation
    copy; the info dict; the first-legal and random-legal samplers.

    Args:
        cfg: timing settings.
        n_env: number of envs.

    Returns:
        Table rows, time per batch and per env-step.
    """
    rows = []
    for parallel in (False, True):
        env = soko_gym.make_vec("Sokoban-Move-v0", n_env, levels=LEVELS, parallel=parallel)
        _, info = env.reset(seed=SEED)
        for _ in range(20):
            _, _, _, _, info = env.step(first_legal(info["action_mask"]))
        holder = {"info": info}

        def public_step(env=env, holder=holder) -> None:
            holder["info"] = env.step(first_legal(holder["info"]["action_mask"]))[4]

        masks = env.action_masks()
        u = np.random.default_rng(SEED).random(n_env)
        random_sample = partial(sample_legal, masks, u)
        first_sample = partial(first_legal, masks)
        t_step = best_seconds(public_step, cfg)
        pieces = [("env.step(first legal), all included", t_step)]
        # the driver alone: every env steps its first legal action (no autoreset, no copies)
        env._task[:] = batch_kernels.TASK_STEP
        env._actions[:] = first_legal(env.action_masks())
        pieces.append(("numba driver, every env stepping", best_seconds(env._run, cfg)))
        env._task[:] = batch_kernels.TASK_SKIP
        pieces.append(("numba driver, every env skipped", best_seconds(env._run, cfg)))
        pieces.append(("observation copy (copy=True)", best_seconds(env._observations, cfg)))
        pieces.append(("info dict (9 arrays copied)", best_seconds(env._infos, cfg)))
        pieces.append(("first legal action (argmax)", best_seconds(first_sample, cfg)))
        rest = t_step - sum(secs for _, secs in pieces[1:])  # the skipped run is inside stepping
        rest += pieces[2][1]
        pieces.append(
            ("rest: Python checks, autoreset (level choice, loading, reset kernel)", rest)
        )
        pieces.append(("random legal action (flatnonzero)", best_seconds(random_sample, cfg)))
        for label, secs in pieces:
            rows.append(
                Row(
                    f"Move breakdown, parallel={parallel}: {label}",
                    f"{n_env:,}",
                    f"{secs * 1e6:,.1f} µs",
                    f"{secs / n_env * 1e9:,.1f} ns/env",
                    "",
                    f"{secs / t_step:.0%} of a step",
                )
            )
        env.close()
    return rows


# ---------------------------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------------------------


def bench_generator(cfg: Settings) -> list[Row]:
    """Levels per second of ``generate_level`` for 10x10 rooms with 4 boxes.

    Args:
        cfg: timing settings.

    Returns:
        Table rows.
    """
    rng = np.random.default_rng(SEED)
    for _ in range(20):
        generate_level(rng)
    n = cfg.generator_levels
    best = float("inf")
    for _ in range(cfg.repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            generate_level(rng)
        best = min(best, time.perf_counter() - t0)
    rate = n / best
    return [
        Row(
            "generate_level, 10x10, 4 boxes (levels/s)",
            "1",
            fmt_rate(rate),
            "",
            "",
            f"{best / n * 1e3:.2f} ms/level over {n} levels; random rooms",
        )
    ]


def bench_render(cfg: Settings) -> list[Row]:
    """Frames per second of the vectorised RGB blitter (a vector env's ``render``).

    Args:
        cfg: timing settings.

    Returns:
        Table rows.
    """
    from soko_gym.envs.render.rgb import draw_planes_batch

    env = gym.make("Sokoban-Push-v0", levels="boxoban-hard:1", obs_size=10)
    planes, _ = env.reset(seed=SEED)
    env.close()
    rows = []
    for n_env in (1, 1024):
        batch = np.repeat(planes[None], n_env, axis=0)
        secs = best_seconds(lambda b=batch: draw_planes_batch(b, 8), cfg)
        rows.append(
            Row(
                "draw_planes_batch, 10x10, tile 8 (frames/s)",
                f"{n_env:,}",
                fmt_rate(n_env / secs),
                "",
                "",
                f"{secs * 1e3:.2f} ms per batch (was a test's 'under 0.1 s' for 1,024)",
            )
        )
    return rows


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def markdown_table(rows: list[Row]) -> str:
    """Render rows as a markdown table."""
    header = (
        "Measurement",
        "Envs",
        "Steps/s, random legal",
        "Steps/s, first legal",
        "Ratio vs quoted reference",
        "Notes",
    )
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---", "---:", "---:", "---:", "---", "---"]) + "|",
    ]
    lines += [
        f"| {r.what} | {r.envs} | {r.random} | {r.first} | {r.ratio} | {r.note} |" for r in rows
    ]
    return "\n".join(lines)


def main() -> None:
    """Parse flags, run the benchmarks and print the markdown report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: 0.05 s timings, one repeat, fewer sizes",
    )
    args = parser.parse_args()
    if args.quick:
        cfg = Settings(0.05, 1, 200, 20)
        sizes = {
            "Sokoban-Move-v0": (1, 1024),
            "Sokoban-Push-v0": (64, 1024),
            "Sokoban-Macro-v0": (64,),
        }
    else:
        cfg = Settings(0.3, 3, 2_000, 200)
        sizes = VECTOR_SIZES

    t0 = time.perf_counter()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = bench_single(cfg)
    rows += bench_vector(cfg, sizes)
    breakdown = bench_breakdown(cfg, 1024)
    rows += bench_generator(cfg)
    rows += bench_render(cfg)
    elapsed = time.perf_counter() - t0

    mode = "quick" if args.quick else "full"
    print(f"## soko_gym env throughput ({mode}): {LEVELS}, 10x10 frame\n")
    print(machine_line() + f"; load average at start {load:.2f}\n")
    print(markdown_table(rows))
    print(
        "\nSteps/s counts env-steps (num_envs x batch steps / s) with observations, rewards, masks"
        " and resets included. Random legal: single Move draws among the 4 directions by"
        " rejection; single Push/Macro pick `flatnonzero(mask)[int(u * k)]`; vector envs pick"
        " the floor(u * k)-th legal action from `flatnonzero` of the whole mask batch"
        " (`sample_legal`). First legal: `mask.argmax()`, a deterministic policy whose"
        " episodes end by truncation. Macro stops at 256 envs: its masks are (H*W)^2 = 10,000"
        " actions wide, so a 4096-env mask batch is 41 MB copied into info on every step."
    )
    print(
        "\n**Quoted references (measured elsewhere on a comparable 2-core machine, not in this"
        f" run):** pure-Python Gymnasium Boxoban env {REF_PYTHON_SINGLE:,} move-steps/s single;"
        f" JAX env {REF_JAX_4096:,} move-steps/s at 4096 envs; bare numba loop stepping 1,024"
        f" Boxoban boards and rewriting their observation planes {REF_NUMBA_LOOP:,}/s."
        " Ratios divide the random-legal rate measured here by these constants."
    )
    print("\n### Where a vector Move step's time goes (1,024 envs, first legal actions)\n")
    print(
        markdown_table(breakdown)
        .replace("Steps/s, random legal", "Per batch")
        .replace("Steps/s, first legal", "Per env")
    )
    print(
        "\nThe skipped-driver row is the driver's per-env cost with no game work (the env loop"
        " runs inside one kernel, so it is a branch per env); stepping minus skipped is the"
        " game work itself. The rest row is the step time minus the pieces above it (the random"
        " sampler is not part of the step). parallel=True rates are the most sensitive to other"
        " processes sharing the cores: compare the load averages."
    )
    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"\nBest of {cfg.repeats} timing(s) of {cfg.seconds:g} s per rate; run took"
        f" {elapsed:.1f} s; load average at the end {load_end:.2f}."
    )


if __name__ == "__main__":
    main()
