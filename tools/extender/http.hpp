// gpusched-extender's HTTP shell (cpp-httplib): the routes and the server's settings, shared by
// main.cpp and the loopback benchmark (benchmarks/bench_extender.cpp), so that the benchmark measures
// the path kube-scheduler's requests take.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <string>
#include <utility>

#include "extender.hpp"

namespace gpusched::extender {

struct http_options {
  int threads = 8;  // request threads: each holds one connection while it is kept alive
  // Requests served on one kept-alive connection before the server closes it. cpp-httplib's default
  // is 5: kube-scheduler's client then reconnects every 2.5 decisions (a TCP handshake, an accept
  // and a thread-pool hand-over each time). A bound still frees a thread now and then for
  // connections queued behind busy ones (one thread serves one connection until it closes).
  std::size_t keep_alive_max_requests = 1000;
  // gzip answers to clients that accept it. kube-scheduler's Go client asks for gzip on every request
  // (net/http's Transport sends "Accept-Encoding: gzip" unless DisableCompression, which
  // kube-scheduler's extender transport leaves off), and cpp-httplib then compresses every
  // application/json answer: at 5,000 names that is most of a decision's CPU time
  // (docs/benchmarks.md, "Extender at 5,000 names per request"). Off: answers go out as they are,
  // labelled "application/json; charset=utf-8", a type cpp-httplib does not compress.
  bool compress = false;
};

// Registers the verbs, /healthz and /metrics on svr and sets its options. The request body of a
// verb is read into a buffer kept by the serving thread (not a fresh std::string per request that
// grows 4 KiB at a time), and the answer's body is moved into the response, not copied.
inline void serve(httplib::Server& svr, extender& ext, const http_options& h) {
  const int threads = h.threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  // Bodies up to 4x the limit are read and answered 400 by the verbs; beyond that httplib answers 413.
  svr.set_payload_max_length(ext.max_body_bytes() * 4);
  // Answers go out at once: with Nagle's algorithm on, an answer written in two pieces (headers, then
  // body) waits for the client's delayed ACK, 40 ms on Linux, and decisions over one kept-alive
  // connection fell to about 15 per second.
  svr.set_tcp_nodelay(true);
  svr.set_keep_alive_max_count(h.keep_alive_max_requests);
  const char* const json_type = h.compress ? "application/json" : "application/json; charset=utf-8";
  auto verb = [&ext, json_type](answer (extender::*fn)(std::string_view)) {
    return [&ext, fn, json_type](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
      thread_local std::string body;
      body.clear();
      const auto keep = [](const char* data, std::size_t n) {
        body.append(data, n);
        return true;
      };
      // A multipart body goes through httplib's form parser, its parts dropped: the verb gets an
      // empty body, as when httplib read such a request into its form fields before the handler ran.
      const bool complete = req.is_multipart_form_data()
                                ? read([](const httplib::MultipartFormData&) { return true; },
                                       [](const char*, std::size_t) { return true; })
                                : read(keep);
      if (!complete) return;  // unreadable, cut off, or over the payload limit: httplib has set 400 or 413
      answer a = (ext.*fn)(body);
      if (body.capacity() > (std::size_t{4} << 20)) std::string().swap(body);  // a huge body is not kept
      res.status = a.status;
      res.body = std::move(a.body);
      res.set_header("Content-Type", json_type);
    };
  };
  svr.Post("/filter", verb(&extender::filter));
  svr.Post("/prioritize", verb(&extender::prioritize));
  svr.Post("/preempt", verb(&extender::preempt));
  svr.Post("/bind", verb(&extender::bind));
  svr.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  svr.Get("/metrics", [&ext](const httplib::Request&, httplib::Response& res) {
    res.set_content(ext.metrics_text(), "text/plain; version=0.0.4; charset=utf-8");
  });
}

}  // namespace gpusched::extender
