// The `md` scenario: Chen et al. 2010, section 6 -- a molecular-dynamics force computation, the
// paper's case study of its four load-balancing solutions.
//
// A synthetic helium-like system (atoms with a Gaussian density, denser at the centre),
// Lennard-Jones plus electrostatic forces cut off at rc, atom decomposition: each atom sums the
// forces of the atoms inside the cutoff (md_body.hpp), found by `pairs`:
//   pairs=cells  (default) a cell list (md_cells.hpp): an atom tests the 27 cells around it, so a
//                task's cost follows its atoms' local density -- the imbalance of section 6.1
//   pairs=all    every atom tests all N (the paper's Theta(N^2)): every task costs the same
// A task is 128 contiguous atoms of the array A. `solution` fixes A's order and the policy:
//   solution=1   decomposition sort (densest box first), --policy hardware (one launch, equal
//                contiguous regions of A per GPU)
//   solution=2   a random permutation of A, --policy hardware
//   solution=3   decomposition sort, --policy chunked (default chunk: one wave of resident blocks
//                of the device at hand; the paper's 120 tasks = 15,360 atoms is --param chunk=120)
//   solution=tq  decomposition sort, --policy task-queue (two queues per GPU, host task pool)
// Any other policy is refused, naming the solution and the policy.
//
// What is timed: one force computation (the run's makespan), as the paper times it; the sort or
// permutation, the cell list and the copy of the positions to the GPUs happen before (instance
// construction, and the backend's upload of input() before the GPU's run starts).
// What is verified (verify()): every task ran once; a sample of atoms' forces against an
// all-pairs double-precision host reference; the energy drift of `steps` velocity-Verlet steps
// integrated on the host in double precision with the same pair force, the first half-kick
// driven by the run's forces. The result carries a hash of all forces (by atom id) so that runs of
// different solutions can be compared bit for bit, and the warp efficiency of the force branch.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "gpulb/scenario.hpp"
#include "md/md_body.hpp"
#include "md/md_system.hpp"

namespace gpulb::scenarios::md {

enum class Solution { Sorted1, Permuted2, Chunked3, TaskQueue };
enum class PairSearch { Cells, All };

// The policy a solution runs under, and its --param spelling.
const char* policy_of(Solution s);
const char* name_of(Solution s);

// Bounds the verifier applies (stated in docs/papers.md):
//   a sampled force component may differ from the double reference by at most
//   kForceTolerance x the RMS force of the sample (float sums of up to a few hundred terms);
//   the total energy may drift from its start by at most kDriftTolerance x the start's kinetic
//   energy over the steps (shifted-force potential, dt = kTimeStep).
inline constexpr double kForceTolerance = 1e-4;
inline constexpr double kDriftTolerance = 1e-3;
inline constexpr double kTimeStep = 0.001;
inline constexpr double kTemperature = 0.5;

struct MdConfig {
  SystemSpec system;
  Solution solution = Solution::TaskQueue;
  PairSearch pairs = PairSearch::Cells;
  std::uint32_t sample = 256;  // atoms checked against the double reference
  std::uint32_t steps = 10;    // velocity-Verlet steps of the energy check (0: none)
};

class MdInstance : public Workload<MdBody, MdRecord> {
 public:
  explicit MdInstance(const MdConfig& config);

  std::vector<Task> initial_tasks() const override;
  Verification verify() const override;
  std::string unsupported_under(const PolicyDescriptor& policy) const override;
  ParamMap policy_defaults(const PolicyDescriptor& policy) const override;
  std::size_t record_count(std::uint32_t) const override { return atoms_.size() + tasks(); }
  std::span<const std::byte> input() const override { return input_; }
  MdBody body(MdRecord* records) const override { return body_on(records, input_.data()); }
  MdBody body_on(MdRecord* records, const std::byte* input) const override;
  void collect(std::vector<std::vector<MdRecord>> per_device, const ExecPlan& plan,
               const ExecOutput& out) override;

  std::uint32_t tasks() const {
    return static_cast<std::uint32_t>((atoms_.size() + kTaskAtoms - 1) / kTaskAtoms);
  }
  const std::vector<std::uint32_t>& order() const { return order_; }

 private:
  MdConfig config_;
  std::vector<Atom> atoms_;
  std::vector<std::uint32_t> order_;  // the array A
  CellList cells_;                    // pairs=cells; empty under pairs=all
  // What the GPUs receive: atoms, A, then (pairs=cells) the cell-ordered atoms, slot_of and the
  // cell starts, each at its byte offset.
  std::vector<std::byte> input_;
  std::size_t cell_atoms_at_ = 0, slot_of_at_ = 0, start_at_ = 0;
  std::vector<MdRecord> records_;
  bool on_gpu_ = false;
};

std::unique_ptr<ScenarioOf<MdInstance>> make_scenario();

}  // namespace gpulb::scenarios::md
