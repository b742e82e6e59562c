// The md scenario (Chen et al. 2010, section 6) on the CPU backend, through gpulb::run: every
// solution verifies under both pair searches, all give the same forces, the cell list makes a
// task's cost follow its atoms' density, each solution refuses a policy that is not its own, bad
// parameters are refused by name; and the host pieces (force function, system, orders, cells).
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
const SolutionCase kSolutions[] = {
    {"1", "hardware"}, {"2", "hardware"}, {"3", "chunked"}, {"tq", "task-queue"}};

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

Solution solution_of(const std::string& s) {
  return s == "1"   ? Solution::Sorted1
         : s == "2" ? Solution::Permuted2
         : s == "3" ? Solution::Chunked3
                    : Solution::TaskQueue;
}

// Every atom's record from the instance's body, one atom at a time on the host.
std::vector<MdRecord> forces_of(const MdInstance& instance) {
  std::vector<MdRecord> records(instance.record_count(0));
  const MdBody body = instance.body(records.data());
  std::uint32_t divergent = 0;
  for (std::uint32_t i = 0; i < body.n; ++i) {
    if (body.cells.atoms != nullptr) {
      body.atom_force_in_cells(i);
    } else {
      body.atom_force(i, 0, divergent);
    }
  }
  return records;
}

class MdOnCpu : public ::testing::TestWithParam<SolutionCase> {};

TEST_P(MdOnCpu, VerifiesForcesEnergyAndRunsEveryTaskOnce) {
  for (const char* pairs : {"cells", "all"}) {
    SCOPED_TRACE(pairs);
    const RunResult r = run_md(GetParam(), {{"pairs", pairs}});
    EXPECT_TRUE(r.verified) << r.verification;
    EXPECT_EQ(r.tasks, 4096u / kTaskAtoms);
    const auto j = result_of(r);
    EXPECT_LE(j.at("force_error_over_rms").get<double>(), kForceTolerance);
    EXPECT_LE(j.at("energy_drift_over_kinetic").get<double>(), kDriftTolerance);
    EXPECT_EQ(j.at("solution"), GetParam().solution);
    EXPECT_EQ(j.at("pairs"), pairs);
    if (std::string(pairs) == "all") {
      EXPECT_GT(j.at("warp_efficiency").get<double>(), 0.0);
      EXPECT_LE(j.at("warp_efficiency").get<double>(), 1.0);
    }
  }
}

// The default pair search is the cell list: a task tests its atoms' neighbourhoods, far fewer
// than the N - 1 atoms each that pairs=all tests.
TEST_P(MdOnCpu, CellsAreTheDefaultAndTestFarFewerPairs) {
  const auto cells = result_of(run_md(GetParam())),
             all = result_of(run_md(GetParam(), {{"pairs", "all"}}));
  EXPECT_EQ(cells.at("pairs"), "cells");
  EXPECT_DOUBLE_EQ(all.at("pair_tests_mean").get<double>(), 4095.0);
  EXPECT_LT(cells.at("pair_tests_mean").get<double>(), 0.1 * 4095.0);
  EXPECT_DOUBLE_EQ(cells.at("neighbours_mean").get<double>(),
                   all.at("neighbours_mean").get<double>());
}

