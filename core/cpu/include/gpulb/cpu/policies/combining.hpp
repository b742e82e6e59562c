// The combining policy on the CPU backend: the host loop of gpulb/gcharm/combining_loop.hpp with
// host threads as the "device". A combined request is a launch of one block per request, run by
// the worker threads in launch order (as the hardware policy runs its launch); the device's memory
// is host memory, so "copies" are memcpy into the cache, the index buffer and the outputs. One
// combined request runs at a time (one stream); the host keeps combining meanwhile.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "gpulb/cpu/context.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/cpu/worker.hpp"
#include "gpulb/gcharm/combining_loop.hpp"
#include "gpulb/policies/combining.hpp"

namespace gpulb::cpu {
namespace detail {

// The worker threads as one device with a single launch slot.
template <class Body>
class CombiningHost {
 public:
  CombiningHost(Runtime& rt, const ExecPlan& plan, const Body& body, std::uint32_t item_bytes)
      : rt_(rt), plan_(plan), body_(body), item_bytes_(item_bytes) {}

  std::uint32_t launch_slots() const { return 1; }
  std::uint32_t resident_blocks() const { return rt_.workers(); }
  void reset_cache(std::uint32_t) { cache_.clear(); }

  gcharm::DeviceAreas prepare(std::uint32_t, const gcharm::CombinedRequest& c) {
    items_.resize(c.mode == gcharm::TransferMode::Redundant ? c.upload_items.size() : 0);
    slot_lists_.resize(c.slot_lists.size());
    outputs_.assign(c.output_bytes, std::byte{0});
    std::uint64_t top = 0;
    for (std::uint32_t s : c.upload_slots) top = std::max<std::uint64_t>(top, s + 1);
    if (top * item_bytes_ > cache_.size()) cache_.resize(top * item_bytes_);
    return {reinterpret_cast<std::uintptr_t>(cache_.data()), reinterpret_cast<std::uintptr_t>(items_.data()),
            reinterpret_cast<std::uintptr_t>(slot_lists_.data()), reinterpret_cast<std::uintptr_t>(outputs_.data())};
  }

  void submit(std::uint32_t, gcharm::CombinedRequest& c) {
    const std::uint64_t t0 = host_now_ns();
    if (c.mode == gcharm::TransferMode::Redundant) {
      std::memcpy(items_.data(), c.upload_items.data(), c.upload_items.size());
    } else {
      for (std::size_t k = 0; k < c.upload_slots.size(); ++k) {
        std::memcpy(cache_.data() + std::size_t{c.upload_slots[k]} * item_bytes_, c.upload_items.data() + k * item_bytes_, item_bytes_);
      }
      std::memcpy(slot_lists_.data(), c.slot_lists.data(), c.slot_lists.size() * sizeof(std::uint32_t));
    }
    times_ = {};
    times_.to_device_ns = host_now_ns() - t0;
    launch_start_ns_ = host_now_ns();
    {
      // Under the mutex: a worker reads the launch (tasks, count, generation) under it too.
      std::lock_guard lock(mutex_);
      ++launch_;
      tasks_ = c.tasks.data();
      count_ = c.tasks.size();
      finished_.store(0, std::memory_order_relaxed);
      next_.store(launch_ << 32, std::memory_order_relaxed);
    }
    wake_.notify_all();
  }

  bool done(std::uint32_t) const { return finished_.load(std::memory_order_acquire) == count_; }

  gcharm::LaunchTimes finish(std::uint32_t, gcharm::CombinedRequest& c) {
    times_.kernel_ns = host_now_ns() - launch_start_ns_;
    const std::uint64_t t0 = host_now_ns();
    for (std::size_t i = 0; i < c.requests.size(); ++i) {
      std::span<std::byte> out = c.requests[i].output;
      if (!out.empty()) std::memcpy(out.data(), outputs_.data() + c.output_offset[i], out.size());
    }
    times_.to_host_ns = host_now_ns() - t0;
    return times_;
  }

  void record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) { rt_.host_record(kind, arg, aux); }
  std::uint64_t now_ns() const { return rt_.now_ns(); }
  template <class State>
  void tick(std::uint64_t, State&& state) { rt_.tick(state); }
  void stop_kernels() { quit(); }

