"""Gangs: all or nothing, worked by hand and as a hypothesis property on random clusters."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpusched as gs
from test_properties import clusters


def profile() -> gs.Profile:
    return gs.Profile().add_check("NodeResourcesFit").add_check("GPUCheck").add_score("NodeResourcesFit", 1)


def eight_gpu_nodes(n: int) -> gs.Cluster:
    return gs.Cluster.from_arrays(cpu_milli=np.array([64000] * n), memory_mib=np.array([262144] * n),
                                  gpu_count=np.array([8] * n), gpu_model=["A100"] * n, gpu_mem_mib=np.array([40960] * n))


WORKER = gs.Pod("w", cpu_milli=8000, memory_mib=32768, num_gpu=8)


def test_gang_fits_or_nothing_changes() -> None:
    c = eight_gpu_nodes(2)
    before = c.copy()
    placer = gs.GangPlacer(profile())
    r = placer.place(c, "too-big", [("worker", WORKER, 3, 3)])
    assert not r and r.members == [] and c == before
    # Two members fit (one per node) before the third found no GPUs; both were rolled back.
    f = r.failure
    assert f is not None and (f["role"], f["placed"], f["needed"]) == ("worker", 2, 3)
    assert "2 insufficient GPU share" in f["rejections"]
    r = placer.place(c, "fits", [("worker", WORKER, 2, 2)])
    assert r and r.nodes_used == 2 and r.per_role == [2]
    assert sorted(b.node for _, _, b in r.members) == [0, 1] and c.gpu_milli_allocated == 16000
    assert r.explanation == "gang 'fits' placed 2 members on 2 nodes in 1 rack (worker 2)"
    r.release(c)
    assert c == before
    with pytest.raises(RuntimeError, match="already released"):
        r.release(c)


def test_elastic_gang_takes_what_fits() -> None:
    c = eight_gpu_nodes(3)
    r = gs.GangPlacer(profile()).place(c, "elastic", [("worker", WORKER, 2, 5)])
    assert r and r.per_role == [3]  # min 2, desired 5: three nodes hold three


def test_bad_gang() -> None:
    c = eight_gpu_nodes(1)
    with pytest.raises(gs.InvalidArgumentError, match="min_count|desired"):
        gs.GangPlacer(profile()).place(c, "g", [("worker", WORKER, 3, 2)])
    with pytest.raises(gs.InvalidArgumentError, match="priority"):
        gs.GangPlacer(profile()).place(c, "g", [("worker", WORKER, 1, 1)], priority=2**31)
    with pytest.raises(gs.InvalidArgumentError, match="roles"):
        gs.GangPlacer(profile()).place(c, "g", [])


@given(c=clusters(), count=st.integers(1, 6), gpus=st.integers(0, 4), share=st.sampled_from([250, 1000]),
       cpu=st.integers(0, 40000), elastic=st.booleans())
def test_gangs_are_never_partially_bound(c: gs.Cluster, count: int, gpus: int, share: int, cpu: int, elastic: bool) -> None:
    before = c.copy()
    member = gs.Pod("m", cpu_milli=cpu, memory_mib=1024, num_gpu=gpus,
                    gpu_milli=(share if gpus == 1 else 1000) if gpus else None)
    r = gs.GangPlacer(profile(), elastic=elastic).place(
        c, "g", [("launcher", member.replace(num_gpu=0, gpu_milli=None), 1, 1), ("worker", member, count, count + 2)])
    if not r:
        assert c == before and r.members == []
        return
    workers = [m for m in r.members if m[0] == "worker"]
    assert count <= len(workers) <= count + 2 and len(r.members) == len(workers) + 1
    assert c.gpu_milli_allocated - before.gpu_milli_allocated == len(workers) * member.gpu_milli_total
    r.release(c)
    assert c == before
