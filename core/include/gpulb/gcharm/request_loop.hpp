// The host loop of the work-request policies (G-Charm, Rengasamy & Vadhiyar, sections 3.1-3.3),
// the same on both backends: a producer thread runs the scenario's RequestStream into the work
// group list; this loop periodically checks the list, asks the CombiningController whether a
// batch is due, routes the batch to the devices (combining: all to one; hybrid: split between the
// CPU and the GPU by HybridSplitter), assembles each part's combined request (what to copy under
// its transfer mode), and hands it to its device, which copies, runs one block per request and
// brings the outputs back.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/errors.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/gcharm/combined_request.hpp"
#include "gpulb/gcharm/combining.hpp"
#include "gpulb/gcharm/data_cache.hpp"
#include "gpulb/gcharm/hybrid_split.hpp"
#include "gpulb/gcharm/work_group_list.hpp"
#include "gpulb/policies/combining.hpp"
#include "gpulb/policies/hybrid.hpp"
#include "gpulb/tracing/event.hpp"

namespace gpulb::gcharm {

// The trace's queue id of the work group list (QueueLevel events on the host track).
inline constexpr std::uint16_t kWorkGroupQueue = 0;
// Transfer events' aux: direction.
inline constexpr std::uint16_t kToDevice = 0, kToHost = 1;
// KernelLaunch/KernelEnd aux: the launch reason in the low byte; above it, where a batch is split
// between devices (hybrid), the lane plus one (1: the CPU, 2: the GPU); 0 for a single device.
inline constexpr std::uint16_t kLaneShift = 8;

inline CombineStrategy combine_strategy(RequestStrategy s) {
  switch (s) {
    case RequestStrategy::Static: return CombineStrategy::Static;
    case RequestStrategy::Eager: return CombineStrategy::Eager;
    case RequestStrategy::Adaptive: break;
  }
  return CombineStrategy::Adaptive;
}

// What a combined request cost, measured by the device.
struct LaunchTimes {
  std::uint64_t to_device_ns = 0;  // copies to the device (items, scatter, index buffer, tasks)
  std::uint64_t kernel_ns = 0;
  std::uint64_t to_host_ns = 0;  // the outputs' copy back
  std::uint64_t total() const { return to_device_ns + kernel_ns + to_host_ns; }
};

// A device that runs combined requests: the GPU (kernels::CombiningGpu) or host threads
// (cpu::CombiningHost). Slots are launches that may run at once.
class RequestDevice {
 public:
  virtual ~RequestDevice() = default;
  virtual std::uint32_t launch_slots() const = 0;
  virtual std::uint32_t resident_blocks() const = 0;  // maxSize: blocks resident at once
  // Sizes slot `slot`'s buffers for `c` and says where they are (the addresses bind() writes).
  virtual DeviceAreas prepare(std::uint32_t slot, const CombinedRequest& c) = 0;
  virtual void submit(std::uint32_t slot, CombinedRequest& c) = 0;  // copy in, launch, copy out
  virtual bool done(std::uint32_t slot) = 0;
  virtual LaunchTimes finish(std::uint32_t slot,
                             CombinedRequest& c) = 0;  // outputs into the requests' spans
  virtual void stop_kernels() = 0;  // after a failure: ask running kernels to stop
};

// The host side of a run: its trace track, its clock, its watchdog.
class RequestHost {
 public:
  virtual ~RequestHost() = default;
  virtual void record(trace::EventKind kind, std::uint32_t arg,
                      std::uint16_t aux) = 0;  // the loop's thread only
  virtual std::uint64_t now_ns()
      const = 0;  // any thread: the producers' emits stamp arrivals with it
  // Throws when `progress` has not moved for the watchdog's time.
  virtual void tick(std::uint64_t progress, const std::function<std::string()>& state) = 0;
};

// One device with its transfer mode, its cache table and what it has measured.
struct DeviceLane {
  RequestDevice* device = nullptr;
  TransferMode mode = TransferMode::ReuseSorted;
  std::string name;  // metrics prefix ("" for a single device, "cpu_", "gpu_")
};

struct LaneTotals {
  std::uint64_t requests = 0, launches = 0, items_read = 0, items_copied = 0, bytes_to_device = 0,
                bytes_to_host = 0;
  LaunchTimes times;
};

struct RequestTotals {
  std::uint64_t requests = 0;
  std::uint64_t batches = 0;
  std::uint64_t batches_by_reason[6] = {};  // index: LaunchReason
  std::uint64_t assemble_ns = 0;            // host time to assemble combined requests
  std::uint64_t max_size = 0;
  std::vector<LaneTotals> lanes;

