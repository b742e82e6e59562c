// The gpulb command line, run as a user runs it: `gpulb run`: what it runs, verifies and refuses, its help and its JSON.
#include "cli_fixture.hpp"

namespace {

using gpulb::testing::Cli;
using gpulb::testing::file_text;
using gpulb::testing::gpulb;
using gpulb::testing::Outcome;
using gpulb::testing::shell_gpulb;
using gpulb::testing::small_trace;

TEST_F(Cli, RunJsonVerifiesAndWritesATraceThatInfoAndExportRead) {
  const Outcome run = gpulb(
      "run patterns --param pattern=P4 --param blocks=200 --param work=20 --policy task-queue "
      "--backend cpu --workers 3 -o " +
      path("p4.gpulb") + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j.at("verified"), true);
  EXPECT_EQ(j.at("tasks"), 200);
  EXPECT_EQ(j.at("workers"), 3);
  EXPECT_EQ(j.at("policy"), "task-queue");
  EXPECT_EQ(j.at("backend"), "cpu");
  EXPECT_EQ(j.at("scenario"), "patterns");
  EXPECT_GT(j.at("makespan_ns").get<std::uint64_t>(), 0u);
  EXPECT_EQ(j.at("result").at("nullified"), 150);

  const Outcome info = gpulb("info " + path("p4.gpulb"));
  ASSERT_EQ(info.exit_code, 0) << info.out;
  for (const char* line :
       {"makespan", "efficiency", "imbalance", "tasks per worker", "dropped", "verified    yes"}) {
    EXPECT_NE(info.out.find(line), std::string::npos) << "missing '" << line << "' in:\n"
                                                      << info.out;
  }
  const Outcome info_json = gpulb("info --json " + path("p4.gpulb"));
  ASSERT_EQ(info_json.exit_code, 0) << info_json.out;
  EXPECT_EQ(nlohmann::json::parse(info_json.out).at("per_worker").size(), 3u);

  const Outcome chrome =
      gpulb("export " + path("p4.gpulb") + " --format chrome -o " + path("p4.json"));
  ASSERT_EQ(chrome.exit_code, 0) << chrome.out;
  std::ifstream in(path("p4.json"));
  const auto exported = nlohmann::json::parse(in);
  EXPECT_GT(exported.at("traceEvents").size(), 400u);

  const Outcome csv = gpulb("export " + path("p4.gpulb") + " --format csv -o " + path("p4.csv"));
  ASSERT_EQ(csv.exit_code, 0) << csv.out;
  for (const char* table : {"p4.csv", "p4.workers.csv", "p4.events.csv", "p4.levels.csv"}) {
    EXPECT_NE(csv.out.find("wrote " + path(table)), std::string::npos) << csv.out;
    const std::string text = file_text(path(table));
    EXPECT_GT(std::count(text.begin(), text.end(), '\n'), 1) << table << ": a header and rows";
  }

  const Outcome perfetto =
      gpulb("export " + path("p4.gpulb") + " --format perfetto -o " + path("p4.pftrace"));
  ASSERT_EQ(perfetto.exit_code, 0) << perfetto.out;
  const std::string packets = file_text(path("p4.pftrace"));
  ASSERT_FALSE(packets.empty());
  EXPECT_EQ(packets[0], '\x0A') << "a Trace's first packet (field 1, length-delimited)";
}

// Chen section 6 on the command line: `gpulb run md` verifies, a solution under another policy
// is refused naming both, a bad pair search is refused naming it, and `gpulb bench md` prints
// Figure 5 (and, under --md-pairs all, the warp efficiency).
TEST_F(Cli, MdRunsVerifiedAndBenchMdPrintsItsTables) {
  const Outcome r =
      gpulb("run md --backend cpu --policy hardware --param solution=2 --param atoms=2048 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j.at("verified"), true) << r.out;
  const Outcome refused = gpulb("run md --backend cpu --policy task-queue --param solution=1");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.out.find("solution=1 runs under --policy hardware"), std::string::npos)
      << refused.out;
  EXPECT_NE(refused.out.find("'task-queue'"), std::string::npos) << refused.out;
  const Outcome badpairs = gpulb("run md --backend cpu --param pairs=grid");
  EXPECT_EQ(badpairs.exit_code, 2);
  EXPECT_NE(badpairs.out.find("'pairs'"), std::string::npos) << badpairs.out;
  // names what is accepted
  EXPECT_NE(badpairs.out.find("cells"), std::string::npos) << badpairs.out;
  const Outcome b = gpulb("bench md --backend cpu --repeats 1 --md-sizes 1024,2048");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  EXPECT_NE(
      b.out.find(
          "md Figure 5: speedup over Solution 1 against system size, CPU backend, pairs=cells"),
      std::string::npos)
      << b.out;
  EXPECT_NE(b.out.find("| 2048 | 1.00 ("), std::string::npos) << b.out;
  // cells: no samples
  EXPECT_EQ(b.out.find("md warp efficiency of the force branch"), std::string::npos) << b.out;
  const Outcome all = gpulb("bench md --backend cpu --repeats 1 --md-sizes 1024 --md-pairs all");
  ASSERT_EQ(all.exit_code, 0) << all.out;
  EXPECT_NE(all.out.find("md warp efficiency of the force branch"), std::string::npos) << all.out;
  const Outcome bad = gpulb("bench md --backend cpu --md-sizes 1024,lots");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--md-sizes: 'lots'"), std::string::npos) << bad.out;
  EXPECT_EQ(gpulb("bench md --backend cpu --md-pairs some").exit_code, 2);
}

// Without --policy a run gets its scenario's default, one that runs it: not task-queue for a
// spawning scenario, which CUDA refuses and the CPU runs through the host thread (10x slower).
TEST_F(Cli, ARunWithoutPolicyGetsTheScenariosDefaultAndListNamesIt) {
  const std::map<std::string, std::string> expected = {
      {"run uts --param tree=custom --param d=5 --param b=3 --param r=1", "work-stealing"},
      {"run nqueens --param n=6", "work-stealing"},
      {"run nbody --param particles=2000 --param steps=1", "combining"},
      {"run md --param atoms=512 --param solution=3 --param steps=0", "chunked"},
      {"run patterns --param blocks=50", "task-queue"}};
  for (const auto& [command, policy] : expected) {
    const Outcome o = gpulb(command + " --backend cpu --workers 2 --no-trace --json");
    ASSERT_EQ(o.exit_code, 0) << command << "\n" << o.out;
    const auto j = nlohmann::json::parse(o.out.substr(o.out.find('{')));
    EXPECT_EQ(j.at("policy"), policy) << command;
    EXPECT_TRUE(j.at("verified").get<bool>()) << command;
  }
  const auto list = nlohmann::json::parse(gpulb("list --json").out);
  for (const auto& s : list.at("scenarios")) {
    if (s.at("name") == "uts") {
      EXPECT_EQ(s.at("default_policy"), "work-stealing");
    }
    if (s.at("name") == "md2d") {
      EXPECT_EQ(s.at("default_policy"), "combining");
    }
  }
}

TEST_F(Cli, UnknownScenarioIsRefused) {
  const Outcome o = gpulb("run nosuch --backend cpu");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("unknown scenario 'nosuch'"), std::string::npos) << o.out;
}

