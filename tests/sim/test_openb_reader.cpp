#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gpusched/sim/openb.hpp"
#include "support/temp_file.hpp"

using namespace gpusched;
using namespace gpusched::sim;

namespace {
const char* pod_header =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

// The message of the file_error that reading `text` as a pod file throws, or "no error".
std::string pod_error(const std::string& text) {
  const std::string path = testing::write_temp("pods.csv", text);
  try {
    (void)read_openb_pods(path);
  } catch (const file_error& e) {
    return std::string(e.what()).substr(path.size());  // drop the temp path, keep ":line: ..."
  }
  return "no error";
}
}  // namespace

TEST_CASE("openb.reads every pod column") {
  const std::string path =
      testing::write_temp("pods_ok.csv", std::string(pod_header) +
                                    "p-0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                                    "p-1,6000,12288,1,460,V100M16|V100M32,BE,Pending,427061,12902960,\n"
                                    "p-2,8000,30000,0,0,,Burstable,Succeeded,5,9,7\r\n");
  const auto pods = read_openb_pods(path);
  REQUIRE(pods.size() == 3);
  CHECK(pods[0].spec.name == "p-0");
  CHECK(pods[0].spec.cpu_milli == 12000);
  CHECK(pods[0].spec.memory_mib == 16384);
  CHECK(pods[0].spec.num_gpu == 1);
  CHECK(pods[0].spec.gpu_milli == 1000);
  CHECK(pods[0].spec.qos == qos_class::guaranteed);
  CHECK(pods[0].spec.tier_ == tier::prod);
  CHECK(pods[0].phase == pod_phase::running);
  CHECK(pods[0].deletion_time == 12537496);
  CHECK(pods[0].scheduled_time == 0);
  CHECK(pods[1].spec.allowed_models.size() == 2);
  CHECK(pods[1].spec.allowed_models[1].view() == "V100M32");
  CHECK(pods[1].spec.qos == qos_class::best_effort);
  CHECK(pods[1].phase == pod_phase::pending);
  CHECK_FALSE(pods[1].scheduled_time.has_value());
  CHECK(pods[1].spec.submit_time == 427061.0);
  CHECK(pods[2].qos == "Burstable");
  CHECK(pods[2].phase == pod_phase::succeeded);
  CHECK(pods[2].line == 4);
}

TEST_CASE("openb.reads the five-column pod files and node files") {
  const auto pods =
      read_openb_pods(testing::write_temp("pods5.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nq,100,200,8,1000\n"));
  REQUIRE(pods.size() == 1);
  CHECK(pods[0].spec.num_gpu == 8);
  CHECK_FALSE(pods[0].has_times);
  const auto nodes = read_openb_nodes(
      testing::write_temp("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn-0,64000,262144,2,P100\nn-1,32000,1024,0,\n"));
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].gpus.size() == 2);
  CHECK(nodes[0].gpus[1].model.view() == "P100");
  CHECK(nodes[0].gpus[1].milli_free == 1000);
  CHECK(nodes[1].gpus.empty());
}

