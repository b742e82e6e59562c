#include "nbody/nbody.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "gpulb/clock.hpp"

namespace gpulb::scenarios::nbody {

namespace {

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> s = {
      {"particles", "particles in all", "20000", "64..4194304", 64, 1 << 22, {}},
      {"spheres",
       "Plummer spheres the particles are split among (clusters)",
       "2",
       "1..64",
       1,
       64,
       {}},
      {"steps",
       "time steps (a tree build, its walks and its force requests each)",
       "3",
       "1..1000",
       1,
       1000,
       {}},
      {"bucket", "particles per bucket (tree leaf): a request's rows", "16", "1..16", 1, 16, {}},
      {"walkers",
       "host threads walking the tree and emitting requests; 0 = the host's hardware threads",
       "0",
       "0..1024",
       0,
       1024,
       {}},
      {"theta", "opening angle of the tree walk", "0.7", "0.1..1.2", 0, 0, {}},
      {"dt", "time step", "0.005", "0.00001..0.1", 0, 0, {}},
      {"softening", "Plummer softening length", "0.01", "0.0001..1", 0, 0, {}},
      {"sample",
       "particles whose last forces are checked against a direct sum",
       "256",
       "1..65536",
       1,
       65536,
       {}},
      {"seed", "random seed of the initial conditions", "1", "0..4294967295", 0, 4294967295LL, {}},
  };
  return s;
}

// A step's requests, all emitted before most have run (the walks outpace the runs), hold every
// bucket's interaction list: 4 bytes an item, bucket / items_per_particle of them a particle. A
// list grows as log N, as theta^-2.2 and, per particle, as bucket^-0.6: fitted to the lists of
// runs at 100 K particles (235 items a particle at theta 0.7, bucket 16; 1,070 at theta 0.35,
// 109 at theta 1; 547 at bucket 4) and 400 K (266).
double items_per_particle(double particles, double theta, double bucket) {
  const double depth = std::log2(std::max(2.0, particles / 16.0)) / std::log2(100'000.0 / 16.0);
  return 235.0 * depth * std::pow(0.7 / theta, 2.2) * std::pow(16.0 / bucket, 0.6);
}

class NBodyScenario : public ScenarioOf<NBodyInstance> {
 public:
  std::string name() const override { return "nbody"; }
  std::string description() const override {
    return "Barnes-Hut gravity on Plummer spheres (G-Charm's ChaNGa case): host threads walk the "
           "tree per bucket and emit a "
           "work request with its interaction list as they finish; one block of 16 x 8 threads per "
           "bucket. Runs under "
           "combining or hybrid.";
  }
  const std::vector<ParamSpec>& params() const override { return specs(); }
  bool makes_requests() const override { return true; }
  // Per particle: positions, velocities and the last step's positions (24 bytes each), mass (8),
  // order (4), accelerations (16), the item table's particle and node (16 + about 4), the tree's
  // nodes (about 6), and the requests' items. Measured (CPU backend, 2 workers, --no-trace, one
  // step; peak resident over the process's 8 MiB without data): 100 K particles 0.98 x this
  // estimate, 400 K 0.95 x, theta 0.35 0.81 x, theta 1 1.08 x, bucket 4 0.79 x.
  DataSize data_size(const ParamMap& params) const override {
    const auto particles = static_cast<double>(int_param(params, find_spec(specs(), "particles")));
    const double theta = real_param(params, find_spec(specs(), "theta"), 0.1, 1.2);
    const auto bucket = static_cast<double>(int_param(params, find_spec(specs(), "bucket")));
    const double per_particle =
        3 * 24 + 8 + 4 + 16 + 20 + 6 + 4 * items_per_particle(particles, theta, bucket);
    return {0, static_cast<std::uint64_t>(particles * per_particle), "particles"};
  }
  std::unique_ptr<NBodyInstance> instantiate(const ParamMap& params) const override {
    auto integer = [&](const char* n) { return int_param(params, find_spec(specs(), n)); };
    NBodyConfig c;
    c.particles = static_cast<std::uint32_t>(integer("particles"));
    c.spheres = static_cast<std::uint32_t>(integer("spheres"));
    c.steps = static_cast<std::uint32_t>(integer("steps"));
    c.bucket = static_cast<std::uint32_t>(integer("bucket"));
    c.walkers = static_cast<std::uint32_t>(integer("walkers"));
    c.sample = static_cast<std::uint32_t>(integer("sample"));
    c.seed = static_cast<std::uint64_t>(integer("seed"));
    c.theta = real_param(params, find_spec(specs(), "theta"), 0.1, 1.2);
    c.dt = real_param(params, find_spec(specs(), "dt"), 1e-5, 0.1);
    c.softening = real_param(params, find_spec(specs(), "softening"), 1e-4, 1);
    if (c.spheres > c.particles) {
      throw ConfigError("parameter 'spheres' is " + std::to_string(c.spheres) + ": more than the " +
                        std::to_string(c.particles) + " particles");
    }
    return std::make_unique<NBodyInstance>(c);
  }
};

// Plummer sphere sampling (Aarseth, Henon & Wielen 1974), G = 1, scale radius 1, radius cut at 10.
void plummer(std::mt19937_64& rng, std::uint32_t n, double total_mass, Vec3d centre, Vec3d drift,
             std::vector<Vec3d>& pos, std::vector<Vec3d>& vel, std::vector<double>& mass) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto direction = [&](double len) {
    const double z = 2 * u(rng) - 1, phi = 2 * M_PI * u(rng), s = std::sqrt(1 - z * z);
    return Vec3d{len * s * std::cos(phi), len * s * std::sin(phi), len * z};
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    double r;
    do {
      r = 1.0 / std::sqrt(std::pow(std::max(u(rng), 1e-12), -2.0 / 3.0) - 1.0);
    } while (r > 10);
    double q, g;
    do {
      q = u(rng);
      g = q * q * std::pow(1 - q * q, 3.5);
    } while (0.1 * u(rng) > g);
    const double v = q * std::sqrt(2.0 * total_mass) * std::pow(1 + r * r, -0.25);
    const Vec3d p = direction(r), w = direction(v);
    pos.push_back({centre.x + p.x, centre.y + p.y, centre.z + p.z});
    vel.push_back({drift.x + w.x, drift.y + w.y, drift.z + w.z});
    mass.push_back(total_mass / n);
  }
}

}  // namespace

