#!/usr/bin/env python3
"""Issue 18's quality table: FGD and gpusched on the default openb trace, on generated variants and on
pod lists you have (the published openb traces), against the offline bound (docs/quality.md; every
table there names the command that made it).

    python3 python/tools/quality_report.py --workdir /tmp/quality --seeds 42-51 --bound-seeds 42-44 --jobs 1
    python3 python/tools/quality_report.py --workdir /tmp/quality --traces path/to/openb/data --no-bound
    python3 python/tools/quality_report.py --workdir /tmp/quality --no-bound --given-admissions --bound-seeds 42-51
    python3 python/tools/quality_report.py --workdir /tmp/quality --traces default --no-bound \
        --profile-file data/profiles/fgd.yaml --profile-file my-policy.yaml --ours my-policy
    python3 python/tools/quality_report.py --workdir /tmp/draws --traces gen-gpushare40,gen-cpu250 --gen-seed 3-7 --no-bound

--traces takes `default`, the names of generated variants (`gen-*`), openb-format pod list files
and folders (every openb_pod_list_*.csv in one, by name). For each trace: a variant is generated
(python/tools/trace_variants.py, generator seed --gen-seed; with several, one draw of each variant per
generator seed, named gen-*-gN), `gpusched-sim --mode paper --tune 1.3`
runs each policy on --seeds, python/tools/offline_bound.py bounds --bound-seeds (not with
--no-bound), with --given-admissions an LP bounds, on --bound-seeds, the placements that admit at
least the sharing and CPU-only pods FGD and --ours placed in their replays (admission_bound.py's
bound; with or without --no-bound), and, with --frag, gpusched-frag-kinds splits the
unallocated GPU by kind. Prints Markdown tables (unallocated GPU in % of capacity, means over the
seeds), then how many traces meet issue 18's goal: --ours at least 20 % below FGD on the mean and
behind it on no seed; with --given-admissions also on how many of the others no placement that
admits what --ours admitted could meet it (the cap is a mean over --bound-seeds, the goal over
--seeds: give both the same seeds for a like comparison). With several generator seeds a last table
gives, per variant, the reduction on each draw, the draws meeting the goal and the runs behind FGD.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import admission_bound as ab  # noqa: E402
import offline_bound as ob  # noqa: E402
import trace_variants as tv  # noqa: E402

# name -> trace_variants.py knobs. The ranges are issue 18's (sharing 20-100% of the GPU request,
# CPU-only 0.5x-3x as the published cpu050..cpu300 files: 5-30% of the pods, multi-GPU 20-50%,
# GPU-type constraints 5-33%); none is chosen by looking at results.
VARIANTS: dict[str, dict[str, float]] = {
    **{f"gen-gpushare{int(v * 100)}": {"gpu_share": v} for v in (0.2, 0.4, 0.6, 0.8, 1.0)},
    **{f"gen-cpu{int(v * 1000):03d}": {"cpu_only": v} for v in (0.05, 0.10, 0.20, 0.25, 0.30)},
    **{f"gen-multigpu{int(v * 100)}": {"multi_gpu": v} for v in (0.2, 0.3, 0.4, 0.5)},
    **{f"gen-gpuspec{int(round(v * 100)):02d}": {"gpu_spec": v} for v in (0.05, 0.10, 0.20, 0.25, 0.33)},
}


GOAL_REDUCTION_PCT = 20.0  # issue 18: unallocated GPU share at least 20 % below FGD's
TUNE = 1.3  # the FGD paper's protocol: gpusched-sim --mode paper's default, offline_bound.py's


class ReportError(ValueError):
    """Bad input, with the flag and the file it is about."""


def seeds_of(text: str) -> list[int]:
    return ob.parse_seeds(text)


def resolve_traces(spec: str) -> list[tuple[str, Path | None]]:
    """--traces as (name, pod list) pairs in the order given; None for default and the gen-* variants,
    whose files the report makes. A folder stands for its openb_pod_list_*.csv files, sorted by name;
    a file's name is its stem less the openb_pod_list_ prefix. Raises ReportError for an entry that is
    none of these, a folder without pod lists, or two traces of the same name."""
    out: list[tuple[str, Path | None]] = []
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            raise ReportError(f"--traces: empty entry in '{spec}'")
        if entry == "default" or entry in VARIANTS:
            out.append((entry, None))
            continue
        path = Path(entry)
        if path.is_dir():
            files = sorted(path.glob("openb_pod_list_*.csv"))
            if not files:
                raise ReportError(f"--traces: {path}: no openb_pod_list_*.csv in this folder")
            out.extend((f.stem.removeprefix("openb_pod_list_"), f) for f in files)
        elif path.is_file():
            out.append((path.stem.removeprefix("openb_pod_list_"), path))
        else:
            raise ReportError(f"--traces: '{entry}' is not default, one of {', '.join(VARIANTS)}, "
                              "a pod list file or a folder")
    seen: set[str] = set()
    for name, _ in out:
        if name in seen:
            raise ReportError(f"--traces: two traces named '{name}'")
        seen.add(name)
    return out


def profile_names(files: list[Path]) -> list[str]:
    """The schedulerName of each profile file's one profile, in order. Raises ReportError naming the
    file for one that cannot be read, is not a KubeSchedulerConfiguration with one named profile, or
    repeats a name (gpusched-sim checks the rest when it loads the file)."""
    names: list[str] = []
    for f in files:
        try:
            doc = yaml.safe_load(f.read_text())
        except (OSError, yaml.YAMLError) as e:
            raise ReportError(f"--profile-file: {f}: {e}") from None
        profiles = doc.get("profiles") if isinstance(doc, dict) else None
        if not isinstance(profiles, list) or len(profiles) != 1 or not isinstance(profiles[0], dict) \
                or not isinstance(profiles[0].get("schedulerName"), str):
            raise ReportError(f"--profile-file: {f}: profiles: expected one profile with a schedulerName")
        name = profiles[0]["schedulerName"]
        if name in names:
            raise ReportError(f"--profile-file: {f}: schedulerName '{name}' is already another file's")
        names.append(name)
    return names


def goal_met(row: dict, ours: str) -> tuple[float, int, bool]:
    """(reduction %, seeds on which `ours` leaves more GPU unallocated than FGD, whether issue 18's
    goal holds): reduction = (1 - ours / FGD) x 100 of the means over the seeds."""
    u, per = row["unalloc"], row["per_seed"]
    red = (1 - u[ours] / u["FGD"]) * 100 if u["FGD"] > 0 else float("nan")
    worse = sum(1 for s, v in per[ours].items() if v > per["FGD"][s])
    return red, worse, red >= GOAL_REDUCTION_PCT - 1e-9 and worse == 0  # 1 - 4/5 is 19.999999999999996 %


def given_admissions(pods_path: Path, nodes_path: Path, runs: list[dict], seeds: list[int],
                     policies: list[str]) -> dict[str, dict[int, float]]:
    """Per policy and seed, the least unallocated GPU % (of capacity) that any placement admitting at
    least the one-GPU sharing pods of each size and the CPU-only pods the policy placed in its replay
    must leave: offline_bound's LP with those counts as floors (admission_bound.py). `runs` are
    gpusched-sim's JSON runs of the paper protocol at TUNE on these files; each run's arrivals are
    checked against the bound's copy of the arrival sequence."""
    pods, nodes = ob.read_pods(pods_path, "--traces"), ob.read_nodes(nodes_path)
    cap = 1000 * sum(t.gpu for t in nodes)
    types = Counter(nodes)
    by = {(r["policy"], r["seed"]): r for r in runs}
    out: dict[str, dict[int, float]] = {p: {} for p in policies}
    for seed in seeds:
        shapes = Counter(pods[i][1] for i in ob.arrivals(pods, cap, TUNE, seed))
        for p in policies:
            try:
                out[p][seed] = ab.unavoidable_given(shapes, types, cap, by[(p, seed)], seed, p)[0]
            except ob.BoundError as e:
                raise ReportError(f"{pods_path}: {e}") from None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--build-dir", type=Path, default=REPO / "build/main")
    ap.add_argument("--traces", default="default," + ",".join(VARIANTS),
                    help="comma-separated: default, gen-* variants, openb pod list files, folders of them")
    ap.add_argument("--nodes", type=Path, default=REPO / "data/openb/openb_node_list_gpu_node.csv",
                    help="node list CSV (default: the openb GPU nodes)")
    ap.add_argument("--policies", default="FGD,gpusched")
    ap.add_argument("--profile-file", type=Path, action="append", default=[],
                    help="replay this profile file instead of --policies (repeatable; FGD's is data/profiles/fgd.yaml); "
                         "a policy is named by its schedulerName")
    ap.add_argument("--ours", default="gpusched", help="the policy compared with FGD (reduction, seeds worse, gap ratio)")
    ap.add_argument("--seeds", default="42-51")
    ap.add_argument("--bound-seeds", default="42-44")
    ap.add_argument("--gen-seed", default="1",
                    help="trace_variants.py's seed for the gen-* variants; several (3-7, or 1,2) make one draw of "
                         "each variant per seed, and a table over the draws")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--frag", action="store_true", help="also run gpusched-frag-kinds")
    ap.add_argument("--no-bound", action="store_true", help="skip the LP bound and the packing (minutes per trace)")
    ap.add_argument("--given-admissions", action="store_true",
                    help="also bound, on --bound-seeds, the placements admitting the sharing and CPU-only pods FGD and "
                         "--ours placed (seconds per seed and trace): what packing alone could gain, and the most "
                         "any such placement could be below FGD")
    a = ap.parse_args(argv)
    try:
        policies = profile_names(a.profile_file) if a.profile_file else a.policies.split(",")
    except ReportError as e:
        print(f"quality_report: {e}", file=sys.stderr)
        return 2
    flag = "--profile-file" if a.profile_file else "--policies"
    if "FGD" not in policies or a.ours not in policies:
        print(f"quality_report: {flag}: {', '.join(policies)}: must name FGD and --ours ('{a.ours}')", file=sys.stderr)
        return 2
    if a.profile_file and a.frag:
        print("quality_report: --frag: gpusched-frag-kinds replays --policies only, not --profile-file", file=sys.stderr)
        return 2
    which = [x for f in a.profile_file for x in ("--profile-file", str(f))] or ["--policy", a.policies]
    nodes_path = a.nodes
    base_path = REPO / "data/openb/openb_pod_list_default.csv"
    try:
        traces = resolve_traces(a.traces)
        seeds = seeds_of(a.seeds)
        try:
            gen_seeds = ob.parse_seeds(a.gen_seed)
        except ob.BoundError as e:
            raise ReportError(str(e).replace("--seeds:", "--gen-seed:", 1)) from None
        if len(set(gen_seeds)) != len(gen_seeds):
            raise ReportError(f"--gen-seed: '{a.gen_seed}' names a seed twice")
        plan = draws(traces, gen_seeds)
        bound_seeds: list[int] = []
        if not a.no_bound or a.given_admissions:
            try:
                bound_seeds = ob.parse_seeds(a.bound_seeds)
            except ob.BoundError as e:
                raise ReportError(str(e).replace("--seeds:", "--bound-seeds:", 1)) from None
        if a.given_admissions and not set(bound_seeds) <= set(seeds):
            raise ReportError(f"--bound-seeds: {a.bound_seeds}: with --given-admissions every bound seed must be "
                              f"among --seeds ({a.seeds}), whose replays it reads")
        ob.read_nodes(nodes_path)
        for _, path in traces:  # every file is checked before the first replay
            if path is not None and not ob.read_pods(path, "--traces"):
                raise ReportError(f"--traces: {path} has no pod")
    except (ReportError, ob.BoundError) as e:
        print(f"quality_report: {e}", file=sys.stderr)
        return 2
    sim = a.build_dir / "tools" / "gpusched-sim"
    if not sim.exists():
        print(f"quality_report: --build-dir: {sim} not built", file=sys.stderr)
        return 2
    a.workdir.mkdir(parents=True, exist_ok=True)
    variants = any(p is None and n in VARIANTS for n, p in traces)
    base, nodes = (tv.read_pods(base_path), tv.read_nodes(nodes_path)) if variants else (None, None)
    rows = []
    for name, pods_path, variant, gen in plan:
        if name == "default" and pods_path is None:
            pods_path = base_path
        elif pods_path is None:
            pods_path = a.workdir / f"{name}.csv"
            pods_path.write_text(tv.to_csv(tv.make_variant(base, nodes, gen, **VARIANTS[variant])))
        out = a.workdir / f"{name}.sim.json"
        done = subprocess.run([str(sim), "--pods", str(pods_path), "--nodes", str(nodes_path), *which,
                               "--seeds", a.seeds, "--jobs", str(a.jobs), "-q", "--no-progress", "--output-json", str(out)])
        if done.returncode != 0:  # gpusched-sim has said why on stderr
            print(f"quality_report: gpusched-sim failed on trace '{name}' ({pods_path}), exit {done.returncode}",
                  file=sys.stderr)
            return 2
        runs = json.loads(out.read_text())["runs"]
        un = {p: {r["seed"]: r["unallocated_pct_at_tune"] for r in runs if r["policy"] == p} for p in policies}
        row = {"trace": name, "unalloc": {p: statistics.mean(v.values()) for p, v in un.items()}, "per_seed": un}
        if variant is not None:
            row["variant"], row["gen_seed"] = variant, gen
        if not a.no_bound:
            bjson = a.workdir / f"{name}.bound.json"
            ob.main(["--pods", str(pods_path), "--nodes", str(nodes_path), "--seeds", a.bound_seeds, "--json", str(bjson)])
            b = json.loads(bjson.read_text())["runs"]
            row["unavoidable"] = statistics.mean(r["unavoidable_pct"] for r in b)
            row["packed_unalloc"] = statistics.mean(100 - r["packed_pct"] for r in b)
        if a.given_admissions:
            try:
                row["given"] = given_admissions(pods_path, nodes_path, runs, bound_seeds, ["FGD", a.ours])
            except (ReportError, ob.BoundError) as e:
                print(f"quality_report: {e}", file=sys.stderr)
                return 2
        if a.frag:
            fk = a.build_dir / "tools" / "gpusched-frag-kinds"
            res = subprocess.run([str(fk), "--pods", str(pods_path), "--nodes", str(nodes_path), "--policy", a.policies,
                                  "--seeds", a.seeds], check=True, capture_output=True, text=True)
            (a.workdir / f"{name}.frag.csv").write_text(res.stdout)
            fr = list(csv.DictReader(io.StringIO(res.stdout)))
            row["frag"] = {p: {k: statistics.mean(float(r[k]) for r in fr if r["policy"] == p)
                               for k in fr[0] if k not in ("policy", "seed")} for p in policies}
        rows.append(row)
        print(f"quality_report: {name} done", file=sys.stderr, flush=True)
    (a.workdir / "report.json").write_text(json.dumps(rows, indent=1))
    print_tables(rows, policies, a.ours)
    return 0


