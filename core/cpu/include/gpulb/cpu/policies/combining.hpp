// The combining policy on the CPU backend: the host loop of gpulb/gcharm/request_loop.hpp with
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
#include <thread>
#include <vector>

#include "gpulb/cpu/context.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/cpu/worker.hpp"
#include "gpulb/gcharm/request_loop.hpp"
#include "gpulb/policies/combining.hpp"

namespace gpulb::cpu {
namespace detail {

// The run's host track, clock and watchdog, for the request loop.
class RuntimeHost : public gcharm::RequestHost {
 public:
  explicit RuntimeHost(Runtime& rt) : rt_(rt) {}
  void record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) override {
    rt_.host_record(kind, arg, aux);
  }
  std::uint64_t now_ns() const override { return rt_.now_ns(); }
  void tick(std::uint64_t, const std::function<std::string()>& state) override { rt_.tick(state); }

 private:
  Runtime& rt_;
};

// Worker threads [first, first + count) of a Runtime as one device with a single launch slot.
// Under TransferMode::InPlace the blocks read the published table itself (nothing is copied):
// hybrid's CPU side.
template <class Body>
class CombiningHost : public gcharm::RequestDevice {
 public:
  CombiningHost(Runtime& rt, const ExecPlan& plan, const Body& body, std::uint32_t item_bytes,
                std::uint32_t first, std::uint32_t count)
      : rt_(rt),
        plan_(plan),
        body_(body),
        item_bytes_(item_bytes),
        first_(first),
        count_workers_(count) {}

  std::uint32_t launch_slots() const override { return 1; }
  std::uint32_t resident_blocks() const override { return count_workers_; }
  std::uint32_t first_worker() const { return first_; }
  std::uint32_t workers() const { return count_workers_; }

  gcharm::DeviceAreas prepare(std::uint32_t, const gcharm::CombinedRequest& c) override {
    items_.resize(c.mode == gcharm::TransferMode::Redundant ? c.upload_items.size() : 0);
    slot_lists_.resize(c.slot_lists.size());
    outputs_.assign(c.output_bytes, std::byte{0});
    std::uint64_t top = 0;
    for (std::uint32_t s : c.upload_slots) top = std::max<std::uint64_t>(top, s + 1);
    if (top * item_bytes_ > cache_.size()) cache_.resize(top * item_bytes_);
    const std::byte* cache =
        c.mode == gcharm::TransferMode::InPlace ? c.table.data() : cache_.data();
    return {reinterpret_cast<std::uintptr_t>(cache),
            reinterpret_cast<std::uintptr_t>(items_.data()),
            reinterpret_cast<std::uintptr_t>(slot_lists_.data()),
            reinterpret_cast<std::uintptr_t>(outputs_.data())};
  }

