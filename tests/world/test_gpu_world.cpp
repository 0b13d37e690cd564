// The one-GPU world (sim/world/gpu_world.hpp): the seed's failure modes appear under time-slicing
// and not on an exclusive GPU, with outcomes worked by hand from the declared rules.
#include <doctest/doctest.h>

#include <array>
#include <span>

#include "gpusched/sim/world/gpu_world.hpp"

using namespace gpusched::sim::world;

namespace {

constexpr double v100_mib = 32768;

// ResNet-50 on a V100, FP32 (seed-world.yaml): batch 1 = 10.42 ms. One request per batch, a request
// every 25 ms, so that no request ever queues and every latency is one batch time.
replica_spec resnet_replica() {
  replica_spec r;
  r.process = {framework_memory::pytorch_caching, 1820, 0, 0.0};
  r.batches.ms = {{1, 10.42}, {8, 11.28}, {16, 15.64}, {32, 28.39}, {64, 53.33}};
  r.max_batch = 1;
  r.max_wait_ms = 0;
  r.startup_s = 0;
  r.arrival_interval_s = 0.025;
  return r;
}

sharing_params mode(sharing_mode m) {
  sharing_params p;
  p.mode = m;
  p.slice = {2.0, 0.1};
  return p;
}

}  // namespace

TEST_CASE("exclusive GPU: every request takes one solo batch") {
  const auto rep = resnet_replica();
  const auto r = run_one_gpu(mode(sharing_mode::exclusive), v100_mib, &rep, {}, 10.0);
  CHECK(r.served == 400);  // arrivals at 0, 0.025, ..., 9.975
  CHECK(r.dropped == 0);
  CHECK(r.oom_kills == 0);
  CHECK(r.latency_ms.quantile(0.99) == doctest::Approx(10.42).epsilon(0.01));
  CHECK(r.gpu_busy_s == doctest::Approx(400 * 0.01042));
}

TEST_CASE("time-slicing next to a trainer: P99 multiplied by k (Q + c) / Q = 2.1") {
  const auto rep = resnet_replica();
  const std::array<process_spec, 1> trainer{process_spec{framework_memory::pytorch_caching, 12000, 0, 0.0}};
  const auto r = run_one_gpu(mode(sharing_mode::time_slicing), v100_mib, &rep, trainer, 10.0);
  // Each batch runs at 2 / (2 x 2.1) of the GPU: 10.42 x 2.1 = 21.882 ms < 25 ms, so no queueing.
  CHECK(r.served == 400);
  CHECK(r.oom_kills == 0);
  CHECK(r.latency_ms.quantile(0.99) == doctest::Approx(21.882).epsilon(0.01));
  // The trainer keeps the GPU busy all the time except the switch gaps while both run.
  CHECK(r.gpu_busy_s == doctest::Approx(10.0 - 400 * 0.021882 * 0.1 / 2.1));
}

TEST_CASE("time-slicing past the replica's halved capacity: the queue grows and P99 explodes") {
  auto rep = resnet_replica();
  rep.arrival_interval_s = 0.015;  // 66.7/s, batches of 1: solo capacity 96/s, shared 45.7/s
  const std::array<process_spec, 1> trainer{process_spec{framework_memory::pytorch_caching, 12000, 0, 0.0}};
  const auto solo = run_one_gpu(mode(sharing_mode::exclusive), v100_mib, &rep, {}, 10.0);
  const auto shared = run_one_gpu(mode(sharing_mode::time_slicing), v100_mib, &rep, trainer, 10.0);
  // Alone: 10.42 ms < 15 ms, no queue. Shared: 21.882 ms > 15 ms: batches run back to back from 0,
  // request i ends at 21.882 (i + 1) ms, its latency 21.882 + 6.882 i ms. 456 end before 10 s
  // (457 x 21.882 > 10000); P99 is request floor(0.99 x 455) = 450: 21.882 + 6.882 x 450 = 3118.78 ms.
  CHECK(solo.latency_ms.quantile(0.99) == doctest::Approx(10.42).epsilon(0.01));
  CHECK(shared.served == 456);
  CHECK(shared.latency_ms.quantile(0.99) == doctest::Approx(3118.78).epsilon(0.01));
}