// --distributed depends on the build: without MPI a clear refusal; with it, gpulb started without
// mpirun is one rank of one (MPI's singleton start) and runs and verifies as one process does.
TEST_F(Cli, DistributedIsRefusedWithoutMpiAndRunsAsOneRankWithIt) {
  const Outcome o =
      gpulb("run uts --policy work-stealing --backend cpu --workers 1 --no-trace --distributed");
#ifdef GPULB_CLI_HAS_MPI
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("verified    yes: 4130071 nodes"), std::string::npos) << o.out;
#else
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("--distributed needs MPI, and this gpulb was built without it"),
            std::string::npos)
      << o.out;
#endif
  const Outcome stray = gpulb("run uts --policy work-stealing --backend cpu --rank-chunk 5");
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.out.find("apply to --distributed runs only"), std::string::npos) << stray.out;
}

TEST_F(Cli, BadParameterIsRefusedAndNothingIsWritten) {
  const Outcome o = gpulb("run patterns --backend cpu --param pattern=P7 -o " + path("x.gpulb"));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("'P7' is not one of"), std::string::npos) << o.out;
  EXPECT_FALSE(std::filesystem::exists(path("x.gpulb")));
  const Outcome malformed = gpulb("run patterns --backend cpu --param blocks");
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_NE(malformed.out.find("expected name=value"), std::string::npos) << malformed.out;
}

