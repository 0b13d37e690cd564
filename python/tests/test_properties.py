"""Property tests of the scheduling invariants on random clusters and pods: no over-allocation,
rollback restores the state exactly, release undoes reserve, and the dynamic profile loaded from the
seed's YAML decides exactly as the same profile compiled as a static type."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpusched as gs
from conftest import REPO

MODELS = ["resnet50", "bert", ""]


@st.composite
def clusters(draw: st.DrawFn) -> gs.Cluster:
    n = draw(st.integers(1, 10))
    cpu = draw(st.lists(st.integers(0, 96000), min_size=n, max_size=n))
    mem = draw(st.lists(st.integers(0, 393216), min_size=n, max_size=n))
    gpus = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
    models = draw(st.lists(st.sampled_from(["V100M32", "T4"]), min_size=n, max_size=n))
    c = gs.Cluster.from_arrays(cpu_milli=np.array(cpu), memory_mib=np.array(mem), gpu_count=np.array(gpus),
                               gpu_model=models, gpu_mem_mib=np.array([32768 if m == "V100M32" else 16384 for m in models]))
    loads = draw(st.lists(st.one_of(st.none(), st.tuples(*[st.floats(0, 1)] * 3)), min_size=n, max_size=n))
    for i, load in enumerate(loads):
        if load is not None:
            c.set_load(i, cpu_used=load[0], mem_used=load[1], gpu_used=load[2])
    return c


@st.composite
def pod_lists(draw: st.DrawFn) -> list[gs.Pod]:
    out = []
    for i in range(draw(st.integers(1, 30))):
        num_gpu = draw(st.integers(0, 4))
        share = draw(st.sampled_from([100, 250, 500, 1000])) if num_gpu == 1 else 1000
        out.append(gs.Pod(
            f"p{i}", cpu_milli=draw(st.integers(0, 32000)), memory_mib=draw(st.integers(0, 131072)), num_gpu=num_gpu,
            gpu_milli=share if num_gpu else None, gpu_mem_mib=draw(st.integers(0, 20000)) if num_gpu else 0,
            model_type=draw(st.sampled_from(MODELS)),
            allowed_models=draw(st.sampled_from([[], ["T4"], ["V100M32"]])) if num_gpu else [],
        ))
    return out


def seed_scheduler(seed: int) -> gs.Scheduler:
    return gs.Scheduler.from_config(gs.load_config(REPO / "data" / "scheduler-config.yaml"), seed=seed)


@given(c=clusters(), pods=pod_lists(), seed=st.integers(0, 2**32))
def test_no_over_allocation(c: gs.Cluster, pods: list[gs.Pod], seed: int) -> None:
    results = seed_scheduler(seed).place_many(c, pods)
    f = c.features()
    assert (f.cpu_allocated <= f.cpu_capacity).all()  # NodeResourcesFit without overcommit
    assert (f.memory_allocated <= f.memory_capacity).all()
    for n in range(len(c)):
        for g in c.gpus(n):
            assert 0 <= g.milli_free <= 1000
            assert 0 <= g.mem_free_mib <= g.mem_total_mib
    placed = [(p, r) for p, r in zip(pods, results) if r]
    assert c.gpu_milli_allocated == sum(p.gpu_milli_total for p, _ in placed)
    for p, r in placed:
        assert len(r.gpus) == p.num_gpu
        models = {g.model for i, g in enumerate(c.gpus(r.node)) if i in r.gpus}  # type: ignore[arg-type]
        assert not p.allowed_models or models <= set(p.allowed_models)


@given(c=clusters(), pods=pod_lists(), seed=st.integers(0, 2**32))
def test_rollback_restores_the_state(c: gs.Cluster, pods: list[gs.Pod], seed: int) -> None:
    before = c.copy()
    s = seed_scheduler(seed)
    with pytest.raises(KeyboardInterrupt):
        with c.transaction() as tx:
            for p in pods:
                tx.place(s, p)
            raise KeyboardInterrupt
    assert c == before
    # Releasing every placement of a committed place_many, in any order, restores the state too.
    results = s.place_many(c, pods)
    for p, r in reversed(list(zip(pods, results))):
        if r.binding is not None:
            c.release(p, r.binding)
    assert c == before


@given(c=clusters(), pods=pod_lists(), seed=st.integers(0, 2**32), pct=st.sampled_from([0, 30, 100]))
def test_dynamic_yaml_profile_decides_as_the_static_one(c: gs.Cluster, pods: list[gs.Pod], seed: int, pct: int) -> None:
    # The seed's config: NodeResourcesFit (default) + GPUCheck; LoadAware x10, ModelAffinity x5.
    dynamic = gs.Scheduler(gs.load_config(Path(REPO / "data" / "scheduler-config.yaml")).profile("ai-scheduler"),
                           seed=seed, percentage_of_nodes_to_score=pct)
    static = gs.SeedStaticScheduler(seed=seed, percentage_of_nodes_to_score=pct)
    d = c.copy()
    a = dynamic.place_many(c, pods)
    b = static.place_many(d, pods)
    assert [(r.node, r.gpus, r.score, r.breakdown, r.explanation) for r in a] == \
           [(r.node, r.gpus, r.score, r.breakdown, r.explanation) for r in b]
    assert c == d
