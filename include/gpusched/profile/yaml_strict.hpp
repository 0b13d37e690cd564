// Strict YAML decoding for gpusched's files (the scheduler configuration and the serving scenario),
// as Kubernetes decodes its configuration: unknown and duplicate keys are errors, one document per
// file, and every error names file:line and the field. Needs yaml-cpp (link gpusched::yaml).
//
// Scalars (docs/adr/0006-strict-yaml.md):
// - A quoted scalar (or one tagged !!str, or a block scalar) is a string, never a number or a bool.
// - Plain numbers follow YAML 1.2's core schema: decimal integers, 0x hexadecimal, decimal floats
//   (with or without a dot or exponent).
// - A plain form that YAML 1.1 (Kubernetes' go-yaml) and YAML 1.2 read differently is refused with
//   the reason, in number, bool and string fields alike: leading-zero integers (010: 8 or 10), 0o and
//   0b forms, underscores (1_000), sexagesimal (1:30), signed hexadecimal, and yes/no/on/off/y/n.
// - Booleans are true/false (also True, TRUE, False, FALSE); ~, null and an empty value are null.
// Limits: a document holds at most max_nodes nodes, aliases counted at each use (an alias bomb is
// refused, as Kubernetes' YAML reader refuses excessive aliasing), nested at most max_depth deep.
#pragma once

#include <yaml-cpp/eventhandler.h>  // yaml.h does not include it (0.7)
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"

