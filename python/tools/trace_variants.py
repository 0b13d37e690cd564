#!/usr/bin/env python3
"""Derives openb trace variants from a base pod list (by default the openb default trace), the way the
published openb variants were made: resampled from the default trace to emphasise a kind of workload.

    python3 python/tools/trace_variants.py --gpu-share 0.8 --seed 1 --out /tmp/gpushare80.csv
    python3 python/tools/trace_variants.py --cpu-only 0.3 --seed 1 --out /tmp/cpu300.csv
    python3 python/tools/trace_variants.py --multi-gpu 0.5 --gpu-spec 0.33 --seed 2 --out /tmp/mix.csv

The output is an 11-column openb pod list that `gpusched-sim --pods` reads (docs/quality.md).

Sources of the method (docs/quality.md, "Trace variants"):
- alibaba/clusterdata, cluster-trace-gpu-v2023/README.md: "The other openb_pod_list_*.csv files
  (excluding the gpuspec ones) are sampled from the default one, emphasizing certain types of workloads
  (e.g., CPU-only tasks, GPU-sharing tasks, multi-GPU tasks)"; "Trace files with gpuspec augment tasks
  with GPU type requirements"; about 33% of GPU tasks in production carry GPU type constraints.
- What each variant's number means, from the FGD authors' plotting scripts
  (hkust-adsl/kubernetes-scheduler-simulator, experiments/plot/plot_openb_*_alloc_bar.py):
  gpushareXX, multigpuXX and gpuspecXX: the "proportion of ... workloads in terms of GPU requests";
  cpuXXX: the "proportion of non-GPU workloads in terms of task number" (cpu050 = 5%, cpu250 = 25%).

Knobs (fractions in [0, 1]):
  --gpu-share S   GPU-sharing pods (num_gpu == 1, gpu_milli < 1000) carry S of the GPU request;
  --multi-gpu M   multi-GPU pods (num_gpu >= 2) carry M of the GPU request;
  --gpu-spec G    pods naming GPU models carry G of the GPU request;
  --cpu-only C    CPU-only pods (num_gpu == 0) are C of all pods.
Resampling: the GPU pods are redrawn (with replacement, the base's count of GPU pods) from three
classes of the base trace -- sharing, one whole GPU, multi-GPU -- a class being chosen at each draw by
the largest shortfall against its target share of the GPU request and a pod uniformly within the
class. A class without a target keeps its share of the rest as in the base trace. CPU-only pods are
drawn from the base's CPU-only pods (without replacement while they last). GPU model constraints are
added to GPU pods in random order until the constrained share reaches G; each gets one model, drawn
in proportion to the GPU count of the models whose nodes can hold the pod alone. Names are renumbered
(openb-pod-0000...) after a seeded shuffle; every other column is copied from the drawn base row.
Same arguments and seed -> the same bytes (Python's random.Random, whose seeded stream is stable).
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import sys
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEADER = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
          "creation_time", "deletion_time", "scheduled_time"]
NODE_HEADER = ["sn", "cpu_milli", "memory_mib", "gpu", "model"]
SHARE, WHOLE, MULTI = "share", "whole", "multi"


class VariantError(ValueError):
    """Bad argument or input; the message names the flag (and file:line for files)."""


@dataclass(frozen=True)
class Pod:
    row: tuple[str, ...]  # the 11 columns as read

    @property
    def cpu(self) -> int:
        return int(self.row[1])

    @property
    def mem(self) -> int:
        return int(self.row[2])

    @property
    def num_gpu(self) -> int:
        return int(self.row[3])

    @property
    def gpu_milli(self) -> int:
        return int(self.row[4])

    @property
    def gpu_total(self) -> int:
        return self.num_gpu * self.gpu_milli

    @property
    def spec(self) -> str:
        return self.row[5]

    @property
    def kind(self) -> str:
        if self.num_gpu == 0:
            return "cpu"
        if self.num_gpu >= 2:
            return MULTI
        return SHARE if self.gpu_milli < 1000 else WHOLE

    def with_spec(self, spec: str) -> "Pod":
        r = list(self.row)
        r[5] = spec
        return replace(self, row=tuple(r))

    def with_times(self, created: int, deleted: int, scheduled: int | None) -> "Pod":
        """The same request at other creation, deletion and scheduling times (None: never scheduled)."""
        r = list(self.row)
        r[8], r[9], r[10] = str(created), str(deleted), "" if scheduled is None else str(scheduled)
        return replace(self, row=tuple(r))

    def renamed(self, name: str) -> "Pod":
        return replace(self, row=(name,) + self.row[1:])


@dataclass(frozen=True)
class Node:
    cpu: int
    mem: int
    gpu: int
    model: str


def _int(flag: str, path: Path, line: int, col: str, text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise VariantError(f"{flag}: {path}:{line}: column '{col}': '{text}' is not an integer") from None
    if v < 0:
        raise VariantError(f"{flag}: {path}:{line}: column '{col}': {v} is negative")
    return v


def read_text(path: Path, flag: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise VariantError(f"{flag}: cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        line = e.object[:e.start].count(b"\n") + 1
        raise VariantError(f"{flag}: {path}:{line}: not UTF-8 text") from None


def read_rows(path: Path, flag: str) -> list[list[str]]:
    """The CSV rows of a UTF-8 file, without trailing blank lines (the simulator's readers accept them)."""
    rows = list(csv.reader(io.StringIO(read_text(path, flag))))
    while rows and not rows[-1]:
        rows.pop()
    return rows


def read_pods(path: Path, flag: str = "--base") -> list[Pod]:
    rows = read_rows(path, flag)
    if not rows or rows[0] != HEADER:
        raise VariantError(f"{flag}: {path}:1: expected the 11-column openb header '{','.join(HEADER)}'")
    pods = []
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(HEADER):
            raise VariantError(f"{flag}: {path}:{i}: expected {len(HEADER)} columns, found {len(r)}")
        for c in (1, 2, 3, 4):
            _int(flag, path, i, HEADER[c], r[c])
        p = Pod(tuple(r))
        if p.num_gpu > 8 or p.gpu_milli > 1000 or (p.num_gpu == 0) != (p.gpu_milli == 0):
            raise VariantError(f"{flag}: {path}:{i}: column 'gpu_milli'/'num_gpu': {p.num_gpu} x {p.gpu_milli} "
                               "is not an openb GPU request")
        if p.num_gpu == 0 and any(p.spec.split("|")):  # include/gpusched/sim/openb.hpp refuses it too
            raise VariantError(f"{flag}: {path}:{i}: column 'gpu_spec': a pod without GPUs cannot name GPU models")
        pods.append(p)
    return pods


def read_nodes(path: Path, flag: str = "--nodes") -> list[Node]:
    rows = read_rows(path, flag)
    if not rows or rows[0] != NODE_HEADER:
        raise VariantError(f"{flag}: {path}:1: expected the header '{','.join(NODE_HEADER)}'")
    nodes = []
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(NODE_HEADER):
            raise VariantError(f"{flag}: {path}:{i}: expected {len(NODE_HEADER)} columns, found {len(r)}")
        nodes.append(Node(*(_int(flag, path, i, NODE_HEADER[c], r[c]) for c in (1, 2, 3)), r[4]))
    return nodes


def _fraction(flag: str, v: float | None, hi_open: bool = False) -> None:
    if v is None:
        return
    if not (0.0 <= v <= 1.0) or (hi_open and v >= 1.0):
        raise VariantError(f"{flag}: {v} is not a fraction in [0, 1{')' if hi_open else ']'}")


def _gpu_targets(base: list[Pod], share: float | None, multi: float | None) -> dict[str, float]:
    """Target share of the GPU request per class; an untargeted class splits the rest as in the base."""
    tot = {k: sum(p.gpu_total for p in base if p.kind == k) for k in (SHARE, WHOLE, MULTI)}
    fixed = {k: v for k, v in ((SHARE, share), (MULTI, multi)) if v is not None}
    if sum(fixed.values()) > 1.0 + 1e-12:
        raise VariantError(f"--gpu-share + --multi-gpu: {sum(fixed.values())} is more than 1")
    free = [k for k in (SHARE, WHOLE, MULTI) if k not in fixed]
    rest = 1.0 - sum(fixed.values())
    free_tot = sum(tot[k] for k in free)
    targets = dict(fixed)
    for k in free:
        targets[k] = rest * tot[k] / free_tot if free_tot > 0 else (rest if k == WHOLE else 0.0)
    for k, t in targets.items():
        if t > 0 and tot[k] == 0:
            flag = {SHARE: "--gpu-share", MULTI: "--multi-gpu", WHOLE: "--gpu-share/--multi-gpu"}[k]
            raise VariantError(f"{flag}: the base trace has no {k} GPU pod to draw from")
    return targets


def _resample_gpu(base: list[Pod], targets: dict[str, float], count: int, rnd: random.Random) -> list[Pod]:
    pools = {k: [p for p in base if p.kind == k] for k in (SHARE, WHOLE, MULTI)}
    have = {k: 0 for k in pools}
    out = []
    total = 0
    for _ in range(count):
        # The class furthest below its target share of the request so far (ties: the fixed order).
        k = max((c for c in (SHARE, WHOLE, MULTI) if targets[c] > 0 and pools[c]),
                key=lambda c: targets[c] * total - have[c] if total else targets[c])
        p = pools[k][rnd.randrange(len(pools[k]))]
        out.append(p)
        have[k] += p.gpu_total
        total += p.gpu_total
    return out


def _add_specs(pods: list[Pod], nodes: list[Node], target: float, rnd: random.Random) -> list[Pod]:
    gpus_by_model: dict[str, int] = {}
    for n in nodes:
        if n.gpu > 0 and n.model:
            gpus_by_model[n.model] = gpus_by_model.get(n.model, 0) + n.gpu
    models = sorted(gpus_by_model)
    shapes = sorted({(n.model, n.gpu, n.cpu, n.mem) for n in nodes if n.gpu > 0 and n.model})
    pods = [p.with_spec("") for p in pods]
    total = sum(p.gpu_total for p in pods)
    goal = target * total
    order = [i for i, p in enumerate(pods) if p.num_gpu > 0]
    rnd.shuffle(order)
    have = 0
    for i in order:
        p = pods[i]
        if have + p.gpu_total / 2 > goal:  # stop at the pod that brings the share closest to the target
            continue
        fit = [m for m in models
               if any(sm == m and g >= p.num_gpu and c >= p.cpu and mem >= p.mem for sm, g, c, mem in shapes)]
        if not fit:
            continue
        m = rnd.choices(fit, weights=[gpus_by_model[f] for f in fit])[0]
        pods[i] = p.with_spec(m)
        have += p.gpu_total
    return pods


def make_variant(base: list[Pod], nodes: list[Node] | None, seed: int, gpu_share: float | None = None,
                 multi_gpu: float | None = None, gpu_spec: float | None = None,
                 cpu_only: float | None = None) -> list[Pod]:
    _fraction("--gpu-share", gpu_share)
    _fraction("--multi-gpu", multi_gpu)
    _fraction("--gpu-spec", gpu_spec)
    _fraction("--cpu-only", cpu_only, hi_open=True)
    if gpu_spec is not None and not nodes:
        raise VariantError("--gpu-spec: needs --nodes (the models a constrained pod may name)")
    rnd = random.Random(seed)
    gpu = [p for p in base if p.num_gpu > 0]
    cpu = [p for p in base if p.num_gpu == 0]
    if not gpu:
        raise VariantError("--base: the base trace has no GPU pod")
    if gpu_share is not None or multi_gpu is not None:
        gpu = _resample_gpu(gpu, _gpu_targets(gpu, gpu_share, multi_gpu), len(gpu), rnd)
    if cpu_only is not None:
        want = round(cpu_only * len(gpu) / (1.0 - cpu_only))
        if want > 0 and not cpu:
            raise VariantError("--cpu-only: the base trace has no CPU-only pod to draw from")
        drawn = rnd.sample(cpu, min(want, len(cpu)))
        drawn += [cpu[rnd.randrange(len(cpu))] for _ in range(want - len(drawn))]
        cpu = drawn
    pods = gpu + cpu
    if gpu_spec is not None:
        assert nodes is not None
        pods = _add_specs(pods, nodes, gpu_spec, rnd)
    rnd.shuffle(pods)
    width = max(4, len(str(len(pods) - 1)))
    return [p.renamed(f"openb-pod-{i:0{width}d}") for i, p in enumerate(pods)]


def shares(pods: list[Pod]) -> dict[str, float]:
    """The quantities the knobs set, measured on a pod list (the tests' and docs' check)."""
    total = sum(p.gpu_total for p in pods)
    return {
        "gpu_share": sum(p.gpu_total for p in pods if p.kind == SHARE) / total,
        "multi_gpu": sum(p.gpu_total for p in pods if p.kind == MULTI) / total,
        "gpu_spec": sum(p.gpu_total for p in pods if p.spec) / total,
        "cpu_only": sum(1 for p in pods if p.num_gpu == 0) / len(pods),
    }


def to_csv(pods: list[Pod]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(HEADER)
    for p in pods:
        w.writerow(p.row)
    return buf.getvalue()


def write_csv(pods: list[Pod], out: Path) -> None:
    """Writes the pod list to `out`, or to stdout when `out` is '-'."""
    text = to_csv(pods)
    if str(out) == "-":
        sys.stdout.write(text)
        return
    try:
        out.write_text(text)
    except OSError as e:
        raise VariantError(f"--out: cannot write {out}: {e.strerror}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, default=REPO / "data/openb/openb_pod_list_default.csv",
                    help="11-column openb pod list to resample (default: the openb default trace)")
    ap.add_argument("--nodes", type=Path, default=REPO / "data/openb/openb_node_list_gpu_node.csv",
                    help="node list (for --gpu-spec: which models can hold a pod)")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True, help="output CSV ('-' for stdout)")
    ap.add_argument("--gpu-share", type=float, help="share of the GPU request from GPU-sharing pods")
    ap.add_argument("--multi-gpu", type=float, help="share of the GPU request from multi-GPU pods")
    ap.add_argument("--gpu-spec", type=float, help="share of the GPU request from pods naming GPU models")
    ap.add_argument("--cpu-only", type=float, help="share of pods that request no GPU")
    a = ap.parse_args(argv)
    try:
        if all(v is None for v in (a.gpu_share, a.multi_gpu, a.gpu_spec, a.cpu_only)):
            raise VariantError("--gpu-share/--multi-gpu/--gpu-spec/--cpu-only: give at least one")
        base = read_pods(a.base)
        nodes = read_nodes(a.nodes) if a.gpu_spec is not None else None
        pods = make_variant(base, nodes, a.seed, a.gpu_share, a.multi_gpu, a.gpu_spec, a.cpu_only)
        write_csv(pods, a.out)
    except VariantError as e:
        print(f"trace_variants: {e}", file=sys.stderr)
        return 2
    s = shares(pods)
    print(f"trace_variants: {len(pods)} pods; " + ", ".join(f"{k} {v:.4f}" for k, v in s.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
