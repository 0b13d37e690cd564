// Scoring plugins written in Python: a vectorised function over numpy arrays of node features,
// called once per pod with the feasible nodes (through dynamic_profile's SpanScorer support).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "bindings.hpp"

namespace gpusched::python {

namespace {

using i64 = py::array_t<std::int64_t>;
using f64 = py::array_t<double>;

// Arrays of one value per node (in the order of `node`), fresh for every call.
struct node_features {
  i64 node, cpu_capacity, cpu_allocated, memory_capacity, memory_allocated, gpu_count, gpu_milli_free, gpu_full_free,
      gpu_mem_total_mib, gpu_mem_free_mib, gpu_milli_free_per_gpu;
  py::array_t<bool> has_load;
  f64 cpu_used, mem_used, gpu_used;
};

// Owns a Python callable; the reference is dropped with the GIL held, whichever thread drops it.
struct py_callable {
  py::object fn;
  ~py_callable() {
    py::gil_scoped_acquire gil;
    fn = py::object();
  }
};

struct python_scorer {
  std::string label;
  std::shared_ptr<py_callable> fn;

  [[nodiscard]] std::string_view name() const noexcept { return label; }

  void score_nodes(const cluster_t& c, const pod& p, std::span<const node_index> nodes, std::int64_t* out) const {
    py::gil_scoped_acquire gil;
    py::object feats = node_features_of(c, nodes.data(), nodes.size());
    py::object res = fn->fn(feats, p);
    read_scores(res, nodes.size(), out);
  }

  void read_scores(const py::object& res, std::size_t m, std::int64_t* out) const {
    const std::string field = "profile.score." + label;
    py::array a = py::array::ensure(res);
    if (!a) {
      PyErr_Clear();
      throw invalid_argument_error(field, "the Python scorer must return an array of scores, got " +
                                              py::str(py::type::of(res).attr("__name__")).cast<std::string>());
    }
    if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != m) {
      std::string shape;
      for (py::ssize_t d = 0; d < a.ndim(); ++d) shape += (d ? ", " : "") + std::to_string(a.shape(d));
      throw invalid_argument_error(field, "the Python scorer must return " + std::to_string(m) +
                                              " scores (one per node), got shape (" + shape + ")");
    }
    const char kind = a.dtype().kind();
    if (kind == 'f') {
      auto v = py::array_t<double, py::array::forcecast>::ensure(a);
      auto r = v.unchecked<1>();
      for (std::size_t j = 0; j < m; ++j) {
        const double s = r(static_cast<py::ssize_t>(j));
        if (!std::isfinite(s) || s < 0.0 || s >= 101.0) bad(field, j, py::repr(py::float_(s)).cast<std::string>());
        out[j] = static_cast<std::int64_t>(s);  // truncation toward zero, as Go's int64(x)
        if (out[j] > max_node_score) bad(field, j, py::repr(py::float_(s)).cast<std::string>());
      }
    } else if (kind == 'i' || kind == 'u') {
      auto v = py::array_t<std::int64_t, py::array::forcecast>::ensure(a);
      auto r = v.unchecked<1>();
      for (std::size_t j = 0; j < m; ++j) {
        const std::int64_t s = r(static_cast<py::ssize_t>(j));
        if (s < 0 || s > max_node_score) bad(field, j, std::to_string(s));
        out[j] = s;
      }
    } else {
      throw invalid_argument_error(field, "the Python scorer must return integer or float scores, got dtype " +
                                              py::str(a.dtype()).cast<std::string>());
    }
  }

  [[noreturn]] static void bad(const std::string& field, std::size_t j, const std::string& value) {
    throw invalid_argument_error(field, "the Python scorer returned " + value + " for node " + std::to_string(j) +
                                            " of the call; scores must be within 0..100 (finite)");
  }
};

static_assert(SpanScorer<python_scorer, cluster_t>);

template <class T>
py::array_t<T> fresh(std::size_t n) {
  return py::array_t<T>(static_cast<py::ssize_t>(n));
}

}  // namespace

void python_scores(const py::object& fn, const std::string& label, const cluster_t& c, const pod& p,
                   std::span<const node_index> nodes, std::int64_t* out) {
  py::gil_scoped_acquire gil;
  py::object feats = node_features_of(c, nodes.data(), nodes.size());
  py::object res = fn(feats, p);
  python_scorer{label, nullptr}.read_scores(res, nodes.size(), out);
}

