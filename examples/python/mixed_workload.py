#!/usr/bin/env python3
"""The C++ example examples/mixed_workload.cpp, from Python: ResNet50 and BERT inference (prod, GPU
shares) next to training (dev, whole GPUs) on 8 x V100-32GB nodes plus T4 nodes, with the seed's
profile and a load filter, printing every decision with its reasons in the C++ program's format
(python/tests/test_cross_cpp.py compares the two outputs line by line)."""

from __future__ import annotations

import gpusched as gs


def build() -> tuple[gs.Cluster, gs.Scheduler, list[gs.Pod]]:
    cluster = gs.Cluster()
    for i in range(6):  # two NVLink islands of four V100s each
        gpus = [gs.GPU("V100M32", 32768, 0)] * 4 + [gs.GPU("V100M32", 32768, 1)] * 4
        cluster.add_node(f"v100-{i}", cpu_milli=96000, memory_mib=384 * 1024, gpus=gpus, rack=f"rack-{i // 3}")
    for i in range(2):
        cluster.add_node(f"t4-{i}", cpu_milli=32000, memory_mib=128 * 1024, gpu_count=4, gpu_model="T4",
                         gpu_mem_mib=16384, rack="rack-2")
    # Measured load: v100-0 is hot (CPU-heavy preprocessing).
    for n in range(len(cluster)):
        hot = n == 0
        cluster.set_load(n, cpu_used=0.60 if hot else 0.10, mem_used=0.40 if hot else 0.15, gpu_used=0.85 if hot else 0.05)

    profile = (
        gs.Profile()
        .add_check("GPUCheck")
        .add_check("NodeResourcesFit")
        .add_check("LoadAware")  # usage thresholds: Koordinator's defaults
        .add_score("LoadAware", 10)
        .add_score("ModelAffinity", 5, {"interferingPairs": [["resnet50", "bert"]]})  # gpu-let: contended L2/DRAM
    )
    sched = gs.Scheduler(profile, seed=42, explain_scores=True)

    pods = [
        gs.Pod(f"resnet50-infer-{i}", cpu_milli=4000, memory_mib=16384, num_gpu=1, gpu_milli=250, gpu_mem_mib=6144,
               model_type="resnet50", priority=9, qos="Guaranteed", tier="prod")
        for i in range(6)
    ]
    pods += [
        gs.Pod(f"bert-infer-{i}", cpu_milli=8000, memory_mib=32768, num_gpu=1, gpu_milli=500, gpu_mem_mib=12288,
               model_type="bert", priority=9, qos="Guaranteed", tier="prod")
        for i in range(4)
    ]
    pods += [
        gs.Pod(f"train-{i}", cpu_milli=48000, memory_mib=196608, num_gpu=8, gpu_mem_mib=30000, model_type="gpt-train",
               priority=2, qos="BestEffort", tier="dev")
        for i in range(5)
    ]
    pods.append(gs.Pod("t4-only-infer", cpu_milli=2000, memory_mib=8192, num_gpu=1, gpu_milli=500, gpu_mem_mib=8192,
                       allowed_models=["T4"], model_type="resnet50", priority=7, tier="prod"))
    pods.append(gs.Pod("huge-gpu-mem", cpu_milli=2000, memory_mib=8192, num_gpu=1, gpu_mem_mib=40960, priority=5))
    return cluster, sched, pods


def main() -> None:
    cluster, sched, pods = build()
    placed = 0
    for p in pods:
        r = sched.place_one(cluster, p)
        if r:
            placed += 1
            gpus = ",".join(str(g) for g in r.gpus)
            print(f"{p.name:<18} -> {r.node_name:<8} GPUs [{gpus}]  {r.explanation}")
        else:
            print(f"{p.name:<18} -> unschedulable: {r.explanation}")
    print(f"\n{placed}/{len(pods)} pods placed")


if __name__ == "__main__":
    main()
