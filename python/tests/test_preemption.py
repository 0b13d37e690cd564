"""Preemption worked by hand from Kubernetes' rules (only lower priorities, the cheapest victims,
whole gangs), and stale plans changing nothing."""

from __future__ import annotations

import numpy as np
import pytest

import gpusched as gs


def gpu_nodes(n: int, gpus: int = 1) -> gs.BoundCluster:
    return gs.BoundCluster(gs.Cluster.from_arrays(
        cpu_milli=np.array([64000] * n), memory_mib=np.array([262144] * n), gpu_count=np.array([gpus] * n),
        gpu_model=["A100"] * n, gpu_mem_mib=np.array([40960] * n)))


def gpu_pod(name: str, priority: int, gpus: int = 1, **kw: object) -> gs.Pod:
    return gs.Pod(name, cpu_milli=1000, memory_mib=1024, num_gpu=gpus, priority=priority, **kw)  # type: ignore[arg-type]


def test_preempts_the_lowest_priority() -> None:
    c = gpu_nodes(2)
    c.bind(gpu_pod("low", 1), gs.Binding(gpu_pod("low", 1), 0, gpus=[0]), start_time=0)
    c.bind(gpu_pod("mid", 3), gs.Binding(gpu_pod("mid", 3), 1, gpus=[0]), start_time=0)
    before = c.copy()
    p = gs.Preemptor()
    plan = p.plan(c, gpu_pod("high", 5), now=10)
    assert c == before  # a dry run
    # Both nodes are candidates; pickOneNodeForPreemption: lowest highest-victim priority -> node 0.
    assert plan and plan.node == 0 and plan.candidates == 2
    assert [(v[0], v[2], v[3]) for v in plan.victims] == [("low", 0, 1)]
    assert plan.explanation.startswith("preempt 1 pod(s) on node-0")
    p.apply(c, plan, now=10)
    assert c.find("low") is None and c.find("high") == gs.Binding(gpu_pod("high", 5), 0, gpus=[0])
    assert c.bound_count == 2 and c.gpu_milli_allocated == 2000
    with pytest.raises(gs.InvalidArgumentError):
        p.apply(c, plan, now=11)  # stale: 'low' is gone
    assert c.bound_count == 2


def test_no_victims_of_equal_or_higher_priority() -> None:
    c = gpu_nodes(1)
    c.bind(gpu_pod("a", 5), gs.Binding(gpu_pod("a", 5), 0, gpus=[0]))
    plan = gs.Preemptor().plan(c, gpu_pod("b", 5))
    assert not plan and plan.victims == [] and plan.node is None
    assert "1 hold nothing the pod may preempt" in plan.explanation
    lowest = gs.Preemptor().plan(c, gpu_pod("z", -(2**31)))  # Kubernetes' int32 minimum
    assert not lowest and "priority -2147483648 is the lowest" in lowest.explanation


def test_a_gang_is_evicted_whole() -> None:
    c = gpu_nodes(2)
    for n in range(2):
        w = gpu_pod(f"w{n}", 1, gang="train", gang_min_members=2)
        c.bind(w, gs.Binding(w, n, gpus=[0]))
    plan = gs.Preemptor().plan(c, gpu_pod("svc", 6))
    assert plan.gangs == 1 and sorted(v[0] for v in plan.victims) == ["w0", "w1"]
    gs.Preemptor().apply(c, plan)
    assert c.bound_count == 1 and c.gpu_milli_allocated == 1000  # both members left, svc holds one GPU


def test_bad_input() -> None:
    c = gpu_nodes(1)
    with pytest.raises(gs.InvalidArgumentError, match="node"):
        c.pods_on(3)
    with pytest.raises(gs.InvalidArgumentError):
        c.unbind(42)
    with pytest.raises(gs.InvalidArgumentError, match="start_time"):
        c.bind(gpu_pod("a", 1), gs.Binding(gpu_pod("a", 1), 0, gpus=[0]), start_time=-1)
    assert c.bound_count == 0
    with pytest.raises(gs.InvalidArgumentError):
        c.bind(gpu_pod("a", 1, gpus=2), gs.Binding(gpu_pod("a", 1, gpus=2), 0, gpus=[0, 1]))  # no GPU 1
    assert c.bound_count == 0 and c.gpu_milli_allocated == 0
