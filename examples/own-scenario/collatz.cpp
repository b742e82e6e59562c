#include "collatz.hpp"

#include <algorithm>
#include <string>

#include "gpulb/params.hpp"

namespace own {
namespace {

const std::vector<gpulb::ParamSpec>& specs() {
  static const std::vector<gpulb::ParamSpec> s = {
      // Below 2e9 every number's path stays below 2^64 (its highest, from 1,410,123,943: 7.6e18).
      {"first", "the first number counted", "1", "1..1000000000", 1, 1'000'000'000, {}},
      {"numbers",
       "how many consecutive numbers are counted",
       "1000000",
       "1..1000000000",
       1,
       1'000'000'000,
       {}},
      {"chunk", "numbers a task counts", "1000", "1..1000000", 1, 1'000'000, {}},
  };
  return s;
}

std::int64_t param(const gpulb::ParamMap& params, const char* name) {
  return gpulb::int_param(params, gpulb::find_spec(specs(), name));
}

class CollatzScenario final : public gpulb::ScenarioOf<CollatzInstance> {
 public:
  std::string name() const override { return "collatz"; }
  std::string description() const override {
    return "Collatz steps of consecutive numbers, a chunk a task (examples/own-scenario): tasks of "
           "irregular cost, each recounted "
           "on the host.";
  }
  const std::vector<gpulb::ParamSpec>& params() const override { return specs(); }
  // What gpulb::run checks against the memory there is before anything is allocated.
  gpulb::DataSize data_size(const gpulb::ParamMap& params) const override {
    const auto tasks = static_cast<std::uint64_t>(
        (param(params, "numbers") + param(params, "chunk") - 1) / param(params, "chunk"));
    return {tasks, tasks * (sizeof(gpulb::Task) + 2 * sizeof(CollatzRecord)), "numbers"};
  }
  std::unique_ptr<CollatzInstance> instantiate(const gpulb::ParamMap& params) const override {
    const auto numbers = static_cast<std::uint64_t>(param(params, "numbers"));
    const auto chunk = static_cast<std::uint32_t>(param(params, "chunk"));
    // Tasks have 32-bit ids: the ranges above keep numbers / chunk below 2^32.
    return std::make_unique<CollatzInstance>(static_cast<std::uint64_t>(param(params, "first")),
                                             numbers, chunk);
  }
};

}  // namespace

CollatzInstance::CollatzInstance(std::uint64_t first, std::uint64_t numbers, std::uint32_t chunk)
    : first_(first),
      numbers_(numbers),
      chunk_(chunk),
      tasks_(static_cast<std::uint32_t>((numbers + chunk - 1) / chunk)) {}

std::vector<gpulb::Task> CollatzInstance::initial_tasks() const {
  std::vector<gpulb::Task> tasks(tasks_);
  for (std::uint32_t i = 0; i < tasks_; ++i) {
    const std::uint64_t begin = std::uint64_t{i} * chunk_;
    tasks[i].id = i;
    tasks[i].parent = gpulb::Task::kNoParent;
    tasks[i].payload[0] = first_ + begin;
    tasks[i].payload[1] = std::min<std::uint64_t>(chunk_, numbers_ - begin);
  }
  return tasks;
}

// Each task ran on one device: the others' records for it are zero, so the sum is its record.
void CollatzInstance::collect(std::vector<std::vector<CollatzRecord>> per_device,
                              const gpulb::ExecPlan&, const gpulb::ExecOutput&) {
  records_.assign(tasks_, CollatzRecord{});
  for (const auto& device : per_device) {
    for (std::size_t i = 0; i < device.size() && i < records_.size(); ++i) {
      records_[i].steps += device[i].steps;
      records_[i].runs += device[i].runs;
    }
  }
}

gpulb::Verification CollatzInstance::verify() const {
  gpulb::Verification v;
  std::string problem;
  std::uint64_t total = 0;
  for (const gpulb::Task& task : initial_tasks()) {
    const CollatzRecord& r = records_.at(task.id);
    std::uint64_t expect = 0;
    for (std::uint64_t n = task.payload[0]; n < task.payload[0] + task.payload[1]; ++n)
      expect += collatz_steps(n);
    if (problem.empty() && r.runs != 1)
      problem = "task " + std::to_string(task.id) + " ran " + std::to_string(r.runs) +
                " times (expected once)";
    if (problem.empty() && r.steps != expect) {
      problem = "task " + std::to_string(task.id) + " counted " + std::to_string(r.steps) +
                " steps, the host " + std::to_string(expect);
    }
    total += expect;
  }
  v.ok = problem.empty();
  v.message = v.ok ? "every task ran once and counted the steps the host counts" : problem;
  v.result_json = "{\"first\": " + std::to_string(first_) +
                  ", \"numbers\": " + std::to_string(numbers_) +
                  ", \"tasks\": " + std::to_string(tasks_) +
                  ", \"total_steps\": " + std::to_string(total) + "}";
  return v;
}

std::unique_ptr<gpulb::ScenarioOf<CollatzInstance>> make_collatz() {
  return std::make_unique<CollatzScenario>();
}

}  // namespace own
