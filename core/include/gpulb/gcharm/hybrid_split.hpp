// Where to run: G-Charm's dynamic CPU+GPU scheduling (Rengasamy & Vadhiyar, section 3.3).
//
// A request's workload is the number of data items it reads. After every combined request that
// ran on a device, the time it took per data item is folded into that device's running average;
// the ratio of the two averages says how to share the next batch: the CPU gets the fraction
// t_gpu / (t_cpu + t_gpu) of the batch's data items, so that both finish together. The batch is
// scanned from the front with a running sum of data items; the requests scanned until the sum
// reaches the CPU's share go to the CPU (the one that crosses it included), the rest to the GPU.
// Until both devices have a measurement the batch is split in half ("the first requests run on
// both"). The static strategy gives the CPU a fixed fraction (cpu_share).
//
// Departures from the paper:
//  - Warm-up (the paper does not single it out): each device's first combined request pays for
//    loading the kernel's module, the first touch of the device cache and of the threads' stacks,
//    and is left out of the averages. Measured on an H100, a first launch took 100x longer per
//    item than the next; folded into a running mean it sent every later batch to the other
//    device, which then never measured again.
//  - Weighted average: a side's average is its measured time over its measured work (each part
//    weighs by its size), not the mean of the parts' ratios: the work-conserving loop below sends
//    a free side small leftovers too, and a small part's fixed costs (a launch, its copies' latency)
//    would otherwise count as much as a full batch's.
//  - Work units: a stream may weigh its requests (Request::work, e.g. md2d's pair tests, which
//    grow with the square of a request's items); the averages are then per work unit. Unweighed
//    requests weigh their items, as in the paper.
//  - Workers (adaptive): a side made of `workers` threads that each run one request at a time
//    (the CPU) runs a part of k requests on min(k, workers) threads, the largest request bounding
//    it. Its average is per work unit *per worker*: a part's time over its span,
//    max(work / min(k, workers), largest request). The paper divides by all the items as if the
//    whole device worked on any part; a CPU part of 1-2 large requests then measured 6x slower
//    per item than the CPU is, and the next batches gave it too little or (with the crossing rule)
//    a few large requests again. A side of workers = 0 is one wide device, as the paper models
//    both. The CUDA driver gives the GPU its resident blocks as workers (a block runs one request,
//    and up to that many run at once): a part of k <= resident requests then spans its largest
//    request, not its work. On md2d (patches=7, ~2,000 particles a patch) an H100's part of 224 or
//    of 245 requests took the same 72 ms, its longest block's time; as one wide device the GPU was
//    predicted to finish 10-15% earlier for each request the CPU took, which it did not.
//  - Finish-time split (adaptive, once both sides are measured): the loop passes each side's
//    backlog (the predicted remaining time of its running parts) and whether it has a free slot;
//    the cut is the prefix that makes the later of the two predicted finishes earliest. With both
//    sides idle and linear costs this is the paper's ratio, except that the crossing request goes
//    to whichever side finishes earlier with it (the paper always gives it to the CPU: with few
//    large requests that overshot the CPU's share by a whole request). A side without a free slot
//    keeps its part waiting in the list while the other side takes its own at once (the paper's
//    loop waits until both devices are free, so the GPU idled while the CPU ran its part).
//    Static keeps the paper's rule and waits for both sides. Until both sides have measured, a
//    CPU of workers gets a probe -- the smallest requests, at most one a worker and half the
//    batch's work -- rather than half the batch (the paper's "initial tasks on both"): on an
//    H100 the CPU was 50 x slower on md2d, and half of a first batch of hundreds of requests kept
//    it busy for longer than the GPU took for the whole step.
//  - Smallest first (adaptive, a CPU of workers): the cut runs over the batch sorted by work, so
//    the CPU's part is the batch's smallest requests, not a prefix in arrival order.
//    A CPU worker runs a request alone, so the part's span is bounded by its largest request: in
//    arrival order an md2d batch put a ~60 ms compute object at the front of the CPU's part
//    (one worker busy for the whole step, the other seven idle after a few ms), or made the cut
//    give the CPU nothing (an H100 trace: 0-21 of 245 requests, where its speed allowed ~100).
//    The probe is chosen the same way: in arrival order it held a 31 ms and a 62 ms compute
//    object in md2d's first two steps on an H100 (the largest would take a worker ~110 ms, past
//    the GPU's whole step once its part launches without delay), and the smallest requests are
//    what the calibrated split gives the CPU: the sample to measure it on.
//  - Launch order (adaptive): each part lists its requests largest first (the order its blocks
//    are taken: longest processing time first, so a side's workers or blocks end together), and
//    the GPU's requests of at least half its largest's work are a launch of their own (gpu_lead)
//    that the loop sends before the rest, where the rest's span is at most half the lead's: on
//    md2d the GPU's time is its largest requests' (one block of 64 threads runs a whole compute
//    object), so their launch should not wait for the assembly of the other ~200, which the loop
//    then assembles while they run (or, with one free slot, sends at its next decision), and
//    whose outputs land while the lead still runs.
//  - CPU margin (adaptive, calibrated): the cut weighs the CPU's predicted time 10% above its
//    average. Ending before the GPU costs the CPU's part nothing when the GPU's time is set by its
//    largest requests, ending after it delays the step by the whole overrun; the CPU's time per
//    unit varies from part to part (the producers' threads share its cores, the longest request
//    a worker takes last), and its part is launched after the GPU's lead.
//
// Pure logic: the policy drivers feed it measured times, the tests scripted ones.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

