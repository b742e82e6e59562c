// The combining policy on the CUDA backend (G-Charm sections 3.1-3.2), on one GPU: the host loop of
// gpulb/gcharm/request_loop.hpp with this GPU as its device. Each launch slot is a stream with
// its own buffers, so the copies of one combined request overlap the kernel of another:
//   one copy in (tasks, index buffer, cache slots, items: packed in pinned memory, one memcpy),
//   reuse: a scatter of the new items into their cache slots,
//   the outputs zeroed, request_kernel (a block per request), one copy of the outputs back.
// Events around each stage time the transfers and the kernel apart.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/memory.hpp"
#include "gpulb/gcharm/request_loop.hpp"
#include "gpulb/kernels/detail/single_gpu_run.cuh"
#include "gpulb/kernels/detail/watchdog.hpp"
#include "gpulb/kernels/request_kernels.cuh"
#include "gpulb/policies/combining.hpp"
#include "gpulb/trace_budget.hpp"

namespace gpulb::kernels {
namespace detail {

// A timing event (cudaEventCreate with timing, unlike cuda::Event).
class TimingEvent {
 public:
  TimingEvent() { GPULB_CUDA_TRY(cudaEventCreate(&e_)); }
  TimingEvent(const TimingEvent&) = delete;
  TimingEvent& operator=(const TimingEvent&) = delete;
  ~TimingEvent() { cudaEventDestroy(e_); }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

inline std::uint64_t elapsed_ns(const TimingEvent& from, const TimingEvent& to) {
  float ms = 0;
  GPULB_CUDA_TRY(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return static_cast<std::uint64_t>(static_cast<double>(ms) * 1e6);
}

// The session's host track, clock and watchdog, for the request loop.
class SessionHost : public gcharm::RequestHost {
 public:
  SessionHost(GpuSession& s, Watchdog& watchdog) : s_(s), watchdog_(watchdog) {}
  void record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) override {
    s_.host_record(kind, arg, aux);
  }
  std::uint64_t now_ns() const override { return s_.now_ns(); }
  void tick(std::uint64_t progress, const std::function<std::string()>& state) override {
    watchdog_.check(progress, state);
  }

 private:
  GpuSession& s_;
  Watchdog& watchdog_;
};

template <class Body>
class CombiningGpu : public gcharm::RequestDevice {
 public:
  CombiningGpu(GpuSession& s, const ExecPlan& plan,
               const policies::RequestTransferOptions& transfer, const Body& body,
               Watchdog& watchdog, std::uint32_t segments)
      : s_(s),
        plan_(plan),
        transfer_(transfer),
        body_(body),
        watchdog_(watchdog),
        item_bytes_(plan.requests->item_bytes),
        segments_(segments) {
    resident_ = persistent_grid(reinterpret_cast<const void*>(&request_kernel<Body>), s.device(),
                                plan.block_size, 0)
                    .blocks;
    for (std::uint32_t k = 0; k < transfer.in_flight; ++k) {
      slots_.push_back(std::make_unique<Slot>());
      watchdog_.watch(slots_.back()->stream.get());
    }
  }

  std::uint32_t launch_slots() const override { return static_cast<std::uint32_t>(slots_.size()); }
  std::uint32_t resident_blocks() const override { return resident_; }

  gcharm::DeviceAreas prepare(std::uint32_t k, const gcharm::CombinedRequest& c) override {
    Slot& slot = *slots_[k];
    // Layout of the one copy in: tasks | index buffer | item slots | items (16-byte aligned).
    slot.tasks_at = 0;
    slot.slot_lists_at = c.tasks.size() * sizeof(Task);
    slot.upload_slots_at = slot.slot_lists_at + c.slot_lists.size() * 4;
    slot.items_at = (slot.upload_slots_at + c.upload_slots.size() * 4 + 15) / 16 * 16;
    slot.bytes_in = slot.items_at + c.upload_items.size();
    take_buffers(k, slot.bytes_in, c.output_bytes);
    grow(slot.staging, slot.bytes_in);
    grow(slot.in, slot.bytes_in);
    grow(slot.out, c.output_bytes);
    grow(slot.out_host, c.output_bytes);
    if (gcharm::uses_cache(c.mode) && cache_.size() == 0) {
      cache_ = cuda::DeviceBuffer<std::byte>(std::size_t{transfer_.cache_items} * item_bytes_);
    }
    const auto base = reinterpret_cast<std::uintptr_t>(slot.in.get());
    return {reinterpret_cast<std::uintptr_t>(cache_.get()), base + slot.items_at,
            base + slot.slot_lists_at, reinterpret_cast<std::uintptr_t>(slot.out.get())};
  }

