// The host loop of the `combining` policy (G-Charm, Rengasamy & Vadhiyar, sections 3.1-3.2), the
// same on both backends: a producer thread runs the scenario's RequestStream into the work group
// list; this loop periodically checks the list, asks the CombiningController whether to launch,
// assembles the combined request (what to copy under the transfer mode), and hands it to the
// backend's device, which copies, runs one block per request and brings the outputs back.
//
// The device (cpu::CombiningHost, kernels::CombiningGpu) provides:
//   std::uint32_t launch_slots()          combined requests that may run at once
//   std::uint32_t resident_blocks()       maxSize: blocks of the request kernel resident at once
//   void reset_cache(std::uint32_t slots) a new item table: forget every cached item
//   DeviceAreas prepare(std::uint32_t slot, const CombinedRequest&)  size slot's buffers
//   void submit(std::uint32_t slot, CombinedRequest&)  copy in, launch, copy the outputs back
//   bool done(std::uint32_t slot)         whether slot's combined request has finished
//   LaunchTimes finish(std::uint32_t slot, CombinedRequest&)  outputs into the requests' spans
//   void record(EventKind, arg, aux), std::uint64_t now_ns()   the host track and its clock
//   void tick(std::uint64_t progress, state)  the watchdog: throws when nothing moved for too long
//   void stop_kernels()                   ask running kernels to stop (after a failure)
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/errors.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/gcharm/combined_request.hpp"
#include "gpulb/gcharm/combining.hpp"
#include "gpulb/gcharm/data_cache.hpp"
#include "gpulb/gcharm/work_group_list.hpp"
#include "gpulb/tracing/event.hpp"

namespace gpulb::gcharm {

// The trace's queue id of the work group list (QueueLevel events on the host track).
inline constexpr std::uint16_t kWorkGroupQueue = 0;
// Transfer events' aux: direction.
inline constexpr std::uint16_t kToDevice = 0, kToHost = 1;

inline CombineStrategy parse_combine_strategy(const std::string& s) {
  if (s == "adaptive") return CombineStrategy::Adaptive;
  if (s == "static") return CombineStrategy::Static;
  if (s == "eager") return CombineStrategy::Eager;
  throw ConfigError("strategy '" + s + "' is not one of adaptive|static|eager");
}

// What a combined request cost, measured by the device.
struct LaunchTimes {
  std::uint64_t to_device_ns = 0;  // copies to the device (items, scatter, index buffer, tasks)
  std::uint64_t kernel_ns = 0;
  std::uint64_t to_host_ns = 0;    // the outputs' copy back
};

struct CombiningTotals {
  std::uint64_t requests = 0;
  std::uint64_t launches = 0;
  std::uint64_t launches_by_reason[6] = {};  // index: LaunchReason
  std::uint64_t items_read = 0;               // items the requests read (repeats included)
  std::uint64_t items_copied = 0;             // items copied to the device
  std::uint64_t bytes_to_device = 0;
  std::uint64_t bytes_to_host = 0;
  std::uint64_t assemble_ns = 0;              // host time to assemble combined requests
  LaunchTimes times;
  std::uint64_t first_launch_ns = ~std::uint64_t{0};
  std::uint64_t last_end_ns = 0;
  std::uint64_t max_size = 0;

