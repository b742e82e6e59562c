// The md scenario (Chen et al. 2010, section 6) on the CPU backend, through gpulb::run: every
// solution verifies, all give the same forces, each refuses a policy that is not its own, bad
// parameters are refused by name; and the host pieces (force function, system, orders).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include <nlohmann/json.hpp>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/policies/hardware.hpp"
#include "gpulb/run.hpp"
#include "md/md.hpp"

namespace gpulb::scenarios::md {
namespace {

struct SolutionCase {
  const char* solution;
  const char* policy;
};
const SolutionCase kSolutions[] = {{"1", "hardware"}, {"2", "hardware"}, {"3", "chunked"}, {"tq", "task-queue"}};

RunResult run_md(const SolutionCase& s, ParamMap extra = {}, std::uint32_t block_size = 0) {
  RunConfig c;
  c.scenario = "md";
  c.policy = s.policy;
  c.backend = Backend::Cpu;
  c.workers = 2;
  c.block_size = block_size;
  c.params = {{"atoms", "4096"}, {"solution", s.solution}};
  for (auto& [k, v] : extra) c.params[k] = v;
  return run(builtin::registry(), c);
}

nlohmann::json result_of(const RunResult& r) { return nlohmann::json::parse(r.result_json); }

class MdOnCpu : public ::testing::TestWithParam<SolutionCase> {};

TEST_P(MdOnCpu, VerifiesForcesEnergyAndRunsEveryTaskOnce) {
  const RunResult r = run_md(GetParam());
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.tasks, 4096u / kTaskAtoms);
  const auto j = result_of(r);
  EXPECT_LE(j.at("force_error_over_rms").get<double>(), kForceTolerance);
  EXPECT_LE(j.at("energy_drift_over_kinetic").get<double>(), kDriftTolerance);
  EXPECT_GT(j.at("warp_efficiency").get<double>(), 0.0);
  EXPECT_LE(j.at("warp_efficiency").get<double>(), 1.0);
  EXPECT_EQ(j.at("solution"), GetParam().solution);
}

INSTANTIATE_TEST_SUITE_P(EverySolution, MdOnCpu, ::testing::ValuesIn(kSolutions),
                         [](const auto& info) { return std::string("solution_") + info.param.solution; });

TEST(Md, EverySolutionGivesTheSameForcesBitForBit) {
  std::set<std::uint64_t> hashes;
  for (const SolutionCase& s : kSolutions) hashes.insert(result_of(run_md(s)).at("forces_hash").get<std::uint64_t>());
  EXPECT_EQ(hashes.size(), 1u);
}

TEST(Md, ThreadsPerBlockChangeNeitherForcesNorWarpSamples) {
  const auto a = result_of(run_md(kSolutions[0], {}, 128)), b = result_of(run_md(kSolutions[0], {}, 32));
  EXPECT_EQ(a.at("forces_hash"), b.at("forces_hash"));
  EXPECT_DOUBLE_EQ(a.at("warp_efficiency").get<double>(), b.at("warp_efficiency").get<double>());
}

TEST(Md, APartialLastTaskVerifies) {
  const RunResult r = run_md(kSolutions[3], {{"atoms", "1000"}});
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.tasks, 8u);  // 7 full tasks and one of 104 atoms
}

// The paper's explanation of Solution 2's slowness: a random order mixes dense and sparse atoms in
// a warp, so fewer lanes take the force branch together.
TEST(Md, ThePermutationLowersWarpEfficiencyAndSplitsMoreWarps) {
  const auto sorted = result_of(run_md(kSolutions[0])), permuted = result_of(run_md(kSolutions[1]));
  const double e1 = sorted.at("warp_efficiency").get<double>(), e2 = permuted.at("warp_efficiency").get<double>();
  EXPECT_GT(e1, 1.2 * e2) << "sorted " << e1 << ", permuted " << e2;
  const double d1 = sorted.at("divergent_samples").get<double>(), d2 = permuted.at("divergent_samples").get<double>();
  EXPECT_GT(d1, 0.0);
  EXPECT_GT(d2, 1.2 * d1) << "sorted " << d1 << ", permuted " << d2;
}