TEST_CASE("time-slicing, TF grab-all trainer first: the replica never starts and crash-loops") {
  auto rep = resnet_replica();
  rep.process.start_s = 1.0;
  const std::array<process_spec, 1> trainer{process_spec{framework_memory::tf_grab_all, 16384, 0, 0.0}};
  const auto r = run_one_gpu(mode(sharing_mode::time_slicing), v100_mib, &rep, trainer, 1000.0);
  // The trainer reserves 32768 - 0.05 x 32768, leaving 1638.4 MiB < 1820: every start of the
  // replica fails. Attempts at 1, 1 (immediate restart), 11, 31, 71, 151, 311, 611, 911; the next
  // would be at 1211.
  CHECK(r.oom_kills == 9);
  CHECK(r.served == 0);
  CHECK(r.dropped == 40000);  // every arrival of 0 .. 999.975
}

TEST_CASE("time-slicing, replica first: a burst's growth is OOM-killed, the restart fits") {
  auto rep = resnet_replica();
  rep.startup_s = 30;
  rep.process.grow_at_s = 2.01;
  rep.process.grown_mib = 3420;  // +1600 MiB: a larger batch's activations
  std::array<process_spec, 1> trainer{process_spec{framework_memory::tf_grab_all, 16384, 0, 1.0}};
  auto r = run_one_gpu(mode(sharing_mode::time_slicing), v100_mib, &rep, trainer, 60.0);
  // The replica starts at 0 (serving from 30 s). The trainer at 1 s reserves 30948 - 1547.4 = 29400.6; at 2.01 s the
  // replica asks 1600 more: 32820.6 > 32768.
  CHECK(r.oom_kills == 1);
  // Restart at 2.01 s (the first restart is immediate); 32768 - 29400.6 = 3367.4 free >= 1820: it
  // starts and serves from 32.01 s. Dropped: arrivals before 30 s (0 .. 29.975: 1200), plus those
  // of 30 .. 32.0 (81) = 1281. Served: 32.025 .. 59.975 = 1119, the last done at 59.9969 s.
  CHECK(r.dropped == 1281);
  CHECK(r.served == 1119);

  // gpusched's memory-accounted sharing caps the trainer at its request: no OOM, still time-sliced.
  trainer[0].limit_mib = 16384;
  r = run_one_gpu(mode(sharing_mode::memory_accounted), v100_mib, &rep, trainer, 60.0);
  CHECK(r.oom_kills == 0);
  CHECK(r.dropped == 1200);  // only the start-up
  CHECK(r.latency_ms.quantile(0.99) == doctest::Approx(21.882).epsilon(0.01));

  // Exclusive: the trainer cannot be on this GPU (it waits elsewhere); the growth fits.
  r = run_one_gpu(mode(sharing_mode::exclusive), v100_mib, &rep, {}, 60.0);
  CHECK(r.oom_kills == 0);
  CHECK(r.latency_ms.quantile(0.99) == doctest::Approx(10.42).epsilon(0.01));
}

TEST_CASE("dynamic batching: full batches back to back; a lone request waits max_wait_ms") {
  auto rep = resnet_replica();
  CHECK(rep.batches.at(12) == doctest::Approx(13.46));  // 11.28 + (15.64 - 11.28) x 4 / 8
  rep.max_batch = 8;
  rep.max_wait_ms = 100;
  rep.arrival_interval_s = 0.001;  // 1000/s
  auto r = run_one_gpu(mode(sharing_mode::exclusive), v100_mib, &rep, {}, 0.5);
  // The 8th request arrives at 7 ms: a batch of 8 (11.28 ms). 11 more arrive meanwhile, so every
  // next batch is full at once (709/s < 1000/s): batch k ends at 7 + 11.28 k ms; 43 end before 500.
  CHECK(r.served == 8 * 43);
  // A request every 30 ms: each waits 10 ms alone, then runs as a batch of 1: 20.42 ms.
  rep.arrival_interval_s = 0.030;
  rep.max_wait_ms = 10;
  r = run_one_gpu(mode(sharing_mode::exclusive), v100_mib, &rep, {}, 3.0);
  CHECK(r.served == 100);
  CHECK(r.latency_ms.quantile(0.0) == doctest::Approx(20.42).epsilon(0.01));
  CHECK(r.latency_ms.quantile(1.0) == doctest::Approx(20.42).epsilon(0.01));
}
