"""BatchScorer(profile=...): the kube-default, most-allocated and FGD profiles. Scores worked out by hand
(Kubernetes' noderesources/least_allocated.go, most_allocated.go, balanced_allocation.go; FGD's
fgd_score.go and frag.go as quoted in include/gpusched/scoring/), and the batch top-1 equal to a
Scheduler loaded from the equivalent KubeSchedulerConfiguration with tie_break="hashed"."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpusched as gs
from test_properties import clusters, pod_lists

HEAD = """apiVersion: kubescheduler.config.k8s.io/v1beta2
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: s
  plugins:
    preFilter:
      enabled:
      - name: GPUCheck
    score:
      enabled:
"""
# Kubernetes' default score plugins (experiment.hpp kube_default_wiring); NodeResourcesFit filters by default.
KUBE_DEFAULT = HEAD + """      - name: NodeResourcesFit
        weight: 1
      - name: NodeResourcesBalancedAllocation
        weight: 1
  pluginConfig:
  - name: NodeResourcesBalancedAllocation
    args:
      formula: BalanceAfter
"""  # BatchScorer's "kube-default" keeps the serving experiment's BalanceAfter formula (register_batch.cpp)
MOST_ALLOCATED = HEAD + """      - name: NodeResourcesFit
        weight: 1
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"""
# FGD with one typical shape (TYPICAL below: 1000 milli-CPU, one GPU at 500 milli, share 1).
FGD = HEAD + """      - name: FGDScore
        weight: 1
  pluginConfig:
  - name: FGDScore
    args:
      typicalPods:
      - {cpuMilli: 1000, gpuMilli: 500, numGpu: 1, share: 1}
