#!/usr/bin/env python3
"""A sustained-load pod list for dynamic mode: the base trace's pods (with their run times) arriving as a
Poisson process at a chosen offered GPU load, started in its steady state.

    python3 python/tools/sustained_trace.py --load 0.9 --hours 24 --seed 1 --out /tmp/load090.csv
    gpusched-sim --mode dynamic --pods /tmp/load090.csv --preemption --priority-by-qos --seeds 42-51

Why (docs/quality.md, "Dynamic mode"): the openb traces' own clock loads their cluster to 0.2 % on time
average, and compressing the arrivals (--time-scale) fills it only once, at the end of the window. Here
the cluster stays loaded while pods come and go. The arrivals are stationary from 0; the placement is
not: the pods present at 0 are placed in one pass, and with the openb run times (heavy-tailed) most of
that packing stays for weeks, so read results over long windows (docs/quality.md shows by how much).

The model (an M/G/infinity arrival process; the waiting queue and the cluster's capacity are the
simulator's business):
- Each arrival is a row of the base trace drawn uniformly with replacement, with everything the row
  says: its request, GPU model, QoS, its run time d = deletion_time - scheduled_time (or - creation_time
  for a pod the real cluster never scheduled, the simulator's rule, include/gpusched/sim/dynamic.hpp)
  and its patience deletion_time - creation_time (a waiting pod is withdrawn after it).
- Arrival times form a Poisson process of rate lambda = load x C / E[g d], C the node list's GPU capacity
  in milli-GPU and E[g d] the base rows' mean GPU request (milli) times run time: by Little's law
  (Little, Oper. Res. 9(3), 1961) the GPU the arrived pods would hold with unlimited room is load x C on
  average. load 1.0 offers exactly the cluster's GPU capacity; a real cluster's fragmentation makes
  some of it wait.
- Steady start: the process is run from -D, D the longest run time in the base, and a pod that arrived
  before 0 and would still be running at 0 is emitted as arriving at 0 with what is left of its run
  time (so the population at 0 is the process's stationary one: its count is Poisson with mean
  lambda E[d], Takacs's M/G/infinity result). Pods that arrived before 0 and ended before 0 are
  dropped. The window is [0, hours).
Output: an 11-column openb pod list, names renumbered in arrival order; pods present at 0 come first,
in random order. Same arguments and seed -> the same bytes (Python's random.Random), and a longer
--hours extends the same list (the shorter one is a prefix of it).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trace_variants import REPO, Pod, VariantError, read_nodes, read_pods, write_csv  # noqa: E402

# The most pods one run emits (the generator holds them in memory, the simulator too).
MAX_PODS = 5_000_000
NAME_DIGITS = len(str(MAX_PODS - 1))  # one name width for every window length


@dataclass(frozen=True)
class Timing:
    run: int       # seconds the pod runs once placed
    patience: int  # seconds from arrival to withdrawal if it still waits
    wait: int      # seconds from creation to scheduling in the base (0 if never scheduled)


def timing(p: Pod, line: int, path: Path) -> Timing:
    """The run time and patience of a base row (dynamic.hpp's rules); errors name file:line."""
    try:
        created = int(p.row[8])
        deleted = int(p.row[9])
        scheduled = int(p.row[10]) if p.row[10] else None
    except ValueError:
        raise VariantError(f"--base: {path}:{line}: creation_time, deletion_time and scheduled_time must be "
                           "integers (scheduled_time may be empty)") from None
    if deleted < created or (scheduled is not None and not created <= scheduled <= deleted):
        raise VariantError(f"--base: {path}:{line}: needs creation_time <= scheduled_time <= deletion_time")
    start = created if scheduled is None else scheduled
    return Timing(deleted - start, deleted - created, start - created)


def offered_rate(pods: list[Pod], times: list[Timing], capacity_milli: int, load: float) -> float:
    """Arrivals per second that offer `load` x capacity in GPU (Little's law; see the module docstring)."""
    mean_gd = sum(p.gpu_total * t.run for p, t in zip(pods, times)) / len(pods)
    if mean_gd <= 0:
        raise VariantError("--base: no pod both asks for GPU and runs a positive time: no GPU load to offer")
    return load * capacity_milli / mean_gd


def make_sustained(base: list[Pod], times: list[Timing], rate: float, hours: float, seed: int) -> tuple[list[Pod], int]:
    """The pod list arriving at `rate` per second (offered_rate) and how many of its pods (the first
    ones) are those running at 0."""
    horizon = hours * 3600.0
    longest = max(t.run for t in times)
    # Expected pods emitted: lambda x E[d] running at 0 (M/G/infinity) plus lambda x horizon arriving.
    expected = rate * (horizon + sum(t.run for t in times) / len(times))
    if expected > MAX_PODS:
        raise VariantError(f"--load/--hours: about {expected:.0f} pods; at most {MAX_PODS} are emitted")
    rnd = random.Random(seed)
    present: list[Pod] = []  # running at 0
    t = -float(longest) + rnd.expovariate(rate)
    while t < 0:  # the pre-roll: pods that arrived before 0 and still run at 0
        p, tm = pick(base, times, rnd)
        left = math.floor(t + tm.run)  # run time left at 0
        if left > 0:
            present.append(p.with_times(0, left, 0))  # placed at 0, runs `left`, patience `left`
        t += rnd.expovariate(rate)
    # Shuffled before the window is drawn, so that a longer --hours extends the same pod list.
    rnd.shuffle(present)
    later: list[Pod] = []  # arriving in [0, horizon)
    while t < horizon:
        p, tm = pick(base, times, rnd)
        a = math.floor(t)
        later.append(p.with_times(a, a + tm.patience, a + tm.wait if p.row[10] else None))
        if len(present) + len(later) > MAX_PODS:
            raise VariantError(f"--load/--hours: more than {MAX_PODS} pods")
        t += rnd.expovariate(rate)
    return [p.renamed(f"sustained-pod-{k:0{NAME_DIGITS}d}") for k, p in enumerate(present + later)], len(present)


def pick(base: list[Pod], times: list[Timing], rnd: random.Random) -> tuple[Pod, Timing]:
    i = rnd.randrange(len(base))
    return base[i], times[i]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, default=REPO / "data/openb/openb_pod_list_default.csv",
                    help="11-column openb pod list to draw from (default: the openb default trace)")
    ap.add_argument("--nodes", type=Path, default=REPO / "data/openb/openb_node_list_gpu_node.csv",
                    help="the node list the load is offered to (its GPU capacity)")
    ap.add_argument("--load", type=float, required=True, help="offered GPU load, a multiple of GPU capacity (> 0)")
    ap.add_argument("--hours", type=float, required=True, help="length of the arrival window in hours (> 0)")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True, help="output CSV ('-' for stdout)")
    a = ap.parse_args(argv)
    try:
        if not (a.load > 0 and math.isfinite(a.load)):
            raise VariantError(f"--load: {a.load} is not a positive number")
        if not (a.hours > 0 and math.isfinite(a.hours)):
            raise VariantError(f"--hours: {a.hours} is not a positive number")
        base = read_pods(a.base)
        if not base:
            raise VariantError(f"--base: {a.base} has no pod")
        times = [timing(p, i + 2, a.base) for i, p in enumerate(base)]
        capacity = 1000 * sum(n.gpu for n in read_nodes(a.nodes))
        if capacity <= 0:
            raise VariantError(f"--nodes: {a.nodes} has no GPU")
        rate = offered_rate(base, times, capacity, a.load)
        pods, at0 = make_sustained(base, times, rate, a.hours, a.seed)
        write_csv(pods, a.out)
    except VariantError as e:
        print(f"sustained_trace: {e}", file=sys.stderr)
        return 2
    print(f"sustained_trace: {len(pods)} pods ({at0} running at 0), rate {rate * 3600:.1f} per hour", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
