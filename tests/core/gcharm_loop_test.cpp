// G-Charm's request loop (gcharm/request_loop.hpp): the combining and hybrid loops over
// scripted devices (a device that runs each combined request at once, one whose launches end after
// a number of polls) and a scripted clock: every request runs once, over its own table's items,
// and the loop carries out the split's decisions (lead, rest, backlog) as they say. The decisions
// themselves: gcharm_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/policies/combining.hpp"

#include "gpulb/gcharm/combined_request.hpp"
#include "gpulb/gcharm/combining.hpp"
#include "gpulb/gcharm/request_loop.hpp"
#include "gpulb/gcharm/hybrid_split.hpp"

namespace gpulb::gcharm {
namespace {

// A device that runs each combined request at once on the host: the body adds up its items.
struct FakeDevice : RequestDevice {
  std::vector<std::uint32_t> cache = std::vector<std::uint32_t>(4096), items, slot_lists;
  std::vector<std::uint64_t> outputs;
  std::uint64_t now = 0;
  std::uint64_t launches = 0;
  std::vector<bool> busy = std::vector<bool>(2);

  std::uint32_t launch_slots() const override { return 2; }
  std::uint32_t resident_blocks() const override { return 4; }
  DeviceAreas prepare(std::uint32_t, const CombinedRequest& c) override {
    items.resize(c.upload_items.size() / 4);
    slot_lists = c.slot_lists;
    outputs.assign(c.output_bytes / 8, 0);
    return {reinterpret_cast<std::uintptr_t>(cache.data()),
            reinterpret_cast<std::uintptr_t>(items.data()),
            reinterpret_cast<std::uintptr_t>(slot_lists.data()),
            reinterpret_cast<std::uintptr_t>(outputs.data())};
  }
  void submit(std::uint32_t k, CombinedRequest& c) override {
    if (c.mode == TransferMode::Redundant) {
      std::memcpy(items.data(), c.upload_items.data(), c.upload_items.size());
    } else {
      for (std::size_t i = 0; i < c.upload_slots.size(); ++i)
        std::memcpy(&cache[c.upload_slots[i]], c.upload_items.data() + 4 * i, 4);
    }
    for (const Task& t : c.tasks) {
      std::uint64_t sum = 0;
      for (std::uint32_t i = 0; i < request_item_count(t); ++i)
        sum += request_item<std::uint32_t>(t, i);
      *request_output<std::uint64_t>(t) += sum;
    }
    busy[k] = true;
    ++launches;
  }
  bool done(std::uint32_t) override { return true; }
  LaunchTimes finish(std::uint32_t k, CombinedRequest& c) override {
    for (std::size_t i = 0; i < c.requests.size(); ++i)
      std::memcpy(c.requests[i].output.data(), &outputs[c.output_offset[i] / 8], 8);
    busy[k] = false;
    return {};
  }
  void stop_kernels() override {}
};

// Emits request `slot` over `items` of `table`; the fake devices sum their values into
// outputs[slot], so expected[slot] gets that sum. `work` 0: the list weighs it by its items.
void emit_summing(RequestSink& sink, std::span<const std::uint32_t> table,
                  const std::vector<std::uint32_t>& items, std::size_t slot, std::uint64_t work,
                  std::vector<std::uint64_t>& outputs, std::vector<std::uint64_t>& expected) {
  std::uint64_t sum = 0;
  for (const std::uint32_t i : items) sum += table[i];
  expected[slot] = sum;
  Request q;
  q.task.id = static_cast<std::uint32_t>(slot);
  q.items = items;
  q.work = work;
  q.output = std::as_writable_bytes(std::span<std::uint64_t>(&outputs[slot], 1));
  sink.emit(q);
}

// A scripted clock: every reading is 1 us after the last (read by the producer's emits too).
struct FakeHost : RequestHost {
  mutable std::atomic<std::uint64_t> now{0};
  void record(trace::EventKind, std::uint32_t, std::uint16_t) override {}
  std::uint64_t now_ns() const override { return now.fetch_add(1000) + 1000; }
  void tick(std::uint64_t, const std::function<std::string()>&) override {}
};

TEST(CombiningLoop, EveryRequestRunsOnceOverTheItemsOfItsOwnTableUnderEveryStrategyAndTransfer) {
  for (const char* strategy : {"adaptive", "static", "eager"}) {
    for (const char* transfer : {"redundant", "reuse", "reuse-sorted"}) {
      // Two generations of tables (two steps); each request reads 1..20 items.
      std::vector<std::vector<std::uint32_t>> tables = {std::vector<std::uint32_t>(300),
                                                        std::vector<std::uint32_t>(200)};
      for (std::size_t g = 0; g < 2; ++g) {
        for (std::size_t i = 0; i < tables[g].size(); ++i)
          tables[g][i] = static_cast<std::uint32_t>((g + 1) * 1000 + i);
      }
      std::vector<std::uint64_t> outputs(2 * 150), expected(2 * 150);
      RequestStream stream;
      stream.item_bytes = 4;
      stream.produce = [&](RequestSink& sink) {
        for (std::size_t g = 0; g < 2; ++g) {
          sink.publish_items(std::as_bytes(std::span<const std::uint32_t>(tables[g])));
          std::vector<std::uint32_t> items;
          for (std::uint32_t r = 0; r < 150; ++r) {
            items.clear();
            for (std::uint32_t i = 0; i < 1 + (r * 7) % 20; ++i)
              items.push_back((r * 31 + i * 17) % tables[g].size());
            emit_summing(sink, tables[g], items, g * 150 + r, 0, outputs, expected);
          }
          sink.wait_all();
        }
      };
      ExecPlan plan;
      plan.policy = &policies::combining();
      plan.options.edit<policies::CombiningOptions>().strategy =
          *choice_named<RequestStrategy>(strategy);
      plan.options.edit<policies::CombiningOptions>().transfer =
          *choice_named<RequestTransfer>(transfer);
      plan.options.edit<policies::CombiningOptions>().static_k = 16;
      plan.options.edit<policies::CombiningOptions>().cache_items = 4096;
      plan.requests = &stream;
      FakeDevice dev;
      FakeHost host;
      std::vector<DeviceLane> lanes;
      const RequestTotals t = run_combining(plan, host, dev, lanes);
      EXPECT_EQ(t.requests, 300u) << strategy << " " << transfer;
      EXPECT_EQ(outputs, expected) << strategy << " " << transfer;
      if (std::string(strategy) == "eager") {
        EXPECT_EQ(t.batches, 300u);
      }
      if (std::string(transfer) == "redundant") {
        EXPECT_EQ(t.lanes[0].items_copied, t.lanes[0].items_read);
      } else {
        EXPECT_LE(t.lanes[0].items_copied, 500u) << transfer;  // at most each table's items once
      }
    }
  }
}

// A device whose launches end after `polls` calls of done(), reporting `ns_per_unit` a unit of
// work; it notes how many of its launches began while `other` was busy.
struct ScriptedDevice : RequestDevice {
  ScriptedDevice(std::uint32_t slots, std::uint32_t polls, std::uint64_t ns_per_unit)
      : left(slots, 0),
        busy(slots, false),
        outputs(slots),
        polls(polls),
        ns_per_unit(ns_per_unit) {}
  std::vector<std::uint32_t> left;
  std::vector<bool> busy;
  std::vector<std::vector<std::uint64_t>> outputs;
  std::vector<std::uint32_t> slot_lists;
  std::uint32_t polls;
  std::uint64_t ns_per_unit;
  const ScriptedDevice* other = nullptr;
  std::uint64_t launches = 0, launches_while_other_busy = 0;
  // Where set: each launch's (lane, its requests' work in launch order), in submit order.
  std::vector<std::pair<int, std::vector<std::uint64_t>>>* log = nullptr;
  int lane = 0;
  std::uint32_t first_polls = 0;           // where set, the first launch's polls
  std::atomic<bool>* submitted = nullptr;  // where set, raised at each launch
  // Running a launch of an earlier decision: the loop has polled it since (the two parts of one
  // decision are submitted with no poll between them).
  bool running_from_before() const {
    for (std::size_t k = 0; k < busy.size(); ++k) {
      if (busy[k] && left[k] < polls) return true;
    }
    return false;
  }