  void to_metrics(std::map<std::string, std::uint64_t>& m,
                  std::span<const DeviceLane> names) const {
    m["requests"] = requests;
    m["launches"] = batches;  // batches: with one device, the launches
    for (int r = 1; r < 6; ++r)
      m[std::string("launches_") + to_string(static_cast<LaunchReason>(r))] = batches_by_reason[r];
    m["assemble_ns"] = assemble_ns;
    m["max_size"] = max_size;
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      const std::string p = names[l].name;
      const LaneTotals& t = lanes[l];
      if (!p.empty()) m[p + "requests"] = t.requests, m[p + "launches"] = t.launches;
      m[p + "items_read"] = t.items_read;
      m[p + "items_copied"] = t.items_copied;
      m[p + "bytes_to_device"] = t.bytes_to_device;
      m[p + "bytes_to_host"] = t.bytes_to_host;
      m[p + "transfer_ns"] = t.times.to_device_ns + t.times.to_host_ns;
      m[p + "kernel_ns"] = t.times.kernel_ns;
    }
  }
};

// How a due batch is shared between two lanes (hybrid): `split` gets each request's work and
// the lanes' loads and says which requests are lane 0's (from the front) and lane 1's (the rest);
// a lane without a free slot keeps its part waiting. `predict_ns` estimates a part's time on a
// lane (its backlog while it runs); `finished` reports each part's measured cost. Combining (one
// lane) leaves them empty: every batch goes to lane 0 once its slot is free.
struct BatchRouter {
  std::function<SplitPlan(std::span<const std::uint64_t> work, std::span<const LaneLoad> lanes)>
      split;
  std::function<double(std::size_t lane, const PartShape&)> predict_ns;
  std::function<void(std::size_t lane, const PartShape&, const LaunchTimes&)> finished;
  // Whether a decision waits until every lane has a free slot (the paper's loop).
  std::function<bool()> waits_for_all;
  // Whether lane 1's lead (SplitPlan::gpu_lead) launches alone into its one free slot while its
  // `running` launches occupy the others (empty: never).
  std::function<bool(const PartShape& lead, std::span<const PartShape> running)> lead_alone;
};

namespace detail {

// A part's work, its largest request and its requests.
inline PartShape shape_of(const std::vector<PendingRequest>& part) {
  PartShape shape;
  for (const PendingRequest& r : part)
    shape.work += r.work, shape.largest = std::max(shape.largest, r.work), ++shape.requests;
  return shape;
}

// The lanes as the loop drives them: each one's launch slots, its cache of the items on its
// device and its predicted backlog. It hands combined requests to the lanes' devices and takes
// back what they finished, into the totals, the trace and the work group list.
class RequestLanes {
 public:
  RequestLanes(std::span<const DeviceLane> lanes, const RequestStream& stream,
               std::uint32_t cache_items, unsigned assembly_threads, RequestHost& host,
               WorkGroupList& list, const BatchRouter& router, RequestTotals& totals)
      : lanes_(lanes),
        stream_(stream),
        cache_items_(cache_items),
        assembly_threads_(std::max(1u, assembly_threads)),
        host_(host),
        list_(list),
        router_(router),
        totals_(totals) {
    for (const DeviceLane& l : lanes) {
      state_.push_back(
          {std::vector<InFlight>(l.device->launch_slots()), DataCacheTable(cache_items), 0, 0});
    }
  }

  std::size_t size() const { return lanes_.size(); }

  std::uint32_t busy_slots() const {
    std::uint32_t n = 0;
    for (const LaneState& s : state_) {
      for (const InFlight& f : s.slots) n += f.busy;
    }
    return n;
  }

