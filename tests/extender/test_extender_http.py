"""gpusched-extender over loopback: the k8s.io/kube-scheduler extender/v1 protocol with objects from
the official Kubernetes client's models; expected scores worked out by hand from the seed's profile
(data/scheduler-config.yaml: GPUCheck, LoadAware 10, ModelAffinity 5) in the comments."""
from __future__ import annotations

import socket
import time

from conftest import gauge, make_node, make_pod


def filter_args(pod, nodes=None, names=None):
    return {"Pod": pod, "Nodes": {"items": nodes} if nodes is not None else None, "NodeNames": names}


def test_full_node_mode_filter_prioritize_bind_metrics(extender):
    ext = extender()
    assert ext.request("GET", "/healthz") == (200, "ok")
    bad = make_node("bad-label")
    bad["metadata"]["labels"]["nvidia.com/gpu.memory"] = "lots"
    # A product name longer than 15 bytes is accepted since issue 13 (the core interns it).
    nodes = [make_node("v100-a"), make_node("cpu-only", gpus=0), make_node("v100-b"),
             make_node("rtx", product="GeForce-RTX-4090-D", gpus=1), bad]
    pod = make_pod("infer-0", "uid-0", cpu="1", memory="1Gi", gpus=1, cores=50,
                   labels={"ai.tencent.com/model-type": "resnet50"})

    status, res = ext.post("filter", filter_args(pod, nodes))
    assert status == 200 and res["Error"] == ""
    assert [n["metadata"]["name"] for n in res["Nodes"]["items"]] == ["v100-a", "v100-b", "rtx"]
    assert res["NodeNames"] is None
    assert res["FailedNodes"] == {}
    assert res["FailedAndUnresolvableNodes"]["cpu-only"] == "no GPU"
    assert "rtx" not in res["FailedAndUnresolvableNodes"]
    assert res["FailedAndUnresolvableNodes"]["bad-label"].startswith("Nodes.items[4].metadata.labels.nvidia.com/gpu.memory: ")

    # LoadAware (no metrics: allocation stands in for usage; the pod adds 85% of its CPU, 70% of its
    # memory, 100% of its GPU share): cpu (8000-850)*100/8000 = 89, memory (32768-716)*100/32768 = 97,
    # GPU (2000-500)*100/2000 = 75, mean 261/3 = 87. ModelAffinity: no replica yet, 50.
    # 87*10 + 50*5 = 1120 of 1500 -> 1120*10/1500 = 7.47, rounded 7.
    status, res = ext.post("prioritize", filter_args(pod, nodes[:1] + nodes[2:3]))
    assert status == 200
    assert res == [{"Host": "v100-a", "Score": 7}, {"Host": "v100-b", "Score": 7}]

    status, res = ext.post("bind", {"PodName": "infer-0", "PodNamespace": "default", "PodUID": "uid-0", "Node": "v100-a"})
    assert (status, res) == (200, {"Error": ""})
    status, res = ext.post("bind", {"PodName": "infer-0", "PodNamespace": "default", "PodUID": "uid-0", "Node": "v100-a"})
    assert res["Error"] == "pod default/infer-0 is already bound"

    # A second resnet50 pod: on v100-a cpu (8000-1000-850)*100/8000 = 76, memory (32768-1024-716)*100/32768 = 94,
    # GPU (2000-500-500)*100/2000 = 50, mean 220/3 = 73; ModelAffinity 100 (a replica runs there):
    # 730 + 500 = 1230 -> 12300/1500 = 8.2, rounded 8. v100-b as before: 7.
    pod2 = make_pod("infer-1", "uid-1", cpu="1", memory="1Gi", gpus=1, cores=50,
                    labels={"ai.tencent.com/model-type": "resnet50"})
    status, res = ext.post("prioritize", filter_args(pod2, nodes[:1] + nodes[2:3]))
    assert res == [{"Host": "v100-a", "Score": 8}, {"Host": "v100-b", "Score": 7}]

    m = ext.metrics()
    assert m[("gpusched_extender_requests_total", (("result", "ok"), ("verb", "filter")))] == 1
    assert m[("gpusched_extender_requests_total", (("result", "ok"), ("verb", "prioritize")))] == 2
    assert m[("gpusched_extender_requests_total", (("result", "ok"), ("verb", "bind")))] == 1
    assert m[("gpusched_extender_requests_total", (("result", "error"), ("verb", "bind")))] == 1
    assert m[("gpusched_extender_node_rejections_total", (("reason", "no GPU"),))] == 1
    assert m[("gpusched_extender_node_rejections_total", (("reason", "unknown or untranslatable node"),))] == 1
    assert m[("gpusched_extender_request_duration_seconds_count", (("verb", "prioritize"),))] == 2
    assert m[("gpusched_extender_request_duration_seconds_bucket", (("le", "+Inf"), ("verb", "filter")))] == 1
    assert gauge(m, "gpusched_cluster_nodes") == 4  # v100-a, cpu-only, v100-b, rtx; the untranslatable node is not kept
    assert gauge(m, "gpusched_cluster_pods_bound") == 1
    assert gauge(m, "gpusched_cluster_gpus") == 5  # 2 + 0 + 2 + 1
    assert gauge(m, "gpusched_cluster_gpu_milli_capacity") == 5000
    assert gauge(m, "gpusched_cluster_gpu_milli_allocated") == 500


