"""The openb trace replay: tiny traces worked out by hand (paper protocol and dynamic mode), the
default openb trace against the FGD paper's published figure, and bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusched as gs
from gpusched import plot
from conftest import REPO

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16000,1,T4\nn2,8000,16000,1,T4\n"
HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"


def write(tmp: Path, nodes: str, pods: str) -> gs.sim.Trace:
    (tmp / "nodes.csv").write_text(nodes)
    (tmp / "pods.csv").write_text(pods)
    return gs.sim.Trace.load(str(tmp / "nodes.csv"), str(tmp / "pods.csv"))


@pytest.mark.parametrize("policy", ["Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD", "gpusched",
                                    "gpusched-fillaware", "gpusched-binding"])
def test_paper_replay_by_hand(tmp_path: Path, policy: str) -> None:
    # Two 1-GPU nodes (capacity 2000 milli); pods a, b (whole GPUs), c (half): a and b fill the
    # GPUs, c fits nowhere. Arrived 1000, 2000, 2500 milli = 50, 100, 125 %; allocated 50, 100, 100 %.
    t = write(tmp_path, NODES, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
              "a,1000,1000,1,1000\nb,1000,1000,1,1000\nc,1000,1000,1,500\n")
    assert (t.num_nodes, t.num_pods, t.gpu_milli_capacity, t.has_times) == (2, 3, 2000, False)
    r = gs.sim.run_paper(t, policy, seed=7, tune=0, shuffle=False)
    assert (r["arrived_pods"], r["failed_pods"]) == (3, 1)
    assert r["failed_by_shape"] == {"cpu=1000m gpu=1x500": 1}
    assert r["final_arrived_pct"] == 125.0 and r["final_allocation_pct"] == 100.0
    np.testing.assert_array_equal(r["event_arrived_pct"], [50.0, 100.0, 125.0])
    np.testing.assert_array_equal(r["event_allocation_pct"], [50.0, 100.0, 100.0])
    # merge_alloc_discrete: buckets 0..125; an empty bucket takes the events within +-1 of it.
    np.testing.assert_array_equal(r["arrived_pct"], [49, 50, 51, 99, 100, 101, 124, 125])
    np.testing.assert_array_equal(r["allocation_pct"], [50, 50, 50, 100, 100, 100, 100, 100])
    assert r["arrived_pct"].dtype == np.int64 and r["allocation_pct"].dtype == np.float64
    assert r["policy"] == policy and r["seed"] == 7
    assert "event_arrived_pct" not in gs.sim.run_paper(t, policy, tune=0, record_events=False)


def test_dynamic_replay_by_hand(tmp_path: Path) -> None:
    # One 1-GPU node. a runs 0..100; b arrives at 10, waits until a leaves at 100 (delay 90), runs 190 s.
    t = write(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16000,1,T4\n",
              HEADER + "a,1000,1000,1,1000,,LS,Succeeded,0,100,0\nb,1000,1000,1,1000,,BE,Succeeded,10,200,10\n")
    r = gs.sim.run_dynamic(t, "BestFit", sample_period_s=50)
    assert (r["pods"], r["placed_pods"], r["waited_pods"], r["withdrawn_pods"]) == (2, 2, 1, 0)
    assert (r["start_s"], r["end_s"], r["last_event_s"], r["max_pending_pods"]) == (0, 10, 290, 1)
    assert [r[f"delay_{q}_s"] for q in ("mean", "p50", "p95", "p99", "max")] == [45.0, 0.0, 0.0, 0.0, 90.0]
    assert r["time_weighted_allocation_pct"] == 100.0  # [0, 10]: a holds the only GPU
    # Samples every 50 s from 0, the state before that second's events: b waits over 10..100.
    np.testing.assert_array_equal(r["time_s"], [0, 50, 100, 150, 200, 250])
    np.testing.assert_array_equal(r["pending_pods"], [0, 1, 1, 0, 0, 0])
    np.testing.assert_array_equal(r["allocation_pct"], [0, 100, 100, 100, 100, 100])
    # The unallocated GPU is the wholly free GPU at 0 (before a); b asks for one whole GPU while it waits.
    np.testing.assert_array_equal(r["free_in_whole_gpus_pct"], [100, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(r["free_in_partly_used_gpus_pct"], [0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(r["waiting_one_gpu_pct"], [0, 100, 100, 0, 0, 0])
    np.testing.assert_array_equal(r["waiting_multi_gpu_pct"], [0, 0, 0, 0, 0, 0])


def test_dynamic_replay_with_preemption_by_hand(tmp_path: Path) -> None:
    # One GPU: lo (BE -> priority 5000) runs from 0 for 100 s; hi (LS -> 9000) arrives at 10 and
    # fits nowhere. Without preemption it is withdrawn at its deletion time 30; with it, hi preempts
    # lo, runs 10-30, and lo (waiting again) is placed at 30: 3 placements, the last 30 s after lo's arrival.
    t = write(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16000,1,T4\n",
              HEADER + "lo,1000,1000,1,1000,,BE,Running,0,100,0\nhi,1000,1000,1,1000,,LS,Running,10,30,10\n")
    tp = t.with_priorities_by_qos()
    off = gs.sim.run_dynamic(tp, "FGD", seed=1)
    assert (off["preemptions"], off["preempted_pods"], off["withdrawn_pods"], off["placed_pods"]) == (0, 0, 1, 1)
    assert off["pods_by_priority"] == {5000: 1, 9000: 1} and off["withdrawn_by_priority"] == {5000: 0, 9000: 1}
    on = gs.sim.run_dynamic(tp, "FGD", seed=1, preemption=True)
    assert (on["preemptions"], on["preempted_pods"], on["withdrawn_pods"], on["placed_pods"]) == (1, 1, 0, 3)
    assert on["delay_max_s"] == 30.0 and on["preempted_by_shape"] == {"cpu=1000m gpu=1x1000": 1}
    assert on["window_pending_pods"][-1] == 1  # just after hi's arrival at 10, lo waits
    # The window is [0, 10], which lo's first run, ended by the preemption, fills: all of it lost.
    assert (off["time_weighted_preempted_allocation_pct"], on["time_weighted_preempted_allocation_pct"]) == (0, 100)
    # The trace as read: every pod priority 0, and an equal priority is never preempted.
    same = gs.sim.run_dynamic(t, "FGD", seed=1, preemption=True)
    assert (same["preemptions"], same["withdrawn_pods"]) == (0, 1)


def test_dynamic_replay_queue_order_by_hand(tmp_path: Path) -> None:
    # One GPU: x (LS -> 9000) holds it 0-10; b (BE -> 5000) arrives at 1 (runs 100 s, waits until 101), c (LS)
    # at 2 (runs 48 s, waits until 50). At 10, fifo gives the GPU to b and c is withdrawn at 50; priority
    # (Kubernetes' PrioritySort) gives it to c (10-58), then to b at 58, 57 s after its arrival.
    t = write(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16000,1,T4\n",
              HEADER + "x,1000,1000,1,1000,,LS,Running,0,10,0\nb,1000,1000,1,1000,,BE,Running,1,101,1\n"
              "c,1000,1000,1,1000,,LS,Running,2,50,2\n").with_priorities_by_qos()
    fifo = gs.sim.run_dynamic(t, "FGD", seed=1)
    assert (fifo["placed_pods"], fifo["withdrawn_pods"]) == (2, 1)
    prio = gs.sim.run_dynamic(t, "FGD", seed=1, queue="priority")
    assert (prio["placed_pods"], prio["withdrawn_pods"], prio["delay_max_s"]) == (3, 0, 57.0)
    # With preemption, fifo places b at 10 and c preempts it at once; priority preempts nothing.
    assert gs.sim.run_dynamic(t, "FGD", seed=1, preemption=True)["preemptions"] == 1
    assert gs.sim.run_dynamic(t, "FGD", seed=1, preemption=True, queue="priority")["preemptions"] == 0
    assert gs.sim.replay(t, "FGD", [1], mode="dynamic", queue="priority")["queue"] == "priority"
    with pytest.raises(gs.InvalidArgumentError, match="must be 'fifo' or 'priority', got 'lifo'") as e:
        gs.sim.run_dynamic(t, "FGD", queue="lifo")
    assert e.value.field == "queue"  # type: ignore[attr-defined]


def test_openb_fgd_matches_the_paper() -> None:
    t = gs.sim.load_openb(REPO / "data" / "openb")
    assert (t.num_nodes, t.num_pods) == (1213, 8152)
    r = gs.sim.run_paper(t, "FGD", seed=42)
    # Weng et al. ATC'23 Fig. 9(a): FGD allocates 95.39% (mean of seeds 42-51) at 130% arrived.
    assert abs(r["allocation_pct_at_tune"] - 95.39) < 0.5
    assert r["arrived_pct"][-1] == 130


def test_replay_runs_policies_by_seeds_for_the_plot(tmp_path: Path) -> None:
    t = write(tmp_path, NODES, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1000,1,1000\n")
    data = gs.sim.replay(t, ["BestFit", "FGD"], seeds=[1, 2, 3], tune=0, progress=False, workers=2)
    assert [(r["policy"], r["seed"]) for r in data["runs"]] == [
        ("BestFit", 1), ("BestFit", 2), ("BestFit", 3), ("FGD", 1), ("FGD", 2), ("FGD", 3)]
    assert gs.sim.final_allocation(data, at="final_allocation_pct") == {"BestFit": [50.0] * 3, "FGD": [50.0] * 3}
    curves = plot.allocation_curves(data)
    assert [c.policy for c in curves] == ["BestFit", "FGD"]


def test_policies_listed_with_published_figures() -> None:
    ps = {p["name"]: p["paper_allocation_pct"] for p in gs.sim.sim_policies()}
    assert ps["FGD"] == 95.39 and ps["gpusched"] is None
    assert gs.sim.policy_names() == list(ps)


def test_bad_input(tmp_path: Path) -> None:
    t = write(tmp_path, NODES, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1000,1,1000\n")
    with pytest.raises(gs.InvalidArgumentError, match="unknown policy 'Tetris'") as e:
        gs.sim.run_paper(t, "Tetris")
    assert e.value.field == "policy"  # type: ignore[attr-defined]
    with pytest.raises(gs.InvalidArgumentError, match="tune"):
        gs.sim.run_paper(t, "FGD", tune=float("nan"))
    with pytest.raises(TypeError):
        gs.sim.run_paper(t, "FGD", seed=-1)
    with pytest.raises(gs.InvalidArgumentError, match="creation_time"):
        gs.sim.run_dynamic(t, "FGD")  # a 5-column pod file has no times
    with pytest.raises(gs.InvalidArgumentError, match="seeds\\[1\\]"):
        gs.sim.replay(t, "FGD", seeds=[1, -2], progress=False)
    with pytest.raises(gs.InvalidArgumentError, match="mode"):
        gs.sim.replay(t, "FGD", mode="fast", progress=False)
    (tmp_path / "bad.csv").write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,-5,1,1000\n")
    with pytest.raises(gs.ConfigFileError, match="memory_mib") as f:
        gs.sim.Trace.load(str(tmp_path / "nodes.csv"), str(tmp_path / "bad.csv"))
    assert f.value.line == 2  # type: ignore[attr-defined]
    with pytest.raises(FileNotFoundError):
        gs.sim.load_openb(tmp_path)


def test_columns(tmp_path: Path) -> None:
    t = write(tmp_path, NODES, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nb,1000,1000,1,500\na,2000,3000,2,1000\n")
    p = t.pod_columns()
    assert p["name"] == ["a", "b"]  # name order, as the authors sort
    np.testing.assert_array_equal(p["gpu_milli"], [1000, 500])
    n = t.node_columns()
    assert n["name"] == ["n1", "n2"] and n["gpu_model"] == ["T4", "T4"]
    np.testing.assert_array_equal(n["gpu_count"], [1, 1])


def test_python_policy_in_the_replay(tmp_path: Path) -> None:
    # Node n1 already half used by 'a' (0.5 GPU); 'b' wants 0.5 GPU. A numpy best-fit (least free
    # share after placement) puts it on n1; a worst-fit on n2. Both then leave c (1 GPU) one node or none.
    t = write(tmp_path, NODES, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1000,1,500\nb,1000,1000,1,500\n"
              "c,1000,1000,1,1000\n")
    seen: list[int] = []

    def best_fit(f: gs.NodeFeatures, pod: gs.Pod) -> np.ndarray:
        seen.append(len(f.node))
        return 100 - (f.gpu_milli_free - pod.gpu_milli_total) // 10

    def worst_fit(f: gs.NodeFeatures, pod: gs.Pod) -> np.ndarray:
        return (f.gpu_milli_free - pod.gpu_milli_total) // 10

    packed = gs.sim.run_paper(t, best_fit, tune=0, shuffle=False)
    spread = gs.sim.run_paper(t, worst_fit, tune=0, shuffle=False)
    assert packed["policy"] == "best_fit" and packed["failed_pods"] == 0 and packed["final_allocation_pct"] == 100.0
    assert spread["failed_pods"] == 1 and spread["failed_by_shape"] == {"cpu=1000m gpu=1x1000": 1}
    assert seen == [2, 2, 1]  # called once per pod with the feasible nodes only
    data = gs.sim.replay(t, [best_fit, "BestFit"], seeds=[1], tune=0, progress=False)
    assert [r["policy"] for r in data["runs"]] == ["best_fit", "BestFit"]


def test_python_policy_errors(tmp_path: Path) -> None:
    t = write(tmp_path, NODES, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1000,1,500\n")

    def boom(f: gs.NodeFeatures, pod: gs.Pod) -> np.ndarray:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        gs.sim.run_paper(t, boom)
    with pytest.raises(gs.InvalidArgumentError, match="one per node") as e:
        gs.sim.run_paper(t, lambda f, p: np.zeros(5))
    assert e.value.field == "profile.score.<lambda>"  # type: ignore[attr-defined]
    with pytest.raises(gs.InvalidArgumentError, match="0..100"):
        gs.sim.run_dynamic(write(tmp_path, NODES, HEADER + "a,1000,1000,1,1000,,LS,Running,0,10,0\n"),
                           lambda f, p: np.full(len(f.node), 101))
    with pytest.raises(TypeError, match="policy"):
        gs.sim.run_paper(t, 3)  # type: ignore[call-overload]


def test_policy_names_in_any_case_and_former_names() -> None:
    # gpusched-refill became gpusched (docs/adr/0017-quality-method.md, "Amendment 3"): still accepted.
    assert gs.sim.canonical_policy("GPUSCHED") == "gpusched"
    assert gs.sim.canonical_policy("gpusched-refill") == "gpusched"
    assert gs.sim.canonical_policy("bestfit") == "BestFit"
    former = {p["name"]: p["former_names"] for p in gs.sim.sim_policies()}
    assert former["gpusched"] == ["gpusched-refill"] and former["FGD"] == []
    with pytest.raises(gs.InvalidArgumentError, match="policy: unknown policy 'gpusched-'"):
        gs.sim.canonical_policy("gpusched-")


def test_replay_takes_a_former_name(tmp_path: Path) -> None:
    t = write(tmp_path, NODES, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1000,1,1000\nc,1000,1000,1,500\n")
    data = gs.sim.replay(t, ["gpusched-refill"], seeds=[1], tune=0, progress=False, workers=1)
    assert [r["policy"] for r in data["runs"]] == ["gpusched"]
    assert data["runs"][0]["final_allocation_pct"] == 75.0  # 1000 + 500 of 2000: both fit
