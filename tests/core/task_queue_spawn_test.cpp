// task-queue running spawning scenarios on the CPU backend (a departure from Chen et al.,
// whose tasks never spawn): children go back to the host pool through the workers' outboxes, the
// counts are exact, spawned ids are unique, and the CUDA backend still refuses, saying so.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/cpu/drivers.hpp"
#include "gpulb/cpu/run_workload.hpp"
#include "gpulb/policies/task_queue.hpp"
#include "gpulb/run.hpp"
#include "uts/uts.hpp"

namespace gpulb {
namespace {

RunResult run_task_queue(const std::string& scenario, ParamMap params, bool trace,
                         std::uint32_t workers = 2) {
  RunConfig c;
  c.scenario = scenario;
  c.policy = "task-queue";
  c.backend = Backend::Cpu;
  c.workers = workers;
  c.trace = trace;
  c.params = std::move(params);
  return run(builtin::registry(), c);
}

// Every TaskBegin's id, over every worker track; true where none repeats.
std::vector<std::uint32_t> begun_ids(const trace::Trace& t) {
  std::vector<std::uint32_t> ids;
  for (const trace::Track& track : t.tracks) {
    for (const trace::Event& e : track.events) {
      if (e.kind == trace::EventKind::TaskBegin) ids.push_back(e.arg);
    }
  }
  return ids;
}

void expect_unique_ids(const RunResult& r) {
  ASSERT_EQ(r.stats.dropped_events, 0u) << "the trace must hold every task to check the ids";
  std::vector<std::uint32_t> ids = begun_ids(r.trace);
  EXPECT_EQ(ids.size(), r.tasks) << "a TaskBegin a task";
  std::sort(ids.begin(), ids.end());
  const auto dup = std::adjacent_find(ids.begin(), ids.end());
  EXPECT_TRUE(dup == ids.end()) << "task id " << *dup << " was given out twice";
}

// The acceptance run on one host: T1 (4.1 million nodes) under task-queue.
TEST(TaskQueueSpawning, UtsT1ReportsThePublishedCounts) {
#if defined(GPULB_TSAN_BUILD)
  GTEST_SKIP() << "4 million tasks are too slow under ThreadSanitizer";
#endif
  const RunResult r = run_task_queue("uts", {{"tree", "T1"}, {"reference", "off"}}, false);
  EXPECT_TRUE(r.verified) << r.verification;
  const auto j = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(j["nodes"], 4130071);
  EXPECT_EQ(j["leaves"], 3305118);
  EXPECT_EQ(j["max_depth"], 10);
  EXPECT_EQ(r.tasks, 4130071u);
  EXPECT_GT(r.metrics.at("peak_pool"), 0u);
  // Depth first keeps the pool near depth x fan-out x a batch, far from T1's widest level (~3 M).
  EXPECT_LT(r.metrics.at("peak_pool"), 200000u);
}

// A smaller tree, traced: every node ran once under an id of its own (ids come from each worker's
// block of the run's counter, as work-stealing's do).
TEST(TaskQueueSpawning, UtsSmallTreeMatchesTheSequentialSearchWithUniqueIds) {
  const RunResult r = run_task_queue(
      "uts", {{"tree", "custom"}, {"t", "1"}, {"a", "3"}, {"d", "6"}, {"b", "4"}, {"r", "19"}},
      true, 3);
  EXPECT_TRUE(r.verified) << r.verification;
  const auto j = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(j["nodes"], j["reference"]["nodes"]);
  EXPECT_GT(j["nodes"].get<std::uint64_t>(), 1000u) << "a tree this small tests nothing";
  EXPECT_EQ(r.tasks, j["nodes"].get<std::uint64_t>());
  expect_unique_ids(r);
}

TEST(TaskQueueSpawning, NQueensCountsTheKnownSolutionsWithUniqueIds) {
  const RunResult r = run_task_queue("nqueens", {{"n", "11"}, {"cutoff", "5"}}, true);
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_NE(r.verification.find("2680 solutions"), std::string::npos) << r.verification;
  EXPECT_GT(r.tasks, 1000u);
  expect_unique_ids(r);
}

// connect4 indexes a table by task id: its ids stay dense (one fetch-and-add per spawning task).
TEST(TaskQueueSpawning, Connect4FindsTheSequentialMinimaxMove) {
  const RunResult r = run_task_queue("connect4", {{"lookahead", "5"}}, false, 3);
  EXPECT_TRUE(r.verified) << r.verification;
}

// The CUDA driver runs no spawned task: gpulb::run refuses before any GPU is touched, naming the
// backend. Tested without a GPU on a registry that claims one (its CUDA runner never runs).
ExecOutput never_runs(scenarios::uts::UtsInstance&, const ExecPlan&) {
  ADD_FAILURE() << "the CUDA runner ran";
  return {};
}
std::vector<trace::Device> one_fake_gpu() {
  trace::Device d;
  d.name = "fake GPU";
  return {d};
}

TEST(TaskQueueSpawning, TheCudaBackendRefusesASpawningScenarioNamingTheBackend) {
  Registry reg;
  cpu::Drivers::register_policies(reg, Backend::Cpu);
  for (const PolicyDescriptor* p : reg.policies()) reg.add_policy(*p, Backend::Cuda);
  reg.set_cuda_device_lister(&one_fake_gpu);
  reg.add_scenario(scenarios::uts::make_scenario(),
                   {&cpu::run_workload<scenarios::uts::UtsInstance>, &never_runs});
  RunConfig c;
  c.scenario = "uts";
  c.policy = "task-queue";
  c.backend = Backend::Cuda;
  c.trace = false;
  c.params = {{"tree", "custom"}, {"d", "2"}};
  try {
    run(reg, c);
    FAIL() << "task-queue ran a spawning scenario on the cuda backend";
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "scenario 'uts' spawns child tasks, which policy 'task-queue' cannot run on the cuda "
            "backend (only on cpu); use work-stealing"),
        std::string::npos)
        << e.what();
  }
  // The same registry runs it on the CPU.
  c.backend = Backend::Cpu;
  c.workers = 2;
  EXPECT_TRUE(run(reg, c).verified);
}

TEST(TaskQueueSpawning, TheTraitsSayWhichBackendSpawns) {
  const PolicyTraits& t = policies::task_queue().traits;
  EXPECT_TRUE(runs_spawned_tasks(t, Backend::Cpu));
  EXPECT_FALSE(runs_spawned_tasks(t, Backend::Cuda));
}

}  // namespace
}  // namespace gpulb