def test_bad_requests_get_400_naming_the_field_and_change_nothing(extender):
    ext = extender("--max-body-bytes", "4096")
    nodes = [make_node("v100-a")]
    status, res = ext.post("filter", filter_args(make_pod("p", "u", gpus=1), nodes))
    assert status == 200
    before = ext.metrics()

    status, res = ext.request("POST", "/filter", raw=b'{"Pod": {"metadata": ')
    assert status == 400 and res["Error"].startswith("request body: [json.exception.parse_error.101]")
    bad = make_pod("p", "u", gpus=1)
    bad["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "abc"
    status, res = ext.post("filter", filter_args(bad, nodes))
    assert (status, res["Error"]) == (400, "Pod.spec.containers[0].resources.limits.cpu: 'abc' is not a Kubernetes quantity: no digits")
    status, res = ext.post("filter", {"Pod": make_pod("p", "u")})
    assert (status, res["Error"]) == (400, "Nodes: one of Nodes or NodeNames is required")
    status, res = ext.post("bind", {"PodName": "p", "PodNamespace": "default", "Node": "v100-a"})
    assert (status, res["Error"]) == (400, "PodUID: missing")
    status, res = ext.request("POST", "/prioritize", raw=b'{"Pod": "' + b"x" * 5000 + b'"}')
    assert (status, res["Error"]) == (400, "request body: 5011 bytes exceed the limit of 4096")

    # A client that sends half a request and disconnects: the server carries on.
    s = socket.create_connection(("127.0.0.1", ext.port))
    s.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"Pod\":")
    s.close()
    assert ext.request("GET", "/healthz") == (200, "ok")

    after = ext.metrics()
    for name in ("gpusched_cluster_nodes", "gpusched_cluster_pods_bound", "gpusched_cluster_gpu_milli_allocated"):
        assert gauge(after, name) == gauge(before, name)


