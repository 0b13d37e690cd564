// Issue 15 (hardening), the simulator's share: the openb reader's limits and odd files, the paper
// protocol's tune-up bound, the dynamic replay's sample bound, and degenerate traces.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gpusched/sim/dynamic.hpp"
#include "gpusched/sim/openb.hpp"
#include "gpusched/sim/paper.hpp"
#include "gpusched/sim/policies.hpp"
#include "support/builders.hpp"
#include "support/temp_file.hpp"

using namespace gpusched;
using namespace gpusched::sim;

namespace {
const char* node_header = "sn,cpu_milli,memory_mib,gpu,model";

// The message (without the temp path) of the file_error that reading `text` as a node list throws.
std::string node_error(const std::string& text) {
  const std::string path = testing::write_temp("nodes.csv", text);
  try {
    (void)read_openb_nodes(path);
  } catch (const file_error& e) {
    return std::string(e.what()).substr(path.size());
  }
  return "no error";
}

trace one_gpu_trace(std::vector<pod> specs) {
  std::vector<openb_pod> pods;
  for (auto& p : specs) {
    openb_pod o;
    o.spec = std::move(p);
    pods.push_back(std::move(o));
  }
  return trace::from({testing::gpu_node("n", 64000, 1 << 20, 1)}, std::move(pods));
}

template <class Run>
void run_fgd(const trace& t, Run&& run) {
  with_policy(policy_kind::fgd, t.typical, 1, [&](auto prof) {
    run(std::move(prof));
    return 0;
  });
}
}  // namespace

TEST_CASE("openb.odd line ends, a byte order mark and trailing blank lines are read as text") {
  // CR-only (old Mac), CRLF and LF line ends give the same two rows.
  for (const char* eol : {"\r", "\r\n", "\n"}) {
    const std::string e = eol;
    const auto nodes =
        read_openb_nodes(testing::write_temp("eol.csv", node_header + e + "a,1000,1000,1,T4" + e + "b,1000,1000,0," + e));
    REQUIRE(nodes.size() == 2);
    CHECK(nodes[0].name == "a");
    CHECK(nodes[1].name == "b");
    CHECK(nodes[1].gpus.empty());
  }
  // A UTF-8 byte order mark (EF BB BF) before the header is dropped.
  const auto bom =
      read_openb_nodes(testing::write_temp("bom.csv", "\xEF\xBB\xBF" + std::string(node_header) + "\na,1,1,1,T4\n"));
  REQUIRE(bom.size() == 1);
  CHECK(bom[0].gpus.size() == 1);
  // Blank lines at the end of the file are not rows; one between rows still is an error.
  CHECK(read_openb_nodes(testing::write_temp("blank.csv", std::string(node_header) + "\na,1,1,1,T4\n\n\r\n")).size() == 1);
  CHECK(node_error(std::string(node_header) + "\na,1,1,1,T4\n\nb,1,1,1,T4\n") == ":3: expected 5 columns, found 1");
  // A file of nothing but line ends has no header.
  CHECK(node_error("\r\r\r") == ":1: empty file: expected a header row");
}

TEST_CASE("openb.control characters, duplicate nodes and long fields are refused with file:line and column") {
  const std::string h = std::string(node_header) + "\n";
  CHECK(node_error(h + "a,1,1,1,T" + std::string(1, '\0') + "4\n") ==
        ":2: column 'model': 'T\\x004' holds a control character");
  CHECK(node_error(h + "a\tb,1,1,1,T4\n") == ":2: column 'sn': 'a\\x09b' holds a control character");
  CHECK(node_error(h + "a,1,1,1,T4\nb,1,1,0,\na,2,2,1,T4\n") == ":4: column 'sn': 'a' is already the node of line 2");
  // A long field is cut to 60 characters in the message, with its length.
  const std::string junk(5000, 'x');
  CHECK(node_error(h + "a," + junk + ",1,1,T4\n") ==
        ":2: column 'cpu_milli': '" + std::string(60, 'x') + "... (5000 bytes)' is not an integer");
  // So is a wrong header (here a line of 40,000 CRs-free bytes): one short line, not the whole header.
  const std::string msg = node_error(std::string(40000, 'y') + "\n");
  CHECK(msg.size() < 300);
  CHECK(msg.starts_with(":1: unexpected header '" + std::string(60, 'y') + "... (40000 bytes)'"));
}

TEST_CASE("openb.a line past max_line_bytes is refused before the rest of the file is read") {
  CHECK(max_line_bytes == 65536);
  const std::string h = std::string(node_header) + "\n";
  CHECK(node_error(h + std::string(max_line_bytes + 1, 'z') + "\n") ==
        ":2: line is longer than 65536 bytes (the reader's limit)");
  CHECK(node_error(h + std::string(max_line_bytes, 'z') + "\n") == ":2: expected 5 columns, found 1");
  // /dev/zero: one endless line of NUL bytes.
  if (std::filesystem::exists("/dev/zero")) {
    CHECK_THROWS_WITH_AS(read_openb_nodes("/dev/zero"),
                         "/dev/zero:1: line is longer than 65536 bytes (the reader's limit)", file_error);
  }
}