namespace gpusched::yaml_strict {

// The most nodes one document may hold (aliases counted at every use), and its deepest nesting (an
// alias inside its own anchor's node makes a cycle: refused by the depth bound).
inline constexpr std::size_t max_nodes = 1'000'000;
inline constexpr std::size_t max_depth = 128;

// What a plain (unquoted, untagged) scalar is under YAML 1.2's core schema, or why it is refused.
enum class plain_kind { null, boolean, integer, floating, nonfinite, string, ambiguous };

struct plain_scalar {
  plain_kind kind = plain_kind::string;
  std::string why;  // for ambiguous: how YAML 1.1 and 1.2 read it
};

namespace detail {

inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
inline bool is_hex(char c) noexcept { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
inline bool all_of(std::string_view s, bool (*f)(char) noexcept) noexcept {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!f(c)) return false;
  }
  return true;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? without the sign (YAML 1.2 core float).
inline bool is_core_float(std::string_view s) noexcept {
  std::size_t i = 0;
  const std::size_t n = s.size();
  std::size_t int_digits = 0;
  while (i < n && is_digit(s[i])) ++i, ++int_digits;
  std::size_t frac_digits = 0;
  if (i < n && s[i] == '.') {
    ++i;
    while (i < n && is_digit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t exp_digits = 0;
    while (i < n && is_digit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == n;
}

// Walks a stream's documents for the one-document rule without building them. yaml-cpp 0.7's LoadAll
// loops for ever on a stray ',' (jbeder/yaml-cpp#1040, fixed upstream by #1319: its parser returns
// the same empty document again and again), so a document that starts where the previous one did is
// an error here.
class document_probe final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& m) override {
    first = m;  // until its first node
    started = false;
    empty = true;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { note(m, true); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { note(m, false); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override {
    note(m, false);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    note(m, false);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    note(m, false);
  }
  void OnMapEnd() override {}

  YAML::Mark first;  // the document's first node
  bool started = false;
  bool empty = true;  // the document is one null node (an empty document)

 private:
  void note(const YAML::Mark& m, bool null) {
    if (!started) {
      first = m;
      started = true;
      empty = null;
    } else {
      empty = false;
    }
  }
};

}  // namespace detail

// Classifies a plain scalar's text (YAML 1.2 core schema, refusing forms YAML 1.1 reads otherwise).
inline plain_scalar classify_plain(std::string_view s) {
  using detail::is_digit;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return {plain_kind::null, {}};
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
    return {plain_kind::boolean, {}};
  }
  for (const std::string_view b :
       {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"}) {
    if (s == b) return {plain_kind::ambiguous, "YAML 1.1 reads it as a boolean, YAML 1.2 as a string"};
  }
  const bool sign = s[0] == '+' || s[0] == '-';
  const std::string_view u = sign ? s.substr(1) : s;
  if (u == ".inf" || u == ".Inf" || u == ".INF" || (!sign && (s == ".nan" || s == ".NaN" || s == ".NAN"))) {
    return {plain_kind::nonfinite, {}};
  }
  if (u.size() > 2 && u[0] == '0' && (u[1] == 'x' || u[1] == 'X') && detail::all_of(u.substr(2), detail::is_hex)) {
    if (sign || u[1] == 'X')
      return {plain_kind::ambiguous, "YAML 1.1 reads it as a hexadecimal integer, YAML 1.2 as a string"};
    return {plain_kind::integer, {}};
  }
  if (u.size() > 2 && u[0] == '0' && (u[1] == 'o' || u[1] == 'b')) {
    return {plain_kind::ambiguous, u[1] == 'o' ? "YAML 1.2 reads it as an octal integer, YAML 1.1 as a string"
                                               : "YAML 1.1 reads it as a binary integer, YAML 1.2 as a string"};
  }
  if (detail::all_of(u, is_digit)) {
    if (u.size() > 1 && u[0] == '0') {
      return {plain_kind::ambiguous, "a leading zero: YAML 1.1 reads it as octal, YAML 1.2 as decimal"};
    }
    return {plain_kind::integer, {}};
  }
  if (detail::is_core_float(u)) return {plain_kind::floating, {}};
  // YAML 1.1 numbers that YAML 1.2 reads as strings: digits with underscores, sexagesimal (1:30).
  bool numeric = !u.empty() && (is_digit(u[0]) || u[0] == '.');
  bool has_sep = false;
  for (const char c : u) {
    if (c == '_' || c == ':') has_sep = true;
    numeric =
        numeric && (is_digit(c) || c == '_' || c == ':' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-');
  }
  if (numeric && has_sep) return {plain_kind::ambiguous, "YAML 1.1 reads it as a number, YAML 1.2 as a string"};
  return {plain_kind::string, {}};
}

// One parsed document and the decoders its readers use. Errors: file_error "file:line: path: why".
class document {
 public:
  // Parses `text`, named `file` in errors: exactly one document (trailing empty ones are allowed),
  // mapping keys scalar and unique, at most max_nodes nodes.
  document(const std::string& text, std::string file) : file_(std::move(file)), from_text_(true) {
    auto line_at = [](const YAML::Mark& m) { return m.line >= 0 ? static_cast<std::size_t>(m.line) + 1 : 1; };
    try {
      std::istringstream in(text);
      YAML::Parser parser(in);
      detail::document_probe probe;
      int last_pos = -1;
      for (std::size_t docs = 0; parser.HandleNextDocument(probe); ++docs) {
        if (docs > 0 && probe.first.pos == last_pos) {
          const auto at = static_cast<std::size_t>(probe.first.pos);
          throw file_error(file_, line_at(probe.first),
                           "YAML: unexpected '" + (at < text.size() ? std::string(1, text[at]) : std::string()) + "'");
        }
        if (docs > 0 && !probe.empty) {
          throw file_error(file_, line_at(probe.first),
                           "a second YAML document; the file must hold exactly one (delete it or the '---' before it)");
        }
        last_pos = probe.first.pos;
      }
      root_ = YAML::Load(text);  // the first document
    } catch (const YAML::Exception& e) {
      throw file_error(file_, line_at(e.mark), "YAML: " + e.msg);
    }
    std::size_t budget = max_nodes;
    walk(root_, "", budget, 0);
  }

  // A tree built in memory (Python arguments): the same checks; lines are 0.
  [[nodiscard]] static document from_tree(YAML::Node root, std::string file) {
    document d;
    d.root_ = std::move(root);
    d.file_ = std::move(file);
    std::size_t budget = max_nodes;
    d.walk(d.root_, "", budget, 0);
    return d;
  }

  [[nodiscard]] const YAML::Node& root() const noexcept { return root_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

  // The 1-based line of a node (0 when unknown); an empty value's line is its key's.
  [[nodiscard]] std::size_t line(const YAML::Node& n) const {
    if (!n.IsDefined()) return 0;
    if (n.IsNull()) {
      for (const auto& [value, key_line] : empty_values_) {
        if (value.is(n)) return key_line;
      }
    }
    const std::size_t l = line_of_mark(n);
    return l == 0 && from_text_ && n.is(root_) ? 1 : l;  // an empty file's root: line 1
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& why) const { throw file_error(file_, line(at), why); }
  [[noreturn]] void fail(const YAML::Node& at, std::string_view path, const std::string& why) const {
    throw file_error(file_, line(at), std::string(path) + ": " + why);
  }

  void expect_map(const YAML::Node& n, std::string_view path) const {
    if (!n.IsMap()) fail(n, path, "expected a mapping");
  }

  // Every key of mapping `n` is one of `allowed`; the error lists them.
  void allow_keys(const YAML::Node& n, std::string_view path, std::initializer_list<std::string_view> allowed) const {
    expect_map(n, path);
    for (const auto& kv : n) {
      const std::string& key = kv.first.Scalar();
      bool ok = false;
      for (const auto a : allowed) ok = ok || key == a;
      if (!ok) {
        std::string list;
        for (const auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(kv.first, join(path, key), "unknown key (allowed: " + (list.empty() ? "none" : list) + ")");
      }
    }
  }

  // An integer within [lo, hi].
  [[nodiscard]] std::int64_t integer(const YAML::Node& v, std::string_view path, std::int64_t lo,
                                     std::int64_t hi) const {
    const std::string& s = scalar_for_number(v, path, "an integer");
    const plain_scalar k = classify_plain(s);
    if (k.kind != plain_kind::integer) {
      fail(v, path,
           "expected an integer, got '" + s + "'" + (k.kind == plain_kind::ambiguous ? " (" + k.why + ")" : ""));
    }
    std::int64_t x = 0;
    const bool hex = s.size() > 2 && s[1] == 'x';
    const char* first = s.data() + (hex ? 2 : (s[0] == '+' ? 1 : 0));
    const auto [end, ec] = std::from_chars(first, s.data() + s.size(), x, hex ? 16 : 10);
    if (ec != std::errc() || end != s.data() + s.size() || x < lo || x > hi) {
      fail(v, path, "must be within " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + s);
    }
    return x;
  }

  // A finite number within [lo, hi]; `range` describes the range in the error (default "within lo..hi").
  [[nodiscard]] double number(const YAML::Node& v, std::string_view path, double lo, double hi,
                              const std::string& range = {}) const {
    const std::string& s = scalar_for_number(v, path, "a number");
    const plain_scalar k = classify_plain(s);
    if (k.kind == plain_kind::nonfinite) fail(v, path, "must be finite, got " + s);
    if (k.kind != plain_kind::integer && k.kind != plain_kind::floating) {
      fail(v, path, "expected a number, got '" + s + "'" + (k.kind == plain_kind::ambiguous ? " (" + k.why + ")" : ""));
    }
    double x = 0.0;
    if (k.kind == plain_kind::integer && s.size() > 2 && s[1] == 'x') {
      std::uint64_t h = 0;
      const auto [end, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), h, 16);
      if (ec != std::errc() || end != s.data() + s.size()) fail(v, path, "out of range: " + s);
      x = static_cast<double>(h);
    } else {
      const char* first = s.data() + (s[0] == '+' ? 1 : 0);
      const auto [end, ec] = std::from_chars(first, s.data() + s.size(), x);
      if (ec == std::errc::result_out_of_range) fail(v, path, "out of a double's range: " + s);
      if (ec != std::errc() || end != s.data() + s.size()) fail(v, path, "expected a number, got '" + s + "'");
    }
    if (!std::isfinite(x)) fail(v, path, "must be finite, got " + s);
    if (x < lo || x > hi)
      fail(v, path, "must be " + (range.empty() ? "within " + show(lo) + ".." + show(hi) : range) + ", got " + s);
    return x;
  }

  // true or false.
  [[nodiscard]] bool boolean(const YAML::Node& v, std::string_view path) const {
    const std::string& s = scalar_for_number(v, path, "true or false");
    const plain_scalar k = classify_plain(s);
    if (k.kind != plain_kind::boolean) {
      fail(v, path,
           "expected true or false, got '" + s + "'" + (k.kind == plain_kind::ambiguous ? " (" + k.why + ")" : ""));
    }
    return s[0] == 't' || s[0] == 'T';
  }

  // A string: a quoted scalar as written, or a plain one that is not null and not ambiguous.
  [[nodiscard]] std::string string(const YAML::Node& v, std::string_view path, bool allow_empty = false) const {
    if (!v.IsDefined() || v.IsNull()) fail(v, path, "expected a string, got an empty value");
    if (!v.IsScalar()) fail(v, path, "expected a string, got a " + std::string(v.IsMap() ? "mapping" : "list"));
    const std::string& s = v.Scalar();
    if (is_plain(v)) {
      const plain_scalar k = classify_plain(s);
      if (k.kind == plain_kind::ambiguous) fail(v, path, "'" + s + "' is ambiguous (" + k.why + "): quote it");
    }
    if (!allow_empty && s.empty()) fail(v, path, "must not be empty");
    return s;
  }

  // The value at `key` of mapping `n` (undefined when absent).
  [[nodiscard]] static YAML::Node get(const YAML::Node& n, std::string_view key) { return n[std::string(key)]; }
  // Present and not null.
  [[nodiscard]] static bool has(const YAML::Node& n, std::string_view key) {
    const YAML::Node v = n[std::string(key)];
    return v.IsDefined() && !v.IsNull();
  }

  [[nodiscard]] static std::string join(std::string_view path, std::string_view key) {
    return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
  }

 private:
  document() = default;

  static std::size_t line_of_mark(const YAML::Node& n) {
    const YAML::Mark m = n.Mark();
    return m.line >= 0 ? static_cast<std::size_t>(m.line) + 1 : 0;
  }

  // A plain scalar: yaml-cpp tags plain scalars "?", quoted and block ones "!"; in-memory nodes have
  // no tag. The core schema's own tags resolve as plain; !!str is a string; other tags are refused.
  static bool is_plain(const YAML::Node& v) {
    const std::string& t = v.Tag();
    return t.empty() || t == "?" || t == "tag:yaml.org,2002:int" || t == "tag:yaml.org,2002:float" ||
           t == "tag:yaml.org,2002:bool" || t == "tag:yaml.org,2002:null";
  }

  const std::string& scalar_for_number(const YAML::Node& v, std::string_view path, const char* what) const {
    if (!v.IsDefined() || v.IsNull()) fail(v, path, std::string("expected ") + what + ", got an empty value");
    if (!v.IsScalar()) fail(v, path, std::string("expected ") + what + ", got a " + (v.IsMap() ? "mapping" : "list"));
    if (!is_plain(v)) {
      fail(v, path,
           std::string("expected ") + what + ", got the string '" + v.Scalar() +
               "' (a quoted or tagged scalar is a string; write it unquoted)");
    }
    return v.Scalar();
  }

  static std::string show(double x) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
    return ec == std::errc() ? std::string(buf, end) : std::string("?");
  }

  // Checks keys (scalar, unique), tags, and the node budget; records empty values' key lines.
  void walk(const YAML::Node& n, const std::string& path, std::size_t& budget, std::size_t depth) {
    if (depth > max_depth) {
      throw file_error(file_, line_of_mark(n),
                       (path.empty()        ? "document"
                        : path.size() > 200 ? path.substr(0, 200) + "..."
                                            : path) +
                           ": nested deeper than " + std::to_string(max_depth) +
                           " levels (or an alias inside its own anchor)");
    }
    if (budget == 0) {
      throw file_error(file_, line_of_mark(n),
                       "more than " + std::to_string(max_nodes) + " YAML nodes (aliases counted at each use)");
    }
    --budget;
    const std::string& t = n.Tag();
    if (!t.empty() && t != "?" && t != "!" && t.rfind("tag:yaml.org,2002:", 0) != 0) {
      throw file_error(file_, line_of_mark(n), (path.empty() ? "document" : path) + ": unsupported tag '" + t + "'");
    }
    if (n.IsSequence()) {
      std::size_t i = 0;
      for (const auto& item : n) walk(item, path + "[" + std::to_string(i++) + "]", budget, depth + 1);
    } else if (n.IsMap()) {
      std::set<std::string, std::less<>> seen;
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) {
          throw file_error(file_, line_of_mark(kv.first),
                           (path.empty() ? "document" : path) + ": a mapping key must be a plain string");
        }
        const std::string& k = kv.first.Scalar();
        const std::string p = join(path, k);
        if (!seen.insert(k).second) {
          std::size_t first = 0;
          for (const auto& other : n) {
            if (other.first.IsScalar() && other.first.Scalar() == k) {
              first = line_of_mark(other.first);
              break;
            }
          }
          throw file_error(file_, line_of_mark(kv.first),
                           p + ": duplicate key (first at line " + std::to_string(first) + ")");
        }
        if (kv.second.IsNull()) empty_values_.emplace_back(kv.second, line_of_mark(kv.first));
        walk(kv.second, p, budget, depth + 1);
      }
    }
  }

  YAML::Node root_;
  std::string file_;
  bool from_text_ = false;
  std::vector<std::pair<YAML::Node, std::size_t>> empty_values_;  // null value, its key's line
};

}  // namespace gpusched::yaml_strict
