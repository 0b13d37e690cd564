"""The batch engine: scores worked out by hand (Koordinator's LoadAware, gpusched's ModelAffinity),
the zero-copy matrix, top-k, greedy assignment, and the same scores as schedule_one on random
clusters (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpusched as gs
from test_properties import clusters, pod_lists


def two_nodes() -> gs.Cluster:
    return gs.Cluster.from_arrays(cpu_milli=np.array([10000, 10000]), memory_mib=np.array([10000, 10000]),
                                  gpu_count=np.array([1, 1]), gpu_model=["T4", "T4"], gpu_mem_mib=np.array([16384] * 2))


POD = gs.Pod("p", cpu_milli=2000, memory_mib=4000, num_gpu=1, gpu_milli=500, model_type="resnet50")


def test_scores_by_hand() -> None:
    c = two_nodes()
    # node 1 serves resnet50 already: a 100-milli replica (cpu 0, memory 0).
    c.reserve(gs.Pod("r", num_gpu=1, gpu_milli=100, model_type="resnet50"), gs.Binding(gs.Pod("r", num_gpu=1, gpu_milli=100), 1, gpus=[0]))
    m = gs.BatchScorer(seed=1).scores(c, [POD, POD.replace(name="big", cpu_milli=20000)])
    # LoadAware without a measured load: used = allocated; the pod adds cpu 2000*85% = 1700, memory
    # 4000*70% = 2800, GPU 500. Node 0: (100*8300/10000 = 83, 100*7200/10000 = 72, 100*500/1000 = 50)
    # -> (83+72+50)/3 = 68; ModelAffinity neutral 50: 68*10 + 50*5 = 930.
    # Node 1: GPU 100 + 500 used -> 40: (83+72+40)/3 = 65; serves resnet50: 100. 650 + 500 = 1150.
    np.testing.assert_array_equal(m, [[930, 1150], [-1, -1]])
    assert m.dtype == np.int32 and m.shape == (2, 2)
    assert not m.flags.owndata and m.base is not None  # a view of the engine's buffer, kept alive by it
    r = gs.SeedStaticScheduler(seed=1).schedule_one(c, POD)
    assert (r.node, r.score) == (1, 1150) and r.breakdown == [("LoadAware", 65, 10), ("ModelAffinity", 100, 5)]


def test_top_k_and_assign() -> None:
    c = two_nodes()
    b = gs.BatchScorer()
    pods = [POD.replace(name=f"p{i}") for i in range(5)]
    t = b.top_k(c, pods, k=2)  # k is at most the node count (test_hardening_sim.py)
    assert sorted(t["node"][0].tolist()) == [0, 1]  # tied at 930: hashed order
    assert t["node"].shape == (5, 2) and (t["score"] == 930).all() and (t["feasible"] == 2).all()
    before = c.copy()
    a = b.assign_greedy(c, pods)
    assert c == before  # apply=False changes nothing
    # Each 1-GPU node takes two half-GPU pods; the fifth fits nowhere.
    assert a["placed"] == 4 and sorted(a["node"].tolist()) == [-1, 0, 0, 1, 1]
    assert a["gpus"][int(np.argmin(a["node"]))] is None
    a = b.assign_greedy(c, pods, apply=True)
    assert c.gpu_milli_allocated == 2000
    for i, bnd in a["bindings"]:
        assert bnd.node == a["node"][i]


def test_bad_input() -> None:
    c = two_nodes()
    with pytest.raises(gs.InvalidArgumentError, match="k"):
        gs.BatchScorer().top_k(c, [POD], k=0)
    with pytest.raises(TypeError):
        gs.BatchScorer().top_k(c, [POD], k=-1)
    with pytest.raises(gs.InvalidArgumentError, match="threads|weight"):
        gs.BatchScorer(load_aware_weight=0)
    with pytest.raises(TypeError):
        gs.BatchScorer().scores(c, ["not a pod"])  # type: ignore[list-item]
    with pytest.raises(gs.InvalidArgumentError, match="tie_break"):
        gs.SeedStaticScheduler(tie_break="random")
    with pytest.raises(gs.InvalidArgumentError, match="cache_k"):
        gs.BatchScorer().assign_greedy(c, [POD], cache_k=0)


@given(c=clusters(), pods=pod_lists(), seed=st.integers(0, 2**32))
def test_batch_scores_are_schedule_ones(c: gs.Cluster, pods: list[gs.Pod], seed: int) -> None:
    m = gs.BatchScorer(seed=seed).scores(c, pods)
    top = gs.BatchScorer(seed=seed).top_k(c, pods, k=1)
    s = gs.SeedStaticScheduler(seed=seed)
    for i, p in enumerate(pods):
        r = s.schedule_one(c, p)
        row = m[i]
        assert r.feasible == int((row >= 0).sum()) == top["feasible"][i]
        if r.scheduled:
            assert r.score == row.max() == row[r.node] == top["score"][i, 0]  # schedule_one's tie is one of the best
        else:
            assert (row == -1).all() and top["node"][i, 0] == -1
    # With the hashed tie-break schedule_one picks exactly the batch engine's best node.
    hashed = gs.SeedStaticScheduler(seed=seed, tie_break="hashed")
    assert [hashed.schedule_one(c, p).node if top["node"][i, 0] >= 0 else -1 for i, p in enumerate(pods)] == \
        top["node"][:, 0].tolist()


def test_python_scorer_next_to_the_batch_engine() -> None:
    c = two_nodes()
    calls: list[int] = []

    def emptier(f: gs.NodeFeatures, pod: gs.Pod) -> np.ndarray:
        calls.append(len(f.node))
        return f.gpu_milli_free // 10  # 0..100

    pods = [POD, POD.replace(name="big", cpu_milli=20000)]
    m = gs.BatchScorer().scores(c, pods, python_scores=[(emptier, 3, "Emptier")])
    # Node 0 and 1 as in test_scores_by_hand without the replica: 930 each; + 3 x 100 (all free).
    np.testing.assert_array_equal(m, [[1230, 1230], [-1, -1]])
    assert calls == [2]  # once per pod with feasible nodes
    with pytest.raises(gs.InvalidArgumentError, match="python_scores.E.weight"):
        gs.BatchScorer().scores(c, pods, python_scores=[(emptier, 0, "E")])
    with pytest.raises(gs.InvalidArgumentError, match="profile.score.Bad"):
        gs.BatchScorer().scores(c, pods, python_scores=[(lambda f, p: np.full(len(f.node), -1), 1, "Bad")])


@given(c=clusters(), pods=pod_lists(), seed=st.integers(0, 2**32))
def test_batch_with_a_python_scorer_scores_as_the_profile(c: gs.Cluster, pods: list[gs.Pod], seed: int) -> None:
    def least_gpu(f: gs.NodeFeatures, pod: gs.Pod) -> np.ndarray:
        return np.minimum(100, f.gpu_milli_free // 80)

    profile = gs.Profile().add_check("NodeResourcesFit").add_check("GPUCheck").add_score("LoadAware", 10) \
        .add_score("ModelAffinity", 5).add_python_score(least_gpu, 2, "LeastGpu")
    s = gs.Scheduler(profile, seed=seed)
    m = gs.BatchScorer(seed=seed).scores(c, pods, python_scores=[(least_gpu, 2, "LeastGpu")])
    for i, p in enumerate(pods):
        r = s.schedule_one(c, p)
        assert r.feasible == int((m[i] >= 0).sum())
        if r.scheduled:
            assert r.score == m[i].max() == m[i][r.node]