// Every atom's force under cells against its force under all, for every solution's instance: the
// same neighbours, summed in another order (float), so within the verifier's tolerance.
TEST_P(MdOnCpu, CellsAndAllGiveTheSameForcesForEveryAtom) {
  MdConfig c;
  c.system.atoms = 4096;
  c.solution = solution_of(GetParam().solution);
  c.pairs = PairSearch::Cells;
  const std::vector<MdRecord> cells = forces_of(MdInstance(c));
  c.pairs = PairSearch::All;
  const std::vector<MdRecord> all = forces_of(MdInstance(c));
  double sum_sq = 0;
  for (std::uint32_t i = 0; i < c.system.atoms; ++i)
    sum_sq += all[i].fx * all[i].fx + all[i].fy * all[i].fy + all[i].fz * all[i].fz;
  const double rms = std::sqrt(sum_sq / c.system.atoms);
  for (std::uint32_t i = 0; i < c.system.atoms; ++i) {
    ASSERT_EQ(cells[i].neighbours, all[i].neighbours) << "atom " << i;
    EXPECT_NEAR(cells[i].fx, all[i].fx, kForceTolerance * rms) << "atom " << i;
    EXPECT_NEAR(cells[i].fy, all[i].fy, kForceTolerance * rms) << "atom " << i;
    EXPECT_NEAR(cells[i].fz, all[i].fz, kForceTolerance * rms) << "atom " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(EverySolution, MdOnCpu, ::testing::ValuesIn(kSolutions),
                         [](const auto& info) {
                           return std::string("solution_") + info.param.solution;
                         });

TEST(Md, EverySolutionGivesTheSameForcesBitForBit) {
  for (const char* pairs : {"cells", "all"}) {
    SCOPED_TRACE(pairs);
    std::set<std::uint64_t> hashes;
    for (const SolutionCase& s : kSolutions)
      hashes.insert(
          result_of(run_md(s, {{"pairs", pairs}})).at("forces_hash").get<std::uint64_t>());
    EXPECT_EQ(hashes.size(), 1u);
  }
}

TEST(Md, ThreadsPerBlockChangeNeitherForcesNorWarpSamples) {
  for (const char* pairs : {"cells", "all"}) {
    SCOPED_TRACE(pairs);
    const auto a = result_of(run_md(kSolutions[0], {{"pairs", pairs}}, 128)),
               b = result_of(run_md(kSolutions[0], {{"pairs", pairs}}, 32));
    EXPECT_EQ(a.at("forces_hash"), b.at("forces_hash"));
    EXPECT_DOUBLE_EQ(a.at("warp_efficiency").get<double>(), b.at("warp_efficiency").get<double>());
  }
}

// The imbalance of Chen section 6.1, measured in work (distance tests), not time: under cells the
// costliest task (the densest box, first in Solution 1's order) tests several times the pairs of
// the mean task; under all every full task tests 128 x (N - 1).
TEST(Md, UnderCellsATasksCostFollowsItsAtomsDensity) {
  const auto cells = result_of(run_md(kSolutions[0], {{"atoms", "16384"}, {"steps", "0"}}));
  const auto all =
      result_of(run_md(kSolutions[0], {{"atoms", "16384"}, {"steps", "0"}, {"pairs", "all"}}));
  EXPECT_DOUBLE_EQ(all.at("task_pair_tests_max_over_mean").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(all.at("task_pair_tests_min_over_mean").get<double>(), 1.0);
  const double hi = cells.at("task_pair_tests_max_over_mean").get<double>(),
               lo = cells.at("task_pair_tests_min_over_mean").get<double>();
  EXPECT_GT(hi, 1.5) << "costliest task over the mean";
  EXPECT_LT(lo, 0.5) << "cheapest task over the mean";
  EXPECT_GT(hi / lo, 5.0);
}

TEST(Md, APartialLastTaskVerifies) {
  const RunResult r = run_md(kSolutions[3], {{"atoms", "1000"}});
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.tasks, 8u);  // 7 full tasks and one of 104 atoms
}

// The paper's explanation of Solution 2's slowness: a random order mixes dense and sparse atoms in
// a warp, so fewer lanes take the force branch together.
TEST(Md, ThePermutationLowersWarpEfficiencyAndSplitsMoreWarps) {
  const auto sorted = result_of(run_md(kSolutions[0], {{"pairs", "all"}})),
             permuted = result_of(run_md(kSolutions[1], {{"pairs", "all"}}));
  const double e1 = sorted.at("warp_efficiency").get<double>(),
               e2 = permuted.at("warp_efficiency").get<double>();
  EXPECT_GT(e1, 1.2 * e2) << "sorted " << e1 << ", permuted " << e2;
  const double d1 = sorted.at("divergent_samples").get<double>(),
               d2 = permuted.at("divergent_samples").get<double>();
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
  // Solution 3's chunk is the policy's own default, one wave of the device (0); the paper's is a
  // parameter.
  const RunResult chunked = run_md(kSolutions[2]);
  EXPECT_EQ(chunked.trace.meta.parameters.count("chunk") ? chunked.trace.meta.parameters.at("chunk")
                                                         : "0",
            "0");
  const RunResult paper = run_md(kSolutions[2], {{"chunk", "120"}});
  EXPECT_EQ(paper.trace.meta.parameters.at("chunk"), "120");
  EXPECT_TRUE(paper.verified) << paper.verification;
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
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"atoms", "0"},    {"atoms", "127"}, {"atoms", "lots"}, {"solution", "4"}, {"cutoff", "0.5"},
      {"cutoff", "x"},   {"cutoff", "11"}, {"sample", "0"},   {"steps", "-1"},   {"seed", "-3"},
      {"pairs", "grid"}, {"pairs", ""},    {"pairs", "Cells"}};
  for (const auto& [key, value] : bad) {
    SCOPED_TRACE(key + "=" + value);
    try {
      run_md(kSolutions[3], {{key, value}});
      FAIL() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + key + "'"), std::string::npos) << e.what();
    }
  }
  for (const auto& [key, value] :
       std::map<std::string, std::string>{{"cutoff", "0.5"}, {"atoms", "5000000"}}) {
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
      const double dv =
          (pair_potential(ff, (r + h) * (r + h), qq) - pair_potential(ff, (r - h) * (r - h), qq)) /
          (2 * h);
      EXPECT_NEAR(pair_force_over_r(ff, r * r, qq) * r, -dv, 1e-5 * std::max(1.0, std::abs(dv)))
          << "r " << r;
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
      const double dx = atoms[i].x - atoms[j].x, dy = atoms[i].y - atoms[j].y,
                   dz = atoms[i].z - atoms[j].z;
      closest = std::min(closest, std::sqrt(dx * dx + dy * dy + dz * dz));
    }
  }
  EXPECT_GE(closest, spec.min_distance * (1 - 1e-6));
  // Neighbours within the cutoff: the atoms nearest the centre have many more than the outer ones.
  auto radius = [](const Atom& a) {
    return std::sqrt(double(a.x) * a.x + double(a.y) * a.y + double(a.z) * a.z);
  };
  std::vector<std::size_t> by_radius(atoms.size());
  std::iota(by_radius.begin(), by_radius.end(), 0);
  std::sort(by_radius.begin(), by_radius.end(),
            [&](std::size_t a, std::size_t b) { return radius(atoms[a]) < radius(atoms[b]); });
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
    EXPECT_TRUE(seen.insert(box[order[start]]).second)
        << "box " << box[order[start]] << " is split";
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