NBodyInstance::NBodyInstance(const NBodyConfig& config) : config_(config) {
  std::mt19937_64 rng(config.seed);
  // Spheres on a circle of radius 4 (scale radii), drifting towards its centre: a cluster merger.
  for (std::uint32_t s = 0; s < config.spheres; ++s) {
    const std::uint32_t n =
        config.particles / config.spheres + (s < config.particles % config.spheres ? 1 : 0);
    const double a = 2 * M_PI * s / config.spheres, ring = config.spheres > 1 ? 4.0 : 0.0;
    plummer(rng, n, 1.0 / config.spheres, {ring * std::cos(a), ring * std::sin(a), 0},
            {-0.1 * ring * std::cos(a), -0.1 * ring * std::sin(a), 0}, pos_, vel_, mass_);
  }
  // Zero total momentum, so the drift is measured against zero.
  Vec3d p;
  double m = 0;
  for (std::size_t i = 0; i < pos_.size(); ++i)
    p.x += mass_[i] * vel_[i].x, p.y += mass_[i] * vel_[i].y, p.z += mass_[i] * vel_[i].z,
        m += mass_[i];
  for (Vec3d& v : vel_) v.x -= p.x / m, v.y -= p.y / m, v.z -= p.z / m;
  for (std::size_t i = 0; i < pos_.size(); ++i) {
    momentum_scale_ +=
        mass_[i] * std::sqrt(vel_[i].x * vel_[i].x + vel_[i].y * vel_[i].y + vel_[i].z * vel_[i].z);
    initial_momentum_.x += mass_[i] * vel_[i].x, initial_momentum_.y += mass_[i] * vel_[i].y,
        initial_momentum_.z += mass_[i] * vel_[i].z;
  }
  order_.resize(pos_.size());
  accel_.resize(pos_.size());
  build_tree();  // the first step's tree: its bucket count sizes the trace
  stream_.item_bytes = sizeof(Body4);
  stream_.expected_requests = std::uint64_t{tree_.buckets().size()} * config.steps * 5 / 4 + 64;
  stream_.max_items_per_request = 0;
  stream_.produce = [this](RequestSink& sink) { produce(sink); };
}

// Reorders the particles into tree order and rebuilds the tree and the item table.
void NBodyInstance::build_tree() {
  std::iota(order_.begin(), order_.end(), 0u);
  tree_.build(pos_, mass_, config_.bucket, order_);
  std::vector<Vec3d> p(pos_.size()), v(pos_.size());
  std::vector<double> m(pos_.size());
  for (std::size_t i = 0; i < order_.size(); ++i)
    p[i] = pos_[order_[i]], v[i] = vel_[order_[i]], m[i] = mass_[order_[i]];
  pos_.swap(p), vel_.swap(v), mass_.swap(m);
  std::iota(order_.begin(), order_.end(), 0u);  // the nodes' ranges now index the reordered arrays
  const std::size_t n = pos_.size();
  items_.resize(n + tree_.nodes().size());
  for (std::size_t i = 0; i < n; ++i) {
    items_[i] = {static_cast<float>(pos_[i].x), static_cast<float>(pos_[i].y),
                 static_cast<float>(pos_[i].z), static_cast<float>(mass_[i])};
  }
  for (std::size_t k = 0; k < tree_.nodes().size(); ++k) items_[n + k] = tree_.nodes()[k].monopole;
}

