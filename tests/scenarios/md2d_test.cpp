// The `md2d` scenario (G-Charm section 4.2) under the `combining` policy on the CPU backend
//: every strategy and transfer mode verifies (each compute object ran once,
// positions against the double-precision reference), the order in which requests arrive does not
// change the trajectory, particles migrate, the patches differ in cost, the trace holds self and
// pair requests, and bad parameters and wrong policies are refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/run.hpp"
#include "md2d/md2d_body.hpp"
#include "md2d/md2d_system.hpp"

namespace gpulb {
namespace {

constexpr std::uint64_t kParticles = 3000, kSteps = 5;

RunResult run_md2d(const std::string& strategy, const std::string& transfer, ParamMap extra = {}) {
  RunConfig c;
  c.scenario = "md2d";
  c.policy = "combining";
  c.backend = Backend::Cpu;
  c.workers = 3;
  c.params = {{"particles", std::to_string(kParticles)},
              {"steps", std::to_string(kSteps)},
              {"producers", "2"},
              {"strategy", strategy},
              {"transfer", transfer}};
  for (auto& [k, v] : extra) c.params[k] = v;
  return run(builtin::registry(), c);
}

// `gpulb run md2d --policy hybrid` verifies, and the CPU and the (here emulated) GPU side
// share every compute object exactly once, under both split strategies.
TEST(Md2dHybrid, VerifiesAndTheTwoSidesShareEveryRequestOnce) {
  for (const char* strategy : {"adaptive", "static"}) {
    RunConfig c;
    c.scenario = "md2d";
    c.policy = "hybrid";
    c.backend = Backend::Cpu;
    c.workers = 4;
    c.params = {{"particles", std::to_string(kParticles)},
                {"steps", std::to_string(kSteps)},
                {"producers", "2"},
                {"strategy", strategy},
                {"max_size", "32"}};
    const RunResult r = run(builtin::registry(), c);
    ASSERT_TRUE(r.verified) << strategy << ": " << r.verification;
    EXPECT_EQ(r.metrics.at("cpu_requests") + r.metrics.at("gpu_requests"), r.tasks) << strategy;
    EXPECT_GT(r.metrics.at("gpu_requests"), 0u) << strategy;
    if (std::string(strategy) == "static") {
      EXPECT_GT(r.metrics.at("cpu_requests"), 0u);
    }
  }
}

// A block is one thread a target: md2d's default block follows a patch's mean count of particles,
// in warps, from 64 to 256 threads (full patches leave the GPU latency-bound on the largest
// compute object, where wider blocks shorten its step).
TEST(Md2dBlocks, TheDefaultBlockFollowsTheParticlesOfAPatch) {
  const Scenario& md2d = builtin::registry().get("md2d");
  EXPECT_EQ(md2d.default_block_size({}), 64u);  // the defaults: about 32 particles a patch
  EXPECT_EQ(md2d.default_block_size({{"particles", "100000"}, {"patches", "7"}}),
            256u);  // ~2,041 a patch
  EXPECT_EQ(md2d.default_block_size({{"particles", "10000"}, {"patches", "8"}}),
            160u);  // ~156 a patch: 5 warps
  RunConfig c;
  c.scenario = "md2d";
  c.policy = "combining";
  c.backend = Backend::Cpu;
  c.workers = 2;
  c.params = {{"particles", "10000"}, {"patches", "8"}, {"steps", "1"}, {"producers", "1"}};
  const RunResult r = run(builtin::registry(), c);
  ASSERT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.trace.meta.parameters.at("block_size"), "160");
}

struct Mode {
  const char* strategy;
  const char* transfer;
};
class Md2dCombining : public ::testing::TestWithParam<Mode> {};

TEST_P(Md2dCombining, VerifiesAndEveryComputeObjectRunsOnce) {
  const RunResult r = run_md2d(GetParam().strategy, GetParam().transfer);
  ASSERT_TRUE(r.verified) << r.verification;
  const auto result = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(result.at("wrong_counts").get<std::uint64_t>(), 0u);
  EXPECT_EQ(result.at("steps").get<std::uint64_t>(), kSteps);
  EXPECT_EQ(r.tasks, result.at("requests").get<std::uint64_t>());
  EXPECT_EQ(r.metrics.at("requests"), r.tasks);
  EXPECT_LE(result.at("max_position_error").get<double>(), 1e-4);
  // At most 5 compute objects a patch a step (empty ones are not emitted).
  const auto patches = result.at("patches").get<std::uint64_t>();
  EXPECT_LE(r.tasks, 5 * patches * patches * kSteps);
  EXPECT_GT(r.tasks, 4 * patches * patches * kSteps);
  const std::string strategy = GetParam().strategy;
  if (strategy == "eager") {
    EXPECT_EQ(r.metrics.at("launches_eager"), r.tasks);
  } else if (strategy == "static") {
    EXPECT_GT(r.metrics.at("launches_static"), 0u);
  } else {
    EXPECT_GT(r.metrics.at("launches_full") + r.metrics.at("launches_timeout"), 0u);
  }
  // Every particle is an item of its self object and of its patch's 8 pairs: read about 9 times a
  // step. Reuse copies each once a step (a step publishes a new table).
  EXPECT_LE(r.metrics.at("items_read"), 9 * kParticles * kSteps);
  EXPECT_GT(r.metrics.at("items_read"), 8 * kParticles * kSteps);
  if (std::string(GetParam().transfer) == "redundant") {
    EXPECT_EQ(r.metrics.at("items_copied"), r.metrics.at("items_read"));
  } else {
    EXPECT_EQ(r.metrics.at("items_copied"), kParticles * kSteps);
  }
}

INSTANTIATE_TEST_SUITE_P(StrategiesAndTransfers, Md2dCombining,
                         ::testing::Values(Mode{"adaptive", "redundant"}, Mode{"adaptive", "reuse"},
                                           Mode{"adaptive", "reuse-sorted"},
                                           Mode{"static", "redundant"},
                                           Mode{"static", "reuse-sorted"}, Mode{"eager", "reuse"}),
                         [](const auto& info) {
                           std::string n =
                               std::string(info.param.strategy) + "_" + info.param.transfer;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

TEST(Md2d, TheArrivalOrderDoesNotChangeTheTrajectory) {
  // Each output has one writer and the host sums them in a fixed order: however the producers and
  // the combining interleave, the forces are the same bits (redundant: the items' order is fixed).
  const auto a =
      nlohmann::json::parse(run_md2d("adaptive", "redundant", {{"producers", "1"}}).result_json);
  const auto b = nlohmann::json::parse(
      run_md2d("static", "redundant", {{"producers", "3"}, {"static_k", "7"}}).result_json);
  EXPECT_EQ(a.at("max_position_error").get<double>(), b.at("max_position_error").get<double>());
  EXPECT_EQ(a.at("energy_drift").get<double>(), b.at("energy_drift").get<double>());
  EXPECT_EQ(a.at("tests"), b.at("tests"));
}

TEST(Md2d, SortingTheItemsChangesOnlyTheOrderOfTheSums) {
  const auto a = nlohmann::json::parse(run_md2d("static", "redundant").result_json);
  const auto b = nlohmann::json::parse(run_md2d("adaptive", "reuse-sorted").result_json);
  EXPECT_NEAR(a.at("max_position_error").get<double>(), b.at("max_position_error").get<double>(),
              1e-6);
  EXPECT_EQ(a.at("tests"), b.at("tests"));
  EXPECT_EQ(a.at("migrated"), b.at("migrated"));
}

// Pieces (parameter piece_targets): a compute object with more targets is cut into ranges of one
// patch's particles against the other patch's. Each target meets its partners in the same order,
// so the trajectory is the same bits as with whole objects, from more, smaller requests.
TEST(Md2dPieces, CuttingObjectsIntoPiecesLeavesTheTrajectoryTheSame) {
  for (const char* transfer : {"redundant", "reuse"}) {
    const RunResult whole = run_md2d("adaptive", transfer, {{"piece_targets", "0"}});
    const RunResult cut = run_md2d("adaptive", transfer, {{"piece_targets", "32"}});
    ASSERT_TRUE(whole.verified) << whole.verification;
    ASSERT_TRUE(cut.verified) << cut.verification;
    const auto a = nlohmann::json::parse(whole.result_json),
               b = nlohmann::json::parse(cut.result_json);
    EXPECT_EQ(a.at("max_position_error").get<double>(), b.at("max_position_error").get<double>())
        << transfer;
    EXPECT_EQ(a.at("energy_drift").get<double>(), b.at("energy_drift").get<double>()) << transfer;
    EXPECT_EQ(a.at("tests"), b.at("tests")) << transfer;
    EXPECT_EQ(b.at("wrong_counts").get<std::uint64_t>(), 0u);
    // About 32 particles a patch: most pairs (~64 targets) go in pieces, no piece over 32 targets
    // plus its partner patch.
    EXPECT_GT(cut.tasks, 3 * whole.tasks / 2) << transfer;
    EXPECT_LT(b.at("max_request_items").get<std::uint64_t>(),
              a.at("max_request_items").get<std::uint64_t>())
        << transfer;
  }
}

// A launch of a whole step (~9 x 20,000 items, past kParallelAssemblyItems) assembled by four
// threads copies the same items and gives the same trajectory as one thread.
TEST(Md2dAssembly, SeveralAssemblyThreadsComputeWhatOneComputes) {
  // static_k past a step's requests: each step is one launch, when the producer waits (drain).
  ParamMap big = {{"particles", "20000"}, {"steps", "2"}, {"static_k", "100000"}};
  big["assembly_threads"] = "1";
  const RunResult one = run_md2d("static", "reuse-sorted", big);
  big["assembly_threads"] = "4";
  const RunResult four = run_md2d("static", "reuse-sorted", big);
  ASSERT_TRUE(one.verified) << one.verification;
  ASSERT_TRUE(four.verified) << four.verification;
  const auto a = nlohmann::json::parse(one.result_json),
             b = nlohmann::json::parse(four.result_json);
  EXPECT_EQ(a.at("tests"), b.at("tests"));
  EXPECT_NEAR(a.at("max_position_error").get<double>(), b.at("max_position_error").get<double>(),
              1e-9);
  EXPECT_EQ(one.metrics.at("items_copied"), four.metrics.at("items_copied"));
  EXPECT_EQ(four.metrics.at("items_copied"), 20000u * 2);  // each particle once a step
  EXPECT_EQ(four.metrics.at("launches"), 2u);
  EXPECT_GE(four.metrics.at("items_read") / 2, 131072u) << "no launch large enough for the threads";
}

TEST(Md2dPieces, TheTraceHoldsSelfAndPairPieces) {
  const RunResult r = run_md2d("static", "reuse", {{"piece_targets", "32"}});
  ASSERT_TRUE(r.verified) << r.verification;
  std::map<std::uint16_t, std::uint64_t> kinds;
  for (const trace::Track& t : r.trace.tracks) {
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::TaskBegin) ++kinds[e.aux];
    }
  }
  EXPECT_GT(kinds[scenarios::md2d::kPairPiece],
            kinds[scenarios::md2d::kPair]);  // most pairs exceed 32 targets
  EXPECT_GT(kinds[scenarios::md2d::kSelfPiece] + kinds[scenarios::md2d::kSelf], 0u);
  EXPECT_EQ(kinds[0] + kinds[1] + kinds[2] + kinds[3], r.tasks);
}

TEST(Md2d, ParticlesMigrateAndPatchesDifferInCost) {
  const RunResult r = run_md2d("adaptive", "reuse", {{"steps", "20"}, {"temperature", "2"}});
  ASSERT_TRUE(r.verified) << r.verification;
  const auto result = nlohmann::json::parse(r.result_json);
  EXPECT_GT(result.at("migrated").get<std::uint64_t>(), 0u);
  EXPECT_EQ(result.at("migrated"), result.at("reference_migrated"));
  // The clusters: the fullest patch holds several times the emptiest (a self object costs n^2).
  EXPECT_GT(result.at("patch_particles_max").get<std::uint64_t>(),
            4 * std::max<std::uint64_t>(1, result.at("patch_particles_min")));
  EXPECT_GT(result.at("interactions").get<std::uint64_t>(), 0u);
  EXPECT_GT(result.at("tests").get<std::uint64_t>(),
            2 * result.at("interactions").get<std::uint64_t>());
}

TEST(Md2d, AToleranceTighterThanFloatFailsTheVerification) {
  const RunResult r = run_md2d("adaptive", "reuse", {{"tolerance", "0.000000001"}});
  EXPECT_FALSE(r.verified);
  EXPECT_NE(r.verification.find("max error"), std::string::npos) << r.verification;
}

TEST(Md2d, TheTraceHoldsSelfAndPairRequests) {
  const RunResult r = run_md2d("static", "reuse", {{"static_k", "50"}});
  ASSERT_TRUE(r.verified) << r.verification;
  std::map<std::uint16_t, std::uint64_t> kinds;
  std::uint64_t launched = 0;
  for (const trace::Track& t : r.trace.tracks) {
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::TaskBegin) ++kinds[e.aux];
      if (e.kind == trace::EventKind::KernelLaunch) launched += e.arg;
    }
  }
  EXPECT_EQ(launched, r.tasks);
  EXPECT_GT(kinds[0], 0u);            // self
  EXPECT_GT(kinds[1], 3 * kinds[0]);  // pair: four a patch
  EXPECT_EQ(kinds[0] + kinds[1], r.tasks);
}

