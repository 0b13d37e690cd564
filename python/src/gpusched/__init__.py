"""gpusched: GPU-cluster scheduling algorithms (a header-only C++20 library) from Python."""

from __future__ import annotations

from gpusched._core import (
    GPU,
    BatchScorer,
    Binding,
    Config,
    ConfigFileError,
    GangPlacer,
    GangResult,
    InvalidArgumentError,
    NodeFeatures,
    Pod,
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
    "Cluster",
    "Config",
    "ConfigFileError",
    "GangPlacer",
    "GangResult",
    "InvalidArgumentError",
    "NodeFeatures",
    "Pod",
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

__all__ += ["experiment", "sim"]