namespace gpulb::gcharm {

enum class HybridStrategy : std::uint8_t { Adaptive, Static };
enum class Side : std::uint8_t { Cpu, Gpu };

// What the cost model needs of a part (a combined request).
struct PartShape {
  std::uint64_t work = 0;     // its requests' work units summed
  std::uint64_t largest = 0;  // its largest request's work units
  std::uint64_t requests = 0;
};

// A side as the loop sees it when a batch is due.
struct LaneLoad {
  bool free = true;              // a launch slot is free: its part can start now
  std::uint64_t backlog_ns = 0;  // predicted time until its running parts end
};

// How a batch is shared. Without `order`: its first `cpu` requests are the CPU's, the next `gpu`
// the GPU's (the paper's prefix). With it: order[0, cpu) are the positions in the batch (list
// order, from 0) of the CPU's requests and order[cpu, cpu + gpu) the GPU's, each part in the order
// its requests are to be launched; gpu_lead > 0: the GPU's first gpu_lead requests go as a launch
// of their own, ahead of the rest, where the GPU has two free slots. A side launches its part only
// if it is free; otherwise the part stays waiting. cpu + gpu == 0: nothing now.
struct SplitPlan {
  std::size_t cpu = 0, gpu = 0;
  std::vector<std::size_t> order;
  std::size_t gpu_lead = 0;
};

class HybridSplitter {
 public:
  // cpu_share: static's fraction of data items for the CPU, 0..1. *_workers: threads of a side
  // that run one request each (0: one wide device).
  HybridSplitter(HybridStrategy strategy, double cpu_share, std::uint32_t cpu_workers = 0,
                 std::uint32_t gpu_workers = 0)
      : strategy_(strategy), cpu_share_(cpu_share), workers_{cpu_workers, gpu_workers} {}

  // A part took `ns` on `side`.
  void record(Side side, const PartShape& part, std::uint64_t ns) {
    const double units = span(side, part);
    if (units <= 0) return;
    Average& a = avg(side);
    if (!a.warmed_up) {
      a.warmed_up = true;  // the warm-up launch: not a measure of the device's speed
      return;
    }
    ++a.samples;
    a.ns += static_cast<double>(ns);
    a.units += units;
    a.mean_ns_per_item = a.ns / a.units;
  }
  // A combined request of `items` data items took `ns` on `side` (a part of one request).
  void record(Side side, std::uint64_t items, std::uint64_t ns) {
    record(side, PartShape{items, items, 1}, ns);
  }

  bool calibrated() const { return cpu_.samples > 0 && gpu_.samples > 0; }

  // The CPU's fraction of the next batch's data items (the paper's ratio).
  double cpu_fraction() const {
    if (strategy_ == HybridStrategy::Static) return cpu_share_;
    if (!calibrated()) return 0.5;
    const double sum = cpu_.mean_ns_per_item + gpu_.mean_ns_per_item;
    return sum > 0 ? gpu_.mean_ns_per_item / sum : 0.5;
  }