def test_failed_bind_leaves_state_as_before(extender, apiserver):
    node = make_node("v100-a", gpus=1)
    pod = make_pod("train", "uid-t", gpus=1)
    api = apiserver(nodes=[node], pods=[pod])
    api.refuse_binds = True
    ext = extender("--api-server", api.url)
    ext.wait_for(lambda m: gauge(m, "gpusched_cluster_nodes") == 1)
    assert ext.post("filter", filter_args(pod, names=["v100-a"]))[1]["NodeNames"] == ["v100-a"]
    status, res = ext.post("bind", {"PodName": "train", "PodNamespace": "default", "PodUID": "uid-t", "Node": "v100-a"})
    assert status == 200 and res["Error"].startswith("binding pod default/train to 'v100-a': API server answered 500")
    m = ext.metrics()
    assert gauge(m, "gpusched_cluster_pods_bound") == 0
    assert gauge(m, "gpusched_cluster_gpu_milli_allocated") == 0

    api.refuse_binds = False
    status, res = ext.post("bind", {"PodName": "train", "PodNamespace": "default", "PodUID": "uid-t", "Node": "v100-a"})
    assert res == {"Error": ""}
    assert len(api.bindings) == 1
    b = api.bindings[0]
    assert b["kind"] == "Binding" and b["target"] == {"apiVersion": "v1", "kind": "Node", "name": "v100-a"}
    assert b["metadata"]["annotations"] == {"gpusched.ai.tencent.com/gpu-indices": "0"}
    assert api.pods[("default", "train")]["metadata"]["annotations"]["gpusched.ai.tencent.com/gpu-indices"] == "0"
    m = ext.metrics()
    assert gauge(m, "gpusched_cluster_gpu_milli_allocated") == 1000


def test_node_names_mode_follows_list_and_watch(extender, apiserver):
    running = make_pod("old", "uid-old", gpus=2, node="v100-a", annotations={"gpusched.ai.tencent.com/gpu-indices": "0,1"})
    api = apiserver(nodes=[make_node("v100-a"), make_node("v100-b")], pods=[running])
    api.gone["pods"] = 1   # the first pod watch answers 410 Gone: the extender must list pods again
    api.drop["nodes"] = 1  # the first node watch is dropped after its first batch: reconnect
    ext = extender("--api-server", api.url)
    ext.wait_for(lambda m: gauge(m, "gpusched_cluster_nodes") == 2 and gauge(m, "gpusched_cluster_gpu_milli_allocated") == 2000)
    # The pods are listed again after the 410. Three relists alone do not show it: the first lists of
    # nodes, pods and ModelJobs make three before it (CI saw that race once).
    ext.wait_for(lambda m: api.lists["pods"] >= 2 and m[("gpusched_extender_relists_total", ())] >= 3)

    pod = make_pod("new", "uid-new", gpus=1)
    status, res = ext.post("filter", filter_args(pod, names=["v100-a", "v100-b", "ghost"]))
    assert status == 200
    assert res["NodeNames"] == ["v100-b"] and res["Nodes"] is None
    assert set(res["FailedNodes"]) == {"v100-a"}  # both GPUs held by 'old': evicting it would help
    assert res["FailedAndUnresolvableNodes"] == {"ghost": "node 'ghost' is not in gpusched-extender's cache"}

    api.delete_pod("default", "old")
    ext.wait_for(lambda m: gauge(m, "gpusched_cluster_gpu_milli_allocated") == 0)
    api.add_node(make_node("v100-c", gpus=4))  # arrives over a reconnected watch (the first was dropped)
    ext.wait_for(lambda m: gauge(m, "gpusched_cluster_nodes") == 3)
    assert api.watches["nodes"] >= 2
    status, res = ext.post("filter", filter_args(pod, names=["v100-a", "v100-c"]))
    assert res["NodeNames"] == ["v100-a", "v100-c"]


