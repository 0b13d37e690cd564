// Results that list their fields once: SHA-256 against the NIST examples, the field lists' keys
// (snake_case, unique, unit last), and the statistics by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <string>

#include "gpusched/sim/replay_fields.hpp"
#include "gpusched/sim/sha256.hpp"

using namespace gpusched;
using namespace gpusched::sim;

TEST_CASE("SHA-256 of the NIST examples (FIPS 180-4 example values, SHA256.pdf)") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // 448 bits: the padding needs a second block.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  sha256 h;  // one million 'a', fed in pieces that do not line up with the 64-byte blocks
  const std::string piece(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(piece);
  CHECK(h.hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256_file hashes the bytes; a missing file is an error naming it") {
  const std::string path = "gpusched_test_sha256.txt";
  {
    std::ofstream f(path, std::ios::binary);
    f << "abc";
  }
  CHECK(sha256_file(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::remove(path.c_str());
  CHECK_THROWS_WITH_AS(sha256_file("no/such/file.csv"), doctest::Contains("no/such/file.csv"), invalid_argument_error);
}

namespace {
template <class Fields>
void check_keys(const Fields& fields) {
  std::set<std::string_view> seen;
  for (const auto& f : fields) {
    CAPTURE(f.key);
    CHECK(seen.insert(f.key).second);
    CHECK(!f.key.empty());
    CHECK(std::all_of(f.key.begin(), f.key.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }));
    CHECK(f.key.front() != '_');
    CHECK(f.key.back() != '_');
    CHECK((f.get != nullptr));
    CHECK(!f.label.empty());
  }
}
}  // namespace

TEST_CASE("field lists: unique snake_case keys, each with a getter and a label") {
  check_keys(paper_fields);
  check_keys(dynamic_fields);
}

TEST_CASE("field getters read the result's members in the key's unit") {
  paper_result r;
  r.gpu_capacity = 2000;
  r.pods_failed = 3;
  r.pods_arrived = 7;
  r.final = event_sample{1500, 1000, 250.0, 1000.0};
  const paper_run v{&r, 40.0};
  auto get = [&](std::string_view key) {
    for (const auto& f : paper_fields) {
      if (f.key == key) return f.get(v);
    }
    FAIL("no field " << key);
    return 0.0;
  };
  CHECK(get("allocation_pct_at_tune") == 40.0);
  CHECK(get("unallocated_pct_at_tune") == 60.0);
  CHECK(get("failed_pods") == 3.0);
  CHECK(get("arrived_pods") == 7.0);
  CHECK(get("final_arrived_pct") == 75.0);        // 1500 of 2000 milli
  CHECK(get("final_allocation_pct") == 50.0);     // 1000 of 2000
  CHECK(get("final_frag_amount_pct") == 12.5);    // 250 of 2000
  CHECK(get("final_frag_ratio_pct") == 25.0);     // 250 of 1000 idle
}

TEST_CASE("summarise: mean, sample sd and the t interval by hand") {
  const mean_ci c = summarise(std::vector<double>{2.0, 4.0, 6.0, 8.0});
  CHECK(c.mean == 5.0);
  CHECK(c.sd == doctest::Approx(std::sqrt(20.0 / 3.0)));               // squares 9+1+1+9 over n-1 = 3
  CHECK(c.half == doctest::Approx(3.182 * std::sqrt(20.0 / 3.0) / 2.0));  // t_{0.975,3} = 3.182, sqrt(4) = 2
  CHECK(summarise(std::vector<double>{7.0}).sd == 0.0);
}
