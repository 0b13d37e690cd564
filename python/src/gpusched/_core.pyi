"""
gpusched's C++ core (private: use the `gpusched` package).
"""
from __future__ import annotations
import collections.abc
import enum
import numpy
import numpy.typing
import typing
__all__: list[str] = ['BatchScorer', 'Binding', 'BoundCluster', 'Cluster', 'Config', 'ConfigFileError', 'DisruptionBudgets', 'GPU', 'GangPlacer', 'GangResult', 'InvalidArgumentError', 'NodeFeatures', 'Pod', 'PreemptionPlan', 'Preemptor', 'Profile', 'QoS', 'Scenario', 'ScheduleResult', 'Scheduler', 'SchedulingQueue', 'SeedStaticScheduler', 'Tier', 'Trace', 'Transaction', 'canonical_policy', 'experiment_fields', 'experiment_inputs', 'experiment_metrics', 'experiment_run_once', 'replay_fields', 'run_dynamic', 'run_paper', 'sim_policies', 'summarise', 'summary_of']
class InvalidArgumentError(ValueError):
    """
    A value given to gpusched is invalid; `field` names it ("pod 'p'.gpu_milli"). Nothing was changed.
    """
class ConfigFileError(ValueError):
    """
    A configuration file or text is malformed; `file` and `line` (1-based, 0 when unknown) say where. Nothing was loaded.
    """
class QoS(enum.Enum):
    """
    Kubernetes QoS classes (openb: LS -> GUARANTEED, BE -> BEST_EFFORT).
    """
    BEST_EFFORT: typing.ClassVar[QoS]
    BURSTABLE: typing.ClassVar[QoS]
    GUARANTEED: typing.ClassVar[QoS]
    @classmethod
    def __new__(cls, value):
        ...
class Tier(enum.Enum):
    """
    Two-tier isolation: PROD (serving) and DEV (training, experiments).
    """
    DEV: typing.ClassVar[Tier]
    PROD: typing.ClassVar[Tier]
    @classmethod
    def __new__(cls, value):
        ...
