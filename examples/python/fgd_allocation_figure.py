#!/usr/bin/env python3
"""The FGD paper's figure -- GPU allocation % against arrived GPU demand % per policy -- from the
simulator's openb replay, drawn with gpusched.plot.

    python3 examples/python/fgd_allocation_figure.py --out allocation.png              # all policies, seeds 42-51
    python3 examples/python/fgd_allocation_figure.py --policies BestFit,FGD --seeds 42-44 --workers 2
    python3 examples/python/fgd_allocation_figure.py --json sim.json --out allocation.png  # gpusched-sim's JSON

The replay follows Weng et al., USENIX ATC'23 (default openb trace, demand tuned to 130% of GPU
capacity, arrivals only); each (policy, seed) run takes ~0.3-1 s. The paper's published final
allocations (mean of seeds 42-51) are printed next to ours.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

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
    ap.add_argument("--json", help="draw gpusched-sim's JSON output instead of running the replay")
    ap.add_argument("--data", default=str(REPO / "data" / "openb"), help="folder of the openb CSV files")
    ap.add_argument("--pods", default="default", help="pod list: default, cpu100, gpushare40, gpuspec20, multigpu20")
    ap.add_argument("--policies", default="all", help="comma-separated, or all")
    ap.add_argument("--seeds", default="42-51")
    ap.add_argument("--tune", type=float, default=1.3)
    ap.add_argument("--workers", type=int, default=1, help="runs in parallel threads")
    ap.add_argument("--out", default="fgd_allocation.png")
    args = ap.parse_args()
    if args.json:
        with open(args.json, encoding="utf-8") as f:
            data: Any = json.load(f)
    else:
        trace = gs.sim.load_openb(args.data, pods=args.pods)
        policies = "all" if args.policies == "all" else args.policies.split(",")
        data = gs.sim.replay(trace, policies, seed_range(args.seeds), tune=args.tune, workers=args.workers)
    plot.plot_allocation(data, args.out, title=f"openb {args.pods}: allocation vs arrived demand")
    published = {p["name"]: p["paper_allocation_pct"] for p in gs.sim.sim_policies()}
    for c in plot.allocation_curves(data):
        paper = published.get(c.policy)
        note = f" (paper: {paper:.2f}%)" if paper else ""
        print(f"{c.policy:>14}: {c.mean[-1]:6.2f}% allocated at {c.arrived_pct[-1]:.0f}% arrived ({c.seeds} seeds){note}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