def test_preempt_reprieves_the_more_important_victim(extender, apiserver):
    low1 = make_pod("low-1", "uid-l1", gpus=1, node="v100-a", labels={"ai.tencent.com/priority": "2"},
                    annotations={"gpusched.ai.tencent.com/gpu-indices": "0"})
    low2 = make_pod("low-2", "uid-l2", gpus=1, node="v100-a", labels={"ai.tencent.com/priority": "1"},
                    annotations={"gpusched.ai.tencent.com/gpu-indices": "1"})
    api = apiserver(nodes=[make_node("v100-a")], pods=[low1, low2])
    ext = extender("--api-server", api.url)
    ext.wait_for(lambda m: gauge(m, "gpusched_cluster_gpu_milli_allocated") == 2000)
    high = make_pod("high", "uid-h", gpus=1, labels={"ai.tencent.com/priority": "9"})
    # Both leave, the pod fits; low-1 (priority 2) is added back first and still leaves one GPU:
    # reprieved. low-2 is then the only victim.
    status, res = ext.post("preempt", {"Pod": high, "NodeNameToMetaVictims": {
        "v100-a": {"Pods": [{"UID": "uid-l1"}, {"UID": "uid-l2"}], "NumPDBViolations": 0},
        "elsewhere": {"Pods": [{"UID": "uid-x"}], "NumPDBViolations": 1}}})
    assert status == 200
    assert res == {"NodeNameToMetaVictims": {
        "v100-a": {"Pods": [{"UID": "uid-l2"}], "NumPDBViolations": 0},
        "elsewhere": {"Pods": [{"UID": "uid-x"}], "NumPDBViolations": 1}}}
    # The what-if left the state as it was.
    assert gauge(ext.metrics(), "gpusched_cluster_gpu_milli_allocated") == 2000
    # A 3-GPU pod cannot fit on a 2-GPU node whatever leaves: the node is dropped.
    status, res = ext.post("preempt", {"Pod": make_pod("big", "uid-b", gpus=3, labels={"ai.tencent.com/priority": "9"}),
                                       "NodeNameToMetaVictims": {"v100-a": {"Pods": [{"UID": "uid-l2"}], "NumPDBViolations": 0}}})
    assert res == {"NodeNameToMetaVictims": {}}


def modeljob(name: str, **spec) -> dict:
    return {"apiVersion": "ai.tencent.com/v1", "kind": "ModelJob", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def owned_by(pod: dict, job: str) -> dict:
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "ai.tencent.com/v1", "kind": "ModelJob", "name": job,
                                           "uid": "mj-" + job, "controller": True}]
    return pod


def test_modeljob_objects_give_their_pods_priority_over_labels(extender, apiserver):
    # Two running pods on a 2-GPU node; by their labels low-1 (2) outranks low-2 (1). low-2 is owned by
    # the ModelJob "serving", whose priority 8 wins over its label: low-2 is now the more important.
    low1 = make_pod("low-1", "uid-l1", gpus=1, node="v100-a", labels={"ai.tencent.com/priority": "2"},
                    annotations={"gpusched.ai.tencent.com/gpu-indices": "0"})
    low2 = owned_by(make_pod("low-2", "uid-l2", gpus=1, node="v100-a", labels={"ai.tencent.com/priority": "1"},
                             annotations={"gpusched.ai.tencent.com/gpu-indices": "1"}), "serving")
    api = apiserver(nodes=[make_node("v100-a")], pods=[low1, low2],
                    modeljobs=[modeljob("serving", modelType="resnet50", priority=8, qosClass="Guaranteed")])
    ext = extender("--api-server", api.url)
    # The ModelJobs have their own informer: waited for, not assumed listed once the pods are.
    ext.wait_for(lambda m: gauge(m, "gpusched_cluster_gpu_milli_allocated") == 2000 and api.lists["modeljobs"] >= 1)
    high = make_pod("high", "uid-h", gpus=1, labels={"ai.tencent.com/priority": "9"})
    args = {"Pod": high, "NodeNameToMetaVictims": {
        "v100-a": {"Pods": [{"UID": "uid-l1"}, {"UID": "uid-l2"}], "NumPDBViolations": 0}}}

    def victims_become(uids: list[str]) -> None:
        deadline = time.monotonic() + 10
        while True:
            status, res = ext.post("preempt", args)
            assert status == 200
            got = [p["UID"] for p in res["NodeNameToMetaVictims"]["v100-a"]["Pods"]]
            if got == uids or time.monotonic() > deadline:
                assert got == uids
                return
            time.sleep(0.05)

    # Reprieve order: low-2 (8) is added back first and fits; low-1 (2) is the victim.
    victims_become(["uid-l1"])
    # The ModelJob drops its priority field (watch MODIFIED): low-2 falls back to its label (1).
    api.put_modeljob(modeljob("serving", modelType="resnet50"))
    victims_become(["uid-l2"])
    # Priority 3 (above low-1's 2) from the ModelJob again.
    api.put_modeljob(modeljob("serving", priority=3))
    victims_become(["uid-l1"])


