"""What ``soko bench`` runs (``BenchConfig``), the checks on it, and the CSV it writes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.benchmark.report import require_matplotlib
from agents.playing.repeat import RULES
from agents.playing.zoo import resolve
from soko_gym.execution import Backend

CSV_COLUMNS = (
    "source",
    "level",
    "title",
    "solver",
    "kind",
    "env_id",
    "episode",
    "solved",
    "status",
    "pushes",
    "moves",
    "seconds",
    "env_steps",
    "nodes",
    "invalid_replies",  # text agents: replies not applied in full (empty for the others)
)
RESULTS_NAME = "results.csv"
PLOT_NAME = "solve_rate.png"
ENV_IDS = ("Sokoban-Push-v0", "Sokoban-Macro-v0", "Sokoban-Move-v0")


@dataclass(frozen=True)
class BenchConfig:
    """What ``run_benchmark`` runs and where it writes.

    Attributes:
        levels: a level source (pack name, file or directory, with an optional ``:A-B``).
        planners: planner registry names (see ``planners.available()``).
        agents: paths of saved SB3 models (``.zip``) or RLlib checkpoint folders, or text agents
            ``text:MODULE:FUNCTION`` (``agents.benchmark.text_agents``).
        policy: a saved Push-env model (``.zip`` or ``pretrained:NAME``) guiding the
            policy-guided planners "lts" and "phs"; required when they are listed.
        time_limit: seconds per level for each planner.
        episodes_per_level: agent episodes on each level.
        max_steps: agent step budget per episode (None: the env id's registered limit).
        jobs: worker processes for the planners (1: run in this process); with ``ray``
            ("local"), the CPUs of the local Ray.
        ray: run the planners on Ray: "local" starts a local Ray, "auto" joins the running
            cluster, or a cluster address (None: local processes).
        resume: continue an existing ``results.csv``: keep its complete rows and skip them.
        out: output directory (created if missing).
        overwrite: replace an existing ``results.csv``.
        agent_env: env id for every agent, instead of the sidecar or the model's spaces.
        symmetric: play every agent through all symmetries of the board at once, its
            log-probabilities averaged (``agents.playing.symmetry.SymmetryAveraged``).
        on_repeat: what every agent does on a board it has met before in the episode
            (``agents.playing.repeat.RepeatAware``: "sample" or "untried"); None plays greedily
            throughout, so a deterministic agent that meets a board twice walks a cycle.
            With ``episodes_per_level`` above 1 agents sample every step and the rule has
            nothing to change.
        deadlock_search: play every agent with the env's ``deadlock_search`` at this budget
            (the actions a bounded search proves lose masked; 0: as the agent's sidecar says).
        seed: seed of the agents' action sampling and env resets.
        plot: write ``solve_rate.png`` (needs the ``plot`` extra).
        quiet: no per-run lines on stderr.
        record: keep replays of the first N levels for every planner and agent (solved runs,
            first episode) in ``replays/`` and an ``index.html`` showing them side by side.
        json: print the summary as one JSON object (``agents.benchmark.report.summary_rows``)
            instead of the table, and no per-run lines.
    """

    levels: str
    planners: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    policy: str | None = None
    time_limit: float = 10.0
    episodes_per_level: int = 1
    max_steps: int | None = None
    jobs: int | None = None
    ray: str | None = None
    resume: bool = False
    out: str | Path = "bench"
    overwrite: bool = False
    agent_env: str | None = None
    symmetric: bool = False
    on_repeat: str | None = None
    deadlock_search: int = 0
    seed: int = 0
    plot: bool = True
    quiet: bool = False
    record: int = 0
    json: bool = False


def check_config(config: BenchConfig) -> None:
    """Refuse a config that cannot run, before any work: a ValueError naming the option."""
    from planners import available

    known = available()
    unknown = [p for p in config.planners if p not in known]
    if unknown:
        raise ValueError(f"unknown planner(s) {unknown}; available: {', '.join(known)}")
    if not config.planners and not config.agents:
        raise ValueError("nothing to run: give --planners and/or --agents")
    from agents.playing.policy_search import POLICY_PLANNERS

    guided = [p for p in config.planners if p in POLICY_PLANNERS]
    if guided and config.policy is None:
        raise ValueError(
            f"--planners {','.join(guided)} need --policy MODEL (a saved Push-env model)"
        )
    if config.policy is not None:
        if not guided:
            raise ValueError(f"--policy is only used by the planners {', '.join(POLICY_PLANNERS)}")
        if not resolve(config.policy).exists():
            raise ValueError(f"--policy model {config.policy} not found")
        from agents.benchmark.planners import policy_options

        policy_options(config.policy)  # not a Push-env model: ValueError now
    Backend(jobs=config.jobs, ray=config.ray)  # a bad --jobs or --ray: ValueError now
    if config.resume and config.overwrite:
        raise ValueError("--resume and --overwrite exclude each other")
    if config.on_repeat is not None and config.on_repeat not in RULES:
        raise ValueError(f"--on-repeat must be one of {', '.join(RULES)}, got {config.on_repeat!r}")
    if config.episodes_per_level < 1:
        raise ValueError(
            f"--episodes-per-level must be at least 1, got {config.episodes_per_level}"
        )
    if config.time_limit <= 0:
        raise ValueError(f"--time-limit must be positive, got {config.time_limit}")
    if config.record < 0:
        raise ValueError(f"--record must be at least 0, got {config.record}")
    if isinstance(config.deadlock_search, bool) or config.deadlock_search < 0:
        raise ValueError(f"--deadlock-search must be at least 0, got {config.deadlock_search}")
    if config.max_steps is not None and config.max_steps < 1:
        raise ValueError(f"--max-steps must be at least 1, got {config.max_steps}")
    if config.agent_env is not None and config.agent_env.replace("-Gen", "") not in ENV_IDS:
        raise ValueError(f"--agent-env must be one of {ENV_IDS}, got {config.agent_env!r}")
    from agents.benchmark.text_agents import is_text_agent, load_text_agent

    for path in config.agents:
        if is_text_agent(path):
            load_text_agent(path)  # a bad text:MODULE:FUNCTION: ValueError now
        elif not resolve(path).exists():  # a .zip, an RLlib checkpoint folder, pretrained:NAME
            raise ValueError(f"agent model {path} not found")
    if config.plot:
        require_matplotlib()
