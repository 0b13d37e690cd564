// gpusched::cuda::batch_scorer: the batch engine's score matrix, per-pod normalisation and top-k
// on an NVIDIA GPU. nvcc only (this header is never included by gpusched.hpp).
//
// Every (pod, node) pair calls the same GPUSCHED_HD functions as the CPU engine and the per-pod
// plugins: batch_plugin<P>::fits / score (gpusched/batch/checks.hpp, scorers.hpp), hence the
// formulas of gpusched/scoring/formulas.hpp, tie_key and top_k_insert. Results equal the CPU
// engine's exactly (integer totals, the same candidates in the same order) when compiled with
// --fmad=false, so that no multiply-add is contracted where the CPU rounds twice.
//
// Two-phase, in the manner of CUTLASS's device adapters:
//   cuda::batch_scorer engine(profile, {.seed = 42});
//   if (auto s = engine.can_run(nodes, pods.size(), k); !s) { /* s.reason says why */ }
//   engine.prepare(nodes, stream);                  // uploads the node data; buffers are reused
//   std::size_t bytes = engine.workspace_bytes(pods.size(), k);
//   engine.top_k(pods, k, workspace, bytes, out, stream);   // or top_k(pods, k, out) to own it
// prepare() keeps a host-side CPU engine (the same per-node preparation) and uploads what it
// prepared; later calls re-upload only when the node table changed (apply / refresh).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpusched/batch/batch_scorer.hpp"
#include "gpusched/batch/node_table.hpp"
#include "gpusched/batch/plugin.hpp"
#include "gpusched/batch/pod_table.hpp"
#include "gpusched/batch/top_k.hpp"
#include "gpusched/config.hpp"
#include "gpusched/schedule/tie_break.hpp"
#include "gpusched/scoring/formulas.hpp"

namespace gpusched::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

// Whether a CUDA device is usable here, and why not.
struct status {
  bool ok = false;
  std::string reason;
  explicit operator bool() const noexcept { return ok; }
};

inline status device_status() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return {false, std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e)};
  if (count == 0) return {false, "no CUDA device"};
  return {true, {}};
}