  // The paper's rule: how many requests from the front of a batch go to the CPU (the rest go to
  // the GPU), given each request's work; the request that crosses the CPU's share goes to it.
  template <class W>
  std::size_t cpu_requests(std::span<const W> work) const {
    std::uint64_t total = 0;
    for (W n : work) total += n;
    const double cpu_items = cpu_fraction() * static_cast<double>(total);
    std::size_t taken = 0;
    std::uint64_t sum = 0;
    while (taken < work.size() && static_cast<double>(sum) < cpu_items) sum += work[taken++];
    return taken;
  }
  std::size_t cpu_requests(const std::vector<std::uint32_t>& work) const {
    return cpu_requests(std::span<const std::uint32_t>(work));
  }

  // Whether plan() decides only once both sides are free (static; a wide CPU before calibration).
  bool waits_for_both() const {
    return strategy_ == HybridStrategy::Static || (!calibrated() && workers_[0] == 0);
  }

  // The share of a due batch (each request's work, in list order) given the sides' loads.
  SplitPlan plan(std::span<const std::uint64_t> work, LaneLoad cpu, LaneLoad gpu) const {
    const std::size_t n = work.size();
    if (n == 0 || (!cpu.free && !gpu.free)) return {};
    if (waits_for_both()) {
      // The paper's loop: a decision once both sides can take their parts, the CPU's the prefix
      // of its share. Each part then launches in adaptive's order (largest first, the GPU's lead
      // apart): the order is not the paper's split, and without it static's runs, the one-sided
      // references of `gpulb bench hybrid` among them, ran md2d's GPU-only steps up to 1.2x
      // slower than adaptive's GPU part (an H100, blocks of 256), so adaptive's ratio to the sum
      // of the one-sided rates credited the split with the order's gain.
      if (!cpu.free || !gpu.free) return {};
      std::vector<std::size_t> pos(n);
      std::iota(pos.begin(), pos.end(), std::size_t{0});
      return arranged(work, std::move(pos), cpu_requests(work), workers_[0] != 0);
    }
    // A CPU of workers chooses among the batch by size, smallest first (the header says why).
    std::vector<std::size_t> pos(n);
    std::iota(pos.begin(), pos.end(), std::size_t{0});
    const bool by_size = workers_[0] != 0;
    if (by_size)
      std::stable_sort(pos.begin(), pos.end(),
                       [&](std::size_t a, std::size_t b) { return work[a] < work[b]; });
    if (!calibrated()) {
      // A CPU of workers measures on a probe: the smallest requests, at most one a worker and
      // half the batch's work; the GPU takes the rest at once, busy CPU or not.
      std::uint64_t total = 0;
      for (std::uint64_t w : work) total += w;
      std::size_t c = 0;
      for (std::uint64_t sum = 0; c < n && c < workers_[0] && 2 * (sum + work[pos[c]]) <= total;)
        sum += work[pos[c++]];
      return arranged(work, std::move(pos), c, by_size);
    }
    // The cut c (0..n) that minimises max(CPU finish, GPU finish): the CPU's part (the first c of
    // `pos`) grows, the GPU's (the rest) shrinks, each predicted from its side's average and span.
    std::uint64_t total = 0;
    for (std::uint64_t w : work) total += w;
    std::vector<std::uint64_t> suffix_largest(n + 1, 0);
    for (std::size_t i = n; i-- > 0;)
      suffix_largest[i] = std::max(suffix_largest[i + 1], work[pos[i]]);
    std::size_t best = 0;
    double best_end = std::numeric_limits<double>::infinity(), best_gap = best_end;
    PartShape head{0, 0, 0};
    for (std::size_t c = 0;; ++c) {
      const PartShape tail{total - head.work, suffix_largest[c], n - c};
      const double cpu_end =
          static_cast<double>(cpu.backlog_ns) + kCpuMargin * predict(Side::Cpu, head);
      const double gpu_end = static_cast<double>(gpu.backlog_ns) + predict(Side::Gpu, tail);
      const double end = std::max(cpu_end, gpu_end), gap = std::abs(cpu_end - gpu_end);
      // Ties (equal ends, e.g. a side's backlog dominating) go to the more even split.
      if (end < best_end || (end == best_end && gap < best_gap))
        best = c, best_end = end, best_gap = gap;
      if (c == n) break;
      const std::uint64_t w = work[pos[c]];
      head.work += w, head.largest = std::max(head.largest, w), ++head.requests;
    }
    return arranged(work, std::move(pos), best, by_size);
  }

