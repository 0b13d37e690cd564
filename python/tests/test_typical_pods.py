"""python/tools/typical_pods.py: the FGD authors' typical-pod rule on pod lists worked out by hand, the
profile it writes, d/c with its standard error, and the same replay as the simulator's own workload."""

from __future__ import annotations

import json
import math
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "python" / "tools" / "typical_pods.py"
sys.path.insert(0, str(TOOL.parent))
import typical_pods as tp  # noqa: E402
from trace_variants import HEADER, Pod, VariantError  # noqa: E402

SIM = Path(os.environ.get("GPUSCHED_BUILD_DIR", REPO / "build" / "main")) / "tools" / "gpusched-sim"


def pod(cpu: int, num_gpu: int = 0, gpu_milli: int = 0, spec: str = "") -> Pod:
    return Pod(("p", str(cpu), "1024", str(num_gpu), str(gpu_milli), spec, "LS", "Running", "0", "10", "0"))


def write_pods(path: Path, pods: list[Pod]) -> Path:
    rows = [",".join(HEADER)] + [",".join(p.row[:1]) + f"{i}," + ",".join(p.row[1:]) for i, p in enumerate(pods)]
    path.write_text("\n".join(rows) + "\n")
    return path


A, B, C, D = pod(4000, 1, 500), pod(8000, 1, 1000), pod(2000), pod(16000, 2, 1000, "V100M32")


def test_keeps_the_most_frequent_shapes_until_95_percent_of_pods() -> None:
    # 20 pods: 10 A, 6 B, 3 C, 1 D. 95 % of 20 is 19: A (10), B (16), C (19) are kept; D is not.
    pods = [A] * 10 + [B] * 6 + [C] * 3 + [D]
    kept = tp.typical(pods)
    assert [(s.cpu_milli, n) for s, n in kept] == [(4000, 10), (8000, 6), (2000, 3)]
    # At 50 %: A alone covers 10 of 20.
    assert [n for _, n in tp.typical(pods, 50.0)] == [10]
    # At 100 %: every shape.
    assert len(tp.typical(pods, 100.0)) == 4


def test_ties_go_to_the_larger_shape_key_first() -> None:
    # typical_workload::from_pods sorts by (count, cpu, gpu_milli, num_gpu, models) descending.
    kept = tp.typical([A, B, B, A], 100.0)
    assert [s.cpu_milli for s, _ in kept] == [8000, 4000]


def test_ties_on_cpu_and_gpu_go_to_the_larger_model_string() -> None:
    # Same count, CPU and GPU: the '|'-joined model strings decide, descending ("B" > "A" > "").
    kept = tp.typical([pod(1000, 1, 1000, "A"), pod(1000, 1, 1000), pod(1000, 1, 1000, "B")], 100.0)
    assert [s.key[3] for s, _ in kept] == ["B", "A", ""]


def test_gpu_models_are_split_on_bars_and_empty_entries_dropped() -> None:
    # openb.hpp ignores empty entries, so "V100M16||V100M32" and "V100M16|V100M32" are one shape.
    kept = tp.typical([pod(1000, 1, 1000, "V100M16||V100M32"), pod(1000, 1, 1000, "V100M16|V100M32")], 100.0)
    assert len(kept) == 1 and kept[0][1] == 2
    assert kept[0][0].gpu_models == ("V100M16", "V100M32")


def test_yaml_entries_name_only_what_the_shape_has() -> None:
    listed = tp.as_yaml_list(tp.typical([C, C, D], 100.0))
    assert listed == [{"cpuMilli": 2000, "share": 2},
                      {"cpuMilli": 16000, "gpuMilli": 1000, "numGpu": 2, "share": 1, "gpuModels": ["V100M32"]}]


def test_binding_ratio_and_standard_error_by_hand() -> None:
    # Cluster: 16000 milli-CPU per GPU. Pods: 2 x (8000 CPU, one whole GPU), 2 x (16000 CPU, no GPU).
    # d = 48000 / 2000 = 24 milli-CPU per milli-GPU, c = 16: d/c = 1.5.
    # Residuals cpu - d gpu: 8000 - 24000 = -16000 (twice), 16000 (twice); sample variance
    # 4 x 16000^2 / 3; se(d) = sqrt(var / 4) / mean gpu (500) = 18.475; / c = 1.1547.
    b = tp.binding(tp.typical([B, B, pod(16000), pod(16000)], 100.0), 16000.0)
    assert b.ratio == pytest.approx(1.5)
    assert b.se == pytest.approx(math.sqrt(4 * 16000**2 / 3 / 4) / 500 / 16)
    assert b.undecided  # |1.5 - 1| <= 2 x 1.155
    # 200 copies: the same ratio, se / sqrt(100) about (n - 1 changes it slightly): decided.
    many = tp.binding(tp.typical([B] * 200 + [pod(16000)] * 200, 100.0), 16000.0)
    assert many.ratio == pytest.approx(1.5) and not many.undecided