def test_kept_alive_connection_and_bodies_beyond_four_times_the_limit(extender):
    # One connection carries many requests (the server closes it only after --keep-alive-requests);
    # a request read in full but refused (400) leaves the connection usable. A body over four times
    # --max-body-bytes is not read: cpp-httplib answers 413 and closes.
    import http.client
    import json

    ext = extender("--max-body-bytes", "4096", "--keep-alive-requests", "3")
    nodes = [make_node("v100-a")]
    conn = http.client.HTTPConnection("127.0.0.1", ext.port, timeout=30)
    statuses = []
    for body in [filter_args(make_pod("p", "u", gpus=1), nodes), {"Pod": 1}, filter_args(make_pod("p", "u", gpus=1), nodes),
                 filter_args(make_pod("q", "v", gpus=1), nodes)]:
        conn.request("POST", "/filter", body=json.dumps(body), headers={"Content-Type": "application/json"})
        res = conn.getresponse()
        statuses.append((res.status, res.getheader("Connection")))
        res.read()
    conn.close()
    # The third answer is the connection's last (--keep-alive-requests 3); http.client reconnects for the fourth.
    assert statuses == [(200, None), (400, None), (200, "close"), (200, None)]
    status, res = ext.request("POST", "/filter", raw=b"x" * (4 * 4096 + 1))
    assert status == 413
    assert ext.request("GET", "/healthz") == (200, "ok")


def test_clients_that_leave_before_the_answer_do_not_end_the_server(extender):
    # Clients that send a whole request and go before the answer: the server then writes to a closed
    # connection (EPIPE; cpp-httplib ignores SIGPIPE, which would end the process) and carries on.
    import json

    ext = extender()
    # 3,000 unknown names: a large answer (each is FailedAndUnresolvable), and no change of state.
    body = json.dumps(filter_args(make_pod("p", "u", gpus=1), names=[f"ghost-{i}" for i in range(3000)])).encode()
    for _ in range(10):
        s = socket.create_connection(("127.0.0.1", ext.port))
        s.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        s.close()
    ext.wait_for(lambda m: m[("gpusched_extender_requests_total", (("result", "ok"), ("verb", "filter")))] == 10)
    assert ext.request("GET", "/healthz") == (200, "ok")
    assert ext.proc.poll() is None


def test_answers_are_uncompressed_unless_compress_is_given(extender):
    """kube-scheduler's Go client sends "Accept-Encoding: gzip" (net/http's default); the answer's
    bytes are the same JSON either way, gzipped only with --compress (RFC 1952: magic 1f 8b)."""
    import gzip
    import http.client
    import json

    body = json.dumps({"Pod": make_pod("p", "uid-p"), "NodeNames": ["n1", "n2"]}).encode()
    answers = {}
    for args in ((), ("--compress",)):
        e = extender(*args)
        conn = http.client.HTTPConnection("127.0.0.1", e.port, timeout=30)
        conn.request("POST", "/prioritize", body=body, headers={"Content-Type": "application/json", "Accept-Encoding": "gzip"})
        res = conn.getresponse()
        raw = res.read()
        conn.close()
        assert res.status == 200
        answers[args] = (res.getheader("Content-Encoding"), res.getheader("Content-Type"), raw)
    plain_enc, plain_type, plain = answers[()]
    gz_enc, gz_type, gz = answers[("--compress",)]
    assert plain_enc is None and plain_type == "application/json; charset=utf-8"
    assert json.loads(plain) == [{"Host": "n1", "Score": 0}, {"Host": "n2", "Score": 0}]  # no nodes known: 0 each
    assert gz_enc == "gzip" and gz_type == "application/json" and gz[:2] == b"\x1f\x8b"
    assert gzip.decompress(gz) == plain