// A sample tree's run names the tree, not the custom tree's default shape (d=6 r=0 ... beside
// tree=T1 read as T1's parameters, which they are not); a custom tree's run names its shape.
TEST_F(Cli, AUtsSampleTreesScenarioLineNamesTheTreeAndNoCustomShape) {
  const Outcome t1 =
      gpulb("run uts --param tree=T5 --backend cpu --workers 2 -o " + path("t5.gpulb"));
  ASSERT_EQ(t1.exit_code, 0) << t1.out;
  const auto meta = gpulb::trace::read_trace(path("t5.gpulb")).meta;
  EXPECT_EQ(meta.parameters.at("tree"), "T5");
  for (const char* shape : {"t", "a", "d", "b", "r", "q", "m"})
    EXPECT_EQ(meta.parameters.count(shape), 0u) << shape;
  EXPECT_EQ(t1.out.find(" d=6"), std::string::npos) << t1.out;
  const Outcome custom = gpulb(
      "run uts --param tree=custom --param d=4 --backend cpu --workers 2 -o " + path("c.gpulb"));
  ASSERT_EQ(custom.exit_code, 0) << custom.out;
  const auto cmeta = gpulb::trace::read_trace(path("c.gpulb")).meta;
  EXPECT_EQ(cmeta.parameters.at("d"), "4");
  EXPECT_EQ(cmeta.parameters.at("r"), "0")
      << "a custom tree records its whole shape, defaults included";
}

TEST_F(Cli, AnOptionOfAnotherPolicyIsRefusedNamingIt) {
  const Outcome o =
      gpulb("run patterns --backend cpu --policy task-queue --param deque_capacity=8 --no-trace");
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("option of policy 'work-stealing'"), std::string::npos) << o.out;
}

// A sharing queue of one slot cannot work (one slot overwrites an unread task; the run would spin,
// watchdog included): it is refused before anything runs; two slots, the smallest that works,
// finish and verify.
TEST_F(Cli, ASharingQueueOfOneSlotIsRefusedAndTwoSlotsFinish) {
  const Outcome one = gpulb(
      "run patterns --backend cpu --param blocks=64 --param work=10 --policy work-stealing "
      "--param sharing_capacity=1 --no-trace");
  EXPECT_EQ(one.exit_code, 2) << one.out;
  EXPECT_NE(one.out.find("sharing_capacity"), std::string::npos) << one.out;
  const Outcome two = gpulb(
      "run patterns --backend cpu --param blocks=64 --param work=10 --policy work-stealing "
      "--param sharing_capacity=2 --param watchdog_ms=5000 --no-trace");
  EXPECT_EQ(two.exit_code, 0) << two.out;
  const Outcome tiny = gpulb(
      "run uts --backend cpu --param tree=custom --param d=5 --policy work-stealing --param "
      "deque_capacity=1 "
      "--param overflow_capacity=2 --param watchdog_ms=5000 --no-trace");
  // verified, or full queues named
  EXPECT_TRUE(tiny.exit_code == 0 || tiny.exit_code == 1) << tiny.out;
  if (tiny.exit_code == 1) {
    EXPECT_NE(tiny.out.find("overflow_capacity=2"), std::string::npos) << tiny.out;
  }
}

TEST_F(Cli, ASpawningScenarioUnderANonSpawningPolicyIsABadArgument) {
  const Outcome o = gpulb("run uts --backend cpu --policy hardware --no-trace");
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("spawns child tasks"), std::string::npos) << o.out;
}

// GPU faults on the CPU backend: the faults a CPU thread cannot survive are refused
// before the run (exit 2, naming why); a task past the watchdog ends the run with exit 1 naming
// the policy; the same command without the fault verifies.
TEST_F(Cli, FaultsTheCpuCannotContainAreRefusedBeforeTheRun) {
  for (const char* fault : {"trap", "out-of-bounds", "hang"}) {
    const Outcome o =
        gpulb(std::string("run faults --backend cpu --no-trace --param fault=") + fault);
    EXPECT_EQ(o.exit_code, 2) << fault << ": " << o.out;
    EXPECT_NE(o.out.find("cannot run on the cpu backend: fault=" + std::string(fault)),
              std::string::npos)
        << o.out;
  }
  const Outcome at = gpulb("run faults --backend cpu --no-trace --param tasks=10 --param at=10");
  EXPECT_EQ(at.exit_code, 2) << at.out;
  EXPECT_NE(at.out.find("parameter 'at' is 10: there are only 10 tasks"), std::string::npos)
      << at.out;
}

TEST_F(Cli, ATaskPastTheWatchdogEndsTheRunNamingThePolicyAndTheNextRunVerifies) {
  for (const char* policy : {"hardware", "task-queue", "work-stealing"}) {
    const std::string base = std::string(
                                 "run faults --backend cpu --workers 2 --no-trace --param tasks=50 "
                                 "--param at=7 --policy ") +
                             policy;
    const Outcome slow =
        gpulb(base + " --param fault=slow --param slow_ms=30000 --param watchdog_ms=200");
    EXPECT_EQ(slow.exit_code, 1) << policy << ": " << slow.out;
    EXPECT_NE(slow.out.find(std::string("watchdog: policy '") + policy +
                            "' on the cpu backend made no progress for 200 ms"),
              std::string::npos)
        << slow.out;
    const Outcome fine = gpulb(base + " --json");
    EXPECT_EQ(fine.exit_code, 0) << policy << ": " << fine.out;
    EXPECT_EQ(nlohmann::json::parse(fine.out).at("verified"), true) << fine.out;
  }
}

