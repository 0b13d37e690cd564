"""A bounded load test over loopback: 32 concurrent clients schedule 320 one-GPU pods onto 16 nodes
of 8 GPUs (128 GPUs) through filter, prioritize and bind, each client stopping when no node is left.
No request may fail; exactly 128 binds succeed (every GPU used once), each recorded by the stand-in
API server with distinct device indices per node, and the extender's accounting agrees."""
from __future__ import annotations

import threading

from conftest import gauge, make_node, make_pod

CLIENTS, PODS_PER_CLIENT, NODES, GPUS = 32, 10, 16, 8


def test_concurrent_clients_never_double_book_a_gpu(extender, apiserver):
    nodes = [make_node(f"n{i:02d}", cpu="256", memory="1024Gi", gpus=GPUS) for i in range(NODES)]
    pods = [make_pod(f"p{c}-{k}", f"uid-{c}-{k}", cpu="1", memory="1Gi", gpus=1)
            for c in range(CLIENTS) for k in range(PODS_PER_CLIENT)]
    api = apiserver(nodes=nodes, pods=pods)
    ext = extender("--api-server", api.url, "--threads", "16")
    ext.wait_for(lambda m: gauge(m, "gpusched_cluster_nodes") == NODES)
    names = [n["metadata"]["name"] for n in nodes]
    failures: list[str] = []
    bound: list[tuple[str, str]] = []
    lock = threading.Lock()

    def client(c: int) -> None:
        for k in range(PODS_PER_CLIENT):
            pod = pods[c * PODS_PER_CLIENT + k]
            for _attempt in range(20):  # a bind lost to a concurrent one is retried, boundedly
                status, res = ext.post("filter", {"Pod": pod, "NodeNames": names})
                if status != 200:
                    failures.append(f"filter {status} {res}")
                    return
                feasible = res["NodeNames"]
                if not feasible:
                    return  # the cluster is full
                status, scores = ext.post("prioritize", {"Pod": pod, "NodeNames": feasible})
                if status != 200:
                    failures.append(f"prioritize {status} {scores}")
                    return
                best = max(scores, key=lambda h: (h["Score"], h["Host"]))["Host"]
                status, res = ext.post("bind", {"PodName": pod["metadata"]["name"], "PodNamespace": "default",
                                                "PodUID": pod["metadata"]["uid"], "Node": best})
                if status != 200:
                    failures.append(f"bind {status} {res}")
                    return
                if res["Error"] == "":
                    with lock:
                        bound.append((pod["metadata"]["name"], best))
                    break

    threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=240)
    assert not any(t.is_alive() for t in threads)
    assert failures == []
    assert len(bound) == NODES * GPUS
    assert len(api.bindings) == NODES * GPUS
    seen = set()
    for b in api.bindings:
        node = b["target"]["name"]
        idx = b["metadata"]["annotations"]["gpusched.ai.tencent.com/gpu-indices"]
        assert (node, idx) not in seen, f"GPU {idx} of {node} bound twice"
        seen.add((node, idx))
    assert {(n, str(g)) for n in names for g in range(GPUS)} == seen
    m = ext.metrics()
    assert gauge(m, "gpusched_cluster_pods_bound") == NODES * GPUS
    assert gauge(m, "gpusched_cluster_gpu_milli_allocated") == NODES * GPUS * 1000
