"""Summarises gpusched-sim --mode dynamic --output-json FILE (docs/quality.md, "Dynamic mode" and "Sustained load").

Without options: one row per policy with means over seeds, then the arrival window's sample points and the
6-hour samples' pending pods. With --by-week: each policy's allocation, fragmentation and pending pods by
week of the arrival window (means of the 6-hour samples in the week, then over seeds), and each other
policy's allocation minus the reference policy's, seed by seed (mean and range). With --weeks FIRST-LAST
as well: the same over that span of weeks, per seed, and where each policy's unallocated GPU is (in wholly
free or in partly used GPUs) and what its waiting pods ask for (one GPU or several). For replays with
--preemption the overall table also has the allocation held by runs that preemption ended ("tw lost %"),
and a last table gives the withdrawn pods as a share of each priority's pods (both when the runs carry
those fields; builds before session 23 did not write them).
Several files (replays of the same node and pod files with the same options, e.g. other policies) are
summarised together. The first line names those options: the queue order, preemption, priorities and
time scale.

    python3 python/tools/dynamic_summary.py out.json
    python3 python/tools/dynamic_summary.py --by-week --weeks 5-12 out.json more-policies.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

Run = dict[str, Any]

WEEK_S = 7 * 86400
SAMPLE_S = 6 * 3600  # gpusched-sim's sample interval after time 0 (sim/dynamic.hpp)

# The overall table: label, key, the value (None: the key is a number; -1: the last of a list), decimals.
COLUMNS: list[tuple[str, str, int | None, int]] = [
    ("tw alloc %", "time_weighted_allocation_pct", None, 2),
    ("alloc % at end", "window_allocation_pct", -1, 2),
    ("tw frag %", "time_weighted_frag_amount_pct", None, 2),
    ("frag % at end", "window_frag_amount_pct", -1, 2),
    ("tw pending", "time_weighted_pending_pods", None, 1),
    ("pending at end", "window_pending_pods", -1, 1),
    ("max pending", "max_pending_pods", None, 1),
    ("waited", "waited_pods", None, 1),
    ("withdrawn", "withdrawn_pods", None, 1),
    ("delay mean s", "delay_mean_s", None, 2),
    ("delay p95 s", "delay_p95_s", None, 1),
    ("delay max s", "delay_max_s", None, 1),
    ("preemptions", "preemptions", None, 1),
    ("victims", "preempted_pods", None, 1),
    ("tw lost %", "time_weighted_preempted_allocation_pct", None, 2),
]
# Columns shown only for replays with --preemption and when every run has the key (gpusched-sim builds
# before session 23 did not write it).
OPTIONAL_COLUMNS = {"time_weighted_preempted_allocation_pct"}

# The 6-hour series --by-week reads: what, key, decimals.
SERIES = [("alloc %", "allocation_pct", 2), ("frag %", "frag_amount_pct", 2), ("pending", "pending_pods", 1)]
# With --weeks, where the unallocated GPU is and what the waiting pods ask (% of GPU capacity;
# sim/dynamic.hpp, dynamic_sample), when every file has these series (older gpusched-sim builds did not
# write them).
FREE_SERIES = [("alloc %", "allocation_pct"), ("free in whole GPUs %", "free_in_whole_gpus_pct"),
               ("free in partly used GPUs %", "free_in_partly_used_gpus_pct"),
               ("asked by waiting one-GPU pods %", "waiting_one_gpu_pct"),
               ("asked by waiting multi-GPU pods %", "waiting_multi_gpu_pct")]

FILE = "_file"  # the key under which each loaded run keeps the file it came from


class SummaryError(Exception):
    pass


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


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
    seen: set[tuple[str, int]] = set()
    for k, r in enumerate(d["runs"]):
        if not isinstance(r, dict):
            raise SummaryError(f"{path}: runs[{k}] is not an object")
        if "policy" not in r or "seed" not in r:
            raise SummaryError(f"{path}: runs[{k}] has no '{'policy' if 'policy' not in r else 'seed'}'")
        if not isinstance(r["policy"], str) or not r["policy"]:
            raise SummaryError(f"{path}: runs[{k}].policy is {r['policy']!r}, not a name")
        if not isinstance(r["seed"], int) or isinstance(r["seed"], bool):
            raise SummaryError(f"{path}: runs[{k}].seed is {r['seed']!r}, not an integer")
        if (r["policy"], r["seed"]) in seen:
            raise SummaryError(f"{path}: runs[{k}]: {r['policy']}, seed {r['seed']}, is in the file twice")
        seen.add((r["policy"], r["seed"]))
        r[FILE] = path
    return d


def inputs_of(path: Path, d: dict[str, Any]) -> list[tuple[str, str]]:
    """The (role, sha256) of a file's inputs; a file that does not name them cannot be merged."""
    inputs = d.get("inputs")
    if (not isinstance(inputs, list) or not inputs
            or not all(isinstance(i, dict) and isinstance(i.get("sha256"), str) and i["sha256"] for i in inputs)):
        raise SummaryError(f"{path}: no 'inputs' with a sha256 each; several files are summarised together only "
                           "when they name the same node and pod files")
    return sorted((str(i.get("role", "")), i["sha256"]) for i in inputs)