// ---- the body alone, as reuse-sorted hands it its items -------------------------------------------
// The runtime may reorder a request's items past its ordered prefix (a pair's B part, all of a
// self request): each target's output must still land at its particle. Items in the cache come in
// patch order, so the runs above rarely see a reordering; here the slots are shuffled on purpose.

struct LoopContext {  // what the body uses of a worker context
  template <class F>
  void for_each_index(int n, F&& fn) const {
    for (int i = 0; i < n; ++i) fn(i);
  }
};

struct BodyCase {
  std::vector<scenarios::md2d::Particle2> cache;  // A's particles, then B's
  std::uint32_t count_a = 0;
};

BodyCase make_case(std::uint32_t na, std::uint32_t nb, float side) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, side);
  BodyCase c;
  c.count_a = na;
  // Placed on a jittered grid so that no two are closer than ~1 sigma (the LJ repulsion is steep).
  auto place = [&](std::uint32_t n, std::uint32_t patch) {
    for (std::uint32_t k = 0; k < n; ++k) {
      const float x = 1.2f * static_cast<float>(k % 6) + 0.2f * u(rng) / side,
                  y = 1.2f * static_cast<float>(k / 6) + 0.2f * u(rng) / side;
      c.cache.push_back({x, y, k, patch});
    }
  };
  place(na, 0);
  place(nb, 1);
  return c;
}

