// The CPU backend: runs a task body under the plan's policy on host threads, one thread per
// worker (a thread block's stand-in). run_workload.hpp binds a scenario's body to it; tests call
// it directly with their own bodies.
#pragma once

#include "gpulb/cpu/add_policy.hpp"
#include "gpulb/cpu/drivers.hpp"
#include "gpulb/exec_plan.hpp"

namespace gpulb::cpu {

template <class Body>
ExecOutput execute(const ExecPlan& plan, const Body& body) {
  if (plan.host_feed && (plan.policy == nullptr || !plan.policy->traits.host_inserts)) {
    throw ConfigError(
        "host inserts while the run goes on (host_feed) need a policy that takes them "
        "(work-stealing)");
  }
  // A policy a program added (Registry::add_cpu_driver): its name is none of the compiled list's.
  if (plan.added_cpu_driver != nullptr) return plan.added_cpu_driver(plan, AnyBody(body));
  return Drivers::run(plan, Backend::Cpu, body);
}

}  // namespace gpulb::cpu
