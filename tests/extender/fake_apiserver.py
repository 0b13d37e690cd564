"""A stand-in for the Kubernetes API server, for gpusched-extender's loopback tests only.

It is NOT an API server: it serves just what the extender uses, from recorded Node and Pod JSON held
in memory, on 127.0.0.1:
  GET  /api/v1/nodes, /api/v1/pods                 lists, with metadata.resourceVersion
  GET  /api/v1/nodes?watch=1&resourceVersion=RV    watch events after RV, one JSON object per line
  GET  /apis/ai.tencent.com/v1/modeljobs[?watch=1]  the seed's ModelJobs, list and watch alike
  GET  /api/v1/namespaces/NS/pods/NAME             one pod
  POST /api/v1/namespaces/NS/pods/NAME/binding     a Binding: sets spec.nodeName and the Binding's
                                                   annotations on the pod (as the real one does)
Scripted faults: `gone[kind]` answers that many watches of that kind with an ERROR event of code 410
(resourceVersion too old); `drop[kind]` closes that many watch streams right after their first
batch of events; `refuse_binds` answers Binding POSTs with 500.
"""
from __future__ import annotations

import copy
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


class FakeApiServer:
    def __init__(self, nodes: list[dict], pods: list[dict], modeljobs: list[dict] | None = None):
        self.lock = threading.Condition()
        self.rv = 1
        self.nodes = {n["metadata"]["name"]: n for n in nodes}
        self.pods = {(p["metadata"].get("namespace", "default"), p["metadata"]["name"]): p for p in pods}
        self.modeljobs = {(j["metadata"].get("namespace", "default"), j["metadata"]["name"]): j for j in modeljobs or []}
        self.events: list[tuple[int, str, str, dict]] = []  # (rv, kind, type, object)
        self.gone = {"nodes": 0, "pods": 0, "modeljobs": 0}
        self.drop = {"nodes": 0, "pods": 0, "modeljobs": 0}
        self.refuse_binds = False
        self.bindings: list[dict] = []
        self.watches = {"nodes": 0, "pods": 0, "modeljobs": 0}
        self.lists = {"nodes": 0, "pods": 0, "modeljobs": 0}
        self.closing = False
        for obj in list(self.nodes.values()) + list(self.pods.values()) + list(self.modeljobs.values()):
            self._stamp(obj)
        handler = self._handler()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        with self.lock:
            self.closing = True
            self.lock.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()

    def _stamp(self, obj: dict) -> None:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)

    def _event(self, kind: str, type_: str, obj: dict) -> None:
        self._stamp(obj)
        self.events.append((self.rv, kind, type_, copy.deepcopy(obj)))
        self.lock.notify_all()

    # Changes made by a test.
    def add_node(self, node: dict) -> None:
        with self.lock:
            self.nodes[node["metadata"]["name"]] = node
            self._event("nodes", "ADDED", node)

    def add_pod(self, pod: dict) -> None:
        with self.lock:
            self.pods[(pod["metadata"].get("namespace", "default"), pod["metadata"]["name"])] = pod
            self._event("pods", "ADDED", pod)

    def put_modeljob(self, job: dict) -> None:
        with self.lock:
            key = (job["metadata"].get("namespace", "default"), job["metadata"]["name"])
            type_ = "MODIFIED" if key in self.modeljobs else "ADDED"
            self.modeljobs[key] = job
            self._event("modeljobs", type_, job)

    def delete_pod(self, namespace: str, name: str) -> None:
        with self.lock:
            pod = self.pods.pop((namespace, name))
            self._event("pods", "DELETED", pod)

    def _handler(self):
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # bodies end when the connection closes: watch streams too

            def log_message(self, *args):  # quiet
                pass

            def _send(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urlparse(self.path)
                q = parse_qs(url.query)
                parts = url.path.strip("/").split("/")
                if url.path in ("/api/v1/nodes", "/api/v1/pods", "/apis/ai.tencent.com/v1/modeljobs"):
                    kind = parts[-1]
                    if q.get("watch") == ["1"]:
                        return self._watch(kind, int(q.get("resourceVersion", ["0"])[0] or 0))
                    with api.lock:
                        api.lists[kind] += 1
                        items = list({"nodes": api.nodes, "pods": api.pods, "modeljobs": api.modeljobs}[kind].values())
                        body = {"kind": {"nodes": "NodeList", "pods": "PodList", "modeljobs": "ModelJobList"}[kind],
                                "apiVersion": "ai.tencent.com/v1" if kind == "modeljobs" else "v1",
                                "metadata": {"resourceVersion": str(api.rv)}, "items": copy.deepcopy(items)}
                    return self._send(200, body)
                if len(parts) == 6 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "pods":
                    with api.lock:
                        pod = api.pods.get((parts[3], parts[5]))
                        body = copy.deepcopy(pod)
                    return self._send(200, body) if pod else self._send(404, {"kind": "Status", "code": 404})
                return self._send(404, {"kind": "Status", "code": 404})

            def _watch(self, kind: str, since: int) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                with api.lock:
                    api.watches[kind] += 1
                    if api.gone[kind] > 0:
                        api.gone[kind] -= 1
                        line = {"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                                            "message": "too old resource version", "reason": "Expired",
                                                            "code": 410}}
                        self.wfile.write((json.dumps(line) + "\n").encode())
                        return
                    drop = api.drop[kind] > 0
                    if drop:
                        api.drop[kind] -= 1
                sent = since
                while True:
                    with api.lock:
                        batch = [e for e in api.events if e[1] == kind and e[0] > sent]
                        if not batch:
                            if drop or api.closing:
                                return
                            api.lock.wait(0.2)
                            continue
                    for rv, _, type_, obj in batch:
                        try:
                            self.wfile.write((json.dumps({"type": type_, "object": obj}) + "\n").encode())
                            self.wfile.flush()
                        except OSError:
                            return
                        sent = rv
                    if drop:
                        return  # the dropped connection the extender must survive

            def do_POST(self):
                parts = urlparse(self.path).path.strip("/").split("/")
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                if len(parts) == 7 and parts[6] == "binding":
                    with api.lock:
                        if api.refuse_binds:
                            return self._send(500, {"kind": "Status", "code": 500, "message": "refused by the test"})
                        pod = api.pods.get((parts[3], parts[5]))
                        if pod is None:
                            return self._send(404, {"kind": "Status", "code": 404})
                        if pod["spec"].get("nodeName"):
                            return self._send(409, {"kind": "Status", "code": 409, "message": "already bound"})
                        api.bindings.append(body)
                        pod["spec"]["nodeName"] = body["target"]["name"]
                        ann = body["metadata"].get("annotations") or {}
                        pod["metadata"].setdefault("annotations", {}).update(ann)
                        api._event("pods", "MODIFIED", pod)
                    return self._send(201, {"kind": "Status", "status": "Success", "code": 201})
                return self._send(404, {"kind": "Status", "code": 404})

        return Handler
