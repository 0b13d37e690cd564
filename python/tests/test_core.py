"""Pods, GPUs, bindings and clusters: construction, conversion, reserve/release and features."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import gpusched as gs


def small_cluster() -> gs.Cluster:
    return gs.Cluster.from_arrays(
        cpu_milli=np.array([32000, 64000, 16000]),
        memory_mib=np.array([65536, 131072, 32768]),
        gpu_count=np.array([4, 8, 0]),
        gpu_model=["T4", "V100M32", ""],
        gpu_mem_mib=np.array([16384, 32768, 0]),
    )


class TestPod:
    def test_whole_gpus_by_default(self) -> None:
        assert gs.Pod("p", num_gpu=2).gpu_milli == 1000
        assert gs.Pod("p").gpu_milli == 0
        assert gs.Pod("p", num_gpu=1, gpu_milli=250).gpu_milli_total == 250
        assert gs.Pod("p", num_gpu=4).gpu_milli_total == 4000

    def test_qos_and_tier_from_names_and_openb_codes(self) -> None:
        assert gs.Pod("p", qos="LS").qos == gs.QoS.GUARANTEED
        assert gs.Pod("p", qos="BE").qos == gs.QoS.BEST_EFFORT
        assert gs.Pod("p", qos="bestEffort").qos == gs.QoS.BEST_EFFORT
        assert gs.Pod("p", qos=gs.QoS.GUARANTEED).qos == gs.QoS.GUARANTEED
        assert gs.Pod("p").qos == gs.QoS.BURSTABLE
        assert gs.Pod("p", tier="prod").tier == gs.Tier.PROD
        assert gs.Pod("p").tier == gs.Tier.DEV

    def test_dict_and_pickle_round_trip(self) -> None:
        p = gs.Pod("infer", cpu_milli=4000, memory_mib=16384, num_gpu=1, gpu_milli=250, gpu_mem_mib=6144,
                   allowed_models=["T4"], model_type="resnet50", priority=9, qos="Guaranteed", tier="prod",
                   tenant="team-a", submit_time=12.5)
        assert gs.Pod.from_dict(p.to_dict()) == p
        assert pickle.loads(pickle.dumps(p)) == p
        assert p.to_dict()["allowed_models"] == ["T4"]

    def test_replace_changes_a_copy_and_validates(self) -> None:
        p = gs.Pod("p", num_gpu=1, gpu_milli=500)
        q = p.replace(gpu_milli=250)
        assert (p.gpu_milli, q.gpu_milli) == (500, 250)
        with pytest.raises(gs.InvalidArgumentError) as e:
            p.replace(gpu_milli=2000)
        assert e.value.field == "pod 'p'.gpu_milli"  # type: ignore[attr-defined]

    def test_from_dict_names_unknown_fields(self) -> None:
        with pytest.raises(TypeError, match="unknown field 'gpus'"):
            gs.Pod.from_dict({"name": "p", "gpus": 1})
        with pytest.raises(TypeError, match="'name' is required"):
            gs.Pod.from_dict({"cpu_milli": 1})

    def test_immutable(self) -> None:
        p = gs.Pod("p")
        with pytest.raises(AttributeError):
            p.cpu_milli = 5  # type: ignore[misc]


class TestCluster:
    def test_from_arrays(self) -> None:
        c = small_cluster()
        assert len(c) == 3
        assert c.node_names == ["node-0", "node-1", "node-2"]
        assert c.node_index("node-1") == 1
        assert c.resources(1) == {"cpu_capacity": 64000, "cpu_allocated": 0, "memory_capacity": 131072,
                                  "memory_allocated": 0, "gpu_count": 8}
        assert [g.model for g in c.gpus(0)] == ["T4"] * 4
        assert c.gpus(2) == []
        assert c.gpu_milli_total == 12000
        with pytest.raises(KeyError):
            c.node_index("nope")

    def test_add_node_with_heterogeneous_gpus(self) -> None:
        c = gs.Cluster()
        i = c.add_node("mix", cpu_milli=1000, memory_mib=1024,
                       gpus=[gs.GPU("A100", 81920, 0), gs.GPU("A100", 81920, 1)], rack="r1")
        assert i == 0
        assert [g.nvlink_island for g in c.gpus(0)] == [0, 1]
        assert c.gpus(0)[0].mem_free_mib == 81920
        with pytest.raises(gs.InvalidArgumentError, match="either gpus or gpu_count"):
            c.add_node("x", cpu_milli=1, memory_mib=1, gpu_count=1, gpu_model="T4", gpus=[gs.GPU("T4")])
        assert len(c) == 1

    def test_reserve_release_and_features(self) -> None:
        c = small_cluster()
        before = c.copy()
        p = gs.Pod("p", cpu_milli=2000, memory_mib=4096, num_gpu=1, gpu_milli=250, gpu_mem_mib=4096, model_type="bert")
        b = gs.Binding(p, 0, [2])
        c.reserve(p, b)
        f = c.features()
        assert f.cpu_allocated.tolist() == [2000, 0, 0]
        assert f.memory_allocated.tolist() == [4096, 0, 0]
        assert f.gpu_milli_free.tolist() == [3750, 8000, 0]
        assert f.gpu_full_free.tolist() == [3, 8, 0]
        assert f.gpu_mem_free_mib.tolist() == [4 * 16384 - 4096, 8 * 32768, 0]
        assert f.gpu_milli_free_per_gpu.shape == (3, 8)
        assert f.gpu_milli_free_per_gpu[0].tolist() == [1000, 1000, 750, 1000, -1, -1, -1, -1]
        assert f.gpu_milli_free_per_gpu[2].tolist() == [-1] * 8
        assert c.model_replicas(0) == {"bert": 1}
        assert c.gpu_milli_allocated == 250
        assert c.allocation_pct() == pytest.approx(100 * 250 / 12000)
        assert c != before
        c.release(p, b)
        assert c == before
        assert c.model_replicas(0) == {}

    def test_features_of_chosen_nodes_in_order(self) -> None:
        f = small_cluster().features([2, 0])
        assert f.node.tolist() == [2, 0]
        assert f.gpu_count.tolist() == [0, 4]
        assert len(f) == 2
        with pytest.raises(IndexError):
            small_cluster().features([3])

    def test_reserve_refuses_a_gpu_without_the_share_and_changes_nothing(self) -> None:
        c = small_cluster()
        p = gs.Pod("p", num_gpu=1, gpu_milli=600)
        c.reserve(p, gs.Binding(p, 0, [1]))
        before = c.copy()
        with pytest.raises(gs.InvalidArgumentError) as e:
            c.reserve(p, gs.Binding(p, 0, [1]))  # 400 free < 600
        assert e.value.field == "binding.gpus"  # type: ignore[attr-defined]
        assert c == before
        with pytest.raises(gs.InvalidArgumentError, match="listed twice"):
            gs.Binding(p, 0, [1, 1])

    def test_loads(self) -> None:
        c = small_cluster()
        c.set_load(0, cpu_used=0.5, mem_used=0.25, gpu_used=0.75)
        load = c.load(0)
        assert load is not None and load["cpu_used"] == 0.5 and load["gpu_used"] == 0.75
        p = gs.Pod("p", cpu_milli=1000)
        c.reserve(p, gs.Binding(p, 0))
        assert c.load(0)["assigned_cpu_since"] == 1000  # type: ignore[index]
        c.clear_load(0)
        assert c.load(0) is None
        c.set_loads(cpu_used=[0.1, 0.2, 0.3], mem_used=0.5, gpu_used=0.0, has_load=np.array([True, False, True]))
        assert c.load(1) is None
        assert c.load(2)["cpu_used"] == 0.3  # type: ignore[index]
        f = c.features()
        assert f.has_load.tolist() == [True, False, True]
        assert f.cpu_used.tolist() == [0.1, 0.0, 0.3]

    def test_copy_is_independent(self) -> None:
        c = small_cluster()
        d = copy.deepcopy(c)
        assert isinstance(d, gs.Cluster) and d == c
        p = gs.Pod("p", cpu_milli=5)
        d.reserve(p, gs.Binding(p, 1))
        assert d != c