py::object node_features_of(const cluster_t& c, const node_index* nodes, std::size_t m) {
  node_features f;
  f.node = fresh<std::int64_t>(m);
  f.cpu_capacity = fresh<std::int64_t>(m);
  f.cpu_allocated = fresh<std::int64_t>(m);
  f.memory_capacity = fresh<std::int64_t>(m);
  f.memory_allocated = fresh<std::int64_t>(m);
  f.gpu_count = fresh<std::int64_t>(m);
  f.gpu_milli_free = fresh<std::int64_t>(m);
  f.gpu_full_free = fresh<std::int64_t>(m);
  f.gpu_mem_total_mib = fresh<std::int64_t>(m);
  f.gpu_mem_free_mib = fresh<std::int64_t>(m);
  f.has_load = fresh<bool>(m);
  f.cpu_used = fresh<double>(m);
  f.mem_used = fresh<double>(m);
  f.gpu_used = fresh<double>(m);
  int max_gpus = 0;
  for (std::size_t j = 0; j < m; ++j) max_gpus = std::max(max_gpus, c.resources(nodes[j]).gpu_count);
  f.gpu_milli_free_per_gpu = py::array_t<std::int64_t>({static_cast<py::ssize_t>(m), static_cast<py::ssize_t>(max_gpus)});

  auto node = f.node.mutable_unchecked<1>();
  auto cpu_cap = f.cpu_capacity.mutable_unchecked<1>();
  auto cpu_all = f.cpu_allocated.mutable_unchecked<1>();
  auto mem_cap = f.memory_capacity.mutable_unchecked<1>();
  auto mem_all = f.memory_allocated.mutable_unchecked<1>();
  auto gcount = f.gpu_count.mutable_unchecked<1>();
  auto gfree = f.gpu_milli_free.mutable_unchecked<1>();
  auto gfull = f.gpu_full_free.mutable_unchecked<1>();
  auto gmem_t = f.gpu_mem_total_mib.mutable_unchecked<1>();
  auto gmem_f = f.gpu_mem_free_mib.mutable_unchecked<1>();
  auto per_gpu = f.gpu_milli_free_per_gpu.mutable_unchecked<2>();
  auto has = f.has_load.mutable_unchecked<1>();
  auto cu = f.cpu_used.mutable_unchecked<1>();
  auto mu = f.mem_used.mutable_unchecked<1>();
  auto gu = f.gpu_used.mutable_unchecked<1>();
  for (std::size_t j = 0; j < m; ++j) {
    const auto jj = static_cast<py::ssize_t>(j);
    const node_index n = nodes[j];
    const node_state& r = c.resources(n);
    node(jj) = n;
    cpu_cap(jj) = r.cpu_capacity;
    cpu_all(jj) = r.cpu_allocated;
    mem_cap(jj) = r.mem_capacity;
    mem_all(jj) = r.mem_allocated;
    gcount(jj) = r.gpu_count;
    std::int64_t milli_free = 0, full = 0, mt = 0, mf = 0;
    int g = 0;
    for (const gpu_device& d : c.gpus(n)) {
      milli_free += d.milli_free;
      full += d.milli_free == gpu_milli_whole ? 1 : 0;
      mt += d.mem_total_mib;
      mf += d.mem_free_mib;
      per_gpu(jj, g++) = d.milli_free;
    }
    for (; g < max_gpus; ++g) per_gpu(jj, g) = -1;
    gfree(jj) = milli_free;
    gfull(jj) = full;
    gmem_t(jj) = mt;
    gmem_f(jj) = mf;
    const node_metrics* l = c.load(n);
    has(jj) = l != nullptr;
    cu(jj) = l ? l->cpu_used : 0.0;
    mu(jj) = l ? l->mem_used : 0.0;
    gu(jj) = l ? l->gpu_used : 0.0;
  }
  return py::cast(std::move(f));
}

void add_python_scorer(profile_t& p, py::object fn, std::int64_t weight, std::string name) {
  if (!PyCallable_Check(fn.ptr())) throw py::type_error("add_python_score: fn must be callable");
  if (name.empty()) throw invalid_argument_error("profile.score.name", "must not be empty");
  auto holder = std::make_shared<py_callable>();
  holder->fn = std::move(fn);
  p.add_score(python_scorer{std::move(name), std::move(holder)}, weight);
}

void register_python_scorer(py::module_& m) {
  py::class_<node_features>(m, "NodeFeatures",
                            "Node features as numpy arrays, one entry per node (in the order of `node`): what a "
                            "scorer written in Python receives. Arrays are fresh copies for every call.")
      .def_readonly("node", &node_features::node, "node index in the cluster (int64)")
      .def_readonly("cpu_capacity", &node_features::cpu_capacity, "milli-cores (int64)")
      .def_readonly("cpu_allocated", &node_features::cpu_allocated, "milli-cores requested by placed pods (int64)")
      .def_readonly("memory_capacity", &node_features::memory_capacity, "MiB (int64)")
      .def_readonly("memory_allocated", &node_features::memory_allocated, "MiB (int64)")
      .def_readonly("gpu_count", &node_features::gpu_count, "GPU devices (int64)")
      .def_readonly("gpu_milli_free", &node_features::gpu_milli_free, "free GPU share summed over devices (int64)")
      .def_readonly("gpu_full_free", &node_features::gpu_full_free, "devices with their whole share free (int64)")
      .def_readonly("gpu_mem_total_mib", &node_features::gpu_mem_total_mib, "GPU memory summed over devices (int64)")
      .def_readonly("gpu_mem_free_mib", &node_features::gpu_mem_free_mib, "free GPU memory summed over devices (int64)")
      .def_readonly("gpu_milli_free_per_gpu", &node_features::gpu_milli_free_per_gpu,
                    "free share per device, shape (nodes, max GPUs), -1 past a node's last device (int64)")
      .def_readonly("has_load", &node_features::has_load, "whether the node reports measured load (bool)")
      .def_readonly("cpu_used", &node_features::cpu_used, "measured CPU usage fraction, 0 without load (float64)")
      .def_readonly("mem_used", &node_features::mem_used, "measured memory usage fraction, 0 without load (float64)")
      .def_readonly("gpu_used", &node_features::gpu_used, "measured GPU utilisation fraction, 0 without load (float64)")
      .def("__len__", [](const node_features& f) { return f.node.shape(0); });
}

}  // namespace gpusched::python
