// The uts scenario on the CPU backend: the SHA-1 stream, small trees under every dynamic policy,
// and a published sample tree.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpulb/run.hpp"
#include "gpulb/builtin/registry.hpp"
#include "uts/uts.hpp"

namespace gpulb::scenarios::uts {
namespace {

// rng_init / rng_spawn work on words; UTS's brg_sha1 stream hashes bytes: they must agree.
TEST(UtsRng, WordPathEqualsTheByteStreamOfTheUtsGenerator) {
  auto digest_words = [](const std::uint8_t* m, std::size_t n) {
    Sha1 h;
    h.update(m, n);
    std::uint8_t d[20];
    h.final(d);
    RngState s;
    for (int i = 0; i < 5; ++i)
      s.h[i] = (d[4 * i] << 24) | (d[4 * i + 1] << 16) | (d[4 * i + 2] << 8) | d[4 * i + 3];
    return s;
  };
  for (int seed : {0, 1, 19, 0x7FFFFFFF}) {
    std::uint8_t m[20] = {};
    for (int j = 0; j < 4; ++j) m[16 + j] = static_cast<std::uint8_t>(seed >> (24 - 8 * j));
    const RngState a = rng_init(seed), b = digest_words(m, 20);
    for (int i = 0; i < 5; ++i) ASSERT_EQ(a.h[i], b.h[i]) << "seed " << seed;
    for (int child : {0, 1, 99, 1999}) {
      std::uint8_t c[24];
      for (int i = 0; i < 5; ++i) {
        for (int j = 0; j < 4; ++j)
          c[4 * i + j] = static_cast<std::uint8_t>(a.h[i] >> (24 - 8 * j));
      }
      for (int j = 0; j < 4; ++j) c[20 + j] = static_cast<std::uint8_t>(child >> (24 - 8 * j));
      const RngState x = rng_spawn(a, child), y = digest_words(c, 24);
      for (int i = 0; i < 5; ++i)
        ASSERT_EQ(x.h[i], y.h[i]) << "seed " << seed << " child " << child;
    }
  }
}

const Registry& registry() { return builtin::registry(); }

RunResult run_uts(const std::string& policy, ParamMap params, std::uint32_t workers = 2) {
  RunConfig c;
  c.scenario = "uts";
  c.policy = policy;
  c.backend = Backend::Cpu;
  c.workers = workers;
  c.block_size = 4;
  c.trace = false;
  c.params = std::move(params);
  return run(registry(), c);
}

struct SmallTree {
  const char* name;
  ParamMap params;
};

class UtsSmallTrees : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

const std::vector<SmallTree>& small_trees() {
  static const std::vector<SmallTree> t = {
      {"geometric_fixed",
       {{"tree", "custom"}, {"t", "1"}, {"a", "3"}, {"d", "6"}, {"b", "4"}, {"r", "19"}}},
      {"geometric_cyclic",
       {{"tree", "custom"}, {"t", "1"}, {"a", "2"}, {"d", "6"}, {"b", "3"}, {"r", "7"}}},
      {"geometric_expdec",
       {{"tree", "custom"}, {"t", "1"}, {"a", "1"}, {"d", "8"}, {"b", "4"}, {"r", "1"}}},
      {"binomial",
       {{"tree", "custom"}, {"t", "0"}, {"b", "200"}, {"q", "0.2"}, {"m", "4"}, {"r", "42"}}},
      {"hybrid",
       {{"tree", "custom"},
        {"t", "2"},
        {"a", "0"},
        {"d", "10"},
        {"b", "4"},
        {"q", "0.234375"},
        {"m", "4"},
        {"r", "1"}}},
  };
  return t;
}

TEST_P(UtsSmallTrees, MatchesTheSequentialSearch) {
  const auto& [policy, tree] = GetParam();
  const RunResult r = run_uts(policy, small_trees()[tree].params);
  EXPECT_TRUE(r.verified) << r.verification;
  const auto j = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(j["nodes"], j["reference"]["nodes"]);
  EXPECT_GT(j["nodes"].get<std::uint64_t>(), 100u) << "a tree this small tests nothing";
  EXPECT_EQ(r.tasks, j["nodes"].get<std::uint64_t>());
}

INSTANTIATE_TEST_SUITE_P(CpuPolicies, UtsSmallTrees,
                         ::testing::Combine(::testing::Values("work-stealing", "static-list",
                                                              "blocking-queue", "task-queue"),
                                            ::testing::Range(0, 5)),
                         [](const auto& info) {
                           std::string p = std::get<0>(info.param);
                           std::replace(p.begin(), p.end(), '-', '_');
                           return p + "_" + small_trees()[std::get<1>(info.param)].name;
                         });

// The acceptance run: T1 (4.1 million nodes) reports the published counts. The host
// reference is off here: the published counts are the check (and CI time is short).
TEST(UtsSampleTrees, T1UnderWorkStealingReportsThePublishedCounts) {
#if defined(GPULB_TSAN_BUILD)
  GTEST_SKIP() << "4 million tasks are too slow under ThreadSanitizer";
#endif
  const RunResult r = run_uts("work-stealing", {{"tree", "T1"}, {"reference", "off"}});
  EXPECT_TRUE(r.verified) << r.verification;
  const auto j = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(j["nodes"], 4130071);
  EXPECT_EQ(j["leaves"], 3305118);
  EXPECT_EQ(j["max_depth"], 10);
}

// The widest level each preset states is the one the sequential search counts (the small presets
// here; the large ones were counted by the same search).
TEST(UtsSampleTrees, ThePresetsWidestLevelIsTheSequentialSearchs) {
#if defined(GPULB_TSAN_BUILD)
  GTEST_SKIP() << "4 million nodes a tree are too slow under ThreadSanitizer";
#endif
  for (const char* name : {"T1", "T3"}) {
    const Preset* p = find_preset(name);
    ASSERT_NE(p, nullptr);
    std::uint64_t widest = 0;
    sequential_search(p->params, &widest);
    EXPECT_EQ(widest, p->widest) << name;
  }
  for (const Preset& p : presets()) EXPECT_GT(p.widest, 0u) << p.name;
}

// The static list sized from T1's stated widest level never fills an array: no launch stops.
TEST(UtsSampleTrees, T1UnderTheStaticListRunsWithoutAResume) {
#if defined(GPULB_TSAN_BUILD)
  GTEST_SKIP() << "4 million tasks are too slow under ThreadSanitizer";
#endif
  const RunResult r = run_uts("static-list", {{"tree", "T1"}, {"reference", "off"}});
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.metrics.at("peak_task_slots"), find_preset("T1")->widest);
  EXPECT_EQ(r.metrics.at("list_resumes"), 0u);
  EXPECT_EQ(r.metrics.at("generations"), 11u);
}

// leaves=inline: a leaf child is counted by its parent's task. The counts are the published ones,
// fewer tasks run than there are nodes, and tasks plus the leaves counted inline are the nodes.
TEST(UtsSampleTrees, InlineLeavesKeepThePublishedCountsWithFewerTasks) {
  for (const char* policy : {"work-stealing", "static-list"}) {
    SCOPED_TRACE(policy);
    const RunResult r =
        run_uts(policy, {{"tree", "T3"}, {"reference", "off"}, {"leaves", "inline"}});
    EXPECT_TRUE(r.verified) << r.verification;
    const auto j = nlohmann::json::parse(r.result_json);
    EXPECT_EQ(j["nodes"], 4112897);
    EXPECT_EQ(j["leaves"], 3599034);
    EXPECT_EQ(j["max_depth"], 1572);
    EXPECT_EQ(j["inline_leaves"], true);
    EXPECT_LT(r.tasks, 4112897u / 4);  // 87.5% of T3's nodes are leaves
    EXPECT_EQ(r.tasks + j["visited_inline"].get<std::uint64_t>(), 4112897u);
  }
}

// With reference=off a custom tree was "verified" against nothing. It is not checked now,
// and never reads as verified; the same tree with the reference is checked and verified.
TEST(UtsCustomTrees, WithoutAReferenceTheResultIsNotChecked) {
  const RunResult off =
      run_uts("work-stealing", {{"tree", "custom"}, {"d", "4"}, {"reference", "off"}});
  EXPECT_FALSE(off.checked);
  EXPECT_FALSE(off.verified);
  EXPECT_FALSE(off.trace.meta.checked);
  EXPECT_FALSE(off.trace.meta.verified);
  EXPECT_EQ(off.verification.rfind("not checked: ", 0), 0u) << off.verification;
  EXPECT_NE(off.verification.find("reference=off"), std::string::npos) << off.verification;
  const RunResult on =
      run_uts("work-stealing", {{"tree", "custom"}, {"d", "4"}, {"reference", "on"}});
  EXPECT_TRUE(on.checked);
  EXPECT_TRUE(on.verified) << on.verification;
}

// task_per=lane is the CUDA backend's (a task per thread of a block): the CPU backend says so
// before running anything rather than ignoring it.
TEST(UtsCustomTrees, TaskPerLaneIsRefusedOnTheCpuBackend) {
  try {
    run_uts("work-stealing", {{"tree", "custom"}, {"d", "4"}, {"task_per", "lane"}});
    FAIL() << "task_per=lane ran on the cpu backend";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda backend"), std::string::npos) << e.what();
  }
}

TEST(UtsSampleTrees, PresetsRejectCustomParameters) {
  EXPECT_THROW(run_uts("work-stealing", {{"tree", "T1"}, {"b", "3"}}), ConfigError);
}

TEST(UtsSampleTrees, EveryPresetCarriesItsPublishedCounts) {
  ASSERT_EQ(presets().size(), 9u);
  for (const Preset& p : presets()) EXPECT_GT(p.published.nodes, p.published.leaves) << p.name;
}

}  // namespace
}  // namespace gpulb::scenarios::uts
