// A backend's policy drivers as one compile-time list: the backend's registration point (one entry
// a policy), its dispatch (find the plan's policy by name, run its driver) and the descriptors it
// adds to the registry's policy table. A driver is a type with
//   static const PolicyDescriptor& descriptor();
//   template <class... Args> static ExecOutput run(const ExecPlan&, Args&&...);  // the backend's arguments
#pragma once

#include <string>
#include <utility>

#include "gpulb/backend.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/registry.hpp"

namespace gpulb {

template <class... Drivers>
struct DriverList {
  static void register_policies(Registry& registry, Backend backend) {
    (registry.add_policy(Drivers::descriptor(), backend), ...);
  }

  template <class... Args>
  static ExecOutput run(const ExecPlan& plan, Backend backend, Args&&... args) {
    if (plan.policy == nullptr) throw ConfigError("internal: an execution plan without a policy");
    ExecOutput out;
    const bool found = (try_run<Drivers>(plan, out, args...) || ...);
    if (!found) {
      throw ConfigError("policy '" + std::string(plan.policy->name) + "' is not available on the " +
                        std::string(to_string(backend)) + " backend");
    }
    return out;
  }

 private:
  template <class Driver, class... Args>
  static bool try_run(const ExecPlan& plan, ExecOutput& out, Args&... args) {
    if (plan.policy->name != Driver::descriptor().name) return false;
    out = Driver::run(plan, args...);
    return true;
  }
};

}  // namespace gpulb
