// gpusched-extender's side of the Kubernetes API server: Binding POSTs, pod GETs, and the list+watch
// of nodes, pods and ModelJobs (ai.tencent.com/v1, deploy/modeljob-crd.yaml) that keeps the
// extender's state in NodeNames (nodeCacheCapable) mode.
//
// List+watch as client-go's reflector does it (k8s.io/client-go tools/cache/reflector.go): list,
// then watch from the list's resourceVersion; follow resourceVersion through events and bookmarks;
// on 410 Gone (an ERROR event with code 410, or the HTTP status) list again; on a dropped or failed
// connection reconnect from the last resourceVersion after a back-off (100 ms doubling to 5 s, reset
// by the next good event).
#pragma once

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "extender.hpp"

namespace gpusched::extender {

class api_client {
 public:
  // `url` is scheme://host:port (https needs --ca-file or an empty one to skip verification).
  api_client(std::string url, std::string token, std::string ca_file = {})
      : url_(std::move(url)), token_(std::move(token)), ca_file_(std::move(ca_file)) {}

  // POST /api/v1/namespaces/{ns}/pods/{name}/binding; the API server copies the Binding's
  // annotations onto the pod (kubernetes pkg/registry/core/pod/storage/storage.go,
  // setPodNodeAndMetadata). Returns an error text, empty on success.
  std::string bind(const kube::kube_pod& p, const std::string& node, const std::map<std::string, std::string>& annotations) const {
    json meta{{"name", p.name}, {"namespace", p.namespace_}};
    if (!p.uid.empty()) meta["uid"] = p.uid;
    if (!annotations.empty()) meta["annotations"] = annotations;
    const json body{{"apiVersion", "v1"}, {"kind", "Binding"}, {"metadata", meta},
                    {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
    auto cli = client();
    const auto res = cli->Post("/api/v1/namespaces/" + p.namespace_ + "/pods/" + p.name + "/binding", headers(), body.dump(),
                               "application/json");
    if (!res) return "API server unreachable: " + httplib::to_string(res.error());
    if (res->status != 201 && res->status != 200) return "API server answered " + std::to_string(res->status) + ": " + res->body.substr(0, 300);
    return {};
  }

  std::optional<kube::kube_pod> get_pod(const std::string& ns, const std::string& name) const {
    auto cli = client();
    const auto res = cli->Get("/api/v1/namespaces/" + ns + "/pods/" + name, headers());
    if (!res || res->status != 200) return std::nullopt;
    try {
      return kube::translate_pod(json::parse(res->body));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpusched-extender: pod %s/%s: %s\n", ns.c_str(), name.c_str(), e.what());
      return std::nullopt;
    }
  }

  enum class kind { nodes, pods, modeljobs };

  // Runs the node, pod and ModelJob informers until `stop`; each in its own thread.
  void run_informers(extender& ext, const std::atomic<bool>& stop) const {
    std::thread nodes([&] { informer(ext, stop, kind::nodes); });
    std::thread jobs([&] { informer(ext, stop, kind::modeljobs); });
    informer(ext, stop, kind::pods);
    nodes.join();
    jobs.join();
  }

 private:
  std::unique_ptr<httplib::Client> client() const {
    auto c = std::make_unique<httplib::Client>(url_);
    if (!ca_file_.empty()) c->set_ca_cert_path(ca_file_.c_str());
    c->set_connection_timeout(std::chrono::seconds(5));
    c->set_read_timeout(std::chrono::seconds(30));
    return c;
  }
  httplib::Headers headers() const {
    httplib::Headers h{{"Accept", "application/json"}};
    if (!token_.empty()) h.emplace("Authorization", "Bearer " + token_);
    return h;
  }

  // One kind's reflector loop.
  void informer(extender& ext, const std::atomic<bool>& stop, kind what) const {
    const std::string path = what == kind::nodes ? "/api/v1/nodes"
                             : what == kind::pods ? "/api/v1/pods"
                                                   : "/apis/" + std::string(kube::names::modeljob_group) + "/v1/modeljobs";
    std::string rv;
    bool need_list = true;
    auto backoff = std::chrono::milliseconds(100);
    const auto wait = [&] {
      for (auto t = std::chrono::milliseconds(0); t < backoff && !stop; t += std::chrono::milliseconds(20)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    };
    while (!stop) {
      if (need_list) {
        auto cli = client();
        const auto res = cli->Get(path, headers());
        if (!res || res->status != 200) {
          std::fprintf(stderr, "gpusched-extender: list %s failed (%s)\n", path.c_str(),
                       res ? std::to_string(res->status).c_str() : httplib::to_string(res.error()).c_str());
          wait();
          continue;
        }
        try {
          const json list = json::parse(res->body);
          rv = list.at("metadata").value("resourceVersion", "");
          apply_list(ext, list, what);
          ext.metrics().watch_event(true);
          need_list = false;
          backoff = std::chrono::milliseconds(100);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "gpusched-extender: list %s: %s\n", path.c_str(), e.what());
          wait();
          continue;
        }
      }
      // Watch from rv; events are one JSON object per line.
      std::string buffer;
      bool gone = false;
      auto cli = client();
      const auto res = cli->Get(
          path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv, headers(),
          [&](const char* data, std::size_t n) {
            buffer.append(data, n);
            for (std::size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
              const std::string line = buffer.substr(0, nl);
              buffer.erase(0, nl + 1);
              if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
              if (!apply_event(ext, line, what, rv)) {
                gone = true;
                return false;
              }
              backoff = std::chrono::milliseconds(100);
            }
            return !stop.load();
          });
      if (res && res->status == 410) gone = true;
      if (gone) {
        need_list = true;  // resourceVersion too old: list again (410 Gone)
        continue;
      }
      if (stop) break;
      if (!res || res->status != 200) {
        wait();  // connection refused, dropped or read timeout: reconnect from rv
      }
    }
  }

  // A ModelJob's key ("namespace/name") and fields; throws invalid_argument_error naming the path.
  static std::pair<std::string, kube::modeljob_fields> modeljob_of(const json& obj, const std::string& path) {
    const kube::json_at meta = kube::json_at(obj, path).at("metadata");
    std::string ns = meta.get("namespace") ? meta.at("namespace").str() : std::string("default");
    return {ns + "/" + meta.at("name").str(), kube::parse_modeljob(obj, path)};
  }

  static void apply_list(extender& ext, const json& list, kind what) {
    const auto& items = list.at("items");
    if (what == kind::modeljobs) {
      std::unordered_map<std::string, kube::modeljob_fields> jobs;
      for (std::size_t i = 0; i < items.size(); ++i) {
        try {
          jobs.insert(modeljob_of(items[i], "items[" + std::to_string(i) + "]"));
        } catch (const invalid_argument_error& e) {
          std::fprintf(stderr, "gpusched-extender: ModelJob left out: %s\n", e.what());
        }
      }
      ext.replace_modeljobs(std::move(jobs));
    } else if (what == kind::nodes) {
      std::vector<kube::kube_node> ns;
      for (std::size_t i = 0; i < items.size(); ++i) {
        try {
          ns.push_back(kube::translate_node(items[i], "items[" + std::to_string(i) + "]"));
        } catch (const invalid_argument_error& e) {
          std::fprintf(stderr, "gpusched-extender: node left out: %s\n", e.what());
        }
      }
      ext.replace_nodes(std::move(ns));
    } else {
      std::vector<kube::kube_pod> ps;
      for (std::size_t i = 0; i < items.size(); ++i) {
        try {
          ps.push_back(kube::translate_pod(items[i], nullptr, "items[" + std::to_string(i) + "]"));
        } catch (const invalid_argument_error& e) {
          std::fprintf(stderr, "gpusched-extender: pod left out: %s\n", e.what());
        }
      }
      ext.replace_pods(ps);
    }
  }

  // Applies one watch event; false on 410 Gone.
  static bool apply_event(extender& ext, const std::string& line, kind what, std::string& rv) {
    try {
      const json ev = json::parse(line);
      const std::string type = ev.at("type").get<std::string>();
      const json& obj = ev.at("object");
      if (type == "ERROR") {
        if (obj.value("code", 0) == 410) return false;
        std::fprintf(stderr, "gpusched-extender: watch error: %s\n", obj.dump().c_str());
        return true;
      }
      if (obj.contains("metadata") && obj["metadata"].contains("resourceVersion")) rv = obj["metadata"]["resourceVersion"].get<std::string>();
      if (type == "BOOKMARK") return true;
      const bool deleted = type == "DELETED";
      if (what == kind::modeljobs) {
        const auto [key, fields] = modeljob_of(obj, "object");
        ext.modeljob_event(key, fields, deleted);
      } else if (what == kind::nodes) {
        if (deleted) {
          ext.remove_node(obj.at("metadata").at("name").get<std::string>());
        } else {
          ext.upsert_node(kube::translate_node(obj, "object"));
        }
      } else {
        ext.pod_event(kube::translate_pod(obj, nullptr, "object"), deleted);
      }
      ext.metrics().watch_event(false);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpusched-extender: watch event left out: %s\n", e.what());
    }
    return true;
  }

  std::string url_;
  std::string token_;
  std::string ca_file_;
};

}  // namespace gpusched::extender
