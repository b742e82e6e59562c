// The `faults` scenario: equal tasks, one of which misbehaves on purpose (fault injection), to
// show how each policy reports a failed task body or a run past its watchdog, and that the next
// run starts clean. docs/reliability.md lists what was measured on an H100.
//
//   fault=none           every task computes and returns (verified against a host reference)
//   fault=trap           task `at` traps (GPU only)
//   fault=out-of-bounds  task `at` reads 1 TiB past its buffer (GPU only)
//   fault=hang           task `at` never returns and ignores the stop flag (GPU only)
//   fault=slow           task `at` runs slow_ms, but returns when the watchdog asks it to stop
//   fault=stop-rank      rank `at` of a --distributed run stops itself (SIGSTOP) once rank 0 has
//                        its results: the end of a job must not wait for it forever
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "faults/faults_body.hpp"
#include "gpulb/scenario.hpp"

namespace gpulb::scenarios::faults {

// One record a task, summed over the devices that ran some (a task runs on one GPU).
class FaultsInstance : public Workload<FaultsBody, FaultsRecord> {
 public:
  FaultsInstance(Fault fault, std::uint32_t tasks, std::uint32_t at, std::uint32_t work,
                 std::uint32_t slow_ms);

  std::vector<Task> initial_tasks() const override;
  Verification verify() const override;
  std::string unsupported_on(Backend backend) const override;
  std::size_t record_count(std::uint32_t) const override { return tasks_; }
  FaultsBody body(FaultsRecord* records) const override;
  void collect(std::vector<std::vector<FaultsRecord>> per_device, const ExecPlan& plan,
               const ExecOutput& out) override;

 private:
  Fault fault_;
  std::uint32_t tasks_, at_, work_, slow_ms_;
  std::uint32_t block_size_ = 0;  // of the last run: the checksum depends on it
  std::vector<FaultsRecord> records_;
};

std::unique_ptr<ScenarioOf<FaultsInstance>> make_scenario();

}  // namespace gpulb::scenarios::faults