def draws(traces: list[tuple[str, Path | None]], gen_seeds: list[int]) -> list[tuple[str, Path | None, str | None, int | None]]:
    """The rows to replay: (row name, pod list or None, gen-* variant or None, generator seed or None).
    A gen-* variant gives one row per generator seed, named as the variant when there is one seed and
    <variant>-g<seed> otherwise; every other trace gives one row. Raises ReportError when a file's name
    is also a draw's."""
    out: list[tuple[str, Path | None, str | None, int | None]] = []
    for name, path in traces:
        if path is None and name in VARIANTS:
            out += [(name if len(gen_seeds) == 1 else f"{name}-g{g}", None, name, g) for g in gen_seeds]
        else:
            out.append((name, path, None, None))
    names = Counter(name for name, *_ in out)
    if max(names.values(), default=1) > 1:
        raise ReportError(f"--traces: two traces named '{names.most_common(1)[0][0]}' (a file and a draw of --gen-seed)")
    return out


def admission_cap(row: dict, ours: str) -> tuple[float, float, float]:
    """For a row with --given-admissions' bound: (the mean over the bound's seeds of that bound for
    `ours`; the most, in %, that any placement admitting at least ours' sharing and CPU-only pods
    could be below FGD's mean on those seeds, (1 - bound / FGD) x 100; ours' gap to its bound over
    FGD's gap to FGD's own, nan where FGD has none)."""
    g, per = row["given"], row["per_seed"]
    seeds = list(g[ours])
    fgd = statistics.mean(per["FGD"][s] for s in seeds)
    mine = statistics.mean(per[ours][s] for s in seeds)
    g_ours, g_fgd = statistics.mean(g[ours].values()), statistics.mean(g["FGD"].values())
    cap = (1 - g_ours / fgd) * 100 if fgd > 0 else float("nan")
    return g_ours, cap, (mine - g_ours) / (fgd - g_fgd) if fgd > g_fgd else float("nan")


