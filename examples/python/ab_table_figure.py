#!/usr/bin/env python3
"""The seed scenario's A/B table as a figure with gpusched.plot.plot_ab_table: metrics of a
baseline (A) and of gpusched's policy (B), with B's change relative to A, green where B is better.

    python3 examples/python/ab_table_figure.py --json ab.json --out ab_table.png

--json takes {"A": {metric: value}, "B": {metric: value}, "lower_is_better": [metric, ...]}
(optional keys "a_label", "b_label", "title"). Without it the script uses SYNTHETIC numbers, to
show the figure until the simulator's seed scenario lands.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from gpusched import plot

SYNTHETIC: dict[str, Any] = {
    "a_label": "default-scheduler",
    "b_label": "gpusched",
    "title": "SYNTHETIC numbers (seed scenario: ResNet50 + BERT inference next to training)",
    "A": {"GPU allocation %": 78.0, "GPU utilisation %": 52.0, "P50 latency ms": 11.0, "P99 latency ms": 48.0,
          "throughput req/s": 9100.0, "pending pods": 14.0, "preemptions": 6.0},
    "B": {"GPU allocation %": 86.0, "GPU utilisation %": 61.0, "P50 latency ms": 10.5, "P99 latency ms": 31.0,
          "throughput req/s": 9800.0, "pending pods": 5.0, "preemptions": 6.0},
    "lower_is_better": ["P50 latency ms", "P99 latency ms", "pending pods", "preemptions"],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="A/B metrics (default: synthetic)")
    ap.add_argument("--out", default="ab_table.png")
    args = ap.parse_args()
    data = SYNTHETIC
    if args.json:
        with open(args.json, encoding="utf-8") as f:
            data = json.load(f)
    plot.plot_ab_table(data["A"], data["B"], args.out, a_label=data.get("a_label", "A"),
                       b_label=data.get("b_label", "B"), lower_is_better=data.get("lower_is_better", ()),
                       title=data.get("title"))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
