from collections import namedtuple

import numpy as np
import pytest

import planners
from planners import SearchLimits
from planners._kernels.common import (
    C_EXPANDED,
    C_GENERATED,
    EXHAUSTED,
    FOUND,
    GROW_NODES,
    GROW_TABLE,
    RUNNING,
)
from planners._kernels.table import new_table, table_get, table_put
from planners.driver import (
    SliceSearch,
    Store,
    check_bool,
    check_choice,
    check_int,
    power_of_two,
)

Rows = namedtuple("Rows", ["a", "b"])


def _rows(n):
    return Rows(np.arange(n, dtype=np.int32), np.zeros((n, 3), dtype=np.int64))


def test_store__doubles_rows_and_keeps_their_contents():
    store = Store(budget=10_000)
    store.put("nodes", _rows(4))
    assert store.used == store.peak == 4 * 4 + 4 * 24
    assert store.grow("nodes")
    nodes = store["nodes"]
    assert isinstance(nodes, Rows) and nodes.a.shape == (8,) and nodes.b.shape == (8, 3)
    assert nodes.a[:4].tolist() == [0, 1, 2, 3]
    assert store.used == store.peak == 2 * (4 * 4 + 4 * 24)


def test_store__rehashes_a_table_into_twice_the_slots():
    table = new_table(4)
    table_put(*table, np.uint64(7), 3, 11)
    store = Store(budget=10_000)
    store.put("table", table)
    assert store.grow("table")
    bigger = store["table"]
    assert bigger.hashes.shape == (8,)
    assert table_get(*bigger, np.uint64(7), 3) == 11


def test_store__refuses_to_grow_past_the_budget():
    store = Store(budget=2 * (4 * 4 + 4 * 24) - 1)
    store.put("nodes", _rows(4))
    assert not store.grow("nodes")
    assert store["nodes"].a.shape == (4,) and store.fits()
    store.put("more", _rows(4))
    assert not store.fits()
    assert store.peak == 4 * 4 + 4 * 24  # what passes the budget never counts as a peak


class _Scripted(SliceSearch):
    """A search whose kernel returns scripted statuses and expands one node per call."""

    grows = {GROW_NODES: "nodes", GROW_TABLE: "table"}

    def __init__(self, limits, statuses):
        super().__init__(limits, None, slice_nodes=5, n_counters=2)
        self.statuses = list(statuses)
        self.budgets = []
        self.store.put("nodes", _rows(2))
        self.store.put("table", new_table(2))

    def step(self, budget):
        self.budgets.append(budget)
        self.counters[C_EXPANDED] += 1
        self.counters[C_GENERATED] += 2
        return self.statuses.pop(0) if self.statuses else RUNNING

    def plan(self):
        return []

    def stats(self):
        return {"peak": self.store.peak}


def test_slice_search__maps_final_statuses_and_grows_between_slices():
    run = _Scripted(SearchLimits(), [RUNNING, GROW_NODES, GROW_TABLE, FOUND])
    out = run.search()
    assert out.status == "solved" and out.pushes == [] and (out.nodes, out.generated) == (4, 8)
    assert run.store["nodes"].a.shape == (4,) and run.store["table"].hashes.shape == (4,)
    assert _Scripted(SearchLimits(), [EXHAUSTED]).search().status == "unsolvable"


def test_slice_search__stops_at_the_node_limit_with_budgets_that_reach_it_exactly():
    run = _Scripted(SearchLimits(max_nodes=3), [])
    assert run.run() == "node_limit"
    assert run.expanded == 3 and run.budgets == [3, 2, 1]


def test_slice_search__memory_limit_when_a_group_cannot_grow():
    # 88 bytes at first (2 rows of 28, a table of 32); the budget holds two doublings of the rows
    budget = SearchLimits(max_memory_mb=256 / 2**20)
    run = _Scripted(budget, [GROW_NODES, GROW_NODES, GROW_NODES])
    assert run.run() == "memory_limit"
    assert run.expanded == 3 and run.store["nodes"].a.shape == (8,) and run.store.peak == 256


def test_checks__name_the_option():
    with pytest.raises(ValueError, match="flag"):
        check_bool("flag", 1)
    with pytest.raises(ValueError, match="count"):
        check_int("count", True, 0)
    with pytest.raises(ValueError, match="count"):
        check_int("count", 7, 0, 5)
    check_int("count", None, 0, allow_none=True)
    with pytest.raises(ValueError, match="count.*or None"):
        check_int("count", -1, 0, allow_none=True)
    with pytest.raises(ValueError, match="kind"):
        check_choice("kind", "c", ("a", "b"))
    assert [power_of_two(n) for n in (1, 2, 3, 1000)] == [2, 2, 4, 1024]
    assert power_of_two(3, least=16) == 16


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("astar", {"initial_capacity": 1}),
        ("greedy", {"bound": "matching", "slice_nodes": 3}),
        ("idastar", {"bound": "simple", "initial_table": 100}),
        ("bfs", {"freeze": False}),
        ("dfs", {"max_depth": 9}),
        ("packing-order", {"max_parks": 2, "initial_nodes": 3}),
    ],
)
def test_planners__keep_their_options_in_a_frozen_dataclass(name, options):
    planner = planners.get_planner(name, **options)
    for key, value in options.items():
        assert getattr(planner.options, key) == value
    with pytest.raises(AttributeError):
        planner.options.slice_nodes = 1  # frozen