std::vector<scenarios::md2d::Force2> run_body(const BodyCase& c, bool pair,
                                              const std::vector<std::uint32_t>& slots) {
  using namespace scenarios::md2d;
  const ShiftedLj lj(2.5);
  const Md2dBody body{7.0f, static_cast<float>(lj.rc2), static_cast<float>(lj.rc),
                      static_cast<float>(lj.force_rc), static_cast<float>(lj.energy_rc)};
  std::vector<Force2> out(slots.size(), Force2{0, 0, 0, 0});
  Task t;
  t.kind = pair ? kPair : kSelf;
  t.payload[0] = reinterpret_cast<std::uintptr_t>(slots.data());
  t.payload[1] = slots.size();
  t.payload[2] = reinterpret_cast<std::uintptr_t>(c.cache.data());
  t.payload[3] = reinterpret_cast<std::uintptr_t>(out.data());
  t.payload[kCountAWord] = pair ? c.count_a : slots.size();
  t.payload[kShiftWord] = encode_shift(1, 0);  // B lies one side to the right of A
  LoopContext ctx;
  body(ctx, t);
  return out;
}

TEST(Md2dBody, OutputsFollowTheParticlesWhenTheSortableItemsAreReordered) {
  const BodyCase c = make_case(20, 13, 7.0f);
  std::vector<std::uint32_t> pair(33), self(20);
  std::iota(pair.begin(), pair.end(), 0u);
  std::iota(self.begin(), self.end(), 0u);
  const auto pair_in_order = run_body(c, true, pair), self_in_order = run_body(c, false, self);
  std::mt19937 rng(3);
  std::shuffle(pair.begin() + 20, pair.end(), rng);  // past the ordered prefix (A's 20)
  std::shuffle(self.begin(), self.end(), rng);
  const auto pair_shuffled = run_body(c, true, pair), self_shuffled = run_body(c, false, self);
  auto expect_same = [](const auto& a, const auto& b) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].tested, b[i].tested) << i;
      EXPECT_NEAR(a[i].fx, b[i].fx, 1e-4f * (1 + std::abs(a[i].fx))) << i;
      EXPECT_NEAR(a[i].fy, b[i].fy, 1e-4f * (1 + std::abs(a[i].fy))) << i;
    }
  };
  expect_same(pair_in_order, pair_shuffled);
  expect_same(self_in_order, self_shuffled);
  // Each side tested every particle of the other; A's first row and B's first column face each
  // other across the boundary (B at x + 7), so some pairs are inside the cutoff.
  for (std::uint32_t i = 0; i < 20; ++i) EXPECT_EQ(pair_in_order[i].tested, 13u);
  for (std::uint32_t i = 20; i < 33; ++i) EXPECT_EQ(pair_in_order[i].tested, 20u);
  for (std::uint32_t i = 0; i < 20; ++i) EXPECT_EQ(self_in_order[i].tested, 19u);
  // Newton's third law across the two sides (each computed by its own thread).
  double fx = 0, fy = 0, scale = 0;
  for (const auto& f : pair_in_order)
    fx += f.fx, fy += f.fy, scale += std::abs(f.fx) + std::abs(f.fy);
  EXPECT_GT(scale, 0.0);
  EXPECT_NEAR(fx, 0.0, 1e-5 * scale);
  EXPECT_NEAR(fy, 0.0, 1e-5 * scale);
}

