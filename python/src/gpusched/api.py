"""The friendly layer over gpusched._core: clusters and pods from numpy arrays, configs from a path
or text, schedulers from a config, progress bars."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, TypeVar, Union

import numpy as np
import numpy.typing as npt

from gpusched import _core
from gpusched._arrays import (
    bool_column,
    float_column,
    int_column,
    invalid,
    length_of,
    str_column,
)

ArrayLike = Union[npt.ArrayLike, Sequence[int]]
StrColumn = Union[str, Sequence[str], npt.NDArray[Any]]
PythonScore = Callable[[_core.NodeFeatures, _core.Pod], npt.ArrayLike]
_C = TypeVar("_C", bound="Cluster")


class Cluster(_core.Cluster):
    """The reference in-memory cluster, with numpy constructors.

    Build node by node with ``add_node`` or from columns with ``Cluster.from_arrays``; read state
    with ``features()`` (numpy arrays), ``gpus(node)``, ``resources(node)``; change it with
    ``reserve``/``release`` or a ``transaction()``.
    """

    @classmethod
    def from_arrays(
        cls: type[_C],
        *,
        cpu_milli: ArrayLike,
        memory_mib: ArrayLike,
        gpu_count: Optional[ArrayLike] = None,
        gpu_model: StrColumn = "",
        gpu_mem_mib: ArrayLike = 0,
        names: Optional[StrColumn] = None,
        racks: StrColumn = "",
        pods: ArrayLike = -1,
        scalars: Optional[Mapping[str, ArrayLike]] = None,
    ) -> _C:
        """A cluster of ``len(cpu_milli)`` nodes; scalars (and one string) apply to every node.

        Nodes are named ``node-<i>`` unless ``names`` is given. ``pods`` is each node's allocatable
        pod count (-1: no limit); ``scalars`` maps a resource name (``"example.com/foo"``,
        ``"hugepages-2Mi"``, ``"ephemeral-storage"``) to each node's allocatable amount (0: the node
        does not have it). Integer columns must have an integer dtype (TypeError otherwise); values
        are checked (InvalidArgumentError naming the field and index).
        """
        c = cls()
        c.add_nodes(
            cpu_milli=cpu_milli,
            memory_mib=memory_mib,
            gpu_count=gpu_count,
            gpu_model=gpu_model,
            gpu_mem_mib=gpu_mem_mib,
            names=names,
            racks=racks,
            pods=pods,
            scalars=scalars,
        )
        return c

    def add_nodes(
        self,
        *,
        cpu_milli: ArrayLike,
        memory_mib: ArrayLike,
        gpu_count: Optional[ArrayLike] = None,
        gpu_model: StrColumn = "",
        gpu_mem_mib: ArrayLike = 0,
        names: Optional[StrColumn] = None,
        racks: StrColumn = "",
        pods: ArrayLike = -1,
        scalars: Optional[Mapping[str, ArrayLike]] = None,
    ) -> None:
        """Appends columns of nodes, all or none (see from_arrays)."""
        n = length_of({"cpu_milli": cpu_milli, "memory_mib": memory_mib, "gpu_count": gpu_count})
        cpu = int_column(cpu_milli, "cpu_milli", n, broadcast=True)
        mem = int_column(memory_mib, "memory_mib", n, broadcast=True)
        gpus = int_column(0 if gpu_count is None else gpu_count, "gpu_count", n, hi=64, broadcast=True)
        gmem = int_column(gpu_mem_mib, "gpu_mem_mib", n, hi=2**31 - 1, broadcast=True)
        models = str_column(gpu_model, "gpu_model", n)
        first = len(self)
        node_names = [f"node-{first + i}" for i in range(n)] if names is None else str_column(names, "names", n)
        pod_limits = int_column(pods, "pods", n, lo=-1, broadcast=True)
        named = {str(k): int_column(v, f"scalars['{k}']", n, broadcast=True) for k, v in (scalars or {}).items()}
        self._add_nodes(node_names, cpu, mem, gpus, models, gmem, str_column(racks, "racks", n), pod_limits, named)

    def set_loads(
        self,
        *,
        cpu_used: ArrayLike,
        mem_used: ArrayLike,
        gpu_used: ArrayLike,
        has_load: Optional[ArrayLike] = None,
    ) -> None:
        """Sets every node's measured load (fractions within 0..1) at once, all or none; nodes
        where ``has_load`` is False get no load."""
        n = len(self)
        cpu = float_column(cpu_used, "cpu_used", n, broadcast=True)
        mem = float_column(mem_used, "mem_used", n, broadcast=True)
        gpu = float_column(gpu_used, "gpu_used", n, broadcast=True)
        has = bool_column(True if has_load is None else has_load, "has_load", n)
        self._set_loads(cpu, mem, gpu, has)

    def copy(self: _C) -> _C:
        """An independent copy (same nodes, allocations, loads and served models)."""
        c = type(self)()
        c._copy_from(self)
        return c

    def __copy__(self: _C) -> _C:
        return self.copy()

    def __deepcopy__(self: _C, memo: dict[int, Any]) -> _C:
        return self.copy()

    def transaction(self) -> _core.Transaction:
        """Reservations that apply together::

            with cluster.transaction() as tx:
                tx.place(scheduler, pod_a)
                tx.place(scheduler, pod_b)   # an exception here releases pod_a too
        """
        return _core.Transaction(self)

    def allocation_pct(self) -> float:
        """Reserved GPU share in percent of the cluster's GPU capacity (the FGD paper's metric)."""
        total = self.gpu_milli_total
        return 100.0 * self.gpu_milli_allocated / total if total else 0.0


class Scheduler(_core.Scheduler):
    """Schedules pods with a Profile (see ``gpusched._core.Scheduler``), plus construction from a
    config and a progress bar for ``place_many``."""

    @classmethod
    def from_config(
        cls,
        config: _core.Config,
        scheduler_name: Optional[str] = None,
        *,
        seed: int = 0,
        explain_scores: bool = True,
        tie_break: str = "reservoir",
    ) -> Scheduler:
        """The scheduler of one profile of a config (the only one when scheduler_name is None),
        with the profile's percentageOfNodesToScore."""
        names = config.scheduler_names
        if scheduler_name is None:
            if len(names) != 1:
                raise invalid("scheduler_name", f"the config has several profiles {names}; name one")
            scheduler_name = names[0]
        return cls(
            config.profile(scheduler_name),
            percentage_of_nodes_to_score=config.percentage_of_nodes_to_score(scheduler_name),
            seed=seed,
            explain_scores=explain_scores,
            tie_break=tie_break,
        )

    def place_all(
        self, cluster: _core.Cluster, pods: Sequence[_core.Pod], *, progress: bool = False, desc: str = "placing"
    ) -> list[_core.ScheduleResult]:
        """place_many with an optional tqdm progress bar (needs tqdm)."""
        if not progress:
            return self.place_many(cluster, list(pods))
        from tqdm import tqdm

        with tqdm(total=len(pods), desc=desc, unit="pod") as bar:
            done = [0]

            def advance(n: int) -> None:
                bar.update(n - done[0])
                done[0] = n

            return self.place_many(cluster, list(pods), advance)


