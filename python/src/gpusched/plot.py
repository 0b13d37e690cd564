"""Figures of the FGD paper's kind, drawn with matplotlib without pyplot (no global state, no
display needed: figures render with Agg and save to PNG).

- ``plot_allocation``: GPU allocation % against arrived GPU demand % per policy, averaged over
  seeds (Weng et al., "Beware of Fragmentation", USENIX ATC'23, Fig. 9(a); the averaging follows
  the authors' experiments/analysis/merge_alloc_discrete_0920.py: each event's arrived % rounded to
  an integer, the allocation % of the events in a bucket averaged).
- ``plot_ab_table``: a table of metrics of two configurations, A and B, with the relative change.

Input for ``plot_allocation`` (the simulator's JSON output, or anything shaped like it):

- ``{"runs": [{"policy": "FGD", "seed": 42, "arrived_pct": [...], "allocation_pct": [...]}, ...]}``
  or just the list of runs;
- ``{"FGD": [run, run, ...], ...}`` where a run is such a dict or a pair ``(arrived, allocation)``;
- ``{"FGD": {"42": run, ...}, ...}``;
- a path to a JSON file holding one of these.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.transforms import Bbox

from gpusched._arrays import invalid

ARRIVED_KEYS = ("arrived_pct", "arrived")
ALLOCATION_KEYS = ("allocation_pct", "alloc_pct", "allocation")


@dataclass(frozen=True)
class Curve:
    """One policy's allocation curve: per integer arrived %, the mean over seeds and the range."""

    policy: str
    arrived_pct: npt.NDArray[np.float64]
    mean: npt.NDArray[np.float64]
    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    seeds: int


def _series(run: Any, where: str) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    if isinstance(run, Mapping):
        x = next((run[k] for k in ARRIVED_KEYS if k in run), None)
        y = next((run[k] for k in ALLOCATION_KEYS if k in run), None)
        if x is None or y is None:
            raise invalid(where, f"a run needs {ARRIVED_KEYS[0]} and {ALLOCATION_KEYS[0]} series, has {sorted(run)}")
    elif isinstance(run, Sequence) and len(run) == 2:
        x, y = run
    else:
        raise TypeError(f"{where}: a run is a mapping with arrived_pct/allocation_pct or a pair (arrived, allocation)")
    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    if xa.ndim != 1 or ya.shape != xa.shape:
        raise invalid(where, f"arrived and allocation series must be 1-D of equal length, got {xa.shape} and {ya.shape}")
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        raise invalid(where, "series must be finite (no NaN)")
    return xa, ya


def runs_by_policy(
    data: Union[Mapping[str, Any], Sequence[Any], str, os.PathLike[str]],
) -> dict[str, list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]]:
    """Normalises the accepted input shapes to {policy: [(arrived %, allocation %), ...]}."""
    if isinstance(data, (str, os.PathLike)):
        with Path(data).open(encoding="utf-8") as f:
            data = json.load(f)
    if isinstance(data, Mapping) and "runs" in data:
        data = data["runs"]
    out: dict[str, list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]] = {}
    if isinstance(data, Mapping):
        for policy, runs in data.items():
            items = runs.items() if isinstance(runs, Mapping) and not any(k in runs for k in ARRIVED_KEYS) else None
            if items is not None:
                out[str(policy)] = [_series(r, f"{policy}[{seed}]") for seed, r in items]
            elif isinstance(runs, Mapping):
                out[str(policy)] = [_series(runs, str(policy))]
            else:
                out[str(policy)] = [_series(r, f"{policy}[{i}]") for i, r in enumerate(runs)]
    elif isinstance(data, Sequence):
        for i, r in enumerate(data):
            if not isinstance(r, Mapping) or "policy" not in r:
                raise invalid(f"runs[{i}]", "each run in a list needs a 'policy'")
            out.setdefault(str(r["policy"]), []).append(_series(r, f"runs[{i}]"))
    else:
        raise TypeError(f"unsupported allocation data of type {type(data).__name__}")
    if not out or any(not v for v in out.values()):
        raise invalid("data", "no runs")
    return out


