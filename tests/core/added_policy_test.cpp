// A CPU policy added to a registry at run time (cpu::add_policy): it runs the shipped scenarios,
// which were compiled before it existed, through a type-erased body, and the registry refuses what
// it cannot take.
#include <gtest/gtest.h>

#include <string>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/cpu/add_policy.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/cpu/worker.hpp"
#include "gpulb/run.hpp"

namespace gpulb {
namespace {

const PolicyDescriptor& every_task_on_worker_0() {
  static const PolicyDescriptor d{"test-worker-0",
                                  "a test",
                                  "worker 0 runs every task; the others start and end",
                                  {.persistent = true},
                                  {}};
  return d;
}

// Worker 0 runs every task in order, so the trace says which driver ran: one worker with tasks.
struct WorkerZeroDriver {
  static const PolicyDescriptor& descriptor() { return every_task_on_worker_0(); }
  template <class Body>
  static ExecOutput run(const ExecPlan& plan, const Body& body) {
    cpu::Runtime rt(plan, 2 * plan.tasks.size() + 16);
    rt.start([&](std::uint32_t rank) {
      cpu::WorkerSlot& slot = rt.slot(rank);
      const cpu::WorkerContext ctx(rank, plan.block_size, rt.worker_segment(rank), rt.origin_ns(),
                                   rt.stop_flag());
      cpu::worker_begin(ctx, slot, rank);
      for (std::size_t i = 0; rank == 0 && i < plan.tasks.size(); ++i)
        cpu::run_task(rt, ctx, slot, body, plan.tasks[i]);
      cpu::worker_end(ctx, slot, 0);
    });
    ExecOutput out = rt.finish("host", plan.tasks.size());
    out.metrics["ran_by_the_added_driver"] = 1;
    return out;
  }
};

const PolicyDescriptor& a_taken_name() {
  static const PolicyDescriptor d{
      "work-stealing", "a test", "a second policy named as a shipped one", {}, {}};
  return d;
}
struct TakenNameDriver : WorkerZeroDriver {
  static const PolicyDescriptor& descriptor() { return a_taken_name(); }
};

RunConfig patterns_under(const std::string& policy) {
  RunConfig c;
  c.scenario = "patterns";
  c.policy = policy;
  c.backend = Backend::Cpu;
  c.workers = 3;
  c.params = {{"blocks", "90"}, {"work", "10"}};
  return c;
}

TEST(AddedPolicy, RunsAShippedScenarioThroughItsOwnDriver) {
  Registry registry = builtin::make_registry();
  cpu::add_policy<WorkerZeroDriver>(registry);
  const RunResult r = run(registry, patterns_under("test-worker-0"));
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.trace.meta.policy, "test-worker-0");
  EXPECT_EQ(r.metrics.at("ran_by_the_added_driver"), 1u);
  EXPECT_EQ(r.metrics.at("tasks_per_worker_max"), 90u);
  EXPECT_EQ(r.metrics.at("tasks_per_worker_min"), 0u);
  ASSERT_EQ(r.stats.per_worker.size(), 3u);
  EXPECT_EQ(r.stats.per_worker[0].tasks + r.stats.per_worker[1].tasks + r.stats.per_worker[2].tasks,
            90u);
}

TEST(AddedPolicy, LeavesTheShippedPoliciesAsTheyWere) {
  Registry registry = builtin::make_registry();
  cpu::add_policy<WorkerZeroDriver>(registry);
  const RunResult r = run(registry, patterns_under("hardware"));
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.metrics.count("ran_by_the_added_driver"), 0u);
  EXPECT_EQ(registry.policies().size(), builtin::registry().policies().size() + 1);
}

TEST(AddedPolicy, RunsOnTheCpuBackendOnly) {
  Registry registry = builtin::make_registry();
  cpu::add_policy<WorkerZeroDriver>(registry);
  const PolicyDescriptor& p = registry.policy("test-worker-0");
  EXPECT_TRUE(registry.policy_runs_on(p, Backend::Cpu));
  EXPECT_FALSE(registry.policy_runs_on(p, Backend::Cuda));
  EXPECT_EQ(registry.added_cpu_driver(registry.policy("work-stealing")), nullptr);
}

TEST(AddedPolicy, ANameAPolicyHasIsRefused) {
  Registry registry = builtin::make_registry();
  try {
    cpu::add_policy<TakenNameDriver>(registry);
    FAIL() << "a second 'work-stealing' was added";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("policy 'work-stealing' is registered already"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(registry.policies().size(), builtin::registry().policies().size());
}

TEST(AddedPolicy, ASpawningScenarioIsRefusedNamingThePolicy) {
  Registry registry = builtin::make_registry();
  cpu::add_policy<WorkerZeroDriver>(registry);
  RunConfig c = patterns_under("test-worker-0");
  c.scenario = "uts";
  c.params = {{"tree", "T1"}};
  try {
    run(registry, c);
    FAIL() << "a spawning scenario ran under a policy without runs_spawned_tasks";
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find("spawns child tasks, which policy 'test-worker-0' cannot run"),
        std::string::npos)
        << e.what();
  }
}

TEST(AddedPolicy, ADriverWithoutAFunctionIsRefused) {
  Registry registry;
  EXPECT_THROW(registry.add_cpu_driver(every_task_on_worker_0(), nullptr), ConfigError);
  EXPECT_EQ(registry.find_policy("test-worker-0"), nullptr);
}

TEST(MakeRegistry, HoldsWhatTheShippedRegistryHolds) {
  const Registry made = builtin::make_registry();
  const Registry& shipped = builtin::registry();
  ASSERT_EQ(made.scenarios().size(), shipped.scenarios().size());
  for (std::size_t i = 0; i < made.scenarios().size(); ++i)
    EXPECT_EQ(made.scenarios()[i]->name(), shipped.scenarios()[i]->name());
  ASSERT_EQ(made.policies().size(), shipped.policies().size());
  for (std::size_t i = 0; i < made.policies().size(); ++i)
    EXPECT_EQ(made.policies()[i]->name, shipped.policies()[i]->name);
}

}  // namespace
}  // namespace gpulb
