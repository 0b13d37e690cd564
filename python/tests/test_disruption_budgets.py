"""PodDisruptionBudgets in preemption from Python, worked by hand from Kubernetes' rules
(filterPodsWithPDBViolation: violating victims are reprieved first; pickOneNodeForPreemption:
the fewest violations lead the node choice)."""

from __future__ import annotations

import numpy as np
import pytest

import gpusched as gs


def cpu_nodes(n: int, cpu_milli: int = 500) -> gs.BoundCluster:
    return gs.BoundCluster(gs.Cluster.from_arrays(
        cpu_milli=np.array([cpu_milli] * n), memory_mib=np.array([4096] * n), gpu_count=np.array([0] * n),
        gpu_model=["A100"] * n, gpu_mem_mib=np.array([40960] * n)))


def cpu_pod(name: str, priority: int, cpu_milli: int) -> gs.Pod:
    return gs.Pod(name, cpu_milli=cpu_milli, memory_mib=1, priority=priority)


def bind(c: gs.BoundCluster, p: gs.Pod, node: int) -> None:
    c.bind(p, gs.Binding(p, node))


def test_a_budget_changes_which_victim_goes() -> None:
    # One node of 500m: a (priority 10) and b (priority 20), 200m each; p (100) needs 300m.
    # All lower-priority pods out frees 500m; reprieved most important first: b back leaves 300m
    # (p fits), a back leaves 100m (p does not): a goes. With a budget of 0 disruptions on a, a is
    # violating and reprieved first: a back leaves 300m (fits), b back leaves 100m: b goes.
    c = cpu_nodes(1)
    bind(c, cpu_pod("a", 10, 200), 0)
    bind(c, cpu_pod("b", 20, 200), 0)
    p = cpu_pod("p", 100, 300)
    pre = gs.Preemptor(sample_candidates=False)
    without = pre.plan(c, p)
    assert [v[0] for v in without.victims] == ["a"] and without.violations == 0
    pdbs = gs.DisruptionBudgets()
    assert pdbs.add("a-pdb", 0, pods=["a"]) == 0
    assert len(pdbs) == 1 and "a-pdb" in pdbs and pdbs.names == ["a-pdb"] and pdbs.disruptions_allowed("a-pdb") == 0
    plan = pre.plan(c, p, pdbs=pdbs)
    assert [v[0] for v in plan.victims] == ["b"]
    assert plan.violations == 0 and plan.violating == []
    pre.apply(c, plan)
    assert c.find("b") is None and c.find("a") is not None and c.find("p") is not None


def test_violations_lead_the_node_choice() -> None:
    # node 0: v1 (priority 1), node 1: v2 (priority 5), each holding the whole node; p (9) needs it.
    # Without budgets node 0 wins (lowest highest victim priority); v1's budget allows no disruption,
    # so node 1 (no violation) wins with it.
    c = cpu_nodes(2)
    bind(c, cpu_pod("v1", 1, 500), 0)
    bind(c, cpu_pod("v2", 5, 500), 1)
    p = cpu_pod("p", 9, 500)
    pre = gs.Preemptor(sample_candidates=False)
    assert pre.plan(c, p).node == 0
    pdbs = gs.DisruptionBudgets()
    pdbs.add("db", 0)
    pdbs.cover("v1", "db")
    plan = pre.plan(c, p, pdbs=pdbs)
    assert plan.node == 1 and plan.violations == 0
    # Only node 0 left: the violation is counted and the victim named.
    one = cpu_nodes(1)
    bind(one, cpu_pod("v1", 1, 500), 0)
    forced = pre.plan(one, p, pdbs=pdbs)
    assert forced.node == 0 and forced.violations == 1 and forced.violating == ["v1"]


def test_a_budget_with_room_is_spent_most_important_first() -> None:
    # a (20) and b (10), 200m each, one budget allowing 1 disruption; p (100) needs 500m: both go.
    # Taken most important first, a spends the allowance and b violates.
    c = cpu_nodes(1)
    bind(c, cpu_pod("a", 20, 200), 0)
    bind(c, cpu_pod("b", 10, 200), 0)
    pdbs = gs.DisruptionBudgets()
    pdbs.add("ab", 1, pods=["a", "b"])
    plan = gs.Preemptor(sample_candidates=False).plan(c, cpu_pod("p", 100, 500), pdbs=pdbs)
    assert sorted(v[0] for v in plan.victims) == ["a", "b"]
    assert plan.violations == 1 and plan.violating == ["b"]


def test_bad_budgets_name_the_field_and_change_nothing() -> None:
    pdbs = gs.DisruptionBudgets()
    pdbs.add("db", 1)
    with pytest.raises(gs.InvalidArgumentError, match="pdb 'db'.name"):
        pdbs.add("db", 2)
    with pytest.raises(gs.InvalidArgumentError, match="pdb.name"):
        pdbs.add("", 2)
    with pytest.raises(gs.InvalidArgumentError, match="pdb 'x'.pods"):
        pdbs.add("x", 2, pods=["ok", ""])
    with pytest.raises(gs.InvalidArgumentError, match="pdb 'nope'"):
        pdbs.cover("a", "nope")
    assert pdbs.names == ["db"] and pdbs.disruptions_allowed("db") == 1