"""
CONFIGS = {"kube-default": KUBE_DEFAULT, "most-allocated": MOST_ALLOCATED, "fgd": FGD}


def cpu_nodes() -> gs.Cluster:
    # node-0: 10000 milli / 10000 MiB, node-1: 20000 / 20000; no GPUs.
    return gs.Cluster.from_arrays(cpu_milli=[10000, 20000], memory_mib=[10000, 20000])


POD = gs.Pod("p", cpu_milli=1000, memory_mib=1000)
TOO_BIG = gs.Pod("big", cpu_milli=30000)


def test_profile_names() -> None:
    assert gs.BatchScorer.profiles() == ["seed", "kube-default", "most-allocated", "fgd"]
    assert gs.BatchScorer().profile == "seed"
    assert gs.BatchScorer(profile="kube-default", seed=4).profile == "kube-default"


def test_kube_default_by_hand() -> None:
    m = gs.BatchScorer(profile="kube-default").scores(cpu_nodes(), [POD, TOO_BIG])
    # LeastAllocated: node-0 (10000-1000)*100/10000 = 90, node-1 19000*100/20000 = 95. BalancedAllocation:
    # CPU and memory fractions equal on both nodes, standard deviation 0 -> 100. Totals 190, 195.
    np.testing.assert_array_equal(m, [[190, 195], [-1, -1]])
    assert m.dtype == np.int32 and not m.flags.owndata and m.base is not None  # zero-copy
    t = gs.BatchScorer(profile="kube-default").top_k(cpu_nodes(), [POD, TOO_BIG], k=2)
    assert t["node"].tolist() == [[1, 0], [-1, -1]] and t["score"].tolist() == [[195, 190], [-1, -1]]


def test_most_allocated_by_hand_and_packs() -> None:
    c = cpu_nodes()
    b = gs.BatchScorer(profile="most-allocated")
    # MostAllocated: node-0 1000*100/10000 = 10, node-1 1000*100/20000 = 5.
    np.testing.assert_array_equal(b.scores(c, [POD]), [[10, 5]])
    # Bin packing: nine 1000/1000 pods fill node-0 first (each makes it fuller than node-1 would be).
    pods = [POD.replace(name=f"p{i}") for i in range(9)]
    a = b.assign_greedy(c, pods, one_per_round=True)
    assert a["placed"] == 9 and a["node"].tolist() == [0] * 9


def test_python_scores_next_to_another_profile() -> None:
    def seven(f: gs.NodeFeatures, pod: gs.Pod) -> np.ndarray:
        return np.full(len(f.node), 7)

    m = gs.BatchScorer(profile="most-allocated").scores(cpu_nodes(), [POD, TOO_BIG], python_scores=[(seven, 2, "Seven")])
    np.testing.assert_array_equal(m, [[10 + 14, 5 + 14], [-1, -1]])


@pytest.mark.parametrize("name", sorted(CONFIGS))
@given(c=clusters(), pods=pod_lists(), seed=st.integers(0, 2**32))
def test_batch_top1_is_the_schedulers(name: str, c: gs.Cluster, pods: list[gs.Pod], seed: int) -> None:
    s = gs.Scheduler(gs.load_config(CONFIGS[name]).profile("s"), seed=seed, tie_break="hashed")
    b = (gs.BatchScorer(profile=name, seed=seed, typical_pods=TYPICAL) if name == "fgd"
         else gs.BatchScorer(profile=name, seed=seed))
    m = b.scores(c, pods)
    top = b.top_k(c, pods, k=1)
    for i, p in enumerate(pods):
        r = s.schedule_one(c, p)
        assert r.feasible == int((m[i] >= 0).sum()) == top["feasible"][i]
        assert (r.node if r.scheduled else -1) == top["node"][i, 0]
        if r.scheduled:
            assert r.score == m[i].max() == top["score"][i, 0]


# FGD on one shape, (1000 milli-CPU, one GPU at 500 milli), probability 1. A node's fragmentation F_n
# (frag.go NodeGpuShareFragAmount) counts free share on devices below 500 when the shape fits, and all
# free share when it does not; the score is int(100 * sigmoid((F_before - F_after) / 1000)).
TYPICAL = [gs.Pod(f"t{i}", cpu_milli=1000, num_gpu=1, gpu_milli=500) for i in range(3)]


def t4_nodes(gpus: int, count: int) -> gs.Cluster:
    return gs.Cluster.from_arrays(cpu_milli=[10000] * count, memory_mib=[10000] * count, gpu_count=[gpus] * count,
                                  gpu_model="T4", gpu_mem_mib=16384)


def use(c: gs.Cluster, node: int, gpu: int, milli: int) -> None:
    p = gs.Pod(f"used{node}-{gpu}", num_gpu=1, gpu_milli=milli)
    c.reserve(p, gs.Binding(p, node, gpus=[gpu]))


def test_fgd_by_hand() -> None:
    c = t4_nodes(1, 2)
    use(c, 1, 0, 300)  # node 1's GPU has 700 free
    pod = gs.Pod("q", cpu_milli=1000, memory_mib=1000, num_gpu=1, gpu_milli=500)
    b = gs.BatchScorer(profile="fgd", typical_pods=TYPICAL)
    m = b.scores(c, [pod, TOO_BIG])
    # Node 0: free 1000 -> 500, the shape still fits, F 0 -> 0: int(100 * sigmoid(0)) = 50.
    # Node 1: free 700 -> 200, the shape no longer fits, F 0 -> 200: int(100 / (1 + e^0.2)) = int(45.02) = 45.
    np.testing.assert_array_equal(m, [[50, 45], [-1, -1]])
    assert not m.flags.owndata
    t = b.top_k(c, [pod], k=2)
    assert t["node"].tolist() == [[0, 1]] and t["score"].tolist() == [[50, 45]]


def test_fgd_chooses_its_own_device() -> None:
    c = t4_nodes(2, 1)
    use(c, 0, 1, 300)  # free [1000, 700]
    pod = gs.Pod("q", num_gpu=1, gpu_milli=300)
    # Device 0: free [700, 700], the shape fits both, F 0 -> 0: 50. Device 1: free [1000, 400], the
    # 400 left is below the shape's 500: F 0 -> 400, int(100 / (1 + e^0.4)) = int(40.13) = 40.
    # FGD takes device 0; the best-fit rule of the other profiles takes the fuller device 1.
    assert gs.BatchScorer(profile="most-allocated").assign_greedy(c, [pod])["gpus"] == [[1]]
    b = gs.BatchScorer(profile="fgd", typical_pods=TYPICAL)
    np.testing.assert_array_equal(b.scores(c, [pod]), [[50]])
    a = b.assign_greedy(c, [pod], apply=True)
    assert a["placed"] == 1 and a["gpus"] == [[0]]
    assert [g.milli_free for g in c.gpus(0)] == [700, 700]


def test_bad_profiles() -> None:
    with pytest.raises(gs.InvalidArgumentError,
                       match=r"^profile: unknown profile 'fdg'; valid: seed, kube-default, most-allocated, fgd$"):
        gs.BatchScorer(profile="fdg")
    with pytest.raises(gs.InvalidArgumentError, match="^typical_pods: profile='fgd' needs a non-empty list"):
        gs.BatchScorer(profile="fgd")
    with pytest.raises(gs.InvalidArgumentError, match="^typical_pods: profile='fgd' needs"):
        gs.BatchScorer(profile="fgd", typical_pods=[])
    with pytest.raises(gs.InvalidArgumentError, match="^typical_pods: applies to profile='fgd' only, not 'seed'"):
        gs.BatchScorer(typical_pods=TYPICAL)
    with pytest.raises(gs.InvalidArgumentError, match="^load_aware_weight: applies to profile='seed' only, not 'fgd'"):
        gs.BatchScorer(profile="fgd", typical_pods=TYPICAL, load_aware_weight=3)
    with pytest.raises(gs.InvalidArgumentError, match="^interfering_pairs: applies to profile='seed' only"):
        gs.BatchScorer(profile="kube-default", interfering_pairs=[("a", "b")])
    with pytest.raises(TypeError):
        gs.BatchScorer(profile="fgd", typical_pods=["not a pod"])  # type: ignore[list-item]
