"""python/tools/trace_variants.py: the generated shares match the requested ones, the same seed gives the
same bytes, bad arguments name their flag (docs/quality.md, "Trace variants").

The shares are recounted here from the CSV text, not with the tool's own shares()."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "python" / "tools" / "trace_variants.py"
BASE = REPO / "data" / "openb" / "openb_pod_list_default.csv"
NODES = REPO / "data" / "openb" / "openb_node_list_gpu_node.csv"
# One pod moves a share by at most its GPU request over the total: 8 x 1000 milli over the ~5e6 milli
# of the default trace's GPU pods is 0.16 percentage points; the tolerance allows three such steps.
TOL = 0.005

sys.path.insert(0, str(TOOL.parent))
import trace_variants as tv  # noqa: E402


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, check=False)


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def measured(rs: list[dict[str, str]]) -> dict[str, float]:
    def g(r: dict[str, str]) -> int:
        return int(r["num_gpu"]) * int(r["gpu_milli"])

    total = sum(g(r) for r in rs)
    return {
        "gpu_share": sum(g(r) for r in rs if r["num_gpu"] == "1" and int(r["gpu_milli"]) < 1000) / total,
        "multi_gpu": sum(g(r) for r in rs if int(r["num_gpu"]) >= 2) / total,
        "gpu_spec": sum(g(r) for r in rs if r["gpu_spec"]) / total,
        "cpu_only": sum(1 for r in rs if r["num_gpu"] == "0") / len(rs),
    }


def generate(tmp_path: Path, *args: str, seed: int = 7) -> list[dict[str, str]]:
    out = tmp_path / "v.csv"
    res = run("--seed", str(seed), "--out", str(out), *args)
    assert res.returncode == 0, res.stderr
    return rows(out.read_text())


@pytest.mark.parametrize("flag,key,value", [
    ("--gpu-share", "gpu_share", 0.2), ("--gpu-share", "gpu_share", 0.6), ("--gpu-share", "gpu_share", 1.0),
    ("--multi-gpu", "multi_gpu", 0.2), ("--multi-gpu", "multi_gpu", 0.5),
    ("--gpu-spec", "gpu_spec", 0.05), ("--gpu-spec", "gpu_spec", 0.33),
    ("--cpu-only", "cpu_only", 0.05), ("--cpu-only", "cpu_only", 0.3),
])
def test_requested_share_is_met(tmp_path: Path, flag: str, key: str, value: float) -> None:
    rs = generate(tmp_path, flag, str(value))
    assert measured(rs)[key] == pytest.approx(value, abs=TOL)


def test_two_knobs_at_once(tmp_path: Path) -> None:
    m = measured(generate(tmp_path, "--gpu-share", "0.8", "--cpu-only", "0.25", "--gpu-spec", "0.2"))
    assert m["gpu_share"] == pytest.approx(0.8, abs=TOL)
    assert m["cpu_only"] == pytest.approx(0.25, abs=TOL)
    assert m["gpu_spec"] == pytest.approx(0.2, abs=TOL)


def test_cpu_only_knob_keeps_the_gpu_pods(tmp_path: Path) -> None:
    # --cpu-only alone redraws only CPU-only pods: the GPU pods are the base's, row for row (names aside).
    base = rows(BASE.read_text())
    rs = generate(tmp_path, "--cpu-only", "0.3")

    def key(r: dict[str, str]) -> tuple[str, ...]:
        return tuple(v for k, v in r.items() if k != "name")

    assert Counter(key(r) for r in rs if r["num_gpu"] != "0") == Counter(key(r) for r in base if r["num_gpu"] != "0")
    # 7064 GPU pods in the default trace (data/openb/README.md): 0.3 of all pods -> 7064 * 0.3 / 0.7 = 3027.4
    assert sum(1 for r in rs if r["num_gpu"] == "0") == 3027


def test_rows_are_drawn_from_the_base(tmp_path: Path) -> None:
    base = {tuple(v for k, v in r.items() if k != "name") for r in rows(BASE.read_text())}
    rs = generate(tmp_path, "--gpu-share", "0.4", "--multi-gpu", "0.3")
    assert all(tuple(v for k, v in r.items() if k != "name") in base for r in rs)
    assert len({r["name"] for r in rs}) == len(rs)
    assert rs[0]["name"] == "openb-pod-0000"


def test_gpu_spec_names_a_model_that_can_hold_the_pod(tmp_path: Path) -> None:
    nodes = rows(NODES.read_text())
    rs = generate(tmp_path, "--gpu-spec", "0.33")
    constrained = [r for r in rs if r["gpu_spec"]]
    assert constrained
    for r in constrained:
        assert r["num_gpu"] != "0"
        assert any(n["model"] == r["gpu_spec"] and int(n["gpu"]) >= int(r["num_gpu"])
                   and int(n["cpu_milli"]) >= int(r["cpu_milli"]) and int(n["memory_mib"]) >= int(r["memory_mib"])
                   for n in nodes), r


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    outs = []
    for i, seed in enumerate(("3", "3", "4")):
        out = tmp_path / f"v{i}.csv"
        res = run("--seed", seed, "--out", str(out), "--gpu-share", "0.6", "--gpu-spec", "0.1", "--cpu-only", "0.2")
        assert res.returncode == 0, res.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert outs[0] != outs[2]


def test_hand_worked_draws() -> None:
    # Base: two sharing pods (500), two whole-GPU pods, one 2-GPU pod. Target: sharing 0.5 of the GPU
    # request; whole and multi split the rest as in the base (2000 : 2000 -> 0.25 each). Draws by the
    # largest shortfall (target x total so far - class total so far), first class on ties:
    #   1: nothing yet -> the largest target, share (500);  2: share -250, whole 125, multi 125 -> whole;
    #   3: share 250, whole -625, multi 375 -> multi;  4: share 1250 -> share;  5: share 1000, whole 0 -> share.
    def pod(cpu: int, g: int, m: int) -> tv.Pod:
        return tv.Pod(("p", str(cpu), "1024", str(g), str(m), "", "LS", "Running", "0", "1", "0"))

    base = [pod(1000, 1, 500), pod(2000, 1, 500), pod(1000, 1, 1000), pod(2000, 1, 1000), pod(4000, 2, 1000)]
    out = tv.make_variant(base, None, seed=1, gpu_share=0.5)
    assert Counter(p.kind for p in out) == Counter({"share": 3, "whole": 1, "multi": 1})


@pytest.mark.parametrize("args,flag", [
    (["--gpu-share", "1.5"], "--gpu-share"),
    (["--multi-gpu", "-0.1"], "--multi-gpu"),
    (["--gpu-spec", "2"], "--gpu-spec"),
    (["--cpu-only", "1.0"], "--cpu-only"),
    (["--gpu-share", "0.7", "--multi-gpu", "0.5"], "--gpu-share + --multi-gpu"),
    ([], "--gpu-share/--multi-gpu/--gpu-spec/--cpu-only"),
    (["--gpu-share", "0.5", "--out", "/nonexistent-dir/v.csv"], "--out"),
])
def test_bad_arguments_name_the_flag(tmp_path: Path, args: list[str], flag: str) -> None:
    out = tmp_path / "v.csv"
    res = run("--seed", "1", "--out", str(out), *args)
    assert res.returncode == 2
    assert res.stderr.startswith(f"trace_variants: {flag}")
    assert not out.exists()


def test_bad_base_file_names_flag_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(",".join(tv.HEADER) + "\nopenb-pod-0000,12x,16384,1,1000,,LS,Running,0,1,0\n")
    res = run("--seed", "1", "--out", str(tmp_path / "v.csv"), "--base", str(bad), "--gpu-share", "0.5")
    assert res.returncode == 2
    assert f"--base: {bad}:2: column 'cpu_milli'" in res.stderr
    five = tmp_path / "five.csv"
    five.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n")
    res = run("--seed", "1", "--out", str(tmp_path / "v.csv"), "--base", str(five), "--cpu-only", "0.1")
    assert res.returncode == 2
    assert f"--base: {five}:1: expected the 11-column openb header" in res.stderr