  // The first free slot of `lane` other than `except`.
  std::optional<std::uint32_t> free_slot(std::size_t lane,
                                         std::optional<std::uint32_t> except = std::nullopt) const {
    for (std::uint32_t k = 0; k < state_[lane].slots.size(); ++k) {
      if (!state_[lane].slots[k].busy && k != except) return k;
    }
    return std::nullopt;
  }

  // The predicted end of `lane`'s running parts; 0 while it is idle.
  std::uint64_t free_at_ns(std::size_t lane) const { return state_[lane].free_at_ns; }

  // The shapes of the parts `lane`'s busy slots run.
  std::vector<PartShape> running_shapes(std::size_t lane) const {
    std::vector<PartShape> running;
    for (const InFlight& f : state_[lane].slots) {
      if (f.busy) running.push_back(f.shape);
    }
    return running;
  }

  // Finishes every launch its device has done; true where there was one.
  bool poll() {
    bool moved = false;
    for (std::size_t l = 0; l < lanes_.size(); ++l) {
      for (std::uint32_t k = 0; k < state_[l].slots.size(); ++k) {
        if (state_[l].slots[k].busy && lanes_[l].device->done(k)) {
          finish_slot(l, k);
          moved = true;
        }
      }
    }
    return moved;
  }

  // Sends requests to `lane`'s free slot `k` as one combined request. True where it first let the
  // lane's running launches end (to evict cached items): the lane was idle when it went.
  bool launch(std::size_t lane, std::uint32_t k, std::vector<PendingRequest> part,
              LaunchReason reason, std::span<const std::byte> table) {
    LaneState& ls = state_[lane];
    bool waited = false;
    const TransferMode mode = lanes_[lane].mode;
    if (uses_cache(mode)) {
      // A new item table (publish_items waited until nothing ran): the cache is stale.
      if (part.front().generation != ls.cache_generation) {
        ls.cache = DataCacheTable(cache_items_);
        ls.cache_generation = part.front().generation;
      }
      // Evicting an item a running launch still reads would corrupt it: when this launch may
      // evict, let the lane's running launches finish first.
      std::uint64_t need = 0;
      for (const PendingRequest& r : part) need += r.items.size();
      if (ls.cache.resident() + need > ls.cache.slots()) {
        finish_all(lane);
        waited = true;
      }
    }
    const PartShape shape = shape_of(part);
    CombinedRequest c = assemble(std::move(part), mode, uses_cache(mode) ? &ls.cache : nullptr,
                                 table, stream_.item_bytes, assembly_threads_);
    const DeviceAreas areas = lanes_[lane].device->prepare(k, c);
    bind(c, stream_.item_bytes, areas);
    const auto n = static_cast<std::uint32_t>(c.tasks.size());
    LaneTotals& lt = totals_.lanes[lane];
    lt.requests += n;
    ++lt.launches;
    lt.items_read += c.items_read;
    lt.items_copied += c.upload_items.size() / stream_.item_bytes;
    lt.bytes_to_device += c.bytes_to_device();
    // The launch first: the viewer labels the first of markers at one spot, and the launch, with
    // its size and reason, is what a reader looks for.
    host_.record(trace::EventKind::KernelLaunch, n, launch_aux(reason, lane));
    host_.record(
        trace::EventKind::Transfer,
        static_cast<std::uint32_t>(std::min<std::uint64_t>(c.bytes_to_device(), 0xFFFFFFFFu)),
        kToDevice);
    InFlight& s = ls.slots[k];
    s.busy = true;
    s.reason = reason;
    s.shape = shape;
    s.request = std::move(c);
    lanes_[lane].device->submit(k, s.request);
    return waited;
  }

  // A lane's backlog grows by its new part's predicted time from `start`, when its first launch
  // went (the launches of one part run at once: the part is booked whole, after them, since a
  // launch that may evict cached items first lets the lane's running launches end; what ended so
  // is not booked: see BatchDecider::launch_parts).
  void book(std::size_t lane, const PartShape& shape, std::uint64_t start) {
    if (!router_.predict_ns || shape.requests == 0) return;
    state_[lane].free_at_ns = std::max(start, state_[lane].free_at_ns) +
                              static_cast<std::uint64_t>(router_.predict_ns(lane, shape));
  }