void NBodyInstance::produce(RequestSink& sink) {
  const std::uint32_t walkers =
      config_.walkers ? config_.walkers : std::max(1u, std::thread::hardware_concurrency());
  std::uint32_t next_id = 0;
  for (std::uint32_t step = 0; step < config_.steps; ++step) {
    const std::uint64_t t0 = host_now_ns();
    if (step > 0) build_tree();
    const std::uint64_t t1 = host_now_ns();
    build_ns_ += t1 - t0;
    sink.publish_items(std::as_bytes(std::span<const Body4>(items_)));
    const std::uint64_t t2 = host_now_ns();
    std::fill(accel_.begin(), accel_.end(), Accel{0, 0, 0, 0});
    const std::vector<std::uint32_t>& buckets = tree_.buckets();
    expected_interactions_.assign(buckets.size(), 0);
    std::atomic<std::uint32_t> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto walk = [&] {
      std::vector<std::uint32_t> items, stack;
      try {
        for (;;) {
          const std::uint32_t b = next.fetch_add(1);
          if (b >= buckets.size()) break;
          const TreeNode& leaf = tree_.nodes()[buckets[b]];
          const std::uint32_t prefix =
              tree_.interaction_list(buckets[b], static_cast<float>(config_.theta),
                                     static_cast<std::uint32_t>(pos_.size()), items, stack);
          expected_interactions_[b] = static_cast<std::uint32_t>(items.size()) - prefix;
          Request r;
          r.task.id = next_id + b;
          r.task.parent = Task::kNoParent;
          r.task.payload[kBucketWordIndex] = prefix;
          r.task.payload[5] = b;
          r.items = items;
          r.ordered_items = prefix;
          r.output = std::as_writable_bytes(
              std::span<Accel>(accel_.data() + leaf.begin, leaf.end - leaf.begin));
          sink.emit(r);
        }
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        next.store(static_cast<std::uint32_t>(buckets.size()));
      }
    };
    std::vector<std::thread> threads;
    for (std::uint32_t w = 0; w < walkers; ++w) threads.emplace_back(walk);
    for (std::thread& t : threads) t.join();
    if (error) std::rethrow_exception(error);
    const std::uint64_t t3 = host_now_ns();
    walk_ns_ += t3 - t2;
    sink.wait_all();
    tail_ns_ += host_now_ns() - t3;
    next_id += static_cast<std::uint32_t>(buckets.size());
    requests_ += buckets.size();
    check_step();
    if (step + 1 == config_.steps) sampled_pos_ = pos_;  // checked after the run (collect), untimed
    integrate();
    ++steps_done_;
  }
}

void NBodyInstance::collect(std::vector<std::vector<NoRecord>>, const ExecPlan&,
                            const ExecOutput&) {
  if (steps_done_ != config_.steps) return;
  sample_forces();
  drift_ = momentum_drift();
}

// Every particle of bucket b summed exactly its bucket's list (a request run twice, run in part,
// or not run shows here).
void NBodyInstance::check_step() {
  const std::vector<std::uint32_t>& buckets = tree_.buckets();
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const TreeNode& leaf = tree_.nodes()[buckets[b]];
    interactions_ += std::uint64_t{expected_interactions_[b]} * (leaf.end - leaf.begin);
    for (std::uint32_t i = leaf.begin; i < leaf.end; ++i) {
      if (accel_[i].interactions != static_cast<float>(expected_interactions_[b])) {
        if (wrong_counts_++ == 0) {
          first_wrong_ = "step " + std::to_string(steps_done_) + ", bucket " + std::to_string(b) +
                         ": particle " + std::to_string(i) + " summed " +
                         std::to_string(accel_[i].interactions) + " interactions, its list has " +
                         std::to_string(expected_interactions_[b]);
        }
      }
    }
  }
}

