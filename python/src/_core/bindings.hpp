// What the registration files share: the curated template instantiations and the wrappers that
// Python objects hold.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gpusched/core/binding.hpp>
#include <gpusched/core/error.hpp>
#include <gpusched/core/in_memory_cluster.hpp>
#include <gpusched/core/pod.hpp>
#include <gpusched/profile/dynamic_profile.hpp>
#include <gpusched/schedule/schedule_one.hpp>

namespace gpusched::python {

namespace py = pybind11;

// The curated instantiations: Python works on in_memory_cluster with dynamic profiles (plugins by
// name, from YAML or Python). register_schedule.cpp adds one static profile (the seed's) to
// cross-check the two.
using cluster_t = in_memory_cluster;
using profile_t = dynamic_profile<cluster_t>;

// Marks an object as in use by a call that released the GIL. Set and tested only while holding
// the GIL, so a plain bool suffices; another thread (or a Python scorer called back from inside
// the call) that touches the object meanwhile gets a RuntimeError instead of a data race.
struct busy_flag {
  bool busy = false;
  const char* what = "object";
  void check() const {
    if (busy) {
      throw std::runtime_error(std::string("this ") + what +
                               " is in use by a running gpusched call (another thread, or a Python scorer "
                               "called back from it); wait for that call to return");
    }
  }
};
class busy_scope {
 public:
  explicit busy_scope(busy_flag& f) : f_(&f) {
    f.check();
    f.busy = true;
  }
  busy_scope(const busy_scope&) = delete;
  busy_scope& operator=(const busy_scope&) = delete;
  ~busy_scope() { f_->busy = false; }

 private:
  busy_flag* f_;
};

// The Python-visible cluster: in_memory_cluster plus the busy flag.
struct py_cluster {
  cluster_t c;
  busy_flag flag{false, "Cluster"};
  cluster_t& get() {
    flag.check();
    return c;
  }
};

// A schedule_result detached from the profile and cluster it came from (plugin and node names
// are copied, so it outlives both).
struct py_result {
  schedule_result r;  // breakdown's string_views are cleared; names live in plugin_names
  std::vector<std::string> plugin_names;
  std::string node_name;
  std::string explanation;
};

template <class C>
py_result detach(const schedule_result& r, const C& c) {
  py_result out;
  out.r = r;
  out.r.breakdown.clear();
  out.node_name = r.scheduled ? node_label(c, r.where.node) : std::string();
  out.explanation = r.explain(out.node_name);
  out.plugin_names.reserve(r.breakdown.size());
  for (const auto& b : r.breakdown) {
    out.plugin_names.emplace_back(b.plugin);
    out.r.breakdown.push_back(plugin_score{{}, b.score, b.weight});
  }
  return out;
}

// A 1-d numpy array that takes over `v`'s buffer (no copy): the vector moves to the heap and a
// capsule owned by the array frees it.
template <class T>
py::array_t<T> to_numpy(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule free_it(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({static_cast<py::ssize_t>(owned->size())}, {static_cast<py::ssize_t>(sizeof(T))},
                        owned->data(), free_it);
}

// GPU indices <-> gpu_set.
std::vector<int> gpu_list(gpu_set s);
gpu_set gpu_mask(const std::vector<int>& gpus, const char* field);

// Node features of `nodes` as numpy arrays (the input of a Python scorer); defined in
// register_python_scorer.cpp, used by Cluster.features too.
py::object node_features_of(const cluster_t& c, const node_index* nodes, std::size_t count);

// Calls a Python scorer `fn(features, pod)` for `nodes` of c (taking the GIL) and checks its scores
// into out (errors name profile.score.<label>). Defined in register_python_scorer.cpp.
void python_scores(const py::object& fn, const std::string& label, const cluster_t& c, const pod& p,
                   std::span<const node_index> nodes, std::int64_t* out);

// Holds a Python object in C++ that may be dropped without the GIL (taken to drop it).
struct gil_safe_object {
  py::object obj;
  explicit gil_safe_object(py::object o) : obj(std::move(o)) {}
  gil_safe_object(const gil_safe_object&) = delete;
  gil_safe_object& operator=(const gil_safe_object&) = delete;
  ~gil_safe_object() {
    py::gil_scoped_acquire gil;
    obj = py::object();
  }
};

// Adds a scorer written in Python to a dynamic profile.
void add_python_scorer(profile_t& p, py::object fn, std::int64_t weight, std::string name);

}  // namespace gpusched::python
