"""Issue 15 (hardening), the Python side of the simulator's share: inputs that used to loop until
MemoryError (run_paper tuning up pods without GPU demand, top_k with a huge k) now raise a clear
InvalidArgumentError at once; degenerate traces and bad trace files are refused."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import gpusched as gs

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,1,T4\n"
PODS5 = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"


def load(tmp: Path, nodes: str, pods: str) -> gs.sim.Trace:
    (tmp / "nodes.csv").write_bytes(nodes.encode())
    (tmp / "pods.csv").write_bytes(pods.encode())
    return gs.sim.Trace.load(str(tmp / "nodes.csv"), str(tmp / "pods.csv"))


def test_run_paper_cpu_only_pods_is_refused_at_once(tmp_path: Path) -> None:
    # One GPU node, two CPU-only pods: tuning up to 1.3 x 1000 milli can never reach the target.
    t = load(tmp_path, NODES, PODS5 + "a,1000,1000,0,0\nb,1000,1000,0,0\n")
    start = time.monotonic()
    with pytest.raises(gs.InvalidArgumentError, match="no pod of the trace requests a GPU") as e:
        gs.sim.run_paper(t, "FGD")
    assert time.monotonic() - start < 1.0
    assert e.value.field == "paper_options.tune"  # type: ignore[attr-defined]
    # Untuned, the same trace replays as it is: two pods, both placed, no GPU arrived.
    r = gs.sim.run_paper(t, "FGD", tune=0)
    assert (r["arrived_pods"], r["failed_pods"], r["final_arrived_pct"]) == (2, 0, 0.0)


def test_run_paper_almost_no_gpu_demand_is_refused(tmp_path: Path) -> None:
    # 64 GPUs, tune 100: 6,400,000 milli from pods averaging 0.25 milli takes ~25.6 million arrivals.
    nodes = "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,64,T4\n"
    t = load(tmp_path, nodes, PODS5 + "a,1,1,0,0\nb,1,1,0,0\nc,1,1,0,0\ng,1,1,1,1\n")
    with pytest.raises(gs.InvalidArgumentError, match="more than the limit of 16777216"):
        gs.sim.run_paper(t, "FGD", tune=100)


def test_degenerate_traces_are_refused(tmp_path: Path) -> None:
    no_pods = load(tmp_path, NODES, PODS5)
    with pytest.raises(gs.InvalidArgumentError, match="the pod list is empty"):
        gs.sim.run_paper(no_pods, "FGD")
    no_gpus = load(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,0,\n", PODS5 + "a,1,1,0,0\n")
    with pytest.raises(gs.InvalidArgumentError, match="no node has a GPU"):
        gs.sim.run_paper(no_gpus, "FGD", tune=0)


def test_trace_files_odd_bytes(tmp_path: Path) -> None:
    # A byte order mark and CR-only line ends are read; a NUL byte and a repeated node name are not.
    t = load(tmp_path, "\ufeff" + NODES.replace("\n", "\r"), PODS5 + "g,1000,1000,1,500\n\n\n")
    assert (t.num_nodes, t.num_pods, t.gpu_milli_capacity) == (1, 1, 1000)
    with pytest.raises(gs.ConfigFileError, match=r"nodes.csv:2: column 'model': 'T\\x004' holds a control character"):
        load(tmp_path, NODES.replace("T4", "T\x004"), PODS5)
    with pytest.raises(gs.ConfigFileError, match="nodes.csv:3: column 'sn': 'n1' is already the node of line 2"):
        load(tmp_path, NODES + "n1,1,1,0,\n", PODS5)


def two_nodes() -> gs.Cluster:
    return gs.Cluster.from_arrays(cpu_milli=np.array([10000, 10000]), memory_mib=np.array([10000, 10000]),
                                  gpu_count=np.array([1, 1]), gpu_model=["T4", "T4"],
                                  gpu_mem_mib=np.array([16384] * 2))


def test_top_k_bounded_by_the_node_count() -> None:
    c = two_nodes()
    pod = gs.Pod("p", cpu_milli=1000, memory_mib=1000, num_gpu=1, gpu_milli=500)
    start = time.monotonic()
    with pytest.raises(gs.InvalidArgumentError, match=r"k: must be within 1\.\.2 \(the cluster's nodes\), got 1000000000000"):
        gs.BatchScorer().top_k(c, [pod], k=10**12)
    assert time.monotonic() - start < 1.0
    with pytest.raises(gs.InvalidArgumentError, match="got 3"):
        gs.BatchScorer().top_k(c, [pod], k=3)
    t = gs.BatchScorer().top_k(c, [pod], k=2)  # the largest k: every node, best first
    assert t["node"].shape == (1, 2) and sorted(t["node"][0].tolist()) == [0, 1]