  void submit(std::uint32_t k, gcharm::CombinedRequest& c) override {
    Slot& slot = *slots_[k];
    slot.busy = true;
    std::byte* staging = slot.staging.host();
    std::memcpy(staging + slot.tasks_at, c.tasks.data(), c.tasks.size() * sizeof(Task));
    std::memcpy(staging + slot.slot_lists_at, c.slot_lists.data(), c.slot_lists.size() * 4);
    std::memcpy(staging + slot.upload_slots_at, c.upload_slots.data(), c.upload_slots.size() * 4);
    std::memcpy(staging + slot.items_at, c.upload_items.data(), c.upload_items.size());
    cudaStream_t stream = slot.stream.get();
    GPULB_CUDA_TRY(cudaEventRecord(slot.started.get(), stream));
    GPULB_CUDA_TRY(
        cudaMemcpyAsync(slot.in.get(), staging, slot.bytes_in, cudaMemcpyHostToDevice, stream));
    if (gcharm::uses_cache(c.mode)) {
      // The cache table counts an item resident once a launch is assembled to upload it, so a
      // later launch on another slot (another stream) reads it without uploading it: its scatter
      // and kernel must follow every earlier launch's scatter. Without this wait nothing ordered
      // the streams; the hybrid's lead and rest, two launches sharing most of their items, made
      // that the common case (found in review, 2026-11-23; compiled, not yet run on a GPU). The
      // wait is inside this launch's copy time (started..copied).
      GPULB_CUDA_TRY(cudaStreamWaitEvent(stream, cache_written_.get(), 0));
      scatter_items(reinterpret_cast<const std::uint32_t*>(slot.in.get() + slot.items_at),
                    reinterpret_cast<const std::uint32_t*>(slot.in.get() + slot.upload_slots_at),
                    c.upload_slots.size(), item_bytes_ / 4,
                    reinterpret_cast<std::uint32_t*>(cache_.get()), stream);
      GPULB_CUDA_TRY(cudaEventRecord(cache_written_.get(), stream));
    }
    if (c.output_bytes) GPULB_CUDA_TRY(cudaMemsetAsync(slot.out.get(), 0, c.output_bytes, stream));
    GPULB_CUDA_TRY(cudaEventRecord(slot.copied.get(), stream));
    const auto n = static_cast<std::uint32_t>(c.tasks.size());
    request_kernel<Body><<<n, plan_.block_size, 0, stream>>>(
        reinterpret_cast<const Task*>(slot.in.get() + slot.tasks_at), next_segment_, segments_,
        body_, s_.trace_ref(), s_.stop_flag());
    GPULB_CUDA_CHECK_LAUNCH();
    next_segment_ += n;
    GPULB_CUDA_TRY(cudaEventRecord(slot.ran.get(), stream));
    if (c.output_bytes)
      GPULB_CUDA_TRY(cudaMemcpyAsync(slot.out_host.host(), slot.out.get(), c.output_bytes,
                                     cudaMemcpyDeviceToHost, stream));
    GPULB_CUDA_TRY(cudaEventRecord(slot.done.get(), stream));
  }

  bool done(std::uint32_t k) override {
    const cudaError_t e = cudaEventQuery(slots_[k]->done.get());
    if (e == cudaErrorNotReady) return false;
    GPULB_CUDA_TRY(e);
    return true;
  }

  gcharm::LaunchTimes finish(std::uint32_t k, gcharm::CombinedRequest& c) override {
    Slot& slot = *slots_[k];
    gcharm::LaunchTimes t{elapsed_ns(slot.started, slot.copied), elapsed_ns(slot.copied, slot.ran),
                          elapsed_ns(slot.ran, slot.done)};
    for (std::size_t i = 0; i < c.requests.size(); ++i) {
      std::span<std::byte> out = c.requests[i].output;
      if (!out.empty())
        std::memcpy(out.data(), slot.out_host.host() + c.output_offset[i], out.size());
    }
    tasks_run_ += c.tasks.size();
    slot.busy = false;
    return t;
  }

  void stop_kernels() override { s_.request_stop(); }

  std::uint64_t tasks_run() const { return tasks_run_; }
  std::uint64_t untraced() const {
    return next_segment_ > segments_ ? next_segment_ - segments_ : 0;
  }

  // Waits for every slot's work (the end of the run, or a failure before the buffers go).
  void synchronize() {
    for (auto& slot : slots_) cudaStreamSynchronize(slot->stream.get());
  }

 private:
  struct Slot {
    cuda::Stream stream;
    cuda::MappedBuffer<std::byte> staging, out_host;  // pinned: the copies are asynchronous
    cuda::DeviceBuffer<std::byte> in, out;
    TimingEvent started, copied, ran, done;
    std::uint64_t tasks_at = 0, slot_lists_at = 0, upload_slots_at = 0, items_at = 0, bytes_in = 0;
    bool busy = false;  // submitted and not yet finished: its buffers are in use
  };