def test_standard_error_matches_the_spread_of_subsamples() -> None:
    # Independent of the formula: the spread of d/c over many random subsamples of a fixed workload is
    # what the standard error of one subsample should predict. The GPU pods ask 8 milli-CPU per milli-GPU
    # at two sizes and the CPU-only pods 2000 milli-CPU, so the residual cpu - d gpu is far smaller
    # than the spread of cpu itself: a formula that used Var(cpu) (no covariance term) would predict
    # 4.7 times the spread. 400 draws of 200 pods; the sd of an sd estimate from 400 draws is about
    # 3.5 %, so 15 % is a loose bound.
    population = [pod(4000, 1, 500)] * 450 + [pod(16000, 2, 1000)] * 300 + [pod(2000)] * 250
    rnd = random.Random(5)
    draws = [rnd.sample(population, 200) for _ in range(400)]
    ratios = [tp.binding(tp.typical(d, 100.0), 16000.0).ratio for d in draws]
    predicted = statistics.mean(tp.binding(tp.typical(d, 100.0), 16000.0).se for d in draws)
    # Sampling without replacement from 1000: the finite-population factor sqrt(1 - 200/1000).
    assert statistics.stdev(ratios) == pytest.approx(predicted * math.sqrt(1 - 200 / 1000), rel=0.15)


def test_binding_needs_gpu_demand() -> None:
    with pytest.raises(VariantError, match="no GPU"):
        tp.binding(tp.typical([C, C], 100.0), 16000.0)


PROFILE = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: gpusched
  plugins:
    score:
      enabled:
      - name: FillAwareRefill
        weight: 1
  pluginConfig:
  - name: FillAwareRefill
    args: {cpuWeight: 0.25, typicalPods: [{cpuMilli: 1, share: 1}]}
