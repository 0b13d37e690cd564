// plugin_args: a plugin's `args` from a KubeSchedulerConfiguration, read strictly with file:line errors.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "gpusched/core/error.hpp"

namespace gpusched {

// yaml-cpp marks are 0-based; files are read by people, 1-based.
inline std::size_t yaml_line(const YAML::Node& n) noexcept {
  const auto m = n.Mark();
  return m.line < 0 ? 0 : static_cast<std::size_t>(m.line) + 1;
}

class plugin_args {
 public:
  plugin_args(YAML::Node node, std::string file, std::string plugin)
      : node_(std::move(node)), file_(std::move(file)), plugin_(std::move(plugin)) {
    if (node_ && !node_.IsNull() && !node_.IsMap()) fail(node_, "args must be a mapping");
  }

  [[nodiscard]] const YAML::Node& node() const noexcept { return node_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] bool has(std::string_view key) const { return node_ && node_.IsMap() && node_[std::string(key)]; }

  // Unknown keys are errors (Kubernetes decodes scheduler configs strictly).
  void allow_only(std::initializer_list<std::string_view> keys) const {
    if (!node_ || !node_.IsMap()) return;
    for (const auto& kv : node_) {
      const auto k = kv.first.as<std::string>();
      bool known = false;
      for (auto a : keys) known = known || a == k;
      if (!known) fail(kv.first, "unknown argument '" + k + "' for plugin " + plugin_);
    }
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& why) const {
    throw file_error(file_, yaml_line(at), plugin_ + ": " + why);
  }

  // A number within [lo, hi]; `fallback` when absent.
  [[nodiscard]] double number(const YAML::Node& n, std::string_view what, double lo, double hi) const {
    double v = 0;
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      fail(n, std::string(what) + " must be a number");
    }
    if (!std::isfinite(v) || v < lo || v > hi) {
      fail(n, std::string(what) + " must be within " + fmt(lo) + ".." + fmt(hi) + ", got " + n.as<std::string>());
    }
    return v;
  }
  [[nodiscard]] std::int64_t integer(const YAML::Node& n, std::string_view what, std::int64_t lo, std::int64_t hi) const {
    std::int64_t v = 0;
    try {
      v = n.as<std::int64_t>();
    } catch (const YAML::Exception&) {
      fail(n, std::string(what) + " must be an integer");
    }
    if (v < lo || v > hi) {
      fail(n, std::string(what) + " must be within " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
                  std::to_string(v));
    }
    return v;
  }
  [[nodiscard]] std::string string(const YAML::Node& n, std::string_view what) const {
    if (!n.IsScalar()) fail(n, std::string(what) + " must be a string");
    return n.as<std::string>();
  }

 private:
  static std::string fmt(double d) {
    std::string s = std::to_string(d);
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  YAML::Node node_;
  std::string file_;
  std::string plugin_;
};

}  // namespace gpusched