// A device allocation that grows and is reused.
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~device_buffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  void* reserve(std::size_t bytes) {
    if (bytes > bytes_) {
      if (ptr_ != nullptr) check(cudaFree(ptr_), "cudaFree");
      ptr_ = nullptr;
      bytes_ = 0;
      check(cudaMalloc(&ptr_, bytes), "cudaMalloc");
      bytes_ = bytes;
    }
    return ptr_;
  }
  [[nodiscard]] void* get() const noexcept { return ptr_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// The k of the CUDA top-k is held in registers and shared memory: at most this many.
inline constexpr std::size_t max_k = 32;
inline constexpr unsigned block_nodes = 256;  // threads per block: one node each
inline constexpr unsigned block_pods = 16;    // pods per block, scored against the block's nodes

namespace detail {

// A minimal tuple usable in device code.
template <class... T>
struct dtuple;
template <>
struct dtuple<> {};
template <class H, class... T>
struct dtuple<H, T...> {
  H head;
  dtuple<T...> tail;
};
template <std::size_t I, class H, class... T>
GPUSCHED_HD auto& dget(dtuple<H, T...>& t) noexcept {
  if constexpr (I == 0) {
    return t.head;
  } else {
    return dget<I - 1>(t.tail);
  }
}
template <std::size_t I, class H, class... T>
GPUSCHED_HD const auto& dget(const dtuple<H, T...>& t) noexcept {
  if constexpr (I == 0) {
    return t.head;
  } else {
    return dget<I - 1>(t.tail);
  }
}

// Everything a kernel needs, passed by value.
template <class... K>
struct checks_of {};
template <class... S>
struct scores_of {};

template <class Checks, class Scores>
struct device_profile;
template <class... K, class... S>
struct device_profile<checks_of<K...>, scores_of<S...>> {
  dtuple<typename batch::batch_plugin<K>::node_view...> check_views;
  dtuple<typename batch::batch_plugin<S>::node_view...> score_views;
  dtuple<const typename batch::batch_plugin<K>::pod_args*...> check_args;  // per pod
  dtuple<const typename batch::batch_plugin<S>::pod_args*...> score_args;
  std::int32_t weights[sizeof...(S) == 0 ? 1 : sizeof...(S)];
  const std::uint64_t* pod_keys;
  const std::int32_t* norm_max;  // per pod and scorer, for normalising scorers
  std::uint64_t seed;
  std::uint32_t nodes;
  std::uint32_t pods;

  static constexpr std::size_t scorer_count = sizeof...(S);

  GPUSCHED_HD bool fits(std::uint32_t p, std::uint32_t n) const noexcept {
    return fits_impl(p, n, std::index_sequence_for<K...>{});
  }
  template <std::size_t... I>
  GPUSCHED_HD bool fits_impl(std::uint32_t p, std::uint32_t n, std::index_sequence<I...>) const noexcept {
    return (batch::batch_plugin<K>::fits(dget<I>(check_views), dget<I>(check_args)[p], n) && ... && true);
  }
  // The raw score of scorer I (no weight, no normalisation).
  template <std::size_t I, class Sc>
  GPUSCHED_HD std::int32_t raw(std::uint32_t p, std::uint32_t n) const noexcept {
    return batch::batch_plugin<Sc>::score(dget<I>(score_views), dget<I>(score_args)[p], n);
  }
  GPUSCHED_HD std::int32_t total(std::uint32_t p, std::uint32_t n) const noexcept {
    return total_impl(p, n, std::index_sequence_for<S...>{});
  }
  template <std::size_t... I>
  GPUSCHED_HD std::int32_t total_impl(std::uint32_t p, std::uint32_t n, std::index_sequence<I...>) const noexcept {
    std::int32_t t = 0;
    ((t += weights[I] * scored<I, S>(p, n)), ...);
    return t;
  }
  // As the CPU engine: normalising scorers through formula::default_normalized in doubles.
  template <std::size_t I, class Sc>
  GPUSCHED_HD std::int32_t scored(std::uint32_t p, std::uint32_t n) const noexcept {
    const std::int32_t r = raw<I, Sc>(p, n);
    if constexpr (batch::batch_plugin<Sc>::normalize == batch::normalization::none) {
      return r;
    } else {
      const std::int32_t m = norm_max[static_cast<std::size_t>(p) * scorer_count + I];
      const double max_d = static_cast<double>(m);
      const formula::reciprocal_division<double> div{m == 0 ? 0.0 : 1.0 / max_d};
      return static_cast<std::int32_t>(formula::default_normalized(static_cast<double>(r), max_d, static_cast<double>(max_node_score),
                                                                   batch::batch_plugin<Sc>::normalize == batch::normalization::reverse, div));
    }
  }
  template <std::size_t... I>
  GPUSCHED_HD void raw_all(std::uint32_t p, std::uint32_t n, std::int32_t* out, std::index_sequence<I...>) const noexcept {
    ((out[I] = batch::batch_plugin<S>::normalize == batch::normalization::none ? 0 : raw<I, S>(p, n)), ...);
  }
};

// Candidate order with keys computed only when scores tie.
__device__ inline bool ranks_first(std::int32_t sa, std::uint32_t na, std::int32_t sb, std::uint32_t nb, std::uint64_t seed,
                                   std::uint64_t pod_key) {
  if (sa != sb) return sa > sb;
  if (sa < 0) return na < nb;
  const std::uint64_t ka = tie_key(seed, pod_key, na), kb = tie_key(seed, pod_key, nb);
  return ranks_before(sa, ka, na, sb, kb, nb);
}

// Per normalising scorer, the highest raw score of each pod over its feasible nodes.
template <class DP>
__global__ void normalisation_max_kernel(DP prof, std::int32_t* norm_max) {
  const std::uint32_t n = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t p0 = blockIdx.y * block_pods;
  constexpr std::size_t S = DP::scorer_count;
  for (std::uint32_t p = p0; p < p0 + block_pods && p < prof.pods; ++p) {
    std::int32_t raw[S == 0 ? 1 : S] = {};
    if (n < prof.nodes && prof.fits(p, n)) prof.raw_all(p, n, raw, std::make_index_sequence<S>{});
    for (std::size_t s = 0; s < S; ++s) {
      std::int32_t v = raw[s];
      for (int off = 16; off > 0; off >>= 1) v = max(v, __shfl_down_sync(0xffffffffu, v, off));
      if ((threadIdx.x & 31) == 0 && v > 0) atomicMax(&norm_max[static_cast<std::size_t>(p) * S + s], v);
    }
  }
}

// Each block: block_nodes nodes x block_pods pods. Per pod, the block's k best nodes go to
// partial[(pod * tiles + tile) * k ...] (score -1 past the last), and the count of fitting nodes
// is added to feasible[pod].
template <class DP>
__global__ void tile_top_k_kernel(DP prof, std::uint32_t k, std::uint32_t tiles, batch::candidate* partial, std::uint32_t* feasible,
                                  std::int32_t* matrix) {
  __shared__ std::int32_t warp_score[block_nodes / 32];
  __shared__ std::uint32_t warp_node[block_nodes / 32];
  __shared__ std::int32_t win_score;
  __shared__ std::uint32_t win_node;
  const std::uint32_t tile = blockIdx.x;
  const std::uint32_t n = tile * block_nodes + threadIdx.x;
  const std::uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::uint32_t p0 = blockIdx.y * block_pods;
  for (std::uint32_t p = p0; p < p0 + block_pods && p < prof.pods; ++p) {
    const std::uint64_t pod_key = prof.pod_keys[p];
    std::int32_t mine = -1;
    if (n < prof.nodes && prof.fits(p, n)) mine = prof.total(p, n);
    if (matrix != nullptr && n < prof.nodes) matrix[static_cast<std::size_t>(p) * prof.nodes + n] = mine;
    const int fit_count = __syncthreads_count(mine >= 0);
    if (threadIdx.x == 0 && fit_count > 0) atomicAdd(&feasible[p], static_cast<std::uint32_t>(fit_count));
    if (partial == nullptr) continue;
    for (std::uint32_t r = 0; r < k; ++r) {
      std::int32_t s = mine;
      std::uint32_t node = n;
      for (int off = 16; off > 0; off >>= 1) {
        const std::int32_t os = __shfl_down_sync(0xffffffffu, s, off);
        const std::uint32_t on = __shfl_down_sync(0xffffffffu, node, off);
        if (ranks_first(os, on, s, node, prof.seed, pod_key)) {
          s = os;
          node = on;
        }
      }
      if (lane == 0) {
        warp_score[warp] = s;
        warp_node[warp] = node;
      }
      __syncthreads();
      if (threadIdx.x == 0) {
        std::int32_t bs = warp_score[0];
        std::uint32_t bn = warp_node[0];
        for (unsigned w = 1; w < block_nodes / 32; ++w) {
          if (ranks_first(warp_score[w], warp_node[w], bs, bn, prof.seed, pod_key)) {
            bs = warp_score[w];
            bn = warp_node[w];
          }
        }
        win_score = bs;
        win_node = bn;
        batch::candidate c{bs, bn, bs >= 0 ? tie_key(prof.seed, pod_key, bn) : 0};
        if (bs < 0) c = batch::candidate{};
        partial[(static_cast<std::size_t>(p) * tiles + tile) * k + r] = c;
      }
      __syncthreads();
      if (win_score < 0) {
        for (std::uint32_t rest = r + 1; rest < k && threadIdx.x == 0; ++rest) {
          partial[(static_cast<std::size_t>(p) * tiles + tile) * k + rest] = batch::candidate{};
        }
        break;
      }
      if (win_node == n) mine = -1;  // taken: out of the next rounds
      __syncthreads();
    }
  }
}

// One thread per pod: folds its tiles' lists into its k best (top_k_insert, as the CPU engine).
template <class Unused = void>  // a template, so that a header can define it for many translation units
__global__ void merge_kernel(const batch::candidate* partial, std::uint32_t pods, std::uint32_t tiles, std::uint32_t k,
                                    batch::candidate* out, std::uint32_t* out_count) {
  const std::uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= pods) return;
  batch::candidate list[max_k];
  std::uint32_t size = 0;
  for (std::uint32_t t = 0; t < tiles; ++t) {
    const batch::candidate* l = partial + (static_cast<std::size_t>(p) * tiles + t) * k;
    for (std::uint32_t r = 0; r < k && l[r].score >= 0; ++r) batch::top_k_insert(list, k, size, l[r]);
  }
  for (std::uint32_t r = 0; r < size; ++r) out[static_cast<std::size_t>(p) * k + r] = list[r];
  out_count[p] = size;
}

}  // namespace detail

