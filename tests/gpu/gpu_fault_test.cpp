// GPU faults: a task body that traps or reads out of bounds, a task that never returns,
// a launch past the watchdog. Each ends with exit 1 and an error naming the policy and the GPU,
// the process exits (under `timeout`: a hang fails the test), and the next run on that GPU works.
// Each fault runs in its own gpulb process, as a user meets it: a trap loses the CUDA context of
// the process that ran it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/cuda/devices.hpp"
#include "gpulb/run.hpp"

namespace gpulb {
namespace {

using testing::Outcome;

#define SKIP_WITHOUT_GPU() \
  if (cuda::list_devices().empty()) GTEST_SKIP() << "no CUDA GPU present: GPU tests skipped"

const char* const kPolicies[] = {"hardware",      "chunked",     "task-queue",
                                 "work-stealing", "static-list", "blocking-queue"};

// A hang would stop the suite: every run gets a deadline far above what it needs.
Outcome run_faults(const std::string& policy, const std::string& args) {
  return testing::shell_gpulb("timeout -s KILL 120 ",
                              "run faults --backend cuda --gpus 1 --no-trace --policy " + policy +
                                  " --param tasks=2000 --param at=1234 " + args);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void expect_next_run_verifies(const std::string& policy) {
  const Outcome next = run_faults(policy, "--json");
  ASSERT_EQ(next.exit_code, 0) << policy << ": the run after the fault failed: " << next.out;
  EXPECT_EQ(nlohmann::json::parse(next.out).at("verified"), true) << next.out;
}

TEST(GpuFaults, ATrapEndsTheRunNamingPolicyAndGpuAndTheNextRunWorks) {
  SKIP_WITHOUT_GPU();
  for (const std::string policy : kPolicies) {
    const Outcome o = run_faults(policy, "--param fault=trap");
    EXPECT_EQ(o.exit_code, 1) << policy << ": " << o.out;
    EXPECT_TRUE(contains(
        o.out,
        "policy '" + policy + "' on GPU 0: a kernel failed: CUDA error cudaErrorLaunchFailure"))
        << o.out;
    EXPECT_TRUE(contains(o.out, "context is lost for the rest of this process")) << o.out;
    expect_next_run_verifies(policy);
  }
}

TEST(GpuFaults, AnOutOfBoundsReadEndsTheRunNamingPolicyAndGpuAndTheNextRunWorks) {
  SKIP_WITHOUT_GPU();
  for (const std::string policy : kPolicies) {
    const Outcome o = run_faults(policy, "--param fault=out-of-bounds");
    EXPECT_EQ(o.exit_code, 1) << policy << ": " << o.out;
    EXPECT_TRUE(contains(
        o.out,
        "policy '" + policy + "' on GPU 0: a kernel failed: CUDA error cudaErrorIllegalAddress"))
        << o.out;
    expect_next_run_verifies(policy);
  }
}

// A launch (or a task) that runs past watchdog_ms: the watchdog asks the blocks to stop, the slow
// task polls the flag, the kernel ends, and the error names the policy and the GPU.
TEST(GpuFaults, ARunPastTheWatchdogStopsWithAClearErrorAndTheNextRunWorks) {
  SKIP_WITHOUT_GPU();
  for (const std::string policy : kPolicies) {
    const Outcome o =
        run_faults(policy, "--param fault=slow --param slow_ms=600000 --param watchdog_ms=300");
    EXPECT_EQ(o.exit_code, 1) << policy << ": " << o.out;
    EXPECT_TRUE(
        contains(o.out, "watchdog: policy '" + policy + "' on GPU 0 made no progress for 300 ms"))
        << o.out;
    EXPECT_FALSE(contains(o.out, "did not stop")) << o.out;
    expect_next_run_verifies(policy);
  }
}

// A task that never returns and ignores the stop flag: the kernel cannot be stopped. The run
// still ends (nothing waits for the abandoned kernel: no cudaFree, no cudaDeviceReset), the
// process exits, and the next process finds the GPU working.
TEST(GpuFaults, AKernelThatCannotBeStoppedIsAbandonedAndTheProcessStillExits) {
  SKIP_WITHOUT_GPU();
  for (const std::string policy : {"hardware", "task-queue", "work-stealing"}) {
    const Outcome o = run_faults(policy, "--param fault=hang --param watchdog_ms=300");
    EXPECT_EQ(o.exit_code, 1) << policy << ": " << o.out;
    EXPECT_TRUE(
        contains(o.out, "watchdog: policy '" + policy + "' on GPU 0 made no progress for 300 ms"))
        << o.out;
    EXPECT_TRUE(contains(o.out, "The kernel did not stop within 10 s of the stop request"))
        << o.out;
    EXPECT_TRUE(contains(o.out, "it is abandoned, GPU 0 cannot be used again by this process"))
        << o.out;
    expect_next_run_verifies(policy);
  }
}

// In one process (the viewer runs scenarios in its own): after a trap the process's CUDA context
// is lost, and a later run on that GPU is refused with the reason instead of failing obscurely.
// The test body runs in a fresh child process (death-test style "threadsafe" re-executes the
// test binary), so that this test's lost context is nobody else's.
void trap_then_run_again_in_one_process() {
  RunConfig config;
  config.scenario = "faults";
  config.policy = "task-queue";
  config.backend = Backend::Cuda;
  config.gpus = 1;
  config.trace = false;
  config.params = {{"fault", "trap"}, {"tasks", "100"}, {"at", "3"}};
  try {
    (void)run(builtin::registry(), config);
    std::exit(10);  // the trap did not fail the run
  } catch (const RunError& e) {
    if (!contains(e.what(), "policy 'task-queue' on GPU 0: a kernel failed")) std::exit(11);
  }
  config.params = {{"fault", "none"}, {"tasks", "100"}, {"at", "3"}};
  config.policy = "hardware";
  try {
    (void)run(builtin::registry(), config);
    std::exit(12);  // a run on the lost context did not fail
  } catch (const RunError& e) {
    if (!contains(e.what(),
                  "GPU 0 cannot be used again by this process (a kernel of an earlier run failed "
                  "with cudaErrorLaunchFailure)")) {
      std::fprintf(stderr, "unexpected message: %s\n", e.what());
      std::exit(13);
    }
  }
  std::exit(0);
}

TEST(GpuFaults, AfterATrapTheSameProcessRefusesTheGpuWithTheReason) {
  SKIP_WITHOUT_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(trap_then_run_again_in_one_process(), ::testing::ExitedWithCode(0), "");
}

// On several GPUs the error reported is the one of the GPU that failed first, not the "stopped
// because another GPU's run failed" of the others (the trapping task lands on either GPU).
TEST(GpuFaults, OnTwoGpusTheFirstFailureIsTheOneReported) {
  SKIP_WITHOUT_GPU();
  if (cuda::list_devices().size() < 2) GTEST_SKIP() << "fewer than 2 GPUs: multi-GPU test skipped";
  for (const std::string policy : {"hardware", "task-queue"}) {
    for (const char* at : {"0", "1999"}) {
      const Outcome o =
          testing::shell_gpulb("timeout -s KILL 120 ",
                               "run faults --backend cuda --gpus 2 --no-trace --policy " + policy +
                                   " --param tasks=2000 --param fault=trap --param at=" + at);
      EXPECT_EQ(o.exit_code, 1) << policy << " at " << at << ": " << o.out;
      EXPECT_TRUE(contains(o.out, "' on GPU ")) << o.out;
      EXPECT_TRUE(contains(o.out, "a kernel failed: CUDA error cudaErrorLaunchFailure")) << o.out;
      EXPECT_FALSE(contains(o.out, "stopped because another GPU's run failed")) << o.out;
    }
  }
}

}  // namespace
}  // namespace gpulb