  // Grows a buffer to at least `bytes`, with an eighth more for the next launches (md2d's full
  // batches differ by ~3% from step to step; pinned memory costs time in proportion on the first
  // allocation) and at least half again the old size, so that growing is rare: a new pinned
  // buffer cost 10-20 ms on an H100's host (cudaHostAlloc of md2d's ~20 MB a launch, on the
  // loop's critical path), and cudaFree and cudaFreeHost wait for the whole device.
  template <class Buffer>
  static void grow(Buffer& b, std::size_t bytes) {
    if (b.size() >= bytes) return;
    b = Buffer(std::max<std::size_t>(bytes + bytes / 8, b.size() + b.size() / 2));
  }

  // Buffers follow the launches, not the slots: where slot k's are too small for a launch and an
  // idle slot's are large enough, the two slots swap them (the smallest that fits). The loop takes
  // the first free slot, so a small launch (the first request alone, an uncalibrated hybrid's
  // leftovers) left one slot's buffers small and the next full batch grew them again: on md2d
  // (hybrid, an H100) the GPU's part was launched 15-20 ms after its split in 3 of 5 steps, the
  // time of the allocations, against 4 ms without.
  void take_buffers(std::uint32_t k, std::size_t bytes_in, std::size_t bytes_out) {
    Slot& slot = *slots_[k];
    auto fits = [&](const Slot& s) {
      return s.staging.size() >= bytes_in && s.in.size() >= bytes_in && s.out.size() >= bytes_out &&
             s.out_host.size() >= bytes_out;
    };
    if (fits(slot)) return;
    Slot* best = nullptr;
    for (auto& other : slots_) {
      if (other.get() == &slot || other->busy || !fits(*other)) continue;
      if (best == nullptr || other->staging.size() + other->out_host.size() <
                                 best->staging.size() + best->out_host.size())
        best = other.get();
    }
    if (best == nullptr) return;
    std::swap(slot.staging, best->staging);
    std::swap(slot.in, best->in);
    std::swap(slot.out, best->out);
    std::swap(slot.out_host, best->out_host);
  }

  GpuSession& s_;
  const ExecPlan& plan_;
  const policies::RequestTransferOptions& transfer_;
  const Body& body_;
  Watchdog& watchdog_;
  std::uint32_t item_bytes_;
  std::uint32_t segments_;
  std::uint32_t resident_ = 0;
  std::uint32_t next_segment_ = 0;
  std::uint64_t tasks_run_ = 0;
  cuda::DeviceBuffer<std::byte> cache_;
  cuda::Event cache_written_;  // after the last submitted scatter into cache_ (submit says why)
  std::vector<std::unique_ptr<Slot>> slots_;
};

// Trace segments of a request run: 3 events a request (start, task begin, task end) for the
// expected requests, while the trace budget lasts (later requests run untraced, with a note).
inline std::uint32_t request_trace_segments(const ExecPlan& plan) {
  if (!plan.trace) return 0;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(
      plan.requests->expected_requests, trace_budget(plan) / (3 * sizeof(trace::Event))));
}

template <class Factory>
void control_combining(GpuSession& s, const ExecPlan& plan, Factory& make_body,
                       std::atomic<bool>& abort_all, DynamicOutcome& o) {
  using Body = std::decay_t<decltype(make_body(0u, 0u))>;
  if (plan.requests == nullptr)
    throw ConfigError("policy 'combining' runs work requests; this scenario makes none");
  const std::uint32_t segments = request_trace_segments(plan);
  s.allocate_trace(segments, plan.trace ? 3 : 0);
  const Body body = make_body(0u, 0u);
  Watchdog watchdog(plan, s, abort_all);
  CombiningGpu<Body> gpu(s, plan, plan.policy_options<policies::CombiningOptions>(), body, watchdog,
                         segments);
  SessionHost host(s, watchdog);
  o.launch_ns = s.now_ns();
  gcharm::RequestTotals totals;
  std::vector<gcharm::DeviceLane> lanes;
  try {
    totals = gcharm::run_combining(plan, host, gpu, lanes);
  } catch (...) {
    gpu.synchronize();
    throw;
  }
  gpu.synchronize();
  o.end_ns = s.now_ns();
  o.tasks_run = gpu.tasks_run();
  o.workers = gpu.resident_blocks();
  totals.to_metrics(o.metrics, lanes);
  if (gpu.untraced() > 0) {
    o.notes.push_back(std::to_string(gpu.untraced()) + " requests past the trace's " +
                      std::to_string(segments) +
                      " block segments ran untraced; raise --trace-memory");
  }
}

}  // namespace detail

struct CombiningDriver {
  static const PolicyDescriptor& descriptor() { return policies::combining(); }
  template <class Factory>
  static ExecOutput run(const ExecPlan& plan, Factory& make_body) {
    return detail::run_on_one_gpu(
        plan,
        [&](detail::GpuSession& s, std::atomic<bool>& abort_all, detail::DynamicOutcome& o) {
          detail::control_combining(s, plan, make_body, abort_all, o);
        },
        detail::TrackLayout::SmLanes, "its device cache of data items lives in one GPU's memory");
  }
};

}  // namespace gpulb::kernels
