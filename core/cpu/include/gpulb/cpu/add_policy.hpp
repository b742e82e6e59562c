// A CPU policy from outside the backend's compiled list (cpu/drivers.hpp): a program adds its own
// driver to a registry, and every scenario bound to the CPU backend runs under it.
//
//   gpulb::Registry registry = gpulb::builtin::make_registry();
//   gpulb::cpu::add_policy<MyDriver>(registry);
//
// The driver has the shape of the compiled ones (policies/*.hpp):
//   static const PolicyDescriptor& descriptor();
//   template <class Body> static ExecOutput run(const ExecPlan&, const Body&);
// It is instantiated once, for AnyBody: the scenarios' runners were compiled before the policy
// existed, so they hand it their body with its type erased, at one indirect call a task.
#pragma once

#include "gpulb/cpu/context.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/registry.hpp"
#include "gpulb/task.hpp"

namespace gpulb::cpu {

// A task body of any type, called as the compiled drivers call theirs: body(ctx, task). It refers
// to the body (which outlives the run), it does not copy it.
class AnyBody {
 public:
  template <class Body>
  explicit AnyBody(const Body& body) : body_(&body), call_(&call<Body>) {}
  void operator()(const WorkerContext& ctx, const Task& task) const { call_(body_, ctx, task); }

 private:
  template <class Body>
  static void call(const void* body, const WorkerContext& ctx, const Task& task) {
    (*static_cast<const Body*>(body))(ctx, task);
  }
  const void* body_;
  void (*call_)(const void*, const WorkerContext&, const Task&);
};

// Adds Driver's policy to `registry` on the CPU backend; ConfigError where its name is taken.
template <class Driver>
void add_policy(Registry& registry) {
  registry.add_cpu_driver(Driver::descriptor(),
                          [](const ExecPlan& plan, const AnyBody& body) -> ExecOutput {
                            return Driver::run(plan, body);
                          });
}

}  // namespace gpulb::cpu