// A piece against a whole object, through the body alone: the pieces' outputs, laid where the
// scenario lays them (A's targets, then B's), are the whole object's, bit for bit.
Task piece_task(std::uint16_t kind, const std::vector<std::uint32_t>& slots,
                const std::vector<scenarios::md2d::Particle2>& cache,
                std::vector<scenarios::md2d::Force2>& out, std::uint32_t targets,
                std::uint64_t shift) {
  Task t;
  t.kind = kind;
  t.payload[0] = reinterpret_cast<std::uintptr_t>(slots.data());
  t.payload[1] = slots.size();
  t.payload[2] = reinterpret_cast<std::uintptr_t>(cache.data());
  t.payload[3] = reinterpret_cast<std::uintptr_t>(out.data());
  t.payload[scenarios::md2d::kCountAWord] = targets;
  t.payload[scenarios::md2d::kShiftWord] = shift;
  return t;
}

TEST(Md2dBody, PiecesComputeWhatTheWholeObjectComputes) {
  using namespace scenarios::md2d;
  const BodyCase c = make_case(20, 13, 7.0f);
  std::vector<std::uint32_t> pair(33), self(20);
  std::iota(pair.begin(), pair.end(), 0u);
  std::iota(self.begin(), self.end(), 0u);
  const auto pair_whole = run_body(c, true, pair), self_whole = run_body(c, false, self);
  const ShiftedLj lj(2.5);
  const Md2dBody body{7.0f, static_cast<float>(lj.rc2), static_cast<float>(lj.rc),
                      static_cast<float>(lj.force_rc), static_cast<float>(lj.energy_rc)};
  LoopContext ctx;
  auto run_piece = [&](std::uint16_t kind, std::uint32_t from, std::uint32_t to,
                       std::uint32_t partners_from, std::uint32_t partners_to,
                       std::uint64_t shift) {
    std::vector<std::uint32_t> slots;
    for (std::uint32_t i = from; i < to; ++i) slots.push_back(i);
    for (std::uint32_t i = partners_from; i < partners_to; ++i) slots.push_back(i);
    std::vector<Force2> out(to - from, Force2{0, 0, 0, 0});
    body(ctx, piece_task(kind, slots, c.cache, out, to - from, shift));
    return out;
  };
  auto expect_bits = [](const Force2& a, const Force2& b, std::uint32_t i) {
    EXPECT_EQ(a.fx, b.fx) << i;
    EXPECT_EQ(a.fy, b.fy) << i;
    EXPECT_EQ(a.energy, b.energy) << i;
    EXPECT_EQ(a.tested, b.tested) << i;
  };
  // The pair in three pieces: A's [0, 8) and [8, 20) against B (which lies at (1, 0)), B's 13
  // against A (which lies at (-1, 0) from B).
  const auto a0 = run_piece(kPairPiece, 0, 8, 20, 33, encode_shift(1, 0));
  const auto a1 = run_piece(kPairPiece, 8, 20, 20, 33, encode_shift(1, 0));
  const auto b0 = run_piece(kPairPiece, 20, 33, 0, 20, encode_shift(-1, 0));
  for (std::uint32_t i = 0; i < 8; ++i) expect_bits(a0[i], pair_whole[i], i);
  for (std::uint32_t i = 8; i < 20; ++i) expect_bits(a1[i - 8], pair_whole[i], i);
  for (std::uint32_t i = 20; i < 33; ++i) expect_bits(b0[i - 20], pair_whole[i], i);
  // The self object in two pieces, each against the whole patch (itself skipped).
  const auto s0 = run_piece(kSelfPiece, 0, 11, 0, 20, encode_shift(0, 0));
  const auto s1 = run_piece(kSelfPiece, 11, 20, 0, 20, encode_shift(0, 0));
  for (std::uint32_t i = 0; i < 11; ++i) expect_bits(s0[i], self_whole[i], i);
  for (std::uint32_t i = 11; i < 20; ++i) expect_bits(s1[i - 11], self_whole[i], i);
  EXPECT_EQ(s1[0].tested, 19u);
}

