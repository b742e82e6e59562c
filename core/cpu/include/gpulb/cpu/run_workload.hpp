// The CPU backend's half of the scenario glue: one template that runs any Workload (a scenario
// instance, gpulb/scenario.hpp) on host threads. builtin/ instantiates it once per scenario.
#pragma once

#include <utility>
#include <vector>

#include "gpulb/cpu/execute.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/rank_merge.hpp"

namespace gpulb::cpu {

template <class Instance>
ExecOutput run_workload(Instance& instance, const ExecPlan& plan) {
  ExecPlan p = plan;
  p.workers = plan.workers ? plan.workers : default_workers();  // records may be per worker
  std::vector<std::vector<typename Instance::Record>> records(1);
  records[0].resize(instance.record_count(p.workers));
  ExecOutput out = execute(p, instance.body_on(records[0].data(), instance.input().data()));
  if (p.distribution != nullptr) {
    // Rank 0 collects every rank's records (one array a rank, as one a GPU) and the merged
    // output, so that the scenario's own verify() sees the whole run; other ranks keep theirs.
    std::vector<std::vector<typename Instance::Record>> all =
        gather_records(*p.distribution, records[0]);
    out = merge_rank_outputs(*p.distribution, std::move(out));
    if (p.distribution->rank() == 0) records = std::move(all);
  }
  instance.collect(std::move(records), p, out);
  return out;
}

}  // namespace gpulb::cpu
