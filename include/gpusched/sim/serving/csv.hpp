// A small strict CSV reader for profile tables: every malformed row is a file_error with file:line.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "gpusched/core/error.hpp"

namespace gpusched::sim::serving {

// One non-empty line of a CSV file split on commas (no quoting: profile tables have none).
// A single trailing empty field is dropped, because gpu-let's UTIL.CSV ends every row with ','.
struct csv_row {
  std::size_t line = 0;  // 1-based
  std::vector<std::string> fields;
};

// Splits text into rows. CR before LF is removed (INT_MODEL_CONSTANT.CSV has CRLF line ends);
// blank lines are skipped.
inline std::vector<csv_row> parse_csv_text(std::string_view text) {
  std::vector<csv_row> rows;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    csv_row row;
    row.line = line_no;
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = line.find(',', start);
      const std::string_view f =
          line.substr(start, comma == std::string_view::npos ? line.size() - start : comma - start);
      const std::size_t b = f.find_first_not_of(" \t");
      const std::size_t e = f.find_last_not_of(" \t");
      row.fields.emplace_back(b == std::string_view::npos ? std::string_view{} : f.substr(b, e - b + 1));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (row.fields.size() > 1 && row.fields.back().empty()) row.fields.pop_back();
    rows.push_back(std::move(row));
  }
  return rows;
}

// Reads a whole file; throws file_error(path, 0, ...) when it cannot be opened.
inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path, 0, "cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<csv_row> read_csv_file(const std::string& path) { return parse_csv_text(read_text_file(path)); }

// Parses the whole field as a finite double (locale-independent); otherwise file_error naming the column.
inline double parse_csv_double(const std::string& field, const std::string& file, std::size_t line,
                               std::string_view column) {
  double v = 0.0;
  const char* first = field.data();
  const char* last = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (field.empty() || ec != std::errc{} || ptr != last || !std::isfinite(v)) {
    throw file_error(file, line, std::string(column) + ": '" + field + "' is not a finite number");
  }
  return v;
}

// Parses the whole field as a base-10 integer; otherwise file_error naming the column.
inline long long parse_csv_int(const std::string& field, const std::string& file, std::size_t line,
                               std::string_view column) {
  long long v = 0;
  const char* first = field.data();
  const char* last = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (field.empty() || ec != std::errc{} || ptr != last) {
    throw file_error(file, line, std::string(column) + ": '" + field + "' is not an integer");
  }
  return v;
}

}  // namespace gpusched::sim::serving
