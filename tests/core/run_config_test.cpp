// gpulb::run: configuration errors name the problem; metadata reaches the trace.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>

#include "gpulb/run.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/gpu_request.hpp"

namespace gpulb {
namespace {

const Registry& registry() { return builtin::registry(); }

RunConfig small_patterns() {
  RunConfig c;
  c.scenario = "patterns";
  c.backend = Backend::Cpu;
  c.workers = 2;
  c.params = {{"blocks", "64"}, {"work", "10"}};
  return c;
}

void expect_config_error(const RunConfig& c, const std::string& fragment) {
  try {
    run(registry(), c);
    FAIL() << "accepted a bad configuration; expected: " << fragment;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(RunConfig, UnknownScenarioListsTheKnownOnes) {
  RunConfig c = small_patterns();
  c.scenario = "nope";
  expect_config_error(c, "unknown scenario 'nope' (scenarios: ");
}

TEST(RunConfig, UnknownPolicyListsThePolicies) {
  RunConfig c = small_patterns();
  c.policy = "magic";
  expect_config_error(c, "unknown policy 'magic'");
}

TEST(RunConfig, BadParametersAreNamed) {
  RunConfig c = small_patterns();
  c.params["pattern"] = "P9";
  expect_config_error(c, "parameter 'pattern': 'P9' is not one of P0|P1|P2|P3|P4");
  c = small_patterns();
  c.params["blocks"] = "12x";
  expect_config_error(c, "parameter 'blocks': '12x' is not an integer");
  c = small_patterns();
  c.params["blocks"] = "0";
  expect_config_error(c, "parameter 'blocks': 0 is out of range 1..16777216");
  c = small_patterns();
  c.params["colour"] = "red";
  expect_config_error(c, "unknown parameter 'colour'");
  c = small_patterns();
  c.params["queues"] = "65";  // 0 is the default: chosen by variant
  expect_config_error(c, "parameter 'queues': 65 is out of range 0..64");
}

TEST(RunConfig, MetadataDescribesTheRun) {
  RunConfig c = small_patterns();
  c.params["pattern"] = "P2";
  c.params["queue_capacity"] = "16";
  const RunResult r = run(registry(), c);
  EXPECT_TRUE(r.verified) << r.verification;
  const trace::RunMetadata& m = r.trace.meta;
  EXPECT_EQ(m.scenario, "patterns");
  EXPECT_EQ(m.policy, "task-queue");
  EXPECT_EQ(m.backend, "cpu");
  EXPECT_EQ(m.workers, 2u);
  EXPECT_EQ(m.parameters.at("pattern"), "P2");
  EXPECT_EQ(m.parameters.at("work"), "10");
  EXPECT_EQ(m.parameters.at("queue_capacity"), "16");
  EXPECT_NE(m.result_json.find("\"nullified\":32"), std::string::npos) << m.result_json;
  EXPECT_EQ(r.stats.tasks, 64u);
  ASSERT_EQ(r.trace.devices.size(), 1u);
  EXPECT_EQ(r.trace.devices[0].name, "CPU (2 threads)");
}

TEST(RunConfig, CudaWithoutACudaBuildIsAClearError) {
  if (registry().cuda_built()) GTEST_SKIP() << "this registry has a CUDA backend";
  RunConfig c = small_patterns();
  c.backend = Backend::Cuda;
  expect_config_error(c, "without the CUDA backend");
}

TEST(RunConfig, BlockSizeZeroTakesTheScenariosDefaultAndTheTraceSaysWhich) {
  RunConfig c = small_patterns();
  EXPECT_EQ(run(registry(), c).trace.meta.parameters.at("block_size"), "128");
  c.scenario = "nqueens";
  c.policy = "work-stealing";
  c.params = {{"n", "6"}, {"cutoff", "2"}};
  EXPECT_EQ(registry().get("nqueens").default_block_size({}), 32u);
  EXPECT_EQ(run(registry(), c).trace.meta.parameters.at("block_size"), "32");
  c.block_size = 8;  // a named block size wins
  EXPECT_EQ(run(registry(), c).trace.meta.parameters.at("block_size"), "8");
  c.block_size = 1025;
  expect_config_error(c, "block size 1025 is out of range 1..1024");
}

// With trace_capacity=67108864 2 workers took 3.15 GB for 64 tasks. Segments cost memory
// as events fill them, so the run's peak stays near what it wrote.
TEST(RunConfig, ATraceCapacityFarAboveTheRunCostsOnlyWhatIsWritten) {
  RunConfig c = small_patterns();
  c.params["trace_capacity"] = "67108864";
  const RunResult r = run(registry(), c);
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.stats.dropped_events, 0u);
  EXPECT_EQ(r.stats.tasks, 64u);
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  EXPECT_LT(usage.ru_maxrss, 512 * 1024) << "peak resident KiB of this test process";
}

TEST(RunConfig, TraceSegmentsAreHeldToTheTraceBudget) {
  RunConfig c = small_patterns();
  c.params["trace_capacity"] = "1048576";
  c.trace_budget = std::uint64_t{1} << 20;  // 1 MiB for 3 segments: 21845 events each
  const RunResult r = run(registry(), c);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("trace_capacity=1048576 for each of 3 trace segments"),
            std::string::npos)
      << r.notes[0];
  EXPECT_NE(r.notes[0].find("each segment holds 21845 events"), std::string::npos) << r.notes[0];
  EXPECT_EQ(r.stats.tasks, 64u);

  c.params.erase("trace_capacity");
  c.workers = 4;
  c.trace_budget = 4096;
  expect_config_error(c, "the trace needs at least 256 events for each of 5 trace segments");
  c.trace = false;  // no trace, no budget to fit
  EXPECT_TRUE(run(registry(), c).verified);
}

TEST(RunConfig, CpuWorkersFarAboveTheTasksAndTheCoresAreRefused) {
  RunConfig c = small_patterns();  // 64 tasks
  const std::uint32_t bound =
      std::max<std::uint32_t>(64, cpu::kWorkersPerHardwareThread * cpu::default_workers());
  c.workers = bound + 1;
  expect_config_error(
      c, "--workers " + std::to_string(bound + 1) + ": the cpu backend runs a thread per worker");
  c.workers = 64;
  EXPECT_TRUE(run(registry(), c).verified);
}

// CPU events carry raw clock ticks mapped to ns at the run's end (cpu/event_clock.hpp): the
// traced span of the tasks must agree with the makespan the host clock measured. A mapping that
// calibrated over a too-short baseline put the span 23% off in a 3 s run.
TEST(RunConfig, CpuEventTimesAgreeWithTheHostClock) {
  RunConfig c = small_patterns();
  c.params = {{"blocks", "400"}, {"work", "30000"}};  // about a second on 2 workers
  const RunResult r = run(registry(), c);
  ASSERT_TRUE(r.verified) << r.verification;
  std::uint64_t first = ~std::uint64_t{0}, last = 0;
  for (const trace::Track& t : r.trace.tracks) {
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::TaskBegin) first = std::min(first, e.time_ns);
      if (e.kind == trace::EventKind::TaskEnd) last = std::max(last, e.time_ns);
    }
  }
  ASSERT_LT(first, last);
  const double span = double(last - first), makespan = double(r.makespan_ns);
  EXPECT_NEAR(span / makespan, 1.0, 0.02)
      << "tasks span " << span << " ns, makespan " << makespan << " ns";
}

TEST(GpuRequest, MoreGpusThanPresentAreRefusedNamingBoth) {
  EXPECT_NO_THROW(check_gpu_request(0, 2));
  EXPECT_NO_THROW(check_gpu_request(2, 2));
  try {
    check_gpu_request(5, 2);
    FAIL() << "accepted --gpus 5 on 2 GPUs";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--gpus 5: this host has 2 CUDA GPUs; use --gpus 1..2");
  }
  EXPECT_THROW(check_gpu_request(1, 0), ConfigError);
}

}  // namespace
}  // namespace gpulb
