"""The seed experiment: metric plumbing, determinism, the A/B driver, the t-based summary
(worked by hand), and bad input. Runs are shortened (600 simulated seconds) to keep the suite fast."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import gpusched as gs
from gpusched import plot
from conftest import REPO

SEED_SCENARIO = REPO / "data" / "scenarios" / "seed.yaml"
ex = gs.experiment


@pytest.fixture(scope="module")
def scenario() -> gs.experiment.Scenario:
    return ex.Scenario.load(str(SEED_SCENARIO))


def test_scenario(scenario: gs.experiment.Scenario) -> None:
    assert scenario.name == "seed" and scenario.profiles == ["kube-default", "gpusched"]
    assert scenario.seeds == [1, 2, 3, 4, 5] and scenario.duration_s == 86400.0


def test_every_report_metric_has_a_key(scenario: gs.experiment.Scenario) -> None:
    # The dict's keys are report.hpp's metric_fields (the table's and the JSON's), integers as int.
    keys = [k for k, _ in ex.experiment_metrics()]
    assert keys[:3] == ["throughput_qps", "p50_ms", "p95_ms"] and len(keys) == len(set(keys))
    assert keys == [f["key"] for f in ex.experiment_fields()] and "jct_mean_h" in keys
    kinds = {f["key"]: f["kind"] for f in ex.experiment_fields()}
    m = ex.run_once(scenario, "gpusched", 1, duration_s=600)
    assert list(m) == keys and all(isinstance(v, float if kinds[k] == "real" else int) for k, v in m.items())
    assert all(math.isfinite(v) for v in m.values())
    assert m == ex.run_once(scenario, "gpusched", 1, duration_s=600)  # same seed, same run
    assert 0 <= m["slo_attainment_pct"] <= 100 and 0 <= m["sched_success_pct"] <= 100


def test_summarise_by_hand() -> None:
    # mean 2, s = 1, t_{0.975,2} = 4.303 (NIST table): half = 4.303 / sqrt(3) = 2.48434...
    mean, half = ex.summarise([1.0, 2.0, 3.0])
    assert mean == 2.0 and half == pytest.approx(4.303 / math.sqrt(3), rel=1e-12)
    assert ex.summarise([5.0]) == (5.0, 0.0)
    with pytest.raises(gs.InvalidArgumentError, match=r"x\[1\]"):
        ex.summarise([1.0, float("nan")])


def test_run_ab(scenario: gs.experiment.Scenario, tmp_path: Path) -> None:
    ab = ex.run_ab(scenario, seeds=[1, 2], duration_s=600, progress=False, workers=2)
    assert ab["profiles"] == ["kube-default", "gpusched"] and ab["seeds"] == [1, 2] and ab["duration_s"] == 600
    for p in ab["profiles"]:
        for key, values in ab["runs"][p].items():
            assert values.shape == (2,) and values.dtype == np.float64
            assert ab["summary"][p][key] == ex.summarise(list(values))
    one = ex.run_once(scenario, "gpusched", 2, duration_s=600)
    assert [ab["runs"]["gpusched"][k][1] for k in one] == list(one.values())
    table = ex.ab_table(ab)
    assert table["a_label"] == "kube-default" and "P99 latency ms" in table["lower_is_better"]
    assert table["A"]["training JCT h"] == ab["summary"]["kube-default"]["jct_mean_h"][0]
    fig = plot.plot_experiment_ab(ab, tmp_path / "ab.png")
    assert (tmp_path / "ab.png").stat().st_size > 1000 and fig.axes


def test_bad_input(scenario: gs.experiment.Scenario, tmp_path: Path) -> None:
    with pytest.raises(gs.InvalidArgumentError, match="duration_s") as e:
        ex.run_once(scenario, "gpusched", 1, duration_s=-5)
    assert e.value.field == "duration_s"  # type: ignore[attr-defined]
    with pytest.raises(gs.InvalidArgumentError, match="no profile named 'fifo'"):
        ex.run_once(scenario, "fifo", 1)
    with pytest.raises(gs.InvalidArgumentError, match="unknown profile 'fifo'"):
        ex.run_ab(scenario, ["fifo"], progress=False)
    with pytest.raises(gs.InvalidArgumentError, match=r"seeds\[0\]"):
        ex.run_ab(scenario, seeds=[-1], progress=False)
    with pytest.raises(TypeError):
        ex.run_once(scenario, "gpusched", -1)
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nduration_s: -3\n")
    with pytest.raises(gs.ConfigFileError) as f:
        ex.Scenario.load(str(bad))
    assert f.value.file == str(bad)  # type: ignore[attr-defined]