TEST(Md2d, IsNamedWhereAScenarioWithoutRequestsIsRefusedUnderCombining) {
  RunConfig c;
  c.scenario = "patterns";
  c.policy = "combining";
  c.backend = Backend::Cpu;
  try {
    (void)run(builtin::registry(), c);
    FAIL() << "patterns under combining ran";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("md2d"), std::string::npos) << e.what();
  }
}

TEST(Md2d, IsRefusedUnderAPolicyThatRunsNoRequests) {
  RunConfig c;
  c.scenario = "md2d";
  c.policy = "task-queue";
  c.backend = Backend::Cpu;
  try {
    (void)run(builtin::registry(), c);
    FAIL() << "md2d under task-queue ran";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("use combining"), std::string::npos) << e.what();
  }
}

TEST(Md2d, BadParametersAreRefusedByName) {
  for (const auto& [name, value] : std::multimap<std::string, std::string>{{"patches", "2"},
                                                                           {"patches", "200"},
                                                                           {"density", "0.9"},
                                                                           {"density", "x"},
                                                                           {"cutoff", "1"},
                                                                           {"steps", "0"},
                                                                           {"dt", "1"},
                                                                           {"contrast", "1"},
                                                                           {"clusters", "0"},
                                                                           {"particles", "10"},
                                                                           {"tolerance", "0"},
                                                                           {"piece_targets", "16"},
                                                                           {"piece_targets", "-1"},
                                                                           {"strategy", "lazy"},
                                                                           {"transfer", "all"}}) {
    try {
      (void)run_md2d("adaptive", "reuse", {{name, value}});
      FAIL() << name << "=" << value << " ran";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos)
          << name << "=" << value << ": " << e.what();
    }
  }
  // A box too small for 3 patches of the cutoff's side names the cutoff.
  try {
    (void)run_md2d("adaptive", "reuse",
                   {{"particles", "64"}, {"density", "0.5"}, {"cutoff", "4.5"}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cutoff"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpulb
