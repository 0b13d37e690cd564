"""The openb trace replay (Weng et al., USENIX ATC'23 protocol, and a dynamic replay with
departures) over policies and seeds, with a progress bar. Each run is one C++ call that releases the
GIL; ``workers > 1`` runs them on threads (a Trace is immutable, so that is safe).

    trace = gs.sim.load_openb("data/openb")
    data = gs.sim.replay(trace, policies=["BestFit", "FGD"], seeds=range(42, 52))
    gs.plot.plot_allocation(data, "alloc.png")
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Optional, Union

import numpy.typing as npt

from gpusched import _core
from gpusched._arrays import invalid
from gpusched._core import Trace, canonical_policy, replay_fields, run_dynamic, run_paper, sim_policies
from gpusched._progress import run_jobs

__all__ = ["Policy", "PythonPolicy", "Trace", "canonical_policy", "final_allocation", "load_openb", "policy_names", "replay", "replay_fields", "run_dynamic", "run_paper", "sim_policies"]

PAPER_SEEDS = tuple(range(42, 52))  # the authors' seeds


def policy_names() -> list[str]:
    """The simulator's policy names (Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD, gpusched, and
    gpusched's ablation rows gpusched-fillaware and gpusched-binding)."""
    return [str(p["name"]) for p in sim_policies()]


def load_openb(
    data_dir: Union[str, os.PathLike[str]] = "data/openb", pods: str = "default", nodes: str = "gpu_node"
) -> Trace:
    """Loads ``openb_node_list_<nodes>.csv`` and ``openb_pod_list_<pods>.csv`` from ``data_dir``
    (pods: default, cpu100, gpushare40, gpuspec20, multigpu20)."""
    d = Path(data_dir)
    node_file, pod_file = d / f"openb_node_list_{nodes}.csv", d / f"openb_pod_list_{pods}.csv"
    for f in (node_file, pod_file):
        if not f.is_file():
            raise FileNotFoundError(f"{f}: no such trace file")
    return Trace.load(str(node_file), str(pod_file))


# A policy written in Python: scores (0..100) of the feasible nodes for one pod.
PythonPolicy = Callable[[_core.NodeFeatures, _core.Pod], npt.ArrayLike]
Policy = Union[str, PythonPolicy]


def _policies(policies: Union[Policy, Iterable[Policy]]) -> list[Policy]:
    if isinstance(policies, str):
        return list(policy_names()) if policies == "all" else [policies]
    if callable(policies):
        return [policies]
    out = list(policies)
    if not out or not all(isinstance(p, str) or callable(p) for p in out):
        raise invalid("policies", "must be 'all', a policy name, a Python scorer or a non-empty list of them")
    return out


def _seeds(seeds: Iterable[int]) -> list[int]:
    out = list(seeds)
    for i, s in enumerate(out):
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise invalid(f"seeds[{i}]", f"must be an integer >= 0, got {s!r}")
    if not out:
        raise invalid("seeds", "must not be empty")
    return out


def replay(
    trace: Trace,
    policies: Union[Policy, Sequence[Policy]] = "all",
    seeds: Iterable[int] = PAPER_SEEDS,
    *,
    mode: str = "paper",
    tune: float = 1.3,
    time_scale: float = 1.0,
    preemption: bool = False,
    progress: Optional[bool] = None,
    workers: int = 1,
    **options: Any,
) -> dict[str, Any]:
    """Runs every policy (a name, or a Python scorer ``fn(NodeFeatures, Pod) -> scores``) on every seed: ``{"mode", "tune" | "time_scale" and "queue", "preemption", "runs": [run, ...]}`` with each
    run the dict of ``run_paper`` (mode="paper") or ``run_dynamic`` (mode="dynamic"), the shape
    ``gpusched.plot.plot_allocation`` reads. ``options`` go to the run function (record_events,
    max_pct, shuffle; sample_period_s, queue). ``preemption`` lets a pod that fits nowhere preempt
    lower-priority pods (gpusched-sim's ``--preemption``). A progress bar goes to stderr when ``progress`` (None: when
    stderr is a terminal). Each run's scalars have the keys of gpusched-sim's JSON (``replay_fields``)."""
    names, sd = _policies(policies), _seeds(seeds)
    if mode == "paper":
        jobs = [
            lambda p=p, s=s: run_paper(trace, p, s, tune, preemption=preemption, **options) for p in names for s in sd
        ]
        head: dict[str, Any] = {"mode": mode, "tune": tune, "preemption": preemption}
    elif mode == "dynamic":
        jobs = [
            lambda p=p, s=s: run_dynamic(trace, p, s, time_scale, preemption=preemption, **options)
            for p in names
            for s in sd
        ]
        head = {"mode": mode, "time_scale": time_scale, "preemption": preemption, "queue": options.get("queue", "fifo")}
    else:
        raise invalid("mode", f"must be 'paper' or 'dynamic', got {mode!r}")
    for p in names:  # fail before the first run, not after an hour
        if isinstance(p, str):
            canonical_policy(p)
    runs = run_jobs(jobs, progress=progress, desc=f"{mode} replay", workers=workers)
    return {**head, "runs": runs}


def final_allocation(data: dict[str, Any], *, at: Optional[str] = "allocation_pct_at_tune") -> dict[str, list[float]]:
    """Per policy, each seed's final GPU allocation % (paper mode), for tables."""
    out: dict[str, list[float]] = {}
    for r in data["runs"]:
        out.setdefault(str(r["policy"]), []).append(float(r[at or "final_allocation_pct"]))
    return out

