// The CUDA backend: runs a task body under the plan's policy on 1..N GPUs of this host.
//   gpulb::kernels::execute(plan, [&](std::uint32_t gpu_slot, std::uint32_t workers) { return Body{...}; })
// The factory is called once per GPU, with that GPU current and its worker count known, so each
// GPU gets a body over its own memory (detail/body_factory.hpp). run_workload.cuh binds a
// scenario's body to it; tests call it directly with their own bodies.
#pragma once

#include "gpulb/exec_plan.hpp"
#include "gpulb/kernels/detail/body_factory.hpp"
#include "gpulb/kernels/drivers.cuh"

namespace gpulb::kernels {

template <class MakeBody>
ExecOutput execute(const ExecPlan& plan, MakeBody&& make_body) {
  if (plan.host_feed && (plan.policy == nullptr || !plan.policy->traits.host_inserts)) {
    throw ConfigError(
        "host inserts while the run goes on (host_feed) need a policy that takes them "
        "(work-stealing)");
  }
  detail::BodyFactory<std::remove_reference_t<MakeBody>> factory(make_body);
  return Drivers::run(plan, Backend::Cuda, factory);
}

}  // namespace gpulb::kernels