 private:
  struct InFlight {
    bool busy = false;
    LaunchReason reason = LaunchReason::None;
    PartShape shape;
    CombinedRequest request;
  };
  struct LaneState {
    std::vector<InFlight> slots;
    DataCacheTable cache;
    std::uint64_t cache_generation = 0;
    std::uint64_t free_at_ns = 0;  // predicted end of its running parts (hybrid's backlog)
  };

  std::uint16_t launch_aux(LaunchReason reason, std::size_t lane) const {
    const unsigned side = lanes_.size() > 1 ? static_cast<unsigned>(lane) + 1 : 0;
    return static_cast<std::uint16_t>(static_cast<unsigned>(reason) | (side << kLaneShift));
  }

  void finish_slot(std::size_t lane, std::uint32_t k) {
    InFlight& s = state_[lane].slots[k];
    const LaunchTimes t = lanes_[lane].device->finish(k, s.request);
    const auto n = static_cast<std::uint32_t>(s.request.tasks.size());
    const auto aux = launch_aux(s.reason, lane);
    host_.record(trace::EventKind::KernelEnd, n, aux);
    host_.record(
        trace::EventKind::Transfer,
        static_cast<std::uint32_t>(std::min<std::uint64_t>(s.request.output_bytes, 0xFFFFFFFFu)),
        kToHost);
    LaneTotals& lt = totals_.lanes[lane];
    lt.times.to_device_ns += t.to_device_ns;
    lt.times.kernel_ns += t.kernel_ns;
    lt.times.to_host_ns += t.to_host_ns;
    lt.bytes_to_host += s.request.output_bytes;
    if (router_.finished) router_.finished(lane, s.shape, t);
    s.busy = false;
    s.request = {};
    bool idle = true;
    for (const InFlight& f : state_[lane].slots) idle = idle && !f.busy;
    if (idle) state_[lane].free_at_ns = 0;
    list_.completed(n);
  }

  void finish_all(std::size_t lane) {
    for (std::uint32_t k = 0; k < state_[lane].slots.size(); ++k) {
      while (state_[lane].slots[k].busy && !lanes_[lane].device->done(k)) {
        host_.tick(list_.completed_count(),
                   [] { return std::string("waiting for a launch before evicting cached items"); });
        std::this_thread::yield();
      }
      if (state_[lane].slots[k].busy) finish_slot(lane, k);
    }
  }

  std::span<const DeviceLane> lanes_;
  const RequestStream& stream_;
  std::uint32_t cache_items_;
  // Threads that assemble a large combined request (combined_request.hpp; --param
  // assembly_threads, default 1 as in G-Charm). In a trace on an H200's host the loop took ~30
  // ms from deciding md2d's launch of ~500 pieces (2.2 M items) to launching it, the GPU's
  // kernel ~10 ms; but on an H100's host 8 threads made adaptive combining on nbody 14% slower
  // than one (737 against 646 ms: its 16 tree walkers share the cores; docs/benchmarks.md).
  unsigned assembly_threads_;
  RequestHost& host_;
  WorkGroupList& list_;
  const BatchRouter& router_;
  RequestTotals& totals_;
  std::vector<LaneState> state_;
};

// What a decision came to.
struct DecisionOutcome {
  bool launched = false;  // requests went to a lane
  // the router launched nothing: the loop holds this until something changes
  bool nothing_now = false;
  std::uint64_t asked_ns = 0;  // when it was asked (nothing_now)
};

// One decision of the loop, asked for when it can be carried out: the controller says whether a
// batch is due; the router splits it between the lanes; the parts that launch now are taken from
// the list (the others go back to its front), launched and booked on their lanes' backlogs.
class BatchDecider {
 public:
  BatchDecider(RequestHost& host, WorkGroupList& list, RequestLanes& lanes,
               CombiningController& controller, const BatchRouter& router, RequestTotals& totals)
      : host_(host),
        list_(list),
        lanes_(lanes),
        controller_(controller),
        router_(router),
        totals_(totals) {}

