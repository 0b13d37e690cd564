// gpusched-extender's two request readers for /filter and /prioritize (tools/extender/extender.hpp):
// simdjson's DOM parser, used first when the build has it, and nlohmann's SAX reader, used alone
// without it and for every document simdjson refuses. The answers must be the same byte for byte,
// so the decisions and the error texts do not depend on which reader ran: checked on hand-picked
// edge cases and on every input of the extender's fuzz corpus (tests/fuzz/corpus/extender/).
#include <doctest/doctest.h>

#if __has_include(<yaml-cpp/yaml.h>)
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../../tools/extender/extender.hpp"
#include "seed_state.hpp"

using gpusched::extender::extender;
using gpusched::extender::options;
using namespace gpusched::kube;

namespace {

using gpusched::extender::testing::seed_config;

// The fuzz harness's seed state.
using gpusched::extender::testing::seed_two_nodes;
void seed(extender& ext) { seed_two_nodes(ext); }

struct simdjson_pair {
  extender fast{seed_config, "test.yaml"};
  extender slow{seed_config, "test.yaml", [] {
                  options o;
                  o.simdjson = false;
                  return o;
                }()};
  simdjson_pair() {
    seed(fast);
    seed(slow);
  }
  // Both verbs on both extenders (in the same order, so that full-Node requests change both states
  // alike); the answers must agree.
  void same(const std::string& body) {
    for (const bool scores : {false, true}) {
      const auto f = scores ? fast.prioritize(body) : fast.filter(body);
      const auto s = scores ? slow.prioritize(body) : slow.filter(body);
      INFO("body: " << body.substr(0, 300) << (scores ? " (prioritize)" : " (filter)"));
      CHECK(f.status == s.status);
      CHECK(f.refused == s.refused);
      CHECK(f.body == s.body);
    }
    CHECK(fast.cluster_copy() == slow.cluster_copy());
  }
};

const std::string one_gpu_pod = R"({"metadata":{"name":"p","namespace":"default","uid":"u-p"},)"
                                R"("spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1","memory":"1Gi","nvidia.com/gpu":"1"}}}]}})";

}  // namespace

TEST_CASE("extender/readers: a plain request is read by simdjson when built with it, with the hand-worked answer") {
  simdjson_pair x;
  const std::string body = R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["a","b","ghost"],"Nodes":null})";
  const auto f = x.fast.filter(body);
  // One whole GPU: "a" has one free V100, "b" its T4; "ghost" is not known.
  CHECK(f.body == R"({"Error":"","FailedNodes":{},"FailedAndUnresolvableNodes":{"ghost":"node 'ghost' is not in )"
                  R"(gpusched-extender's cache"},"Nodes":null,"NodeNames":["a","b"]})");
#ifdef GPUSCHED_EXTENDER_SIMDJSON
  CHECK(x.fast.simdjson_reads() == 1);
#else
  CHECK(x.fast.simdjson_reads() == 0);
#endif
  CHECK(x.slow.simdjson_reads() == 0);
  x.same(body);
}

TEST_CASE("extender/readers: edge cases answer the same through either reader") {
  simdjson_pair x;
  const std::vector<std::string> bodies = {
      // NodeNames forms: escapes, a repeated key (the last wins), a later non-array value, wrong elements.
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["x"],"NodeNames":["\u0061","b"]})",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["a"],"NodeNames":null})",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["a",1,"b"]})",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["a",[],"b"]})",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":[true]})",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":[null,{}]})",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":[1],"NodeNames":["a"]})",  // the first wrong element is reported
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":[],"Nodes":null})",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":"a"})",
      R"({"NodeNames":["a"],"Pod":)" + one_gpu_pod + "}",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["a"],"Extra":{"NodeNames":[1,2]}})",
      // Numbers: -0, the largest unsigned, beyond 64 bits (simdjson refuses; nlohmann reads a double).
      R"({"Pod":{"metadata":{"name":"p","namespace":"default","uid":"u"},"spec":{"priority":-0,"containers":[]}},"NodeNames":["a"]})",
      R"({"Pod":{"metadata":{"name":"p","namespace":"default","uid":"u"},"spec":{"priority":18446744073709551615,"containers":[]}},"NodeNames":["a"]})",
      R"({"Pod":{"metadata":{"name":"p","namespace":"default","uid":"u"},"spec":{"priority":123456789012345678901,"containers":[]}},"NodeNames":["a"]})",
      R"({"Pod":{"metadata":{"name":"p","namespace":"default","uid":"u"},"spec":{"priority":-9223372036854775809,"containers":[]}},"NodeNames":["a"]})",
      R"({"Pod":{"metadata":{"name":"p","namespace":"default","uid":"u"},"spec":{"priority":1.5e-400,"containers":[]}},"NodeNames":["a"]})",
      R"({"Pod":{"metadata":{"name":"p","namespace":"default","uid":"u"},"spec":{"priority":1e400,"containers":[]}},"NodeNames":["a"]})",
      // A repeated key inside the pod: the last wins in both.
      R"({"Pod":{"metadata":{"name":"x","name":"p","namespace":"default","uid":"u"},"spec":{"containers":[]}},"NodeNames":["a"]})",
      // Not JSON, or not an object: nlohmann's error with its position, whichever reader tried first.
      "\xEF\xBB\xBF" R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["a"]})",  // a byte order mark: nlohmann skips it
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["a"],})",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["\udc00"]})",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["\ud800"]})",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["a)" "\xC3\x28" R"("]})",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["a)" "\x01" R"("]})",
      R"(["Pod"])",
      R"("text")",
      "",
      "   ",
      R"({"Pod":)" + one_gpu_pod + R"(,"NodeNames":["a"]} {})",
      std::string(1100, '[') + std::string(1100, ']'),
      // Full-Node mode: nodes translated (one with a bad label) and upserted into both states.
      R"({"Pod":)" + one_gpu_pod + R"(,"Nodes":{"items":[{"metadata":{"name":"c","labels":{"nvidia.com/gpu.product":"Tesla-T4","nvidia.com/gpu.memory":"16384"}},)"
      R"("status":{"allocatable":{"cpu":"4","memory":"8Gi","nvidia.com/gpu":"2"}}},{"metadata":{"name":"d","labels":{"nvidia.com/gpu.memory":"lots"}},)"
      R"("status":{"allocatable":{"cpu":"4","memory":"8Gi","nvidia.com/gpu":"1"}}}]}})",
  };
  for (const auto& b : bodies) x.same(b);
  // Which of them simdjson read, twice each (filter, prioritize): the 16 well-formed objects less the
  // 5 with a wrong NodeNames element (refused while reading) = 11. It refused the byte order mark,
  // the integers beyond 64 bits, 1e400, the broken documents and the nesting over its 1,024 levels,
  // and left the two non-objects to nlohmann's path.
#ifdef GPUSCHED_EXTENDER_SIMDJSON
  CHECK(x.fast.simdjson_reads() == 2 * 11);
#endif
  CHECK(x.slow.simdjson_reads() == 0);
}

TEST_CASE("extender/readers: every input of the fuzz corpus answers the same through either reader") {
  simdjson_pair x;
  const std::filesystem::path dir = std::filesystem::path(GPUSCHED_SOURCE_DIR) / "tests/fuzz/corpus/extender";
  int inputs = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string data = ss.str();
    if (data.empty()) continue;
    x.same(data.substr(1));  // the harness's first byte picks the target; the rest is the body
    ++inputs;
  }
  CHECK(inputs >= 10);
}
#endif
