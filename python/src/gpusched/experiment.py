"""The seed's A/B experiment (serving replicas and training gangs over one simulated period, two
scheduling profiles on the same seeds), one C++ run per (profile, seed) so that a progress bar can
follow; each run releases the GIL.

    sc = gs.experiment.Scenario.load("data/scenarios/seed.yaml")
    ab = gs.experiment.run_ab(sc, ["kube-default", "gpusched"], seeds=[1, 2, 3])
    ab["runs"]["gpusched"]["p99_ms"]         # numpy array, one value per seed
    ab["summary"]["gpusched"]["p99_ms"]      # (mean, 95% CI half-width)
    gs.plot.plot_experiment_ab(ab, "ab.png")
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Optional, Union

import numpy as np

from gpusched._arrays import invalid
from gpusched._core import Scenario, experiment_metrics, experiment_run_once, summarise
from gpusched._progress import run_jobs

__all__ = [
    "LOWER_IS_BETTER",
    "Scenario",
    "ab_table",
    "experiment_metrics",
    "run_ab",
    "run_once",
    "summarise",
]

# Metrics where a smaller value is the better one (the A/B figure colours by it).
LOWER_IS_BETTER = frozenset(
    {"p50_ms", "p95_ms", "p99_ms", "gpu_util_swing_pct", "jct_mean_s", "preemptions", "partial_gang_gpu_hours",
     "oom_crashes", "jobs_restarted", "replicas_pending_s"}
)


def run_once(scenario: Scenario, profile: str, seed: int, duration_s: Optional[float] = None) -> dict[str, float]:
    """One profile, one seed: the run's metrics (keys of ``experiment_metrics()``)."""
    return experiment_run_once(scenario, profile, seed, duration_s)


def _load(scenario: Union[Scenario, str, os.PathLike[str]]) -> Scenario:
    return scenario if isinstance(scenario, Scenario) else Scenario.load(os.fspath(scenario))


def run_ab(
    scenario: Union[Scenario, str, os.PathLike[str]],
    profiles: Sequence[str] = ("kube-default", "gpusched"),
    seeds: Optional[Iterable[int]] = None,
    *,
    duration_s: Optional[float] = None,
    progress: bool = True,
    workers: int = 1,
) -> dict[str, Any]:
    """Runs each profile on each seed (the scenario's seeds when None). Returns
    ``{"scenario", "profiles", "seeds", "duration_s", "runs": {profile: {metric: array over seeds}},
    "summary": {profile: {metric: (mean, ci95_half)}}}``."""
    sc = _load(scenario)
    names = [profiles] if isinstance(profiles, str) else list(profiles)
    if not names:
        raise invalid("profiles", "must not be empty")
    for p in names:
        if p not in sc.profiles:
            raise invalid("profiles", f"unknown profile '{p}'; the scenario has {', '.join(sc.profiles)}")
    sd = list(sc.seeds if seeds is None else seeds)
    if not sd:
        raise invalid("seeds", "must not be empty")
    for i, s in enumerate(sd):
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise invalid(f"seeds[{i}]", f"must be an integer >= 0, got {s!r}")
    jobs = [lambda p=p, s=s: experiment_run_once(sc, p, int(s), duration_s) for p in names for s in sd]
    flat = run_jobs(jobs, progress=progress, desc=f"{sc.name} A/B", workers=workers)
    keys = [k for k, _ in experiment_metrics()]
    runs: dict[str, dict[str, Any]] = {}
    summary: dict[str, dict[str, tuple[float, float]]] = {}
    for i, p in enumerate(names):
        chunk = flat[i * len(sd) : (i + 1) * len(sd)]
        runs[p] = {k: np.array([m[k] for m in chunk], dtype=np.float64) for k in keys}
        summary[p] = {k: summarise(list(runs[p][k])) for k in keys}
    return {
        "scenario": sc.name,
        "profiles": names,
        "seeds": [int(s) for s in sd],
        "duration_s": sc.duration_s if duration_s is None else duration_s,
        "runs": runs,
        "summary": summary,
    }


def ab_table(ab: dict[str, Any], a: Optional[str] = None, b: Optional[str] = None) -> dict[str, Any]:
    """The means of profiles ``a`` and ``b`` (default: the first two) by metric label, as
    ``gpusched.plot.plot_ab_table`` takes them: ``{"A", "B", "a_label", "b_label", "lower_is_better"}``.
    Training JCT is shown in hours, as the C++ report does."""
    names = list(ab["profiles"])
    a = a if a is not None else names[0]
    if b is None:
        if len(names) < 2:
            raise invalid("ab", "needs two profiles for an A/B table")
        b = names[1]
    for field, p in (("a", a), ("b", b)):
        if p not in ab["summary"]:
            raise invalid(field, f"no profile '{p}' in the result; it has {', '.join(names)}")
    scale = {"jct_mean_s": 1 / 3600.0}
    table: dict[str, Any] = {"A": {}, "B": {}, "a_label": a, "b_label": b, "lower_is_better": []}
    for key, label in experiment_metrics():
        table["A"][label] = ab["summary"][a][key][0] * scale.get(key, 1.0)
        table["B"][label] = ab["summary"][b][key][0] * scale.get(key, 1.0)
        if key in LOWER_IS_BETTER:
            table["lower_is_better"].append(label)
    return table