struct options {
  std::uint64_t seed = 0;  // tie-break seed, as batch_options::seed and schedule_options::seed
};

template <class Profile>
class batch_scorer;

template <class... K, class... S, class Selector>
class batch_scorer<static_profile<check_list<K...>, score_list<S...>, Selector>> {
 public:
  using profile_type = static_profile<check_list<K...>, score_list<S...>, Selector>;
  using host_engine = batch::batch_scorer<profile_type>;
  using device_profile = detail::device_profile<detail::checks_of<K...>, detail::scores_of<S...>>;
  static constexpr std::size_t scorer_count = sizeof...(S);

  explicit batch_scorer(profile_type profile, options opts = {})
      : host_(std::move(profile), batch::batch_options{1, opts.seed, 512, 8}), opts_(opts) {}

  // Phase 1: whether this engine can run the job here.
  [[nodiscard]] status can_run(const batch::node_table& nodes, std::size_t pods, std::size_t k) const {
    if (status s = device_status(); !s) return s;
    if (k == 0 || k > max_k) return {false, "k must be within 1.." + std::to_string(max_k)};
    if (nodes.size() == 0 || nodes.size() > 0x7fffffffU) return {false, "the node table must hold 1..2^31 nodes"};
    if (pods > 0x7fffffffU) return {false, "at most 2^31 pods"};
    std::size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return {false, "cudaMemGetInfo failed"};
    const std::size_t need = node_bytes(nodes) + pod_bytes(pods) + workspace_bytes(pods, nodes.size(), k);
    if (need > free_b) return {false, "needs " + std::to_string(need) + " bytes of device memory, " + std::to_string(free_b) + " free"};
    return {true, {}};
  }
  // Device memory a top_k call needs beyond the engine's own buffers.
  [[nodiscard]] static std::size_t workspace_bytes(std::size_t pods, std::size_t nodes, std::size_t k) noexcept {
    const std::size_t tiles = (nodes + block_nodes - 1) / block_nodes;
    return align(pods * tiles * k * sizeof(batch::candidate)) + align(pods * k * sizeof(batch::candidate)) +
           2 * align(pods * sizeof(std::uint32_t)) + align(pods * (scorer_count == 0 ? 1 : scorer_count) * sizeof(std::int32_t));
  }
  [[nodiscard]] std::size_t workspace_bytes(std::size_t pods, std::size_t k) const noexcept {
    return workspace_bytes(pods, prepared_nodes_, k);
  }

