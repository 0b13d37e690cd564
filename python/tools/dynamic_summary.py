"""Summarises gpusched-sim --mode dynamic --output-json FILE (docs/quality.md, "Dynamic mode"): one row per
policy with means over seeds, then the arrival window's sample points.

    python3 python/tools/dynamic_summary.py out.json
"""
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
def mean(xs): return sum(xs) / len(xs)
cols = [("tw alloc %", lambda r: r["time_weighted_allocation_pct"], 2),
        ("alloc % at end", lambda r: r["window_allocation_pct"][-1], 2),
        ("tw frag %", lambda r: r["time_weighted_frag_amount_pct"], 2),
        ("frag % at end", lambda r: r["window_frag_amount_pct"][-1], 2),
        ("pending at end", lambda r: r["window_pending_pods"][-1], 1),
        ("max pending", lambda r: r["max_pending_pods"], 1),
        ("waited", lambda r: r["waited_pods"], 1),
        ("withdrawn", lambda r: r["withdrawn_pods"], 1),
        ("delay mean s", lambda r: r["delay_mean_s"], 2),
        ("delay max s", lambda r: r["delay_max_s"], 1),
        ("preemptions", lambda r: r["preemptions"], 1),
        ("victims", lambda r: r["preempted_pods"], 1)]
pols = [s["policy"] for s in d["summary"]]
print("| policy | " + " | ".join(c[0] for c in cols) + " |")
print("|---" + "|--:" * len(cols) + "|")
for p in pols:
    rs = [r for r in runs if r["policy"] == p]
    print(f"| {p} | " + " | ".join(f"{mean([f(r) for r in rs]):.{k}f}" for _, f, k in cols) + " |")
print()
n = len(runs[0]["window_pending_pods"])
print(f"window points (s): {runs[0]['window_time_s']}")
for what, key, k in [("alloc %", "window_allocation_pct", 1), ("frag %", "window_frag_amount_pct", 1), ("pending", "window_pending_pods", 0)]:
    print(f"\n{what} at the {n} points of the arrival window, mean over seeds:")
    for p in pols:
        rs = [r for r in runs if r["policy"] == p]
        print(f"{p:14s} " + " ".join(f"{mean([r[key][i] for r in rs]):.{k}f}" for i in range(n)))
print("\npending pods at the 6-hour samples after the window (first 4), mean over seeds:")
for p in pols:
    rs = [r for r in runs if r["policy"] == p]
    m = min(len(r["pending_pods"]) for r in rs)
    print(f"{p:14s} " + " ".join(f"{mean([r['pending_pods'][i] for r in rs]):.1f}" for i in range(min(4, m))))
