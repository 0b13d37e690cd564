// Reader for the Alibaba GPU cluster trace v2023 ("openb", alibaba/clusterdata
// cluster-trace-gpu-v2023/csv), released with Weng et al., USENIX ATC'23.
//
// Node files: sn,cpu_milli,memory_mib,gpu,model
// Pod files:
// name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
//             (the multigpu* files carry only the first five columns: no times)
// Every column is read and checked; a malformed row throws gpusched::file_error with file:line and
// the column, and nothing is returned. Rows are never skipped.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/node.hpp"
#include "gpusched/core/pod.hpp"

namespace gpusched::sim {

enum class pod_phase : std::uint8_t { running, succeeded, failed, pending };

// A trace pod: the request (as a gpusched::pod) plus the trace's own columns.
struct openb_pod {
  pod spec;         // name, cpu, memory, num_gpu, gpu_milli, allowed models, qos, submit_time
  std::string qos;  // as written: LS, BE, Burstable, Guaranteed (empty in 5-column files)
  pod_phase phase = pod_phase::running;
  bool has_times = false;                      // false for the 5-column files
  std::int64_t creation_time = 0;              // seconds
  std::int64_t deletion_time = 0;              // seconds, >= creation_time
  std::optional<std::int64_t> scheduled_time;  // absent for pods the real cluster never scheduled
  std::size_t line = 0;                        // 1-based line in the file
};

namespace detail {

inline std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

}  // namespace detail

// Limits of the reader, so that a wrong path (/dev/zero, a binary file, a huge dump) fails at once
// with a clear message instead of exhausting memory (docs/simulator.md, "Strictness and limits"):
//   - a file holds at most max_file_bytes (256 MiB: the openb files are under 600 KB; 256 MiB of
//     ~70-byte pod rows is about 3.8 million pods, ~470 times the 8152-pod default list);
//   - a line holds at most max_line_bytes (64 KiB: the longest openb row is 109 bytes).
inline constexpr std::size_t max_file_bytes = std::size_t{256} << 20;
inline constexpr std::size_t max_line_bytes = std::size_t{64} << 10;

namespace detail {

// A field or line as it may appear in an error message: printable ASCII as is, any other byte as
// \xNN, cut after 60 characters (with the full length), so that a message stays one short line.
inline std::string excerpt(std::string_view s) {
  constexpr std::size_t keep = 60;
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < keep; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (s.size() > keep) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

// Reads a whole text file as lines. "\n", "\r\n" and a lone "\r" (old Mac files) each end a line; a
// UTF-8 byte order mark at the start is dropped; blank lines at the end of the file are dropped (a
// blank line between rows stays, and is an error for the caller). Throws file_error(path, 0) when the
// file cannot be opened or read, and file_error(path, line) past max_file_bytes or max_line_bytes.
inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path, 0, "cannot open file");
  std::vector<std::string> lines;
  std::string cur;
  std::size_t total = 0;
  bool after_cr = false, first = true;
  std::vector<char> buf(std::size_t{1} << 16);
  for (;;) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    total += got;
    if (total > max_file_bytes) {
      throw file_error(path, lines.size() + 1,
                       "file is larger than " + std::to_string(max_file_bytes >> 20) + " MiB (the reader's limit)");
    }
    std::string_view chunk(buf.data(), got);
    if (first) {
      first = false;
      if (chunk.starts_with("\xEF\xBB\xBF")) chunk.remove_prefix(3);  // UTF-8 BOM
    }
    while (!chunk.empty()) {
      if (after_cr && chunk.front() == '\n') chunk.remove_prefix(1);  // the "\n" of a "\r\n" split over chunks
      after_cr = false;
      const std::size_t end = chunk.find_first_of("\r\n");
      const std::size_t take = end == std::string_view::npos ? chunk.size() : end;
      if (cur.size() + take > max_line_bytes) {
        throw file_error(path, lines.size() + 1,
                         "line is longer than " + std::to_string(max_line_bytes) + " bytes (the reader's limit)");
      }
      cur.append(chunk.substr(0, take));
      if (end == std::string_view::npos) break;
      after_cr = chunk[end] == '\r';
      if (after_cr && end + 1 < chunk.size() && chunk[end + 1] == '\n') {
        after_cr = false;
        chunk.remove_prefix(end + 2);
      } else {
        chunk.remove_prefix(end + 1);
      }
      lines.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (in.bad()) throw file_error(path, 0, "cannot read file");
  if (!cur.empty()) lines.push_back(std::move(cur));
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

struct row_reader {
  const std::string& file;
  std::size_t line;
  const std::vector<std::string_view>& header;
  const std::vector<std::string_view>& fields;

  [[noreturn]] void fail(std::size_t col, const std::string& why) const {
    throw file_error(file, line, "column '" + std::string(header[col]) + "': " + why);
  }
  std::int64_t integer(std::size_t col, std::int64_t lo, std::int64_t hi) const {
    const std::string_view f = fields[col];
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    if (f.empty() || ec != std::errc() || ptr != f.data() + f.size()) {
      fail(col, "'" + excerpt(f) + "' is not an integer");
    }
    if (v < lo || v > hi)
      fail(col, std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    return v;
  }
};

inline void check_header(const std::string& file, const std::vector<std::string>& lines,
                         const std::vector<std::vector<std::string_view>>& accepted, std::size_t& which) {
  if (lines.empty()) throw file_error(file, 1, "empty file: expected a header row");
  const auto h = split_csv(lines[0]);
  for (std::size_t i = 0; i < accepted.size(); ++i) {
    if (h == accepted[i]) {
      which = i;
      return;
    }
  }
  std::string want;
  for (std::size_t i = 0; i < accepted.size(); ++i) {
    if (i) want += "' or '";
    for (std::size_t j = 0; j < accepted[i].size(); ++j) want += (j ? "," : "") + std::string(accepted[i][j]);
  }
  throw file_error(file, 1, "unexpected header '" + excerpt(lines[0]) + "', expected '" + want + "'");
}

// Reads a CSV file whose header is one of `accepted` and calls row(reader, fields, which) for each
// data row, `which` being the index of the header found; a row with the wrong number of columns, or
// a field holding a control character (a NUL byte, a tab), is an error naming file:line and the
// column. Returns the number of data rows.
template <class Row>
std::size_t read_rows(const std::string& path, const std::vector<std::vector<std::string_view>>& accepted, Row&& row) {
  const auto lines = read_lines(path);
  std::size_t which = 0;
  check_header(path, lines, accepted, which);
  const auto header = split_csv(lines[0]);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::size_t line = i + 1;
    const auto f = split_csv(lines[i]);
    if (f.size() != header.size()) {
      throw file_error(path, line, "expected " + std::to_string(header.size()) + " columns, found " + std::to_string(f.size()));
    }
    const row_reader r{path, line, header, f};
    for (std::size_t col = 0; col < f.size(); ++col) {
      for (const char ch : f[col]) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7f) r.fail(col, "'" + excerpt(f[col]) + "' holds a control character");
      }
    }
    row(r, f, which);
  }
  return lines.size() - 1;
}

}  // namespace detail

