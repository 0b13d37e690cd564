"""python/tools/offline_bound.py: the arrival sequence is gpusched-sim's, and the LP bound is a true
upper bound with the hand-worked value on small instances (docs/quality.md, "Offline bound")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "python" / "tools" / "offline_bound.py"
sys.path.insert(0, str(TOOL.parent))
scipy = pytest.importorskip("scipy", reason="the bound needs scipy (HiGHS); scripts/install-deps.sh installs it")
import offline_bound as ob  # noqa: E402

SIM = Path(os.environ.get("GPUSCHED_BUILD_DIR", REPO / "build" / "main")) / "tools" / "gpusched-sim"


def test_splitmix_seeding_matches_vigna_reference() -> None:
    # splitmix64.c from state 0: 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, ... (tests/sim/test_splitmix.cpp)
    r = ob.Rng(0)
    assert r.s[:3] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_xoshiro_step_by_hand() -> None:
    # state {1, 2, 3, 4}: rotl(2 * 5, 7) * 9 = 1280 * 9 = 11520; after the update s[1] = (2 ^ (3 ^ 1)) = 0,
    # so the second output is rotl(0, 7) * 9 = 0.
    r = ob.Rng(0)
    r.s = [1, 2, 3, 4]
    assert r.next() == 11520
    assert r.next() == 0


def shape(cpu: int, g: int, m: int, models: tuple[str, ...] = ()) -> ob.Shape:
    return ob.Shape(cpu, 1024, g, m, models)


def node(cpu: int, g: int, model: str = "A") -> ob.NodeType:
    return ob.NodeType(cpu, 1 << 20, g, model)


def bound(shapes: dict[ob.Shape, int], nodes: dict[ob.NodeType, int]) -> float:
    return ob.solve(Counter(shapes), Counter(nodes), integer=False, time_limit=10)["bound_milli"]


def test_shares_above_half_take_a_gpu_each() -> None:
    # Three 600-milli pods on one node with 2 GPUs: 600 + 600 > 1000, so one per GPU: 1200 at most
    # (the GPU milli alone would allow 1800 of the 2000).
    assert bound({shape(1000, 1, 600): 3}, {node(100000, 2): 1}) == pytest.approx(1200)


def test_share_patterns_fill_a_gpu() -> None:
    # 300, 300, 400 fill one GPU exactly: 1000. Maximal patterns of {300, 400}: 3x300, 2x300+400, 2x400.
    assert ob.share_patterns([300, 400]) == [(3, 0), (2, 1), (0, 2)]
    assert bound({shape(1000, 1, 300): 2, shape(1000, 1, 400): 2}, {node(100000, 1): 1}) == pytest.approx(1000)


def test_cpu_limits_whole_gpu_pods() -> None:
    # 8 CPUs, 2 GPUs; two whole-GPU pods of 6 CPUs each: one fits (1000). The LP lets 8/6 of a pod in
    # (1333.3); with integral x (--integer) the bound is the 1000 itself.
    shapes, nodes = {shape(6000, 1, 1000): 2}, {node(8000, 2): 1}
    assert bound(shapes, nodes) == pytest.approx(8000 / 6000 * 1000)
    assert ob.solve(Counter(shapes), Counter(nodes), integer=True, time_limit=10)["bound_milli"] == pytest.approx(1000)


def test_model_constraint_and_gpu_count() -> None:
    # A pod allowed only on model B, or asking 4 GPUs of a 2-GPU node, fits nowhere: 0.
    assert bound({shape(1000, 1, 1000, ("B",)): 1, shape(1000, 4, 1000): 1}, {node(64000, 2, "A"): 3}) == pytest.approx(0)
    # Allowed on A: the pod fits.
    assert bound({shape(1000, 1, 1000, ("A", "B")): 1}, {node(64000, 2, "A"): 1}) == pytest.approx(1000)


def test_bound_is_at_least_every_feasible_packing() -> None:
    # Random small instances: a feasible placement (pack) never exceeds the bound, nor the bound capacity.
    import random

    rnd = random.Random(5)
    for _ in range(20):
        nodes = [node(rnd.choice([8000, 16000, 32000]), rnd.choice([1, 2, 4]), rnd.choice("AB")) for _ in range(6)]
        shapes = Counter(shape(rnd.choice([1000, 4000, 8000]), g, m, rnd.choice([(), ("A",), ("B",)]))
                         for g, m in (rnd.choice([(1, 250), (1, 300), (1, 550), (1, 1000), (2, 1000)]) for _ in range(30)))
        res = ob.solve(shapes, Counter(nodes), integer=False, time_limit=10)
        packed = ob.pack(shapes, nodes, res["plan"])["packed_milli"]
        assert packed <= res["bound_milli"] + 1e-6
        assert res["bound_milli"] <= 1000 * sum(t.gpu for t in nodes) + 1e-6


def test_tune_clones_until_the_next_would_pass_the_target() -> None:
    # Two whole-GPU pods (2000 milli) against 4 GPUs at tune 1: clones until 4000, the next would pass.
    pods = [("a", shape(1000, 1, 1000)), ("b", shape(1000, 1, 1000))]
    order = ob.arrivals(pods, 4000, 1.0, seed=42)
    assert len(order) == 4
    assert sorted(order[:2]) == [0, 1]  # the trace's pods first (shuffled), then the clones


@pytest.mark.skipif(not SIM.exists(), reason=f"gpusched-sim not built at {SIM} (cmake --build build/main --target gpusched-sim)")
def test_arrivals_match_gpusched_sim(tmp_path: Path) -> None:
    out = tmp_path / "o.json"
    subprocess.run([str(SIM), "--policy", "Random", "--seeds", "42,47", "--jobs", "1", "-q", "--output-json", str(out)],
                   check=True, cwd=REPO)
    runs = {r["seed"]: r for r in json.loads(out.read_text())["runs"]}
    pods = ob.read_pods(REPO / "data/openb/openb_pod_list_default.csv")
    nodes = ob.read_nodes(REPO / "data/openb/openb_node_list_gpu_node.csv")
    cap = 1000 * sum(t.gpu for t in nodes)
    for seed in (42, 47):
        order = ob.arrivals(pods, cap, 1.3, seed)
        assert len(order) == runs[seed]["arrived_pods"]
        arrived = sum(pods[i][1].gpu_total for i in order)
        assert 100.0 * arrived / cap == pytest.approx(runs[seed]["final_arrived_pct"], abs=1e-9)


@pytest.mark.parametrize("args,flag", [
    (["--tune", "0"], "--tune"), (["--seeds", "x"], "--seeds"), (["--time-limit", "-1"], "--time-limit"),
])
def test_bad_arguments_name_the_flag(args: list[str], flag: str) -> None:
    res = subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, check=False)
    assert res.returncode == 2
    assert res.stderr.startswith(f"offline_bound: {flag}")


def test_bad_pod_file_names_flag_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "p.csv"
    bad.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1024,one,1000\n")
    res = subprocess.run([sys.executable, str(TOOL), "--pods", str(bad), "--seeds", "1"], capture_output=True,
                         text=True, check=False)
    assert res.returncode == 2
    assert f"--pods: {bad}:2: column 'num_gpu'" in res.stderr


def test_place_cpu_only_bounds_the_placements_that_serve_them() -> None:
    # 8 CPUs, 2 GPUs; a CPU-only pod of 6 CPUs and two whole-GPU pods of 3 CPUs. Any subset: both GPU pods
    # (6 CPUs), 2000. Every CPU-only pod placed: 2 CPUs left, 2/3 of a GPU pod in the LP (666.7), none in
    # integers.
    shapes = Counter({shape(6000, 0, 0): 1, shape(3000, 1, 1000): 2})
    nodes = Counter({node(8000, 2): 1})
    assert ob.solve(shapes, nodes, False, 10)["bound_milli"] == pytest.approx(2000)
    assert ob.solve(shapes, nodes, False, 10, place_cpu_only=True)["bound_milli"] == pytest.approx(2000 / 3)
    assert ob.solve(shapes, nodes, True, 10, place_cpu_only=True)["bound_milli"] == pytest.approx(0)
    assert ob.pack(shapes, list(nodes.elements()), {}, place_cpu_only=True)["packed_milli"] == 0
    with pytest.raises(ob.BoundError, match="--place-cpu-only"):
        ob.solve(Counter({shape(9000, 0, 0): 1}), nodes, False, 10, place_cpu_only=True)
    with pytest.raises(ob.BoundError, match="--place-cpu-only"):
        ob.solve(Counter({shape(5000, 0, 0): 2}), nodes, False, 10, place_cpu_only=True)


def test_min_share_placed_bounds_the_placements_that_admit_those_pods() -> None:
    # One node of 2 GPUs; two 810-milli pods and two whole-GPU pods arrived. Any subset: both whole pods,
    # 2000 (the 810s left out). With one 810 admitted, its GPU holds 810 (nothing else fits the 190 left):
    # 810 + 1000 = 1810. With both: 1620. A floor above what arrived names it.
    shapes = Counter({shape(1000, 1, 810): 2, shape(1000, 1, 1000): 2})
    nodes = Counter({node(100000, 2): 1})

    def floor(k: dict[int, float]) -> float:
        return ob.solve(shapes, nodes, integer=False, time_limit=10, min_share_placed=k)["bound_milli"]

    assert floor({}) == pytest.approx(2000)
    assert floor({810: 1}) == pytest.approx(1810)
    assert floor({810: 2}) == pytest.approx(1620)
    with pytest.raises(ob.BoundError, match="3 pods of 810 milli asked, 2 arrived"):
        floor({810: 3})


def test_min_share_placed_counts_cpu_only_pods_under_size_zero() -> None:
    # 8 CPUs, 2 GPUs; a CPU-only pod of 6 CPUs and two whole-GPU pods of 3 CPUs (the test above): admitting
    # the CPU-only pod leaves 2 CPUs, 2/3 of a GPU pod in the LP.
    shapes = Counter({shape(6000, 0, 0): 1, shape(3000, 1, 1000): 2})
    nodes = Counter({node(8000, 2): 1})
    assert ob.solve(shapes, nodes, False, 10, min_share_placed={0: 1})["bound_milli"] == pytest.approx(2000 / 3)
    assert ob.solve(shapes, nodes, False, 10, min_share_placed={0: 0})["bound_milli"] == pytest.approx(2000)


def test_min_share_placed_beyond_what_fits_names_the_floor() -> None:
    # An 810-milli pod that fits no node (model B only) cannot be admitted.
    shapes = Counter({shape(1000, 1, 810, ("B",)): 1})
    with pytest.raises(ob.BoundError, match=r"min_share_placed: no placement admits \{810: 1\}"):
        ob.solve(shapes, Counter({node(64000, 2, "A"): 1}), False, 10, min_share_placed={810: 1})