TEST(Md, EachSolutionRefusesAnotherPolicyNamingBoth) {
  for (const SolutionCase& s : kSolutions) {
    for (const char* policy : {"hardware", "chunked", "task-queue", "work-stealing"}) {
      if (std::string(policy) == s.policy) continue;
      SCOPED_TRACE(std::string(s.solution) + " under " + policy);
      try {
        run_md({s.solution, policy});
        FAIL() << "accepted";
      } catch (const ConfigError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(std::string("solution=") + s.solution), std::string::npos) << msg;
        EXPECT_NE(msg.find(std::string("'") + policy + "'"), std::string::npos) << msg;
        EXPECT_NE(msg.find(s.policy), std::string::npos) << msg;
      }
    }
  }
}

TEST(Md, SolutionsSetThePapersPolicyDefaultsAndTheUserWins) {
  const RunResult chunked = run_md(kSolutions[2]);
  EXPECT_EQ(chunked.trace.meta.parameters.at("chunk"), "120");  // 15,360 atoms
  const RunResult mine = run_md(kSolutions[2], {{"chunk", "7"}});
  EXPECT_EQ(mine.trace.meta.parameters.at("chunk"), "7");
  EXPECT_TRUE(mine.verified) << mine.verification;
  const RunResult tq = run_md(kSolutions[3], {{"queue_capacity", "20"}});
  EXPECT_EQ(tq.trace.meta.parameters.at("queue_capacity"), "20");
  EXPECT_EQ(run_md(kSolutions[3]).trace.meta.parameters.at("queue_capacity"), "256");
  // One launch of 10^12 pair tests shows no progress for seconds: the watchdog waits longer.
  EXPECT_EQ(chunked.trace.meta.parameters.at("watchdog_ms"), "10000");
  MdConfig big;
  big.system.atoms = 400000;  // 1.6e11 pair tests: 16 s at 10^10 a second
  big.solution = Solution::Sorted1;
  EXPECT_EQ(MdInstance(big).policy_defaults(policies::hardware()).at("watchdog_ms"), "16000");
}

TEST(Md, BadParametersAreRefusedByName) {
  const std::map<std::string, std::string> bad = {
      {"atoms", "0"},  {"atoms", "127"},  {"atoms", "lots"}, {"solution", "4"}, {"cutoff", "0.5"},
      {"cutoff", "x"}, {"cutoff", "11"}, {"sample", "0"},    {"steps", "-1"},   {"seed", "-3"}};
  for (const auto& [key, value] : bad) {
    SCOPED_TRACE(key + "=" + value);
    try {
      run_md(kSolutions[3], {{key, value}});
      FAIL() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + key + "'"), std::string::npos) << e.what();
    }
  }
  for (const auto& [key, value] : std::map<std::string, std::string>{{"cutoff", "0.5"}, {"atoms", "5000000"}}) {
    SCOPED_TRACE(key + "=" + value);
    EXPECT_THROW(run_md(kSolutions[3], {{key, value}}), ConfigError);
  }
}

// -- the host pieces ------------------------------------------------------------------------------

TEST(MdForce, IsMinusTheGradientOfThePotentialAndVanishesAtTheCutoff) {
  const ForceField<double> ff = make_force_field<double>(2.5);
  for (double r : {0.95, 1.1, 1.5, 2.0, 2.4}) {
    for (double qq : {0.09, -0.09}) {
      const double h = 1e-6;
      const double dv = (pair_potential(ff, (r + h) * (r + h), qq) - pair_potential(ff, (r - h) * (r - h), qq)) / (2 * h);
      EXPECT_NEAR(pair_force_over_r(ff, r * r, qq) * r, -dv, 1e-5 * std::max(1.0, std::abs(dv))) << "r " << r;
    }
  }
  const double rc = 2.5 * (1 - 1e-12);
  EXPECT_NEAR(pair_force_over_r(ff, rc * rc, 0.09), 0.0, 1e-9);
  EXPECT_NEAR(pair_potential(ff, rc * rc, 0.09), 0.0, 1e-9);
}

