// The outcome of placing a gang: every member's binding, or which member could not be placed and why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/gang/gang.hpp"

namespace gpusched {

struct member_binding {
  std::uint32_t role = 0;     // index into gang_spec::roles
  std::uint32_t ordinal = 0;  // the member's number within its role, from 0
  binding where{};
  friend bool operator==(const member_binding&, const member_binding&) = default;
};

// Why a gang was not placed: the role that came up short, how far it got, and why the nodes
// rejected its next member on the state where it stopped (counts as schedule_one reports them).
struct gang_failure {
  std::uint32_t role = 0;
  std::int64_t placed = 0;  // members of that role placed before it stopped (all were rolled back)
  std::int64_t needed = 0;  // members of that role the attempt required
  rejection_counts rejections;
};

struct gang_result {
  bool placed = false;
  std::vector<member_binding> members;  // in placement order; empty when not placed
  std::vector<std::int32_t> per_role;   // members placed per role
  std::uint32_t nodes_used = 0;
  std::uint32_t racks_used = 0;
  gang_failure failure;  // meaningful when !placed

  explicit operator bool() const noexcept { return placed; }

  // "gang 'train' placed 33 members on 16 nodes in 1 rack (launcher 1, worker 32)" or
  // "gang 'train' not placed: role 'worker' got 30 of the 32 members it needs; for the next one
  //  0/40 nodes fit: 24 insufficient GPU share, 16 insufficient CPU".
  [[nodiscard]] std::string explain(const gang_spec& g) const {
    std::string s = "gang '" + g.name + "' ";
    if (placed) {
      s += "placed " + std::to_string(members.size()) + " members on " + std::to_string(nodes_used) +
           (nodes_used == 1 ? " node" : " nodes") + " in " + std::to_string(racks_used) + (racks_used == 1 ? " rack" : " racks");
      s += " (";
      for (std::size_t r = 0; r < g.roles.size() && r < per_role.size(); ++r) {
        s += (r ? ", " : "") + g.roles[r].name + " " + std::to_string(per_role[r]);
      }
      return s + ")";
    }
    const std::string role = failure.role < g.roles.size() ? g.roles[failure.role].name : "?";
    return s + "not placed: role '" + role + "' got " + std::to_string(failure.placed) + " of the " +
           std::to_string(failure.needed) + " members it needs; for the next one " + failure.rejections.to_string();
  }
};

// Gives back every member's resources (a gang finishing, or evicted whole), newest first.
template <MutableCluster C>
void release_gang(C& c, const gang_spec& g, const gang_result& r) {
  for (auto it = r.members.rbegin(); it != r.members.rend(); ++it) {
    traits_of<C>::release(c, g.roles[it->role].member, it->where);
  }
}

}  // namespace gpusched