def merge(paths: list[Path]) -> dict[str, Any]:
    """One file's runs, or the runs of several replays of the same inputs (other policies, other seeds)."""
    first = load(paths[0])
    if len(paths) == 1:
        return first
    ins = inputs_of(paths[0], first)
    seen = {(r["policy"], r["seed"]): paths[0] for r in first["runs"]}
    for p in paths[1:]:
        d = load(p)
        if inputs_of(p, d) != ins:
            raise SummaryError(f"{p}: its inputs (node and pod files, by sha256) are not those of {paths[0]}")
        for key, default in (("time_scale", None), ("preemption", None), ("priority_by_qos", None), ("queue", "fifo")):
            # A file written before gpusched-sim had --queue replayed with the FIFO queue.
            if d.get(key, default) != first.get(key, default):
                raise SummaryError(
                    f"{p}: {key} is {d.get(key, default)!r}, {paths[0]} has {first.get(key, default)!r}")
        for r in d["runs"]:
            k = (r["policy"], r["seed"])
            if k in seen:
                raise SummaryError(f"{p}: {r['policy']}, seed {r['seed']}, is also in {seen[k]}")
            seen[k] = p
            first["runs"].append(r)
    return first


def policies(d: dict[str, Any]) -> dict[str, dict[int, Run]]:
    """Runs by policy (in the order they first appear) and seed."""
    out: dict[str, dict[int, Run]] = {}
    for r in d["runs"]:
        out.setdefault(r["policy"], {})[r["seed"]] = r
    return out


def where(r: Run) -> str:
    return f"{r[FILE]}: the run of {r['policy']}, seed {r['seed']}"


def number(r: Run, key: str) -> float:
    if key not in r:
        raise SummaryError(f"{where(r)}, has no '{key}'")
    if not is_number(r[key]):
        raise SummaryError(f"{where(r)}: '{key}' is {r[key]!r}, not a number")
    return r[key]


def numbers(r: Run, key: str) -> list[float]:
    if key not in r:
        raise SummaryError(f"{where(r)}, has no '{key}'")
    v = r[key]
    if not isinstance(v, list) or not v:
        raise SummaryError(f"{where(r)}: '{key}' is not a list of numbers")
    for i, x in enumerate(v):
        if not is_number(x):
            raise SummaryError(f"{where(r)}: {key}[{i}] is {x!r}, not a number")
    return v


