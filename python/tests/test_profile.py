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


def test_a_v1_config_gets_kubernetes_default_plugins() -> None:
    # default_plugins.go's defaults gpusched has, in kube-scheduler's order and weights (docs/plugins.md).
    cfg = gs.load_config(HEAD.replace("v1beta2", "v1"))
    prof = cfg.profile("ai-scheduler")
    assert prof.checks == ["NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit"]
    assert prof.scores == [("TaintToleration", 3), ("NodeAffinity", 2), ("LeastAllocated", 1),
                           ("NodeResourcesBalancedAllocation", 1)]
    missing = cfg.defaults_not_run("ai-scheduler")
    assert missing[:2] == ["SchedulingGates", "PrioritySort"] and "ImageLocality" in missing
    # multiPoint disabled '*': only what the profile lists (data/profiles/ do this).
    text = HEAD.replace("v1beta2", "v1") + "  plugins:\n    multiPoint:\n      disabled: [{name: '*'}]\n" \
        "      enabled: [{name: GPUCheck}, {name: LoadAware, weight: 10}]\n"
    cfg = gs.load_config(text)
    assert cfg.profile("ai-scheduler").checks == ["GPUCheck", "LoadAwareFilter"]
    assert cfg.profile("ai-scheduler").scores == [("LoadAware", 10)]
    assert cfg.defaults_not_run("ai-scheduler") == []


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
    assert p.checks == ["NodeResourcesFit", "GPUCheck", "LoadAwareFilter"]  # the default fit first, as YAML
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
    assert p.checks == ["NodeResourcesFit"] and p.scores == []


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


def test_a_code_built_profile_checks_cpu_and_memory_by_default() -> None:
    # Issue 19: a 500-core pod must not land on a 96-core node (docs/plugins.md, "Defaults").
    c = gs.Cluster()
    c.add_node("n96", cpu_milli=96000, memory_mib=262144, gpu_count=8, gpu_model="V100M32", gpu_mem_mib=32768)
    big = gs.Pod("p", cpu_milli=500000, memory_mib=1024, num_gpu=1, gpu_milli=1000)
    r = gs.Scheduler(gs.Profile().add_check("GPUCheck")).schedule_one(c, big)
    assert not r.scheduled
    assert gs.Profile().add_check("GPUCheck").checks == ["NodeResourcesFit", "GPUCheck"]
    off = gs.Profile().without_default_fit().add_check("GPUCheck")
    assert off.checks == ["GPUCheck"]
    assert gs.Scheduler(off).schedule_one(c, big).scheduled
    explicit = gs.Profile().add_check("GPUCheck").add_check("NodeResourcesFit", {"overcommit": {"cpu": 2.0}})
    assert explicit.checks == ["GPUCheck", "NodeResourcesFit"]


PROFILES = Path(__file__).resolve().parents[2] / "data" / "profiles"


def test_profile_files_load_with_a_workload() -> None:
    typical = [gs.Pod("t", cpu_milli=4000, memory_mib=1024, num_gpu=1, gpu_milli=500)]
    fgd = gs.Profile.from_file(str(PROFILES / "fgd.yaml"), typical_pods=typical)
    assert fgd.checks == ["NodeResourcesFit", "GPUCheck"]
    assert fgd.scores == [("FGDScore", 1)] and fgd.gpu_selector == "FGDScore"
    gpusched = gs.Profile.from_file(str(PROFILES / "gpusched.yaml"), typical_pods=typical)
    assert gpusched.scores == [("FillAwareRefill", 1)] and gpusched.gpu_selector == "FillAwareRefill"
    assert gs.Profile.from_file(str(PROFILES / "gpusched-fillaware.yaml"), typical_pods=typical).scores == [("FillAware", 1)]
    with pytest.raises(gs.ConfigFileError, match="fgd.yaml:20: FGDScore: needs pluginConfig args.typicalPods"):
        gs.Profile.from_file(str(PROFILES / "fgd.yaml"))


def test_batch_scorer_takes_a_configured_profile() -> None:
    c = gs.Cluster()
    c.add_node("a", cpu_milli=32000, memory_mib=65536, gpu_count=4, gpu_model="V100M32", gpu_mem_mib=32768)
    c.add_node("b", cpu_milli=8000, memory_mib=65536, gpu_count=4, gpu_model="V100M32", gpu_mem_mib=32768)
    pods = [gs.Pod("p", cpu_milli=16000, memory_mib=1024, num_gpu=1, gpu_milli=1000)]
    kube = gs.Profile.from_file(str(PROFILES / "seed.yaml"))
    m = gs.BatchScorer(profile=kube).scores(c, pods)
    assert m[0, 1] == -1  # 16 cores do not fit node b: the default NodeResourcesFit
    assert m[0, 0] >= 0
    with pytest.raises(gs.InvalidArgumentError, match="profile.score.BestFitScore: has no batch form"):
        gs.BatchScorer(profile=gs.Profile.from_file(str(PROFILES / "bestfit.yaml")))


@pytest.mark.parametrize("name", ["gpusched.yaml", "gpusched-fillaware.yaml", "gpusched-binding.yaml"])
def test_batch_scorer_takes_gpusched_profiles(name: str) -> None:
    # The same pick as the per-pod scheduler. The workload asks 4 CPUs per half GPU: r = 8000 milli-CPU
    # per GPU, and S(n) = max(0, free GPU milli - CPU left * 1000 / r). Node b (8 CPUs, 4 GPUs): S goes
    # from 4000 - 1000 = 3000 to 3500 - 250 = 3250 after the pod's 6 CPUs, a cost of 0.5 * 250. Node a
    # (64 CPUs): 0 before and after (3500 - 7250 < 0). The share leaves the same hole on both, so a
    # scores higher, in the mean form and by shape alike (one shape; CPU binds here: 8 > 76 / 12 CPUs
    # per GPU). Node c (4 CPUs) cannot hold the pod.
    typical = [gs.Pod("t", cpu_milli=4000, memory_mib=1024, num_gpu=1, gpu_milli=500)]
    c = gs.Cluster()
    c.add_node("a", cpu_milli=64000, memory_mib=65536, gpu_count=4, gpu_model="V100M32", gpu_mem_mib=32768)
    c.add_node("b", cpu_milli=8000, memory_mib=65536, gpu_count=4, gpu_model="V100M32", gpu_mem_mib=32768)
    c.add_node("c", cpu_milli=4000, memory_mib=65536, gpu_count=4, gpu_model="V100M32", gpu_mem_mib=32768)
    pod = gs.Pod("p", cpu_milli=6000, memory_mib=1024, num_gpu=1, gpu_milli=500)
    prof = gs.Profile.from_file(str(PROFILES / name), typical_pods=typical)
    m = gs.BatchScorer(profile=prof).scores(c, [pod])
    assert m[0, 2] == -1 and m[0, 0] - m[0, 1] == 125 * 1000  # scores are (10^6 + saved) x 1000
    assert gs.Scheduler(prof).schedule_one(c, pod).node == 0
