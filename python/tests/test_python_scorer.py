"""Scoring plugins written in Python: what they receive, how their scores are read, and that a
numpy port of a C++ plugin gives the C++ plugin's decisions."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpusched as gs

I64 = npt.NDArray[np.int64]


def least_allocated(nodes: gs.NodeFeatures, pod: gs.Pod) -> I64:
    """Kubernetes' LeastAllocated over CPU and memory, weights 1:1 (least_allocated.go), in numpy."""
    def least(requested: I64, capacity: I64) -> I64:
        safe = np.maximum(capacity, 1)
        return np.where((capacity == 0) | (requested > capacity), 0, (capacity - requested) * 100 // safe)

    cpu = least(nodes.cpu_allocated + pod.cpu_milli, nodes.cpu_capacity)
    mem = least(nodes.memory_allocated + pod.memory_mib, nodes.memory_capacity)
    weights = (nodes.cpu_capacity > 0).astype(np.int64) + (nodes.memory_capacity > 0)
    total = cpu * (nodes.cpu_capacity > 0) + mem * (nodes.memory_capacity > 0)
    return np.where(weights > 0, total // np.maximum(weights, 1), 0)


def three_nodes() -> gs.Cluster:
    return gs.Cluster.from_arrays(cpu_milli=[8000, 8000, 8000], memory_mib=[8000] * 3, gpu_count=[2, 0, 2],
                                  gpu_model="T4", gpu_mem_mib=16384)


def test_the_scorer_sees_the_feasible_nodes_and_the_pod() -> None:
    seen: list[Any] = []

    def spy(nodes: gs.NodeFeatures, pod: gs.Pod) -> I64:
        seen.append((nodes.node.tolist(), nodes.gpu_milli_free.tolist(), pod.name))
        return np.array([10, 90])

    prof = gs.Profile().add_check("GPUCheck").add_python_score(spy, 2, "Spy")
    r = gs.Scheduler(prof).schedule_one(three_nodes(), gs.Pod("g", num_gpu=1))
    assert seen == [([0, 2], [2000, 2000], "g")]  # node 1 has no GPU: filtered out before scoring
    assert (r.node, r.score) == (2, 180)
    assert r.breakdown == [("Spy", 90, 2)]


def test_float_scores_are_truncated() -> None:
    prof = gs.Profile().add_python_score(lambda n, p: np.array([99.9, 12.5, 0.0]), 1, "F")
    r = gs.Scheduler(prof).schedule_one(three_nodes(), gs.Pod("p"))
    assert (r.node, r.score) == (0, 99)


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (np.array([1, 2]), "must return 3 scores"),
        (np.ones((3, 1)), "must return 3 scores"),
        (np.array([1.0, np.nan, 3.0]), "returned nan for node 1"),
        (np.array([1, 101, 3]), "returned 101 for node 1"),
        (np.array([-1, 0, 0]), "returned -1 for node 0"),
        (np.array(["a", "b", "c"]), "integer or float scores"),
        (None, "must return"),
    ],
)
def test_bad_scores_raise_and_change_nothing(result: Any, message: str) -> None:
    c = three_nodes()
    before = c.copy()
    prof = gs.Profile().add_score("NodeResourcesFit").add_python_score(lambda n, p: result, 1, "Bad")
    s = gs.Scheduler(prof)
    with pytest.raises(gs.InvalidArgumentError, match=message) as e:
        s.place_many(c, [gs.Pod("a", cpu_milli=100), gs.Pod("b", cpu_milli=100)])
    assert e.value.field == "profile.score.Bad"  # type: ignore[attr-defined]
    assert c == before


def test_a_python_exception_propagates_and_place_many_rolls_back() -> None:
    calls = [0]

    def fails_on_third(nodes: gs.NodeFeatures, pod: gs.Pod) -> I64:
        calls[0] += 1
        if calls[0] == 3:
            raise ZeroDivisionError("scorer bug")
        return np.zeros(len(nodes), dtype=np.int64)

    c = three_nodes()
    before = c.copy()
    s = gs.Scheduler(gs.Profile().add_python_score(fails_on_third))
    with pytest.raises(ZeroDivisionError, match="scorer bug"):
        s.place_many(c, [gs.Pod(f"p{i}", cpu_milli=1000) for i in range(5)])
    assert c == before  # the two pods placed before the failure were released


def test_touching_the_cluster_from_inside_a_scorer_is_refused() -> None:
    c = three_nodes()
    before = c.copy()

    def meddles(nodes: gs.NodeFeatures, pod: gs.Pod) -> I64:
        c.features()
        return np.zeros(len(nodes), dtype=np.int64)

    with pytest.raises(RuntimeError, match="in use by a running gpusched call"):
        gs.Scheduler(gs.Profile().add_python_score(meddles)).place_many(c, [gs.Pod("p")])
    assert c == before
    assert len(c) == 3  # usable again afterwards


def test_least_allocated_by_hand() -> None:
    # cpu (8000-1000)*100/8000 = 87, memory (8000-2000)*100/8000 = 75 -> (87+75)//2 = 81
    f = three_nodes().features([0])
    assert least_allocated(f, gs.Pod("p", cpu_milli=1000, memory_mib=2000)).tolist() == [81]


nodes_st = st.lists(
    st.tuples(st.integers(1000, 64000), st.integers(1024, 262144), st.integers(0, 8)), min_size=1, max_size=12
)
pods_st = st.lists(
    st.tuples(st.integers(0, 16000), st.integers(0, 65536), st.integers(0, 2), st.sampled_from([100, 250, 500, 1000])),
    min_size=1, max_size=25,
)


@given(nodes=nodes_st, pods=pods_st, seed=st.integers(0, 2**32))
def test_a_numpy_port_decides_exactly_as_the_cpp_plugin(
    nodes: list[tuple[int, int, int]], pods: list[tuple[int, int, int, int]], seed: int
) -> None:
    cpu, mem, gpus = (np.array(col, dtype=np.int64) for col in zip(*nodes))
    cluster_cpp = gs.Cluster.from_arrays(cpu_milli=cpu, memory_mib=mem, gpu_count=gpus, gpu_model="V100M32",
                                         gpu_mem_mib=32768)
    cluster_py = cluster_cpp.copy()
    ps = [gs.Pod(f"p{i}", cpu_milli=c, memory_mib=m, num_gpu=n, gpu_milli=(g if n else None))
          for i, (c, m, n, g) in enumerate(pods)]
    cpp = gs.Scheduler(gs.Profile().add_check("NodeResourcesFit").add_check("GPUCheck").add_score("NodeResourcesFit", 2),
                       seed=seed)
    py = gs.Scheduler(gs.Profile().add_check("NodeResourcesFit").add_check("GPUCheck")
                      .add_python_score(least_allocated, 2, "LeastAllocated"), seed=seed)
    a = cpp.place_many(cluster_cpp, ps)
    b = py.place_many(cluster_py, ps)
    assert [(r.node, r.gpus, r.score, r.explanation) for r in a] == [(r.node, r.gpus, r.score, r.explanation) for r in b]
    assert cluster_cpp == cluster_py