def _bucket(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], top: int) -> npt.NDArray[np.float64]:
    """Mean of y per integer round(x) in 0..top; NaN where a bucket is empty."""
    idx = np.floor(x + 0.5).astype(np.int64)  # round half up, as Python's round() on these positive values
    keep = (idx >= 0) & (idx <= top)
    sums = np.bincount(idx[keep], weights=y[keep], minlength=top + 1)
    counts = np.bincount(idx[keep], minlength=top + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def allocation_curves(data: Any, *, max_arrived_pct: Optional[int] = None) -> list[Curve]:
    """Per policy, the seed mean (and min/max) of allocation % per integer arrived %; buckets that
    some seed lacks are left out."""
    runs = runs_by_policy(data)
    top = max_arrived_pct
    if top is None:
        top = int(math.floor(max(float(x.max()) for rs in runs.values() for x, _ in rs if x.size) + 0.5))
    curves = []
    for policy, rs in runs.items():
        b = np.vstack([_bucket(x, y, top) for x, y in rs])
        ok = ~np.isnan(b).any(axis=0)
        grid = np.arange(top + 1, dtype=np.float64)[ok]
        b = b[:, ok]
        curves.append(Curve(policy, grid, b.mean(axis=0), b.min(axis=0), b.max(axis=0), len(rs)))
    return curves


# Line styles that stay distinct in greyscale: (colour, line style, marker), one per policy in
# order (Okabe & Ito's colour-blind-safe palette, https://jfly.uni-koeln.de/color/).
STYLES: tuple[tuple[str, Any, str], ...] = (
    ("#0072B2", "-", "o"),
    ("#D55E00", "--", "s"),
    ("#009E73", "-.", "^"),
    ("#CC79A7", ":", "D"),
    ("#E69F00", (0, (5, 1, 1, 1)), "v"),
    ("#56B4E9", (0, (3, 1, 1, 1, 1, 1)), "P"),
    ("#000000", (0, (1, 1)), "X"),
    ("#999999", "-", "*"),
)


def plot_allocation(
    data: Any,
    path: Optional[Union[str, os.PathLike[str]]] = None,
    *,
    title: str = "GPU allocation against arrived GPU demand",
    max_arrived_pct: Optional[int] = None,
    ax: Optional[Axes] = None,
    zoom: Optional[tuple[float, float, float, float]] = (90.0, 130.0, 85.0, 97.0),
) -> Figure:
    """The FGD paper's figure: GPU allocation % against arrived GPU % per policy (mean over seeds,
    with the seeds' range shaded), and the y = x line of "everything that arrived is allocated".

    Each policy has its own colour, line style and marker (readable in greyscale), and the right
    panel zooms on ``zoom`` = (arrived from, arrived to, allocation from, allocation to), where the
    policies part (default 90-130% arrived, 85-97% allocated; the box on the left panel shows it;
    ``zoom=None`` draws one panel). Saves a PNG when ``path`` is given; returns the figure."""
    curves = allocation_curves(data, max_arrived_pct=max_arrived_pct)
    fig: Figure
    zax: Optional[Axes] = None
    if ax is None:
        if zoom is not None:
            fig = Figure(figsize=(11.0, 4.8), layout="constrained")
            ax, zax = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.0, 1.15]})
        else:
            fig = Figure(figsize=(7.0, 4.8), layout="constrained")
            ax = fig.add_subplot()
    else:
        fig = ax.get_figure()  # type: ignore[assignment]
    assert ax is not None
    top = max(float(c.arrived_pct.max()) for c in curves if c.arrived_pct.size)
    ordered = sorted(curves, key=lambda c: -float(c.mean[-1]) if c.mean.size else 0.0)
    for target in [a for a in (ax, zax) if a is not None]:
        target.plot([0, top], [0, top], color="0.55", linestyle="--", linewidth=0.9, label="all arrived allocated")
        for i, c in enumerate(ordered):
            colour, style, marker = STYLES[i % len(STYLES)]
            label = f"{c.policy} ({c.mean[-1]:.2f}%)" if c.mean.size else c.policy
            n = max(c.arrived_pct.size, 1)
            step = max(n // 8, 1) if target is ax else max(n // 40, 1)
            target.plot(c.arrived_pct, c.mean, color=colour, linestyle=style, linewidth=1.5, marker=marker,
                        markersize=5, markevery=(i * max(step // len(ordered), 1) % step, step),
                        markerfacecolor="white" if i % 2 else colour, label=label)
            if c.seeds > 1:
                target.fill_between(c.arrived_pct, c.low, c.high, color=colour, alpha=0.3, linewidth=0)
        target.grid(True, linewidth=0.5, alpha=0.5)
        target.set_xlabel("Arrived GPU demand (% of cluster GPU capacity)")
    ax.set_ylabel("GPU allocation (% of cluster GPU capacity)")
    ax.set_xlim(0, top)
    ax.set_ylim(0, 100)
    seeds = sorted({c.seeds for c in curves})
    band = f"mean of {seeds[0]} seeds, band: their range" if len(seeds) == 1 and seeds[0] > 1 else ""
    if zax is not None and zoom is not None:
        x0, x1, y0, y1 = zoom
        zax.set_xlim(x0, min(x1, top))
        zax.set_ylim(y0, y1)
        zax.set_title(f"final region (zoom: {y0:g}-{y1:g}% allocated)", fontsize="medium")
        ax.add_patch(Rectangle((x0, y0), min(x1, top) - x0, y1 - y0, fill=False, edgecolor="0.2", linewidth=1.0))
        ax.legend(loc="lower right", fontsize="small", title=band or None, title_fontsize="small")  # empty corner
        fig.suptitle(title)
    else:
        ax.set_title(title + (f" ({band})" if band else ""))
        ax.legend(loc="lower right", fontsize="small")
    if path is not None:
        fig.savefig(os.fspath(path), dpi=150)
    return fig


def _relative_change(a: float, b: float) -> float:
    return (b - a) / abs(a) * 100.0 if a != 0 else (0.0 if b == 0 else math.inf)


def format_value(value: float, ci: Optional[float] = None, *, count: bool = False, digits: int = 2) -> str:
    """A table cell: ``12.35 ± 0.41`` (95% CI half-width when given). A count prints as an integer
    when its mean is one (``2``, not ``2.00``), else with one decimal (a mean over seeds, ``2.4``)."""
    if count:
        text = f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
        return text if ci is None else f"{text} ± {ci:.1f}"
    return f"{value:.{digits}f}" if ci is None else f"{value:.{digits}f} ± {ci:.{digits}f}"


def ab_rows(
    a: Mapping[str, float],
    b: Mapping[str, float],
    *,
    a_ci: Optional[Mapping[str, float]] = None,
    b_ci: Optional[Mapping[str, float]] = None,
    lower_is_better: Iterable[str] = (),
    counts: Iterable[str] = (),
    digits: int = 2,
) -> list[dict[str, Any]]:
    """The A/B table's rows, in the order of ``a``: ``{"metric", "a", "a_ci", "b", "b_ci",
    "change_pct", "verdict" ("better" / "worse" / "same" for B), "a_text", "b_text",
    "change_text"}``. ``*_ci``: 95% CI half-widths by metric; ``counts``: metrics printed as
    integers. Equal as printed is "same"."""
    missing = [k for k in a if k not in b]
    if missing:
        raise invalid("b", f"lacks the metrics {missing}")
    lower, count = set(lower_is_better), set(counts)
    for field, names in (("lower_is_better", lower), ("counts", count)):
        unknown = names - set(a)
        if unknown:
            raise invalid(field, f"names metrics not in the table: {sorted(unknown)}")
    rows = []
    for k, va in a.items():
        vb = b[k]
        if not (math.isfinite(va) and math.isfinite(vb)):
            raise invalid(f"metric '{k}'", "values must be finite")
        ca = a_ci.get(k) if a_ci is not None else None
        cb = b_ci.get(k) if b_ci is not None else None
        change = _relative_change(va, vb)
        ta = format_value(va, ca, count=k in count, digits=digits)
        tb = format_value(vb, cb, count=k in count, digits=digits)
        same = format_value(va, count=k in count, digits=digits) == format_value(vb, count=k in count, digits=digits)
        better = (vb < va) if k in lower else (vb > va)
        rows.append({
            "metric": k, "a": va, "a_ci": ca, "b": vb, "b_ci": cb, "change_pct": change,
            "verdict": "same" if same else "better" if better else "worse",
            "a_text": ta, "b_text": tb, "change_text": f"{change:+.1f}%" if math.isfinite(change) else "n/a",
        })
    return rows


def table_csv(rows: Sequence[Mapping[str, Any]], *, a_label: str = "A", b_label: str = "B",
              path: Optional[Union[str, os.PathLike[str]]] = None) -> str:
    """``ab_rows`` as CSV (RFC 4180, ``\n`` line ends): metric, A, its CI, B, its CI, change % and
    the verdict; numbers as the table prints them, an empty cell where there is no CI. Writes
    ``path`` when given; returns the text."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["metric", a_label, f"{a_label}_ci95", b_label, f"{b_label}_ci95", "change_pct", "verdict"])
    for r in rows:
        def num(text: str) -> str:
            return text.split(" ± ")[0]

        def ci(text: str) -> str:
            return text.split(" ± ")[1] if " ± " in text else ""

        change = f"{r['change_pct']:.1f}" if math.isfinite(r["change_pct"]) else ""
        w.writerow([r["metric"], num(r["a_text"]), ci(r["a_text"]), num(r["b_text"]), ci(r["b_text"]), change, r["verdict"]])
    text = buf.getvalue()
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def table_latex(rows: Sequence[Mapping[str, Any]], *, a_label: str = "A", b_label: str = "B",
                caption: Optional[str] = None, label: Optional[str] = None,
                path: Optional[Union[str, os.PathLike[str]]] = None) -> str:
    """``ab_rows`` as a booktabs ``tabular`` (``\\usepackage{booktabs}``): values ``m $\\pm$ ci``,
    the change in %, B's better changes in bold; wrapped in a ``table`` with ``caption`` / ``label``
    when given. Writes ``path`` when given; returns the text."""
    def cell(text: str) -> str:
        return " $\\pm$ ".join(latex_escape(t) for t in text.split(" ± "))

    lines = [r"\begin{tabular}{lrrr}", r"\toprule",
             f"metric & {latex_escape(a_label)} & {latex_escape(b_label)} & change \\\\", r"\midrule"]
    for r in rows:
        change = latex_escape(r["change_text"]).replace("-", "$-$", 1) if r["change_text"].startswith("-") else latex_escape(r["change_text"])
        if r["verdict"] == "better":
            change = r"\textbf{" + change + "}"
        lines.append(f"{latex_escape(r['metric'])} & {cell(r['a_text'])} & {cell(r['b_text'])} & {change} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption is not None or label is not None:
        inner = [r"\begin{table}", r"\centering"]
        if caption is not None:
            inner.append(r"\caption{" + latex_escape(caption) + "}")
        if label is not None:
            inner.append(r"\label{" + label + "}")
        lines = inner + lines + [r"\end{table}"]
    text = "\n".join(lines) + "\n"
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def plot_ab_table(
    a: Mapping[str, float],
    b: Mapping[str, float],
    path: Optional[Union[str, os.PathLike[str]]] = None,
    *,
    a_label: str = "A",
    b_label: str = "B",
    lower_is_better: Iterable[str] = (),
    title: Optional[str] = None,
    digits: int = 2,
    a_ci: Optional[Mapping[str, float]] = None,
    b_ci: Optional[Mapping[str, float]] = None,
    counts: Iterable[str] = (),
) -> Figure:
    """A table figure: one row per metric (in the order of ``a``), columns A, B (with their 95%
    confidence intervals, ``a_ci`` / ``b_ci``, when given) and B's change relative to A ("change"),
    coloured green where B is better and red where it is worse (metrics in ``lower_is_better``
    improve downwards: latencies, failures); ``counts`` print as integers. ``ab_rows``,
    ``table_csv`` and ``table_latex`` give the same table as data. Saves a PNG when ``path`` is
    given."""
    table_rows = ab_rows(a, b, a_ci=a_ci, b_ci=b_ci, lower_is_better=lower_is_better, counts=counts, digits=digits)
    rows = [[r["metric"], r["a_text"], r["b_text"], r["change_text"]] for r in table_rows]
    colours = ["#d9f2d9" if r["verdict"] == "better" else "#f7d4d4" if r["verdict"] == "worse" else "white"
               for r in table_rows]
    ci = a_ci is not None or b_ci is not None
    fig = Figure(figsize=(8.0 if ci else 7.0, 0.32 * (len(rows) + 1) + (0.45 if title else 0.1) + (0.3 if ci else 0)),
                 layout="constrained")
    ax = fig.add_subplot()
    ax.axis("off")
    labels = [f"{a_label} (± 95% CI)", f"{b_label} (± 95% CI)"] if ci else [a_label, b_label]
    table = ax.table(
        cellText=rows,
        colLabels=["metric", *labels, "change"],
        cellLoc="right",
        colLoc="right",
        colWidths=[0.30, 0.28, 0.28, 0.14] if ci else [0.34, 0.24, 0.24, 0.18],
        bbox=Bbox.from_bounds(0.0, 0.0, 1.0, 1.0),
    )
    table.auto_set_font_size(False)
    table.set_fontsize(10)
    for r, colour in enumerate(colours, start=1):
        table[r, 3].set_facecolor(colour)
        table[r, 0].get_text().set_horizontalalignment("left")
    table[0, 0].get_text().set_horizontalalignment("left")
    for c in range(4):
        table[0, c].get_text().set_fontweight("bold")
    if title:
        ax.set_title(title)
    if ci:
        fig.supxlabel("±: half-width of the 95% confidence interval over seeds (Student's t); "
                      "green: B better, red: B worse", fontsize=8, color="0.3")
    if path is not None:
        fig.savefig(os.fspath(path), dpi=150)
    return fig


# The experiment's metrics that count events (shown as integers).
COUNT_METRICS = frozenset({"jobs_finished", "preemptions", "oom_crashes", "leak_restarts", "jobs_restarted"})


def experiment_ab_rows(ab: Mapping[str, Any], *, a: Optional[str] = None, b: Optional[str] = None) -> tuple[list[dict[str, Any]], str, str]:
    """``experiment.run_ab``'s result as ``ab_rows`` (means and 95% CI half-widths over seeds, the
    counts as integers): ``(rows, a_label, b_label)``, for ``table_csv`` / ``table_latex``."""
    from gpusched.experiment import ab_table, experiment_metrics

    t = ab_table(dict(ab), a, b)
    a_ci: dict[str, float] = {}
    b_ci: dict[str, float] = {}
    counts = []
    for key, label in experiment_metrics():
        if label not in t["A"]:
            continue
        a_ci[label] = float(ab["summary"][t["a_label"]][key][1])  # every key is in its label's unit
        b_ci[label] = float(ab["summary"][t["b_label"]][key][1])
        if key in COUNT_METRICS:
            counts.append(label)
    rows = ab_rows(t["A"], t["B"], a_ci=a_ci, b_ci=b_ci, lower_is_better=t["lower_is_better"], counts=counts)
    return rows, t["a_label"], t["b_label"]


def plot_experiment_ab(
    ab: Mapping[str, Any],
    path: Optional[Union[str, os.PathLike[str]]] = None,
    *,
    a: Optional[str] = None,
    b: Optional[str] = None,
    title: Optional[str] = None,
) -> Figure:
    """The seed experiment's A/B table (the result of ``gpusched.experiment.run_ab``) as a figure:
    the mean over seeds of every metric for profiles ``a`` and ``b`` (default: the first two) with
    its 95% confidence interval, counts as integers, and B's change. The title says the scenario,
    seeds and simulated duration unless given."""
    from gpusched.experiment import ab_table, experiment_metrics

    t = ab_table(dict(ab), a, b)
    rows, _, _ = experiment_ab_rows(ab, a=a, b=b)
    if title is None:
        seeds = ab["seeds"]
        title = f"{ab['scenario']}: mean of {len(seeds)} seeds, {ab['duration_s']:.0f} s simulated per run"
    keys = {label: key for key, label in experiment_metrics()}
    return plot_ab_table(t["A"], t["B"], path, a_label=t["a_label"], b_label=t["b_label"],
                         lower_is_better=t["lower_is_better"], title=title,
                         a_ci={r["metric"]: r["a_ci"] for r in rows}, b_ci={r["metric"]: r["b_ci"] for r in rows},
                         counts=[r["metric"] for r in rows if keys.get(r["metric"]) in COUNT_METRICS])