// The last step's forces against a direct sum in double precision over every particle.
void NBodyInstance::sample_forces() {
  const std::vector<Vec3d>& pos_ = sampled_pos_;
  const std::size_t n = pos_.size();
  const std::size_t count = std::min<std::size_t>(config_.sample, n);
  const double eps2 = config_.softening * config_.softening;
  double sum2 = 0, worst = 0;
  for (std::size_t s = 0; s < count; ++s) {
    const std::size_t i = s * n / count;
    double ax = 0, ay = 0, az = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double dx = pos_[j].x - pos_[i].x, dy = pos_[j].y - pos_[i].y,
                   dz = pos_[j].z - pos_[i].z;
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      const double f = mass_[j] / (r2 * std::sqrt(r2));
      ax += f * dx, ay += f * dy, az += f * dz;
    }
    const double ex = accel_[i].x - ax, ey = accel_[i].y - ay, ez = accel_[i].z - az;
    const double rel =
        std::sqrt((ex * ex + ey * ey + ez * ez) / std::max(ax * ax + ay * ay + az * az, 1e-300));
    sum2 += rel * rel;
    worst = std::max(worst, rel);
  }
  rms_error_ = std::sqrt(sum2 / static_cast<double>(count));
  max_error_ = worst;
}

// Kick and drift with this step's accelerations (symplectic Euler).
void NBodyInstance::integrate() {
  const double dt = config_.dt;
  for (std::size_t i = 0; i < pos_.size(); ++i) {
    vel_[i].x += accel_[i].x * dt, vel_[i].y += accel_[i].y * dt, vel_[i].z += accel_[i].z * dt;
    pos_[i].x += vel_[i].x * dt, pos_[i].y += vel_[i].y * dt, pos_[i].z += vel_[i].z * dt;
  }
}

// |P - P0| / sum m|v|: zero for exact pairwise forces; Barnes-Hut's are not symmetric.
double NBodyInstance::momentum_drift() const {
  Vec3d p;
  for (std::size_t i = 0; i < pos_.size(); ++i)
    p.x += mass_[i] * vel_[i].x, p.y += mass_[i] * vel_[i].y, p.z += mass_[i] * vel_[i].z;
  const double dx = p.x - initial_momentum_.x, dy = p.y - initial_momentum_.y,
               dz = p.z - initial_momentum_.z;
  return std::sqrt(dx * dx + dy * dy + dz * dz) / momentum_scale_;
}

Verification NBodyInstance::verify() const {
  // Bounds, from the monopole approximation's error at the opening angle (theta 0.7 on these
  // Plummer spheres: rms ~0.3%, worst ~2% measured): rms relative force error under 2% x
  // (theta / 0.7)^2, the worst sampled particle under 10% x (theta / 0.7)^2; the momentum drift
  // under 1e-3 of sum m|v| per step.
  const double scale = (config_.theta / 0.7) * (config_.theta / 0.7);
  const double rms_bound = 0.02 * scale, max_bound = 0.10 * scale,
               drift_bound = 1e-3 * config_.steps;
  Verification v;
  nlohmann::json j;
  j["steps"] = steps_done_;
  j["requests"] = requests_;
  j["interactions"] = interactions_;
  j["force_error_rms"] = rms_error_;
  j["force_error_max"] = max_error_;
  j["momentum_drift"] = drift_;
  j["wrong_counts"] = wrong_counts_;
  // Where the producer's time went (host clock, summed over steps; step 0's tree is built before
  // the run): tree builds, the walks (the walkers' wall time, requests emitted meanwhile), and the
  // tail, from the last emit until every request of the step had run.
  j["tree_build_ns"] = build_ns_;
  j["walk_ns"] = walk_ns_;
  j["tail_ns"] = tail_ns_;
  v.result_json = j.dump();
  if (steps_done_ != config_.steps) {
    v.message = "the run ended after " + std::to_string(steps_done_) + " of " +
                std::to_string(config_.steps) + " steps";
    return v;
  }
  if (wrong_counts_ != 0) {
    v.message = std::to_string(wrong_counts_) +
                " particles summed the wrong number of interactions; first: " + first_wrong_;
    return v;
  }
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%llu requests over %u steps each ran once over its whole list; forces of %u "
                "particles vs a direct sum: rms error "
                "%.2e (bound %.1e), worst %.2e (bound %.1e); momentum drift %.1e (bound %.0e)",
                static_cast<unsigned long long>(requests_), steps_done_,
                std::min<std::uint32_t>(config_.sample, config_.particles), rms_error_, rms_bound,
                max_error_, max_bound, drift_, drift_bound);
  v.message = buf;
  v.ok = rms_error_ <= rms_bound && max_error_ <= max_bound && drift_ <= drift_bound;
  return v;
}

std::unique_ptr<ScenarioOf<NBodyInstance>> make_scenario() {
  return std::make_unique<NBodyScenario>();
}

}  // namespace gpulb::scenarios::nbody