class Pod:
    """
    A pod: CPU (milli-cores), memory (MiB) and either `num_gpu` whole GPUs (gpu_milli 1000, the default) or a share `gpu_milli` < 1000 of each of `num_gpu` GPUs, with GPU memory per GPU.
    Immutable; `replace(**changes)` returns a modified copy. Invalid values raise InvalidArgumentError naming the field.
    """
    __hash__: typing.ClassVar[None] = None
    @staticmethod
    def from_dict(fields: dict) -> Pod:
        """
        A pod from a mapping of the constructor's fields; unknown keys raise TypeError.
        """
    def __eq__(self, arg0: Pod) -> bool:
        ...
    def __getstate__(self) -> dict:
        ...
    def __init__(self, name: str, *, cpu_milli: typing.SupportsInt | typing.SupportsIndex = 0, memory_mib: typing.SupportsInt | typing.SupportsIndex = 0, num_gpu: typing.SupportsInt | typing.SupportsIndex = 0, gpu_milli: typing.SupportsInt | typing.SupportsIndex | None = None, gpu_mem_mib: typing.SupportsInt | typing.SupportsIndex = 0, allowed_models: collections.abc.Sequence[str] = [], model_type: str = '', priority: typing.SupportsInt | typing.SupportsIndex = 0, qos: QoS | str = 'Burstable', tier: Tier | str = 'dev', gang: str = '', gang_min_members: typing.SupportsInt | typing.SupportsIndex = 0, tenant: str = '', submit_time: typing.SupportsFloat | typing.SupportsIndex = 0.0, scalars: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex] = {}, node_selector: collections.abc.Mapping[str, str] = {}, tolerations: collections.abc.Sequence[dict] = []) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, arg0: dict) -> None:
        ...
    def replace(self, **kwargs) -> Pod:
        """
        A copy with the given fields changed (validated).
        """
    def to_dict(self) -> dict:
        """
        The constructor's fields as a dict (Pod.from_dict(p.to_dict()) == p).
        """
    @property
    def allowed_models(self) -> list[str]:
        ...
    @property
    def cpu_milli(self) -> int:
        ...
    @property
    def gang(self) -> str:
        ...
    @property
    def gang_min_members(self) -> int:
        ...
    @property
    def gpu_mem_mib(self) -> int:
        ...
    @property
    def gpu_milli(self) -> int:
        ...
    @property
    def gpu_milli_total(self) -> int:
        """
        num_gpu * gpu_milli
        """
    @property
    def memory_mib(self) -> int:
        ...
    @property
    def model_type(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def node_selector(self) -> dict:
        ...
    @property
    def num_gpu(self) -> int:
        ...
    @property
    def priority(self) -> int:
        ...
    @property
    def qos(self) -> QoS:
        ...
    @property
    def scalars(self) -> dict:
        """
        Requests of named resources, {name: amount} (a pod also counts 1 against a node's pods)
        """
    @property
    def submit_time(self) -> float:
        ...
    @property
    def tenant(self) -> str:
        ...
    @property
    def tier(self) -> Tier:
        ...
    @property
    def tolerations(self) -> list:
        ...
class GPU:
    """
    One GPU device: model, free share (milli, 1000 = whole), memory, NVLink island.
    """
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: GPU) -> bool:
        ...
    def __init__(self, model: str, mem_mib: typing.SupportsInt | typing.SupportsIndex = 0, nvlink_island: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        A wholly free device.
        """
    def __repr__(self) -> str:
        ...
    @property
    def mem_free_mib(self) -> int:
        ...
    @property
    def mem_total_mib(self) -> int:
        ...
    @property
    def milli_free(self) -> int:
        ...
    @property
    def model(self) -> str:
        ...
    @property
    def nvlink_island(self) -> int:
        ...
class Binding:
    """
    A pod's request placed on one node and a set of GPU indices.
    """
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: Binding) -> bool:
        ...
    def __init__(self, pod: Pod, node: typing.SupportsInt | typing.SupportsIndex, gpus: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] = []) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def cpu_milli(self) -> int:
        ...
    @property
    def gpu_mem_mib(self) -> int:
        ...
    @property
    def gpu_milli(self) -> int:
        ...
    @property
    def gpu_set(self) -> int:
        """
        GPU indices as a bit mask (bit g = GPU g)
        """
    @property
    def gpus(self) -> list[int]:
        """
        GPU indices, ascending
        """
    @property
    def memory_mib(self) -> int:
        ...
    @property
    def node(self) -> int:
        ...
class Cluster:
    """
    The reference in-memory cluster (gpusched::in_memory_cluster). Build it node by node with add_node, or from numpy arrays with gpusched.Cluster.from_arrays.
    """
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: Cluster) -> bool:
        """
        Equal nodes, allocations, loads and served models.
        """
    def __init__(self) -> None:
        ...
    def __len__(self) -> int:
        ...
    def _add_nodes(self, names: collections.abc.Sequence[str], cpu_milli: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], memory_mib: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], gpu_count: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], gpu_model: collections.abc.Sequence[str], gpu_mem_mib: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], racks: collections.abc.Sequence[str], pods: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], scalars: collections.abc.Mapping[str, typing.Annotated[numpy.typing.ArrayLike, numpy.int64]]) -> None:
        """
        Adds validated columns of nodes, all or none (gpusched.Cluster.from_arrays checks dtypes first).
        """
    def _copy_from(self, other: Cluster) -> None:
        ...
    def _set_loads(self, cpu_used: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], mem_used: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], gpu_used: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], has_load: typing.Annotated[numpy.typing.ArrayLike, numpy.bool]) -> None:
        """
        Sets every node's load at once, all or none (gpusched.Cluster.set_loads checks dtypes first).
        """
    def add_node(self, name: str, *, cpu_milli: typing.SupportsInt | typing.SupportsIndex, memory_mib: typing.SupportsInt | typing.SupportsIndex, gpu_count: typing.SupportsInt | typing.SupportsIndex = 0, gpu_model: str = '', gpu_mem_mib: typing.SupportsInt | typing.SupportsIndex = 0, rack: str = '', gpus: collections.abc.Sequence[GPU] | None = None, pods: typing.SupportsInt | typing.SupportsIndex = -1, scalars: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex] = {}, labels: collections.abc.Mapping[str, str] = {}, taints: collections.abc.Sequence[dict] = [], unschedulable: bool = False) -> int:
        """
        Adds a node with `gpu_count` wholly free GPUs of one model (or the devices in `gpus`) and returns its index; `pods` is its allocatable pod count (-1: no limit), `scalars` its allocatable named resources {name: amount}, `labels`, `taints` ([{key, value, effect}]) and `unschedulable` what NodeAffinity, TaintToleration and NodeUnschedulable read. Validated: an invalid node raises InvalidArgumentError and adds nothing.
        """
    def clear_load(self, node: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def features(self, nodes: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] | None = None) -> typing.Any:
        """
        NodeFeatures (numpy arrays) of the given nodes, or of all: what a Python scorer receives.
        """
    def gpus(self, node: typing.SupportsInt | typing.SupportsIndex) -> list[GPU]:
        """
        The node's GPU devices (copies).
        """
    def load(self, node: typing.SupportsInt | typing.SupportsIndex) -> typing.Any:
        """
        The node's measured load as a dict, or None.
        """
    def model_replicas(self, node: typing.SupportsInt | typing.SupportsIndex) -> dict:
        """
        Served model type -> replicas on the node.
        """
    def named_resources(self, node: typing.SupportsInt | typing.SupportsIndex) -> dict:
        """
        The node's pod limit (-1: none), pods counted against it, and {name: (allocatable, requested)} of its named resources.
        """
    def node_index(self, name: str) -> int:
        """
        The index of the node with this name (KeyError when none).
        """
    def release(self, pod: Pod, binding: Binding) -> None:
        """
        Gives back exactly what reserve(pod, binding) took.
        """
    def reserve(self, pod: Pod, binding: Binding) -> None:
        """
        Takes the binding's resources; raises InvalidArgumentError and changes nothing when a GPU lacks the share.
        """
    def resources(self, node: typing.SupportsInt | typing.SupportsIndex) -> dict:
        """
        CPU / memory capacity and allocation and the GPU count of a node.
        """
    def set_load(self, node: typing.SupportsInt | typing.SupportsIndex, *, cpu_used: typing.SupportsFloat | typing.SupportsIndex, mem_used: typing.SupportsFloat | typing.SupportsIndex, gpu_used: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets a node's measured load (fractions within 0..1). Reservations made afterwards count as assigned-since-reading until the next set_load.
        """
    @property
    def gpu_milli_allocated(self) -> int:
        """
        GPU share reserved, in milli.
        """
    @property
    def gpu_milli_total(self) -> int:
        """
        GPU capacity in milli (1000 per GPU).
        """
    @property
    def node_names(self) -> list[str]:
        ...
class Profile:
    """
    A dynamic profile: preflight checks and weighted scorers chosen by plugin name, as in a KubeSchedulerConfiguration (see docs/plugins.md), plus scorers written in Python. Checks run in the order added; the GPU selector is best fit.
    """
    @staticmethod
    def from_file(path: str, *, typical_pods: collections.abc.Sequence[Pod] | None = None, seed: typing.SupportsInt | typing.SupportsIndex = 0) -> Profile:
        """
        The one profile of a profile file (a KubeSchedulerConfiguration with one profile, e.g. data/profiles/fgd.yaml). typical_pods: the workload FGDScore / FillAware measure against when the file gives no typicalPods; seed: RandomScore's device choice. Errors raise ConfigFileError with file:line.
        """
    @staticmethod
    def plugin_names() -> dict:
        """
        The built-in plugin names: {'checks': [...], 'scores': [...]}.
        """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def add_check(self, name: str, args: typing.Any = None) -> Profile:
        """
        Appends a check by plugin name (GPUCheck, NodeResourcesFit, LoadAware, ...) with its `args` as in a config's pluginConfig. Returns self.
        """
    def add_python_score(self, fn: collections.abc.Callable, weight: typing.SupportsInt | typing.SupportsIndex = 1, name: str = 'PythonScore') -> Profile:
        """
        Appends a scorer written in Python: fn(nodes: NodeFeatures, pod: Pod) -> array of one score per node, within 0..100 (floats are truncated toward zero, as Kubernetes' int64 conversion). Called once per pod with the feasible nodes. Returns self.
        """
    def add_score(self, name: str, weight: typing.SupportsInt | typing.SupportsIndex = 1, args: typing.Any = None) -> Profile:
        """
        Appends a scorer by plugin name with its weight (1..100) and `args`. Returns self.
        """
    def without_default_fit(self) -> Profile:
        """
        Removes the default NodeResourcesFit filter (CPU and memory), as `disabled: - name: NodeResourcesFit` in a config does. A new Profile checks CPU and memory first (docs/plugins.md, "The CPU/memory fit in code"). Returns self.
        """
    @property
    def checks(self) -> list[str]:
        ...
    @property
    def gpu_selector(self) -> str:
        ...
    @property
    def scores(self) -> list[tuple[str, int]]:
        """
        (plugin, weight) per scorer, in order
        """
class Config:
    """
    A parsed KubeSchedulerConfiguration: one profile per schedulerName.
    """
    def defaults_not_run(self, scheduler_name: str) -> list[str]:
        """
        Kubernetes' default plugins this (apiVersion v1) profile would run that gpusched has no counterpart for (PrioritySort, NodePorts, PodTopologySpread, ...), in Kubernetes' order: reported, not run (docs/plugins.md, "Default plugins and multiPoint"). Empty before v1 and with multiPoint disabled '*'.
        """
    def percentage_of_nodes_to_score(self, scheduler_name: str) -> int:
        ...
    def profile(self, scheduler_name: str) -> Profile:
        """
        A copy of the profile of this schedulerName (InvalidArgumentError when none).
        """
    @property
    def scheduler_names(self) -> list[str]:
        ...
class ScheduleResult:
    """
    An explained decision: where the pod goes (node, GPU indices) with its score and per-plugin breakdown, or why no node fits.
    """
    def __bool__(self) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def binding(self) -> Binding | None:
        ...
    @property
    def breakdown(self) -> list:
        """
        (plugin, score 0..100, weight) of the chosen node, when the scheduler explains scores
        """
    @property
    def examined(self) -> int:
        ...
    @property
    def explanation(self) -> str:
        """
        "3/8 nodes fit: 5 insufficient GPU share; chose v100-4 with score 570 (...)"
        """
    @property
    def feasible(self) -> int:
        ...
    @property
    def gpus(self) -> list[int]:
        """
        GPU indices, ascending
        """
    @property
    def node(self) -> int | None:
        ...
    @property
    def node_name(self) -> str | None:
        ...
    @property
    def rejections(self) -> dict:
        """
        reason -> number of examined nodes it rejected (each node under its first failing check)
        """
    @property
    def scheduled(self) -> bool:
        ...
    @property
    def score(self) -> int:
        """
        weighted sum of the chosen node
        """
class Scheduler:
    """
    Schedules pods with a Profile. Keeps what persists between cycles: the seeded tie-break generator, the round-robin start of partial scoring and reusable buffers.
    """
    def __init__(self, profile: Profile, *, percentage_of_nodes_to_score: typing.SupportsInt | typing.SupportsIndex = 100, seed: typing.SupportsInt | typing.SupportsIndex = 0, explain_scores: bool = True, tie_break: str = 'reservoir') -> None:
        """
        tie_break: 'reservoir' (Kubernetes' uniform draw, seeded), 'hashed' (uniform and stateless, as BatchScorer ranks ties) or 'first_node'.
        """
    def place_many(self, cluster: Cluster, pods: collections.abc.Sequence[Pod], progress: typing.Any = None) -> list[ScheduleResult]:
        """
        Places the pods in order (each as place_one) with the GIL released; returns one result per pod. All or nothing: an exception (from a Python scorer, Ctrl-C) releases every placement of the call. `progress(done)` is called every 256 pods and at the end.
        """
    def place_one(self, cluster: Cluster, pod: Pod) -> ScheduleResult:
        """
        Decides and reserves (the cluster changes only when scheduled).
        """
    def schedule_one(self, cluster: Cluster, pod: Pod) -> ScheduleResult:
        """
        Decides where the pod would go; changes nothing. Releases the GIL.
        """
    @property
    def explain_scores(self) -> bool:
        ...
    @property
    def percentage_of_nodes_to_score(self) -> int:
        ...
    @property
    def seed(self) -> int:
        ...
class SeedStaticScheduler:
    """
    The seed's profile (NodeResourcesFit + GPUCheck; LoadAware and ModelAffinity weighted) compiled as a static profile: a cross-check of the dynamic one.
    """
    def __init__(self, *, load_aware_weight: typing.SupportsInt | typing.SupportsIndex = 10, model_affinity_weight: typing.SupportsInt | typing.SupportsIndex = 5, interfering_pairs: collections.abc.Sequence[tuple[str, str]] = [], percentage_of_nodes_to_score: typing.SupportsInt | typing.SupportsIndex = 100, seed: typing.SupportsInt | typing.SupportsIndex = 0, explain_scores: bool = True, tie_break: str = 'reservoir') -> None:
        ...
    def place_many(self, cluster: Cluster, pods: collections.abc.Sequence[Pod], progress: typing.Any = None) -> list[ScheduleResult]:
        """
        Places the pods in order (each as place_one) with the GIL released; returns one result per pod. All or nothing: an exception (from a Python scorer, Ctrl-C) releases every placement of the call. `progress(done)` is called every 256 pods and at the end.
        """
    def place_one(self, cluster: Cluster, pod: Pod) -> ScheduleResult:
        """
        Decides and reserves (the cluster changes only when scheduled).
        """
    def schedule_one(self, cluster: Cluster, pod: Pod) -> ScheduleResult:
        """
        Decides where the pod would go; changes nothing. Releases the GIL.
        """
    @property
    def explain_scores(self) -> bool:
        ...
    @property
    def percentage_of_nodes_to_score(self) -> int:
        ...
    @property
    def seed(self) -> int:
        ...
class Transaction:
    """
    Reservations that apply together: commit() keeps them, rollback() (or leaving a `with` block by an exception) releases them in reverse order, leaving the cluster exactly as before. Leaving a `with` block normally commits. If the cluster was changed under the transaction so that an undo is refused, rollback() undoes everything else and raises RuntimeError naming the refused change.
    """
    def __enter__(self) -> Transaction:
        ...
    def __exit__(self, arg0: typing.Any, arg1: typing.Any, arg2: typing.Any) -> bool:
        ...
    def __init__(self, cluster: typing.Any) -> None:
        ...
    def commit(self) -> None:
        ...
    @typing.overload
    def place(self, scheduler: Scheduler, pod: Pod) -> ScheduleResult:
        """
        schedule_one, then reserve the decision inside the transaction.
        """
    @typing.overload
    def place(self, scheduler: SeedStaticScheduler, pod: Pod) -> ScheduleResult:
        ...
    def reserve(self, pod: Pod, binding: Binding) -> None:
        ...
    def rollback(self) -> None:
        ...
    @property
    def open(self) -> bool:
        ...
    @property
    def size(self) -> int:
        ...
class NodeFeatures:
    """
    Node features as numpy arrays, one entry per node (in the order of `node`): what a scorer written in Python receives. Arrays are fresh copies for every call.
    """
    def __len__(self) -> int:
        ...
    @property
    def cpu_allocated(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        milli-cores requested by placed pods (int64)
        """
    @property
    def cpu_capacity(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        milli-cores (int64)
        """
    @property
    def cpu_used(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        measured CPU usage fraction, 0 without load (float64)
        """
    @property
    def gpu_count(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        GPU devices (int64)
        """
    @property
    def gpu_full_free(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        devices with their whole share free (int64)
        """
    @property
    def gpu_mem_free_mib(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        free GPU memory summed over devices (int64)
        """
    @property
    def gpu_mem_total_mib(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        GPU memory summed over devices (int64)
        """
    @property
    def gpu_milli_free(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        free GPU share summed over devices (int64)
        """
    @property
    def gpu_milli_free_per_gpu(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        free share per device, shape (nodes, max GPUs), -1 past a node's last device (int64)
        """
    @property
    def gpu_used(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        measured GPU utilisation fraction, 0 without load (float64)
        """
    @property
    def has_load(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        whether the node reports measured load (bool)
        """
    @property
    def mem_used(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        measured memory usage fraction, 0 without load (float64)
        """
    @property
    def memory_allocated(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        MiB (int64)
        """
    @property
    def memory_capacity(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        MiB (int64)
        """
    @property
    def node(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        node index in the cluster (int64)
        """
class Trace:
    """
    An openb-format trace (nodes and pods, pods in name order) with its typical pod shapes; immutable.
    """
    @staticmethod
    def load(nodes: str, pods: str) -> Trace:
        """
        Reads an openb node list and pod list (11- or 5-column CSV). A malformed row raises ConfigFileError with file and line.
        """
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def node_columns(self) -> dict:
        """
        The nodes (file order) as numpy columns: name, cpu_milli, memory_mib, gpu_count, gpu_model.
        """
    def pod_columns(self) -> dict:
        """
        The pods (name order) as numpy columns: name (list), cpu_milli, memory_mib, num_gpu, gpu_milli, creation_time, deletion_time (0 in 5-column files).
        """
    def with_priorities_by_qos(self) -> Trace:
        """
        A copy whose pods take their priority from the qos column, for replays with preemption=True (Koordinator's classes: LS, Guaranteed, Burstable 9000, BE 5000; gpusched-sim's --priority-by-qos). The openb traces give every pod priority 0, and an equal priority is never preempted.
        """
    @property
    def gpu_milli_capacity(self) -> int:
        ...
    @property
    def has_times(self) -> bool:
        """
        Whether every pod has creation and deletion times (needed by run_dynamic).
        """
    @property
    def nodes_file(self) -> str:
        ...
    @property
    def num_nodes(self) -> int:
        ...
    @property
    def num_pods(self) -> int:
        ...
    @property
    def pods_file(self) -> str:
        ...
class Scenario:
    """
    The seed experiment's scenario (serving services, training jobs, node pool, profiles); immutable.
    """
    @staticmethod
    def load(path: str) -> Scenario:
        """
        Reads a scenario YAML (errors: ConfigFileError with file and line).
        """
    def __repr__(self) -> str:
        ...
    @property
    def duration_s(self) -> float:
        ...
    @property
    def file(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def num_nodes(self) -> int:
        ...
    @property
    def profiles(self) -> list[str]:
        """
        Profile names run_once accepts: the built-in kube-default and the scenario's.
        """
    @property
    def seeds(self) -> list[int]:
        ...
class BatchScorer:
    """
    The batch engine over one of a named set of static profiles: every (pod, node) pair checked and scored as schedule_one would with the same profile, vectorised and multi-threaded. Ties rank by a hash of (seed, pod name, node), not schedule_one's random draw (its tie_break='hashed' picks the same).
    
    profile: 'seed' (default; the SeedStaticScheduler's: NodeResourcesFit + GPUCheck, LoadAware x load_aware_weight (10) + ModelAffinity x model_affinity_weight (5) with interfering_pairs), 'kube-default' (NodeResourcesFit + GPUCheck; NodeResourcesFit LeastAllocated x1 + NodeResourcesBalancedAllocation x1), 'most-allocated' (NodeResourcesFit + GPUCheck; MostAllocated x1), 'fgd' (NodeResourcesFit + GPUCheck; FGD x1 and FGD's GPU choice, over the workload of typical_pods), or a Profile (built by plugin name or Profile.from_file, e.g. data/profiles/*.yaml) whose plugins all have batch forms (docs/batch.md; an InvalidArgumentError names the plugin otherwise; its `profile` is then 'configured').
    """
    @staticmethod
    def profiles() -> list[str]:
        """
        The profile names BatchScorer(profile=...) takes.
        """
    def __init__(self, *, profile: typing.Any = 'seed', load_aware_weight: typing.SupportsInt | typing.SupportsIndex | None = None, model_affinity_weight: typing.SupportsInt | typing.SupportsIndex | None = None, interfering_pairs: collections.abc.Sequence[tuple[str, str]] | None = None, typical_pods: collections.abc.Sequence[Pod] | None = None, seed: typing.SupportsInt | typing.SupportsIndex = 0, threads: typing.SupportsInt | typing.SupportsIndex = 1) -> None:
        ...
    def assign_greedy(self, cluster: Cluster, pods: collections.abc.Sequence[Pod], *, apply: bool = False, cache_k: typing.SupportsInt | typing.SupportsIndex = 64, one_per_round: bool = False) -> dict:
        """
        Places the whole batch by greedy rounds (docs/batch.md). Returns {'node' (per pod, -1 unplaced), 'score', 'order' (commit order), 'gpus' (per pod, None unplaced), 'bindings' [(pod index, Binding)], 'placed', 'rounds', 'total_score'}. apply=True reserves the bindings on the cluster (all or nothing); otherwise the cluster is unchanged.
        """
    def scores(self, cluster: Cluster, pods: collections.abc.Sequence[Pod], *, python_scores: collections.abc.Sequence[tuple[typing.Any, typing.SupportsInt | typing.SupportsIndex, str]] = []) -> numpy.typing.NDArray[numpy.int32]:
        """
        The weighted totals, a (pods, nodes) int32 array, -1 where a check fails; the array owns the engine's buffer (no copy). Releases the GIL. python_scores: [(fn, weight, name)] scorers written in Python (fn(NodeFeatures, Pod) -> scores 0..100), called once per pod with its feasible nodes; weight x score is added to those entries.
        """
    def top_k(self, cluster: Cluster, pods: collections.abc.Sequence[Pod], k: typing.SupportsInt | typing.SupportsIndex = 1) -> dict:
        """
        The k best nodes per pod, best first (k within 1..the cluster's node count): {'node': (pods, k) int32, 'score': (pods, k) int32 (-1 padding when fewer fit), 'feasible': (pods,) int64 feasible-node counts}.
        """
    @property
    def profile(self) -> str:
        ...
    @property
    def seed(self) -> int:
        ...
    @property
    def threads(self) -> int:
        ...
class GangResult:
    """
    The outcome of GangPlacer.place: all members' bindings, or why not.
    """
    def __bool__(self) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def release(self, cluster: Cluster) -> None:
        """
        Gives every member's resources back (the gang finished or was evicted whole).
        """
    @property
    def explanation(self) -> str:
        ...
    @property
    def failure(self) -> typing.Any:
        """
        None when placed; else {'role', 'placed', 'needed', 'rejections'}.
        """
    @property
    def members(self) -> list[tuple[str, int, Binding]]:
        """
        [(role, ordinal, Binding)] in placement order; empty when not placed.
        """
    @property
    def name(self) -> str:
        ...
    @property
    def nodes_used(self) -> int:
        ...
    @property
    def per_role(self) -> list[int]:
        ...
    @property
    def placed(self) -> bool:
        ...
    @property
    def racks_used(self) -> int:
        ...
class GangPlacer:
    """
    All-or-nothing, topology-aware placement of gangs with a Profile (docs/gang.md).
    """
    def __init__(self, profile: Profile, *, elastic: bool = True, prefer_racks: bool = True) -> None:
        ...
    def place(self, cluster: Cluster, name: str, roles: collections.abc.Sequence[tuple[str, Pod, typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex]], *, priority: typing.SupportsInt | typing.SupportsIndex = 0, submit_time: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> GangResult:
        """
        Places every member or none. roles: [(role name, Pod, min_count, desired_count)]. Releases the GIL.
        """
class SchedulingQueue:
    """
    Which pending pod or gang goes next (docs/queue.md): prod before dev (every dev_share_period-th contended pop takes dev), aging by age_step_s, fair share by tenant, FIFO; unschedulable units back off and park until a cluster event. Times are seconds and must not go backwards. Tickets are integers.
    """
    def __init__(self, *, age_step_s: typing.SupportsFloat | typing.SupportsIndex = 60.0, dev_share_period: typing.SupportsInt | typing.SupportsIndex = 0, initial_backoff_s: typing.SupportsFloat | typing.SupportsIndex = 1.0, max_backoff_s: typing.SupportsFloat | typing.SupportsIndex = 10.0, max_unschedulable_s: typing.SupportsFloat | typing.SupportsIndex = 300.0, timeout_s: typing.SupportsFloat | typing.SupportsIndex = 0.0, history: typing.SupportsInt | typing.SupportsIndex = 8) -> None:
        ...
    def __len__(self) -> int:
        ...
    def expired(self, now: typing.SupportsFloat | typing.SupportsIndex) -> list:
        """
        Units queued for timeout_s or more, dropped: [{'pods' (names), 'waited', 'attempts', 'explanation'}].
        """
    def on_cluster_event(self, event: str, now: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        'node_added' or 'resources_released': wakes the parked units it could help.
        """
    def pop(self, now: typing.SupportsFloat | typing.SupportsIndex) -> typing.Any:
        """
        The next ready unit, or None: {'ticket', 'pods', 'tier', 'priority', 'effective_priority', 'waited', 'attempts'}. Resolve it with scheduled() or unschedulable().
        """
    def push(self, pod: Pod, now: typing.SupportsFloat | typing.SupportsIndex) -> int:
        """
        Queues a copy of the pod; returns its unit's ticket (a gang member: its gang's, ready once gang_min_members have arrived).
        """
    def ready_count(self, tier: str) -> int:
        ...
    def released(self, pod: Pod) -> None:
        """
        A bound pod finished or was evicted: its requests leave its tenant's share.
        """
    def remove(self, ticket: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Drops a unit in any state (the pod was deleted).
        """
    def scheduled(self, ticket: typing.SupportsInt | typing.SupportsIndex, now: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        The popped unit was placed; its ticket ends.
        """
    def set_capacity(self, cpu_milli: typing.SupportsInt | typing.SupportsIndex, memory_mib: typing.SupportsInt | typing.SupportsIndex, gpu_milli: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        The cluster's total, for dominant shares.
        """
    def set_tenant_weight(self, tenant: str, weight: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def tenant_share(self, tenant: str) -> float:
        """
        The tenant's weighted dominant share of the capacity.
        """
    def unschedulable(self, ticket: typing.SupportsInt | typing.SupportsIndex, now: typing.SupportsFloat | typing.SupportsIndex, why: ScheduleResult = None) -> None:
        """
        The popped unit did not fit (why: the ScheduleResult that says so): it backs off and parks.
        """
class BoundCluster:
    """
    A cluster that also records which pods run where (priority, start time, gang): what preemption needs. Built from a copy of a Cluster's nodes and loads.
    """
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: BoundCluster) -> bool:
        ...
    def __init__(self, cluster: Cluster) -> None:
        ...
    def __len__(self) -> int:
        ...
    def bind(self, pod: Pod, binding: Binding, start_time: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> int:
        """
        Reserves and records; returns the pod's id. A binding the cluster refuses raises and changes nothing.
        """
    def copy(self) -> BoundCluster:
        ...
    def find(self, name: str) -> typing.Any:
        """
        The Binding of the bound pod of that name, or None.
        """
    def pods_on(self, node: typing.SupportsInt | typing.SupportsIndex) -> list[tuple[int, str, int, float]]:
        """
        [(id, name, priority, start_time)] of the pods bound on the node.
        """
    def unbind(self, id: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def bound_count(self) -> int:
        ...
    @property
    def gpu_milli_allocated(self) -> int:
        ...
class PreemptionPlan:
    """
    Which victims would let the pod fit, and where (a dry run).
    """
    def __bool__(self) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def binding(self) -> typing.Any:
        ...
    @property
    def candidates(self) -> int:
        ...
    @property
    def examined(self) -> int:
        ...
    @property
    def explanation(self) -> str:
        ...
    @property
    def found(self) -> bool:
        ...
    @property
    def gangs(self) -> int:
        ...
    @property
    def node(self) -> typing.Any:
        ...
    @property
    def victims(self) -> list[tuple[str, int, int, int]]:
        """
        [(name, id, node, priority)], most important first; members of a victim gang on other nodes included.
        """
    @property
    def violating(self) -> list[str]:
        """
        Names of the victims whose eviction violates a PodDisruptionBudget, most important first.
        """
    @property
    def violations(self) -> int:
        """
        How many victims' PodDisruptionBudgets the plan violates (0 without budgets).
        """
class DisruptionBudgets:
    """
    PodDisruptionBudgets as preemption sees them: each allows `disruptions_allowed` more evictions of the pods it covers (status.disruptionsAllowed), named explicitly (what a label selector resolves to). Victims that would violate a budget are reprieved first and their count leads the node choice (docs/preemption.md).
    """
    def __contains__(self, arg0: str) -> bool:
        ...
    def __init__(self) -> None:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def add(self, name: str, disruptions_allowed: typing.SupportsInt | typing.SupportsIndex, *, pods: collections.abc.Sequence[str] = []) -> int:
        """
        Adds a budget covering the named pods; returns its index. An empty or repeated name raises InvalidArgumentError and changes nothing. A negative allowance behaves as 0, as in Kubernetes.
        """
    def cover(self, pod: str, pdb: str) -> None:
        """
        Budget `pdb` also covers the pod of that name (a pod may be covered by several budgets).
        """
    def disruptions_allowed(self, pdb: str) -> int:
        ...
    @property
    def names(self) -> list[str]:
        """
        The budgets, in the order they were added.
        """
class Preemptor:
    """
    Kubernetes' DefaultPreemption with GPUCheck + NodeResourcesFit: the cheapest set of lower-priority victims (whole gangs) that lets a pod fit (docs/preemption.md).
    """
    def __init__(self, *, seed: typing.SupportsInt | typing.SupportsIndex = 0, protect_guaranteed: bool = False, sample_candidates: bool = True) -> None:
        ...
    def apply(self, cluster: BoundCluster, plan: PreemptionPlan, now: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        """
        Evicts the victims and binds the pod, as one transaction; a stale plan raises InvalidArgumentError and changes nothing.
        """
    def plan(self, cluster: BoundCluster, pod: Pod, now: typing.SupportsFloat | typing.SupportsIndex = 0.0, *, pdbs: DisruptionBudgets = None) -> PreemptionPlan:
        """
        The dry run; changes nothing. `pdbs`: the DisruptionBudgets to respect (None: none).
        """
def _parse_config(text: str, source: str, python_scores: dict) -> Config:
    """
    Parses a KubeSchedulerConfiguration (use gpusched.load_config). Errors raise ConfigFileError with file:line.
    """
def canonical_policy(name: str) -> str:
    """
    The policy's name as the simulator reports it, for a name in any case or a former name (gpusched-refill is gpusched); InvalidArgumentError naming `policy` otherwise.
    """
def experiment_fields() -> list:
    """
    The run metrics in report order, as the JSON's "fields" (docs/results.schema.json): dicts with key (snake_case, unit last), label (the table's), kind ('integer' or 'real'), precision and lower_is_better.
    """
def experiment_inputs(scenario: Scenario, profiles: collections.abc.Sequence[str]) -> list:
    """
    The files behind run_ab's results, as the JSON's "inputs": dicts with role, path and sha256 (the scenario, its latency tables, each profile's configuration).
    """
def experiment_metrics() -> list[tuple[str, str]]:
    """
    The run metrics as (key, label) pairs in report order; each value is in its key's unit (jct_mean_h: hours, as the label says).
    """
def experiment_run_once(scenario: Scenario, profile: str, seed: typing.SupportsInt | typing.SupportsIndex, duration_s: typing.SupportsFloat | typing.SupportsIndex | None = None) -> dict:
    """
    Runs one profile on one seed (duration_s: the scenario's when None); releases the GIL. Returns the run's metrics as a dict (see experiment_metrics()).
    """
def replay_fields(mode: str) -> list:
    """
    The scalar fields of run_paper (mode='paper') or run_dynamic ('dynamic') results, as gpusched-sim's JSON lists them (docs/results.schema.json): dicts with key, label, kind ('integer' or 'real'), precision and lower_is_better.
    """
def run_dynamic(trace: Trace, policy: typing.Any, seed: typing.SupportsInt | typing.SupportsIndex = 42, time_scale: typing.SupportsFloat | typing.SupportsIndex = 1.0, sample_period_s: typing.SupportsInt | typing.SupportsIndex = 21600, preemption: bool = False, window_samples: typing.SupportsInt | typing.SupportsIndex = 20, queue: str = 'fifo') -> dict:
    """
    Replays the trace with its own clock (arrivals, departures, a waiting queue); needs an 11-column pod file. Releases the GIL. Returns a dict of samples (time_s, allocation_pct, running_pods, pending_pods, frag_amount_pct, free_in_whole_gpus_pct and free_in_partly_used_gpus_pct (the unallocated GPU in wholly free and in partly used GPUs), waiting_one_gpu_pct and waiting_multi_gpu_pct (the GPU asked by waiting pods of one GPU and of several) as numpy arrays), the scalars of gpusched-sim's JSON (replay_fields('dynamic')), withdrawn_by_shape, preempted_by_shape, and pods_by_priority and withdrawn_by_priority ({priority: count}). preemption: a pod that fits nowhere may preempt lower-priority pods; the victims wait again. window_samples: evenly spaced points of the arrival window (window_time_s, window_allocation_pct, window_running_pods, window_pending_pods, window_frag_amount_pct and window_ forms of the four above). queue: the order in which waiting pods are retried, 'fifo' (arrival) or 'priority' (higher priority first, then arrival: Kubernetes' PrioritySort; gpusched-sim's --queue).
    """
def run_paper(trace: Trace, policy: typing.Any, seed: typing.SupportsInt | typing.SupportsIndex = 42, tune: typing.SupportsFloat | typing.SupportsIndex = 1.3, shuffle: bool = True, record_events: bool = True, max_pct: typing.SupportsInt | typing.SupportsIndex | None = None, preemption: bool = False) -> dict:
    """
    Replays the trace under the FGD paper's protocol (arrivals only) with one policy and seed; releases the GIL. policy: a name (sim_policies()) or a Python scorer fn(NodeFeatures, Pod) -> scores 0..100, which runs as the only scorer after the simulator's filter (NodeResourcesFit + GPUCheck), with best-fit devices. Returns a dict: the per-percent curve (arrived_pct, allocation_pct, frag_amount_pct, frag_ratio_pct as numpy arrays, buckets 0..max_pct, default round(tune*100), or the final arrived % when tune <= 0), per-arrival events (event_*), the scalars of gpusched-sim's JSON (allocation_pct_at_tune, unallocated_pct_at_tune, final_*_pct, arrived_pods, failed_pods, wall_s, preemptions, preempted_pods; replay_fields('paper')), gpu_capacity_milli and failed_by_shape. preemption: a pod that fits nowhere may preempt lower-priority pods (Kubernetes' DefaultPreemption over the fit checks); the victims are gone for good, as failed pods are.
    """
def sim_policies() -> list:
    """
    The simulator's policies: name, summary, the FGD paper's published GPU allocation % on the default openb trace at 130% arrived (None for gpusched's own), and former_names (names the policy had before, still accepted).
    """
def summarise(x: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]) -> tuple[float, float]:
    """
    Mean and 95% confidence half-width (Student's t, sample standard deviation): (mean, half); half is 0 with fewer than two values.
    """
def summary_of(x: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]) -> dict:
    """
    Mean, sample standard deviation and 95% confidence half-width (Student's t) of per-seed values: {'mean', 'sd', 'ci95'}, as in the JSON's results.
    """
__version__: str = '0.1.0'
