"""deploy/ without a cluster: every manifest parses, the ModelJob CRD's schema accepts the example
and refuses priority 11 and an unknown qosClass (checked with jsonschema, which covers the
structural-schema keywords the CRD uses), kube-scheduler's extender stanza uses only fields of
kube-scheduler's v1 Extender type, and gpusched-extender starts with the embedded profile and
schedules the example pods."""
from __future__ import annotations

import pathlib

import jsonschema
import pytest
import yaml

from conftest import SOURCE, Extender, make_node

DEPLOY = SOURCE / "deploy"


def docs(name: str) -> list[dict]:
    with open(DEPLOY / name) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def test_every_manifest_parses_with_kind_and_name():
    files = sorted(p.name for p in DEPLOY.glob("*.yaml"))
    assert files == ["ai-scheduler-config.yaml", "ai-scheduler.yaml", "example-modeljob.yaml", "gpusched-extender.yaml",
                     "modeljob-crd.yaml", "rbac.yaml"]
    for f in files:
        for d in docs(f):
            assert d["apiVersion"] and d["kind"] and d["metadata"]["name"], f


def test_modeljob_schema_validates_priority_and_qos():
    (crd,) = docs("modeljob-crd.yaml")
    assert crd["spec"]["group"] == "ai.tencent.com" and crd["spec"]["names"]["kind"] == "ModelJob"
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    (job,) = [d for d in docs("example-modeljob.yaml") if d["kind"] == "ModelJob"]
    jsonschema.validate(job, schema)
    for field, bad in (("priority", 11), ("priority", -1), ("qosClass", "Gold"), ("modelType", "")):
        wrong = {**job, "spec": {**job["spec"], field: bad}}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, schema)


def test_kube_scheduler_extender_stanza_uses_known_fields():
    (cm,) = docs("ai-scheduler-config.yaml")
    cfg = yaml.safe_load(cm["data"]["ai-scheduler-config.yaml"])
    assert cfg["kind"] == "KubeSchedulerConfiguration" and cfg["profiles"][0]["schedulerName"] == "ai-scheduler"
    (ext,) = cfg["extenders"]
    # k8s.io/kube-scheduler config/v1 types.go, Extender.
    known = {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", "enableHTTPS",
             "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable"}
    assert set(ext) <= known
    assert ext["nodeCacheCapable"] is True and ext["ignorable"] is False
    assert {r["name"] for r in ext["managedResources"]} == {"nvidia.com/gpu", "nvidia.com/gpucores", "nvidia.com/gpumem"}


def test_extender_starts_with_the_deployed_profile_and_places_the_example_pods(tmp_path: pathlib.Path):
    cm = [d for d in docs("gpusched-extender.yaml") if d["kind"] == "ConfigMap"][0]
    config = tmp_path / "scheduler-config.yaml"
    config.write_text(cm["data"]["scheduler-config.yaml"])
    ext = Extender(config=config)
    try:
        node = make_node("v100-a", cpu="64", memory="256Gi", gpus=8)
        for pod in (d for d in docs("example-modeljob.yaml") if d["kind"] == "Pod"):
            pod["metadata"]["uid"] = "uid-" + pod["metadata"]["name"]
            status, res = ext.post("filter", {"Pod": pod, "Nodes": {"items": [node]}, "NodeNames": None})
            assert status == 200, res
            assert [n["metadata"]["name"] for n in res["Nodes"]["items"]] == ["v100-a"]
    finally:
        ext.close()
