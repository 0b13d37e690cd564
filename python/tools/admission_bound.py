#!/usr/bin/env python3
"""How far each policy is from the best placement of the pods it admitted (openb paper protocol).

    python3 python/tools/admission_bound.py --seeds 42-44                       # default trace, FGD and gpusched
    python3 python/tools/admission_bound.py --pods /tmp/gpushare100.csv --policies FGD,gpusched,BestFit --json a.json

offline_bound.py's LP bounds every placement of any subset of the arrived pods. Its optimum leaves out
the sharing pods that do not pack (on the openb default trace: every 810-milli pod, most 470s) and
places every whole-GPU and multi-GPU pod instead. A policy that places each pod that fits when it
arrives cannot choose so. This tool replays each policy (gpusched's Python module, the same replay as
gpusched-sim), counts the one-GPU sharing pods of each size and the CPU-only pods it placed, and
solves the same LP with those counts as floors (offline_bound.solve, min_share_placed): the most GPU
that any placement admitting at least those pods could allocate. Every placement the policy could
have made of the pods it admitted is in that set, so the bound is above the policy's allocation; the
difference is what better packing alone could still gain. docs/quality.md, "The bound given a policy's
admissions", has the tables and what the bound does not see (it pools each node type's CPU and may
meet the CPU-only floor with the smallest pods, so under CPU pressure it is loose).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import offline_bound as ob  # noqa: E402

# sim/trace.hpp's shape key: "cpu=12000m gpu=1x1000" or "cpu=8000m gpu=1x470 model=T4|P100".
SHAPE = re.compile(r"^cpu=\d+m gpu=(\d+)x(\d+)( model=\S+)?$")


def size_of(num_gpu: int, gpu_milli: int) -> int | None:
    """The floor a pod counts toward: 0 for CPU-only, its share for a one-GPU sharing pod, else none."""
    if num_gpu == 0:
        return 0
    return gpu_milli if num_gpu == 1 and gpu_milli < 1000 else None


def admitted(shapes: Counter, failed_by_shape: dict[str, int]) -> dict[int, int]:
    """Pods placed per floor size: arrived (shapes) minus failed (the replay's failed_by_shape)."""
    arrived: Counter[int] = Counter()
    for s, n in shapes.items():
        k = size_of(s.num_gpu, s.gpu_milli)
        if k is not None:
            arrived[k] += n
    failed: Counter[int] = Counter()
    for text, n in failed_by_shape.items():
        m = SHAPE.match(text)
        if m is None:
            raise ob.BoundError(f"failed_by_shape: '{text}' is not 'cpu=<m>m gpu=<count>x<milli>[ model=<models>]'")
        k = size_of(int(m.group(1)), int(m.group(2)))
        if k is not None:
            failed[k] += n
    extra = [k for k in failed if failed[k] > arrived[k]]
    if extra:
        raise ob.BoundError(f"failed_by_shape: {failed[extra[0]]} pods of {extra[0]} milli failed, {arrived[extra[0]]} arrived")
    return {k: arrived[k] - failed[k] for k in arrived}


def unavoidable_given(shapes: Counter, types: Counter, cap: int, run: dict, seed: int, policy: str) -> tuple[float, dict[int, int]]:
    """(the least unallocated GPU %, of capacity cap milli, that any placement admitting at least the
    pods `run` admitted must leave; those floors). `run` is a paper replay's result (Python's dict or
    gpusched-sim's JSON run: arrived_pods, failed_by_shape) on the arrivals counted in `shapes`; a
    replay that saw another number of arrivals is refused, naming the seed and the policy."""
    if run["arrived_pods"] != sum(shapes.values()):  # offline_bound's copy of the arrivals drifted
        raise ob.BoundError(f"seed {seed}: the replay of {policy} saw {run['arrived_pods']} pods arrive, the bound's "
                            f"arrival sequence {sum(shapes.values())}")
    floors = admitted(shapes, run["failed_by_shape"])
    bound = ob.solve(shapes, types, False, 60.0, min_share_placed=floors)["bound_milli"]
    return max(0.0, 100.0 - 100.0 * bound / cap), floors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ob.add_trace_arguments(ap, "42-44")
    ap.add_argument("--policies", default="FGD,gpusched", help="comma-separated simulator policies")
    ap.add_argument("--json", type=Path, help="write the per-seed results here")
    a = ap.parse_args(argv)
    try:
        try:
            import gpusched as gs
        except ImportError as e:
            raise ob.BoundError(f"the gpusched module is not installed (pip install ./python): {e}") from None

        ob.check_tune(a.tune)
        seeds = ob.parse_seeds(a.seeds)
        policies = [p for p in a.policies.split(",") if p]
        for p in policies:
            try:
                gs.sim.canonical_policy(p)
            except ValueError:
                raise ob.BoundError(f"--policies: '{p}' is not a policy ({', '.join(gs.sim.policy_names())})") from None
        if not policies:
            raise ob.BoundError("--policies: give at least one policy")
        pods = ob.read_pods(a.pods)
        nodes = ob.read_nodes(a.nodes)
        if not pods:
            raise ob.BoundError(f"--pods: {a.pods} has no pod")
        trace = gs.sim.Trace.load(str(a.nodes), str(a.pods))
        cap = 1000 * sum(t.gpu for t in nodes)
        runs = []
        for seed in seeds:
            shapes = Counter(pods[i][1] for i in ob.arrivals(pods, cap, a.tune, seed))
            types = Counter(nodes)
            lp = 100.0 - 100.0 * ob.solve(shapes, types, False, 60.0)["bound_milli"] / cap
            for p in policies:
                r = gs.sim.run_paper(trace, p, seed=seed, tune=a.tune)
                given, floors = unavoidable_given(shapes, types, cap, r, seed, p)
                runs.append({"seed": seed, "policy": p, "unallocated_pct": r["unallocated_pct_at_tune"],
                             "unavoidable_pct": max(0.0, lp), "unavoidable_given_admissions_pct": given,
                             "admitted": {str(k): v for k, v in sorted(floors.items())}})
    except ob.BoundError as e:
        print(f"admission_bound: {e}", file=sys.stderr)
        return 2
    print(f"{a.pods.name}, tune {a.tune}: unallocated GPU % of capacity; 'given admissions' = the least any placement "
          "admitting the policy's sharing and CPU-only pods must leave")
    print(f"{'seed':>4}  {'policy':<20} {'unalloc':>8} {'LP unavoidable':>15} {'given admissions':>17} {'gap':>6}")
    for r in runs:
        gap = r["unallocated_pct"] - r["unavoidable_given_admissions_pct"]
        print(f"{r['seed']:>4}  {r['policy']:<20} {r['unallocated_pct']:8.2f} {r['unavoidable_pct']:15.2f} "
              f"{r['unavoidable_given_admissions_pct']:17.2f} {gap:6.2f}")
    print("means over seeds:")
    for p in policies:
        mine = [r for r in runs if r["policy"] == p]
        un = sum(r["unallocated_pct"] for r in mine) / len(mine)
        given = sum(r["unavoidable_given_admissions_pct"] for r in mine) / len(mine)
        print(f"      {p:<20} {un:8.2f} {'':>15} {given:17.2f} {un - given:6.2f}")
    if a.json:
        a.json.write_text(json.dumps({"pods": str(a.pods), "nodes": str(a.nodes), "tune": a.tune, "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
