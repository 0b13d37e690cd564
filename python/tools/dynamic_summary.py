"""Summarises gpusched-sim --mode dynamic --output-json FILE (docs/quality.md, "Dynamic mode" and "Sustained load").

Without options: one row per policy with means over seeds, then the arrival window's sample points and the
6-hour samples' pending pods. With --by-week: each policy's allocation, fragmentation and pending pods by
week of the arrival window (means of the 6-hour samples in the week, then over seeds), and each other
policy's allocation minus the reference policy's, seed by seed (mean and range). With --weeks FIRST-LAST
as well: the same over that span of weeks, per seed. Several files (replays of the same node and pod files with the
same options, e.g. other policies) are summarised together.

    python3 python/tools/dynamic_summary.py out.json
    python3 python/tools/dynamic_summary.py --by-week --weeks 5-12 out.json more-policies.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable

Run = dict[str, Any]

WEEK_S = 7 * 86400
SAMPLE_S = 6 * 3600  # gpusched-sim's sample interval after time 0 (sim/dynamic.hpp)

COLUMNS: list[tuple[str, Callable[[Run], float], int]] = [
    ("tw alloc %", lambda r: r["time_weighted_allocation_pct"], 2),
    ("alloc % at end", lambda r: r["window_allocation_pct"][-1], 2),
    ("tw frag %", lambda r: r["time_weighted_frag_amount_pct"], 2),
    ("frag % at end", lambda r: r["window_frag_amount_pct"][-1], 2),
    ("tw pending", lambda r: r["time_weighted_pending_pods"], 1),
    ("pending at end", lambda r: r["window_pending_pods"][-1], 1),
    ("max pending", lambda r: r["max_pending_pods"], 1),
    ("waited", lambda r: r["waited_pods"], 1),
    ("withdrawn", lambda r: r["withdrawn_pods"], 1),
    ("delay mean s", lambda r: r["delay_mean_s"], 2),
    ("delay p95 s", lambda r: r["delay_p95_s"], 1),
    ("delay max s", lambda r: r["delay_max_s"], 1),
    ("preemptions", lambda r: r["preemptions"], 1),
    ("victims", lambda r: r["preempted_pods"], 1),
]

# The 6-hour series --by-week reads: what, key, decimals.
SERIES = [("alloc %", "allocation_pct", 2), ("frag %", "frag_amount_pct", 2), ("pending", "pending_pods", 1)]


class SummaryError(Exception):
    pass


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def load(path: Path) -> dict[str, Any]:
    """The simulator's JSON, checked for what this tool reads; SummaryError names the file and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SummaryError(f"{path}: cannot read ({e})") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise SummaryError(f"{path}:{e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(d, dict) or not isinstance(d.get("runs"), list):
        raise SummaryError(f"{path}: no 'runs' list; expected gpusched-sim --output-json")
    if d.get("mode") != "dynamic":
        raise SummaryError(f"{path}: mode is {d.get('mode')!r}; this summarises gpusched-sim --mode dynamic")
    if not d["runs"]:
        raise SummaryError(f"{path}: 'runs' is empty")
    for k, r in enumerate(d["runs"]):
        for key in ("policy", "seed"):
            if key not in r:
                raise SummaryError(f"{path}: runs[{k}] has no '{key}'")
    return d


