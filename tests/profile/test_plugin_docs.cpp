// docs/plugins.md's table of built-in plugins is the list builtin_plugins (profile/builtin_plugins.hpp):
// the table generated from the descriptors must equal the one between the markers in the page.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "gpusched/batch/configured.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/builtin_plugins.hpp"
#include "gpusched/profile/registry.hpp"

using namespace gpusched;

namespace {

template <class... T>
int batch_forms(plugin_types<T...>, bool checks) {
  return ((checks ? batch::BatchCheck<T> : batch::BatchScorer<T>) + ... + 0);
}
template <class... T>
constexpr int count(plugin_types<T...>) {
  return sizeof...(T);
}

std::string generated_table() {
  std::string out =
      "| config name | alias | extension points | batch | what it does |\n|---|---|---|---|---|\n";
  for_each_plugin(builtin_plugins{}, [&]<class D>() {
    const int k = count(typename D::check_types{}), s = count(typename D::score_types{});
    const int batchable = batch_forms(typename D::check_types{}, true) + batch_forms(typename D::score_types{}, false);
    const std::string alias = plugin_alias<D>().empty() ? "" : " `" + std::string(plugin_alias<D>()) + "`";
    out += "| `" + std::string(D::name) + "` |" + alias + " | " +
           std::string(k > 0 && s > 0 ? "filter, score" : k > 0 ? "filter" : "score") + " | " +
           (batchable == k + s ? "yes" : batchable == 0 ? "no" : "partly") + " | " + std::string(D::summary) + " |\n";
  });
  return out;
}

std::string documented_table() {
  std::ifstream in(std::string(GPUSCHED_SOURCE_DIR) + "/docs/plugins.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string page = ss.str();
  const std::string begin = "<!-- builtin-plugins:begin -->\n", end = "<!-- builtin-plugins:end -->";
  const auto a = page.find(begin), b = page.find(end);
  if (a == std::string::npos || b == std::string::npos || b < a) return "(markers not found)";
  return page.substr(a + begin.size(), b - a - begin.size());
}

}  // namespace

TEST_CASE("docs/plugins.md lists exactly the built-in plugins") {
  const std::string want = generated_table();
  INFO("docs/plugins.md's table should read:\n" << want);
  CHECK(documented_table() == want);
}

TEST_CASE("the registry holds every descriptor under its name and alias, and nothing else") {
  const auto reg = plugin_registry<in_memory_cluster>::builtins();
  std::size_t names = 0;
  for_each_plugin(builtin_plugins{}, [&]<class D>() {
    for (std::string_view n : {D::name, plugin_alias<D>()}) {
      if (n.empty()) continue;
      ++names;
      CAPTURE(n);
      CHECK((reg.find_check(std::string(n)) != nullptr) == (count(typename D::check_types{}) > 0));
      CHECK((reg.find_score(std::string(n)) != nullptr) == (count(typename D::score_types{}) > 0));
    }
  });
  // 18 plugins, two with aliases (LoadAwareScheduling, FGD).
  CHECK(names == 20);
  std::vector<std::string> all = reg.check_names();
  for (auto& n : reg.score_names()) {
    if (!reg.find_check(n)) all.push_back(n);
  }
  CHECK(all.size() == names);
}