  // `free`: each lane's free slot, as the loop found them.
  DecisionOutcome decide(const WorkGroupList::State& st,
                         std::span<const std::optional<std::uint32_t>> free) {
    const LaunchDecision d =
        controller_.next_launch(host_.now_ns(), st.waiting, st.arrivals_paused);
    if (d.count == 0) return {};
    const std::uint64_t t0 = host_.now_ns();
    const Split s = split(d.count, free, t0);
    const bool launch_first = !s.part[0].empty() && free[0].has_value();
    const bool launch_second = !s.part[1].empty() && free[1].has_value();
    // Lane 1's lead goes alone where a second slot takes the rest at once (after the CPU's
    // part), or, with one free slot, where the router says its running launches free theirs
    // in time: the rest then waits in the list for the next decision. On md2d's first step
    // the GPU's other slot ran the first request alone (adaptive combining's rule) for 26
    // ms, and the whole part waited 15 ms for its assembly and buffers.
    const std::optional<std::uint32_t> rest_slot =
        launch_second && s.lead > 0 ? lanes_.free_slot(1, free[1]) : std::nullopt;
    const bool lead_alone =
        launch_second && s.lead > 0 && !rest_slot && router_.lead_alone && lead_goes_alone(s);
    const std::size_t second_now = !launch_second ? 0 : lead_alone ? s.lead : s.part[1].size();
    if (!launch_first && !launch_second) return {false, true, t0};

    Parts p =
        take(s, launch_first, launch_second, rest_slot || lead_alone ? s.lead : 0, second_now);
    const std::uint64_t launched = p.first.size() + p.second_lead.size() + p.second.size();
    count(p, d.reason, launched);
    launch_parts(std::move(p), d.reason, launch_second, free, rest_slot);
    totals_.assemble_ns += host_.now_ns() - t0;
    host_.record(trace::EventKind::QueueLevel, static_cast<std::uint32_t>(st.waiting - launched),
                 kWorkGroupQueue);
    return {true, false, 0};
  }

 private:
  // Each lane's part as positions in the batch (from the list's front), in launch order;
  // lane 1's first `lead` requests may go as a launch of their own.
  struct Split {
    std::vector<std::size_t> part[2];
    std::size_t lead = 0;
  };
  // The requests that launch now: lane 0's, lane 1's lead where it launches apart, and the rest
  // of lane 1's.
  struct Parts {
    std::vector<PendingRequest> first, second_lead, second;
    std::span<const std::byte> table;
  };

  Split split(std::uint64_t count, std::span<const std::optional<std::uint32_t>> free,
              std::uint64_t t0) {
    Split s;
    if (lanes_.size() > 1) {
      list_.front_work(count, work_);  // the requests stay in the list unless a part launches
      LaneLoad load[2];
      // A lane past its predicted end is taken to need as long again as it is late.
      for (std::size_t l = 0; l < 2; ++l) {
        const std::uint64_t at = lanes_.free_at_ns(l);
        load[l] = {free[l].has_value(), at > t0 ? at - t0 : at != 0 ? t0 - at : 0};
      }
      const SplitPlan p = router_.split(work_, load);
      const std::size_t c = std::min(p.cpu, work_.size()), g = std::min(p.gpu, work_.size() - c);
      const bool ordered = p.order.size() >= c + g;  // else the paper's prefix
      for (std::size_t i = 0; i < c + g; ++i)
        s.part[i < c ? 0 : 1].push_back(ordered ? p.order[i] : i);
      s.lead = p.gpu_lead < g ? p.gpu_lead : 0;
    } else {
      s.part[0].resize(count);
      std::iota(s.part[0].begin(), s.part[0].end(), std::size_t{0});
    }
    return s;
  }

  // Whether lane 1's lead launches alone into its one free slot, as the router says from the
  // lead's shape and the launches running on the lane.
  bool lead_goes_alone(const Split& s) const {
    PartShape lead_shape{0, 0, 0};
    for (std::size_t i = 0; i < s.lead; ++i) {
      const std::uint64_t w = work_[s.part[1][i]];
      lead_shape.work += w, lead_shape.largest = std::max(lead_shape.largest, w),
                            ++lead_shape.requests;
    }
    return router_.lead_alone(lead_shape, lanes_.running_shapes(1));
  }

