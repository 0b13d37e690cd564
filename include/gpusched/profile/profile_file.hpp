// A profile file: a KubeSchedulerConfiguration with one profile, built with what the place that
// runs it supplies (plugin_context: the workload's typical pods for FGD / FillAware without
// typicalPods, a seed for Random's devices). data/profiles/ holds one per simulator policy
// (sim/policies.hpp); gpusched-sim --profile-file, Python's Profile.from_file and the batch engine
// take them. Needs yaml-cpp (gpusched::yaml).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "gpusched/core/error.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/plugin_descriptor.hpp"
#include "gpusched/profile/registry.hpp"
#include "gpusched/schedule/tie_break.hpp"

namespace gpusched {

template <Cluster C>
struct file_profile {
  std::string name;  // the profile's schedulerName
  dynamic_profile<C> profile;
  schedule_options options;  // percentageOfNodesToScore; profile.preferred_ties(): the tie-break its plugins ask for
};

// Builds the one profile of a parsed configuration; `source` names it in errors.
template <Cluster C>
file_profile<C> single_profile(scheduler_config<C> cfg, const std::string& source) {
  if (cfg.profiles.size() != 1) {
    throw file_error(source, 0, "a profile file holds exactly one profile, found " + std::to_string(cfg.profiles.size()));
  }
  auto& sp = cfg.profiles.front();
  file_profile<C> out;
  out.name = sp.scheduler_name;
  out.options = sp.options;
  out.profile = std::move(sp.profile);
  return out;
}

template <Cluster C>
file_profile<C> load_profile_file(const std::string& path, plugin_context ctx = {}) {
  return single_profile<C>(load_scheduler_config<C>(path, plugin_registry<C>::builtins(std::move(ctx))), path);
}

template <Cluster C>
file_profile<C> parse_profile_file(const std::string& text, const std::string& source, plugin_context ctx = {}) {
  return single_profile<C>(parse_scheduler_config<C>(text, source, plugin_registry<C>::builtins(std::move(ctx))),
                           source);
}

}  // namespace gpusched