// Reads an openb node list. GPU devices get the row's model, full share and no GPU memory (the trace
// has none). A node without GPUs must have an empty model; a node with GPUs must name one. Node names
// are unique (the node is the unit a pod is bound to).
inline std::vector<node_spec> read_openb_nodes(const std::string& path) {
  static const std::vector<std::vector<std::string_view>> headers = {{"sn", "cpu_milli", "memory_mib", "gpu", "model"}};
  std::vector<node_spec> nodes;
  std::unordered_map<std::string, std::size_t> line_of;  // node name -> its line
  constexpr std::int64_t big = std::int64_t{1} << 50;
  detail::read_rows(path, headers, [&](const detail::row_reader& r, const std::vector<std::string_view>& f, std::size_t) {
    node_spec n;
    n.name = std::string(f[0]);
    if (n.name.empty()) r.fail(0, "must not be empty");
    if (const auto [it, fresh] = line_of.emplace(n.name, r.line); !fresh) {
      r.fail(0, "'" + detail::excerpt(n.name) + "' is already the node of line " + std::to_string(it->second));
    }
    n.cpu_milli = r.integer(1, 0, big);
    n.memory_mib = r.integer(2, 0, big);
    const auto gpus = static_cast<int>(r.integer(3, 0, max_gpus_per_node));
    if (gpus > 0 && f[4].empty()) r.fail(4, "a node with GPUs must name their model");
    if (gpus == 0 && !f[4].empty()) r.fail(4, "a node without GPUs has no model");
    if (f[4].size() > short_name::max_size) r.fail(4, "'" + detail::excerpt(f[4]) + "' is longer than " + std::to_string(short_name::max_size) + " characters");
    n.add_gpus(gpus, f[4], 0);
    nodes.push_back(std::move(n));
  });
  return nodes;
}