def load_config(
    source: Union[str, os.PathLike[str]],
    *,
    python_scores: Optional[Mapping[str, PythonScore]] = None,
) -> _core.Config:
    """Loads a KubeSchedulerConfiguration from a path, or from YAML text (a str with a newline).

    ``python_scores`` maps plugin names a config may enable under ``score`` to scorers written in
    Python (fn(nodes: NodeFeatures, pod: Pod) -> scores). Malformed configs raise ConfigFileError
    with file:line; a missing file raises FileNotFoundError.
    """
    scores = dict(python_scores or {})
    if isinstance(source, str) and "\n" in source:
        return _core._parse_config(source, "<string>", scores)
    path = os.fspath(source)
    text = Path(path).read_text(encoding="utf-8")
    return _core._parse_config(text, path, scores)


def pods_from_arrays(
    *,
    cpu_milli: ArrayLike,
    memory_mib: ArrayLike = 0,
    num_gpu: ArrayLike = 0,
    gpu_milli: Optional[ArrayLike] = None,
    gpu_mem_mib: ArrayLike = 0,
    model_type: StrColumn = "",
    priority: ArrayLike = 0,
    qos: StrColumn = "Burstable",
    tier: StrColumn = "dev",
    names: Optional[StrColumn] = None,
    name_prefix: str = "pod-",
    scalars: Optional[Mapping[str, ArrayLike]] = None,
) -> list[_core.Pod]:
    """Pods from columns (scalars and single strings apply to every pod). ``gpu_milli`` defaults to
    1000 (whole GPUs) where num_gpu > 0. Pods are named ``<name_prefix><i>`` unless ``names`` is
    given. ``scalars`` maps a resource name to each pod's request of it (0: none); every pod also
    counts 1 against a node's ``pods``."""
    n = length_of(
        {"cpu_milli": cpu_milli, "memory_mib": memory_mib, "num_gpu": num_gpu, "gpu_milli": gpu_milli, "priority": priority}
    )
    cpu = int_column(cpu_milli, "cpu_milli", n, broadcast=True)
    mem = int_column(memory_mib, "memory_mib", n, broadcast=True)
    ngpu = int_column(num_gpu, "num_gpu", n, hi=64, broadcast=True)
    if gpu_milli is None:
        share = np.where(ngpu > 0, 1000, 0).astype(np.int64)
    else:
        share = int_column(gpu_milli, "gpu_milli", n, hi=1000, broadcast=True)
    gmem = int_column(gpu_mem_mib, "gpu_mem_mib", n, hi=2**31 - 1, broadcast=True)
    prio = int_column(priority, "priority", n, lo=-(2**31), hi=2**31 - 1, broadcast=True)  # Kubernetes' int32
    models = str_column(model_type, "model_type", n)
    qoses = str_column(qos, "qos", n)
    tiers = str_column(tier, "tier", n)
    pod_names = [f"{name_prefix}{i}" for i in range(n)] if names is None else str_column(names, "names", n)
    named = {str(k): int_column(v, f"scalars['{k}']", n, broadcast=True) for k, v in (scalars or {}).items()}
    return [
        _core.Pod(
            pod_names[i],
            cpu_milli=int(cpu[i]),
            memory_mib=int(mem[i]),
            num_gpu=int(ngpu[i]),
            gpu_milli=int(share[i]),
            gpu_mem_mib=int(gmem[i]),
            model_type=models[i],
            priority=int(prio[i]),
            qos=qoses[i],
            tier=tiers[i],
            scalars={k: int(col[i]) for k, col in named.items() if col[i] != 0},
        )
        for i in range(n)
    ]
