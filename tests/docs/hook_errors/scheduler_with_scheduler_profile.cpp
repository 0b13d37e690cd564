// Expected compile error: issue 19's getting-started mistake, a scheduler over the whole
// scheduler_profile{name, profile, options} instead of its profile.
// expect: the profile does not model SchedulingProfile
#include <gpusched/gpusched.hpp>

struct not_a_profile { int percentage = 100; };
gpusched::scheduler<gpusched::in_memory_cluster, not_a_profile> s(not_a_profile{});