  // Ends the workers' loops (after the last launch, or on a failure).
  void quit() {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
  }

  // A worker: waits for each launch, takes its blocks in order, as the hardware policy does.
  void work(std::uint32_t rank) {
    WorkerSlot& slot = rt_.slot(rank);
    const WorkerContext ctx(rank, plan_.block_size, rt_.worker_segment(rank), rt_.origin_ns(), rt_.stop_flag());
    slot.start_ns = ctx.now_ns();
    ctx.record(trace::EventKind::WorkerStart, rank, trace::kUnknownSm);
    std::uint64_t seen = 0;
    for (;;) {
      const Task* tasks = nullptr;
      std::uint64_t count = 0;
      {
        std::unique_lock lock(mutex_);
        // Wakes on a launch or the end; every millisecond it looks at the watchdog's stop flag.
        while (launch_ == seen && !quit_ && !rt_.stop_requested()) wake_.wait_for(lock, std::chrono::milliseconds(1));
        if (quit_ || rt_.stop_requested()) break;
        seen = launch_;
        tasks = tasks_;
        count = count_;
      }
      // Blocks are taken by CAS on (launch << 32 | next block), not by a plain fetch-and-add: a
      // worker still leaving the previous launch (its last block done, the host already onto the
      // next launch) must neither take a block of the new launch with the old one's count and
      // tasks nor advance the new launch's counter. ThreadSanitizer saw both with a plain counter.
      // Relaxed: the block's data was published by the mutex above; finished_ releases its output.
      std::uint64_t v = next_.load(std::memory_order_relaxed);
      for (;;) {
        if ((v >> 32) != (seen & 0xFFFFFFFFull) || (v & 0xFFFFFFFFull) >= count) break;
        if (!next_.compare_exchange_weak(v, v + 1, std::memory_order_relaxed)) continue;
        run_task(rt_, ctx, slot, body_, tasks[v & 0xFFFFFFFFull]);
        finished_.fetch_add(1, std::memory_order_release);
        v = next_.load(std::memory_order_relaxed);
      }
    }
    slot.end_ns = ctx.now_ns();
    ctx.record(trace::EventKind::WorkerEnd, 0);
  }

 private:
  Runtime& rt_;
  const ExecPlan& plan_;
  const Body& body_;
  std::uint32_t item_bytes_;
  std::vector<std::byte> cache_, items_, outputs_;
  std::vector<std::uint32_t> slot_lists_;
  gcharm::LaunchTimes times_;
  std::uint64_t launch_start_ns_ = 0;
  // The launch: written by the host under the mutex as it bumps launch_ (the workers copy them
  // under the mutex).
  const Task* tasks_ = nullptr;
  std::uint64_t count_ = 0;
  std::atomic<std::uint64_t> next_{0};  // launch_ << 32 | the next block of that launch
  std::atomic<std::uint64_t> finished_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::uint64_t launch_ = 0;
  bool quit_ = false;
};

}  // namespace detail

struct CombiningDriver {
  static const PolicyDescriptor& descriptor() { return policies::combining(); }
  template <class Body>
  static ExecOutput run(const ExecPlan& plan, const Body& body) {
    if (plan.requests == nullptr) throw ConfigError("policy 'combining' runs work requests; this scenario makes none");
    const std::uint64_t expected = plan.requests->expected_requests;
    // Segments are sized alike: the host track's is the largest, up to 8 events a request (eager).
    Runtime rt(plan, 8 * expected + 64);
    detail::CombiningHost<Body> host(rt, plan, body, plan.requests->item_bytes);
    rt.start([&](std::uint32_t rank) { host.work(rank); });
    gcharm::CombiningTotals totals;
    try {
      totals = gcharm::run_combining(plan, host);
    } catch (...) {
      host.quit();
      rt.join();
      throw;
    }
    host.quit();
    ExecOutput out = rt.finish("host: work group list", totals.requests);
    totals.to_metrics(out.metrics);
    return out;
  }
};

}  // namespace gpulb::cpu
