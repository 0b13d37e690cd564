// libFuzzer harness: Kubernetes JSON through gpusched-extender's translation (kube/translate.hpp) and
// its verbs in-process (tools/extender/extender.hpp). The first byte picks the target, the rest is
// the JSON: 0 a Pod, 1 a Node, 2 a ModelJob, 3 /filter, 4 /prioritize, 5 /preempt, 6 /bind (the
// ExtenderArgs, ExtenderPreemptionArgs and ExtenderBindingArgs bodies).
//
// /filter and /prioritize bodies also go to a second extender that reads them with nlohmann's reader
// only: the answers must be the same (when the harness is built with simdjson, GPUSCHED_EXTENDER_SIMDJSON).
//
// Contract: a translation returns, or throws invalid_argument_error whose field() is the JSON path
// (text that is not JSON at all throws a json::exception before translation starts); a verb answers
// 200, or 400 with an Error text; a 400 or a refused bind (Error set) leaves the extender's state as it
// was. Anything else escaping, or a sanitizer finding, is a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "../../tools/extender/extender.hpp"
#include "../extender/seed_state.hpp"
#include "fuzz_support.hpp"

namespace {

using gpusched::extender::answer;
using gpusched::extender::extender;

const char* const config = gpusched::extender::testing::seed_config;

// Two nodes ("a": 2 x V100, "b": 1 x T4) and one running pod on "a"; binds to "b" are refused by the
// stand-in API server, binds elsewhere accepted; a bind of an unseen pod fetches "default/p".
void seed(extender& ext) {
  using namespace gpusched;
  gpusched::extender::testing::seed_two_nodes(ext);
  ext.set_binder([](const kube::kube_pod&, const std::string& node, const std::map<std::string, std::string>&) {
    return node == "b" ? std::string("the API server refused the binding") : std::string();
  });
  ext.set_pod_fetcher([](const std::string& ns, const std::string& name) -> std::optional<kube::kube_pod> {
    if (ns != "default" || name != "p") return std::nullopt;
    kube::kube_pod p;
    p.uid = "p";
    p.name = "p";
    p.namespace_ = "default";
    p.spec = make_pod("default/p").cpu(500).memory(512).gpu_share(1000);
    return p;
  });
}

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "contract broken: %s\n", what);
  std::abort();
}

void translation(int target, const std::string& text) {
  using namespace gpusched;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // not JSON: parse_error, or out_of_range for a number overflow
    fuzz::refused(e);
    return;
  }
  try {
    if (target == 0) (void)kube::translate_pod(j, nullptr, "Pod");
    if (target == 1) (void)kube::translate_node(j, "Node");
    if (target == 2) (void)kube::parse_modeljob(j);
  } catch (const invalid_argument_error& e) {
    if (e.field().empty()) broken("an invalid_argument_error without a field");
    fuzz::refused(e);
  }
}

void verb(int target, const std::string& body) {
  static std::unique_ptr<extender> fresh;
  static std::unique_ptr<extender> nlohmann_only;  // /filter and /prioritize without simdjson's reader
  if (!fresh) {
    fresh = std::make_unique<extender>(config, "fuzz.yaml");
    seed(*fresh);
    gpusched::extender::options o;
    o.simdjson = false;
    nlohmann_only = std::make_unique<extender>(config, "fuzz.yaml", o);
    seed(*nlohmann_only);
  }
  extender& ext = *fresh;
  const auto before = ext.cluster_copy();
  const auto pods_before = ext.bound_pods();
  answer a;
  if (target == 3) a = ext.filter(body);
  if (target == 4) a = ext.prioritize(body);
  if (target == 3 || target == 4) {  // both readers give the same answer (same only if built with simdjson)
    const answer b = target == 3 ? nlohmann_only->filter(body) : nlohmann_only->prioritize(body);
    if (a.status != b.status || a.body != b.body || a.refused != b.refused) broken("the two request readers answered differently");
    if (!(nlohmann_only->cluster_copy() == ext.cluster_copy())) broken("the two request readers left different states");
  }
  if (target == 5) a = ext.preempt(body);
  if (target == 6) a = ext.bind(body);
  if (a.status != 200 && a.status != 400) broken("a status other than 200 or 400");
  if (a.status == 400 || a.refused) {
    const auto j = nlohmann::json::parse(a.body);  // the answer itself is always JSON
    if (!j.contains("Error") || !j["Error"].is_string() || j["Error"].get<std::string>().empty())
      broken("an error answer without its Error text");
    if (!(ext.cluster_copy() == before) || ext.bound_pods() != pods_before) broken("an error answer changed the state");
  }
  // Successful binds and full-Node filters change the state; the next input starts from the seed.
  if (ext.bound_pods() != pods_before || !(ext.cluster_copy() == before)) fresh.reset();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int target = data[0] % 7;
  const std::string text = gpusched::fuzz::text_of(data + 1, size - 1);
  if (target <= 2) {
    translation(target, text);
  } else {
    verb(target, text);
  }
  return 0;
}
