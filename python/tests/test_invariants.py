"""Invariants at the library's boundary (issue 15, reproducer 5 and 6, from Python): a refused
operation raises InvalidArgumentError naming the field and leaves the cluster equal to before."""

from __future__ import annotations

import numpy as np
import pytest

import gpusched as gs


def one_node(cpu_milli: int = 96000, gpus: int = 2) -> gs.Cluster:
    c = gs.Cluster()
    c.add_node("n0", cpu_milli=cpu_milli, memory_mib=65536, gpu_count=gpus, gpu_model="V100M32" if gpus else "",
               gpu_mem_mib=32768 if gpus else 0)
    return c


def field(e: pytest.ExceptionInfo[gs.InvalidArgumentError]) -> str:
    return e.value.field  # type: ignore[attr-defined,no-any-return]


def test_release_of_a_never_reserved_pod_is_refused() -> None:
    # Issue 15: this drove CPU to -2000, and a 100000m pod then landed on the 96000m node.
    c = one_node(gpus=0)
    before = c.copy()
    ghost = gs.Pod("ghost", cpu_milli=2000)
    with pytest.raises(gs.InvalidArgumentError) as e:
        c.release(ghost, gs.Binding(ghost, 0))
    assert field(e) == "binding.cpu_milli"
    assert c == before
    r = gs.SeedStaticScheduler(seed=1).place_one(c, gs.Pod("big", cpu_milli=100000))
    assert not r.scheduled
    assert c.resources(0)["cpu_allocated"] == 0


def test_cpu_beyond_2_pow_50_is_refused() -> None:
    # Issue 15: INT64_MAX twice overflowed. A pod is bounded by 2^50, and so is a node's allocation.
    with pytest.raises(gs.InvalidArgumentError) as e:
        gs.Pod("p", cpu_milli=2**63 - 1)
    assert field(e) == "pod 'p'.cpu_milli"
    c = one_node(gpus=0)
    p = gs.Pod("p", cpu_milli=2**50)
    c.reserve(p, gs.Binding(p, 0))
    after_one = c.copy()
    with pytest.raises(gs.InvalidArgumentError) as e:
        c.reserve(p, gs.Binding(p, 0))
    assert field(e) == "binding.cpu_milli"
    assert c == after_one


def test_gpu_memory_beyond_the_device_is_documented_and_given_back_exactly() -> None:
    # Issue 15: 40000 MiB on a 32768 MiB GPU left -7232 MiB free. Documented behaviour (docs/concepts.md,
    # "Invariants at the boundary"): without a GPU memory ceiling, GPU memory is the preflight's
    # business, as CPU and memory are; the C++ in_memory_cluster::set_gpu_memory_ceiling(1000)
    # refuses it. The release gives back exactly that much, and no more.
    c = one_node()
    before = c.copy()
    p = gs.Pod("p", num_gpu=1, gpu_milli=500, gpu_mem_mib=40000)
    c.reserve(p, gs.Binding(p, 0, [0]))
    assert c.gpus(0)[0].mem_free_mib == 32768 - 40000
    c.release(p, gs.Binding(p, 0, [0]))
    assert c == before
    with pytest.raises(gs.InvalidArgumentError) as e:
        c.release(p, gs.Binding(p, 0, [0]))  # a second time: more than a whole GPU, more than 32768 MiB free
    assert field(e) == "binding.gpus"
    assert c == before


def test_duplicate_node_names_are_refused() -> None:
    c = one_node()
    before = c.copy()
    with pytest.raises(gs.InvalidArgumentError) as e:
        c.add_node("n0", cpu_milli=1000, memory_mib=1024)
    assert field(e) == "node 'n0'.name"
    assert c == before
    with pytest.raises(gs.InvalidArgumentError, match="also names\\[0\\]") as e:
        gs.Cluster.from_arrays(cpu_milli=np.array([1000, 2000]), memory_mib=np.array([1024, 2048]), names=["a", "a"])
    assert field(e) == "names[1]"
    # All or none: a name already in the cluster adds none of the columns.
    with pytest.raises(gs.InvalidArgumentError) as e:
        c.add_nodes(cpu_milli=np.array([1000, 2000]), memory_mib=np.array([1024, 2048]), names=["fresh", "n0"])
    assert field(e) == "names[1]"
    assert c == before
    assert c.node_index("n0") == 0


def test_the_same_pod_bound_twice_is_refused() -> None:
    # gs.Cluster does not know pods by name; BoundCluster does and refuses the second binding.
    b = gs.BoundCluster(one_node())
    p = gs.Pod("p", cpu_milli=1000, num_gpu=1)
    b.bind(p, gs.Binding(p, 0, [0]))
    before = b.copy()
    with pytest.raises(gs.InvalidArgumentError) as e:
        b.bind(p, gs.Binding(p, 0, [1]))
    assert field(e) == "pod 'p'.name"
    assert b == before
    assert b.bound_count == 1


def test_transaction_reserving_a_temporary_pod_rolls_back_exactly() -> None:
    c = one_node()
    before = c.copy()
    with c.transaction() as tx:
        tx.reserve(gs.Pod("temp", cpu_milli=1000, num_gpu=1, model_type="bert"),
                   gs.Binding(gs.Pod("temp", cpu_milli=1000, num_gpu=1), 0, [0]))
        assert c.model_replicas(0) == {"bert": 1}
        tx.rollback()
    assert c == before


def test_rollback_after_the_host_released_reports_and_does_not_crash() -> None:
    # Issue 15: this threw inside a noexcept rollback and terminated the process.
    c = one_node()
    before = c.copy()
    a = gs.Pod("a", cpu_milli=1000, num_gpu=1, gpu_milli=500)
    b = gs.Pod("b", cpu_milli=2000)
    tx = c.transaction()
    tx.reserve(a, gs.Binding(a, 0, [0]))
    tx.reserve(b, gs.Binding(b, 0))
    c.release(a, gs.Binding(a, 0, [0]))  # the host, under the transaction
    with pytest.raises(RuntimeError, match="1 of 2 changes could not be undone.*pod 'a'"):
        tx.rollback()
    assert not tx.open
    assert c == before  # b undone by the transaction, a by the host
