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


def plot_allocation(
    data: Any,
    path: Optional[Union[str, os.PathLike[str]]] = None,
    *,
    title: str = "GPU allocation against arrived GPU demand",
    max_arrived_pct: Optional[int] = None,
    ax: Optional[Axes] = None,
) -> Figure:
    """The FGD paper's figure: GPU allocation % against arrived GPU % per policy (mean over seeds,
    with the seeds' range shaded), and the y = x line of "everything that arrived is allocated".
    Saves a PNG when ``path`` is given; returns the figure."""
    curves = allocation_curves(data, max_arrived_pct=max_arrived_pct)
    fig: Figure
    if ax is None:
        fig = Figure(figsize=(7.0, 4.8), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.get_figure()  # type: ignore[assignment]
    top = max(float(c.arrived_pct.max()) for c in curves if c.arrived_pct.size)
    ax.plot([0, top], [0, top], color="0.6", linestyle="--", linewidth=1, label="all arrived allocated")
    for c in sorted(curves, key=lambda c: -float(c.mean[-1]) if c.mean.size else 0.0):
        label = f"{c.policy} ({c.mean[-1]:.2f}%)" if c.mean.size else c.policy
        (line,) = ax.plot(c.arrived_pct, c.mean, linewidth=1.6, label=label)
        if c.seeds > 1:
            ax.fill_between(c.arrived_pct, c.low, c.high, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel("Arrived GPU demand (% of cluster GPU capacity)")
    ax.set_ylabel("GPU allocation (% of cluster GPU capacity)")
    ax.set_xlim(0, top)
    ax.set_ylim(0, 100)
    ax.grid(True, linewidth=0.5, alpha=0.5)
    seeds = sorted({c.seeds for c in curves})
    ax.set_title(title + (f" (mean of {seeds[0]} seeds)" if len(seeds) == 1 and seeds[0] > 1 else ""))
    ax.legend(loc="lower right", fontsize="small")
    if path is not None:
        fig.savefig(os.fspath(path), dpi=150)
    return fig


def _relative_change(a: float, b: float) -> float:
    return (b - a) / abs(a) * 100.0 if a != 0 else (0.0 if b == 0 else math.inf)


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
) -> Figure:
    """A table figure: one row per metric (in the order of ``a``), columns A, B and B's change
    relative to A ("change"), coloured green where B is better and red where it is worse (metrics in
    ``lower_is_better`` improve downwards: latencies, failures). Saves a PNG when ``path`` is given."""
    missing = [k for k in a if k not in b]
    if missing:
        raise invalid("b", f"lacks the metrics {missing}")
    lower = set(lower_is_better)
    unknown = lower - set(a)
    if unknown:
        raise invalid("lower_is_better", f"names metrics not in the table: {sorted(unknown)}")
    rows, colours = [], []
    for k, va in a.items():
        vb = b[k]
        if not (math.isfinite(va) and math.isfinite(vb)):
            raise invalid(f"metric '{k}'", "values must be finite")
        change = _relative_change(va, vb)
        same = f"{va:.{digits}f}" == f"{vb:.{digits}f}"  # equal as printed: neither colour
        better = not same and ((vb < va) if k in lower else (vb > va))
        worse = not same and ((vb > va) if k in lower else (vb < va))
        rows.append([k, f"{va:.{digits}f}", f"{vb:.{digits}f}", f"{change:+.1f}%" if math.isfinite(change) else "n/a"])
        colours.append("#d9f2d9" if better else "#f7d4d4" if worse else "white")
    fig = Figure(figsize=(7.0, 0.32 * (len(rows) + 1) + (0.45 if title else 0.1)), layout="constrained")
    ax = fig.add_subplot()
    ax.axis("off")
    table = ax.table(
        cellText=rows,
        colLabels=["metric", a_label, b_label, "change"],
        cellLoc="right",
        colLoc="right",
        colWidths=[0.34, 0.24, 0.24, 0.18],
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
    if path is not None:
        fig.savefig(os.fspath(path), dpi=150)
    return fig


def plot_experiment_ab(
    ab: Mapping[str, Any],
    path: Optional[Union[str, os.PathLike[str]]] = None,
    *,
    a: Optional[str] = None,
    b: Optional[str] = None,
    title: Optional[str] = None,
) -> Figure:
    """The seed experiment's A/B table (the result of ``gpusched.experiment.run_ab``) as a figure:
    the mean over seeds of every metric for profiles ``a`` and ``b`` (default: the first two) and
    B's change. The title says the scenario, seeds and simulated duration unless given."""
    from gpusched.experiment import ab_table

    t = ab_table(dict(ab), a, b)
    if title is None:
        seeds = ab["seeds"]
        title = f"{ab['scenario']}: mean of {len(seeds)} seeds, {ab['duration_s']:.0f} s simulated per run"
    return plot_ab_table(t["A"], t["B"], path, a_label=t["a_label"], b_label=t["b_label"],
                         lower_is_better=t["lower_is_better"], title=title)
