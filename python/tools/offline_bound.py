#!/usr/bin/env python3
"""An upper bound on the GPU that ANY placement of the arrived pods could allocate (openb paper protocol).

    python3 python/tools/offline_bound.py --seeds 42-51                  # default trace, tune 1.3, LP
    python3 python/tools/offline_bound.py --pods /tmp/gpushare80.csv --seeds 42 --integer --json out.json

For each seed it rebuilds the arrival sequence exactly as gpusched-sim's paper mode does
(include/gpusched/sim/paper.hpp paper_arrivals: pods in name order, shuffled by xoshiro256** seeded
through SplitMix64, then clones drawn until the GPU request reaches tune x capacity; rng.hpp), and
solves, with HiGHS (scipy.optimize.linprog / milp), this relaxation of the offline placement problem:

  x[s, t] >= 0  how many arrived pods of shape s (cpu, memory, num_gpu, gpu_milli, allowed GPU models)
                are placed on nodes of type t (cpu, memory, GPU count, GPU model); present only when one
                pod of s fits an empty node of t (resources, GPU count, model). CPU-only pods get none:
                they add nothing to the objective, and any subset of the arrived pods may be placed.
  y[p, t] >= 0  how many GPUs of nodes of type t hold configuration p: p = W, the GPU given whole (to a
                whole-GPU or multi-GPU pod), or p = a maximal multiset of the arrived share values that
                fits in 1000 milli (Gilmore and Gomory's cutting-stock patterns, Oper. Res. 9(6), 1961).
  maximise      sum gpu_total[s] * x[s, t]
  subject to    sum_t x[s, t] <= n[s]                                     (each arrived pod at most once)
                sum_s cpu[s] x[s, t] <= N[t] cpu[t]; the same for memory and for GPU milli
                sum_p y[p, t] <= N[t] G[t]                                 (the type's GPUs)
                sum over whole/multi-GPU shapes of num_gpu[s] x[s, t] <= y[W, t]
                for each share value v: sum over shapes with gpu_milli v of x[s, t] <= sum_p p(v) y[p, t]

Why it is a bound (docs/quality.md, "Offline bound"): any feasible placement of any subset of the
arrived pods gives x[s, t] = the number of pods of shape s it puts on nodes of type t and y[p, t] = the
number of GPUs of those nodes whose contents extend to pattern p (a GPU's shares fit in 1000 milli, so
adding share values while one fits ends in a maximal pattern). Each constraint is the placement's per
node or per GPU constraint summed over the nodes of the type, so (x, y) is feasible with the
placement's objective: LP optimum >= the best placement, in any arrival order (the offline problem
ignores the order; each online policy's result is one such placement). --integer keeps x and y integral
(still a relaxation by the same argument); at its time limit the reported bound is HiGHS's dual bound.
A feasible placement (pack(): LP-guided, then greedy) gives a lower bound on the best possible too.
--place-cpu-only adds x for the CPU-only shapes with sum_t x[s, t] >= n[s]: the bound of the
placements that place every arrived CPU-only pod (infeasible when they do not all fit).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
M64 = (1 << 64) - 1


class BoundError(ValueError):
    """Bad argument or input; the message names the flag (and file:line for files)."""


# --- gpusched-sim's random numbers (include/gpusched/sim/rng.hpp, core/splitmix64.hpp) -------------
class Rng:
    """xoshiro256** (Blackman and Vigna) seeded through SplitMix64; below() is Lemire's method."""

    def __init__(self, seed: int) -> None:
        st = seed & M64
        self.s = []
        for _ in range(4):
            st = (st + 0x9E3779B97F4A7C15) & M64
            z = st
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
            self.s.append(z ^ (z >> 31))

    @staticmethod
    def _rotl(x: int, k: int) -> int:
        return ((x << k) | (x >> (64 - k))) & M64

    def next(self) -> int:
        s = self.s
        result = (self._rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = self._rotl(s[3], 45)
        return result

    def below(self, n: int) -> int:
        m = self.next() * n
        low = m & M64
        if low < n:
            threshold = ((1 << 64) - n) % n
            while low < threshold:
                m = self.next() * n
                low = m & M64
        return m >> 64

    def shuffle(self, v: list[int]) -> None:
        for i in range(len(v), 1, -1):
            j = self.below(i)
            v[i - 1], v[j] = v[j], v[i - 1]


@dataclass(frozen=True)
class Shape:
    cpu: int
    mem: int
    num_gpu: int
    gpu_milli: int
    models: tuple[str, ...]  # empty: any model

    @property
    def gpu_total(self) -> int:
        return self.num_gpu * self.gpu_milli


@dataclass(frozen=True)
class NodeType:
    cpu: int
    mem: int
    gpu: int
    model: str


def _rows(path: Path, flag: str, want: list[list[str]]) -> tuple[list[list[str]], int]:
    try:
        with path.open(newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise BoundError(f"{flag}: cannot read {path}: {e.strerror}") from None
    if not rows or rows[0] not in want:
        raise BoundError(f"{flag}: {path}:1: unexpected header; expected '{','.join(want[0])}'")
    return rows, want.index(rows[0])


def _int(flag: str, path: Path, line: int, col: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise BoundError(f"{flag}: {path}:{line}: column '{col}': '{text}' is not an integer") from None


def read_pods(path: Path, flag: str = "--pods") -> list[tuple[str, Shape]]:
    """An openb pod list, with its 11 columns or the first 5 of them; errors name `flag` and file:line."""
    full = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
            "creation_time", "deletion_time", "scheduled_time"]
    rows, which = _rows(path, flag, [full, full[:5]])
    pods = []
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(rows[0]):
            raise BoundError(f"{flag}: {path}:{i}: expected {len(rows[0])} columns, found {len(r)}")
        cpu, mem, g, m = (_int(flag, path, i, rows[0][c], r[c]) for c in (1, 2, 3, 4))
        models = tuple(sorted({x for x in r[5].split("|") if x})) if which == 0 else ()
        pods.append((r[0], Shape(cpu, mem, g, m, models)))
    pods.sort(key=lambda p: p[0].encode())  # name order, bytewise as std::string's operator<
    return pods


def read_nodes(path: Path) -> list[NodeType]:
    rows, _ = _rows(path, "--nodes", [["sn", "cpu_milli", "memory_mib", "gpu", "model"]])
    out = []
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != 5:
            raise BoundError(f"--nodes: {path}:{i}: expected 5 columns, found {len(r)}")
        out.append(NodeType(*(_int("--nodes", path, i, rows[0][c], r[c]) for c in (1, 2, 3)), r[4]))
    return out


def arrivals(pods: list[tuple[str, Shape]], gpu_capacity: int, tune: float, seed: int) -> list[int]:
    """paper.hpp paper_arrivals, step for step (shuffle, then tuneUpPods / tuneDownPods)."""
    r = Rng(seed)
    order = list(range(len(pods)))
    r.shuffle(order)
    if tune <= 0 or not pods:
        return order
    total = sum(p.gpu_total for _, p in pods)
    target = tune * gpu_capacity
    if total > target:
        while total > target and order:
            idx = r.below(len(order))
            total -= pods[order[idx]][1].gpu_total
            del order[idx]
    elif total < target:
        if total == 0:
            raise BoundError("--tune: no pod of the trace requests a GPU, so no number of clones reaches it")
        while True:
            idx = r.below(len(pods))
            if total + pods[idx][1].gpu_milli > target:  # as paper.hpp (and the authors): per-GPU share
                break
            total += pods[idx][1].gpu_total
            order.append(idx)
    return order


def fits(s: Shape, t: NodeType) -> bool:
    return (s.cpu <= t.cpu and s.mem <= t.mem and s.num_gpu <= t.gpu
            and (not s.models or t.model in s.models))


def share_patterns(values: list[int], capacity: int = 1000) -> list[tuple[int, ...]]:
    """The maximal multisets of `values` (counts, in the order of `values`) whose sum fits in capacity:
    nothing more of any value fits. Every packing of one GPU is contained in one of them."""
    out: list[tuple[int, ...]] = []
    if not values:
        return out
    smallest = min(values)
    counts = [0] * len(values)

    def dfs(k: int, room: int) -> None:
        if k == len(values):
            if room < smallest:
                out.append(tuple(counts))
            return
        for c in range(room // values[k], -1, -1):
            counts[k] = c
            dfs(k + 1, room - c * values[k])
        counts[k] = 0

    dfs(0, capacity)
    return out


def solve(shapes: Counter[Shape], types: Counter[NodeType], integer: bool, time_limit: float,
          place_cpu_only: bool = False, min_share_placed: dict[int, float] | None = None) -> dict:
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, linprog, milp
    from scipy.sparse import coo_matrix

    S = sorted(shapes, key=lambda s: (s.num_gpu, s.gpu_milli, s.cpu, s.mem, s.models))
    T = sorted(types, key=lambda t: (t.model, t.gpu, t.cpu, t.mem))
    # CPU-only pods add nothing to the objective and only consume resources: an optimum leaves them out
    # (any subset is allowed), so they get no variable -- unless place_cpu_only asks that every arrived
    # CPU-only pod be placed (the bound of the placements that do, as every online policy does while CPU lasts).
    floors = dict(min_share_placed or {})
    pairs = [(i, j) for i, s in enumerate(S) for j, t in enumerate(T)
             if (s.gpu_total > 0 or place_cpu_only or floors.get(0, 0) > 0) and fits(s, t)]
    if place_cpu_only:
        homeless = [s for i, s in enumerate(S) if s.gpu_total == 0 and not any(i == k for k, _ in pairs)]
        if homeless:
            raise BoundError(f"--place-cpu-only: a CPU-only pod ({homeless[0].cpu} milli-CPU, "
                             f"{homeless[0].mem} MiB) fits no node")
    nv = len(pairs)
    c = -np.array([S[i].gpu_total for i, _ in pairs], dtype=float)
    rows, cols, vals, ub = [], [], [], []
    r = 0
    # sum_t x[s,t] <= n[s]
    shape_row = {}
    for v, (i, _) in enumerate(pairs):
        must = S[i].gpu_total == 0 and place_cpu_only  # -sum_t x[s,t] <= -n[s]
        if i not in shape_row:
            shape_row[i] = r
            ub.append(-shapes[S[i]] if must else shapes[S[i]])
            r += 1
        rows.append(shape_row[i]); cols.append(v); vals.append(-1.0 if must else 1.0)
    # GPU configurations (Gilmore-Gomory): pattern 0 is a GPU given whole to a whole-GPU or multi-GPU
    # pod; the others are the maximal multisets of the arrived share values that fit in 1000 milli.
    values = sorted({S[i].gpu_milli for i, _ in pairs if 0 < S[i].gpu_milli < 1000})
    patterns = share_patterns(values)
    vi = {m: k for k, m in enumerate(values)}
    # per node type: cpu, memory, GPU milli, GPUs, whole GPUs, one row per share value
    base = r
    per_type = 5 + len(values)
    for j, t in enumerate(T):
        n = types[t]
        ub += [n * t.cpu, n * t.mem, n * 1000 * t.gpu, n * t.gpu, 0] + [0] * len(values)
    r += per_type * len(T)
    for v, (i, j) in enumerate(pairs):
        sh = S[i]
        b = base + per_type * j
        rows += [b, b + 1, b + 2]; cols += [v, v, v]; vals += [sh.cpu, sh.mem, sh.gpu_total]
        if sh.gpu_total == 0:
            continue
        rows.append(b + 4 if sh.gpu_milli == 1000 else b + 5 + vi[sh.gpu_milli])
        cols.append(v)
        vals.append(float(sh.num_gpu if sh.gpu_milli == 1000 else 1))
    # min_share_placed {v: k}: at least k of the arrived one-GPU pods asking v milli (v = 0: of the CPU-only
    # pods) are placed: the bound of the placements that admit as many sharing (and CPU-only) pods of each
    # size as a given policy did (docs/quality.md, "The bound given a policy's admissions").
    def of_size(sh: Shape, v_milli: int) -> bool:
        return sh.gpu_total == 0 if v_milli == 0 else (sh.num_gpu == 1 and sh.gpu_milli == v_milli)

    for v_milli, k in sorted(floors.items()):
        if not (0 <= v_milli < 1000) or k < 0:
            raise BoundError(f"min_share_placed: {k} pods of {v_milli} milli: a size is 0 (CPU-only) or a share "
                             "below 1000, a count >= 0")
        cols_v = [v for v, (i, _) in enumerate(pairs) if of_size(S[i], v_milli)]
        arrived_v = sum(n for sh, n in shapes.items() if of_size(sh, v_milli))
        if k > arrived_v:
            raise BoundError(f"min_share_placed: {k} pods of {v_milli} milli asked, {arrived_v} arrived")
        for v in cols_v:
            rows.append(r); cols.append(v); vals.append(-1.0)
        ub.append(-float(k))
        r += 1
    ny = 0
    for j, t in enumerate(T):
        if t.gpu == 0:
            continue
        b = base + per_type * j
        for pat in [None] + patterns:  # y[p, j]: GPUs of type j configured as p
            col = nv + ny
            ny += 1
            rows.append(b + 3); cols.append(col); vals.append(1.0)
            if pat is None:
                rows.append(b + 4); cols.append(col); vals.append(-1.0)
            else:
                for k, cnt in enumerate(pat):
                    if cnt:
                        rows.append(b + 5 + k); cols.append(col); vals.append(-float(cnt))
    c = np.concatenate([c, np.zeros(ny)])
    nv_all = nv + ny
    A = coo_matrix((vals, (rows, cols)), shape=(r, nv_all)).tocsr()
    ubv = np.array(ub, dtype=float)
    t0 = time.perf_counter()
    if integer:
        res = milp(c, constraints=LinearConstraint(A, -np.inf, ubv), integrality=np.ones(nv_all),
                   bounds=Bounds(0, np.inf), options={"time_limit": time_limit, "disp": False})
        if res.x is None and getattr(res, "mip_dual_bound", None) is None:
            raise BoundError(f"--integer: HiGHS returned no bound: {res.message}")
        dual = getattr(res, "mip_dual_bound", None)
        bound = -dual if dual is not None and np.isfinite(dual) else -res.fun
        status = "optimal" if res.status == 0 else res.message
        primal = -res.fun if res.x is not None else None
    else:
        res = linprog(c, A_ub=A, b_ub=ubv, bounds=(0, None), method="highs")
        if res.status == 2 and floors:
            raise BoundError(f"min_share_placed: no placement admits {dict(sorted(floors.items()))} pods (by milli), "
                             "even fractionally")
        if res.status == 2:
            raise BoundError("--place-cpu-only: the arrived CPU-only pods do not all fit, even fractionally")
        if res.status != 0:
            raise BoundError(f"LP not solved: {res.message}")
        bound, status, primal = -res.fun, "optimal", -res.fun
    plan = {}
    if res.x is not None:
        for v, (i, j) in enumerate(pairs):
            if res.x[v] > 1e-9:
                plan[(S[i], T[j])] = float(res.x[v])
    return {"plan": plan, "bound_milli": float(bound), "primal_milli": primal, "status": status, "variables": nv_all,
            "patterns": len(patterns) + 1,
            "constraints": int(r), "solve_s": time.perf_counter() - t0}


def pack(shapes: Counter[Shape], nodes: list[NodeType], plan: dict[tuple[Shape, NodeType], float],
         place_cpu_only: bool = False) -> dict:
    """A feasible offline placement, so a LOWER bound on the best possible, guided by the LP's x: first,
    for each node type, the LP's pods for that type rounded down, largest first; then the arrived GPU
    pods still unplaced (multi-GPU, whole GPU, then shares by size, each least CPU per GPU milli first),
    anywhere. A whole-GPU pod goes to the least loaded node (largest of used CPU and memory share) with
    enough free whole GPUs; a share to the GPU with the least room left that holds it (then the least
    loaded node). CPU-only pods are left out. Every placement is checked against the node's free CPU,
    memory, whole GPUs and the chosen GPU's free share; an empty plan gives the greedy alone."""
    import numpy as np

    n = len(nodes)
    cpu = np.array([t.cpu for t in nodes], dtype=np.int64)
    mem = np.array([t.mem for t in nodes], dtype=np.int64)
    gfree = np.full((n, 8), -1, dtype=np.int64)  # free milli per GPU; -1: no such GPU
    for j, t in enumerate(nodes):
        gfree[j, : t.gpu] = 1000
    cap_cpu = np.maximum(cpu.copy(), 1)
    cap_mem = np.maximum(mem.copy(), 1)
    models = np.array([t.model for t in nodes])
    type_of = {t: np.array([k for k, u in enumerate(nodes) if u == t]) for t in set(nodes)}
    big = np.iinfo(np.int64).max
    placed = 0
    left = Counter({s: c for s, c in shapes.items() if s.gpu_total > 0 or place_cpu_only})

    def place(s: Shape, where: np.ndarray) -> bool:
        nonlocal placed
        idx = where[(cpu[where] >= s.cpu) & (mem[where] >= s.mem)]
        if s.models:
            idx = idx[np.isin(models[idx], s.models)]
        if idx.size == 0:
            return False
        # the node's dominant used share after placing the pod, in 1e-6 units (spreads load evenly)
        used = np.maximum((cap_cpu[idx] - cpu[idx] + s.cpu) / cap_cpu[idx], (cap_mem[idx] - mem[idx] + s.mem) / cap_mem[idx])
        load = (used * 10**6).astype(np.int64)
        if s.gpu_total == 0:  # CPU-only: the least loaded node
            k = int(np.argmin(load))
            j = int(idx[k])
        elif s.gpu_milli == 1000:
            whole = (gfree[idx] == 1000).sum(axis=1)
            key = np.where(whole >= s.num_gpu, load, big)
            k = int(np.argmin(key))
            if key[k] == big:
                return False
            j = int(idx[k])
            gfree[j, np.flatnonzero(gfree[j] == 1000)[: s.num_gpu]] = 0
        else:
            room = np.where(gfree[idx] >= s.gpu_milli, gfree[idx] - s.gpu_milli, 10**6)
            best = room.min(axis=1)
            key = np.where(best < 10**6, best * 10**8 + load, big)
            k = int(np.argmin(key))
            if key[k] == big:
                return False
            j = int(idx[k])
            gfree[j, int(np.argmin(room[k]))] -= s.gpu_milli
        cpu[j] -= s.cpu
        mem[j] -= s.mem
        placed += s.gpu_total
        left[s] -= 1
        return True

    def largest_first(s: Shape) -> tuple:
        return (-s.num_gpu, -s.gpu_milli, s.cpu, s.mem)

    everywhere = np.arange(n)
    for s in sorted((s for s in left if s.gpu_total == 0), key=lambda s: (-s.cpu, -s.mem)):
        while left[s] > 0 and place(s, everywhere):
            pass
    if any(left[s] > 0 for s in left if s.gpu_total == 0):
        return {"packed_milli": None}  # not a placement of every CPU-only pod
    for t, where in type_of.items():
        todo = sorted(((s, int(x + 1e-6)) for (s, u), x in plan.items() if u == t and x >= 1 - 1e-6 and s.gpu_total > 0),
                      key=lambda p: largest_first(p[0]))
        for s, c in todo:
            for _ in range(min(c, left[s])):
                if not place(s, where):
                    break
    for s in sorted((s for s in left if s.gpu_total > 0), key=lambda s: (-s.num_gpu, -s.gpu_milli, s.cpu / s.gpu_total)):
        while left[s] > 0 and place(s, everywhere):
            pass
    assert (cpu >= 0).all() and (mem >= 0).all() and (gfree >= -1).all()
    return {"packed_milli": placed}


def parse_seeds(text: str) -> list[int]:
    out: list[int] = []
    try:
        for part in text.split(","):
            if "-" in part:
                a, b = part.split("-")
                out += range(int(a), int(b) + 1)
            else:
                out.append(int(part))
    except ValueError:
        raise BoundError(f"--seeds: '{text}' is not like 42-51 or 42,43") from None
    if not out or any(s < 0 for s in out):
        raise BoundError(f"--seeds: '{text}' names no seed >= 0")
    return out


def bound_for(pods: list[tuple[str, Shape]], nodes: list[NodeType], seed: int, tune: float, integer: bool,
              time_limit: float, place_cpu_only: bool = False) -> dict:
    cap = 1000 * sum(t.gpu for t in nodes)
    order = arrivals(pods, cap, tune, seed)
    shapes = Counter(pods[i][1] for i in order)
    res = solve(shapes, Counter(nodes), integer, time_limit, place_cpu_only)
    plan = res.pop("plan")
    # the better of two feasible placements: LP-guided, and the greedy order alone (None: neither
    # placed every CPU-only pod, with place_cpu_only)
    packed = [p for p in (pack(shapes, nodes, plan, place_cpu_only)["packed_milli"],
                          pack(shapes, nodes, {}, place_cpu_only)["packed_milli"]) if p is not None]
    res["packed_milli"] = max(packed) if packed else None
    arrived = sum(pods[i][1].gpu_total for i in order)
    res.update(seed=seed, arrived_pods=len(order), arrived_pct=100.0 * arrived / cap, gpu_capacity_milli=cap,
               bound_pct=100.0 * res["bound_milli"] / cap,
               unavoidable_pct=max(0.0, 100.0 - 100.0 * res["bound_milli"] / cap),
               packed_pct=100.0 * res["packed_milli"] / cap if res["packed_milli"] is not None else None,
               place_cpu_only=place_cpu_only,
               pod_shapes=len(shapes), node_types=len(set(nodes)))
    return res


def add_trace_arguments(ap: argparse.ArgumentParser, seeds: str) -> None:
    """--pods, --nodes, --seeds and --tune: the trace and the protocol, as gpusched-sim takes them."""
    ap.add_argument("--pods", type=Path, default=REPO / "data/openb/openb_pod_list_default.csv")
    ap.add_argument("--nodes", type=Path, default=REPO / "data/openb/openb_node_list_gpu_node.csv")
    ap.add_argument("--seeds", default=seeds)
    ap.add_argument("--tune", type=float, default=1.3)


def check_tune(tune: float) -> None:
    if not (0 < tune <= 100):
        raise BoundError(f"--tune: {tune} is not in (0, 100]")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_trace_arguments(ap, "42-51")
    ap.add_argument("--integer", action="store_true", help="integral x (HiGHS MILP; dual bound at the time limit)")
    ap.add_argument("--place-cpu-only", action="store_true",
                    help="bound the placements that place every arrived CPU-only pod (default: any subset)")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per MILP (with --integer)")
    ap.add_argument("--json", type=Path, help="write the per-seed results here")
    a = ap.parse_args(argv)
    try:
        check_tune(a.tune)
        if not a.time_limit > 0:
            raise BoundError(f"--time-limit: {a.time_limit} is not > 0")
        seeds = parse_seeds(a.seeds)
        pods = read_pods(a.pods)
        nodes = read_nodes(a.nodes)
        if not pods:
            raise BoundError(f"--pods: {a.pods} has no pod")
        if sum(t.gpu for t in nodes) == 0:
            raise BoundError(f"--nodes: {a.nodes} has no GPU")
        results = [bound_for(pods, nodes, s, a.tune, a.integer, a.time_limit, a.place_cpu_only) for s in seeds]
    except BoundError as e:
        print(f"offline_bound: {e}", file=sys.stderr)
        return 2
    print(f"{a.pods.name}, tune {a.tune}, {'MILP' if a.integer else 'LP'} bound"
          f"{', every CPU-only pod placed' if a.place_cpu_only else ''}")
    print("seed  arrived_pods  arrived %  packed %  bound %  unavoidable unalloc %  status")
    for r in results:
        packed = f"{r['packed_pct']:8.2f}" if r["packed_pct"] is not None else "       -"
        print(f"{r['seed']:>4}  {r['arrived_pods']:>12}  {r['arrived_pct']:9.2f}  {packed}  "
              f"{r['bound_pct']:7.2f}  {r['unavoidable_pct']:21.3f}  {r['status']}")
    mean = sum(r["unavoidable_pct"] for r in results) / len(results)
    print(f"mean unavoidable unallocated GPU: {mean:.3f}%")
    if a.json:
        a.json.write_text(json.dumps({"pods": str(a.pods), "nodes": str(a.nodes), "tune": a.tune,
                                      "integer": a.integer, "runs": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