  // Only this loop takes from the list: its front is still what was split. It takes up to
  // the last request that launches now; the others go back to the front, in list order.
  // Lane 1's part is cut at `split_at` (its lead apart, or 0) and ends at `second_now`.
  Parts take(const Split& s, bool launch_first, bool launch_second, std::size_t split_at,
             std::size_t second_now) {
    std::size_t up_to = 0;
    if (launch_first) {
      for (std::size_t i : s.part[0]) up_to = std::max(up_to, i + 1);
    }
    for (std::size_t i = 0; i < second_now; ++i) up_to = std::max(up_to, s.part[1][i] + 1);
    std::vector<PendingRequest> batch = list_.take_front(up_to);
    Parts p;
    p.table = list_.table();
    std::vector<char> taken(batch.size(), 0);
    auto gather = [&](const std::vector<std::size_t>& positions, std::size_t from, std::size_t to) {
      std::vector<PendingRequest> out;
      for (std::size_t i = from; i < to; ++i) {
        if (positions[i] >= batch.size() || taken[positions[i]]) continue;
        taken[positions[i]] = 1;
        out.push_back(std::move(batch[positions[i]]));
      }
      return out;
    };
    if (launch_first) p.first = gather(s.part[0], 0, s.part[0].size());
    if (launch_second) {
      p.second_lead = gather(s.part[1], 0, split_at);
      p.second = gather(s.part[1], split_at, second_now);
    }
    std::vector<PendingRequest> back;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!taken[i]) back.push_back(std::move(batch[i]));
    }
    if (!back.empty()) list_.put_back_front(std::move(back));
    return p;
  }

  // The batch in the totals and, where it is split between lanes, in the trace.
  void count(const Parts& p, LaunchReason reason, std::uint64_t launched) {
    ++totals_.batches;
    ++totals_.batches_by_reason[static_cast<int>(reason)];
    totals_.requests += launched;
    if (lanes_.size() > 1) {
      std::uint64_t items = 0, to_cpu = 0;
      for (const PendingRequest& r : p.first) items += r.items.size(), to_cpu += r.items.size();
      for (const auto* gpu_part : {&p.second_lead, &p.second}) {
        for (const PendingRequest& r : *gpu_part) items += r.items.size();
      }
      host_.record(trace::EventKind::RequestSplit, static_cast<std::uint32_t>(p.first.size()),
                   static_cast<std::uint16_t>(items ? (1000 * to_cpu + items / 2) / items : 0));
    }
  }

  // The GPU's part first: it is the step's critical path (the CPU's part is sized to end
  // before it, and its launch, in place, is short); its lead before the CPU's part, the
  // rest after it (the rest ends long before the lead: each of its requests has at most
  // half the lead's largest work).
  void launch_parts(Parts p, LaunchReason reason, bool launch_second,
                    std::span<const std::optional<std::uint32_t>> free,
                    std::optional<std::uint32_t> rest_slot) {
    const PartShape cpu_shape = shape_of(p.first);
    PartShape gpu_shape{0, 0, 0};  // what of the GPU's part still runs from gpu_start
    std::uint64_t cpu_start = 0, gpu_start = 0;
    // The rest's launch may first wait for the lead to end (to evict cached items): the
    // lead is then done, and the lane's backlog is the rest's alone, from its launch.
    auto launch_gpu = [&](std::vector<PendingRequest> part_now, std::uint32_t slot) {
      if (part_now.empty()) return;
      const PartShape launched_shape = shape_of(part_now);
      const bool lane_was_idle = lanes_.launch(1, slot, std::move(part_now), reason, p.table);
      if (gpu_start == 0 || lane_was_idle) {
        gpu_start = host_.now_ns();
        gpu_shape = launched_shape;
      } else {
        gpu_shape = {gpu_shape.work + launched_shape.work,
                     std::max(gpu_shape.largest, launched_shape.largest),
                     gpu_shape.requests + launched_shape.requests};
      }
    };
    // Only where lane 1 launches now: with one lane (combining) free[1] does not exist.
    if (launch_second) {
      launch_gpu(std::move(p.second_lead), *free[1]);
      if (!rest_slot) launch_gpu(std::move(p.second), *free[1]);  // empty after a lead alone
    }
    if (!p.first.empty()) {
      lanes_.launch(0, *free[0], std::move(p.first), reason, p.table);
      cpu_start = host_.now_ns();
    }
    if (rest_slot) launch_gpu(std::move(p.second), *rest_slot);
    lanes_.book(0, cpu_shape, cpu_start);
    lanes_.book(1, gpu_shape, gpu_start);
  }

  RequestHost& host_;
  WorkGroupList& list_;
  RequestLanes& lanes_;
  CombiningController& controller_;
  const BatchRouter& router_;
  RequestTotals& totals_;
  std::vector<std::uint64_t> work_;  // the batch's requests' work (hybrid)
};

