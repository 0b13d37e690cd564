"""Profiles by plugin name from Python and from a KubeSchedulerConfiguration (path or text)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import gpusched as gs

HEAD = """apiVersion: kubescheduler.config.k8s.io/v1beta2
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ai-scheduler
"""


def test_the_seed_config_loads_as_written(seed_config: Path) -> None:
    for source in (seed_config, str(seed_config), seed_config.read_text()):
        cfg = gs.load_config(source)
        assert cfg.scheduler_names == ["ai-scheduler"]
        prof = cfg.profile("ai-scheduler")
        assert prof.checks == ["NodeResourcesFit", "GPUCheck"]  # NodeResourcesFit is on by default
        assert prof.scores == [("LoadAware", 10), ("ModelAffinity", 5)]
        assert cfg.percentage_of_nodes_to_score("ai-scheduler") == 100
        assert gs.Scheduler.from_config(cfg, seed=3).seed == 3


def test_errors_name_file_and_line(tmp_path: Path) -> None:
    text = HEAD + "  plugins:\n    score:\n      enabled:\n      - name: LoadAware\n        weight: 0\n"
    with pytest.raises(gs.ConfigFileError) as e:
        gs.load_config(text)
    assert (e.value.file, e.value.line) == ("<string>", 9)  # type: ignore[attr-defined]
    assert "weight of 'LoadAware' must be within 1..100" in str(e.value)
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    with pytest.raises(gs.ConfigFileError, match=r"cfg\.yaml:9: "):
        gs.load_config(path)
    with pytest.raises(FileNotFoundError):
        gs.load_config(tmp_path / "missing.yaml")
    with pytest.raises(gs.InvalidArgumentError, match="no profile named 'nope'"):
        gs.load_config(HEAD).profile("nope")


def test_profile_by_name_with_args() -> None:
    p = (gs.Profile().add_check("GPUCheck").add_check("LoadAware", {"usageThresholds": {"cpu": 50}})
         .add_score("ModelAffinity", 5, {"interferingPairs": [["resnet50", "bert"]]}))
    assert p.checks == ["GPUCheck", "LoadAwareFilter"]
    assert p.scores == [("ModelAffinity", 5)]
    assert "GPUCheck" in gs.Profile.plugin_names()["checks"]
    assert "QoSAware" in gs.Profile.plugin_names()["scores"]


def test_profile_errors_name_the_field() -> None:
    p = gs.Profile()
    with pytest.raises(gs.InvalidArgumentError) as e:
        p.add_score("Nope")
    assert e.value.field == "profile.score"  # type: ignore[attr-defined]
    assert "known:" in str(e.value) and "LoadAware" in str(e.value)
    with pytest.raises(gs.InvalidArgumentError) as e:
        p.add_score("LoadAware", 0)
    assert e.value.field == "profile.score.LoadAware.weight"  # type: ignore[attr-defined]
    with pytest.raises(gs.InvalidArgumentError) as e:
        p.add_score("ModelAffinity", 1, {"pairs": []})
    assert e.value.field == "profile.score.ModelAffinity.args"  # type: ignore[attr-defined]
    assert "unknown argument 'pairs'" in str(e.value)
    with pytest.raises(gs.InvalidArgumentError, match="must be within 0..100"):
        p.add_check("LoadAware", {"usageThresholds": {"cpu": 150}})
    with pytest.raises(TypeError, match="unsupported type"):
        p.add_check("LoadAware", {"usageThresholds": {"cpu": object()}})
    assert p.checks == [] and p.scores == []


def test_python_scores_in_a_config() -> None:
    def prefer_last(nodes: gs.NodeFeatures, pod: gs.Pod) -> npt.NDArray[np.int64]:
        return np.where(nodes.node == nodes.node.max(), 100, 0)

    text = HEAD + "  plugins:\n    score:\n      enabled:\n      - name: PreferLast\n        weight: 3\n"
    cfg = gs.load_config(text, python_scores={"PreferLast": prefer_last})
    assert cfg.profile("ai-scheduler").scores == [("PreferLast", 3)]
    c = gs.Cluster.from_arrays(cpu_milli=[1000] * 3, memory_mib=[1000] * 3)
    r = gs.Scheduler.from_config(cfg).schedule_one(c, gs.Pod("p"))
    assert (r.node, r.score) == (2, 300)
    with pytest.raises(gs.ConfigFileError, match="unknown plugin 'PreferLast'"):
        gs.load_config(text)
    bad = text + "  pluginConfig:\n  - name: PreferLast\n    args: {x: 1}\n"
    with pytest.raises(gs.ConfigFileError, match="unknown argument 'x'"):
        gs.load_config(bad, python_scores={"PreferLast": prefer_last})
    with pytest.raises(gs.InvalidArgumentError, match="built-in plugin"):
        gs.load_config(text, python_scores={"LoadAware": prefer_last})
