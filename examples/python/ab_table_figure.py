#!/usr/bin/env python3
"""The seed scenario's A/B table as a figure: kube-default (A) against gpusched's profile (B) on the
same seeds, the mean of each metric and B's change, green where B is better.

    python3 examples/python/ab_table_figure.py --out ab_table.png                     # the scenario's seeds, 1 day each
    python3 examples/python/ab_table_figure.py --seeds 1-3 --duration 21600 --workers 2
    python3 examples/python/ab_table_figure.py --out ab.png --csv ab.csv --latex ab.tex  # the table as data too
    python3 examples/python/ab_table_figure.py --json ab.json --out ab_table.png      # {"A": {...}, "B": {...}}

Each run simulates the scenario's period (data/scenarios/seed.yaml: 86400 s, ~8 s of CPU per run);
a progress bar follows the runs. --json draws given numbers instead ({"A": {metric: value}, "B":
{metric: value}, "lower_is_better": [...]}, optional "a_label", "b_label", "title", "a_ci", "b_ci"
(95% CI half-widths by metric), "counts" (metrics shown as integers)). --csv / --latex also
write the table as data.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import gpusched as gs
from gpusched import plot

REPO = Path(__file__).resolve().parents[2]


def seed_range(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default=str(REPO / "data" / "scenarios" / "seed.yaml"))
    ap.add_argument("--profiles", default="kube-default,gpusched", help="A,B")
    ap.add_argument("--seeds", help="e.g. 1-5 (default: the scenario's)")
    ap.add_argument("--duration", type=float, help="simulated seconds per run (default: the scenario's)")
    ap.add_argument("--workers", type=int, default=1, help="runs in parallel threads")
    ap.add_argument("--json", help="draw these A/B numbers instead of running the experiment")
    ap.add_argument("--out", default="ab_table.png")
    ap.add_argument("--csv", help="also write the table as CSV (gpusched.plot.table_csv)")
    ap.add_argument("--latex", help="also write the table as a LaTeX booktabs tabular (gpusched.plot.table_latex)")
    args = ap.parse_args()
    if args.json:
        with open(args.json, encoding="utf-8") as f:
            data = json.load(f)
        plot.plot_ab_table(data["A"], data["B"], args.out, a_label=data.get("a_label", "A"),
                           b_label=data.get("b_label", "B"), lower_is_better=data.get("lower_is_better", ()),
                           title=data.get("title"), a_ci=data.get("a_ci"), b_ci=data.get("b_ci"),
                           counts=data.get("counts", ()))
        rows = plot.ab_rows(data["A"], data["B"], a_ci=data.get("a_ci"), b_ci=data.get("b_ci"),
                            lower_is_better=data.get("lower_is_better", ()), counts=data.get("counts", ()))
        a_label, b_label = data.get("a_label", "A"), data.get("b_label", "B")
    else:
        ab = gs.experiment.run_ab(args.scenario, args.profiles.split(","),
                                  seed_range(args.seeds) if args.seeds else None, duration_s=args.duration,
                                  workers=args.workers)
        plot.plot_experiment_ab(ab, args.out)
        rows, a_label, b_label = plot.experiment_ab_rows(ab)
        for key, label in gs.experiment.experiment_metrics():  # each key in its label's unit
            cells = [f"{ab['summary'][p][key][0]:10.2f} +- {ab['summary'][p][key][1]:7.2f}" for p in ab["profiles"]]
            print(f"{label:<20} " + "  ".join(cells))
    if args.csv:
        plot.table_csv(rows, a_label=a_label, b_label=b_label, path=args.csv)
        print(f"wrote {args.csv}")
    if args.latex:
        plot.table_latex(rows, a_label=a_label, b_label=b_label, path=args.latex)
        print(f"wrote {args.latex}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
