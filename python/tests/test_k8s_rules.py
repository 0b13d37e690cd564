"""Kubernetes' own rules (issue 13): names of any length (GPU feature discovery's
nvidia.com/gpu.product values, model names) and int32 priorities."""

from __future__ import annotations

import numpy as np

import gpusched as gs

A100 = "NVIDIA-A100-SXM4-80GB"  # nvidia.com/gpu.product, 21 characters
LLAMA = "meta-llama-3-70b-instruct"


def test_long_gpu_model_and_model_type() -> None:
    c = gs.Cluster.from_arrays(cpu_milli=np.array([64000, 64000]), memory_mib=np.array([262144, 262144]),
                               gpu_count=np.array([2, 2]), gpu_model=[A100, "NVIDIA-H100-80GB-HBM3"],
                               gpu_mem_mib=81920)
    assert c.gpus(0)[0].model == A100
    assert c.gpus(1)[0].model == "NVIDIA-H100-80GB-HBM3"
    p = gs.Pod("p", cpu_milli=1000, memory_mib=1024, num_gpu=1, allowed_models=[A100], model_type=LLAMA)
    assert p.allowed_models == [A100] and p.model_type == LLAMA
    # Only node-0 has the allowed model; the model type is counted under its full name.
    s = gs.Scheduler(gs.Profile().add_check("NodeResourcesFit").add_check("GPUCheck").add_score("NodeResourcesFit", 1))
    r = s.place_one(c, p)
    assert r.scheduled and r.node == 0
    assert c.model_replicas(0) == {LLAMA: 1}
    assert gs.GPU(A100).model == A100


def test_int32_priorities() -> None:
    crit = gs.Pod("crit", priority=2_000_000_000)  # system-cluster-critical
    low = gs.Pod("low", priority=-5)
    seed = gs.Pod("seed", priority=7)
    assert crit.priority == 2_000_000_000
    q = gs.SchedulingQueue()
    for p in (low, seed, crit):
        q.push(p, 0.0)
    order = []
    while (u := q.pop(0.0)) is not None:
        order.append(u["pods"][0].name)
        q.scheduled(u["ticket"], 0.0)
    assert order == ["crit", "seed", "low"]
    pods = gs.pods_from_arrays(cpu_milli=[1, 1], priority=np.array([2_000_000_000, -(2**31)]))
    assert [p.priority for p in pods] == [2_000_000_000, -(2**31)]
