"""The seed's A/B experiment (serving replicas and training gangs over one simulated period, two
scheduling profiles on the same seeds), one C++ run per (profile, seed) so that a progress bar can
follow; each run releases the GIL.

    sc = gs.experiment.Scenario.load("data/scenarios/seed.yaml")
    ab = gs.experiment.run_ab(sc, ["kube-default", "gpusched"], seeds=[1, 2, 3])
    ab["runs"]["gpusched"]["p99_ms"]         # numpy array, one value per seed
    ab["summary"]["gpusched"]["p99_ms"]      # (mean, 95% CI half-width)
    ab["results"]["gpusched"]["p99_ms"]      # {"values", "mean", "sd", "ci95"}, as gpusched-sim's JSON
    gs.experiment.to_json(ab)                # that JSON (docs/results.schema.json)
    gs.plot.plot_experiment_ab(ab, "ab.png")

Metric keys are the C++ report's (``experiment_fields()``): snake_case with the unit last
(``jct_mean_h`` in hours, ``p99_ms``), the same in the table, the JSON and these dicts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import Any, Optional, Union

import numpy as np

from gpusched._arrays import invalid
from gpusched._core import (
    Scenario,
    __version__,
    experiment_fields,
    experiment_inputs,
    experiment_metrics,
    experiment_run_once,
    summarise,
    summary_of,
)
from gpusched._progress import run_jobs

__all__ = [
    "LOWER_IS_BETTER",
    "Scenario",
    "ab_table",
    "experiment_fields",
    "experiment_metrics",
    "run_ab",
    "run_once",
    "summarise",
    "to_json",
]

# Metrics where a smaller value is the better one (the A/B figure colours by it); from the field list.
LOWER_IS_BETTER = frozenset(str(f["key"]) for f in experiment_fields() if f["lower_is_better"])


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
    progress: Optional[bool] = None,
    workers: int = 1,
) -> dict[str, Any]:
    """Runs each profile on each seed (the scenario's seeds when None); a progress bar on stderr when
    ``progress`` (None: when stderr is a terminal). Returns the keys of gpusched-sim's JSON
    (``{"tool", "version", "kind", "scenario", "duration_s", "seeds", "profiles", "inputs", "fields",
    "results": {profile: {metric: {"values", "mean", "sd", "ci95"}}}}``, see ``to_json``) and, for
    numpy work, ``"runs": {profile: {metric: array over seeds}}`` and ``"summary": {profile: {metric:
    (mean, ci95_half)}}``."""
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
    fields = experiment_fields()
    runs: dict[str, dict[str, Any]] = {}
    summary: dict[str, dict[str, tuple[float, float]]] = {}
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for i, p in enumerate(names):
        chunk = flat[i * len(sd) : (i + 1) * len(sd)]
        results[p] = {}
        for f in fields:
            k = str(f["key"])
            values = [m[k] for m in chunk]
            runs.setdefault(p, {})[k] = np.array(values, dtype=np.float64)
            summary.setdefault(p, {})[k] = summarise([float(v) for v in values])
            results[p][k] = {"values": values, **summary_of([float(v) for v in values])}
    return {
        "tool": "gpusched-python",
        "version": __version__,
        "kind": "scenario_ab",
        "scenario": sc.name,
        "duration_s": float(sc.duration_s if duration_s is None else duration_s),
        "seeds": [int(s) for s in sd],
        "profiles": names,
        "inputs": experiment_inputs(sc, names),
        "fields": fields,
        "results": results,
        "runs": runs,
        "summary": summary,
    }


_JSON_KEYS = ("tool", "version", "kind", "scenario", "duration_s", "seeds", "profiles", "inputs", "fields", "results")


def to_json(ab: dict[str, Any], indent: Optional[int] = 1) -> str:
    """The result of ``run_ab`` as gpusched-sim's ``--json`` writes it (docs/results.schema.json)."""
    missing = [k for k in _JSON_KEYS if k not in ab]
    if missing:
        raise invalid("ab", f"not a run_ab result: lacks {', '.join(missing)}")
    return json.dumps({k: ab[k] for k in _JSON_KEYS}, indent=indent)


def ab_table(ab: dict[str, Any], a: Optional[str] = None, b: Optional[str] = None) -> dict[str, Any]:
    """The means of profiles ``a`` and ``b`` (default: the first two) by metric label, as
    ``gpusched.plot.plot_ab_table`` takes them: ``{"A", "B", "a_label", "b_label", "lower_is_better"}``.
    Each value is in its key's unit, which its label names (training JCT in hours)."""
    names = list(ab["profiles"])
    a = a if a is not None else names[0]
    if b is None:
        if len(names) < 2:
            raise invalid("ab", "needs two profiles for an A/B table")
        b = names[1]
    for field, p in (("a", a), ("b", b)):
        if p not in ab["summary"]:
            raise invalid(field, f"no profile '{p}' in the result; it has {', '.join(names)}")
    table: dict[str, Any] = {"A": {}, "B": {}, "a_label": a, "b_label": b, "lower_is_better": []}
    for key, label in experiment_metrics():
        table["A"][label] = ab["summary"][a][key][0]
        table["B"][label] = ab["summary"][b][key][0]
        if key in LOWER_IS_BETTER:
            table["lower_is_better"].append(label)
    return table