// Reads an openb pod list (11-column or 5-column form). qos maps onto gpusched's classes as
// LS -> Guaranteed and prod tier, BE -> BestEffort, Burstable and Guaranteed as named.
inline std::vector<openb_pod> read_openb_pods(const std::string& path) {
  static const std::vector<std::vector<std::string_view>> headers = {
      {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase", "creation_time",
       "deletion_time", "scheduled_time"},
      {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}};
  std::vector<openb_pod> pods;
  constexpr std::int64_t big = std::int64_t{1} << 50;
  detail::read_rows(path, headers, [&](const detail::row_reader& r, const std::vector<std::string_view>& f, std::size_t which) {
    const bool full = which == 0;
    openb_pod o;
    o.line = r.line;
    pod& p = o.spec;
    p.name = std::string(f[0]);
    if (p.name.empty()) r.fail(0, "must not be empty");
    p.cpu_milli = r.integer(1, 0, big);
    p.memory_mib = r.integer(2, 0, big);
    p.num_gpu = static_cast<std::int32_t>(r.integer(3, 0, max_gpus_per_node));
    p.gpu_milli = static_cast<std::int32_t>(r.integer(4, 0, gpu_milli_whole));
    if (p.num_gpu == 0 && p.gpu_milli != 0) r.fail(4, "must be 0 when num_gpu is 0");
    if (p.num_gpu > 0 && p.gpu_milli == 0) r.fail(4, "must be within 1..1000 when num_gpu > 0");
    if (full) {
      // gpu_spec: '|'-separated models; empty entries are ignored as the authors do
      // (IsNodeAccessibleToPodByType).
      std::string_view spec = f[5];
      while (!spec.empty()) {
        const std::size_t bar = spec.find('|');
        const std::string_view m = spec.substr(0, bar);
        if (!m.empty()) {
          if (m.size() > short_name::max_size)
            r.fail(5, "model '" + detail::excerpt(m) + "' is longer than " + std::to_string(short_name::max_size) + " characters");
          p.allowed_models.emplace_back(m);
        }
        if (bar == std::string_view::npos) break;
        spec.remove_prefix(bar + 1);
      }
      if (!p.allowed_models.empty() && p.num_gpu == 0) r.fail(5, "a pod without GPUs cannot name GPU models");
      o.qos = std::string(f[6]);
      if (o.qos == "LS") {
        p.qos = qos_class::guaranteed;
        p.tier_ = tier::prod;
      } else if (o.qos == "BE") {
        p.qos = qos_class::best_effort;
      } else if (o.qos == "Burstable") {
        p.qos = qos_class::burstable;
      } else if (o.qos == "Guaranteed") {
        p.qos = qos_class::guaranteed;
      } else {
        r.fail(6, "'" + detail::excerpt(o.qos) + "' is not one of LS, BE, Burstable, Guaranteed");
      }
      const std::string_view ph = f[7];
      if (ph == "Running") {
        o.phase = pod_phase::running;
      } else if (ph == "Succeeded") {
        o.phase = pod_phase::succeeded;
      } else if (ph == "Failed") {
        o.phase = pod_phase::failed;
      } else if (ph == "Pending") {
        o.phase = pod_phase::pending;
      } else {
        r.fail(7, "'" + detail::excerpt(ph) + "' is not one of Running, Succeeded, Failed, Pending");
      }
      o.has_times = true;
      o.creation_time = r.integer(8, 0, big);
      o.deletion_time = r.integer(9, o.creation_time, big);
      if (!f[10].empty()) o.scheduled_time = r.integer(10, o.creation_time, o.deletion_time);
      p.submit_time = static_cast<double>(o.creation_time);
    }
    try {
      validate(p);
    } catch (const invalid_argument_error& e) {
      throw file_error(path, r.line, e.what());
    }
    pods.push_back(std::move(o));
  });
  return pods;
}

}  // namespace gpusched::sim
