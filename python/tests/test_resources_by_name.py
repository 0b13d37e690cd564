"""Resources by name from Python (issue 13, docs/adr/0015-resources-by-name.md): a node's `pods`,
named resources (example.com/foo, hugepages-2Mi, ephemeral-storage) from numpy columns and dicts,
node labels / taints / cordons with pod tolerations and node selectors, long GPU model names and
Kubernetes' int32 priorities; bad values name the field and change nothing."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import gpusched as gs

A100 = "NVIDIA-A100-SXM4-80GB"
FIT = gs.Profile().add_check("NodeResourcesFit").add_score("NodeResourcesFit", 1)


def test_pods_limit_from_numpy_rejects_with_too_many_pods() -> None:
    c = gs.Cluster.from_arrays(cpu_milli=np.array([8000, 8000]), memory_mib=np.array([16384, 16384]),
                               pods=np.array([1, -1]))
    assert c.named_resources(0) == {"pods": 1, "pod_count": 0, "scalars": {}}
    s = gs.Scheduler(FIT)
    first = gs.Pod("a", cpu_milli=100)
    c.reserve(first, gs.Binding(first, 0))
    second = gs.Pod("b", cpu_milli=100)
    r = s.place_one(c, second)
    assert r.scheduled and r.node == 1  # node 0 holds its one pod
    assert c.named_resources(0)["pod_count"] == 1
    # Only node 0 left: "Too many pods", as Kubernetes' fit.go says.
    c2 = gs.Cluster.from_arrays(cpu_milli=np.array([8000]), memory_mib=np.array([16384]), pods=1)
    assert s.place_one(c2, gs.Pod("a")).scheduled
    r2 = s.place_one(c2, gs.Pod("b"))
    assert not r2.scheduled
    assert r2.rejections == {"Too many pods": 1}


def test_named_resources_from_numpy_filter_and_score() -> None:
    c = gs.Cluster.from_arrays(
        cpu_milli=np.array([4000, 4000, 4000]),
        memory_mib=np.array([8192, 8192, 8192]),
        scalars={"example.com/foo": np.array([8, 4, 0]), "hugepages-2Mi": np.array([0, 0, 1024])},
    )
    assert c.named_resources(0)["scalars"] == {"example.com/foo": (8, 0)}
    assert c.named_resources(2)["scalars"] == {"hugepages-2Mi": (1024, 0)}
    pods = gs.pods_from_arrays(cpu_milli=np.array([100, 100]), scalars={"example.com/foo": np.array([2, 6])})
    assert pods[0].scalars == {"example.com/foo": 2} and pods[1].scalars == {"example.com/foo": 6}
    # MostAllocated over example.com/foo only (any resource name is accepted now):
    # node0 2/8 -> 25, node1 2/4 -> 50; node2 has none -> filtered.
    prof = gs.Profile().add_check("NodeResourcesFit").add_score(
        "NodeResourcesFit", 1,
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "example.com/foo", "weight": 1}]}})
    s = gs.Scheduler(prof)
    r = s.place_one(c, pods[0])
    assert r.scheduled and r.node == 1
    assert c.named_resources(1)["scalars"] == {"example.com/foo": (4, 2)}
    r = s.place_one(c, pods[1])  # 6 units: only node 0 (8 free) fits
    assert r.scheduled and r.node == 0
    big = gs.Pod("big", scalars={"example.com/foo": 9})
    r = s.place_one(c, big)
    assert not r.scheduled
    assert r.rejections == {"insufficient named resource": 3}


def test_pod_round_trips_with_scalars_and_placement() -> None:
    p = gs.Pod("p", cpu_milli=10, priority=2_000_000_000, scalars={"ephemeral-storage": 1 << 30},
               node_selector={"zone": "a"}, tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}])
    assert p.priority == 2_000_000_000
    assert p.tolerations == [{"key": "gpu", "operator": "Exists", "value": "", "effect": "NoSchedule"}]
    assert gs.Pod.from_dict(p.to_dict()) == p
    assert pickle.loads(pickle.dumps(p)) == p
    assert p != gs.Pod("p", cpu_milli=10, priority=2_000_000_000)


def test_node_constraints_from_python() -> None:
    c = gs.Cluster()
    c.add_node("tainted", cpu_milli=4000, memory_mib=8192, gpu_count=1, gpu_model=A100, gpu_mem_mib=81920,
               taints=[{"key": "gpu", "value": "a100", "effect": "NoSchedule"}], labels={"zone": "a"})
    c.add_node("cordoned", cpu_milli=4000, memory_mib=8192, unschedulable=True)
    c.add_node("plain", cpu_milli=4000, memory_mib=8192, labels={"zone": "b"})
    prof = (gs.Profile().add_check("NodeUnschedulable").add_check("TaintToleration").add_check("NodeAffinity")
            .add_check("NodeResourcesFit").add_score("NodeResourcesFit", 1))
    s = gs.Scheduler(prof)
    r = s.place_one(c, gs.Pod("in-a", node_selector={"zone": "a"}))
    assert not r.scheduled
    assert r.rejections == {"untolerated taint": 1, "unschedulable": 1, "node affinity/selector mismatch": 1}
    ok = gs.Pod("in-a-tolerating", node_selector={"zone": "a"}, tolerations=[{"key": "gpu", "value": "a100"}])
    r = s.place_one(c, ok)
    assert r.scheduled and r.node == 0


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: gs.Pod("p", scalars={"example.com/foo": -1}), "pod 'p'.scalars['example.com/foo']"),
        (lambda: gs.Pod("p", scalars={"not a name": 1}), "pod 'p'.scalars['not a name']"),
        (lambda: gs.Pod("p", scalars={"cpu": 1}), "pod 'p'.scalars['cpu']"),
        (lambda: gs.Pod("p", priority=2**31), "pod.priority"),
        (lambda: gs.Pod("p", tolerations=[{"key": "k", "operator": "Maybe"}]), "pod 'p'.tolerations[0].operator"),
        (lambda: gs.pods_from_arrays(cpu_milli=np.array([1, 2]), scalars={"example.com/foo": np.array([1, -3])}),
         "scalars['example.com/foo'][1]"),
    ],
)
def test_bad_pod_values_name_the_field(make, field) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(gs.InvalidArgumentError, match=field.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        make()


def test_bad_node_values_name_the_field_and_add_nothing() -> None:
    c = gs.Cluster()
    with pytest.raises(gs.InvalidArgumentError, match=r"pods\[1\]"):
        c.add_nodes(cpu_milli=np.array([1, 2]), memory_mib=np.array([1, 2]), pods=np.array([3, -2]))
    with pytest.raises(gs.InvalidArgumentError, match=r"node 'n'\.scalars\['hugepages-2Mi'\]"):
        c.add_node("n", cpu_milli=1, memory_mib=1, scalars={"hugepages-2Mi": -5})
    with pytest.raises(gs.InvalidArgumentError, match=r"taints\[0\]\.effect"):
        c.add_node("n", cpu_milli=1, memory_mib=1, taints=[{"key": "k", "effect": "Sometimes"}])
    with pytest.raises(gs.InvalidArgumentError, match=r"node 'n'\.labels\[0\]\.key"):
        c.add_node("n", cpu_milli=1, memory_mib=1, labels={"bad key!": "v"})
    assert len(c) == 0


def test_batch_engine_refuses_named_resources_by_field() -> None:
    c = gs.Cluster.from_arrays(cpu_milli=np.array([4000]), memory_mib=np.array([8192]), pods=10)
    with pytest.raises(gs.InvalidArgumentError, match="pods"):
        gs.BatchScorer().scores(c, [gs.Pod("p")])
    plain = gs.Cluster.from_arrays(cpu_milli=np.array([4000]), memory_mib=np.array([8192]))
    with pytest.raises(gs.InvalidArgumentError, match=r"pod 'p'\.scalars"):
        gs.BatchScorer().scores(plain, [gs.Pod("p", scalars={"example.com/foo": 1})])