def full_weeks(r: Run) -> int:
    """Weeks that end within one sample interval of the arrival window's end (its last arrival)."""
    days = number(r, "window_days")
    if days < 0:
        raise SummaryError(f"{where(r)}: 'window_days' is {days!r}, not a time")
    return int((days * 86400 + SAMPLE_S) // WEEK_S)


def weekly(r: Run, weeks: int, keys: list[str] | None = None) -> list[tuple[float, ...]]:
    """Per week 1..weeks: the mean of each series (keys, default SERIES') over the 6-hour samples with
    (week-1)*7 d < t <= week*7 d.

    t counts from the first sample, which gpusched-sim takes at the first arrival, where the window starts.
    A sample at t is the state held just before t, before the events of t (sim/driver.hpp): the first
    is the cluster before the first arrival, and the one at 7 d ends week 1."""
    t = numbers(r, "time_s")
    series = [numbers(r, key) for key in (keys if keys is not None else [key for _, key, _ in SERIES])]
    if any(len(s) != len(t) for s in series):
        raise SummaryError(f"{where(r)}: its series differ in length")
    sums = [[0.0] * len(series) for _ in range(weeks)]
    counts = [0] * weeks
    for i, ti in enumerate(t):
        rel = ti - t[0]
        if rel <= 0:
            continue
        w = math.ceil(rel / WEEK_S) - 1
        if w < weeks:
            counts[w] += 1
            for j, s in enumerate(series):
                sums[w][j] += s[i]
    for w, c in enumerate(counts):
        if c == 0:
            raise SummaryError(f"{where(r)}: no sample in week {w + 1}")
    return [tuple(x / c for x in s) for s, c in zip(sums, counts)]


def row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def header(names: list[str]) -> list[str]:
    """A Markdown table's head: the names, then a rule with every column but the first right-aligned."""
    return [row(names), "|---" + "|--:" * (len(names) - 1) + "|"]


def lead_cell(diffs: list[float]) -> str:
    return f"{mean(diffs):+.2f} ({min(diffs):+.2f} to {max(diffs):+.2f})"


def parse_span(text: str, weeks: int) -> tuple[int, int]:
    try:
        first, last = (int(x) for x in text.split("-", 1)) if "-" in text else (int(text), int(text))
    except ValueError:
        raise SummaryError(f"--weeks: {text!r} is not FIRST-LAST (e.g. 5-12)") from None
    if first > last:
        raise SummaryError(f"--weeks: {text!r} ends before it starts")
    if not 1 <= first <= last <= weeks:
        raise SummaryError(f"--weeks: {text!r} is not within weeks 1-{weeks} of the arrival window")
    return first, last


def by_week(paths: list[Path], d: dict[str, Any], reference: str | None, span: str | None) -> list[str]:
    named = " ".join(map(str, paths))
    runs = policies(d)
    ref = reference if reference is not None else ("FGD" if "FGD" in runs else next(iter(runs)))
    if ref not in runs:
        raise SummaryError(f"--reference: {ref!r} is not a policy of {named} ({', '.join(runs)})")
    seeds = sorted(runs[ref])
    for p, by_seed in runs.items():
        if sorted(by_seed) != seeds:
            raise SummaryError(f"{named}: {p} has seeds {sorted(by_seed)}, {ref} has {seeds}; leads pair seeds")
    weeks = min(full_weeks(r) for by_seed in runs.values() for r in by_seed.values())
    if weeks < 1:
        raise SummaryError(f"{named}: the arrival window is shorter than a week; --by-week needs at least one")
    first, last = parse_span(span, weeks) if span is not None else (1, weeks)
    w = {(p, s): weekly(r, weeks) for p, by_seed in runs.items() for s, r in by_seed.items()}
    others = [p for p in runs if p != ref]
    names = list(runs)

    out = [f"By week of the arrival window (means of the 6-hour samples, then over seeds {seeds}); "
           f"leads are allocation minus {ref}'s, mean (range over seeds):", ""]
    head = ["week", *(f"{p} alloc %" for p in names), *(f"{p} − {ref} (points)" for p in others),
            *(f"{p} frag %" for p in names), *(f"{p} pending" for p in names)]
    out += header(head)
    for k in range(weeks):
        cells = [str(k + 1)]
        cells += [f"{mean([w[(p, s)][k][0] for s in seeds]):.2f}" for p in names]
        cells += [lead_cell([w[(p, s)][k][0] - w[(ref, s)][k][0] for s in seeds]) for p in others]
        cells += [f"{mean([w[(p, s)][k][1] for s in seeds]):.2f}" for p in names]
        cells += [f"{mean([w[(p, s)][k][2] for s in seeds]):.1f}" for p in names]
        out.append(row(cells))
    if span is None:
        return out

    def over(p: str, s: int, j: int) -> float:
        return mean([w[(p, s)][k][j] for k in range(first - 1, last)])

    out += ["", f"Weeks {first}-{last}, per seed (means of the weeks):", ""]
    head = ["seed", *(f"{p} alloc %" for p in names), *(f"{p} − {ref} (points)" for p in others),
            *(f"{p} frag %" for p in names)]
    out += header(head)
    for s in [*seeds, None]:
        ss = seeds if s is None else [s]
        cells = ["mean" if s is None else str(s)]
        cells += [f"{mean([over(p, x, 0) for x in ss]):.2f}" for p in names]
        cells += [f"{mean([over(p, x, 0) - over(ref, x, 0) for x in ss]):+.2f}" for p in others]
        cells += [f"{mean([over(p, x, 1) for x in ss]):.2f}" for p in names]
        out.append(row(cells))
    return out + free_and_waiting(runs, seeds, weeks, first, last)


def free_and_waiting(runs: dict[str, dict[int, Run]], seeds: list[int], weeks: int, first: int,
                     last: int) -> list[str]:
    """Weeks first..last: each policy's FREE_SERIES, means of the weeks, then over seeds."""
    keys = [key for _, key in FREE_SERIES]
    everyone = [r for by_seed in runs.values() for r in by_seed.values()]
    if any(key not in r for r in everyone for key in keys):
        return ["", f"(Where the unallocated GPU is: not in every file; gpusched-sim writes {', '.join(keys[1:])}.)"]
    out = ["", f"Weeks {first}-{last}, where the unallocated GPU is and what waits (% of GPU capacity; means "
           f"of the weeks, then over seeds {seeds}):", ""]
    out += header(["policy", *(what for what, _ in FREE_SERIES)])
    for p, by_seed in runs.items():
        w = [weekly(by_seed[s], weeks, keys) for s in seeds]
        cells = [mean([mean([ws[k][j] for k in range(first - 1, last)]) for ws in w]) for j in range(len(keys))]
        out.append(row([p, *(f"{c:.2f}" for c in cells)]))
    return out


def overall(d: dict[str, Any]) -> list[str]:
    runs = policies(d)

    def value(r: Run, key: str, last: int | None) -> float:
        return number(r, key) if last is None else numbers(r, key)[last]

    everyone = [r for by_seed in runs.values() for r in by_seed.values()]
    # As in gpusched-sim's table, the optional column only for replays with preemption.
    columns = [c for c in COLUMNS
               if c[1] not in OPTIONAL_COLUMNS or (d.get("preemption") is True and all(c[1] in r for r in everyone))]
    out = header(["policy", *(c[0] for c in columns)])
    for p, by_seed in runs.items():
        rs = list(by_seed.values())
        out.append(row([p, *(f"{mean([value(r, key, last) for r in rs]):.{k}f}" for _, key, last, k in columns)]))
    keys = ["window_time_s", "window_allocation_pct", "window_frag_amount_pct", "window_pending_pods"]
    n = min(len(numbers(r, key)) for r in everyone for key in keys)
    out.append(f"\nwindow points (s): {numbers(everyone[0], 'window_time_s')[:n]}")
    for what, key, k in [("alloc %", "window_allocation_pct", 1), ("frag %", "window_frag_amount_pct", 1),
                         ("pending", "window_pending_pods", 0)]:
        out.append(f"\n{what} at the {n} points of the arrival window, mean over seeds:")
        for p, by_seed in runs.items():
            rs = list(by_seed.values())
            out.append(f"{p:14s} " + " ".join(f"{mean([r[key][i] for r in rs]):.{k}f}" for i in range(n)))
    out.append("\npending pods at the first four 6-hour samples, mean over seeds:")
    for p, by_seed in runs.items():
        rs = list(by_seed.values())
        m = min(4, *(len(numbers(r, "pending_pods")) for r in rs))
        out.append(f"{p:14s} " + " ".join(f"{mean([r['pending_pods'][i] for r in rs]):.1f}" for i in range(m)))
    out += by_priority(runs, everyone)
    return out


def counts(r: Run, key: str) -> dict[str, float]:
    """A run's counts by priority: an object whose keys are integers (as JSON strings) and values numbers."""
    v = r[key]
    if not isinstance(v, dict) or not all(is_number(x) for x in v.values()):
        raise SummaryError(f"{where(r)}: '{key}' is not an object of counts")
    for k in v:
        try:
            int(k)
        except ValueError:
            raise SummaryError(f"{where(r)}: '{key}' has the key {k!r}, not a priority") from None
    return v


def by_priority(runs: dict[str, dict[int, Run]], everyone: list[Run]) -> list[str]:
    """Withdrawn pods as % of the pods of each priority, mean over seeds, when every run has the counts
    (gpusched-sim builds before session 23 did not write them)."""
    if not all("pods_by_priority" in r and "withdrawn_by_priority" in r for r in everyone):
        return []
    checked: dict[int, tuple[dict[str, float], dict[str, float]]] = {}  # id(run) -> (pods, withdrawn)
    for r in everyone:
        pods, gone = counts(r, "pods_by_priority"), counts(r, "withdrawn_by_priority")
        for k, n in gone.items():
            if n > pods.get(k, 0):
                raise SummaryError(f"{where(r)}: {n} pods of priority {k} withdrawn, of {pods.get(k, 0)}")
        checked[id(r)] = (pods, gone)
    prios = sorted({k for pods, _ in checked.values() for k in pods}, key=int)
    out = ["", "withdrawn pods, % of the pods of each priority (mean over seeds):", ""]
    out += header(["policy", *(f"priority {k}" for k in prios)])
    for p, by_seed in runs.items():
        cells = []
        for k in prios:
            shares = [100.0 * gone.get(k, 0) / pods[k] for pods, gone in (checked[id(r)] for r in by_seed.values())
                      if pods.get(k, 0) > 0]
            cells.append(f"{mean(shares):.2f}" if shares else "—")
        out.append(row([p, *cells]))
    return out


def settings(d: dict[str, Any]) -> str:
    """The replay's settings as the file records them (merge() has checked they agree): which queue
    order, whether preemption and QoS priorities were on, the time scale. A key a file lacks is left
    out, except the queue: a file written before gpusched-sim had --queue replayed with FIFO."""
    parts = [f"queue {d.get('queue', 'fifo')}"]
    if isinstance(d.get("preemption"), bool):
        parts.append(f"preemption {'on' if d['preemption'] else 'off'}")
    if isinstance(d.get("priority_by_qos"), bool):
        parts.append("priorities by QoS" if d["priority_by_qos"] else "priorities as read")
    if is_number(d.get("time_scale")):
        parts.append(f"time scale {d['time_scale']:g}")
    return "replay: " + ", ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", type=Path, nargs="+", metavar="FILE",
                    help="gpusched-sim --mode dynamic --output-json FILE; several: replays of the same pod and node "
                    "files (other policies or seeds), summarised together")
    ap.add_argument("--by-week", action="store_true",
                    help="allocation, fragmentation and pending pods by week of the arrival window, and leads")
    ap.add_argument("--weeks", metavar="FIRST-LAST", help="with --by-week: also the means over these weeks, per seed, and "
                    "where each policy's unallocated GPU is and what its waiting pods ask for")
    ap.add_argument("--reference", metavar="POLICY", help="with --by-week: leads against this policy (default: FGD "
                    "if present, else the first policy)")
    a = ap.parse_args(argv)
    if not a.by_week and (a.weeks is not None or a.reference is not None):
        ap.error("--weeks and --reference need --by-week")
    try:
        d = merge(a.files)
        lines = by_week(a.files, d, a.reference, a.weeks) if a.by_week else overall(d)
    except SummaryError as e:
        print(f"dynamic_summary: {e}", file=sys.stderr)
        return 2
    print("\n".join([settings(d), *lines]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