TEST(MdSystem, AtomsKeepTheirDistanceAndAreDenserAtTheCentre) {
  SystemSpec spec;
  spec.atoms = 3000;
  const std::vector<Atom> atoms = make_system(spec);
  ASSERT_EQ(atoms.size(), 3000u);
  double closest = 1e9;
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    for (std::size_t j = i + 1; j < atoms.size(); ++j) {
      const double dx = atoms[i].x - atoms[j].x, dy = atoms[i].y - atoms[j].y, dz = atoms[i].z - atoms[j].z;
      closest = std::min(closest, std::sqrt(dx * dx + dy * dy + dz * dz));
    }
  }
  EXPECT_GE(closest, spec.min_distance * (1 - 1e-6));
  // Neighbours within the cutoff: the atoms nearest the centre have many more than the outer ones.
  auto radius = [](const Atom& a) { return std::sqrt(double(a.x) * a.x + double(a.y) * a.y + double(a.z) * a.z); };
  std::vector<std::size_t> by_radius(atoms.size());
  std::iota(by_radius.begin(), by_radius.end(), 0);
  std::sort(by_radius.begin(), by_radius.end(), [&](std::size_t a, std::size_t b) { return radius(atoms[a]) < radius(atoms[b]); });
  auto neighbours = [&](std::size_t i) {
    int n = 0;
    for (const Atom& b : atoms) {
      const double dx = atoms[i].x - b.x, dy = atoms[i].y - b.y, dz = atoms[i].z - b.z;
      n += dx * dx + dy * dy + dz * dz < spec.cutoff * spec.cutoff;
    }
    return n - 1;
  };
  double inner = 0, outer = 0;
  for (std::size_t k = 0; k < 100; ++k) {
    inner += neighbours(by_radius[k]);
    outer += neighbours(by_radius[atoms.size() - 1 - k]);
  }
  EXPECT_GT(inner, 5 * outer);
}

TEST(MdSystem, TheDecompositionOrderIsAPermutationDensestBoxFirst) {
  SystemSpec spec;
  spec.atoms = 5000;
  const std::vector<Atom> atoms = make_system(spec);
  const std::vector<std::uint32_t> order = decomposition_order(atoms, spec.cutoff);
  std::vector<std::uint32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::uint32_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], i);
  // Each box is one run of A, and the runs never grow along A (densest box first).
  const std::vector<std::uint32_t> box = box_of_atoms(atoms, spec.cutoff);
  std::vector<std::uint32_t> runs;
  std::set<std::uint32_t> seen;
  std::size_t start = 0;
  for (std::size_t k = 1; k <= order.size(); ++k) {
    if (k < order.size() && box[order[k]] == box[order[start]]) continue;
    EXPECT_TRUE(seen.insert(box[order[start]]).second) << "box " << box[order[start]] << " is split";
    runs.push_back(static_cast<std::uint32_t>(k - start));
    start = k;
  }
  EXPECT_TRUE(std::is_sorted(runs.rbegin(), runs.rend()));
  EXPECT_GT(runs.front(), 5 * runs.back());
  const std::vector<std::uint32_t> perm = random_order(5000, 7);
  std::vector<std::uint32_t> p = perm;
  std::sort(p.begin(), p.end());
  for (std::uint32_t i = 0; i < p.size(); ++i) ASSERT_EQ(p[i], i);
  EXPECT_NE(perm, sorted);
}

}  // namespace
}  // namespace gpulb::scenarios::md
