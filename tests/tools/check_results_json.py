"""gpusched-sim's JSON against docs/results.schema.json, and its progress bar's default.

    python3 check_results_json.py <gpusched-sim> <source dir> <project version> [scenario]

Runs the openb replay (paper and dynamic mode) on the small traces of tests/data/cli/ and, with
"scenario", a 10-minute run of data/scenarios/seed.yaml and a 2-hour run of one profile of
data/scenarios/seed-world.yaml (with mutated copies the schema must reject); validates each JSON with the jsonschema
package (Draft 2020-12) and checks values worked out by hand. Exits non-zero with the reason.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def fail(msg: str) -> None:
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def main() -> None:
    try:
        import jsonschema
    except ImportError:
        fail("the Python package jsonschema is missing (scripts/install-deps.sh installs it)")
    exe, src, version = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    with_scenario = len(sys.argv) > 4 and sys.argv[4] == "scenario"
    schema = json.loads((src / "docs/results.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    data = src / "tests/data/cli"

    def run(args: list[str], out: Path | None) -> tuple[dict, str]:
        # stderr is a pipe here, not a terminal: no progress bar unless --progress forces it.
        p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            fail(f"{args}: exit {p.returncode}: {p.stderr}")
        doc = json.loads(out.read_text() if out else p.stdout)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        if errors:
            fail(f"{args}: {errors[0].message} at {list(errors[0].path)}")
        if doc["version"] != version:
            fail(f"version {doc['version']!r}, CMake's project version is {version!r}")
        for i in doc["inputs"]:
            if not i["path"].startswith("<") and hashlib.sha256(Path(i["path"]).read_bytes()).hexdigest() != i["sha256"]:
                fail(f"sha256 of {i['path']} differs from hashlib's")
        return doc, p.stderr

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        # Paper mode: one 1-GPU node, pods g1 (half a GPU) and g2 (a whole one): g2 fails.
        doc, err = run(["--nodes", str(data / "nodes_one_gpu.csv"), "--pods", str(data / "pods_blank_end.csv"),
                        "--policy", "FGD,BestFit", "--seeds", "1-3", "--tune", "0.5", "-q", "--output-json", str(out)],
                       out)
        if "runs," in err:
            fail(f"a progress bar on a stderr that is not a terminal: {err!r}")
        keys = [f["key"] for f in doc["fields"]]
        for r in doc["runs"]:
            if not set(keys) <= set(r):
                fail(f"run lacks field keys {set(keys) - set(r)}")
        s = doc["summary"][0]["metrics"]
        for k, f in zip(keys, doc["fields"]):
            vals = s[k]["values"]
            if len(vals) != 3 or (f["kind"] == "integer" and not all(isinstance(v, int) for v in vals)):
                fail(f"{k}: three {f['kind']} values wanted (one per seed), got {vals}")
            mean = sum(vals) / 3
            sd = (sum((v - mean) ** 2 for v in vals) / 2) ** 0.5
            # 95% half-width with n = 3: t_{0.975,2} = 4.303 (NIST/SEMATECH table 1.3.6.7.2) x sd / sqrt(3)
            if abs(s[k]["mean"] - mean) > 1e-9 * max(1, abs(mean)) or abs(s[k]["ci95"] - 4.303 * sd / 3**0.5) > 1e-9 * max(1, sd):
                fail(f"{k}: mean/ci95 {s[k]['mean']}/{s[k]['ci95']}, by hand {mean}/{4.303 * sd / 3**0.5}")
        if "queue" in doc or validator.is_valid(dict(doc, queue="fifo")):
            fail("paper mode: the schema must refuse a queue order (a dynamic-mode option)")
        for a, u in zip(s["allocation_pct_at_tune"]["values"], s["unallocated_pct_at_tune"]["values"]):
            if abs(a + u - 100) > 1e-9:
                fail(f"allocated {a} + unallocated {u} is not 100")
        # Every arrival is g1 (half a GPU; g2, a whole one, would pass the 50% target): none fails.
        if s["failed_pods"]["values"] != [0, 0, 0]:
            fail(f"paper mode, tune 0.5 of 1 GPU: no pod can fail; got {s['failed_pods']}")
        _, err = run(["--nodes", str(data / "nodes_one_gpu.csv"), "--pods", str(data / "pods_blank_end.csv"),
                      "--policy", "FGD", "--seeds", "1", "-q", "--progress", "--output-json", str(out)], out)
        if "1/1 runs" not in err:
            fail(f"--progress did not force the bar on: {err!r}")

        # Dynamic mode (tests/data/cli/pods_timed.csv, one GPU): p1 runs 0-100; p2 arrives at 10, waits
        # 90 s for p1 and runs; p3 arrives at 20 and is withdrawn at its deletion time 50.
        doc, _ = run(["--mode", "dynamic", "--nodes", str(data / "nodes_one_gpu.csv"), "--pods",
                      str(data / "pods_timed.csv"), "--policy", "FGD", "--seeds", "1", "-q", "--output-json",
                      str(out)], out)
        m = doc["summary"][0]["metrics"]
        want = {"placed_pods": 2, "waited_pods": 1, "withdrawn_pods": 1, "delay_max_s": 90.0, "delay_mean_s": 45.0,
                "time_weighted_pending_pods": 0.5}
        for k, v in want.items():
            if m[k]["values"] != [v]:
                fail(f"dynamic {k}: want [{v}], got {m[k]['values']}")
        if doc.get("queue") != "fifo":
            fail(f"dynamic mode without --queue: want queue 'fifo', got {doc.get('queue')!r}")
        # The last window point is the last arrival (20), after its events: p1 holds the GPU, p2 and p3
        # (one whole GPU each) wait: 200 % of the one GPU asked by waiting one-GPU pods, nothing free.
        run0 = doc["runs"][0]
        last = {k: run0["window_" + k][-1] for k in ("time_s", "allocation_pct", "free_in_whole_gpus_pct",
                                                      "free_in_partly_used_gpus_pct", "waiting_one_gpu_pct",
                                                      "waiting_multi_gpu_pct")}
        if last != {"time_s": 20, "allocation_pct": 100.0, "free_in_whole_gpus_pct": 0.0,
                    "free_in_partly_used_gpus_pct": 0.0, "waiting_one_gpu_pct": 200.0, "waiting_multi_gpu_pct": 0.0}:
            fail(f"dynamic mode, the last window point: {last}")
        # Before the first arrival the GPU is wholly free.
        if (run0["free_in_whole_gpus_pct"][0], run0["allocation_pct"][0]) != (100.0, 0.0):
            fail(f"dynamic mode, the sample at 0: free {run0['free_in_whole_gpus_pct'][0]}, "
                 f"allocated {run0['allocation_pct'][0]}")

        # Preemption (tests/data/cli/pods_preempt.csv, one GPU; --priority-by-qos: BE 5000, LS 9000): lo (BE)
        # runs from 0 for 100 s; hi (LS) arrives at 10 and fits nowhere. Without --preemption hi waits and
        # is withdrawn at its deletion time 30. With it, hi preempts lo (1 preemption, 1 victim) and runs
        # 10-30; lo waits again and is placed at 30, 30 s after its arrival: 3 placements, delays 0, 0, 30.
        # The window is [0, 10] (the two arrivals), which lo's first run fills: all of it is lost work.
        preempt = ["--mode", "dynamic", "--nodes", str(data / "nodes_one_gpu.csv"), "--pods",
                   str(data / "pods_preempt.csv"), "--policy", "FGD", "--seeds", "1", "--output-json", str(out)]
        cases = [([], {"preemptions": 0, "preempted_pods": 0, "placed_pods": 1, "withdrawn_pods": 1,
                       "time_weighted_preempted_allocation_pct": 0.0}),
                 (["--preemption", "--priority-by-qos"],
                  {"preemptions": 1, "preempted_pods": 1, "placed_pods": 3, "waited_pods": 1, "withdrawn_pods": 0,
                   "delay_max_s": 30.0, "delay_mean_s": 10.0, "time_weighted_allocation_pct": 100.0,
                   "time_weighted_preempted_allocation_pct": 100.0})]
        for flags, want in cases:
            p = subprocess.run([exe, *preempt, *flags], capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                fail(f"{flags}: exit {p.returncode}: {p.stderr}")
            doc = json.loads(out.read_text())
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
            if errors:
                fail(f"{flags}: {errors[0].message} at {list(errors[0].path)}")
            if doc["preemption"] != bool(flags) or doc["priority_by_qos"] != bool(flags):
                fail(f"{flags}: preemption/priority_by_qos {doc['preemption']}/{doc['priority_by_qos']}")
            m = doc["summary"][0]["metrics"]
            for k, v in want.items():
                if m[k]["values"] != [v]:
                    fail(f"dynamic {flags} {k}: want [{v}], got {m[k]['values']}")
            if doc["queue"] != "fifo":
                fail(f"{flags}: want queue 'fifo', got {doc['queue']!r}")
            # By priority (JSON keys are strings): without --priority-by-qos both pods have priority 0 and
            # hi is withdrawn; with it, lo is BE (5000) and hi LS (9000), and nothing is withdrawn.
            by_prio = (doc["runs"][0]["pods_by_priority"], doc["runs"][0]["withdrawn_by_priority"])
            want_prio = ({"5000": 1, "9000": 1}, {"5000": 0, "9000": 0}) if flags else ({"0": 2}, {"0": 1})
            if by_prio != want_prio:
                fail(f"{flags}: pods and withdrawn by priority {by_prio}, want {want_prio}")
            # The table shows the preemption counts only when the replay preempts.
            if ("preemptions" in p.stdout) != bool(flags):
                fail(f"{flags}: preemption columns {'missing from' if flags else 'in'} the table:\n{p.stdout}")
        # --queue priority takes --priority-by-qos without --preemption: hi (LS) waits for lo (BE) and is
        # withdrawn at 30 as above (one pod waits, so the order changes nothing); the header says so.
        doc, _ = run([*preempt, "--queue", "priority", "--priority-by-qos", "-q"], out)
        m = doc["summary"][0]["metrics"]
        if (doc["queue"], doc["priority_by_qos"], doc["preemption"]) != ("priority", True, False):
            fail(f"--queue priority: header {doc['queue']!r}, {doc['priority_by_qos']}, {doc['preemption']}")
        if (m["placed_pods"]["values"], m["withdrawn_pods"]["values"]) != ([1], [1]):
            fail(f"--queue priority: placed {m['placed_pods']['values']}, withdrawn {m['withdrawn_pods']['values']}")

        if with_scenario:
            doc, err = run(["--scenario", str(src / "data/scenarios/seed.yaml"), "--profiles", "kube-default,gpusched",
                            "--seeds", "1-2", "--duration", "600", "--json"], None)
            if "runs," in err:
                fail(f"a progress bar on a stderr that is not a terminal: {err!r}")
            keys = [f["key"] for f in doc["fields"]]
            for p in doc["profiles"]:
                if list(doc["results"][p]) != keys:
                    fail(f"profile {p}: keys {list(doc['results'][p])} are not the field list's {keys}")
                for k in keys:
                    if len(doc["results"][p][k]["values"]) != 2:
                        fail(f"{p}.{k}: one value per seed wanted")
            if doc["scenario"] != "seed" or doc["duration_s"] != 600:
                fail(f"scenario {doc['scenario']!r}, duration {doc['duration_s']}")

            # The seed's world (docs/experiment-world.md): one profile, one seed, two simulated hours (the
            # first is warm-up), with its capacity sweep; kind world_ab, per profile its services' metrics.
            doc, _ = run(["--scenario", str(src / "data/scenarios/seed-world.yaml"), "--profiles", "kube-exclusive",
                          "--seeds", "1", "--duration", "7200", "--json"], None)
            if doc["kind"] != "world_ab" or doc["duration_s"] != 7200 or doc["seeds"] != [1]:
                fail(f"world: kind {doc['kind']!r}, duration {doc['duration_s']}, seeds {doc['seeds']}")
            res = doc["results"]["kube-exclusive"]
            for svc in doc["services"]:
                for k in [f["key"] for f in doc["service_fields"]]:
                    if len(res[svc][k]["values"]) != 1:
                        fail(f"world {svc}.{k}: one value per seed wanted")
                # Two hours, the first warm-up: one hourly P99 (the second hour's), per seed.
                if len(res[svc]["p99_ms_by_hour"]) != 1 or len(res[svc]["p99_ms_by_hour"][0]) != 1:
                    fail(f"world {svc}: p99_ms_by_hour {res[svc]['p99_ms_by_hour']}")
            for k in [f["key"] for f in doc["fields"]]:
                if len(res[k]["values"]) != 1:
                    fail(f"world {k}: one value per seed wanted")
            # Mutations the schema must catch: a summary without its mean, a renamed sweep key, a metric
            # value that is not a number.
            svc = doc["services"][0]
            mutations = [lambda d: d["results"]["kube-exclusive"][svc]["goodput_qps"].pop("mean"),
                         lambda d: d["results"]["kube-exclusive"][svc].__setitem__(
                             "sweeps", d["results"]["kube-exclusive"][svc].pop("sweep")),
                         lambda d: d["results"]["kube-exclusive"]["oom_kills"].__setitem__("values", ["0"]),
                         lambda d: d.pop("services")]
            for i, mutate in enumerate(mutations):
                bad = json.loads(json.dumps(doc))
                mutate(bad)
                if validator.is_valid(bad):
                    fail(f"world: mutation {i} passes the schema")
    print("results JSON: schema and hand-checked values OK")


if __name__ == "__main__":
    main()