def inputs_of(d: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((i.get("role", ""), i.get("sha256", "")) for i in d.get("inputs", []) if isinstance(i, dict))


def merge(paths: list[Path]) -> tuple[Path, dict[str, Any]]:
    """One file's runs, or the runs of several replays of the same inputs (other policies, other seeds)."""
    first = load(paths[0])
    seen = {(r["policy"], r["seed"]): paths[0] for r in first["runs"]}
    for p in paths[1:]:
        d = load(p)
        if inputs_of(d) != inputs_of(first):
            raise SummaryError(f"{p}: its inputs (node and pod files, by sha256) are not those of {paths[0]}")
        for key in ("time_scale", "preemption", "priority_by_qos"):
            if d.get(key) != first.get(key):
                raise SummaryError(f"{p}: {key} is {d.get(key)!r}, {paths[0]} has {first.get(key)!r}")
        for r in d["runs"]:
            k = (r["policy"], r["seed"])
            if k in seen:
                raise SummaryError(f"{p}: {r['policy']}, seed {r['seed']}, is also in {seen[k]}")
            seen[k] = p
            first["runs"].append(r)
    return paths[0], first


def policies(d: dict[str, Any]) -> dict[str, dict[int, Run]]:
    """Runs by policy (in the order they first appear) and seed."""
    out: dict[str, dict[int, Run]] = {}
    for r in d["runs"]:
        out.setdefault(r["policy"], {})[r["seed"]] = r
    return out


def field(path: Path, r: Run, key: str) -> Any:
    if key not in r:
        raise SummaryError(f"{path}: the run of {r['policy']}, seed {r['seed']}, has no '{key}'")
    return r[key]


def full_weeks(path: Path, r: Run) -> int:
    """Weeks that end within one sample interval of the arrival window's end (its last arrival)."""
    days = field(path, r, "window_days")
    if not isinstance(days, (int, float)) or not math.isfinite(days) or days < 0:
        raise SummaryError(f"{path}: the run of {r['policy']}, seed {r['seed']}: window_days {days!r} is not a time")
    return int((days * 86400 + SAMPLE_S) // WEEK_S)


def weekly(path: Path, r: Run, weeks: int) -> list[tuple[float, ...]]:
    """Per week 1..weeks: the mean of each SERIES over the 6-hour samples with (week-1)*7 d < t <= week*7 d.

    A sample at t is the state held just before t, before the events of t (sim/driver.hpp): the one at 0
    is the cluster before its first arrival, and the one at 7 d ends week 1."""
    t = field(path, r, "time_s")
    series = [field(path, r, key) for _, key, _ in SERIES]
    if any(len(s) != len(t) for s in series):
        raise SummaryError(f"{path}: the run of {r['policy']}, seed {r['seed']}: its series differ in length")
    sums = [[0.0] * len(SERIES) for _ in range(weeks)]
    counts = [0] * weeks
    for i, ti in enumerate(t):
        if ti <= 0:
            continue
        w = math.ceil(ti / WEEK_S) - 1
        if w < weeks:
            counts[w] += 1
            for j, s in enumerate(series):
                sums[w][j] += s[i]
    for w, c in enumerate(counts):
        if c == 0:
            raise SummaryError(f"{path}: the run of {r['policy']}, seed {r['seed']}: no sample in week {w + 1}")
    return [tuple(x / c for x in s) for s, c in zip(sums, counts)]


def lead_cell(diffs: list[float]) -> str:
    return f"{mean(diffs):+.2f} ({min(diffs):+.2f} to {max(diffs):+.2f})"


def parse_span(text: str, weeks: int) -> tuple[int, int]:
    try:
        first, last = (int(x) for x in text.split("-", 1)) if "-" in text else (int(text), int(text))
    except ValueError:
        raise SummaryError(f"--weeks: {text!r} is not FIRST-LAST (e.g. 5-12)") from None
    if not 1 <= first <= last <= weeks:
        raise SummaryError(f"--weeks: {text!r} is not within weeks 1-{weeks} of the arrival window")
    return first, last


def by_week(path: Path, d: dict[str, Any], reference: str | None, span: str | None) -> list[str]:
    runs = policies(d)
    ref = reference if reference is not None else ("FGD" if "FGD" in runs else next(iter(runs)))
    if ref not in runs:
        raise SummaryError(f"--reference: {ref!r} is not a policy of {path} ({', '.join(runs)})")
    seeds = sorted(runs[ref])
    for p, by_seed in runs.items():
        if sorted(by_seed) != seeds:
            raise SummaryError(f"{path}: {p} has seeds {sorted(by_seed)}, {ref} has {seeds}; leads pair seeds")
    weeks = min(full_weeks(path, r) for by_seed in runs.values() for r in by_seed.values())
    if weeks < 1:
        raise SummaryError(f"{path}: the arrival window is shorter than a week; --by-week needs at least one")
    first, last = parse_span(span, weeks) if span is not None else (1, weeks)
    w = {(p, s): weekly(path, r, weeks) for p, by_seed in runs.items() for s, r in by_seed.items()}
    others = [p for p in runs if p != ref]
    names = list(runs)

    out = [f"By week of the arrival window (means of the 6-hour samples, then over seeds {seeds}); "
           f"leads are allocation minus {ref}'s, mean (range over seeds):", ""]
    head = ["week", *(f"{p} alloc %" for p in names), *(f"{p} − {ref} (points)" for p in others),
            *(f"{p} frag %" for p in names), *(f"{p} pending" for p in names)]
    out += ["| " + " | ".join(head) + " |", "|---" + "|--:" * (len(head) - 1) + "|"]
    for k in range(weeks):
        cells = [str(k + 1)]
        cells += [f"{mean([w[(p, s)][k][0] for s in seeds]):.2f}" for p in names]
        cells += [lead_cell([w[(p, s)][k][0] - w[(ref, s)][k][0] for s in seeds]) for p in others]
        cells += [f"{mean([w[(p, s)][k][1] for s in seeds]):.2f}" for p in names]
        cells += [f"{mean([w[(p, s)][k][2] for s in seeds]):.1f}" for p in names]
        out.append("| " + " | ".join(cells) + " |")
    if span is None:
        return out

    def over(p: str, s: int, j: int) -> float:
        return mean([w[(p, s)][k][j] for k in range(first - 1, last)])

    out += ["", f"Weeks {first}-{last}, per seed (means of the weeks):", ""]
    head = ["seed", *(f"{p} alloc %" for p in names), *(f"{p} − {ref} (points)" for p in others),
            *(f"{p} frag %" for p in names)]
    out += ["| " + " | ".join(head) + " |", "|---" + "|--:" * (len(head) - 1) + "|"]
    for s in [*seeds, None]:
        ss = seeds if s is None else [s]
        cells = ["mean" if s is None else str(s)]
        cells += [f"{mean([over(p, x, 0) for x in ss]):.2f}" for p in names]
        cells += [f"{mean([over(p, x, 0) - over(ref, x, 0) for x in ss]):+.2f}" for p in others]
        cells += [f"{mean([over(p, x, 1) for x in ss]):.2f}" for p in names]
        out.append("| " + " | ".join(cells) + " |")
    return out


def overall(path: Path, d: dict[str, Any]) -> list[str]:
    runs = policies(d)
    try:
        out = ["| policy | " + " | ".join(c[0] for c in COLUMNS) + " |", "|---" + "|--:" * len(COLUMNS) + "|"]
        for p, by_seed in runs.items():
            cells = [f"{mean([get(r) for r in by_seed.values()]):.{k}f}" for _, get, k in COLUMNS]
            out.append(f"| {p} | " + " | ".join(cells) + " |")
        first = d["runs"][0]
        n = len(first["window_pending_pods"])
        out.append(f"\nwindow points (s): {first['window_time_s']}")
        for what, key, k in [("alloc %", "window_allocation_pct", 1), ("frag %", "window_frag_amount_pct", 1),
                             ("pending", "window_pending_pods", 0)]:
            out.append(f"\n{what} at the {n} points of the arrival window, mean over seeds:")
            for p, by_seed in runs.items():
                rs = list(by_seed.values())
                out.append(f"{p:14s} " + " ".join(f"{mean([r[key][i] for r in rs]):.{k}f}" for i in range(n)))
        out.append("\npending pods at the first four 6-hour samples, mean over seeds:")
        for p, by_seed in runs.items():
            rs = list(by_seed.values())
            m = min(4, *(len(r["pending_pods"]) for r in rs))
            out.append(f"{p:14s} " + " ".join(f"{mean([r['pending_pods'][i] for r in rs]):.1f}" for i in range(m)))
    except (KeyError, IndexError) as e:
        raise SummaryError(f"{path}: a run lacks {e}; expected gpusched-sim --mode dynamic --output-json") from None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", type=Path, nargs="+", metavar="FILE",
                    help="gpusched-sim --mode dynamic --output-json FILE; several: replays of the same pod and node "
                    "files (other policies or seeds), summarised together")
    ap.add_argument("--by-week", action="store_true",
                    help="allocation, fragmentation and pending pods by week of the arrival window, and leads")
    ap.add_argument("--weeks", metavar="FIRST-LAST", help="with --by-week: also the means over these weeks, per seed")
    ap.add_argument("--reference", metavar="POLICY", help="with --by-week: leads against this policy (default: FGD "
                    "if present, else the first policy)")
    a = ap.parse_args(argv)
    if not a.by_week and (a.weeks is not None or a.reference is not None):
        ap.error("--weeks and --reference need --by-week")
    try:
        path, d = merge(a.files)
        lines = by_week(path, d, a.reference, a.weeks) if a.by_week else overall(path, d)
    except SummaryError as e:
        print(f"dynamic_summary: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
