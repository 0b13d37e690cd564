"""Runs a list of independent jobs (each a C++ call that releases the GIL) in order or on a few
threads, with an optional tqdm bar on stderr: by default (``progress=None``) only when stderr is a
terminal, so logs and pipes get no bar; True or False forces it on or off."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, TypeVar

from gpusched._arrays import invalid

T = TypeVar("T")


def progress_enabled(progress: Optional[bool]) -> bool:
    """``progress`` as given, or (None) whether stderr is a terminal, as gpusched-sim decides."""
    if progress is None:
        isatty = getattr(sys.stderr, "isatty", None)
        return bool(isatty and isatty())
    if not isinstance(progress, bool):
        raise invalid("progress", f"must be True, False or None, got {progress!r}")
    return progress


def run_jobs(jobs: Sequence[Callable[[], T]], *, progress: Optional[bool], desc: str, workers: int) -> list[T]:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise invalid("workers", f"must be an integer >= 1, got {workers!r}")
    bar: Any = None
    if progress_enabled(progress):
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), desc=desc, unit="run", file=sys.stderr)
    try:
        if workers == 1 or len(jobs) <= 1:
            out = []
            for job in jobs:
                out.append(job())
                if bar is not None:
                    bar.update(1)
            return out
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(job) for job in jobs]
            results = []
            for f in futures:  # in submission order: deterministic output whatever finishes first
                results.append(f.result())
                if bar is not None:
                    bar.update(1)
            return results
    finally:
        if bar is not None:
            bar.close()
