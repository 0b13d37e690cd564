#!/usr/bin/env python3
"""The typicalPods of a profile, taken from a pod list: the workload FGDScore and the FillAware family
score against, for a host that has no trace to take it from (the extender, a Kubernetes profile).

    python3 python/tools/typical_pods.py --pods history.csv --profile data/profiles/gpusched.yaml \\
        --nodes nodes.csv --out my-gpusched.yaml

The rule is the FGD authors' GetTypicalPods (typicalPodsConfig: isInvolvedCpuPods true,
podPopularityThreshold 95, podIncreaseStep 1; Weng et al., USENIX ATC'23, and their simulator's
pkg/utils), the one the simulator applies to a trace (include/gpusched/scoring/typical_pods.hpp,
typical_workload::from_pods): pods are grouped by (CPU, per-GPU share, GPU count, GPU models); the
most frequent shapes are kept, one at a time, until they cover 95 % of the pods; each kept shape's
share is its pod count (the plugins normalise the shares).

With --profile, the profile (a KubeSchedulerConfiguration with one profile, or the one named by
--scheduler-name) is written with args.typicalPods of --plugin set (other args kept; by default the
one plugin of the profile that takes typicalPods). The file is rewritten from its YAML data, so its
comments are not kept. Without --profile, the typicalPods list alone is written. The pod list must
have the 11 openb columns (the 5-column form some openb files use is not read).

With --nodes, it also says which CPU term FillAwareBinding and FillAwareRefill will use on that
cluster: CPU binds when the workload's CPU per GPU d reaches the cluster's c
(include/gpusched/scoring/fill_aware_binding.hpp), and the pod list is a sample of the workload, so
d/c is given with its standard error (the ratio estimator's, by the delta method). When d/c is within
two standard errors of 1, the choice depends on the sample (docs/quality.md, "A workload that is
wrong": on the CPU-heavy variants the wrong side of 1 costs more than FGD's whole margin). In the
simulator FillAwareRefill also counts the pods it sees (observeDemand); in a host such as the
extender it does not, and these typical pods alone decide.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trace_variants import Pod, VariantError, read_nodes, read_pods, read_text  # noqa: E402

# The plugins that take args.typicalPods (include/gpusched/profile/builtin_plugins.hpp).
WORKLOAD_PLUGINS = ("FGDScore", "FGD", "FillAware", "FillAwareBinding", "FillAwareRefill")


@dataclass(frozen=True, order=True)
class Shape:
    cpu_milli: int
    gpu_milli: int
    num_gpu: int
    gpu_models: tuple[str, ...]  # the pod's gpu_spec split on '|', empty entries dropped (openb.hpp)

    @property
    def key(self) -> tuple[int, int, int, str]:  # the authors' PodResource order; the models '|'-joined
        return (self.cpu_milli, self.gpu_milli, self.num_gpu, "|".join(self.gpu_models))


def shape_of(p: Pod) -> Shape:
    return Shape(p.cpu, p.gpu_milli, p.num_gpu, tuple(m for m in p.spec.split("|") if m))


def typical(pods: list[Pod], threshold_pct: float = 95.0) -> list[tuple[Shape, int]]:
    """The kept shapes with their pod counts, most frequent first (ties: the larger key first, as
    typical_workload::from_pods sorts)."""
    if not pods:
        raise VariantError("--pods: the pod list is empty")
    counts = Counter(shape_of(p) for p in pods)
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0].key), reverse=True)
    expected = threshold_pct * len(pods) / 100.0
    kept: list[tuple[Shape, int]] = []
    covered = 0
    for s, n in ranked:
        if covered >= expected:
            break
        kept.append((s, n))
        covered += n
    return kept


def as_yaml_list(kept: list[tuple[Shape, int]]) -> list[dict]:
    out = []
    for s, n in kept:
        e: dict = {"cpuMilli": s.cpu_milli}
        if s.num_gpu:
            e.update(gpuMilli=s.gpu_milli, numGpu=s.num_gpu)
        e["share"] = n
        if s.gpu_models:
            e["gpuModels"] = list(s.gpu_models)
        out.append(e)
    return out


@dataclass(frozen=True)
class Binding:
    ratio: float  # d / c
    se: float     # its standard error as an estimate from the pod list

    @property
    def undecided(self) -> bool:
        return abs(self.ratio - 1.0) <= 2.0 * self.se


def binding(kept: list[tuple[Shape, int]], cluster_cpu_per_gpu: float) -> Binding:
    """d / c over the kept shapes (fill_aware_binding.hpp's d: CPU per GPU demand, CPU-only pods
    included) and its standard error: d is a ratio of means, cpu / gpu over n pods, whose variance is
    about Var(cpu_i - d gpu_i) / (n mean(gpu)^2) (the delta method)."""
    n = sum(k for _, k in kept)
    cpu = sum(s.cpu_milli * k for s, k in kept) / n
    gpu = sum(s.gpu_milli * s.num_gpu * k for s, k in kept) / n
    if gpu <= 0:
        raise VariantError("--pods: the typical pods ask for no GPU: no CPU per GPU to compare")
    d = cpu / gpu
    var = sum(k * (s.cpu_milli - d * s.gpu_milli * s.num_gpu) ** 2 for s, k in kept) / max(n - 1, 1)
    se = math.sqrt(var / n) / gpu
    c = cluster_cpu_per_gpu / 1000.0  # milli-CPU per milli-GPU
    return Binding(d / c, se / c)


def with_typical_pods(doc: dict, listed: list[dict], plugin: str | None, scheduler: str | None,
                      where: str) -> tuple[dict, str]:
    """The profile document with args.typicalPods of the plugin set; the plugin's name."""
    profiles = doc.get("profiles") if isinstance(doc, dict) else None
    if not isinstance(profiles, list) or not profiles:
        raise VariantError(f"--profile: {where}: no 'profiles' list (a KubeSchedulerConfiguration)")
    if scheduler is None:
        if len(profiles) != 1:
            raise VariantError(f"--profile: {where}: {len(profiles)} profiles; name one with --scheduler-name")
        prof = profiles[0]
        if not isinstance(prof, dict):
            raise VariantError(f"--profile: {where}: profiles[0] must be a mapping")
    else:
        named = [p for p in profiles if isinstance(p, dict) and p.get("schedulerName") == scheduler]
        if not named:
            raise VariantError(f"--scheduler-name: no profile named '{scheduler}' in {where}")
        prof = named[0]
    if plugin is None:
        plugins = prof.get("plugins") or {}
        score = plugins.get("score") if isinstance(plugins, dict) else None
        enabled = (score.get("enabled") if isinstance(score, dict) else None) or []
        if not isinstance(enabled, list):
            raise VariantError(f"--profile: {where}: plugins.score.enabled must be a list")
        names = [e.get("name") for e in enabled if isinstance(e, dict) and e.get("name") in WORKLOAD_PLUGINS]
        if len(names) != 1:
            raise VariantError(f"--plugin: {where}'s score plugins have {len(names)} of {', '.join(WORKLOAD_PLUGINS)}"
                               f"{' (' + ', '.join(names) + ')' if names else ''}; name the one to give the pods")
        plugin = names[0]
    config = prof.setdefault("pluginConfig", [])
    if not isinstance(config, list):
        raise VariantError(f"--profile: {where}: pluginConfig must be a list")
    entry = next((e for e in config if isinstance(e, dict) and e.get("name") == plugin), None)
    if entry is None:
        entry = {"name": plugin, "args": {}}
        config.append(entry)
    if entry.get("args") is None:  # absent or null: no args (as Kubernetes reads it)
        entry["args"] = {}
    args = entry["args"]
    if not isinstance(args, dict):
        raise VariantError(f"--profile: {where}: pluginConfig '{plugin}' args must be a mapping")
    args["typicalPods"] = listed
    return doc, plugin


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pods", type=Path, required=True,
                    help="the workload's pods: an openb pod list with all 11 columns (not the 5-column form)")
    ap.add_argument("--profile", type=Path, help="profile file to write with the typicalPods set (default: the list alone)")
    ap.add_argument("--plugin", choices=WORKLOAD_PLUGINS, help="the plugin given the pods (default: the profile's one)")
    ap.add_argument("--scheduler-name", help="the profile of --profile to change, when it has several")
    ap.add_argument("--nodes", type=Path, help="node list: also print d/c, whether CPU binds on that cluster")
    ap.add_argument("--threshold", type=float, default=95.0, help="popularity threshold, %% of pods covered (default 95)")
    ap.add_argument("--sample", type=int, default=0,
                    help="use N pods drawn without replacement (sensitivity studies; default 0: every pod)")
    ap.add_argument("--seed", type=int, default=0, help="seed of --sample")
    ap.add_argument("--out", type=Path, required=True, help="output YAML ('-' for stdout)")
    a = ap.parse_args(argv)
    try:
        if not (0 < a.threshold <= 100):
            raise VariantError(f"--threshold: {a.threshold} is not within (0, 100]")
        pods = read_pods(a.pods, "--pods")
        if a.sample:
            if not 0 < a.sample <= len(pods):
                raise VariantError(f"--sample: {a.sample} is not within 1..{len(pods)} (the pods in {a.pods})")
            pods = random.Random(a.seed).sample(pods, a.sample)
        kept = typical(pods, a.threshold)
        listed = as_yaml_list(kept)
        doc: object = {"typicalPods": listed}
        plugin = None
        if a.profile is not None:
            text = read_text(a.profile, "--profile")
            try:
                loaded = yaml.safe_load(text)
            except yaml.YAMLError as e:
                mark = getattr(e, "problem_mark", None)
                at = f"{a.profile}:{mark.line + 1}" if mark is not None else str(a.profile)
                raise VariantError(f"--profile: {at}: not YAML ({getattr(e, 'problem', e)})") from None
            doc, plugin = with_typical_pods(loaded, listed, a.plugin, a.scheduler_name, str(a.profile))
        bind = None
        if a.nodes is not None:
            nodes = read_nodes(a.nodes)
            gpus = sum(n.gpu for n in nodes)
            if gpus <= 0:
                raise VariantError(f"--nodes: {a.nodes} has no GPU")
            bind = binding(kept, sum(n.cpu for n in nodes) / gpus)  # milli-CPU per GPU
        text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120)
        if str(a.out) == "-":
            sys.stdout.write(text)
        else:
            try:
                a.out.write_text(text)
            except OSError as e:
                raise VariantError(f"--out: cannot write {a.out}: {e.strerror}") from None
    except VariantError as e:
        print(f"typical_pods: {e}", file=sys.stderr)
        return 2
    covered = sum(n for _, n in kept)
    print(f"typical_pods: {len(kept)} shapes cover {covered} of {len(pods)} pods"
          f"{f'; typicalPods of {plugin}' if plugin else ''}", file=sys.stderr)
    if bind is not None:
        form = "by shape (CPU binds)" if bind.ratio >= 1 else "mean (CPU does not bind)"
        print(f"typical_pods: d/c = {bind.ratio:.3f} +- {bind.se:.3f} (one standard error): FillAwareBinding's "
              f"CPU term {form}", file=sys.stderr)
        if bind.undecided:
            print("typical_pods: warning: d/c is within two standard errors of 1: where the policy does not count "
                  "its pods (observeDemand off, e.g. the extender), the CPU term depends on this sample of the "
                  "workload; a longer pod history decides it", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
