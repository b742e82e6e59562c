// The `md2d` scenario (G-Charm section 4.2): the paper's two-dimensional molecular dynamics as a
// stream of work requests. A periodic box cut into P x P patches (side >= the cutoff); particles
// with a non-uniform density (Gaussian clusters over a uniform background), so patches hold very
// different counts and compute objects differ in cost by orders of magnitude -- what makes the
// combining and the CPU/GPU split interesting.
//
// Each step the host publishes every particle as a data item (grouped by patch), then `producers`
// host threads deliver the patches in a shuffled order; a compute object (self: one patch; pair:
// two neighbouring patches) is emitted as a request by the thread that delivers its last patch, as
// a CHARM++ compute fires when its patches' messages have arrived -- so requests arrive
// irregularly. The policy (combining, hybrid) runs one block per compute object (md2d_body.hpp).
// Once every request has run the host sums the outputs per particle, integrates (leapfrog velocity
// Verlet, double precision), and re-bins: particles that left their patch migrate.
//
// Verified: every particle tested every particle of its 3 x 3 patches exactly once each step (a
// request run twice, in part or not at all shows), and after the steps every position against a
// sequential double-precision run of the same algorithm from the same initial state (bound:
// parameter `tolerance`; see verify()), with the energy drift of both.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpulb/requests.hpp"
#include "gpulb/scenario.hpp"
#include "md2d/md2d_body.hpp"
#include "md2d/md2d_system.hpp"

namespace gpulb::scenarios::md2d {

// Requests carry all their data as items: the records array is not used.
struct NoRecord {
  std::uint32_t unused;
};

class Md2dInstance : public Workload<Md2dBody, NoRecord> {
 public:
  explicit Md2dInstance(const Md2dConfig& config);

  std::vector<Task> initial_tasks() const override { return {}; }
  std::uint64_t expected_tasks() const override { return stream_.expected_requests; }
  Verification verify() const override;
  const RequestStream* request_stream() override { return &stream_; }
  std::size_t record_count(std::uint32_t) const override { return 0; }
  Md2dBody body(NoRecord*) const override;
  // Runs the reference after the timed run and compares.
  void collect(std::vector<std::vector<NoRecord>>, const ExecPlan&, const ExecOutput&) override;

  const Box& box() const { return box_; }

 private:
  void produce(RequestSink& sink);
  void build_items();
  void emit_step(RequestSink& sink, std::uint32_t step);
  double gather_step();  // returns the potential energy

  Md2dConfig config_;
  Box box_;
  ShiftedLj lj_;
  RequestStream stream_;
  State initial_;  // for the reference
  State state_;
  Binning bins_;
  std::vector<Particle2> items_;              // this step's item table, in patch order
  std::vector<std::uint64_t> output_offset_;  // per compute object: its first Force2 in outputs_
  std::vector<Force2> outputs_;
  std::vector<Vec2> force_;  // per particle, summed over its compute objects
  std::atomic<std::uint32_t> next_id_{0};

  // Results, for verify().
  std::uint32_t steps_done_ = 0;
  std::uint64_t requests_ = 0;
  std::uint64_t tests_ = 0;  // distance tests (target, partner), both directions
  std::uint64_t migrated_ = 0;
  std::uint64_t wrong_counts_ = 0;  // particles whose test count was not their 3 x 3 patches'
  std::string first_wrong_;
  std::uint32_t max_items_ = 0;                       // the most items a request read
  std::uint32_t patch_min_ = 0, patch_max_ = 0;       // particles per patch at the start
  std::vector<double> energy_;                        // total energy at each step
  double max_error_ = -1;                             // max |x - x_ref| after the run
  double energy_drift_ = -1, ref_energy_drift_ = -1;  // max |E(t) - E(0)| / particles
  std::uint64_t ref_interactions_ = 0, ref_migrated_ = 0;
  std::uint64_t bin_ns_ = 0, emit_ns_ = 0, tail_ns_ = 0, integrate_ns_ = 0;
};

std::unique_ptr<ScenarioOf<Md2dInstance>> make_scenario();

}  // namespace gpulb::scenarios::md2d