"""


def test_profile_gets_the_pods_and_keeps_other_args() -> None:
    doc, plugin = tp.with_typical_pods(yaml.safe_load(PROFILE), [{"cpuMilli": 5, "share": 2}], None, None, "p.yaml")
    assert plugin == "FillAwareRefill"
    args = doc["profiles"][0]["pluginConfig"][0]["args"]
    assert args == {"cpuWeight": 0.25, "typicalPods": [{"cpuMilli": 5, "share": 2}]}


def test_profile_errors_name_the_flag() -> None:
    two = yaml.safe_load(PROFILE)
    two["profiles"][0]["plugins"]["score"]["enabled"].append({"name": "FGDScore", "weight": 1})
    with pytest.raises(VariantError, match=r"--plugin: p.yaml's score plugins have 2 .*FillAwareRefill, FGDScore"):
        tp.with_typical_pods(two, [], None, None, "p.yaml")
    # Naming the plugin settles it; a plugin without a pluginConfig entry gets one.
    doc, _ = tp.with_typical_pods(two, [{"cpuMilli": 5, "share": 2}], "FGDScore", None, "p.yaml")
    assert doc["profiles"][0]["pluginConfig"][1] == {"name": "FGDScore", "args": {"typicalPods": [{"cpuMilli": 5, "share": 2}]}}
    with pytest.raises(VariantError, match="--scheduler-name: no profile named 'x' in p.yaml"):
        tp.with_typical_pods(yaml.safe_load(PROFILE), [], None, "x", "p.yaml")
    with pytest.raises(VariantError, match="--profile: p.yaml: no 'profiles' list"):
        tp.with_typical_pods({"kind": "KubeSchedulerConfiguration"}, [], None, None, "p.yaml")


def run_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True)


def test_bad_input_is_refused_with_the_flag_and_writes_nothing(tmp_path: Path) -> None:
    pods = write_pods(tmp_path / "pods.csv", [A, B])
    out = tmp_path / "out.yaml"
    for args, msg in [(["--threshold", "0"], "--threshold: 0.0 is not within (0, 100]"),
                      (["--sample", "3"], "--sample: 3 is not within 1..2"),
                      (["--profile", str(tmp_path / "none.yaml")], "--profile: cannot read"),
                      (["--nodes", str(tmp_path / "none.csv")], "--nodes: cannot read")]:
        r = run_tool("--pods", str(pods), "--out", str(out), *args)
        assert r.returncode == 2 and msg in r.stderr, (args, r.stderr)
        assert not out.exists()
    bad = tmp_path / "bad.yaml"
    bad.write_text("profiles:\n- schedulerName: [x\n")
    r = run_tool("--pods", str(pods), "--out", str(out), "--profile", str(bad))
    assert r.returncode == 2 and f"--profile: {bad}:" in r.stderr and not out.exists()
    r = run_tool("--pods", str(pods), "--out", str(tmp_path / "no" / "dir.yaml"))
    assert r.returncode == 2 and "--out: cannot write" in r.stderr
    (tmp_path / "empty.csv").write_text(",".join(HEADER) + "\n")
    r = run_tool("--pods", str(tmp_path / "empty.csv"), "--out", str(out))
    assert r.returncode == 2 and "--pods: the pod list is empty" in r.stderr


def test_pod_lists_the_simulator_refuses_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    # A CPU-only pod naming a GPU model (include/gpusched/sim/openb.hpp refuses the file).
    r = run_tool("--pods", str(write_pods(tmp_path / "m.csv", [A, pod(2000, 0, 0, "V100M32")])), "--out", str(out))
    assert r.returncode == 2 and "m.csv:3: column 'gpu_spec': a pod without GPUs cannot name GPU models" in r.stderr
    (tmp_path / "u.csv").write_bytes(",".join(HEADER).encode() + b"\np0,\xff\n")
    r = run_tool("--pods", str(tmp_path / "u.csv"), "--out", str(out))
    assert r.returncode == 2 and "u.csv:2: not UTF-8 text" in r.stderr
    assert not out.exists()
    # Trailing blank lines are accepted, as by the simulator.
    blank = write_pods(tmp_path / "b.csv", [A, B])
    blank.write_text(blank.read_text() + "\n\n")
    assert run_tool("--pods", str(blank), "--out", str(out)).returncode == 0


def test_profiles_that_are_not_one_profile_mapping_are_refused(tmp_path: Path) -> None:
    pods = write_pods(tmp_path / "pods.csv", [A, B])
    for text, msg in [("profiles: [1]\n", "profiles[0] must be a mapping"),
                      ("- 1\n", "no 'profiles' list"),
                      ("profiles:\n- plugins: {score: {enabled: 3}}\n", "plugins.score.enabled must be a list")]:
        (tmp_path / "p.yaml").write_text(text)
        r = run_tool("--pods", str(pods), "--profile", str(tmp_path / "p.yaml"), "--out", "-")
        assert r.returncode == 2 and msg in r.stderr, (text, r.stderr)
    # args: null is no args (Kubernetes reads it so); the pods are added.
    (tmp_path / "p.yaml").write_text("profiles:\n- plugins: {score: {enabled: [{name: FGDScore}]}}\n"
                                     "  pluginConfig:\n  - name: FGDScore\n    args:\n")
    r = run_tool("--pods", str(pods), "--profile", str(tmp_path / "p.yaml"), "--out", "-")
    assert r.returncode == 0, r.stderr
    assert len(yaml.safe_load(r.stdout)["profiles"][0]["pluginConfig"][0]["args"]["typicalPods"]) == 2


def test_warns_when_the_sample_does_not_decide_the_cpu_term(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,32000,65536,2,V100M32\n")
    r = run_tool("--pods", str(write_pods(tmp_path / "pods.csv", [B, B, pod(16000), pod(16000)])), "--nodes",
                 str(nodes), "--out", "-")
    assert r.returncode == 0, r.stderr
    assert "d/c = 1.500 +- 1.155" in r.stderr and "by shape (CPU binds)" in r.stderr and "warning" in r.stderr
    assert yaml.safe_load(r.stdout) == {"typicalPods": [{"cpuMilli": 16000, "share": 2},
                                                        {"cpuMilli": 8000, "gpuMilli": 1000, "numGpu": 1, "share": 2}]}


@pytest.mark.skipif(not SIM.exists(), reason=f"gpusched-sim not built at {SIM} (cmake --build build/main --target gpusched-sim)")
def test_the_written_profile_replays_as_the_trace_own_workload(tmp_path: Path) -> None:
    # The simulator gives FGD and gpusched the trace's typical pods (from_pods in C++); the profiles
    # written here carry this tool's. Same rule, so the same replay, run for run.
    pods = REPO / "data" / "openb" / "openb_pod_list_gpuspec20.csv"  # GPU-model shapes too
    files = []
    for name in ("fgd", "gpusched"):
        out = tmp_path / f"{name}.yaml"
        r = run_tool("--pods", str(pods), "--profile", str(REPO / "data" / "profiles" / f"{name}.yaml"), "--out", str(out))
        assert r.returncode == 0, r.stderr
        files += ["--profile-file", str(out)]

    def replay(*how: str) -> dict:
        j = tmp_path / "r.json"
        subprocess.run([str(SIM), "--pods", str(pods), "--seeds", "42,43", "-q", "--output-json", str(j), *how], check=True)
        return {(r["policy"], r["seed"]): (r["unallocated_pct_at_tune"], r["failed_pods"]) for r in json.loads(j.read_text())["runs"]}

    assert replay(*files) == replay("--policy", "FGD,gpusched")