// When the loop asks for a decision. Only when it can be carried out: with one lane, when its slot
// is free; with two (hybrid), when either has a free slot -- the router says what each takes, and
// a busy lane's part waits (the requests keep arriving meanwhile, and the next decision sees them).
// A router's "nothing now" holds until the list or the lanes change, or a while.
class DecisionGate {
 public:
  // Asks for a decision where one is due; true when it launched a batch.
  bool step(const WorkGroupList::State& st, RequestLanes& lane_state, std::size_t lanes,
            BatchDecider& decider, const BatchRouter& router, RequestHost& host) {
    std::vector<std::optional<std::uint32_t>> free(lanes);
    std::uint32_t free_mask = 0;
    for (std::size_t l = 0; l < lanes; ++l)
      free_mask |= (free[l] = lane_state.free_slot(l)).has_value() ? 1u << l : 0u;
    const std::uint32_t all = (1u << lanes) - 1;
    const bool can_decide = lanes == 1 || (router.waits_for_all && router.waits_for_all())
                                ? free_mask == all
                                : free_mask != 0;
    const bool same_as_idle = idle_.valid && idle_.waiting == st.waiting &&
                              idle_.completed == st.completed && idle_.free_mask == free_mask &&
                              host.now_ns() - idle_.at_ns < kIdleRecheckNs;
    if (!can_decide || st.waiting == 0 || same_as_idle) return false;
    const DecisionOutcome outcome = decider.decide(st, free);
    if (outcome.nothing_now) idle_ = {true, st.waiting, st.completed, outcome.asked_ns, free_mask};
    if (!outcome.launched) return false;
    idle_.valid = false;
    return true;
  }

 private:
  // How long a "nothing now" stands without a change: a busy lane's backlog estimate moves with
  // the clock (late lanes), so the split is asked again after this.
  static constexpr std::uint64_t kIdleRecheckNs = 100'000;
  struct {
    bool valid = false;
    std::uint64_t waiting = 0, completed = 0, at_ns = 0;
    std::uint32_t free_mask = 0;
  } idle_;
};

}  // namespace detail

inline RequestTotals run_requests(const ExecPlan& plan,
                                  const policies::RequestTransferOptions& transfer,
                                  RequestHost& host, std::span<const DeviceLane> lanes,
                                  CombiningController& controller, const BatchRouter& router) {
  const RequestStream& stream = *plan.requests;
  RequestTotals totals;
  totals.max_size = controller.max_size();
  totals.lanes.resize(lanes.size());

  WorkGroupList list(stream, [&] { return host.now_ns(); });
  detail::RequestLanes lane_state(lanes, stream, transfer.cache_items, transfer.assembly_threads,
                                  host, list, router, totals);
  detail::BatchDecider decider(host, list, lane_state, controller, router, totals);
  std::exception_ptr producer_error;
  std::thread producer([&] {
    try {
      stream.produce(list);
    } catch (...) {
      producer_error = std::current_exception();
    }
    list.producer_done();
  });

  std::vector<std::uint64_t> arrivals;
  detail::DecisionGate gate;
  try {
    for (;;) {
      bool moved = lane_state.poll();
      if (producer_error) std::rethrow_exception(producer_error);
      arrivals.clear();
      const WorkGroupList::State st = list.take_arrivals(arrivals);
      for (std::uint64_t t : arrivals) controller.on_arrival(t);
      if (!arrivals.empty())
        host.record(trace::EventKind::QueueLevel, static_cast<std::uint32_t>(st.waiting),
                    kWorkGroupQueue);
      if (gate.step(st, lane_state, lanes.size(), decider, router, host)) moved = true;
      if (lane_state.busy_slots() == 0 && st.all_done) break;
      if (!moved) {
        host.tick(st.completed, [&] {
          return std::to_string(st.completed) + " of " + std::to_string(st.emitted) +
                 " requests done, " + std::to_string(st.waiting) + " waiting, " +
                 std::to_string(lane_state.busy_slots()) + " launches running";
        });
        // The periodic check of the work group list: often enough that a timeout of
        // 2 x maxInterval is seen within a few microseconds.
        std::this_thread::yield();
      }
    }
  } catch (...) {
    list.abort();
    for (const DeviceLane& l : lanes) l.device->stop_kernels();
    producer.join();
    throw;
  }
  producer.join();
  if (producer_error) std::rethrow_exception(producer_error);
  return totals;
}

