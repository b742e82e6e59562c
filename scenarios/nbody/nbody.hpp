// The `nbody` scenario (G-Charm section 4.1, ChaNGa's gravity as a stream of work requests):
// Barnes-Hut gravity on clustered particles (Plummer spheres). Each step the host builds the
// octree, publishes its particles and node monopoles as the data items, and `walkers` CPU threads
// walk the tree per bucket, each emitting a request with the bucket's interaction list as soon as
// its walk ends -- so requests arrive irregularly, as in ChaNGa. The policy (combining, hybrid)
// runs one block per bucket; the host integrates (kick, drift) between steps.
//
// Verified: every bucket's request ran exactly once over its whole list (an interaction count per
// particle), the last step's forces against a direct double-precision sum on a sample of
// particles (the bound for the opening angle is in verify()), and the total momentum's drift.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpulb/requests.hpp"
#include "gpulb/scenario.hpp"
#include "nbody/nbody_body.hpp"
#include "nbody/octree.hpp"

namespace gpulb::scenarios::nbody {

struct NBodyConfig {
  std::uint32_t particles = 20000;
  std::uint32_t spheres = 2;
  std::uint32_t steps = 3;
  std::uint32_t bucket = 16;
  std::uint32_t walkers = 0;  // 0: the host's hardware threads
  std::uint32_t sample = 256;
  std::uint64_t seed = 1;
  double theta = 0.7;
  double dt = 0.005;
  double softening = 0.01;
};

// Requests carry all their data as items: the records array is not used.
struct NoRecord {
  std::uint32_t unused;
};

class NBodyInstance : public Workload<NBodyBody, NoRecord> {
 public:
  explicit NBodyInstance(const NBodyConfig& config);

  std::vector<Task> initial_tasks() const override { return {}; }
  std::uint64_t expected_tasks() const override { return stream_.expected_requests; }
  Verification verify() const override;
  const RequestStream* request_stream() override { return &stream_; }
  std::size_t record_count(std::uint32_t) const override { return 0; }
  NBodyBody body(NoRecord*) const override {
    return {static_cast<float>(config_.softening * config_.softening)};
  }
  // Checks the last step's forces against the direct sum, after the timed run.
  void collect(std::vector<std::vector<NoRecord>>, const ExecPlan&, const ExecOutput&) override;

 private:
  void produce(RequestSink& sink);
  void build_tree();
  void check_step();
  void sample_forces();
  void integrate();
  double momentum_drift() const;

  NBodyConfig config_;
  RequestStream stream_;
  // The particles, in tree order after each build (position, velocity, mass).
  std::vector<Vec3d> pos_, vel_;
  std::vector<double> mass_;
  std::vector<std::uint32_t> order_;
  Octree tree_;
  std::vector<Body4> items_;        // this step's item table: particles, then nodes
  std::vector<Vec3d> sampled_pos_;  // the last step's positions (its forces are checked)
  std::vector<Accel> accel_;        // per particle (tree order): the requests' outputs
  std::vector<std::uint32_t> expected_interactions_;  // per bucket
  Vec3d initial_momentum_;
  double momentum_scale_ = 0;  // sum of m |v| at the start

  // Results, for verify().
  std::uint32_t steps_done_ = 0;
  std::uint64_t requests_ = 0;
  std::uint64_t interactions_ = 0;
  std::uint64_t wrong_counts_ = 0;  // particles whose interaction count was not their list's
  std::string first_wrong_;
  double rms_error_ = -1, max_error_ = -1;  // force error against the direct sum (sample)
  double drift_ = -1;
  std::uint64_t build_ns_ = 0, walk_ns_ = 0, tail_ns_ = 0;  // the producer's time, by phase
};

std::unique_ptr<ScenarioOf<NBodyInstance>> make_scenario();

}  // namespace gpulb::scenarios::nbody
