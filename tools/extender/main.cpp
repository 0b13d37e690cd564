// gpusched-extender: gpusched's decisions as a Kubernetes scheduler extender (docs/kubernetes.md).
//
//   gpusched-extender --listen 127.0.0.1:8888 --config data/scheduler-config.yaml
//                     [--api-server URL --token-file F [--ca-file F]]
//
// Verbs (k8s.io/kube-scheduler extender/v1): POST /filter, /prioritize, /preempt, /bind; GET
// /healthz and /metrics (Prometheus text format). Prints "listening on HOST:PORT" once it accepts
// connections (port 0 picks a free one).
// extender.hpp first: it includes Eigen (the batch engine), whose parameters named `_res` the
// <resolv.h> that cpp-httplib pulls in would turn into a macro.
#include "extender.hpp"

#include <CLI/CLI.hpp>
#include <httplib.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "api_client.hpp"
#include "http.hpp"

namespace {
httplib::Server* g_server = nullptr;
extern "C" void on_signal(int) {
  if (g_server != nullptr) g_server->stop();
}

std::string read_file(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(std::string(flag) + ": cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

int main(int argc, char** argv) {
  using namespace gpusched::extender;
  CLI::App app{"gpusched-extender: gpusched's scheduling decisions as a Kubernetes scheduler extender"};
  std::string listen = "127.0.0.1:8888";
  std::string config_path;
  std::string api_server;
  std::string token_file;
  std::string ca_file;
  options opts;
  http_options h;
  app.add_option("--listen", listen, "HOST:PORT to serve on (port 0: any free port)");
  app.add_option("--config", config_path, "KubeSchedulerConfiguration with gpusched's profile")->required();
  app.add_option("--scheduler-name", opts.scheduler_name, "profile (schedulerName) of --config to use")->capture_default_str();
  app.add_option("--api-server", api_server, "Kubernetes API server URL: binds, and list+watch for NodeNames mode");
  app.add_option("--token-file", token_file, "bearer token for --api-server (a service account token)");
  app.add_option("--ca-file", ca_file, "CA certificate of an https --api-server");
  app.add_option("--max-body-bytes", opts.max_body_bytes, "largest request body accepted (larger: HTTP 400)")->capture_default_str();
  app.add_option("--threads", h.threads, "request threads (one per kept-alive connection being served)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--keep-alive-requests", h.keep_alive_max_requests, "requests served on one connection before it is closed")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_flag("--compress", h.compress, "gzip answers to clients that accept it (costs CPU; for slow links)");
  bool per_node = false;
  app.add_flag("--per-node-plugins", per_node,
               "decide /filter and /prioritize with the profile's per-node plugins, not the batch engine (same answers, slower)");
  CLI11_PARSE(app, argc, argv);
  opts.batch = !per_node;

  const auto colon = listen.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    try {
      std::size_t used = 0;
      port = std::stoi(listen.substr(colon + 1), &used);
      if (used != listen.size() - colon - 1 || port < 0 || port > 65535) port = -1;
    } catch (const std::exception&) {
      port = -1;
    }
  }
  if (port < 0) {
    std::fprintf(stderr, "gpusched-extender: --listen: '%s' is not HOST:PORT\n", listen.c_str());
    return 2;
  }
  const std::string host = listen.substr(0, colon);

  std::unique_ptr<extender> ext;
  std::unique_ptr<api_client> api;
  try {
    ext = std::make_unique<extender>(read_file(config_path, "--config"), config_path, opts);
    if (!ext->batch_refusal().empty()) {
      std::fprintf(stderr, "gpusched-extender: /filter and /prioritize use the per-node plugins: %s\n", ext->batch_refusal().c_str());
    } else if (!ext->per_node_plugins().empty()) {
      std::string names;
      for (const auto& n : ext->per_node_plugins()) names += (names.empty() ? "" : ", ") + n;
      std::fprintf(stderr, "gpusched-extender: plugins outside the batch engine, run node by node: %s\n", names.c_str());
    }
    if (!api_server.empty()) {
      std::string token;
      if (!token_file.empty()) {
        token = read_file(token_file, "--token-file");
        while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
      }
      api = std::make_unique<api_client>(api_server, token, ca_file);
      ext->set_binder([&a = *api](const gpusched::kube::kube_pod& p, const std::string& node,
                                  const std::map<std::string, std::string>& ann) { return a.bind(p, node, ann); });
      ext->set_pod_fetcher([&a = *api](const std::string& ns, const std::string& name) { return a.get_pod(ns, name); });
    } else if (!token_file.empty() || !ca_file.empty()) {
      std::fprintf(stderr, "gpusched-extender: --token-file and --ca-file need --api-server\n");
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpusched-extender: %s\n", e.what());
    return 1;
  }

  httplib::Server svr;
  serve(svr, *ext, h);

  if (port == 0) {
    port = svr.bind_to_any_port(host);
  } else if (!svr.bind_to_port(host, port)) {
    port = -1;
  }
  if (port <= 0) {
    std::fprintf(stderr, "gpusched-extender: cannot listen on %s\n", listen.c_str());
    return 1;
  }
  std::atomic<bool> stop{false};
  std::thread informers;
  if (api) informers = std::thread([&] { api->run_informers(*ext, stop); });
  g_server = &svr;
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::printf("listening on %s:%d\n", host.c_str(), port);
  std::fflush(stdout);
  svr.listen_after_bind();
  stop = true;
  if (informers.joinable()) informers.join();
  return 0;
}