  void to_metrics(std::map<std::string, std::uint64_t>& m) const {
    m["requests"] = requests;
    m["launches"] = launches;
    for (int r = 1; r < 6; ++r) m[std::string("launches_") + to_string(static_cast<LaunchReason>(r))] = launches_by_reason[r];
    m["items_read"] = items_read;
    m["items_copied"] = items_copied;
    m["bytes_to_device"] = bytes_to_device;
    m["bytes_to_host"] = bytes_to_host;
    m["assemble_ns"] = assemble_ns;
    m["transfer_ns"] = times.to_device_ns + times.to_host_ns;
    m["kernel_ns"] = times.kernel_ns;
    m["max_size"] = max_size;
  }
};

template <class Device>
CombiningTotals run_combining(const ExecPlan& plan, Device& dev) {
  const RequestStream& stream = *plan.requests;
  const PolicyOptions& o = plan.options;
  const TransferMode mode = parse_transfer_mode(o.transfer);
  CombiningTotals totals;
  totals.max_size = o.max_size != 0 ? o.max_size : dev.resident_blocks();
  CombiningController controller(parse_combine_strategy(o.strategy), totals.max_size, o.static_k);
  DataCacheTable cache(o.cache_items);
  std::uint64_t cache_generation = 0;

  WorkGroupList list(stream, [&] { return dev.now_ns(); });
  std::exception_ptr producer_error;
  std::thread producer([&] {
    try {
      stream.produce(list);
    } catch (...) {
      producer_error = std::current_exception();
    }
    list.producer_done();
  });

  struct InFlight {
    bool busy = false;
    LaunchReason reason = LaunchReason::None;
    CombinedRequest request;
  };
  std::vector<InFlight> slots(dev.launch_slots());
  auto busy_slots = [&] {
    std::uint32_t n = 0;
    for (const InFlight& s : slots) n += s.busy;
    return n;
  };
  auto finish_slot = [&](std::uint32_t k) {
    InFlight& s = slots[k];
    const LaunchTimes t = dev.finish(k, s.request);
    const auto n = static_cast<std::uint32_t>(s.request.tasks.size());
    dev.record(trace::EventKind::KernelEnd, n, static_cast<std::uint16_t>(s.reason));
    dev.record(trace::EventKind::Transfer, static_cast<std::uint32_t>(std::min<std::uint64_t>(s.request.output_bytes, 0xFFFFFFFFu)), kToHost);
    totals.times.to_device_ns += t.to_device_ns;
    totals.times.kernel_ns += t.kernel_ns;
    totals.times.to_host_ns += t.to_host_ns;
    totals.bytes_to_host += s.request.output_bytes;
    totals.last_end_ns = dev.now_ns();
    s.busy = false;
    s.request = {};
    list.completed(n);
  };

  std::vector<std::uint64_t> arrivals;
  try {
    for (;;) {
      bool moved = false;
      for (std::uint32_t k = 0; k < slots.size(); ++k) {
        if (slots[k].busy && dev.done(k)) {
          finish_slot(k);
          moved = true;
        }
      }
      if (producer_error) std::rethrow_exception(producer_error);
      arrivals.clear();
      const WorkGroupList::State state = list.take_arrivals(arrivals);
      for (std::uint64_t t : arrivals) controller.on_arrival(t);
      const std::uint64_t waiting = state.waiting;
      if (!arrivals.empty()) dev.record(trace::EventKind::QueueLevel, static_cast<std::uint32_t>(waiting), kWorkGroupQueue);

      std::optional<std::uint32_t> free_slot;
      for (std::uint32_t k = 0; k < slots.size() && !free_slot; ++k) {
        if (!slots[k].busy) free_slot = k;
      }
      // A decision is asked for only when it can be carried out: a launch waits for a free slot
      // (the requests keep arriving meanwhile, and the next decision sees them).
      if (free_slot && waiting > 0) {
        const LaunchDecision d = controller.next_launch(dev.now_ns(), waiting, state.arrivals_paused);
        if (d.count > 0) {
          const std::uint64_t t0 = dev.now_ns();
          std::vector<PendingRequest> taken = list.take_front(d.count);
          if (mode != TransferMode::Redundant) {
            // A new item table (publish_items waited until nothing ran): the cache is stale.
            if (taken.front().generation != cache_generation) {
              cache = DataCacheTable(o.cache_items);
              cache_generation = taken.front().generation;
              dev.reset_cache(o.cache_items);
            }
            // Evicting an item a running launch still reads would corrupt it: when this launch
            // may evict, let the running ones finish first.
            std::uint64_t need = 0;
            for (const PendingRequest& r : taken) need += r.items.size();
            if (cache.resident() + need > cache.slots()) {
              for (std::uint32_t k = 0; k < slots.size(); ++k) {
                while (slots[k].busy && !dev.done(k)) {
                  dev.tick(list.completed_count(), [&] { return std::string("waiting for a launch before evicting cached items"); });
                  std::this_thread::yield();
                }
                if (slots[k].busy) finish_slot(k);
              }
            }
          }
          CombinedRequest c = assemble(std::move(taken), mode, mode == TransferMode::Redundant ? nullptr : &cache, list.table(), stream.item_bytes);
          const DeviceAreas areas = dev.prepare(*free_slot, c);
          bind(c, stream.item_bytes, areas);
          totals.assemble_ns += dev.now_ns() - t0;
          const auto n = static_cast<std::uint32_t>(c.tasks.size());
          totals.requests += n;
          ++totals.launches;
          ++totals.launches_by_reason[static_cast<int>(d.reason)];
          totals.items_read += c.items_read;
          totals.items_copied += c.upload_items.size() / stream.item_bytes;
          totals.bytes_to_device += c.bytes_to_device();
          totals.first_launch_ns = std::min(totals.first_launch_ns, dev.now_ns());
          dev.record(trace::EventKind::Transfer, static_cast<std::uint32_t>(std::min<std::uint64_t>(c.bytes_to_device(), 0xFFFFFFFFu)), kToDevice);
          dev.record(trace::EventKind::KernelLaunch, n, static_cast<std::uint16_t>(d.reason));
          dev.record(trace::EventKind::QueueLevel, static_cast<std::uint32_t>(waiting - n), kWorkGroupQueue);
          InFlight& s = slots[*free_slot];
          s.busy = true;
          s.reason = d.reason;
          s.request = std::move(c);
          dev.submit(*free_slot, s.request);
          moved = true;
        }
      }
      if (busy_slots() == 0 && state.all_done) break;
      if (!moved) {
        dev.tick(state.completed, [&] {
          return std::to_string(state.completed) + " of " + std::to_string(state.emitted) + " requests done, " +
                 std::to_string(state.waiting) + " waiting, " + std::to_string(busy_slots()) + " launches running";
        });
        // The periodic check of the work group list: often enough that a timeout of
        // 2 x maxInterval is seen within a few microseconds.
        std::this_thread::yield();
      }
    }
  } catch (...) {
    list.abort();
    dev.stop_kernels();
    producer.join();
    throw;
  }
  producer.join();
  if (producer_error) std::rethrow_exception(producer_error);
  return totals;
}

}  // namespace gpulb::gcharm