  // Phase 2: node data to the device (all of it the first time and after the table changed).
  void prepare(const batch::node_table& nodes, cudaStream_t stream = nullptr) {
    if (host_.table() != &nodes) {
      host_.prepare(nodes);
      uploaded_revision_ = ~std::uint32_t{0};
    }
    host_.sync();
    if (uploaded_revision_ == nodes.revision() && prepared_nodes_ == nodes.size()) return;
    std::map<const void*, void*> seen;
    auto upload = [&](const auto& prep) {
      const auto cols = prep.columns();
      std::array<const void*, std::tuple_size_v<std::decay_t<decltype(cols)>>> dev{};
      for (std::size_t i = 0; i < cols.size(); ++i) {
        auto it = seen.find(cols[i].data);
        if (it == seen.end()) {
          device_buffer& b = column_buffer(cols[i].data);
          void* d = b.reserve(std::max<std::size_t>(cols[i].bytes(), 1));
          if (cols[i].bytes() > 0) check(cudaMemcpyAsync(d, cols[i].data, cols[i].bytes(), cudaMemcpyHostToDevice, stream), "copy node column");
          it = seen.emplace(cols[i].data, d).first;
        }
        dev[i] = it->second;
      }
      return prep.view_with(dev);
    };
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((detail::dget<I>(dp_.check_views) = upload(std::get<I>(host_.check_prepared()))), ...);
    }(std::index_sequence_for<K...>{});
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((detail::dget<I>(dp_.score_views) = upload(std::get<I>(host_.score_prepared()))), ...);
    }(std::index_sequence_for<S...>{});
    for (std::size_t i = 0; i < scorer_count; ++i) dp_.weights[i] = host_.weight(i);
    dp_.seed = opts_.seed;
    dp_.nodes = static_cast<std::uint32_t>(nodes.size());
    prepared_nodes_ = nodes.size();
    uploaded_revision_ = nodes.revision();
  }

  // The k best nodes of every pod into device memory: out (pods x k candidates, best first),
  // out_count (pods), feasible (pods). Asynchronous on `stream`; workspace from workspace_bytes().
  void top_k_async(const batch::pod_table& pods, std::size_t k, void* workspace, std::size_t workspace_size,
                   batch::candidate* out, std::uint32_t* out_count, std::uint32_t* feasible, cudaStream_t stream = nullptr) {
    launch(pods, k, workspace, workspace_size, out, out_count, feasible, nullptr, stream);
  }

  // Convenience: owns the workspace and output buffers (reused across calls), copies the result
  // into `result` and waits for the stream.
  void top_k(const batch::pod_table& pods, std::size_t k, batch::top_k_result& result, cudaStream_t stream = nullptr) {
    const std::size_t P = pods.size();
    void* ws = workspace_.reserve(std::max<std::size_t>(workspace_bytes(P, k), 1));
    auto* out = static_cast<batch::candidate*>(out_.reserve(std::max<std::size_t>(P * k * sizeof(batch::candidate), 1)));
    auto* cnt = static_cast<std::uint32_t*>(count_.reserve(std::max<std::size_t>(2 * P * sizeof(std::uint32_t), 1)));
    top_k_async(pods, k, ws, workspace_bytes(P, k), out, cnt, cnt + P, stream);
    result.reset(P, k);
    host_list_.resize(P * k);
    host_count_.resize(2 * P);
    if (P > 0) {
      check(cudaMemcpyAsync(host_list_.data(), out, P * k * sizeof(batch::candidate), cudaMemcpyDeviceToHost, stream), "copy top-k");
      check(cudaMemcpyAsync(host_count_.data(), cnt, 2 * P * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream), "copy counts");
    }
    check(cudaStreamSynchronize(stream), "top_k");
    for (std::size_t p = 0; p < P; ++p) {
      result.count(p) = host_count_[p];
      result.feasible_count(p) = host_count_[P + p];
      std::copy(host_list_.begin() + static_cast<std::ptrdiff_t>(p * k), host_list_.begin() + static_cast<std::ptrdiff_t>(p * k + host_count_[p]),
                result.list(p));
    }
  }

  // The full score matrix (pods x nodes, -1: does not fit), copied to the host.
  void scores(const batch::pod_table& pods, batch::score_matrix& m, cudaStream_t stream = nullptr) {
    const std::size_t P = pods.size(), N = prepared_nodes_;
    void* ws = workspace_.reserve(std::max<std::size_t>(workspace_bytes(P, 1), 1));
    auto* cnt = static_cast<std::uint32_t*>(count_.reserve(std::max<std::size_t>(2 * P * sizeof(std::uint32_t), 1)));
    auto* dm = static_cast<std::int32_t*>(matrix_.reserve(std::max<std::size_t>(P * N * sizeof(std::int32_t), 1)));
    launch(pods, 1, ws, workspace_bytes(P, 1), nullptr, cnt, cnt + P, dm, stream);
    m.resize(static_cast<Eigen::Index>(P), static_cast<Eigen::Index>(N));
    if (P > 0) check(cudaMemcpyAsync(m.data(), dm, P * N * sizeof(std::int32_t), cudaMemcpyDeviceToHost, stream), "copy matrix");
    check(cudaStreamSynchronize(stream), "scores");
  }

  // Device memory the engine holds between calls (node columns, pod arguments, owned outputs).
  [[nodiscard]] std::size_t device_bytes() const noexcept {
    std::size_t b = workspace_.bytes() + out_.bytes() + count_.bytes() + matrix_.bytes() + keys_.bytes();
    for (const auto& [h, buf] : columns_) b += buf.bytes();
    for (const auto& buf : pod_args_) b += buf.bytes();
    return b;
  }
  [[nodiscard]] const host_engine& host() const noexcept { return host_; }

 private:
  static constexpr std::size_t align(std::size_t b) noexcept { return (b + 255) / 256 * 256; }

  static std::size_t node_bytes(const batch::node_table& t) noexcept { return t.bytes() + 128 * t.size(); }
  static std::size_t pod_bytes(std::size_t pods) noexcept { return pods * (8 + 64 * (sizeof...(K) + sizeof...(S))); }

  device_buffer& column_buffer(const void* host) { return columns_[host]; }

  // Pod arguments per plugin to the device.
  void upload_pods(const batch::pod_table& pods, cudaStream_t stream) {
    const std::size_t P = pods.size();
    pod_args_.resize(sizeof...(K) + sizeof...(S));
    std::size_t slot = 0;
    auto upload = [&](auto make) {
      using args_t = std::decay_t<decltype(make(std::size_t{0}))>;
      auto& staging = staging_[slot];
      staging.resize(std::max<std::size_t>(P * sizeof(args_t), 1));
      for (std::size_t p = 0; p < P; ++p) {
        const args_t a = make(p);
        std::memcpy(staging.data() + p * sizeof(args_t), &a, sizeof(args_t));
      }
      void* d = pod_args_[slot].reserve(std::max<std::size_t>(P * sizeof(args_t), 1));
      if (P > 0) check(cudaMemcpyAsync(d, staging.data(), P * sizeof(args_t), cudaMemcpyHostToDevice, stream), "copy pod arguments");
      ++slot;
      return static_cast<const args_t*>(d);
    };
    staging_.resize(sizeof...(K) + sizeof...(S));
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((detail::dget<I>(dp_.check_args) =
            upload([&](std::size_t p) { return std::get<I>(host_.make_check_args(pods, p)); })),
       ...);
    }(std::index_sequence_for<K...>{});
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((detail::dget<I>(dp_.score_args) =
            upload([&](std::size_t p) { return std::get<I>(host_.make_score_args(pods, p)); })),
       ...);
    }(std::index_sequence_for<S...>{});
    auto* keys = static_cast<std::uint64_t*>(keys_.reserve(std::max<std::size_t>(P * sizeof(std::uint64_t), 1)));
    if (P > 0) check(cudaMemcpyAsync(keys, pods.tie_keys().data(), P * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream), "copy keys");
    dp_.pod_keys = keys;
    dp_.pods = static_cast<std::uint32_t>(P);
  }

  void launch(const batch::pod_table& pods, std::size_t k, void* workspace, std::size_t workspace_size, batch::candidate* out,
              std::uint32_t* out_count, std::uint32_t* feasible, std::int32_t* matrix, cudaStream_t stream) {
    if (host_.table() == nullptr) throw std::logic_error("cuda::batch_scorer: call prepare(node_table) first");
    prepare(*host_.table(), stream);  // re-uploads if the table changed
    if (k == 0 || k > max_k) throw invalid_argument_error("top_k.k", "must be within 1..32 on the CUDA engine");
    const std::size_t P = pods.size(), N = prepared_nodes_;
    if (workspace_size < workspace_bytes(P, k)) throw invalid_argument_error("workspace", "smaller than workspace_bytes()");
    if (pods.gpu_models_seen() != host_.table()->gpu_models().size()) {
      throw invalid_argument_error("pod_table", "was built before the node table learned new GPU models; rebuild it");
    }
    if (P == 0) return;
    upload_pods(pods, stream);
    const std::size_t tiles = (N + block_nodes - 1) / block_nodes;
    auto* bytes = static_cast<unsigned char*>(workspace);
    auto* partial = reinterpret_cast<batch::candidate*>(bytes);
    bytes += align(P * tiles * k * sizeof(batch::candidate));
    bytes += align(P * k * sizeof(batch::candidate));  // reserved (outputs may live in the workspace)
    bytes += 2 * align(P * sizeof(std::uint32_t));
    auto* norm_max = reinterpret_cast<std::int32_t*>(bytes);
    check(cudaMemsetAsync(feasible, 0, P * sizeof(std::uint32_t), stream), "clear counts");
    dp_.norm_max = norm_max;
    const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>((P + block_pods - 1) / block_pods));
    if constexpr (host_engine::normalizes) {
      check(cudaMemsetAsync(norm_max, 0, P * scorer_count * sizeof(std::int32_t), stream), "clear maxima");
      detail::normalisation_max_kernel<<<grid, block_nodes, 0, stream>>>(dp_, norm_max);
      check(cudaGetLastError(), "normalisation_max_kernel");
    }
    detail::tile_top_k_kernel<<<grid, block_nodes, 0, stream>>>(dp_, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(tiles),
                                                                out == nullptr ? nullptr : partial, feasible, matrix);
    check(cudaGetLastError(), "tile_top_k_kernel");
    if (out != nullptr) {
      detail::merge_kernel<><<<static_cast<unsigned>((P + 127) / 128), 128, 0, stream>>>(partial, static_cast<std::uint32_t>(P),
                                                                                      static_cast<std::uint32_t>(tiles),
                                                                                      static_cast<std::uint32_t>(k), out, out_count);
      check(cudaGetLastError(), "merge_kernel");
    }
  }

  host_engine host_;
  options opts_;
  device_profile dp_{};
  std::map<const void*, device_buffer> columns_;
  std::vector<device_buffer> pod_args_;
  std::vector<std::vector<unsigned char>> staging_;
  device_buffer keys_, workspace_, out_, count_, matrix_;
  std::vector<batch::candidate> host_list_;
  std::vector<std::uint32_t> host_count_;
  std::size_t prepared_nodes_ = 0;
  std::uint32_t uploaded_revision_ = ~std::uint32_t{0};
};

template <class Profile>
batch_scorer<Profile> make_batch_scorer(Profile profile, options opts = {}) {
  return batch_scorer<Profile>(std::move(profile), opts);
}

}  // namespace gpusched::cuda
