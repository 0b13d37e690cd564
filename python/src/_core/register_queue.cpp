// queue/: the two-tier scheduling queue (prod before dev with a dev share, aging, fair share by
// tenant, backoff, parking until a cluster event, timeouts). The Python queue owns copies of the
// pods it holds (the C++ queue keeps pointers), freed when their unit is scheduled, removed or expired.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gpusched/queue/scheduling_queue.hpp>

#include "bindings.hpp"

namespace gpusched::python {

namespace {

std::uint64_t key(queue_ticket t) { return (std::uint64_t{t.slot} << 32) | t.generation; }
queue_ticket ticket(std::uint64_t k) {
  return queue_ticket{static_cast<std::uint32_t>(k >> 32), static_cast<std::uint32_t>(k & 0xffffffffU)};
}

struct py_queue {
  scheduling_queue q;
  std::unordered_map<std::uint64_t, std::vector<std::unique_ptr<pod>>> owned;  // per unit
  std::unordered_map<const pod*, std::uint64_t> unit_of;

  explicit py_queue(const queue_options& o) : q(o) {}

  std::uint64_t push(const pod& p, double now) {
    auto copy = std::make_unique<pod>(p);
    const std::uint64_t k = key(q.push(*copy, now));  // throws, changing nothing, for a bad pod or time
    unit_of.emplace(copy.get(), k);
    owned[k].push_back(std::move(copy));
    return k;
  }
  void forget(std::uint64_t k) {
    auto it = owned.find(k);
    if (it == owned.end()) return;
    for (const auto& p : it->second) unit_of.erase(p.get());
    owned.erase(it);
  }
  void require(std::uint64_t k) const {
    if (owned.find(k) == owned.end()) {
      throw invalid_argument_error("ticket", "no unit with ticket " + std::to_string(k) + " in this queue");
    }
  }
};

cluster_event event_of(const std::string& e) {
  if (e == "node_added") return cluster_event::node_added;
  if (e == "resources_released") return cluster_event::resources_released;
  throw invalid_argument_error("event", "must be 'node_added' or 'resources_released', got '" + e + "'");
}

tier tier_of(const std::string& t) {
  if (t == "prod") return tier::prod;
  if (t == "dev") return tier::dev;
  throw invalid_argument_error("tier", "must be 'prod' or 'dev', got '" + t + "'");
}

}  // namespace

void register_queue(py::module_& m) {
  py::class_<py_queue>(m, "SchedulingQueue",
                       "Which pending pod or gang goes next (docs/queue.md): prod before dev (every "
                       "dev_share_period-th contended pop takes dev), aging by age_step_s, fair share by tenant, "
                       "FIFO; unschedulable units back off and park until a cluster event. Times are seconds and "
                       "must not go backwards. Tickets are integers.")
      .def(py::init([](double age_step_s, std::int32_t dev_share_period, double initial_backoff_s, double max_backoff_s,
                       double max_unschedulable_s, double timeout_s, std::size_t history) {
             queue_options o;
             o.age_step_s = age_step_s;
             o.dev_share_period = dev_share_period;
             o.initial_backoff_s = initial_backoff_s;
             o.max_backoff_s = max_backoff_s;
             o.max_unschedulable_s = max_unschedulable_s;
             o.timeout_s = timeout_s;
             o.history = history;
             o.validate();
             return new py_queue(o);
           }),
           py::kw_only(), py::arg("age_step_s") = 60.0, py::arg("dev_share_period") = 0,
           py::arg("initial_backoff_s") = 1.0, py::arg("max_backoff_s") = 10.0, py::arg("max_unschedulable_s") = 300.0,
           py::arg("timeout_s") = 0.0, py::arg("history") = 8)
      .def("push", &py_queue::push, py::arg("pod"), py::arg("now"),
           "Queues a copy of the pod; returns its unit's ticket (a gang member: its gang's, ready once "
           "gang_min_members have arrived).")
      .def(
          "pop",
          [](py_queue& self, double now) -> py::object {
            const auto u = self.q.pop(now);
            if (!u) return py::none();
            py::dict d;
            d["ticket"] = key(u->ticket);
            std::vector<pod> pods;
            for (const pod* p : u->pods) pods.push_back(*p);
            d["pods"] = pods;
            d["tier"] = u->tier_ == tier::prod ? "prod" : "dev";
            d["priority"] = u->priority;
            d["effective_priority"] = u->effective_priority;
            d["waited"] = u->waited;
            d["attempts"] = u->attempts;
            return d;
          },
          py::arg("now"),
          "The next ready unit, or None: {'ticket', 'pods', 'tier', 'priority', 'effective_priority', 'waited', "
          "'attempts'}. Resolve it with scheduled() or unschedulable().")
      .def(
          "scheduled",
          [](py_queue& self, std::uint64_t t, double now) {
            self.require(t);
            self.q.scheduled(ticket(t), now);
            self.forget(t);
          },
          py::arg("ticket"), py::arg("now"), "The popped unit was placed; its ticket ends.")
      .def(
          "unschedulable",
          [](py_queue& self, std::uint64_t t, double now, const py_result* why) {
            self.require(t);
            self.q.unschedulable(ticket(t), now, why != nullptr ? why->r.rejections : rejection_counts{});
          },
          py::arg("ticket"), py::arg("now"), py::arg("why") = py::none(),
          "The popped unit did not fit (why: the ScheduleResult that says so): it backs off and parks.")
      .def(
          "on_cluster_event", [](py_queue& self, const std::string& e, double now) { self.q.on_cluster_event(event_of(e), now); },
          py::arg("event"), py::arg("now"), "'node_added' or 'resources_released': wakes the parked units it could help.")
      .def(
          "remove",
          [](py_queue& self, std::uint64_t t) {
            self.require(t);
            self.q.remove(ticket(t));
            self.forget(t);
          },
          py::arg("ticket"), "Drops a unit in any state (the pod was deleted).")
      .def("released", [](py_queue& self, const pod& p) { self.q.released(p); }, py::arg("pod"),
           "A bound pod finished or was evicted: its requests leave its tenant's share.")
      .def(
          "expired",
          [](py_queue& self, double now) {
            py::list out;
            for (const timeout_report& r : self.q.expired(now)) {
              py::dict d;
              std::vector<std::string> names;
              for (const pod* p : r.pods) names.push_back(p->name);
              d["pods"] = names;
              d["waited"] = r.waited;
              d["attempts"] = r.attempts;
              d["explanation"] = r.explain();
              out.append(d);
              if (!r.pods.empty()) {
                const auto it = self.unit_of.find(r.pods.front());
                if (it != self.unit_of.end()) self.forget(it->second);
              }
            }
            return out;
          },
          py::arg("now"), "Units queued for timeout_s or more, dropped: [{'pods' (names), 'waited', 'attempts', 'explanation'}].")
      .def(
          "set_capacity",
          [](py_queue& self, milli cpu_milli, mib memory_mib, milli gpu_milli) {
            self.q.set_capacity(resource_amount{cpu_milli, memory_mib, gpu_milli});
          },
          py::arg("cpu_milli"), py::arg("memory_mib"), py::arg("gpu_milli"), "The cluster's total, for dominant shares.")
      .def(
          "set_tenant_weight", [](py_queue& self, const std::string& t, double w) { self.q.set_tenant_weight(t, w); },
          py::arg("tenant"), py::arg("weight"))
      .def(
          "tenant_share", [](const py_queue& self, const std::string& t) { return self.q.tenant_share(t); },
          py::arg("tenant"), "The tenant's weighted dominant share of the capacity.")
      .def(
          "ready_count", [](const py_queue& self, const std::string& t) { return self.q.ready_count(tier_of(t)); },
          py::arg("tier"))
      .def("__len__", [](const py_queue& self) { return self.q.size(); });
}

}  // namespace gpusched::python
