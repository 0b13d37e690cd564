// Kubernetes quantities: expected values worked out by hand from apimachinery's suffix table
// (k8s.io/apimachinery pkg/api/resource/suffix.go) and its quantity_test.go examples.
#include <doctest/doctest.h>

#include <string>

#include "gpusched/kube/quantity.hpp"

using gpusched::invalid_argument_error;
using namespace gpusched::kube;

namespace {
std::int64_t milli_up(const char* s) { return to_milli(parse_quantity(s, "q"), true, INT64_MAX, "q"); }
std::int64_t mib_up(const char* s) { return to_mib(parse_quantity(s, "q"), true, INT64_MAX, "q"); }
std::int64_t mib_down(const char* s) { return to_mib(parse_quantity(s, "q"), false, INT64_MAX, "q"); }
std::string error_of(const char* s) {
  try {
    (void)parse_quantity(s, "spec.containers[0].resources.requests.cpu");
  } catch (const invalid_argument_error& e) {
    CHECK(e.field() == "spec.containers[0].resources.requests.cpu");
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("kube/quantity: CPU in milli-cores") {
  CHECK(milli_up("500m") == 500);
  CHECK(milli_up("2") == 2000);
  CHECK(milli_up("0.5") == 500);
  CHECK(milli_up(".25") == 250);
  CHECK(milli_up("1.") == 1000);
  CHECK(milli_up("+3") == 3000);
  CHECK(milli_up("1e3") == 1000000);    // 1000 cores
  CHECK(milli_up("1E3") == 1000000);    // E followed by digits is an exponent
  CHECK(milli_up("15e-1") == 1500);     // 1.5 cores
  CHECK(milli_up("100k") == 100000000);
  CHECK(milli_up("250000u") == 250);    // 0.25 cores
  CHECK(milli_up("0.1m") == 1);         // rounded up, as Quantity.MilliValue does
  CHECK(milli_up("1n") == 1);
  CHECK(milli_up("0") == 0);
  CHECK(milli_up("000.000") == 0);
  CHECK(to_milli(parse_quantity("1500001u", "q"), false, INT64_MAX, "q") == 1500);  // node side: down
}

TEST_CASE("kube/quantity: memory in MiB") {
  CHECK(mib_up("16Gi") == 16384);
  CHECK(mib_up("512Mi") == 512);
  CHECK(mib_up("1024Ki") == 1);
  CHECK(mib_up("1025Ki") == 2);           // 1025 KiB is just over 1 MiB: requests round up
  CHECK(mib_down("1025Ki") == 1);         // capacities round down
  CHECK(mib_up("1G") == 954);             // 10^9 / 2^20 = 953.67
  CHECK(mib_down("1G") == 953);
  CHECK(mib_up("1E") == 953674316407);    // one exa: 10^18 / 2^20 = 953674316406.25
  CHECK(mib_up("1Ei") == (std::int64_t{1} << 40));
  CHECK(mib_up("1.5Gi") == 1536);
  CHECK(mib_up("128974848") == 123);      // 128974848 bytes = 123 MiB exactly (apimachinery's docs example)
  CHECK(mib_up("129e6") == 124);          // 129000000 / 1048576 = 123.02
}

TEST_CASE("kube/quantity: malformed values name the field") {
  CHECK(error_of("") == "spec.containers[0].resources.requests.cpu: '' is not a Kubernetes quantity: empty");
  CHECK(error_of("-1") == "spec.containers[0].resources.requests.cpu: '-1' is not a Kubernetes quantity: negative");
  CHECK(error_of("1.2.3").find("two decimal points") != std::string::npos);
  CHECK(error_of("abc").find("no digits") != std::string::npos);
  CHECK(error_of("1K").find("unknown suffix 'K'") != std::string::npos);  // decimal kilo is lower-case k
  CHECK(error_of("1Mb").find("unknown suffix 'Mb'") != std::string::npos);
  CHECK(error_of("1e").find("exponent without digits") != std::string::npos);
  CHECK(error_of("1e3x").find("unknown suffix") != std::string::npos);
  CHECK(error_of("1 ").find("unknown suffix") != std::string::npos);
  CHECK(error_of("1234567890123456789012345678901234567").find("more than 36 significant digits") != std::string::npos);
  CHECK_THROWS_WITH_AS((void)to_milli(parse_quantity("1e30", "q"), true, std::int64_t{1} << 50, "spec.cpu"),
                       "spec.cpu: quantity is larger than 1125899906842624 units", invalid_argument_error);
}

TEST_CASE("kube/quantity: equality by value") {
  CHECK(same_value(parse_quantity("1", "a"), parse_quantity("1000m", "b")));
  CHECK(same_value(parse_quantity("1Ki", "a"), parse_quantity("1024", "b")));
  CHECK(same_value(parse_quantity("0.5", "a"), parse_quantity("500m", "b")));
  CHECK_FALSE(same_value(parse_quantity("1G", "a"), parse_quantity("1Gi", "b")));
  CHECK_FALSE(same_value(parse_quantity("1", "a"), parse_quantity("1001m", "b")));
}

TEST_CASE("kube/quantity: compare across suffixes and very large values") {
  CHECK(compare(parse_quantity("4096Mi", "a"), parse_quantity("4Gi", "b")) == 0);
  CHECK(compare(parse_quantity("1G", "a"), parse_quantity("1Gi", "b")) == -1);   // 10^9 < 2^30
  CHECK(compare(parse_quantity("1Ei", "a"), parse_quantity("1E", "b")) == 1);    // 2^60 > 10^18
  CHECK(compare(parse_quantity("1e300", "a"), parse_quantity("1", "b")) == 1);
  CHECK(compare(parse_quantity("0", "a"), parse_quantity("0Gi", "b")) == 0);
}
