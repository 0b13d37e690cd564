// Names of any length (issue 13 item 5): up to 15 bytes inline, longer ones interned once per
// process, so that equality stays a two-word compare and equal strings give the same handle.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpusched/core/pod.hpp"

using namespace gpusched;

TEST_CASE("short_name: names longer than 15 bytes compare by value") {
  const short_name a100("NVIDIA-A100-SXM4-80GB");  // nvidia.com/gpu.product, 21 bytes
  const short_name llama("meta-llama-3-70b-instruct");
  CHECK(a100.interned());
  CHECK_FALSE(short_name("A100-SXM4-80GB").interned());
  CHECK(a100.view() == "NVIDIA-A100-SXM4-80GB");
  CHECK(a100.size() == 21);
  CHECK(a100.str() == "NVIDIA-A100-SXM4-80GB");
  CHECK(llama.view() == "meta-llama-3-70b-instruct");
  CHECK_FALSE(a100.empty());

  // Built from a different buffer: equal by value, so equal handles.
  std::string copy = "NVIDIA-A100-SXM4-";
  copy += "80GB";
  CHECK(short_name(copy) == a100);
  CHECK_FALSE(short_name("NVIDIA-A100-SXM4-40GB") == a100);
  CHECK(short_name("NVIDIA-A100-SXM4-40GB") != a100);
  CHECK_FALSE(a100 == llama);
  // A long name never equals a short one, even one that is its prefix.
  CHECK_FALSE(short_name(a100.view().substr(0, 15)) == a100);
  CHECK_FALSE(short_name("NVIDIA-A100-SXM") == a100);
  CHECK(short_name("NVIDIA-A100-SXM") == short_name("NVIDIA-A100-SXM"));
}

TEST_CASE("short_name: operator< orders by string value, inline and interned alike") {
  // Interned in the reverse of their string order, so pointer order (if used) would likely disagree.
  std::vector<short_name> v{short_name("zz-a-long-name-over-15"), short_name("mm-a-long-name-over-15"),
                            short_name("bert"), short_name("aa-a-long-name-over-15"), short_name("NVIDIA-A100"),
                            short_name("NVIDIA-A100-SXM4-80GB"), short_name()};
  std::sort(v.begin(), v.end());
  std::vector<std::string> got;
  for (const auto& n : v) got.push_back(n.str());
  // std::string ordering: "" < "NVIDIA-A100" < "NVIDIA-A100-SXM4-80GB" (prefix) < "aa..." < "bert" < "mm..." < "zz..."
  const std::vector<std::string> want{"",        "NVIDIA-A100", "NVIDIA-A100-SXM4-80GB", "aa-a-long-name-over-15",
                                      "bert",    "mm-a-long-name-over-15", "zz-a-long-name-over-15"};
  CHECK(got == want);
  CHECK_FALSE(short_name("NVIDIA-A100-SXM4-80GB") < short_name("NVIDIA-A100-SXM4-80GB"));
}

TEST_CASE("short_name: threads interning the same long names get identical handles") {
  constexpr int threads = 4;
  constexpr int names = 200;
  auto name_of = [](int i) { return "concurrently-interned-name-" + std::to_string(i); };
  std::vector<std::vector<short_name>> got(threads);
  {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (int k = 0; k < names; ++k) {
          const int i = (t % 2 == 0) ? k : names - 1 - k;  // half the threads walk backwards
          got[static_cast<std::size_t>(t)].emplace_back(name_of(i));
        }
      });
    }
    for (auto& th : pool) th.join();
  }
  for (int t = 0; t < threads; ++t) {
    for (int k = 0; k < names; ++k) {
      const int i = (t % 2 == 0) ? k : names - 1 - k;
      const short_name& mine = got[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)];
      const short_name& first = got[0][static_cast<std::size_t>(i)];
      CHECK(std::memcmp(&mine, &first, sizeof mine) == 0);  // the very same bytes: one table entry
      CHECK(mine.view() == name_of(i));
    }
  }
}

TEST_CASE("short_name: a pod's allowed models and model type take long names") {
  const pod p = make_pod("p").gpus(1).allow_model("NVIDIA-A100-SXM4-80GB").model("meta-llama-3-70b-instruct");
  CHECK(p.model_allowed(short_name("NVIDIA-A100-SXM4-80GB")));
  CHECK_FALSE(p.model_allowed(short_name("NVIDIA-H100-80GB-HBM3")));
  CHECK(p.model_type.view() == "meta-llama-3-70b-instruct");
}
