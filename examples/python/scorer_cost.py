#!/usr/bin/env python3
"""What a scoring plugin written in Python costs next to the same plugin in C++.

Times schedule_one (decide only, so every pod sees the same cluster) per pod on clusters of
increasing size, for four profiles that differ only in their scorer:

  cpp        GPUCheck + NodeResourcesFit (LeastAllocated, C++)
  python     GPUCheck + the same LeastAllocated written in numpy (add_python_score)
  python-nop GPUCheck + a Python scorer returning a constant array: the fixed cost of the call
             (feature arrays built in C++, GIL taken, result checked) without numpy arithmetic
  features   cluster.features() alone, for all nodes: the cost of building the arrays

Prints a table (median of --repeats runs, microseconds per pod) and draws it to a PNG.

    python3 examples/python/scorer_cost.py --out docs/img/python_scorer_cost.png
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

import gpusched as gs

I64 = npt.NDArray[np.int64]


def least_allocated(nodes: gs.NodeFeatures, pod: gs.Pod) -> I64:
    """Kubernetes' LeastAllocated over CPU and memory (least_allocated.go), vectorised."""
    def least(requested: I64, capacity: I64) -> I64:
        return np.where(requested > capacity, 0, (capacity - requested) * 100 // np.maximum(capacity, 1))

    return (least(nodes.cpu_allocated + pod.cpu_milli, nodes.cpu_capacity)
            + least(nodes.memory_allocated + pod.memory_mib, nodes.memory_capacity)) // 2


def constant(nodes: gs.NodeFeatures, pod: gs.Pod) -> I64:
    return np.full(len(nodes), 50, dtype=np.int64)


def cluster_of(n: int, rng: np.random.Generator) -> gs.Cluster:
    c = gs.Cluster.from_arrays(cpu_milli=np.full(n, 96000), memory_mib=np.full(n, 393216), gpu_count=np.full(n, 8),
                               gpu_model="V100M32", gpu_mem_mib=32768)
    for node in range(n):  # some load, so that scores differ
        p = gs.Pod("bg", cpu_milli=int(rng.integers(0, 48000)), memory_mib=int(rng.integers(0, 196608)), num_gpu=1,
                   gpu_milli=int(rng.choice([250, 500, 1000])))
        c.reserve(p, gs.Binding(p, node, [int(rng.integers(0, 8))]))
    return c


def per_pod_us(fn: Callable[[], Any], pods: int, repeats: int) -> float:
    """Median over repeats of the time per call of fn, called `pods` times (results dropped at once)."""
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(pods):
            fn()
        runs.append((time.perf_counter() - t0) / pods * 1e6)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", default="100,1000,5000,20000", help="cluster sizes, comma-separated")
    ap.add_argument("--pods", type=int, default=200, help="pods per timed run")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="python_scorer_cost.png", help="PNG to write ('' for none)")
    args = ap.parse_args()

    rng = np.random.default_rng(42)
    sizes = [int(s) for s in args.nodes.split(",")]
    pods = [gs.Pod("p", cpu_milli=4000, memory_mib=16384, num_gpu=1, gpu_milli=250)]
    profiles = {
        "cpp": gs.Scheduler(gs.Profile().add_check("GPUCheck").add_score("NodeResourcesFit", 1)),
        "python": gs.Scheduler(gs.Profile().add_check("GPUCheck").add_python_score(least_allocated, 1, "LeastAllocated")),
        "python-nop": gs.Scheduler(gs.Profile().add_check("GPUCheck").add_python_score(constant, 1, "Constant")),
    }
    table: dict[str, list[float]] = {k: [] for k in [*profiles, "features"]}
    print(f"{'nodes':>7} " + " ".join(f"{k:>11}" for k in table) + "   (microseconds per pod, median of "
          f"{args.repeats} runs of {args.pods} pods)")
    for n in sizes:
        c = cluster_of(n, rng)
        for name, s in profiles.items():
            s.schedule_one(c, pods[0])  # warm-up
            table[name].append(per_pod_us(lambda: s.schedule_one(c, pods[0]), args.pods, args.repeats))
        table["features"].append(per_pod_us(c.features, args.pods, args.repeats))
        print(f"{n:>7} " + " ".join(f"{table[k][-1]:>11.1f}" for k in table))
    print("\nPython scorer overhead per pod: " + ", ".join(
        f"{n} nodes {p - c:.0f} us (x{p / c:.1f})" for n, p, c in zip(sizes, table["python"], table["cpp"])))

    if args.out:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6.4, 4.2), layout="constrained")
        ax = fig.add_subplot()
        styles = {"cpp": "o-", "python": "s-", "python-nop": "^--", "features": "x:"}
        labels = {"cpp": "C++ LeastAllocated", "python": "numpy LeastAllocated (add_python_score)",
                  "python-nop": "Python scorer returning a constant", "features": "cluster.features() alone"}
        for k, v in table.items():
            ax.plot(sizes, v, styles[k], label=labels[k])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("nodes (all feasible)")
        ax.set_ylabel("schedule_one, microseconds per pod")
        ax.set_title("Cost of a scoring plugin written in Python")
        ax.grid(True, which="both", linewidth=0.4, alpha=0.5)
        ax.legend(fontsize="small")
        fig.savefig(args.out, dpi=130)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
