// pod_gang: a gang_spec together with the concrete pod of every member, so that a placement
// (member_binding: role, ordinal) can be bound under each member's own name.
//
//   auto u = queue.pop(now);                       // a gang is one queue unit (queue/scheduling_queue.hpp)
//   pod_gang pg = gang_from_pods(u.pods);          // roles from identical shapes, minimum from gang_min_members
//   pod_gang pg2 = name_members(make_gang("t").role("w", worker, 4));  // members "t-w-0" .. "t-w-3"
//
// Rules of gang_from_pods (Coscheduling's PodGroup: members share the group name, minMember is the
// group's minimum; kubernetes-sigs/scheduler-plugins kep/42-podgroup-coscheduling):
//   - every pod names the same gang (pod.gang), the same gang_min_members, priority, tier and tenant,
//     and has a distinct name; at least gang_min_members pods are given;
//   - pods with identical shapes (CPU, memory, GPUs, GPU share, GPU memory, allowed models, served
//     model, QoS) form one role, in order of first appearance; the role is named after its first pod;
//   - the gang's minimum splits over the roles thus: every role is fixed at its pod count, except the
//     role with the most pods (the first such on a tie: the workers), which absorbs the slack
//     (pods - gang_min_members) as elasticity: min_count = count - slack, desired_count = count.
//     A slack that would leave that role below one member is an error (say what is optional with
//     separate gangs instead);
//   - the gang's priority is the pods' priority, its submit time the earliest pod's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/gang/gang.hpp"
#include "gpusched/gang/result.hpp"

namespace gpusched {

struct pod_gang {
  gang_spec spec;
  std::vector<std::vector<pod>> pods;  // pods[r][i]: member i of role r (desired_count of them)

  // The pod a placed member binds as. Throws invalid_argument_error for a member the gang lacks.
  [[nodiscard]] const pod& member(const member_binding& m) const {
    if (m.role >= pods.size() || m.ordinal >= pods[m.role].size()) {
      throw invalid_argument_error("member_binding", "role " + std::to_string(m.role) + " member " +
                                                         std::to_string(m.ordinal) + " is not in gang '" + spec.name + "'");
    }
    return pods[m.role][m.ordinal];
  }
};

namespace gang_pods_detail {

template <class Get>
pod_gang build(std::size_t n, Get&& get) {
  if (n == 0) throw invalid_argument_error("gang.pods", "a gang needs at least one pod");
  const pod& first = get(0);
  validate(first);
  if (first.gang.empty()) throw invalid_argument_error("pod '" + first.name + "'.gang", "is empty: the pod is not a gang member");
  auto field = [](const pod& p, const char* f) { return "pod '" + p.name + "'." + f; };
  std::vector<std::size_t> role_of(n);
  std::vector<std::size_t> first_of;  // index of each role's first pod
  double submit = first.submit_time;
  for (std::size_t i = 0; i < n; ++i) {
    const pod& p = get(i);
    if (i > 0) {
      validate(p);
      if (p.gang != first.gang) throw invalid_argument_error(field(p, "gang"), "'" + p.gang + "' differs from '" + first.gang + "'");
      if (p.gang_min_members != first.gang_min_members) {
        throw invalid_argument_error(field(p, "gang_min_members"), std::to_string(p.gang_min_members) + " differs from gang '" +
                                                                       first.gang + "' (" + std::to_string(first.gang_min_members) + ")");
      }
      if (p.priority != first.priority) throw invalid_argument_error(field(p, "priority"), "differs from gang '" + first.gang + "'");
      if (p.tier_ != first.tier_) throw invalid_argument_error(field(p, "tier"), "differs from gang '" + first.gang + "'");
      if (p.tenant != first.tenant) throw invalid_argument_error(field(p, "tenant"), "differs from gang '" + first.gang + "'");
      for (std::size_t j = 0; j < i; ++j) {
        if (get(j).name == p.name) throw invalid_argument_error(field(p, "name"), "is given twice");
      }
    }
    submit = std::min(submit, p.submit_time);
    std::size_t r = 0;
    while (r < first_of.size() && !same_shape(get(first_of[r]), p)) ++r;
    if (r == first_of.size()) first_of.push_back(i);
    role_of[i] = r;
  }
  const auto min_members = static_cast<std::size_t>(first.gang_min_members);
  if (n < min_members) {
    throw invalid_argument_error("gang '" + first.gang + "'.pods", std::to_string(n) + " pods given, gang_min_members is " +
                                                                      std::to_string(min_members));
  }
  pod_gang g;
  g.spec.name = first.gang;
  g.spec.priority = first.priority;
  g.spec.submit_time = submit;
  g.pods.resize(first_of.size());
  for (std::size_t i = 0; i < n; ++i) g.pods[role_of[i]].push_back(get(i));
  std::size_t widest = 0;
  for (std::size_t r = 1; r < g.pods.size(); ++r) {
    if (g.pods[r].size() > g.pods[widest].size()) widest = r;
  }
  const std::size_t slack = n - min_members;
  if (slack >= g.pods[widest].size()) {
    throw invalid_argument_error("gang '" + first.gang + "'.gang_min_members",
                                 std::to_string(min_members) + " of " + std::to_string(n) + " pods would leave role '" +
                                     g.pods[widest].front().name + "' (" + std::to_string(g.pods[widest].size()) +
                                     " pods, the only elastic role) without a member");
  }
  for (std::size_t r = 0; r < g.pods.size(); ++r) {
    const auto count = static_cast<std::int32_t>(g.pods[r].size());
    const auto min = r == widest ? count - static_cast<std::int32_t>(slack) : count;
    g.spec.roles.push_back(gang_role{g.pods[r].front().name, g.pods[r].front(), min, count});
  }
  validate(g.spec);
  return g;
}

}  // namespace gang_pods_detail

// A queue unit's pods (popped_unit::pods) as a gang. Throws invalid_argument_error naming the pod
// and field of the first inconsistency; see the rules above.
inline pod_gang gang_from_pods(std::span<const pod* const> pods) {
  return gang_pods_detail::build(pods.size(), [&](std::size_t i) -> const pod& { return *pods[i]; });
}
inline pod_gang gang_from_pods(std::span<const pod> pods) {
  return gang_pods_detail::build(pods.size(), [&](std::size_t i) -> const pod& { return pods[i]; });
}

// A gang_spec's members as pods: member i of role r is role r's pod named "<gang>-<role>-<i>", with
// gang = the gang's name, gang_min_members = its min_members() and priority = the gang's priority
// (so that, once bound, the gang is recognised as one victim of that priority).
inline pod_gang name_members(const gang_spec& g) {
  validate(g);
  pod_gang out;
  out.spec = g;
  out.pods.resize(g.roles.size());
  for (std::size_t r = 0; r < g.roles.size(); ++r) {
    const gang_role& role = g.roles[r];
    out.pods[r].reserve(static_cast<std::size_t>(role.desired_count));
    for (std::int32_t i = 0; i < role.desired_count; ++i) {
      pod p = role.member;
      p.name = g.name + "-" + role.name + "-" + std::to_string(i);
      p.gang = g.name;
      p.gang_min_members = static_cast<std::int32_t>(g.min_members());
      p.priority = g.priority;
      out.pods[r].push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace gpusched
