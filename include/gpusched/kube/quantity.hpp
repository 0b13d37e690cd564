// Kubernetes resource quantities ("500m", "16Gi", "1e3", "0.5") parsed exactly, without floating point.
//
// The grammar and suffixes are apimachinery's (k8s.io/apimachinery pkg/api/resource/quantity.go,
// parseQuantityString, and suffix.go): an optional sign, decimal digits with at most one '.', then
// one suffix: binary Ki Mi Gi Ti Pi Ei (powers of 1024), decimal n u m "" k M G T P E (powers of
// 1000), or a decimal exponent e<int> / E<int>. "1E" is one exa, "1E3" is 1000.
// A value converts to whole units rounding up, as Quantity.MilliValue() / Value() do (a CPU request
// of "0.1m" is 1 milli-CPU); node capacities are converted rounding down (a node never offers more
// than it has). Needs only the standard library.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpusched/core/error.hpp"

namespace gpusched::kube {

__extension__ using int128 = __int128;  // GCC and Clang; __extension__ keeps -Wpedantic quiet
__extension__ using uint128 = unsigned __int128;

// value = mantissa * 10^exp10 * 2^exp2, mantissa >= 0 (negative quantities are refused: no request,
// limit or capacity may be negative).
struct quantity {
  int128 mantissa = 0;
  int exp10 = 0;
  int exp2 = 0;
  [[nodiscard]] bool is_zero() const noexcept { return mantissa == 0; }
};

// Parses `s`; throws invalid_argument_error naming `field` (a JSON path) when it is not a quantity.
inline quantity parse_quantity(std::string_view s, const std::string& field) {
  auto fail = [&](const std::string& why) -> quantity {
    throw invalid_argument_error(field, "'" + std::string(s.substr(0, 64)) + "' is not a Kubernetes quantity: " + why);
  };
  if (s.empty()) return fail("empty");
  if (s.size() > 64) return fail("longer than 64 characters");
  std::size_t i = 0;
  if (s[i] == '+') {
    ++i;
  } else if (s[i] == '-') {
    return fail("negative");
  }
  quantity q;
  int digits = 0;
  int significant = 0;
  bool dot = false;
  for (; i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'); ++i) {
    if (s[i] == '.') {
      if (dot) return fail("two decimal points");
      dot = true;
      continue;
    }
    ++digits;
    if (q.mantissa == 0 && s[i] == '0') {
      if (dot) --q.exp10;  // leading zeros after the point only shift the scale
      continue;
    }
    if (++significant > 36) return fail("more than 36 significant digits");  // stays inside __int128
    q.mantissa = q.mantissa * 10 + (s[i] - '0');
    if (dot) --q.exp10;
  }
  if (digits == 0) return fail("no digits");
  const std::string_view suffix = s.substr(i);
  struct named {
    std::string_view name;
    int exp10, exp2;
  };
  static constexpr named suffixes[] = {
      {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
      {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
      {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60}};
  for (const auto& n : suffixes) {
    if (suffix == n.name) {
      q.exp10 += n.exp10;
      q.exp2 = n.exp2;
      return q;
    }
  }
  if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::size_t j = 1;
    bool negative = false;
    if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) negative = suffix[j++] == '-';
    if (j == suffix.size()) return fail("exponent without digits");
    int e = 0;
    for (; j < suffix.size(); ++j) {
      if (suffix[j] < '0' || suffix[j] > '9') return fail("unknown suffix '" + std::string(suffix) + "'");
      e = e * 10 + (suffix[j] - '0');
      if (e > 1000) return fail("exponent out of range");
    }
    q.exp10 += negative ? -e : e;
    return q;
  }
  return fail("unknown suffix '" + std::string(suffix) + "'");
}

namespace detail {
inline constexpr int128 int128_max = static_cast<int128>((static_cast<uint128>(1) << 127) - 1);
}

// q * 10^scale10 / 2^shift2 in whole units, rounded up (round_up) or down; throws naming `field`
// when the result exceeds `limit`.
inline std::int64_t to_units(const quantity& q, int scale10, int shift2, bool round_up, std::int64_t limit,
                             const std::string& field) {
  if (q.mantissa == 0) return 0;
  const int e10 = q.exp10 + scale10;
  const int e2 = q.exp2 - shift2;
  const auto too_large = [&]() -> std::int64_t {
    throw invalid_argument_error(field, "quantity is larger than " + std::to_string(limit) + " units");
  };
  int128 num = q.mantissa;
  int128 den = 1;
  for (int k = 0; k < e10; ++k) {
    if (num > detail::int128_max / 10) return too_large();
    num *= 10;
  }
  for (int k = 0; k < e2; ++k) {
    if (num > detail::int128_max / 2) return too_large();
    num *= 2;
  }
  // A divisor beyond 10^38 makes any mantissa (< 10^36) a fraction of one unit.
  if (-e10 > 37 || -e2 > 120) return round_up ? 1 : 0;
  for (int k = 0; k < -e10; ++k) den *= 10;
  for (int k = 0; k < -e2; ++k) {
    if (den > detail::int128_max / 2) return round_up ? 1 : 0;
    den *= 2;
  }
  int128 v = num / den;
  if (round_up && v * den != num) ++v;
  if (v > limit) return too_large();
  return static_cast<std::int64_t>(v);
}

// Units the translation uses (gpusched's core/types.hpp: CPU in milli-cores, memory in MiB).
inline std::int64_t to_milli(const quantity& q, bool round_up, std::int64_t limit, const std::string& field) {
  return to_units(q, 3, 0, round_up, limit, field);
}
inline std::int64_t to_mib(const quantity& q, bool round_up, std::int64_t limit, const std::string& field) {
  return to_units(q, 0, 20, round_up, limit, field);
}
inline std::int64_t to_count(const quantity& q, bool round_up, std::int64_t limit, const std::string& field) {
  return to_units(q, 0, 0, round_up, limit, field);
}

// Compares two quantities by value: -1, 0 or 1 (apimachinery's Quantity.Cmp). Exact: both are
// brought to the smaller exponents; a mantissa that would leave __int128 there is the larger value
// (the other fits), and when both would, they are compared as long doubles.
inline int compare(const quantity& a, const quantity& b) {
  quantity x = a, y = b;
  const int e10 = std::min(x.exp10, y.exp10), e2 = std::min(x.exp2, y.exp2);
  auto scale = [&](quantity& q) {
    for (; q.exp10 > e10; --q.exp10) {
      if (q.mantissa > detail::int128_max / 10) return false;
      q.mantissa *= 10;
    }
    for (; q.exp2 > e2; --q.exp2) {
      if (q.mantissa > detail::int128_max / 2) return false;
      q.mantissa *= 2;
    }
    return true;
  };
  if (a.mantissa == 0 || b.mantissa == 0) return (a.mantissa > 0) - (b.mantissa > 0);
  const bool fx = scale(x), fy = scale(y);
  if (fx && fy) return (x.mantissa > y.mantissa) - (x.mantissa < y.mantissa);
  if (fx != fy) return fx ? -1 : 1;
  const auto value = [](const quantity& q) {
    return static_cast<long double>(q.mantissa) * std::pow(10.0L, q.exp10) * std::pow(2.0L, q.exp2);
  };
  const long double va = value(a), vb = value(b);
  return (va > vb) - (va < vb);
}
inline bool same_value(const quantity& a, const quantity& b) { return compare(a, b) == 0; }

}  // namespace gpusched::kube
