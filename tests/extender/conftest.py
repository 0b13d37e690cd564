"""Fixtures of gpusched-extender's loopback tests: the binary, Kubernetes objects built with the
official client's models (so the JSON is the API's own), and a stand-in API server."""
from __future__ import annotations

import http.client
import json
import os
import pathlib
import subprocess
import time

import pytest
from kubernetes.client import (ApiClient, V1Container, V1Node, V1NodeSpec, V1NodeStatus, V1ObjectMeta, V1Pod,
                               V1PodSpec, V1ResourceRequirements)

from fake_apiserver import FakeApiServer

SOURCE = pathlib.Path(os.environ.get("GPUSCHED_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CONFIG = SOURCE / "data" / "scheduler-config.yaml"
_api = ApiClient()


def to_json(obj) -> dict:
    return _api.sanitize_for_serialization(obj)


def make_pod(name: str, uid: str, *, cpu: str = "1", memory: str = "1Gi", gpus: int = 0, cores: int | None = None,
             labels: dict | None = None, node: str | None = None, annotations: dict | None = None,
             priority: int | None = None) -> dict:
    limits = {"cpu": cpu, "memory": memory}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    if cores is not None:
        limits["nvidia.com/gpucores"] = str(cores)
    pod = V1Pod(api_version="v1", kind="Pod",
                metadata=V1ObjectMeta(name=name, namespace="default", uid=uid, labels=labels, annotations=annotations),
                spec=V1PodSpec(scheduler_name="ai-scheduler", node_name=node, priority=priority,
                               containers=[V1Container(name="main", image="registry.local/model:1",
                                                       resources=V1ResourceRequirements(limits=limits))]))
    return to_json(pod)


def make_node(name: str, *, cpu: str = "8", memory: str = "32Gi", gpus: int = 2, product: str = "Tesla-V100-SXM2-32GB",
              gpu_memory_mib: int = 32768) -> dict:
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    labels = {"kubernetes.io/hostname": name}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
        labels.update({"nvidia.com/gpu.product": product, "nvidia.com/gpu.memory": str(gpu_memory_mib),
                       "nvidia.com/gpu.count": str(gpus)})
    node = V1Node(api_version="v1", kind="Node", metadata=V1ObjectMeta(name=name, labels=labels),
                  spec=V1NodeSpec(), status=V1NodeStatus(allocatable=alloc, capacity=alloc))
    return to_json(node)


class Extender:
    """A gpusched-extender process on 127.0.0.1 (port chosen by the process)."""

    def __init__(self, *args: str, config: pathlib.Path = CONFIG):
        binary = os.environ.get("GPUSCHED_EXTENDER")
        if not binary or not os.path.exists(binary):
            pytest.skip("GPUSCHED_EXTENDER is not set to a built gpusched-extender (ctest sets it)")
        self.proc = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--config", str(config), *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError("gpusched-extender did not start: " + line + self.proc.stderr.read())
        self.port = int(line.rsplit(":", 1)[1])

    def request(self, method: str, path: str, body=None, raw: bytes | None = None) -> tuple[int, object]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        res = conn.getresponse()
        text = res.read().decode()
        conn.close()
        try:
            return res.status, json.loads(text)
        except json.JSONDecodeError:
            return res.status, text

    def post(self, verb: str, body) -> tuple[int, object]:
        return self.request("POST", "/" + verb, body)

    def metrics(self) -> dict:
        from prometheus_client.parser import text_string_to_metric_families
        status, text = self.request("GET", "/metrics")
        assert status == 200
        out = {}
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
        return out

    def wait_for(self, predicate, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self.metrics()):
                return
            time.sleep(0.05)
        raise AssertionError("condition not reached in time; metrics: " +
                             str({k: v for k, v in self.metrics().items() if k[0].startswith("gpusched_cluster")}))

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def gauge(m: dict, name: str) -> float:
    return m[(name, ())]


@pytest.fixture
def extender():
    procs = []

    def start(*args: str) -> Extender:
        e = Extender(*args)
        procs.append(e)
        return e

    yield start
    for p in procs:
        p.close()


@pytest.fixture
def apiserver():
    servers = []

    def start(nodes=(), pods=(), modeljobs=()) -> FakeApiServer:
        s = FakeApiServer(list(nodes), list(pods), list(modeljobs))
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.close()
