// `collatz`: a scenario written outside gpulb, against its installed headers only. Each task
// counts the Collatz steps (n -> n/2 or 3n+1, down to 1) of a chunk of consecutive numbers; how
// long a number takes varies irregularly, so the tasks' costs do too. The verifier recounts every
// chunk on the host.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpulb/atomic.hpp"
#include "gpulb/hd.hpp"
#include "gpulb/scenario.hpp"
#include "gpulb/task.hpp"

namespace own {

GPULB_HD inline std::uint32_t collatz_steps(std::uint64_t n) {
  std::uint32_t steps = 0;
  for (; n > 1; ++steps) n = (n % 2 == 0) ? n / 2 : 3 * n + 1;
  return steps;
}

// One record a task (zeroed before the run).
struct CollatzRecord {
  std::uint64_t steps;  // the chunk's steps, summed
  std::uint32_t runs;   // how often the task ran: exactly once, or the policy lost or repeated it
};

// The task body, written once for every backend: a block's threads take the chunk's numbers in
// turn (on the CPU backend, one loop over them). payload[0]: the chunk's first number; [1]: its size.
struct CollatzBody {
  CollatzRecord* records;

  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const gpulb::Task& task) const {
    const std::uint64_t first = task.payload[0], count = task.payload[1];
    const std::uint32_t threads = ctx.block_size();
    const std::uint64_t steps = ctx.sum_over_threads([&](std::uint32_t t) {
      std::uint64_t sum = 0;
      for (std::uint64_t i = t; i < count; i += threads) sum += collatz_steps(first + i);
      return sum;
    });
    ctx.once([&] {
      records[task.id].steps = steps;
      gpulb::device_atomic_ref<std::uint32_t>(records[task.id].runs)
          .fetch_add(1, gpulb::mo::relaxed);
    });
  }
};

class CollatzInstance : public gpulb::Workload<CollatzBody, CollatzRecord> {
 public:
  CollatzInstance(std::uint64_t first, std::uint64_t numbers, std::uint32_t chunk);

  std::vector<gpulb::Task> initial_tasks() const override;
  gpulb::Verification verify() const override;
  std::size_t record_count(std::uint32_t) const override { return tasks_; }
  CollatzBody body(CollatzRecord* records) const override { return {records}; }
  void collect(std::vector<std::vector<CollatzRecord>> per_device, const gpulb::ExecPlan& plan,
               const gpulb::ExecOutput& out) override;

 private:
  std::uint64_t first_, numbers_;
  std::uint32_t chunk_;
  std::uint32_t tasks_;
  std::vector<CollatzRecord> records_;
};

std::unique_ptr<gpulb::ScenarioOf<CollatzInstance>> make_collatz();

}  // namespace own