// The combining policy's loop: one device, every batch to it.
inline RequestTotals run_combining(const ExecPlan& plan, RequestHost& host, RequestDevice& device,
                                   std::vector<DeviceLane>& lanes_out) {
  const policies::CombiningOptions& o = plan.policy_options<policies::CombiningOptions>();
  lanes_out = {{&device, transfer_mode(o.transfer), ""}};
  CombiningController controller(combine_strategy(o.strategy),
                                 o.max_size != 0 ? o.max_size : device.resident_blocks(),
                                 o.static_k);
  return run_requests(plan, o, host, lanes_out, controller, {});
}

// The hybrid policy's loop: batches as adaptive combining forms them for both devices together
// (maxSize: the CPU's workers plus the GPU's resident blocks), each split by HybridSplitter: the
// requests from the front that make up the CPU's share go to lane 0 (the CPU), the rest to lane 1
// (the GPU); each part's measured time updates that side's running average. Adaptive, once
// calibrated, lets a free side take its part while the other is busy (hybrid_split.hpp says how
// this departs from the paper). Each launching split is a host event (RequestSplit: the requests
// launched on the CPU, and the per mille of the launched items they read).
inline RequestTotals run_hybrid(const ExecPlan& plan, RequestHost& host, RequestDevice& cpu,
                                TransferMode cpu_mode, RequestDevice& gpu,
                                std::vector<DeviceLane>& lanes_out, HybridSplitter& splitter) {
  const policies::HybridOptions& o = plan.policy_options<policies::HybridOptions>();
  lanes_out = {{&cpu, cpu_mode, "cpu_"}, {&gpu, transfer_mode(o.transfer), "gpu_"}};
  CombiningController controller(
      CombineStrategy::Adaptive,
      o.max_size != 0 ? o.max_size : cpu.resident_blocks() + gpu.resident_blocks(),
      1);  // static's K, which adaptive never reads
  BatchRouter router;
  router.split = [&](std::span<const std::uint64_t> work, std::span<const LaneLoad> load) {
    return splitter.plan(work, load[0], load[1]);
  };
  router.waits_for_all = [&] { return splitter.waits_for_both(); };
  router.lead_alone = [&](const PartShape& lead, std::span<const PartShape> running) {
    return splitter.lead_goes_alone(lead, running);
  };
  router.predict_ns = [&](std::size_t lane, const PartShape& part) {
    return splitter.predict(lane == 0 ? Side::Cpu : Side::Gpu, part);
  };
  router.finished = [&](std::size_t lane, const PartShape& part, const LaunchTimes& t) {
    splitter.record(lane == 0 ? Side::Cpu : Side::Gpu, part, t.total());
  };
  return run_requests(plan, o, host, lanes_out, controller, router);
}

// Hybrid's option offers adaptive and static only (policies/hybrid.hpp).
inline HybridStrategy hybrid_strategy(RequestStrategy s) {
  if (s == RequestStrategy::Eager)
    throw ConfigError("hybrid: strategy 'eager' is combining's; hybrid takes adaptive|static");
  return s == RequestStrategy::Static ? HybridStrategy::Static : HybridStrategy::Adaptive;
}

}  // namespace gpulb::gcharm