  std::uint32_t launch_slots() const override { return static_cast<std::uint32_t>(busy.size()); }
  std::uint32_t resident_blocks() const override { return 4; }
  DeviceAreas prepare(std::uint32_t k, const CombinedRequest& c) override {
    outputs[k].assign(c.output_bytes / 8, 0);
    return {reinterpret_cast<std::uintptr_t>(c.table.data()), 0, 0,
            reinterpret_cast<std::uintptr_t>(outputs[k].data())};
  }
  void submit(std::uint32_t k, CombinedRequest& c) override {
    // The body, on the host: whatever the transfer mode, read the items from the table.
    for (std::size_t i = 0; i < c.tasks.size(); ++i) {
      std::uint64_t sum = 0;
      for (std::uint32_t item : c.requests[i].items)
        sum += reinterpret_cast<const std::uint32_t*>(c.table.data())[item];
      *request_output<std::uint64_t>(c.tasks[i]) += sum;
    }
    busy[k] = true;
    left[k] = launches == 0 && first_polls != 0 ? first_polls : polls;
    ++launches;
    if (submitted != nullptr) submitted->store(true);
    if (log != nullptr) {
      std::vector<std::uint64_t> work;
      for (const PendingRequest& r : c.requests) work.push_back(r.work);
      log->emplace_back(lane, std::move(work));
    }
    if (other != nullptr && other->running_from_before()) ++launches_while_other_busy;
  }
  bool done(std::uint32_t k) override { return left[k] == 0 || --left[k] == 0; }
  LaunchTimes finish(std::uint32_t k, CombinedRequest& c) override {
    for (std::size_t i = 0; i < c.requests.size(); ++i)
      std::memcpy(c.requests[i].output.data(), &outputs[k][c.output_offset[i] / 8], 8);
    busy[k] = false;
    std::uint64_t work = 0;
    for (const PendingRequest& r : c.requests) work += r.work;
    return {0, ns_per_unit * work, 0};
  }
  void stop_kernels() override {}
};

// The hybrid loop tests' requests: `steps` steps over `table` (published anew each step, each step
// waited for before the next) of `per_step` summing requests; request r of step g reads
// items_of(g, r) items, (r * 31 + i * 17 + g) mod the table's size, and weighs their count
// squared (a cost quadratic in the items, as md2d's).
RequestStream stepped_requests(const std::vector<std::uint32_t>& table, std::uint32_t steps,
                               std::uint32_t per_step,
                               std::function<std::uint32_t(std::uint32_t, std::uint32_t)> items_of,
                               std::vector<std::uint64_t>& outputs,
                               std::vector<std::uint64_t>& expected) {
  RequestStream stream;
  stream.item_bytes = 4;
  stream.produce = [&table, steps, per_step, items_of, &outputs, &expected](RequestSink& sink) {
    for (std::uint32_t g = 0; g < steps; ++g) {
      sink.publish_items(std::as_bytes(std::span<const std::uint32_t>(table)));
      std::vector<std::uint32_t> items;
      for (std::uint32_t r = 0; r < per_step; ++r) {
        items.clear();
        const std::uint32_t n = items_of(g, r);
        for (std::uint32_t i = 0; i < n; ++i) items.push_back((r * 31 + i * 17 + g) % table.size());
        emit_summing(sink, table, items, g * per_step + r, std::uint64_t{n} * n, outputs, expected);
      }
      sink.wait_all();
    }
  };
  return stream;
}

// Under adaptive the GPU takes work while the CPU's part runs; under static
// (the paper's loop) it waits for both. Either way every request runs exactly once.
TEST(HybridLoop, AFreeGpuTakesWorkWhileTheCpuRunsAndEveryRequestRunsOnce) {
  for (const char* strategy : {"adaptive", "static"}) {
    std::vector<std::uint32_t> table(500);
    std::iota(table.begin(), table.end(), 7u);
    constexpr std::uint32_t kSteps = 3, kPerStep = 200;
    std::vector<std::uint64_t> outputs(kSteps * kPerStep), expected(kSteps * kPerStep);
    const RequestStream stream = stepped_requests(
        table, kSteps, kPerStep, [](std::uint32_t, std::uint32_t r) { return 1 + (r * 13) % 20; },
        outputs, expected);
    ExecPlan plan;
    plan.options.edit<policies::HybridOptions>().strategy =
        *choice_named<RequestStrategy>(strategy);
    plan.options.edit<policies::HybridOptions>().transfer = RequestTransfer::Reuse;
    plan.options.edit<policies::HybridOptions>().max_size = 32;
    plan.options.edit<policies::HybridOptions>().cpu_share = 0.5;
    plan.options.edit<policies::HybridOptions>().cache_items = 4096;
    plan.requests = &stream;
    ScriptedDevice cpu(1, 60, 3), gpu(2, 3, 1);
    cpu.other = &gpu;
    gpu.other = &cpu;
    FakeHost host;
    std::vector<DeviceLane> lanes;
    HybridSplitter splitter(hybrid_strategy(*choice_named<RequestStrategy>(strategy)), 0.5, 4, 0);
    const RequestTotals t =
        run_hybrid(plan, host, cpu, TransferMode::InPlace, gpu, lanes, splitter);
    EXPECT_EQ(outputs, expected) << strategy;
    EXPECT_EQ(t.requests, std::uint64_t{kSteps} * kPerStep) << strategy;
    EXPECT_EQ(t.lanes[0].requests + t.lanes[1].requests, t.requests) << strategy;
    EXPECT_GT(t.lanes[0].requests, 0u) << strategy;
    EXPECT_GT(t.lanes[1].requests, 0u) << strategy;
    if (std::string(strategy) == "adaptive") {
      EXPECT_GT(gpu.launches_while_other_busy, 0u);
      EXPECT_TRUE(splitter.calibrated());
    } else {
      EXPECT_EQ(gpu.launches_while_other_busy, 0u);
    }
  }
}

// Marks each decision in a run: a RequestSplit event on the host track precedes its launches.
struct SplitCountingHost : FakeHost {
  std::vector<std::size_t> splits_at;  // the number of launches logged when each split was recorded
  const std::vector<std::pair<int, std::vector<std::uint64_t>>>* log = nullptr;
  void record(trace::EventKind kind, std::uint32_t, std::uint16_t) override {
    if (kind == trace::EventKind::RequestSplit) splits_at.push_back(log->size());
  }
};

// The G-Charm target: in each decision of a calibrated adaptive split the GPU's part
// launches first -- its largest requests alone where it has a second slot, then the CPU's part,
// then the GPU's rest -- the CPU's part is among the smallest requests of the decision, each part
// goes largest first, and every request still runs exactly once.
TEST(HybridLoop, TheGpusLeadLaunchesFirstTheCpuTakesTheSmallestAndEveryRequestRunsOnce) {
  std::vector<std::uint32_t> table(500);
  std::iota(table.begin(), table.end(), 3u);
  constexpr std::uint32_t kSteps = 4, kPerStep = 120;
  std::vector<std::uint64_t> outputs(kSteps * kPerStep), expected(kSteps * kPerStep);
  // 1..30 items, a few requests (every 17th) much larger than the rest, as md2d's clusters.
  const RequestStream stream = stepped_requests(
      table, kSteps, kPerStep,
      [](std::uint32_t g, std::uint32_t r) { return r % 17 == 5 ? 30 : 1 + (r * 7 + g) % 12; },
      outputs, expected);
  ExecPlan plan;
  plan.options.edit<policies::HybridOptions>().strategy = RequestStrategy::Adaptive;
  plan.options.edit<policies::HybridOptions>().transfer = RequestTransfer::Reuse;
  plan.options.edit<policies::HybridOptions>().max_size = 1000;
  plan.options.edit<policies::HybridOptions>().cache_items = 4096;
  plan.requests = &stream;
  std::vector<std::pair<int, std::vector<std::uint64_t>>> log;
  ScriptedDevice cpu(1, 8, 40), gpu(2, 8, 1);
  cpu.log = gpu.log = &log;
  gpu.lane = 1;
  SplitCountingHost host;
  host.log = &log;
  // Calibrated before the run (scripted): a CPU worker 4 x slower on a request than a GPU block,
  // the GPU's time its largest request's (4 CPU workers, 1000 resident blocks).
  HybridSplitter splitter(HybridStrategy::Adaptive, 0.0, 4, 1000);
  for (Side side : {Side::Cpu, Side::Gpu})
    splitter.record(side, PartShape{400, 100, 4}, 1);  // warm-ups
  splitter.record(Side::Cpu, PartShape{400, 100, 4}, 4 * 100 * 100);
  splitter.record(Side::Gpu, PartShape{400, 100, 4}, 100 * 100);
  std::vector<DeviceLane> lanes;
  const RequestTotals t = run_hybrid(plan, host, cpu, TransferMode::InPlace, gpu, lanes, splitter);
  EXPECT_EQ(outputs, expected);
  EXPECT_EQ(t.requests, std::uint64_t{kSteps} * kPerStep);
  EXPECT_EQ(t.lanes[0].requests + t.lanes[1].requests, t.requests);

  std::size_t with_lead = 0, with_cpu = 0;
  host.splits_at.push_back(log.size());
  for (std::size_t d = 0; d + 1 < host.splits_at.size(); ++d) {
    std::vector<std::pair<int, std::vector<std::uint64_t>>> launches(
        log.begin() + host.splits_at[d], log.begin() + host.splits_at[d + 1]);
    ASSERT_FALSE(launches.empty());
    std::vector<std::uint64_t> cpu_work, gpu_work;
    std::size_t gpu_launches = 0;
    for (const auto& [lane, work] : launches) {
      EXPECT_TRUE(std::is_sorted(work.rbegin(), work.rend()))
          << "decision " << d << ": a part not largest first";
      (lane == 0 ? cpu_work : gpu_work)
          .insert((lane == 0 ? cpu_work : gpu_work).end(), work.begin(), work.end());
      gpu_launches += lane == 1;
    }
    if (!gpu_work.empty()) {
      EXPECT_EQ(launches.front().first, 1)
          << "decision " << d << ": the GPU's part did not go first";
    }
    if (gpu_launches == 2) {
      // GPU lead, CPU (if any), GPU rest: the lead holds the requests of at least half the largest.
      ++with_lead;
      EXPECT_EQ(launches.back().first, 1);
      const std::uint64_t largest = launches.front().second.front();
      for (std::uint64_t w : launches.front().second) EXPECT_GE(2 * w, largest);
      for (std::uint64_t w : launches.back().second) EXPECT_LT(2 * w, largest);
    }
    EXPECT_LE(gpu_launches, 2u);
    if (!cpu_work.empty() && !gpu_work.empty()) {
      ++with_cpu;
      EXPECT_LE(*std::max_element(cpu_work.begin(), cpu_work.end()),
                *std::min_element(gpu_work.begin(), gpu_work.end()))
          << "decision " << d << ": the CPU took a request larger than one the GPU kept";
    }
  }
  EXPECT_GT(with_lead, 0u);  // the run exercised both decisions
  EXPECT_GT(with_cpu, 0u);
}

// A scripted clock that only the producer moves, and only while `ticking` (1 us a reading): the
// requests it emits meanwhile arrive at one instant, so no gap between them times out and cuts
// the batch, whatever the threads' scheduling.
struct ProducerClockHost : FakeHost {
  std::atomic<std::thread::id> producer{};
  std::atomic<bool> ticking{false};
  std::uint64_t now_ns() const override {
    return std::this_thread::get_id() == producer.load() && ticking.load() ? FakeHost::now_ns()
                                                                           : now.load();
  }
};

// The GPU's other slot runs the first request alone (adaptive combining's rule) when the batch
// is split: the lead goes alone into the free slot, the CPU takes its part, and the rest waits for
// the next decision; that decision (the lead now running, a long span) sends the rest in one
// launch. Every request runs once.
TEST(HybridLoop, TheLeadGoesAloneBesideTheFirstRequestAndTheRestFollowsInOneLaunch) {
  std::vector<std::uint32_t> table(400);
  std::iota(table.begin(), table.end(), 5u);
  constexpr std::uint32_t kRequests = 80;
  std::vector<std::uint64_t> outputs(kRequests), expected(kRequests);
  std::atomic<bool> gpu_launched{false};
  ProducerClockHost host;
  RequestStream stream;
  stream.item_bytes = 4;
  stream.produce = [&](RequestSink& sink) {
    host.producer = std::this_thread::get_id();
    sink.publish_items(std::as_bytes(std::span<const std::uint32_t>(table)));
    std::vector<std::uint32_t> items;
    for (std::uint32_t r = 0; r < kRequests; ++r) {
      items.clear();
      // The first request small; then 1..20 items, every 9th 40 (the large ones: the lead).
      const std::uint32_t n = r == 0 ? 2 : r % 9 == 4 ? 40 : 1 + (r * 7) % 20;
      for (std::uint32_t i = 0; i < n; ++i) items.push_back((r * 29 + i * 11) % table.size());
      emit_summing(sink, table, items, r, std::uint64_t{n} * n, outputs, expected);
      // The first request times out alone (time passes while the producer waits for its
      // launch: no timing, the device says when); the others form one batch (no time passes for
      // the loop until the producer waits for them all).
      host.ticking = r == 0;
      while (r == 0 && !gpu_launched.load()) {
        host.now_ns();
        std::this_thread::yield();
      }
      host.ticking = false;
    }
    sink.wait_all();
  };
  ExecPlan plan;
  plan.options.edit<policies::HybridOptions>().strategy = RequestStrategy::Adaptive;
  plan.options.edit<policies::HybridOptions>().transfer = RequestTransfer::Reuse;
  plan.options.edit<policies::HybridOptions>().max_size = 1000;
  plan.options.edit<policies::HybridOptions>().cache_items = 4096;
  plan.requests = &stream;
  std::vector<std::pair<int, std::vector<std::uint64_t>>> log;
  ScriptedDevice cpu(1, 4, 50), gpu(2, 6, 1);
  // the first request runs long enough for the batch to be split meanwhile
  gpu.first_polls = 100'000;
  gpu.submitted = &gpu_launched;
  cpu.log = gpu.log = &log;
  gpu.lane = 1;
  HybridSplitter splitter(HybridStrategy::Adaptive, 0.0, 4, 1000);
  for (Side side : {Side::Cpu, Side::Gpu})
    splitter.record(side, PartShape{400, 100, 4}, 1);  // warm-ups
  splitter.record(Side::Cpu, PartShape{400, 100, 4},
                  8 * 100 * 100);  // a worker 8 x slower than a block
  splitter.record(Side::Gpu, PartShape{400, 100, 4}, 100 * 100);
  std::vector<DeviceLane> lanes;
  const RequestTotals t = run_hybrid(plan, host, cpu, TransferMode::InPlace, gpu, lanes, splitter);
  EXPECT_EQ(outputs, expected);
  EXPECT_EQ(t.requests, std::uint64_t{kRequests});
  std::vector<std::vector<std::uint64_t>> gpu_launches;
  for (const auto& [lane, work] : log) {
    if (lane == 1) gpu_launches.push_back(work);
  }
  std::string seen;
  for (const auto& [lane, work] : log) {
    seen += (lane ? " GPU[" : " CPU[");
    for (std::uint64_t w : work) seen += std::to_string(w) + ",";
    seen += "]";
  }
  ASSERT_EQ(gpu_launches.size(), 3u) << seen;
  EXPECT_EQ(gpu_launches[0], (std::vector<std::uint64_t>{4}));  // the first request alone
  // The lead: the large requests only (1600 units each).
  for (std::uint64_t w : gpu_launches[1]) EXPECT_EQ(w, 1600u);
  EXPECT_FALSE(gpu_launches[1].empty());
  // The rest, in one launch after the first request's slot freed: each under half the lead's.
  for (std::uint64_t w : gpu_launches[2]) EXPECT_LT(2 * w, 1600u);
}

// Where the rest's launch must first let the lead end (its items do not fit the item cache beside
// the lead's), the lead is done before the rest starts: the GPU's backlog at the next decision is
// the rest's predicted time alone, from its launch, not the lead's and the rest's from the lead's.
TEST(HybridLoop, ARestThatWaitedForTheLeadToEvictBooksOnlyItsOwnTime) {
  std::vector<std::uint32_t> table(16);
  std::iota(table.begin(), table.end(), 3u);
  std::vector<std::uint64_t> outputs(4), expected(4);
  RequestStream stream;
  stream.item_bytes = 4;
  stream.produce = [&](RequestSink& sink) {
    sink.publish_items(std::as_bytes(std::span<const std::uint32_t>(table)));
    emit_summing(sink, table, {0, 1, 2, 3}, 0, 1000, outputs, expected);  // the lead: 4 items
    emit_summing(sink, table, {4, 5, 6, 7, 8, 9}, 1, 1, outputs,
                 expected);  // the rest: 6 more, 10 > 8 slots
    emit_summing(sink, table, {10}, 2, 1, outputs, expected);
    emit_summing(sink, table, {11}, 3, 1, outputs, expected);
    sink.wait_all();
  };
  ExecPlan plan;
  policies::RequestTransferOptions transfer;
  transfer.cache_items = 8;
  plan.requests = &stream;
  // The lead ends soon; the rest runs until the second decision has seen its backlog (then every
  // launch ends at its next poll), however late the producer's wait lets that decision come (up
  // to 4 M polls, seconds: a loop that never decides again ends and fails the test).
  ScriptedDevice cpu(1, 1, 1), gpu(2, 1u << 22, 1);
  gpu.first_polls = 10;
  const std::vector<DeviceLane> lanes = {{&cpu, TransferMode::InPlace, "cpu_"},
                                         {&gpu, TransferMode::Reuse, "gpu_"}};
  // Static K = 4: the first decision sees all four requests and launches the first two on the GPU
  // (the first as its lead); the other two wait for the second, once the producer waits.
  CombiningController controller(CombineStrategy::Static, 1000, 4);
  std::vector<std::vector<std::uint64_t>> work_seen;
  std::vector<LaneLoad> gpu_load_seen;
  BatchRouter router;
  router.split = [&](std::span<const std::uint64_t> work, std::span<const LaneLoad> load) {
    work_seen.emplace_back(work.begin(), work.end());
    gpu_load_seen.push_back(load[1]);
    if (work_seen.size() == 2) {
      gpu.polls = 1;
      for (std::uint32_t& left : gpu.left) left = std::min(left, 1u);
    }
    SplitPlan p;
    p.gpu = std::min<std::size_t>(2, work.size());
    p.gpu_lead = work_seen.size() == 1 ? 1 : 0;
    return p;
  };
  router.predict_ns = [](std::size_t, const PartShape& shape) {
    return 1e9 * static_cast<double>(shape.work);
  };  // 1 s a unit
  FakeHost host;
  const RequestTotals t = run_requests(plan, transfer, host, lanes, controller, router);
  EXPECT_EQ(outputs, expected);
  EXPECT_EQ(t.lanes[1].requests, 4u);
  ASSERT_GE(work_seen.size(), 2u);
  EXPECT_EQ(work_seen[0], (std::vector<std::uint64_t>{1000, 1, 1, 1}));
  EXPECT_EQ(work_seen[1], (std::vector<std::uint64_t>{1, 1}));
  // The rest (1 unit) runs: about 1 s left. Booking the lead's 1000 units too said 1001 s.
  EXPECT_TRUE(gpu_load_seen[1].free);
  EXPECT_GT(gpu_load_seen[1].backlog_ns, 500'000'000u);
  EXPECT_LT(gpu_load_seen[1].backlog_ns, 1'500'000'000u);
}

}  // namespace
}  // namespace gpulb::gcharm
