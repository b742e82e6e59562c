#include "faults/faults.hpp"

#include <csignal>

#include <nlohmann/json.hpp>

#include "gpulb/distribution.hpp"

namespace gpulb::scenarios::faults {

namespace {

const char* const kFaultNames[] = {"none", "trap", "out-of-bounds", "hang", "slow", "stop-rank"};

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> s = {
      {"fault",
       "what task `at` does: none; trap (a trap instruction); out-of-bounds (reads 1 TiB past its "
       "buffer); "
       "hang (never returns, ignores the stop flag); slow (runs slow_ms, stops when the watchdog "
       "asks); "
       "stop-rank (no task: rank `at` of a --distributed run stops itself with SIGSTOP once rank 0 "
       "has its results). "
       "trap, out-of-bounds and hang need the cuda backend; stop-rank a --distributed run",
       "none",
       "none|trap|out-of-bounds|hang|slow|stop-rank",
       0,
       0,
       {std::begin(kFaultNames), std::end(kFaultNames)}},
      {"tasks", "number of tasks", "1000", "1..1048576", 1, 1 << 20, {}},
      {"at",
       "the id of the task that misbehaves (below tasks)",
       "500",
       "0..1048575",
       0,
       (1 << 20) - 1,
       {}},
      {"work", "arithmetic steps per thread of a task", "1000", "0..1000000", 0, 1'000'000, {}},
      {"slow_ms",
       "fault=slow: how long task `at` runs, in ms",
       "3000",
       "1..3600000",
       1,
       3'600'000,
       {}},
  };
  return s;
}

class FaultsScenario : public ScenarioOf<FaultsInstance> {
 public:
  std::string name() const override { return "faults"; }
  std::string description() const override {
    return "Fault injection: equal tasks, one of which traps, reads out of bounds, never returns, "
           "or runs past the "
           "watchdog. Shows how each policy reports a failed task and that the next run starts "
           "clean.";
  }
  const std::vector<ParamSpec>& params() const override { return specs(); }
  DataSize data_size(const ParamMap& params) const override {
    const auto tasks = static_cast<std::uint64_t>(int_param(params, find_spec(specs(), "tasks")));
    return {tasks, tasks * sizeof(FaultsRecord), "tasks"};
  }
  std::unique_ptr<FaultsInstance> instantiate(const ParamMap& params) const override {
    const std::string name = choice_param(params, find_spec(specs(), "fault"));
    Fault fault = Fault::None;
    for (std::uint32_t i = 0; i < std::size(kFaultNames); ++i) {
      if (name == kFaultNames[i]) fault = static_cast<Fault>(i);
    }
    const auto tasks = static_cast<std::uint32_t>(int_param(params, find_spec(specs(), "tasks")));
    const auto at = static_cast<std::uint32_t>(int_param(params, find_spec(specs(), "at")));
    if (at >= tasks) {
      throw ConfigError("parameter 'at' is " + std::to_string(at) + ": there are only " +
                        std::to_string(tasks) + " tasks (ids 0.." + std::to_string(tasks - 1) +
                        ")");
    }
    return std::make_unique<FaultsInstance>(
        fault, tasks, at, static_cast<std::uint32_t>(int_param(params, find_spec(specs(), "work"))),
        static_cast<std::uint32_t>(int_param(params, find_spec(specs(), "slow_ms"))));
  }
};

}  // namespace

FaultsInstance::FaultsInstance(Fault fault, std::uint32_t tasks, std::uint32_t at,
                               std::uint32_t work, std::uint32_t slow_ms)
    : fault_(fault), tasks_(tasks), at_(at), work_(work), slow_ms_(slow_ms), records_(tasks) {}

std::vector<Task> FaultsInstance::initial_tasks() const {
  std::vector<Task> tasks(tasks_);
  for (std::uint32_t i = 0; i < tasks_; ++i) {
    tasks[i].id = i;
    tasks[i].parent = Task::kNoParent;
  }
  return tasks;
}

std::string FaultsInstance::unsupported_on(Backend backend) const {
  if (fault_ == Fault::StopRank && backend != Backend::Cpu)
    return "fault=stop-rank stops a rank of a --distributed run, which runs the cpu backend";
  if (backend != Backend::Cpu) return {};
  switch (fault_) {
    case Fault::Trap:
    case Fault::OutOfBounds:
      return std::string("fault=") + kFaultNames[static_cast<int>(fault_)] +
             " would end the whole process on a CPU thread (only a GPU kernel's failure can be "
             "contained); use --backend cuda";
    case Fault::Hang:
      return "fault=hang: a CPU thread that never returns cannot be stopped; use --backend cuda, "
             "or fault=slow";
    default: return {};
  }
}

FaultsBody FaultsInstance::body(FaultsRecord* records) const {
  return {records, work_, at_, fault_, std::uint64_t{slow_ms_} * 1'000'000};
}

void FaultsInstance::collect(std::vector<std::vector<FaultsRecord>> per_device,
                             const ExecPlan& plan, const ExecOutput&) {
  records_.assign(tasks_, FaultsRecord{});
  for (const auto& device : per_device) {
    for (std::size_t i = 0; i < device.size() && i < records_.size(); ++i) {
      records_[i].run_count += device[i].run_count;
      records_[i].checksum += device[i].checksum;
    }
  }
  block_size_ = plan.block_size;
  // Here every rank has handed its records and trace to rank 0 (cpu/run_workload.hpp).
  if (fault_ == Fault::StopRank && plan.distribution != nullptr && plan.distribution->rank() == at_)
    std::raise(SIGSTOP);
}

Verification FaultsInstance::verify() const {
  std::string problem;
  for (std::uint32_t i = 0; i < tasks_ && problem.empty(); ++i) {
    if (records_[i].run_count != 1) {
      problem = "task " + std::to_string(i) + " ran " + std::to_string(records_[i].run_count) +
                " times (expected exactly once)";
      break;
    }
    std::uint64_t expect = 0;
    for (std::uint32_t t = 0; t < block_size_; ++t) expect += faults_thread_result(i, t, work_);
    if (records_[i].checksum != expect)
      problem = "task " + std::to_string(i) + " computed a wrong result";
  }
  Verification v;
  v.ok = problem.empty();
  v.message =
      v.ok ? "every task ran exactly once; every result matches the host reference" : problem;
  v.result_json = nlohmann::json{
      {"fault", kFaultNames[static_cast<int>(fault_)]},
      {"tasks", tasks_},
      {"at", at_},
      {"work", work_}}.dump();
  return v;
}

std::unique_ptr<ScenarioOf<FaultsInstance>> make_scenario() {
  return std::make_unique<FaultsScenario>();
}

}  // namespace gpulb::scenarios::faults