TEST_CASE("openb.a malformed row is an error with file:line and the column; nothing is skipped") {
  const std::string h = pod_header;
  CHECK(pod_error(h + "p,1,1,1,1000,,LS,Running,0,1,0\np,x,1,1,1000,,LS,Running,0,1,0\n") ==
        ":3: column 'cpu_milli': 'x' is not an integer");
  CHECK(pod_error(h + "p,1,1,1,1000,,LS,Running,0,1\n") == ":2: expected 11 columns, found 10");
  CHECK(pod_error(h + "p,1,1,1,1500,,LS,Running,0,1,0\n") == ":2: column 'gpu_milli': 1500 is outside 0..1000");
  CHECK(pod_error(h + "p,1,1,0,500,,LS,Running,0,1,0\n") == ":2: column 'gpu_milli': must be 0 when num_gpu is 0");
  CHECK(pod_error(h + "p,1,1,2,0,,LS,Running,0,1,0\n") ==
        ":2: column 'gpu_milli': must be within 1..1000 when num_gpu > 0");
  CHECK(pod_error(h + "p,1,1,1,1000,,XX,Running,0,1,0\n") ==
        ":2: column 'qos': 'XX' is not one of LS, BE, Burstable, Guaranteed");
  CHECK(pod_error(h + "p,1,1,1,1000,,LS,Lost,0,1,0\n") ==
        ":2: column 'pod_phase': 'Lost' is not one of Running, Succeeded, Failed, Pending");
  CHECK(pod_error(h + "p,1,1,1,1000,,LS,Running,10,5,\n") ==
        ":2: column 'deletion_time': 5 is outside 10..1125899906842624");
  CHECK(pod_error(h + "p,1,1,1,1000,,LS,Running,10,20,30\n") == ":2: column 'scheduled_time': 30 is outside 10..20");
  CHECK(pod_error(h + "p,1,1,1,1000,,LS,Running,0,1,0\n\np,1,1,1,1000,,LS,Running,0,1,0\n") ==
        ":3: expected 11 columns, found 1");
  CHECK(pod_error(h + ",1,1,1,1000,,LS,Running,0,1,0\n") == ":2: column 'name': must not be empty");
  CHECK(pod_error(h + "p,1,1,0,0,T4,LS,Running,0,1,0\n") ==
        ":2: column 'gpu_spec': a pod without GPUs cannot name GPU models");
  CHECK(pod_error(h + "p,1,1,1,100," + std::string(1025, 'M') + ",LS,Running,0,1,0\n") ==
        ":2: column 'gpu_spec': model '" + std::string(60, 'M') + "... (1025 bytes)' is longer than 1024 characters");
  CHECK(
      pod_error("name,cpu\n") ==
      ":1: unexpected header 'name,cpu', expected 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
      "creation_time,deletion_time,scheduled_time' or 'name,cpu_milli,memory_mib,num_gpu,gpu_milli'");
  CHECK(pod_error("") == ":1: empty file: expected a header row");
  CHECK_THROWS_WITH_AS(read_openb_pods("/nonexistent/pods.csv"), "/nonexistent/pods.csv:0: cannot open file",
                       file_error);

  const std::string nodes = testing::write_temp("nodes_bad.csv", "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,2,\n");
  CHECK_THROWS_WITH_AS(read_openb_nodes(nodes),
                       (nodes + ":2: column 'model': a node with GPUs must name their model").c_str(), file_error);
  const std::string nodes2 = testing::write_temp("nodes_bad2.csv", "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,65,T4\n");
  CHECK_THROWS_WITH_AS(read_openb_nodes(nodes2), (nodes2 + ":2: column 'gpu': 65 is outside 0..64").c_str(),
                       file_error);
}

TEST_CASE("openb.the shipped trace files read cleanly") {
  const std::string dir = std::string(GPUSCHED_SOURCE_DIR) + "/data/openb/";
  const auto nodes = read_openb_nodes(dir + "openb_node_list_gpu_node.csv");
  CHECK(nodes.size() == 1213);  // data/openb/README.md: 1213 GPU nodes, 6212 GPUs
  std::size_t gpus = 0;
  for (const auto& n : nodes) gpus += n.gpus.size();
  CHECK(gpus == 6212);
  const auto pods = read_openb_pods(dir + "openb_pod_list_default.csv");
  CHECK(pods.size() == 8152);  // 1088 CPU-only, 3078 sharing, 3911 one GPU, 75 multi-GPU
  std::size_t cpu_only = 0, sharing = 0, one = 0, multi = 0;
  for (const auto& p : pods) {
    if (p.spec.num_gpu == 0)
      ++cpu_only;
    else if (p.spec.gpu_milli < 1000)
      ++sharing;
    else if (p.spec.num_gpu == 1)
      ++one;
    else
      ++multi;
  }
  CHECK(cpu_only == 1088);
  CHECK(sharing == 3078);
  CHECK(one == 3911);
  CHECK(multi == 75);
}
