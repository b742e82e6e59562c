// A CPU run of a spawning scenario, traced and exported to Perfetto: every spawning task records
// one SpawnBatch naming its children, the export starts a flow for every spawned task, and every
// flow a slice ends is the one its parent's batch started for that very task (decoded with protoc
// against Perfetto's schema, tests/tracing/perfetto_decode.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include <unistd.h>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/run.hpp"
#include "gpulb/tracing/export.hpp"
#include "tracing/perfetto_decode.hpp"

namespace gpulb {
namespace {

namespace fs = std::filesystem;

RunResult traced_uts(const std::string& policy) {
  RunConfig c;
  c.scenario = "uts";
  c.policy = policy;
  c.backend = Backend::Cpu;
  c.workers = 2;
  c.block_size = 4;
  c.params = {{"tree", "custom"}, {"t", "1"}, {"a", "3"}, {"d", "6"}, {"b", "4"}, {"r", "19"}};
  return run(builtin::registry(), c);
}

testing::DecodedTrace exported(const trace::Trace& t, const std::string& name) {
  const fs::path out =
      fs::temp_directory_path() /
      ("gpulb-spawn-flows-" + std::to_string(::getpid()) + "-" + name + ".pftrace");
  {
    std::ofstream f(out, std::ios::binary);
    trace::write_perfetto(f, t, {});
  }
  testing::DecodedTrace d =
      testing::PerfettoReader(std::size_t{1} << 22).decode(out, GPULB_PERFETTO_SCHEMA_DIR);
  fs::remove(out);
  return d;
}

class SpawnFlowsOfACpuRun : public ::testing::TestWithParam<std::string> {};

TEST_P(SpawnFlowsOfACpuRun, EverySpawnedTaskIsNamedOnceAndItsSliceEndsItsOwnFlow) {
  const RunResult r = traced_uts(GetParam());
  ASSERT_TRUE(r.verified) << r.verification;
  std::map<std::uint32_t, int> named, begun;  // task id -> batches naming it, begins
  std::uint64_t count_only = 0;
  for (const trace::Track& tr : r.trace.tracks) {
    for (const trace::Event& e : tr.events) {
      if (e.kind == trace::EventKind::Spawn) ++count_only;
      if (e.kind == trace::EventKind::SpawnBatch) {
        for (std::uint32_t i = 0; i < e.aux; ++i) ++named[e.arg + i];
      }
      if (e.kind == trace::EventKind::TaskBegin) ++begun[e.arg];
    }
  }
  EXPECT_EQ(count_only, 0u) << "every batch of this run has consecutive ids and fits a SpawnBatch";
  ASSERT_EQ(begun.size(), r.tasks);
  std::size_t roots = 0;
  for (const auto& [id, n] : begun) {
    EXPECT_EQ(n, 1) << "task " << id;
    roots += named.count(id) == 0;
  }
  for (const auto& [id, n] : named) {
    EXPECT_EQ(n, 1) << "task " << id << " named by more than one batch";
    EXPECT_TRUE(begun.count(id)) << "task " << id << " named but never run";
  }
  EXPECT_GE(roots, 1u);
  EXPECT_EQ(named.size() + roots, r.tasks);
  EXPECT_EQ(r.stats.spawned, named.size());
  EXPECT_EQ(r.stats.spawned_named, named.size());

  const testing::DecodedTrace d = exported(r.trace, GetParam());
  ASSERT_EQ(d.exit_code, 0) << "protoc could not decode the export";
  ASSERT_EQ(d.events.size(), d.slice_begins + d.slice_ends + d.instants + d.counters)
      << "every event kept";
  const testing::SpawnLinks s = testing::spawn_links(d);
  EXPECT_EQ(s.spawn_starts, named.size()) << "a flow starts for every spawned task";
  EXPECT_EQ(s.batches_past_their_children, 0u);
  std::size_t ended = 0;
  for (const auto& [task, ids] : s.ended_by_task) {
    ASSERT_EQ(ids.size(), 1u) << "task " << task;
    ASSERT_TRUE(s.child_of_flow.count(ids[0]))
        << "task " << task << " ends a flow no spawn started";
    EXPECT_EQ(s.child_of_flow.at(ids[0]), task);
    ++ended;
  }
  // A child whose begin the trace places at or before its parent's batch (placed times of a batch
  // of short tasks, CPU backend) ends no flow; most follow their parent's batch.
  std::cout << GetParam() << ": " << ended << " of " << named.size()
            << " spawned tasks end their flow\n";
  EXPECT_GT(ended, named.size() / 2);
}

INSTANTIATE_TEST_SUITE_P(CpuPolicies, SpawnFlowsOfACpuRun,
                         ::testing::Values("work-stealing", "static-list", "blocking-queue",
                                           "task-queue"),
                         [](const auto& info) {
                           std::string p = info.param;
                           std::replace(p.begin(), p.end(), '-', '_');
                           return p;
                         });

}  // namespace
}  // namespace gpulb
