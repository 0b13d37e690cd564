// A gang: a group of pods placed all together or not at all (one launcher plus N workers, ...).
//
// A gang is a list of roles. Every member of a role copies the role's pod template; a role asks for
// at least `min_count` members and, when there is room, up to `desired_count` (elastic, the seed's
// "tiered requests"). The gang is placed only when every role gets its minimum.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

struct gang_role {
  std::string name;  // "launcher", "worker"
  pod member;        // the request every member of this role makes
  std::int32_t min_count = 1;
  std::int32_t desired_count = 1;
};

struct gang_spec {
  std::string name;
  std::vector<gang_role> roles;
  std::int32_t priority = 0;  // any int32, as Kubernetes' pod priority; orders gangs in the coordinator and breaks wait-for cycles
  double submit_time = 0.0;   // seconds; older gangs go first among equal priority

  [[nodiscard]] std::int64_t min_members() const noexcept {
    std::int64_t s = 0;
    for (const auto& r : roles) s += r.min_count;
    return s;
  }
  [[nodiscard]] std::int64_t desired_members() const noexcept {
    std::int64_t s = 0;
    for (const auto& r : roles) s += r.desired_count;
    return s;
  }
};

inline constexpr std::int32_t max_gang_members = 1 << 20;  // keeps packing keys and counts in 32 bits

// Throws invalid_argument_error naming the first invalid field ("gang 'g'.roles[1].min_count").
// Field names are built only when throwing: placing a gang validates it, and that path allocates
// nothing (pod names of at most 9 characters keep validate(pod)'s own message in the small-string
// buffer too).
inline void validate(const gang_spec& g) {
  if (g.name.empty()) throw invalid_argument_error("gang.name", "must not be empty");
  auto at = [&](const std::string& field) { return "gang '" + g.name + "'." + field; };
  if (g.roles.empty()) throw invalid_argument_error(at("roles"), "a gang needs at least one role");
  if (!std::isfinite(g.submit_time) || g.submit_time < 0.0) {
    throw invalid_argument_error(at("submit_time"), "must be a finite time >= 0");
  }
  std::int64_t total = 0;
  for (std::size_t i = 0; i < g.roles.size(); ++i) {
    const gang_role& r = g.roles[i];
    auto f = [&](const char* field) { return at("roles[" + std::to_string(i) + "]." + field); };
    if (r.name.empty()) throw invalid_argument_error(f("name"), "must not be empty");
    for (std::size_t j = 0; j < i; ++j) {
      if (g.roles[j].name == r.name) throw invalid_argument_error(f("name"), "'" + r.name + "' is used by two roles");
    }
    validate(r.member);
    if (r.min_count < 0) throw invalid_argument_error(f("min_count"), "must be >= 0");
    if (r.desired_count < 1) throw invalid_argument_error(f("desired_count"), "must be >= 1");
    if (r.desired_count < r.min_count) throw invalid_argument_error(f("desired_count"), "must be >= min_count");
    total += r.desired_count;
    if (total > max_gang_members) throw invalid_argument_error(f("desired_count"), "a gang has at most 2^20 members");
  }
  if (g.min_members() < 1) throw invalid_argument_error(at("roles"), "the minimum members of all roles add up to 0");
}

// Fluent builder, as make_pod:
//   make_gang("bert-train").role("launcher", launcher_pod).role("worker", worker_pod, 4, 8).priority(5)
class gang_builder {
 public:
  explicit gang_builder(std::string name) { g_.name = std::move(name); }
  // A role of exactly `count` members.
  gang_builder& role(std::string name, pod member, std::int32_t count = 1) {
    return role(std::move(name), std::move(member), count, count);
  }
  // An elastic role: at least min_count members, up to desired_count when there is room.
  gang_builder& role(std::string name, pod member, std::int32_t min_count, std::int32_t desired_count) {
    g_.roles.push_back(gang_role{std::move(name), std::move(member), min_count, desired_count});
    return *this;
  }
  gang_builder& priority(std::int32_t p) { g_.priority = p; return *this; }
  gang_builder& submitted(double t) { g_.submit_time = t; return *this; }
  [[nodiscard]] gang_spec build() const { validate(g_); return g_; }
  operator gang_spec() const { return build(); }  // NOLINT(google-explicit-constructor)

 private:
  gang_spec g_;
};

inline gang_builder make_gang(std::string name) { return gang_builder(std::move(name)); }

// What a whole gang asks for: the figure a preemptor or a quota check compares with the room it
// can make (all members at their minimum, or at the desired count).
struct gang_demand {
  std::int64_t members = 0;
  milli cpu_milli = 0;
  mib memory_mib = 0;
  std::int64_t gpus = 0;       // devices touched (num_gpu per member)
  milli gpu_milli = 0;         // GPU share in milli (1000 per whole GPU)
  std::int64_t gpu_mem_mib = 0;
};

inline gang_demand demand_of(const gang_spec& g, bool desired = false) noexcept {
  gang_demand d;
  for (const auto& r : g.roles) {
    const std::int64_t k = desired ? r.desired_count : r.min_count;
    d.members += k;
    d.cpu_milli += k * r.member.cpu_milli;
    d.memory_mib += k * r.member.memory_mib;
    d.gpus += k * r.member.num_gpu;
    d.gpu_milli += k * r.member.gpu_milli_total();
    d.gpu_mem_mib += k * std::int64_t{r.member.num_gpu} * r.member.gpu_mem_mib;
  }
  return d;
}

}  // namespace gpusched