def print_tables(rows: list[dict], policies: list[str], ours: str = "gpusched") -> None:
    """The tables of main(): one row per trace (FGD must be among the policies); the bound's columns
    read "—" for a row made with --no-bound, and those of --given-admissions (shown when some row
    has them) for a row without. Ends with the count of traces meeting issue 18's goal and, with
    --given-admissions, of those missing it that no placement admitting ours' pods could meet; then,
    where the rows hold draws of more than one generator seed, the table over the draws (print_draws)."""
    given = any("given" in r for r in rows)
    print("| trace | " + " | ".join(f"{p} unalloc %" for p in policies) +
          " | reduction vs FGD | seeds worse than FGD | unavoidable % (LP bound) | best found % (packing) | "
          f"gap {ours} / gap FGD |" +
          (f" {ours} given admissions % | most below FGD given {ours}'s admissions | "
           f"gap {ours} / gap FGD, given admissions |" if given else ""))
    print("|---|" + "---|" * (len(policies) + 5 + (3 if given else 0)))
    met, missed, capped = 0, 0, 0
    for r in rows:
        u = r["unalloc"]
        red, worse, ok = goal_met(r, ours)
        met += ok
        if "unavoidable" in r:
            gap = (u[ours] - r["unavoidable"]) / (u["FGD"] - r["unavoidable"]) if u["FGD"] > r["unavoidable"] else float("nan")
            bound = f"{r['unavoidable']:.2f} | {r['packed_unalloc']:.2f} | {gap:.2f}"
        else:
            bound = "— | — | —"
        if "given" in r:
            g_ours, cap, ratio = admission_cap(r, ours)
            bound += f" | {g_ours:.2f} | {cap:.1f}% | {ratio:.2f}"
            if not ok:
                missed += 1
                capped += cap < GOAL_REDUCTION_PCT - 1e-9
        elif given:
            bound += " | — | — | —"
        print(f"| {r['trace']} | " + " | ".join(f"{u[p]:.2f}" for p in policies) +
              f" | {red:.1f}% | {worse}/{len(r['per_seed'][ours])} | {bound} |")
    print()
    print(f"{met} of {len(rows)} traces meet issue 18's goal ({ours} at least {GOAL_REDUCTION_PCT:.0f} % below FGD, "
          "behind it on no seed)")
    if given:
        print(f"{capped} of the {missed} traces with the bound given admissions that miss it: no placement that admits "
              f"at least {ours}'s sharing and CPU-only pods could be {GOAL_REDUCTION_PCT:.0f} % below FGD there "
              "(means over --bound-seeds)")
    if len({r["gen_seed"] for r in rows if "gen_seed" in r}) > 1:
        print()
        print_draws(rows, ours)
    if any("frag" in r for r in rows):
        keys = ["unalloc_pct", "idle_cpu_stranded_pct", "idle_mem_stranded_pct", "idle_whole_gpus_pct",
                "idle_partial_gpus_pct", "fgd_q4_lack_cpu_pct", "fgd_q1_lack_both_pct", "fgd_q2_lack_gpu_pct",
                "failed_share_gpu_pct", "failed_whole_gpu_pct", "failed_multi_gpu_pct", "nodes_cpu_low"]
        print()
        print("| trace | policy | " + " | ".join(keys) + " |")
        print("|---|---|" + "---|" * len(keys))
        for r in rows:
            for p, f in r.get("frag", {}).items():
                print(f"| {r['trace']} | {p} | " + " | ".join(f"{f[k]:.2f}" for k in keys) + " |")


def print_draws(rows: list[dict], ours: str) -> None:
    """The table over generator seeds: per gen-* variant (in the order of its first row), ours'
    reduction against FGD on each draw, the lowest of them, how many draws meet issue 18's goal and
    how many runs (draws x seeds) ours leaves more GPU unallocated than FGD on."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        if "variant" in r:
            by.setdefault(r["variant"], []).append(r)
    gens = sorted({r["gen_seed"] for r in rows if "gen_seed" in r})
    print("| variant | " + " | ".join(f"reduction, gen seed {g}" for g in gens) +
          " | lowest | draws meeting the goal | runs behind FGD |")
    print("|---|" + "---|" * (len(gens) + 3))
    for variant, rs in by.items():
        got = {r["gen_seed"]: goal_met(r, ours) for r in rs}
        cells = [f"{got[g][0]:.1f}%" if g in got else "—" for g in gens]
        runs = sum(len(r["per_seed"][ours]) for r in rs)
        print(f"| {variant} | " + " | ".join(cells) + f" | {min(v[0] for v in got.values()):.1f}% | "
              f"{sum(v[2] for v in got.values())}/{len(got)} | {sum(v[1] for v in got.values())}/{runs} |")


if __name__ == "__main__":
    sys.exit(main())
