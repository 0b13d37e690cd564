"""Bad input raises a clear exception naming the field (TypeError for a wrong dtype or type,
InvalidArgumentError -- a ValueError -- for a wrong shape or value) and changes nothing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpusched as gs

GOOD: dict[str, Any] = {"cpu_milli": np.array([1000, 2000]), "memory_mib": np.array([1024, 2048]),
                        "gpu_count": np.array([1, 2]), "gpu_model": "T4", "gpu_mem_mib": 16384}


def with_(**changes: Any) -> dict[str, Any]:
    return {**GOOD, **changes}


@pytest.mark.parametrize(
    ("changes", "error", "field"),
    [
        ({"cpu_milli": np.array([1000.0, 2000.0])}, TypeError, "cpu_milli: expected integers, got dtype float64"),
        ({"memory_mib": np.array(["a", "b"])}, TypeError, "memory_mib: expected integers"),
        ({"gpu_count": np.array([True, False])}, TypeError, "gpu_count: expected integers, got dtype bool"),
        ({"cpu_milli": np.array([[1000, 2000]])}, gs.InvalidArgumentError, "cpu_milli: expected a 1-D array"),
        ({"cpu_milli": np.array([1000, 2000, 3000])}, gs.InvalidArgumentError, "memory_mib: has 2 values but cpu_milli has 3"),
        ({"memory_mib": np.array([1024, -1])}, gs.InvalidArgumentError, r"memory_mib\[1\]: must be within 0..1125899906842624, got -1"),
        ({"gpu_count": np.array([1, 65])}, gs.InvalidArgumentError, r"gpu_count\[1\]: must be within 0..64"),
        ({"gpu_count": np.array([1, 2], dtype=np.uint64), "cpu_milli": np.array([2**63, 1], dtype=np.uint64)},
         gs.InvalidArgumentError, r"cpu_milli\[0\]"),
        ({"gpu_model": ["T4"]}, gs.InvalidArgumentError, "gpu_model: expected 2 values"),
        ({"gpu_model": ["T4", 3]}, TypeError, r"gpu_model\[1\]: expected a string"),
        ({"gpu_model": ["T4", ""]}, gs.InvalidArgumentError, "node 'node-2'.gpu_model: must not be empty"),
        ({"gpu_model": "x" * 1025}, gs.InvalidArgumentError, "node.gpus.model: .* is 1025 characters long"),
        ({"names": ["a", ""]}, gs.InvalidArgumentError, "node.name: must not be empty"),
        ({"gpu_mem_mib": 1.5}, TypeError, "gpu_mem_mib: expected integers"),
    ],
)
def test_cluster_columns(changes: dict[str, Any], error: type[Exception], field: str) -> None:
    c = gs.Cluster.from_arrays(cpu_milli=[1], memory_mib=[1])
    before = c.copy()
    with pytest.raises(error, match=field):
        c.add_nodes(**with_(**changes))
    assert c == before  # all or none: no node of the failed call was added


def test_invalid_argument_error_carries_the_field() -> None:
    with pytest.raises(gs.InvalidArgumentError) as e:
        gs.Cluster.from_arrays(**with_(memory_mib=np.array([1024, -5])))
    assert isinstance(e.value, ValueError)
    assert e.value.field == "memory_mib[1]"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("column", "value", "error", "match"),
    [
        ("cpu_used", [0.5, np.nan], gs.InvalidArgumentError, r"cpu_used\[1\]: must be a finite number, got nan"),
        ("mem_used", [0.5, np.inf], gs.InvalidArgumentError, r"mem_used\[1\]: must be a finite number"),
        ("gpu_used", [0.5, 1.5], gs.InvalidArgumentError, r"gpu_used\[1\]: must be within 0..1, got 1.5"),
        ("cpu_used", [0.5], gs.InvalidArgumentError, "cpu_used: expected 2 values"),
        ("cpu_used", ["x", "y"], TypeError, "cpu_used: expected numbers"),
    ],
)
def test_loads(column: str, value: Any, error: type[Exception], match: str) -> None:
    c = gs.Cluster.from_arrays(**GOOD)
    c.set_load(0, cpu_used=0.25, mem_used=0.25, gpu_used=0.25)
    before = c.copy()
    loads: dict[str, Any] = {"cpu_used": [0.1, 0.1], "mem_used": [0.1, 0.1], "gpu_used": [0.1, 0.1], column: value}
    with pytest.raises(error, match=match):
        c.set_loads(**loads)
    assert c == before
    with pytest.raises(gs.InvalidArgumentError, match="node 'node-0'.metrics.cpu_used"):
        c.set_load(0, cpu_used=float("nan"), mem_used=0.0, gpu_used=0.0)
    with pytest.raises(TypeError, match="has_load: expected booleans"):
        c.set_loads(cpu_used=0.1, mem_used=0.1, gpu_used=0.1, has_load=[1, 0])
    assert c == before


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"cpu_milli": -1}, gs.InvalidArgumentError, "pod 'p'.cpu_milli"),
        ({"gpu_milli": 500}, gs.InvalidArgumentError, "pod 'p'.gpu_milli: a pod with num_gpu == 0"),
        ({"num_gpu": 1, "gpu_milli": 0}, gs.InvalidArgumentError, "pod 'p'.gpu_milli: must be within 1..1000"),
        ({"num_gpu": 65}, gs.InvalidArgumentError, "pod 'p'.num_gpu"),
        ({"priority": 2**31}, gs.InvalidArgumentError, r"pod.priority: must be a Kubernetes priority within -2147483648..2147483647 \(int32\), got 2147483648"),
        ({"submit_time": float("nan")}, gs.InvalidArgumentError, "pod 'p'.submit_time"),
        ({"gang_min_members": 2}, gs.InvalidArgumentError, "pod 'p'.gang_min_members: set without a gang name"),
        ({"model_type": "x" * 1025}, gs.InvalidArgumentError, r"pod.model_type: 'x{60}\.\.\.' is 1025 characters long"),
        ({"qos": "Gold"}, gs.InvalidArgumentError, "pod.qos: must be Guaranteed, Burstable or BestEffort"),
        ({"tier": "staging"}, gs.InvalidArgumentError, "pod.tier: must be prod or dev"),
        ({"cpu_milli": 1.5}, TypeError, "cpu_milli=1.5"),
        ({"cpu_milli": "4"}, TypeError, "incompatible constructor arguments"),
    ],
)
def test_pods(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        gs.Pod("p", **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"cpu_milli": np.array([1.0, 2.0])}, TypeError, "cpu_milli: expected integers"),
        ({"cpu_milli": [1, 2], "priority": [0, 2**31]}, gs.InvalidArgumentError, r"priority\[1\]: must be within -2147483648..2147483647"),
        ({"cpu_milli": [1, 2], "num_gpu": [1, 1], "gpu_milli": [500, 1001]}, gs.InvalidArgumentError, r"gpu_milli\[1\]"),
        ({"cpu_milli": [1, 2], "num_gpu": [0, 1], "gpu_milli": [500, 500]}, gs.InvalidArgumentError,
         "pod 'pod-0'.gpu_milli"),
        ({"cpu_milli": [1, 2], "memory_mib": [1, 2, 3]}, gs.InvalidArgumentError, "memory_mib: has 3 values"),
        ({"cpu_milli": 5}, gs.InvalidArgumentError, "at least one argument must be an array"),
        ({"cpu_milli": [1, 2], "qos": ["LS", "XX"]}, gs.InvalidArgumentError, "pod.qos"),
    ],
)
def test_pods_from_arrays(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        gs.pods_from_arrays(**kwargs)


def test_pods_from_arrays_builds_what_it_is_given() -> None:
    pods = gs.pods_from_arrays(cpu_milli=np.array([1000, 2000], dtype=np.int32), memory_mib=512,
                               num_gpu=np.array([0, 2]), qos=["BE", "LS"], model_type="bert", name_prefix="j")
    assert [p.name for p in pods] == ["j0", "j1"]
    assert [p.gpu_milli for p in pods] == [0, 1000]
    assert [p.qos for p in pods] == [gs.QoS.BEST_EFFORT, gs.QoS.GUARANTEED]
    assert pods[1] == gs.Pod("j1", cpu_milli=2000, memory_mib=512, num_gpu=2, model_type="bert", qos="LS")


def test_cluster_calls_with_bad_node_indices() -> None:
    c = gs.Cluster.from_arrays(**GOOD)
    with pytest.raises(IndexError):
        c.gpus(2)
    with pytest.raises(gs.InvalidArgumentError, match="node index 5 out of range"):
        c.set_load(5, cpu_used=0.1, mem_used=0.1, gpu_used=0.1)
    p = gs.Pod("p", num_gpu=1)
    with pytest.raises(gs.InvalidArgumentError, match="binding.node"):
        c.reserve(p, gs.Binding(p, 9, [0]))
    with pytest.raises(gs.InvalidArgumentError, match="names a GPU index the node does not have"):
        c.reserve(p, gs.Binding(p, 0, [3]))
    with pytest.raises(TypeError):
        c.gpus(-1)
