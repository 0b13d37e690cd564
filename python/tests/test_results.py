"""Results that list their fields once (issue 12, issue 19): Python's dicts carry the keys of
gpusched-sim's JSON, run_ab's JSON validates against docs/results.schema.json, and progress bars
are off when stderr is not a terminal."""

from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path

import pytest

import gpusched as gs
from gpusched._progress import progress_enabled, run_jobs
from conftest import REPO

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema validates docs/results.schema.json")

SCHEMA = json.loads((REPO / "docs" / "results.schema.json").read_text())
SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def test_replay_dicts_carry_the_field_keys(tmp_path: Path) -> None:
    nodes, pods = tmp_path / "n.csv", tmp_path / "p.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16000,1,T4\n")
    pods.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
                    "scheduled_time\na,1000,1000,1,1000,,LS,Succeeded,0,100,0\n")
    t = gs.sim.Trace.load(str(nodes), str(pods))
    for mode, run in (("paper", gs.sim.run_paper(t, "FGD", tune=1.0)), ("dynamic", gs.sim.run_dynamic(t, "FGD"))):
        fields = gs.sim.replay_fields(mode)
        for f in fields:
            assert SNAKE.match(f["key"]), f["key"]
            assert isinstance(run[f["key"]], int if f["kind"] == "integer" else float), f["key"]
        assert run["gpu_capacity_milli"] == 1000
    # One arrival (a, one whole GPU) on one GPU: placed, none failed (worked by hand).
    paper = gs.sim.run_paper(t, "FGD", tune=1.0)
    assert (paper["arrived_pods"], paper["failed_pods"], paper["allocation_pct_at_tune"]) == (1, 0, 100.0)
    with pytest.raises(gs.InvalidArgumentError, match="mode"):
        gs.sim.replay_fields("static")


def test_run_ab_json_validates_and_matches_the_field_list() -> None:
    sc = gs.experiment.Scenario.load(str(REPO / "data" / "scenarios" / "seed.yaml"))
    ab = gs.experiment.run_ab(sc, seeds=[1, 2], duration_s=300, progress=False)
    doc = json.loads(gs.experiment.to_json(ab))
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    keys = [f["key"] for f in gs.experiment.experiment_fields()]
    assert [f["key"] for f in doc["fields"]] == keys
    assert doc["version"] == gs.__version__ and doc["scenario"] == "seed" and doc["kind"] == "scenario_ab"
    scenario_in = doc["inputs"][0]
    assert scenario_in["role"] == "scenario"
    assert scenario_in["sha256"] == hashlib.sha256(Path(scenario_in["path"]).read_bytes()).hexdigest()
    for p in ab["profiles"]:
        assert list(doc["results"][p]) == keys
        for k in keys:
            r = doc["results"][p][k]
            assert len(r["values"]) == 2 and r["mean"] == pytest.approx(sum(r["values"]) / 2)
            assert (r["mean"], r["ci95"]) == pytest.approx(ab["summary"][p][k])
    with pytest.raises(gs.InvalidArgumentError, match="lacks"):
        gs.experiment.to_json({"runs": {}})


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_progress_off_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tqdm", reason="the progress bar is tqdm's")
    for tty, want in ((False, ""), (True, "3/3")):
        err = _Stream(tty)
        monkeypatch.setattr("sys.stderr", err)
        assert progress_enabled(None) is tty
        assert run_jobs([lambda: 1, lambda: 2, lambda: 3], progress=None, desc="t", workers=1) == [1, 2, 3]
        assert (want in err.getvalue()) and (tty or err.getvalue() == "")
    err = _Stream(False)
    monkeypatch.setattr("sys.stderr", err)
    run_jobs([lambda: 1], progress=True, desc="forced", workers=1)  # forced on, even into a pipe
    assert "forced" in err.getvalue()
    with pytest.raises(gs.InvalidArgumentError, match="progress"):
        progress_enabled("yes")  # type: ignore[arg-type]