// The cell scan finds every pair inside the cutoff (brute force over all pairs decides), each atom
// never itself; returns each atom's candidates (its pair tests in the body).
std::vector<std::uint32_t> checked_candidates(const std::vector<Atom>& atoms, double cutoff) {
  const CellList list = build_cell_list(atoms, cutoff);
  const CellListView view = list.view();
  std::vector<std::uint32_t> candidates(atoms.size(), 0);
  std::vector<std::uint32_t> id_of(atoms.size());
  for (std::uint32_t i = 0; i < atoms.size(); ++i) id_of[list.slot_of[i]] = i;
  for (std::uint32_t i = 0; i < atoms.size(); ++i) {
    std::set<std::uint32_t> found;
    const std::uint32_t self = list.slot_of[i];
    view.for_each_candidate(self, list.atoms[self], [&](std::uint32_t slot, const Atom&) {
      EXPECT_NE(slot, self);
      found.insert(id_of[slot]);
      ++candidates[i];
    });
    for (std::uint32_t j = 0; j < atoms.size(); ++j) {
      const float dx = atoms[i].x - atoms[j].x, dy = atoms[i].y - atoms[j].y,
                  dz = atoms[i].z - atoms[j].z;
      if (j != i && dx * dx + dy * dy + dz * dz < float(cutoff * cutoff)) {
        EXPECT_TRUE(found.count(j))
            << "atom " << j << " is within the cutoff of " << i << " but not scanned";
      }
    }
  }
  return candidates;
}

// A deliberately denser region: a lattice of spacing 1.25 whose left half gets a second, offset
// lattice (twice the density). The left half's atoms test about twice the candidates.
TEST(MdCells, ADenserRegionCostsMoreAndNoNeighbourIsMissed) {
  std::vector<Atom> atoms;
  const float h = 1.25f;
  for (int x = 0; x < 16; ++x) {
    for (int y = 0; y < 12; ++y) {
      for (int z = 0; z < 12; ++z) {
        atoms.push_back({x * h, y * h, z * h, 0.3f});
        if (x < 8) atoms.push_back({(x + 0.5f) * h, (y + 0.5f) * h, (z + 0.5f) * h, -0.3f});
      }
    }
  }
  const std::vector<std::uint32_t> candidates = checked_candidates(atoms, 2.5);
  double dense = 0, sparse = 0, dense_n = 0, sparse_n = 0;
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    const float x = atoms[i].x, y = atoms[i].y, z = atoms[i].z;
    if (y < 4 || y > 10 || z < 4 || z > 10) continue;  // away from the lattice's faces
    if (x > 3 && x < 6) dense += candidates[i], ++dense_n;
    if (x > 14 && x < 17) sparse += candidates[i], ++sparse_n;
  }
  ASSERT_GT(dense_n, 0);
  ASSERT_GT(sparse_n, 0);
  EXPECT_GT(dense / dense_n, 1.7 * sparse / sparse_n)
      << dense / dense_n << " against " << sparse / sparse_n;
}

// A small cutoff over a sparse, wide system would need a cell per 1.5^3 of a 2000-wide cube: the
// grid is capped at kMaxCellsPerAtom cells an atom (its side grows) and still finds every pair.
TEST(MdCells, TheGridStaysBoundedAndComplete) {
  SystemSpec spec;
  spec.atoms = 2000;
  std::vector<Atom> atoms = make_system(spec);
  for (std::size_t i = 0; i < 40; ++i) atoms[i].x = 1000.f + float(i);  // a far-off tail
  const CellList list = build_cell_list(atoms, 1.5);
  EXPECT_LE(list.start.size(), std::size_t{kMaxCellsPerAtom} * atoms.size() + 28);
  checked_candidates(atoms, 1.5);
}

}  // namespace
}  // namespace gpulb::scenarios::md
