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
// Departure from the paper (which does not single it out): each device's first combined request
// is a warm-up -- it pays for loading the kernel's module, the first touch of the device cache
// and of the threads' stacks -- and is left out of the averages. Measured on an H100, a first
// launch took 100x longer per item than the next; folded into a running mean it sent every later
// batch to the other device, which then never measured again.
//
// Pure logic: the policy drivers feed it measured times, the tests scripted ones.
#pragma once

#include <cstdint>
#include <span>

namespace gpulb::gcharm {

enum class HybridStrategy : std::uint8_t { Adaptive, Static };
enum class Side : std::uint8_t { Cpu, Gpu };

class HybridSplitter {
 public:
  // cpu_share: static's fraction of data items for the CPU, 0..1.
  HybridSplitter(HybridStrategy strategy, double cpu_share) : strategy_(strategy), cpu_share_(cpu_share) {}

  // A combined request of `items` data items took `ns` on `side`.
  void record(Side side, std::uint64_t items, std::uint64_t ns) {
    if (items == 0) return;
    Average& a = side == Side::Cpu ? cpu_ : gpu_;
    if (!a.warmed_up) {
      a.warmed_up = true;  // the warm-up launch: not a measure of the device's speed
      return;
    }
    ++a.samples;
    a.mean_ns_per_item += (static_cast<double>(ns) / static_cast<double>(items) - a.mean_ns_per_item) / static_cast<double>(a.samples);
  }

  bool calibrated() const { return cpu_.samples > 0 && gpu_.samples > 0; }

  // The CPU's fraction of the next batch's data items.
  double cpu_fraction() const {
    if (strategy_ == HybridStrategy::Static) return cpu_share_;
    if (!calibrated()) return 0.5;
    const double sum = cpu_.mean_ns_per_item + gpu_.mean_ns_per_item;
    return sum > 0 ? gpu_.mean_ns_per_item / sum : 0.5;
  }

  // How many requests from the front of a batch go to the CPU (the rest go to the GPU), given
  // each request's data items.
  std::size_t cpu_requests(std::span<const std::uint32_t> items_per_request) const {
    std::uint64_t total = 0;
    for (std::uint32_t n : items_per_request) total += n;
    const double cpu_items = cpu_fraction() * static_cast<double>(total);
    std::size_t taken = 0;
    std::uint64_t sum = 0;
    while (taken < items_per_request.size() && static_cast<double>(sum) < cpu_items) sum += items_per_request[taken++];
    return taken;
  }

  double cpu_ns_per_item() const { return cpu_.mean_ns_per_item; }
  double gpu_ns_per_item() const { return gpu_.mean_ns_per_item; }

 private:
  struct Average {
    bool warmed_up = false;
    std::uint64_t samples = 0;
    double mean_ns_per_item = 0;
  };
  HybridStrategy strategy_;
  double cpu_share_;
  Average cpu_, gpu_;
};

}  // namespace gpulb::gcharm
