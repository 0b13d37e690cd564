"""gpusched: GPU-cluster scheduling algorithms (a header-only C++20 library) from Python."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from gpusched._core import (
    GPU,
    BatchScorer,
    Binding,
    BoundCluster,
    Config,
    ConfigFileError,
    DisruptionBudgets,
    GangPlacer,
    GangResult,
    InvalidArgumentError,
    NodeFeatures,
    Pod,
    PreemptionPlan,
    Preemptor,
    Profile,
    QoS,
    ScheduleResult,
    SchedulingQueue,
    SeedStaticScheduler,
    Tier,
    Transaction,
    __version__,
)
from gpusched.api import Cluster, Scheduler, load_config, pods_from_arrays

__all__ = [
    "GPU",
    "BatchScorer",
    "Binding",
    "BoundCluster",
    "Cluster",
    "Config",
    "ConfigFileError",
    "DisruptionBudgets",
    "GangPlacer",
    "GangResult",
    "InvalidArgumentError",
    "NodeFeatures",
    "Pod",
    "PreemptionPlan",
    "Preemptor",
    "Profile",
    "QoS",
    "ScheduleResult",
    "Scheduler",
    "SchedulingQueue",
    "SeedStaticScheduler",
    "Tier",
    "Transaction",
    "__version__",
    "load_config",
    "pods_from_arrays",
]

from gpusched import experiment, sim  # noqa: E402  (submodules: the simulator and the seed experiment)

__all__ += ["experiment", "plot", "sim"]


if TYPE_CHECKING:
    from gpusched import plot  # noqa: F401  (for type checkers; at run time __getattr__ below)


def __getattr__(name: str) -> ModuleType:
    """`gs.plot` imports gpusched.plot on first use (matplotlib is optional: only plots need it)."""
    if name == "plot":
        return importlib.import_module("gpusched.plot")
    raise AttributeError(f"module 'gpusched' has no attribute {name!r}")
