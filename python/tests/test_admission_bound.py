"""python/tools/admission_bound.py: a policy's admitted pods counted from the replay, and the bound of the
placements that admit them, on a trace worked out by hand (docs/quality.md, "The bound given a policy's
admissions")."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "python" / "tools" / "admission_bound.py"
sys.path.insert(0, str(TOOL.parent))
pytest.importorskip("scipy", reason="the bound needs scipy (HiGHS); scripts/install-deps.sh installs it")
import admission_bound as ab  # noqa: E402
import offline_bound as ob  # noqa: E402

# Two 1-GPU nodes (2000 milli); an 810-milli pod and two whole-GPU pods (2810 milli in all, tune 1.405:
# all three arrive, no clone). Whole pods alone fill both GPUs: the LP leaves nothing unavoidable. A
# policy that meets the 810 before the second whole pod places it (one whole pod fails): 1810, and the
# placements admitting that 810 pod reach 1810 at best (its GPU keeps 190 nobody fits), so 9.5 % is
# unavoidable given its admissions. If both whole pods come first, the 810 fails: 2000, 0 %.
NODES = "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,65536,1,T4\nn2,64000,65536,1,T4\n"
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
        "a,1000,1024,1,810,,LS,Running,0,10,0\nb,1000,1024,1,1000,,LS,Running,1,10,1\n"
        "c,1000,1024,1,1000,,LS,Running,2,10,2\n")


def test_admitted_counts_sharing_and_cpu_only_pods_by_size() -> None:
    shapes = Counter({ob.Shape(1000, 1024, 1, 810, ()): 3, ob.Shape(1000, 1024, 1, 470, ()): 2,
                      ob.Shape(1000, 1024, 1, 1000, ()): 4, ob.Shape(2000, 1024, 0, 0, ()): 5,
                      ob.Shape(1000, 1024, 2, 1000, ()): 1})
    failed = {"cpu=1000m gpu=1x810": 1, "cpu=1000m gpu=1x810 model=T4|P100": 1, "cpu=1000m gpu=1x1000": 3,
              "cpu=2000m gpu=0x0": 1, "cpu=1000m gpu=2x1000": 1}
    # 810: 3 - 2; 470: 2 - 0; CPU-only: 5 - 1. Whole and multi-GPU pods get no floor.
    assert ab.admitted(shapes, failed) == {810: 1, 470: 2, 0: 4}
    with pytest.raises(ob.BoundError, match="'gpu=1x810' is not"):
        ab.admitted(shapes, {"gpu=1x810": 1})
    with pytest.raises(ob.BoundError, match="4 pods of 810 milli failed, 3 arrived"):
        ab.admitted(shapes, {"cpu=1000m gpu=1x810": 4})


def run(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp / "n.csv").write_text(NODES)
    (tmp / "p.csv").write_text(PODS)
    return subprocess.run([sys.executable, str(TOOL), "--nodes", str(tmp / "n.csv"), "--pods", str(tmp / "p.csv"),
                           "--tune", "1.405", *args], capture_output=True, text=True, check=False)


def test_bound_given_admissions_by_hand(tmp_path: Path) -> None:
    pytest.importorskip("gpusched", reason="the replay needs the gpusched module (pip install ./python)")
    res = run(tmp_path, "--seeds", "1-8", "--policies", "FGD,gpusched", "--json", str(tmp_path / "o.json"))
    assert res.returncode == 0, res.stderr
    runs = json.loads((tmp_path / "o.json").read_text())["runs"]
    assert len(runs) == 16
    seen = set()
    for r in runs:
        assert r["unavoidable_pct"] == pytest.approx(0.0, abs=1e-6)
        took = r["admitted"]["810"]
        seen.add(took)
        assert r["unallocated_pct"] == pytest.approx(9.5 if took == 1 else 0.0)
        assert r["unavoidable_given_admissions_pct"] == pytest.approx(9.5 if took == 1 else 0.0, abs=1e-6)
    assert seen == {0, 1}  # eight shuffles cover both orders


def test_bad_policy_names_the_flag(tmp_path: Path) -> None:
    pytest.importorskip("gpusched", reason="the replay needs the gpusched module (pip install ./python)")
    res = run(tmp_path, "--policies", "FGD,nosuch")
    assert res.returncode == 2
    assert res.stderr.startswith("admission_bound: --policies: 'nosuch' is not a policy")