  void submit(std::uint32_t, gcharm::CombinedRequest& c) override {
    const std::uint64_t t0 = host_now_ns();
    if (c.mode == gcharm::TransferMode::Redundant) {
      std::memcpy(items_.data(), c.upload_items.data(), c.upload_items.size());
    } else {
      for (std::size_t k = 0; k < c.upload_slots.size(); ++k) {
        std::memcpy(cache_.data() + std::size_t{c.upload_slots[k]} * item_bytes_,
                    c.upload_items.data() + k * item_bytes_, item_bytes_);
      }
      std::memcpy(slot_lists_.data(), c.slot_lists.data(),
                  c.slot_lists.size() * sizeof(std::uint32_t));
    }
    times_ = {};
    times_.to_device_ns = host_now_ns() - t0;
    {
      // A worker may still be leaving the previous launch (its last fetch-and-add on next_ came
      // after the last block ended): the launch is reset only once every worker is out, and under
      // the mutex, through which workers enter.
      std::lock_guard lock(mutex_);
      while (active_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
      tasks_ = c.tasks.data();
      count_ = c.tasks.size();
      finished_.store(0, std::memory_order_relaxed);
      next_.store(0, std::memory_order_relaxed);
      last_block_end_ns_.store(0, std::memory_order_relaxed);
      launch_start_ns_ = host_now_ns();
      ++launch_;
    }
    wake_.notify_all();
  }

  bool done(std::uint32_t) override { return finished_.load(std::memory_order_acquire) == count_; }

  gcharm::LaunchTimes finish(std::uint32_t, gcharm::CombinedRequest& c) override {
    // From the launch to the end of its last block (stamped by the worker that ran it), not to
    // this call: the host loop may have been busy assembling the next batch meanwhile, and
    // hybrid's split weighs the two devices by these times.
    times_.kernel_ns = last_block_end_ns_.load(std::memory_order_acquire) - launch_start_ns_;
    const std::uint64_t t0 = host_now_ns();
    for (std::size_t i = 0; i < c.requests.size(); ++i) {
      std::span<std::byte> out = c.requests[i].output;
      if (!out.empty()) std::memcpy(out.data(), outputs_.data() + c.output_offset[i], out.size());
    }
    times_.to_host_ns = host_now_ns() - t0;
    return times_;
  }

  void stop_kernels() override { quit(); }

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
    const WorkerContext ctx(rank, plan_.block_size, rt_.worker_segment(rank), rt_.origin_ns(),
                            rt_.stop_flag());
    slot.start_ns = ctx.now_ns();
    ctx.record(trace::EventKind::WorkerStart, rank, trace::kUnknownSm);
    std::uint64_t seen = 0;
    for (;;) {
      const Task* tasks = nullptr;
      std::uint64_t count = 0;
      {
        std::unique_lock lock(mutex_);
        // Wakes on a launch or the end; every millisecond it looks at the watchdog's stop flag.
        while (launch_ == seen && !quit_ && !rt_.stop_requested())
          wake_.wait_for(lock, std::chrono::milliseconds(1));
        if (quit_ || rt_.stop_requested()) break;
        seen = launch_;
        tasks = tasks_;
        count = count_;
        active_.fetch_add(1, std::memory_order_relaxed);
      }
      for (;;) {
        const std::uint64_t b = next_.fetch_add(1, std::memory_order_relaxed);
        if (b >= count) break;
        run_task(rt_, ctx, slot, body_, tasks[b]);
        // The latest block end, stamped before the count that done() reads (release): when the
        // host sees every block finished, it sees every stamp.
        const std::uint64_t end = host_now_ns();
        std::uint64_t seen_end = last_block_end_ns_.load(std::memory_order_relaxed);
        while (seen_end < end && !last_block_end_ns_.compare_exchange_weak(
                                     seen_end, end, std::memory_order_relaxed)) {}
        finished_.fetch_add(1, std::memory_order_release);
      }
      ctx.pause_trace();  // the wait for the next launch is no task's time
      active_.fetch_sub(1, std::memory_order_release);
    }
    slot.end_ns = ctx.now_ns();
    ctx.record(trace::EventKind::WorkerEnd, 0);
  }

 private:
  Runtime& rt_;
  const ExecPlan& plan_;
  const Body& body_;
  std::uint32_t item_bytes_;
  std::uint32_t first_, count_workers_;
  std::vector<std::byte> cache_, items_, outputs_;
  std::vector<std::uint32_t> slot_lists_;
  gcharm::LaunchTimes times_;
  std::uint64_t launch_start_ns_ = 0;
  // The launch: written by the host under the mutex, once no worker is active; workers copy them
  // under the mutex when they join a launch.
  const Task* tasks_ = nullptr;
  std::uint64_t count_ = 0;
  std::atomic<std::uint64_t> next_{0};
  std::atomic<std::uint64_t> finished_{0};
  std::atomic<std::uint64_t> last_block_end_ns_{0};
  std::atomic<std::uint32_t> active_{0};  // workers inside a launch's block loop
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
    if (plan.requests == nullptr)
      throw ConfigError("policy 'combining' runs work requests; this scenario makes none");
    const std::uint64_t expected = plan.requests->expected_requests;
    // Segments are sized alike: the host track's is the largest, up to 8 events a request (eager).
    Runtime rt(plan, 8 * expected + 64);
    detail::RuntimeHost host(rt);
    detail::CombiningHost<Body> device(rt, plan, body, plan.requests->item_bytes, 0, rt.workers());
    rt.start([&](std::uint32_t rank) { device.work(rank); });
    std::vector<gcharm::DeviceLane> lanes;
    gcharm::RequestTotals totals;
    try {
      totals = gcharm::run_combining(plan, host, device, lanes);
    } catch (...) {
      device.quit();
      rt.join();
      throw;
    }
    device.quit();
    ExecOutput out = rt.finish("host: work group list", totals.requests);
    totals.to_metrics(out.metrics, lanes);
    return out;
  }
};

}  // namespace gpulb::cpu
