"""python/tools/sustained_trace.py: the arrival rate is Little's law's, the population at 0 is the M/G/infinity
steady state, each pod keeps its base row's run time and patience, the simulator reads the output and
carries the offered load, bad input names its flag (docs/quality.md, "Dynamic mode").

Expected values are worked out from the model in the tool's docstring, not printed by it."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "python" / "tools" / "sustained_trace.py"

sys.path.insert(0, str(TOOL.parent))
import sustained_trace as st  # noqa: E402
import trace_variants as tv  # noqa: E402

HEADER = ",".join(tv.HEADER)
# A: one whole GPU, created 0, scheduled 100, deleted 3700: runs 3600 s, patience 3700 s, waited 100 s.
# B: CPU-only, never scheduled, created 0, deleted 500: runs 500 s (deletion - creation), patience 500 s.
ROW_A = "a,4000,8192,1,1000,,LS,Running,0,3700,100"
ROW_B = "b,1000,1024,0,0,,BE,Pending,0,500,"


def write_base(tmp_path: Path) -> Path:
    p = tmp_path / "base.csv"
    p.write_text(f"{HEADER}\n{ROW_A}\n{ROW_B}\n")
    return p


def write_nodes(tmp_path: Path, gpus: int, count: int = 1) -> Path:
    p = tmp_path / "nodes.csv"
    rows = "".join(f"n{k},{4000 * gpus + 64000},{8192 * gpus + 65536},{gpus},V100M16\n" for k in range(count))
    p.write_text(f"sn,cpu_milli,memory_mib,gpu,model\n{rows}")
    return p


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, check=False)


def generate(tmp_path: Path, load: str, hours: str, seed: str = "1", gpus: int = 2) -> list[dict[str, str]]:
    out = tmp_path / f"s{seed}.csv"
    res = run("--base", str(write_base(tmp_path)), "--nodes", str(write_nodes(tmp_path, gpus)), "--load", load,
              "--hours", hours, "--seed", seed, "--out", str(out))
    assert res.returncode == 0, res.stderr
    return list(csv.DictReader(io.StringIO(out.read_text())))


def test_rate_is_littles_law(tmp_path: Path) -> None:
    # E[g d] = (1000 milli x 3600 s + 0 x 500 s) / 2 = 1.8e6; 2 GPUs = 2000 milli; load 0.9:
    # lambda = 0.9 x 2000 / 1.8e6 = 0.001 per second.
    base = tv.read_pods(write_base(tmp_path))
    times = [st.timing(p, i + 2, tmp_path / "base.csv") for i, p in enumerate(base)]
    assert times == [st.Timing(run=3600, patience=3700, wait=100), st.Timing(run=500, patience=500, wait=0)]
    assert st.offered_rate(base, times, 2000, 0.9) == pytest.approx(0.001)


def test_arrivals_in_the_window(tmp_path: Path) -> None:
    # lambda = 0.001/s over 10,000 h: 36,000 arrivals expected (Poisson sd 190, 0.5 %); half of each row.
    rows = generate(tmp_path, "0.9", "10000")
    later = [r for r in rows if not (r["creation_time"] == "0" and r["scheduled_time"] == "0")]
    assert abs(len(later) - 36000) < 0.03 * 36000
    a = [r for r in later if r["num_gpu"] == "1"]
    assert abs(len(a) - len(later) / 2) < 0.03 * len(later)
    created = [int(r["creation_time"]) for r in later]
    assert created == sorted(created)
    assert 0 <= created[0] and created[-1] < 10000 * 3600
    assert [r["name"] for r in rows] == [f"sustained-pod-{k:07d}" for k in range(len(rows))]


def test_each_arrival_keeps_its_rows_request_run_time_and_patience(tmp_path: Path) -> None:
    rows = generate(tmp_path, "0.9", "200")
    later = [r for r in rows if int(r["creation_time"]) > 0]
    assert later
    for r in later:
        c, d = int(r["creation_time"]), int(r["deletion_time"])
        if r["num_gpu"] == "1":
            assert r["cpu_milli"] == "4000" and r["gpu_milli"] == "1000" and r["qos"] == "LS"
            assert (d - c, int(r["scheduled_time"]) - c) == (3700, 100)  # patience 3700, runs 3600
        else:
            assert r["cpu_milli"] == "1000" and r["qos"] == "BE" and r["pod_phase"] == "Pending"
            assert (d - c, r["scheduled_time"]) == (500, "")  # never scheduled: runs 500 = patience


def test_population_at_zero_is_the_steady_state(tmp_path: Path) -> None:
    # load 900 on 2 GPUs: lambda = 900 x 2000 / 1.8e6 = 1 per second. In steady state the pods present
    # are Poisson with mean lambda x d per row: A: 0.5 x 3600 = 1800 (sd 42), B: 0.5 x 500 = 250 (sd 16);
    # what is left of each run time is uniform on (0, d]: A's mean 1800 (sd of the mean 1039/sqrt(1800) = 24).
    rows = generate(tmp_path, "900", "0.01")
    at0 = [r for r in rows if r["creation_time"] == "0" and r["scheduled_time"] == "0"]
    a = [int(r["deletion_time"]) for r in at0 if r["num_gpu"] == "1"]
    b = [int(r["deletion_time"]) for r in at0 if r["num_gpu"] == "0"]
    assert abs(len(a) - 1800) < 5 * 42
    assert abs(len(b) - 250) < 5 * 16
    assert all(0 < x <= 3600 for x in a) and all(0 < x <= 500 for x in b)
    assert abs(sum(a) / len(a) - 1800) < 5 * 24
    assert rows[: len(at0)] == at0  # pods present at 0 come first


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    base, nodes = write_base(tmp_path), write_nodes(tmp_path, 2)
    outs = []
    for i, seed in enumerate(("3", "3", "4")):
        out = tmp_path / f"o{i}.csv"
        res = run("--base", str(base), "--nodes", str(nodes), "--load", "0.9", "--hours", "100", "--seed", seed,
                  "--out", str(out))
        assert res.returncode == 0, res.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0] != outs[2]


def test_a_longer_window_extends_the_same_list(tmp_path: Path) -> None:
    base, nodes = write_base(tmp_path), write_nodes(tmp_path, 2)
    texts = []
    for hours in ("10", "30"):  # load 90: 0.1 per second, about 205 pods running at 0 (see above)
        out = tmp_path / f"h{hours}.csv"
        res = run("--base", str(base), "--nodes", str(nodes), "--load", "90", "--hours", hours, "--seed", "5",
                  "--out", str(out))
        assert res.returncode == 0, res.stderr
        texts.append(out.read_text())
    short, long = texts
    assert len(long) > len(short) and long.startswith(short)


def test_simulator_carries_the_offered_load(tmp_path: Path) -> None:
    gs = pytest.importorskip("gpusched", reason="the gpusched module is not installed (pip install ./python)")
    # Whole-GPU pods only, 3600 s each, on 25 nodes of 4 GPUs at load 0.5: lambda = 0.5 x 100,000 /
    # 3.6e6 per second = 50 per hour, 50 GPUs busy on average (Poisson, so more than 100 almost never:
    # nothing waits). Over 200 h the time average is within ~1 GPU of 50 (correlation time 1 h).
    base = tmp_path / "base.csv"
    base.write_text(f"{HEADER}\na,4000,8192,1,1000,,LS,Running,0,3600,0\n")
    nodes = write_nodes(tmp_path, 4, count=25)
    out = tmp_path / "s.csv"
    res = run("--base", str(base), "--nodes", str(nodes), "--load", "0.5", "--hours", "200", "--seed", "7",
              "--out", str(out))
    assert res.returncode == 0, res.stderr
    r = gs.sim.run_dynamic(gs.sim.Trace.load(str(nodes), str(out)), "gpusched", seed=42)
    assert r["time_weighted_allocation_pct"] == pytest.approx(50.0, abs=2.5)
    assert r["window_allocation_pct"][0] == pytest.approx(50.0, abs=35.0)  # 50 GPUs at 0, not 0 (sd 7: 5 sd)
    assert r["withdrawn_pods"] == 0 and r["max_pending_pods"] == 0


@pytest.mark.parametrize("args,flag", [
    (["--load", "0"], "--load"),
    (["--load", "nan"], "--load"),
    (["--hours", "-1"], "--hours"),
    (["--load", "1e9", "--hours", "1e6"], "--load/--hours"),
    (["--out", "/nonexistent-dir/s.csv"], "--out"),
])
def test_bad_arguments_name_the_flag(tmp_path: Path, args: list[str], flag: str) -> None:
    out = tmp_path / "s.csv"
    full = {"--load": "0.9", "--hours": "1", "--out": str(out)}
    for k, v in zip(args[::2], args[1::2]):
        full[k] = v
    res = run("--base", str(write_base(tmp_path)), "--nodes", str(write_nodes(tmp_path, 2)), "--seed", "1",
              *(x for kv in full.items() for x in kv))
    assert res.returncode == 2
    assert res.stderr.startswith(f"sustained_trace: {flag}")
    assert not out.exists()


def test_bad_base_names_file_and_line(tmp_path: Path) -> None:
    nodes = write_nodes(tmp_path, 2)
    cases = [
        (f"{HEADER}\n{ROW_A}\nb,1000,1024,0,0,,BE,Pending,600,500,\n", ":3: needs creation_time <= scheduled_time"),
        (f"{HEADER}\na,4000,8192,1,1000,,LS,Running,0,3700,x\n", ":2: creation_time, deletion_time and scheduled_time"),
        (f"{HEADER}\n{ROW_B}\n", "no pod both asks for GPU and runs a positive time"),
        (f"{HEADER}\n", "has no pod"),
    ]
    for i, (text, message) in enumerate(cases):
        base = tmp_path / f"bad{i}.csv"
        base.write_text(text)
        out = tmp_path / "s.csv"
        res = run("--base", str(base), "--nodes", str(nodes), "--load", "0.9", "--hours", "1", "--seed", "1",
                  "--out", str(out))
        assert res.returncode == 2, text
        assert res.stderr.startswith("sustained_trace: --base: ") and message in res.stderr, res.stderr
        assert not out.exists()