// A uts tree with reference=off and no published counts has nothing to compare with: it is "not
// checked", never "verified", in the text, in the JSON and in exit code 4.
TEST_F(Cli, ARunNothingCheckedSaysSoAndExitsFour) {
  const std::string args =
      "run uts --backend cpu --policy work-stealing --param tree=custom --param d=4 --param "
      "reference=off --workers 2";
  const Outcome json = gpulb(args + " --json -o " + path("u.gpulb"));
  EXPECT_EQ(json.exit_code, 4) << json.out;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j.at("verified"), false);
  EXPECT_EQ(j.at("checked"), false);
  EXPECT_EQ(j.at("verification").get<std::string>().rfind("not checked: ", 0), 0u) << json.out;

  const Outcome text = gpulb(args);
  EXPECT_EQ(text.exit_code, 4) << text.out;
  EXPECT_NE(text.out.find("verified    not checked: "), std::string::npos) << text.out;
  const Outcome untraced = gpulb(args + " --no-trace");
  EXPECT_EQ(untraced.exit_code, 4) << untraced.out;
  EXPECT_NE(untraced.out.find("verified    not checked: "), std::string::npos) << untraced.out;

  const Outcome info = gpulb("info --json " + path("u.gpulb"));  // the trace file keeps the verdict
  ASSERT_EQ(info.exit_code, 0) << info.out;
  EXPECT_EQ(nlohmann::json::parse(info.out).at("checked"), false);

  const Outcome checked = gpulb(
      "run uts --backend cpu --policy work-stealing --param tree=custom --param d=4 --param "
      "reference=on --workers 2 --json");
  EXPECT_EQ(checked.exit_code, 0) << checked.out;
  EXPECT_EQ(nlohmann::json::parse(checked.out).at("checked"), true);
}

TEST_F(Cli, HelpNamesEveryExitCode) {
  const Outcome o = gpulb("--help");
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("4 the run finished but nothing checked its result"), std::string::npos)
      << o.out;
}

// Under --no-trace the trace's statistics are null, not 0 (a "steals": 0 beside thousands in
// policy_metrics would contradict it); steals come from the policy's own count.
TEST_F(Cli, WithoutATraceTheJsonHasNoStatisticsOfOne) {
  const Outcome o = gpulb(
      "run uts --backend cpu --policy work-stealing --param tree=custom --param d=6 --workers 2 "
      "--no-trace --json");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const auto j = nlohmann::json::parse(o.out);
  for (const char* key : {"efficiency", "imbalance", "lower_bound_ns", "failed_dequeues", "events",
                          "dropped_events"}) {
    EXPECT_TRUE(j.at(key).is_null()) << key << " in " << o.out;
  }
  ASSERT_TRUE(j.at("result").at("policy_metrics").contains("steals")) << o.out;
  EXPECT_EQ(j.at("steals"), j.at("result").at("policy_metrics").at("steals")) << o.out;
  EXPECT_GT(j.at("tasks").get<std::uint64_t>(), 0u);
  EXPECT_GT(j.at("makespan_ns").get<std::uint64_t>(), 0u);

  const Outcome no_steals = gpulb(
      "run patterns --backend cpu --param blocks=64 --param work=10 --workers 2 --no-trace --json");
  ASSERT_EQ(no_steals.exit_code, 0) << no_steals.out;
  EXPECT_TRUE(nlohmann::json::parse(no_steals.out).at("steals").is_null()) << no_steals.out;
}

// `--param blocks=10 --param blocks=20` is refused: keeping either would run what the user did not ask for.
TEST_F(Cli, ARepeatedParameterIsRefusedNamingIt) {
  const Outcome o = gpulb(
      "run patterns --backend cpu --param blocks=10 --param work=5 --param blocks=20 --no-trace");
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("--param blocks is given twice ('10' and '20')"), std::string::npos)
      << o.out;
}

// The static list's arrays start at list_capacity and grow where a generation needs more: a tree
// run from a one-slot array verifies.
TEST_F(Cli, TheStaticListGrowsPastASmallStartingCapacity) {
  const Outcome o = gpulb(
      "run uts --backend cpu --policy static-list --param tree=custom --param d=8 "
      "--param list_capacity=1 --no-trace --json");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_GE(j.at("metrics").at("list_resumes").get<std::uint64_t>(), 1u) << o.out;
  EXPECT_GE(j.at("metrics").at("list_slots").get<std::uint64_t>(),
            j.at("metrics").at("peak_task_slots").get<std::uint64_t>())
      << o.out;
}

}  // namespace
