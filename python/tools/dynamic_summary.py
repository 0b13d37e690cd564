"""Summarises gpusched-sim --mode dynamic --output-json FILE (docs/quality.md, "Dynamic mode"): one row per
policy with means over seeds, then the arrival window's sample points and the 6-hour samples' pending pods.

    python3 python/tools/dynamic_summary.py out.json
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

Run = dict[str, Any]

COLUMNS: list[tuple[str, Callable[[Run], float], int]] = [
    ("tw alloc %", lambda r: r["time_weighted_allocation_pct"], 2),
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
    ("victims", lambda r: r["preempted_pods"], 1),
]


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        d = json.load(f)
    runs: list[Run] = d["runs"]
    policies = [s["policy"] for s in d["summary"]]
    by_policy = {p: [r for r in runs if r["policy"] == p] for p in policies}
    print("| policy | " + " | ".join(c[0] for c in COLUMNS) + " |")
    print("|---" + "|--:" * len(COLUMNS) + "|")
    for p in policies:
        cells = [f"{mean([get(r) for r in by_policy[p]]):.{k}f}" for _, get, k in COLUMNS]
        print(f"| {p} | " + " | ".join(cells) + " |")
    n = len(runs[0]["window_pending_pods"])
    print(f"\nwindow points (s): {runs[0]['window_time_s']}")
    for what, key, k in [("alloc %", "window_allocation_pct", 1), ("frag %", "window_frag_amount_pct", 1),
                         ("pending", "window_pending_pods", 0)]:
        print(f"\n{what} at the {n} points of the arrival window, mean over seeds:")
        for p in policies:
            print(f"{p:14s} " + " ".join(f"{mean([r[key][i] for r in by_policy[p]]):.{k}f}" for i in range(n)))
    print("\npending pods at the first four 6-hour samples, mean over seeds:")
    for p in policies:
        m = min(4, *(len(r["pending_pods"]) for r in by_policy[p]))
        print(f"{p:14s} " + " ".join(f"{mean([r['pending_pods'][i] for r in by_policy[p]]):.1f}" for i in range(m)))


if __name__ == "__main__":
    main()