TEST_CASE("paper.tuning up a trace without GPU demand is refused, not looped") {
  rng r(1);
  paper_options o;  // tune 1.3
  const std::vector<pod> cpu_only(3, make_pod("c").cpu(1000));
  CHECK_THROWS_WITH_AS(
      paper_arrivals(cpu_only, 1000, o, r),
      "paper_options.tune: tuning to 1.3 x the GPU capacity of 1000 milli: no pod of the trace "
      "requests a GPU, so no number of clones reaches the target (tune <= 0 replays the trace as it is)",
      invalid_argument_error);
  // Untuned, the same trace replays as it is.
  o.tune = 0;
  CHECK(paper_arrivals(cpu_only, 1000, o, r).size() == 3);
  // Through run_paper (the Python run_paper's path): the error, not an endless loop.
  o.tune = 1.3;
  const trace t = one_gpu_trace({make_pod("a").cpu(1000), make_pod("b").cpu(1000)});
  run_fgd(t, [&](auto prof) { CHECK_THROWS_AS(run_paper(t, std::move(prof), o), invalid_argument_error); });
}

TEST_CASE("paper.tuning up refuses a target that needs more than max_paper_arrivals arrivals") {
  CHECK(max_paper_arrivals == 16777216);
  rng r(1);
  paper_options o;
  o.tune = 100;
  // 4 pods with 1 GPU milli in all (a mean of 0.25 per pod) against 64 GPUs: the target 6,400,000
  // milli takes about 4 + 4 x (6,400,000 - 1) / 1 = 25,600,000 arrivals > 2^24.
  std::vector<pod> pods(3, make_pod("c").cpu(1000));
  pods.push_back(make_pod("g").cpu(1000).gpu_share(1));
  CHECK_THROWS_WITH_AS(
      paper_arrivals(pods, 64000, o, r),
      "paper_options.tune: tuning to 100 x the GPU capacity of 64000 milli: reaching it at the trace's "
      "mean of 0.25 GPU milli per pod takes about 25600000 arrivals, more than the limit of 16777216 "
      "(tune <= 0 replays the trace as it is)",
      invalid_argument_error);
  // The same pods against one GPU: target 100,000 milli, about 400,000 arrivals, within the limit.
  // Every clone adds 0 or 1 milli, and the first one that would pass the target stops: 100,000 milli.
  const auto order = paper_arrivals(pods, 1000, o, r);
  milli total = 0;
  for (const auto i : order) total += pods[i].gpu_milli_total();
  CHECK(total == 100000);
}

TEST_CASE("sim.a trace without nodes, GPUs or pods is refused by both replays") {
  paper_options po;
  dynamic_options dyn;
  openb_pod p;
  p.spec = make_pod("p").cpu(1000).gpus(1);
  p.has_times = true;
  p.deletion_time = 10;
  const trace no_nodes = trace::from({}, {p});
  const trace no_gpus = trace::from({testing::gpu_node("n", 64000, 1 << 20, 0)}, {p});
  const trace no_pods = trace::from({testing::gpu_node("n", 64000, 1 << 20, 1)}, {});
  CHECK_THROWS_WITH_AS(check_replayable(no_nodes), "trace.nodes: the node list is empty", invalid_argument_error);
  CHECK_THROWS_WITH_AS(check_replayable(no_gpus),
                       "trace.nodes: no node has a GPU; the replays report shares of GPU capacity",
                       invalid_argument_error);
  CHECK_THROWS_WITH_AS(check_replayable(no_pods), "trace.pods: the pod list is empty", invalid_argument_error);
  for (const trace* t : {&no_nodes, &no_gpus, &no_pods}) {
    run_fgd(*t, [&](auto prof) {
      CHECK_THROWS_AS(run_paper(*t, prof, po), invalid_argument_error);
      CHECK_THROWS_AS(run_dynamic(*t, std::move(prof), dyn), invalid_argument_error);
    });
  }
}

TEST_CASE("dynamic.a sample period that would record more than max_dynamic_samples is refused") {
  CHECK(max_dynamic_samples == 16777216);
  openb_pod p;
  p.spec = make_pod("p").cpu(1000).gpus(1);
  p.has_times = true;
  // Created at 0, deleted at 2^30 s, never scheduled in the real cluster: it may wait until 2^30 and
  // then run 2^30 s, so the bound on the horizon is 2^31 s = 2147483648 s; at 1 s per sample that is
  // more than 2^24 samples, and the smallest period within the limit is 2^31 / 2^24 + 1 = 129 s.
  p.deletion_time = std::int64_t{1} << 30;
  const trace t = trace::from({testing::gpu_node("n", 64000, 1 << 20, 1)}, {p});
  dynamic_options o;
  o.sample_period = 1;
  run_fgd(t, [&](auto prof) {
    CHECK_THROWS_WITH_AS(run_dynamic(t, prof, o),
                         "dynamic_options.sample_period: 1 s over the trace's horizon of up to 2147483648 s "
                         "gives more than 16777216 samples; use at least 129 s",
                         invalid_argument_error);
    // Placed at once, it leaves at 2^30: samples at 0, 2^20, ..., 2^30.
    o.sample_period = std::int64_t{1} << 20;
    CHECK(run_dynamic(t, std::move(prof), o).samples.size() == 1025);
  });
}

TEST_CASE("paper.bucketing stops past the last event, whatever max_pct") {
  // Capacity 1000: arrived 40.0% (bucket 40) and 41.6% (bucket 42). Buckets 39 and 41 are empty but
  // have an event within +-1; 43 has none (41.6 < 42), nor has any bucket past it.
  const std::vector<event_sample> ev = {{400, 400, 0, 0}, {416, 404, 0, 0}};
  const auto b = bucket_by_arrived(ev, 1000, std::numeric_limits<int>::max());
  REQUIRE(b.size() == 4);
  CHECK(b.front().arrived_pct == 39);
  CHECK(b.back().arrived_pct == 42);
  CHECK(b.back().allocation_pct == doctest::Approx(40.4));
  CHECK(bucket_by_arrived(ev, 1000, 41).size() == 3);
}
