// The seed's world (issue 17): the kubelet's restart back-off for a container that keeps exiting
// (CrashLoopBackOff). Sources: docs/experiment-world.md, "Restarts".
#pragma once

#include <algorithm>

#include "gpusched/core/error.hpp"

namespace gpusched::sim::world {

// Kubernetes' constants (pkg/kubelet/kubelet.go): backOffPeriod = 10 s, MaxContainerBackOff = 300 s.
struct crash_loop_params {
  double initial_s = 10.0;
  double max_s = 300.0;

  void validate() const {
    if (!(initial_s > 0.0)) throw invalid_argument_error("initial_s", "must be > 0");
    if (!(max_s >= initial_s)) throw invalid_argument_error("max_s", "must be >= initial_s");
  }
};

// One container's back-off, as the kubelet keeps it (client-go util/flowcontrol/backoff.go, used by
// kuberuntime_manager.go doBackOff with the container's finish time):
//  - when the container exits at t, the restart waits until t + backoff (IsInBackOffSince), then
//    Next(t) doubles backoff up to max (a new or expired entry starts at initial);
//  - an entry expires when the exit comes more than 2 * max = 600 s after the previous one
//    (hasExpired: "consider stable if it's ok for twice the maxDuration"): the loop starts over.
// So the delays after successive quick exits are 0, 10, 20, 40, 80, 160, 300, 300, ... s: the first
// restart is immediate (no entry yet), the 10 s doubling starts with the second.
class crash_loop_backoff {
 public:
  explicit crash_loop_backoff(crash_loop_params p = {}) : p_(p) { p_.validate(); }

  // The container exited at `t_s`; returns the delay before the kubelet starts it again and
  // advances the back-off. Exits must come in time order (t_s >= the previous exit).
  double on_exit(double t_s) {
    if (has_entry_ && t_s < last_exit_s_) throw invalid_argument_error("t_s", "exits must come in time order");
    double delay = 0.0;
    if (!has_entry_ || t_s - last_exit_s_ > 2.0 * p_.max_s) {
      backoff_s_ = p_.initial_s;  // a new entry: restart now, the next exit waits initial_s
      has_entry_ = true;
    } else {
      delay = backoff_s_;
      backoff_s_ = std::min(2.0 * backoff_s_, p_.max_s);
    }
    last_exit_s_ = t_s;
    return delay;
  }

  // The wait the next quick exit would get (0 before the first exit).
  [[nodiscard]] double pending_backoff_s() const noexcept { return has_entry_ ? backoff_s_ : 0.0; }

 private:
  crash_loop_params p_;
  bool has_entry_ = false;
  double backoff_s_ = 0.0;
  double last_exit_s_ = 0.0;
};

}  // namespace gpusched::sim::world
