// plugin_args: a plugin's `args` from a KubeSchedulerConfiguration, read strictly with file:line errors
// (yaml_strict.hpp: unknown keys, quoted numbers and YAML 1.1/1.2-ambiguous forms are refused).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "gpusched/core/error.hpp"
#include "gpusched/profile/yaml_strict.hpp"

namespace gpusched {

// yaml-cpp marks are 0-based; files are read by people, 1-based.
inline std::size_t yaml_line(const YAML::Node& n) {
  if (!n.IsDefined()) return 0;
  const auto m = n.Mark();
  return m.line < 0 ? 0 : static_cast<std::size_t>(m.line) + 1;
}

class plugin_args {
 public:
  // Arguments built in memory (from Python, or by a host): checked as a document of their own;
  // errors name `file` (a field name) and line 0.
  plugin_args(YAML::Node node, std::string file, std::string plugin)
      : own_(std::make_shared<const yaml_strict::document>(yaml_strict::document::from_tree(node, std::move(file)))),
        doc_(own_.get()),
        node_(std::move(node)),
        plugin_(std::move(plugin)) {
    check_mapping();
  }
  // Arguments inside a parsed configuration file (`doc` outlives this object).
  plugin_args(const yaml_strict::document& doc, YAML::Node node, std::string plugin)
      : doc_(&doc), node_(std::move(node)), plugin_(std::move(plugin)) {
    check_mapping();
  }

  [[nodiscard]] const YAML::Node& node() const noexcept { return node_; }
  [[nodiscard]] const std::string& file() const noexcept { return doc_->file(); }
  [[nodiscard]] const yaml_strict::document& document() const noexcept { return *doc_; }
  [[nodiscard]] bool has(std::string_view key) const { return node_ && node_.IsMap() && node_[std::string(key)]; }

  // Unknown keys are errors (Kubernetes decodes scheduler configs strictly); the error lists the known ones.
  void allow_only(std::initializer_list<std::string_view> keys) const {
    if (!node_ || !node_.IsMap()) return;
    for (const auto& kv : node_) {
      const auto& k = kv.first.Scalar();
      bool known = false;
      std::string list;
      for (auto a : keys) {
        known = known || a == k;
        list += (list.empty() ? "" : ", ") + std::string(a);
      }
      if (!known) {
        fail(kv.first, "unknown argument '" + k + "' for plugin " + plugin_ +
                           " (allowed: " + (list.empty() ? "none" : list) + ")");
      }
    }
  }
  // Every key of mapping `n` (at `what` inside the args) is one of `keys`.
  void allow_keys(const YAML::Node& n, std::string_view what, std::initializer_list<std::string_view> keys) const {
    doc_->allow_keys(n, path(what), keys);
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& why) const {
    throw file_error(doc_->file(), doc_->line(at), plugin_ + ": " + why);
  }

  // A finite number within [lo, hi].
  [[nodiscard]] double number(const YAML::Node& n, std::string_view what, double lo, double hi) const {
    return doc_->number(n, path(what), lo, hi);
  }
  [[nodiscard]] std::int64_t integer(const YAML::Node& n, std::string_view what, std::int64_t lo,
                                     std::int64_t hi) const {
    return doc_->integer(n, path(what), lo, hi);
  }
  [[nodiscard]] std::string string(const YAML::Node& n, std::string_view what) const {
    return doc_->string(n, path(what));
  }
  [[nodiscard]] bool boolean(const YAML::Node& n, std::string_view what) const { return doc_->boolean(n, path(what)); }

 private:
  void check_mapping() const {
    if (node_ && !node_.IsNull() && !node_.IsMap()) fail(node_, "args must be a mapping");
  }
  [[nodiscard]] std::string path(std::string_view what) const { return plugin_ + ".args." + std::string(what); }

  std::shared_ptr<const yaml_strict::document> own_;
  const yaml_strict::document* doc_;
  YAML::Node node_;
  std::string plugin_;
};

}  // namespace gpusched