  // The factor on the CPU's predicted time in the finish-time cut (the header says why).
  static constexpr double kCpuMargin = 1.1;

  // Whether the GPU's lead launches alone into its one free slot while `running` (its launches
  // from earlier decisions) occupy the others; the rest then waits for the next decision. Only
  // where the running launches span at most half the lead: they free their slot in time for the
  // rest (each of its requests under half the lead's largest) to end before the lead. Nothing
  // running (a device of one slot) means the rest would only start after the lead: never alone.
  // Not before calibration: the rest would be split again under the probe rule, which offers a
  // busy CPU another probe to run after the first, and the rest's launch would pay for new
  // buffers while the lead runs (md2d's first step, where the other slot runs the first request
  // alone, keeps one launch: untested on a GPU, so not risked). Static with cpu_share=0 never
  // calibrates (the CPU never measures), so its lead never goes alone: one way in which the
  // GPU-only reference of `gpulb bench hybrid` can launch less well than adaptive's GPU part
  // (docs/benchmarks.md, G-Charm).
  bool lead_goes_alone(const PartShape& lead, std::span<const PartShape> running) const {
    double longest = 0;
    for (const PartShape& r : running) longest = std::max(longest, span(Side::Gpu, r));
    return calibrated() && !running.empty() && 2 * longest <= span(Side::Gpu, lead);
  }

  // Predicted time of `part` on `side` (0 until the side has measured).
  double predict(Side side, const PartShape& part) const {
    if (part.requests == 0) return 0;
    return avg(side).mean_ns_per_item * span(side, part);
  }

  // ns per work unit (per worker for a side of workers).
  double cpu_ns_per_item() const { return cpu_.mean_ns_per_item; }
  double gpu_ns_per_item() const { return gpu_.mean_ns_per_item; }

 private:
  // The plan of cut `c` over `pos` (the CPU's part first): each part largest first (the CPU's
  // only where it is a side of workers; a wide CPU keeps list order), and the GPU's requests of at
  // least half its largest's work as its lead launch, where the others' span is at most half the
  // lead's (they may start up to that much later and still end first: true of a GPU's blocks, not
  // of a few workers with many requests left).
  SplitPlan arranged(std::span<const std::uint64_t> work, std::vector<std::size_t> pos,
                     std::size_t c, bool cpu_by_size) const {
    auto larger_first = [&](std::size_t a, std::size_t b) { return work[a] > work[b]; };
    const auto cut = pos.begin() + static_cast<std::ptrdiff_t>(c);
    if (cpu_by_size) std::stable_sort(pos.begin(), cut, larger_first);
    std::stable_sort(cut, pos.end(), larger_first);
    SplitPlan p{c, pos.size() - c, std::move(pos), 0};
    if (p.gpu > 1) {
      PartShape lead{0, 0, 0}, rest{0, 0, 0};
      const std::uint64_t largest = work[p.order[c]];
      for (std::size_t i = c; i < p.order.size(); ++i) {
        const std::uint64_t w = work[p.order[i]];
        // the order is by work: the lead is a prefix
        PartShape& part = 2 * w >= largest ? lead : rest;
        part.work += w, part.largest = std::max(part.largest, w), ++part.requests;
      }
      if (rest.requests > 0 && 2 * span(Side::Gpu, rest) <= span(Side::Gpu, lead))
        p.gpu_lead = lead.requests;
    }
    return p;
  }

  struct Average {
    bool warmed_up = false;
    std::uint64_t samples = 0;
    double ns = 0, units = 0;  // summed over the measured parts
    double mean_ns_per_item = 0;
  };
  // The work units the side's slowest worker runs: all of them on a wide device.
  double span(Side side, const PartShape& part) const {
    const std::uint32_t w = workers_[side == Side::Cpu ? 0 : 1];
    if (w == 0 || part.requests == 0) return static_cast<double>(part.work);
    const double threads = static_cast<double>(std::min<std::uint64_t>(part.requests, w));
    return std::max(static_cast<double>(part.work) / threads, static_cast<double>(part.largest));
  }
  Average& avg(Side side) { return side == Side::Cpu ? cpu_ : gpu_; }
  const Average& avg(Side side) const { return side == Side::Cpu ? cpu_ : gpu_; }

  HybridStrategy strategy_;
  double cpu_share_;
  std::uint32_t workers_[2];
  Average cpu_, gpu_;
};

}  // namespace gpulb::gcharm
