#include "md2d/md2d.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "gpulb/clock.hpp"

namespace gpulb::scenarios::md2d {

namespace {

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> s = {
      {"particles", "particles in all", "10000", "64..4194304", 64, 1 << 22, {}},
      {"density",
       "mean particles per sigma^2 (sets the box: side sqrt(particles / density)); clusters peak "
       "near 0.4",
       "0.1",
       "0.01..0.5",
       0,
       0,
       {}},
      {"patches",
       "patches per side of the box (each side at least the cutoff); 0 = about 32 particles a "
       "patch",
       "0",
       "0 or 3..2048",
       0,
       2048,
       {}},
      {"steps",
       "time steps (a force evaluation by requests, an integration and a migration each)",
       "10",
       "1..100000",
       1,
       100000,
       {}},
      {"dt", "time step (reduced units)", "0.005", "0.0001..0.01", 0, 0, {}},
      {"cutoff",
       "cutoff radius of the shifted-force Lennard-Jones pair (sigma)",
       "2.5",
       "1.5..5",
       0,
       0,
       {}},
      {"temperature", "initial temperature (Maxwell velocities)", "1", "0..5", 0, 0, {}},
      {"contrast",
       "fraction of the particles placed in the Gaussian clusters (0: uniform)",
       "0.6",
       "0..0.95",
       0,
       0,
       {}},
      {"clusters",
       "Gaussian clusters (denser patches: costlier compute objects)",
       "2",
       "1..16",
       1,
       16,
       {}},
      {"producers",
       "host threads delivering patches and emitting requests; 0 = the host's hardware threads",
       "0",
       "0..1024",
       0,
       1024,
       {}},
      {"piece_targets",
       "most targets one request computes: a compute object with more is cut into pieces, each a "
       "range of one patch's "
       "particles against every particle of the other patch (NAMD splits its computes so); 0 = a "
       "request a compute object, "
       "as in G-Charm",
       "4096",
       "0 or 32..1048576",
       0,
       1 << 20,
       {}},
      {"seed", "random seed of the initial state", "1", "0..4294967295", 0, 4294967295LL, {}},
      {"tolerance",
       "largest |x - x_ref| (sigma) allowed against the double-precision reference after the run; "
       "float and double "
       "trajectories part exponentially (at the defaults ~3e-7 after 10 steps, ~3e-6 after 100, ~1 "
       "after 1000): raise it "
       "for long runs",
       "0.0001",
       "0.000000001..10",
       0,
       0,
       {}},
  };
  return s;
}

class Md2dScenario : public ScenarioOf<Md2dInstance> {
 public:
  std::string name() const override { return "md2d"; }
  std::string description() const override {
    return "G-Charm's 2D molecular dynamics: a periodic box in patches, a compute object (work "
           "request) per patch and per pair "
           "of neighbouring patches, shifted-force Lennard-Jones within a cutoff, particles in "
           "Gaussian clusters so that compute "
           "objects differ widely in cost; particles migrate between patches each step. Runs under "
           "combining or hybrid.";
  }
  const std::vector<ParamSpec>& params() const override { return specs(); }
  bool makes_requests() const override { return true; }
  // Per particle: the initial state kept for the reference and the state (positions and
  // velocities, 32 bytes each), the binning (8), the summed forces (16), the item table (16) and
  // the runtime's copy of it (16); a step's requests name each particle 9 times (its patch and the
  // 8 around), as items (4 bytes) and outputs (16); the reference run after the run copies the
  // state and keeps a binning, forces and its final positions (72). Measured (CPU backend, 2
  // workers, --no-trace, 2 steps): 367 bytes a particle between 100 K and 400 K.
  DataSize data_size(const ParamMap& params) const override {
    const auto particles =
        static_cast<std::uint64_t>(int_param(params, find_spec(specs(), "particles")));
    constexpr std::uint64_t kBytesPerParticle =
        2 * 32 + 8 + 16 + 2 * sizeof(Particle2) + 9 * (4 + sizeof(Force2)) + 72;
    return {0, particles * kBytesPerParticle, "particles"};
  }
  // One thread a target, so a block as wide as a patch's mean count of particles, in warps, from
  // 64 to 256 threads. At the defaults a patch holds about 32 (self 32 targets, pair 64): 128
  // threads would leave most of the block idle, and 64 doubles the resident blocks (maxSize) on
  // an H100. Full patches (patches=7 at 100,000 particles: ~2,000 a patch) make the GPU
  // latency-bound: a step lasts as long as its largest compute object's block, and on an H100
  // blocks of 256 ran such a step 2.1x faster than blocks of 64 (docs/benchmarks.md, G-Charm).
  // Missing parameters take their defaults (`gpulb list` passes none).
  std::uint32_t default_block_size(const ParamMap& params) const override {
    const auto particles = static_cast<double>(int_param(params, find_spec(specs(), "particles")));
    const auto density = real_param(params, find_spec(specs(), "density"), 0.01, 0.5);
    const auto cutoff = real_param(params, find_spec(specs(), "cutoff"), 1.5, 5);
    const double length = std::sqrt(particles / density);
    const auto given = static_cast<std::uint32_t>(int_param(params, find_spec(specs(), "patches")));
    const std::uint32_t side =
        given != 0 ? given
                   : Box::auto_patches(length, static_cast<std::uint32_t>(particles), cutoff);
    const double per_patch = particles / (static_cast<double>(side) * side);
    const auto warps = static_cast<std::uint32_t>(std::ceil(per_patch / 32));
    return 32 * std::clamp(warps, 2u, 8u);
  }
  std::unique_ptr<Md2dInstance> instantiate(const ParamMap& params) const override {
    auto integer = [&](const char* n) { return int_param(params, find_spec(specs(), n)); };
    auto real = [&](const char* n, double lo, double hi) {
      return real_param(params, find_spec(specs(), n), lo, hi);
    };
    Md2dConfig c;
    c.particles = static_cast<std::uint32_t>(integer("particles"));
    c.patches = static_cast<std::uint32_t>(integer("patches"));
    c.steps = static_cast<std::uint32_t>(integer("steps"));
    c.clusters = static_cast<std::uint32_t>(integer("clusters"));
    c.producers = static_cast<std::uint32_t>(integer("producers"));
    c.seed = static_cast<std::uint64_t>(integer("seed"));
    c.density = real("density", 0.01, 0.5);
    c.dt = real("dt", 1e-4, 0.01);
    c.cutoff = real("cutoff", 1.5, 5);
    c.temperature = real("temperature", 0, 5);
    c.contrast = real("contrast", 0, 0.95);
    c.tolerance = real("tolerance", 1e-9, 10);
    c.piece_targets = static_cast<std::uint32_t>(integer("piece_targets"));
    if (c.piece_targets != 0 && c.piece_targets < 32) {
      throw ConfigError("parameter 'piece_targets' is " + std::to_string(c.piece_targets) +
                        ": 0 (whole compute objects) or at least 32 (a warp of targets)");
    }
    const double length = std::sqrt(c.particles / c.density);
    if (length < 3 * c.cutoff) {
      throw ConfigError("parameter 'cutoff' is " + std::to_string(c.cutoff) + ": the box of " +
                        std::to_string(length) +
                        " sigma cannot hold 3 patches a side no narrower than the cutoff; raise "
                        "'particles' or lower 'density'");
    }
    if (c.patches == 1 || c.patches == 2) {
      throw ConfigError("parameter 'patches' is " + std::to_string(c.patches) +
                        ": at least 3 a side (with fewer, a periodic neighbour would be met "
                        "twice), or 0 for automatic");
    }
    if (c.patches != 0 && length / c.patches < c.cutoff) {
      throw ConfigError("parameter 'patches' is " + std::to_string(c.patches) +
                        ": patches of side " + std::to_string(length / c.patches) +
                        " sigma are narrower than the cutoff " + std::to_string(c.cutoff) +
                        "; at most " +
                        std::to_string(static_cast<std::uint32_t>(length / c.cutoff)) + " a side");
    }
    const std::uint32_t patches =
        c.patches != 0 ? c.patches : Box::auto_patches(length, c.particles, c.cutoff);
    if (std::uint64_t{c.steps} * kObjectsPerPatch * patches * patches >= 0xFFFFFFFFull) {
      throw ConfigError("parameter 'steps' is " + std::to_string(c.steps) + ": with " +
                        std::to_string(patches) +
                        " patches a side the run's requests would overflow the 32-bit task ids");
    }
    return std::make_unique<Md2dInstance>(c);
  }
};

}  // namespace

Md2dInstance::Md2dInstance(const Md2dConfig& config) : config_(config), lj_(config.cutoff) {
  const double length = std::sqrt(config.particles / config.density);
  box_ =
      Box(length, config.patches != 0 ? config.patches
                                      : Box::auto_patches(length, config.particles, config.cutoff));
  config_.patches = box_.patches;
  initial_ = initial_state(config_, box_);
  state_ = initial_;
  bins_.bin(box_, state_.pos);
  patch_min_ = config.particles, patch_max_ = 0;
  for (std::uint32_t p = 0; p < box_.count(); ++p)
    patch_min_ = std::min(patch_min_, bins_.count(p)),
    patch_max_ = std::max(patch_max_, bins_.count(p));
  force_.resize(state_.pos.size());
  stream_.item_bytes = sizeof(Particle2);
  // Empty objects are not emitted. Pieces: an object of n targets makes at most n / piece_targets
  // + 2 requests, and a step's objects have 9 x particles targets (each particle is a target of
  // its self object and of 8 pairs).
  std::uint64_t per_step = std::uint64_t{box_.count()} * kObjectsPerPatch;
  if (config.piece_targets != 0)
    per_step += 2 * per_step + 9ull * config.particles / config.piece_targets;
  stream_.expected_requests = per_step * config.steps;
  stream_.max_items_per_request = 0;  // patches grow and shrink as particles migrate
  stream_.produce = [this](RequestSink& sink) { produce(sink); };
}

Md2dBody Md2dInstance::body(NoRecord*) const {
  return {static_cast<float>(box_.side), static_cast<float>(lj_.rc2), static_cast<float>(lj_.rc),
          static_cast<float>(lj_.force_rc), static_cast<float>(lj_.energy_rc)};
}

// The item table in patch order: a patch's particles are neighbours in it (a pair's items are two
// runs of the table, which keeps the reuse cache's slots of a patch together).
void Md2dInstance::build_items() {
  items_.resize(state_.pos.size());
  for (std::uint32_t p = 0; p < box_.count(); ++p) {
    const Vec2 c = box_.corner(p);
    for (std::uint32_t k = bins_.start[p]; k < bins_.start[p + 1]; ++k) {
      const Vec2 x = state_.pos[bins_.order[k]];
      items_[k] = {static_cast<float>(x.x - c.x), static_cast<float>(x.y - c.y), k - bins_.start[p],
                   p};
    }
  }
}

void Md2dInstance::produce(RequestSink& sink) {
  for (std::uint32_t step = 0; step < config_.steps; ++step) {
    const std::uint64_t t0 = host_now_ns();
    if (step > 0) migrated_ += bins_.bin(box_, state_.pos);
    build_items();
    const std::uint64_t t1 = host_now_ns();
    bin_ns_ += t1 - t0;
    sink.publish_items(std::as_bytes(std::span<const Particle2>(items_)));
    emit_step(sink, step);
    const std::uint64_t t2 = host_now_ns();
    emit_ns_ += t2 - t1;
    sink.wait_all();
    const std::uint64_t t3 = host_now_ns();
    tail_ns_ += t3 - t2;
    const double potential = gather_step();
    const double kinetic = leapfrog_step(state_, force_, config_.dt, step == 0, box_.length);
    energy_.push_back(kinetic + potential);
    integrate_ns_ += host_now_ns() - t3;
    ++steps_done_;
  }
}

// The patches are delivered in a shuffled order by `producers` threads; each compute object is
// emitted by the thread that delivers its last patch (self: its one patch; pair: the second).
void Md2dInstance::emit_step(RequestSink& sink, std::uint32_t step) {
  const std::uint32_t patches = box_.count();
  const std::uint32_t objects = patches * kObjectsPerPatch;
  // Outputs: self, one Force2 per particle of the patch; pair, one per particle of either.
  output_offset_.assign(objects + 1, 0);
  for (std::uint32_t a = 0; a < patches; ++a) {
    for (std::uint32_t k = 0; k < kObjectsPerPatch; ++k) {
      const ComputeObject o = compute_object(box_, a, k);
      const std::uint32_t na = bins_.count(a), nb = o.self ? 0 : bins_.count(o.b);
      const bool empty = na == 0 || (!o.self && nb == 0);  // no interaction: not emitted
      output_offset_[a * kObjectsPerPatch + k + 1] = empty ? 0 : na + nb;
    }
  }
  std::partial_sum(output_offset_.begin(), output_offset_.end(), output_offset_.begin());
  outputs_.assign(output_offset_.back(), Force2{});

  std::vector<std::atomic<std::uint8_t>> waiting(objects);
  for (std::uint32_t o = 0; o < objects; ++o)
    waiting[o].store(o % kObjectsPerPatch == 0 ? 1 : 2, std::memory_order_relaxed);
  std::vector<std::uint32_t> delivery(patches);
  std::iota(delivery.begin(), delivery.end(), 0u);
  std::mt19937_64 rng(config_.seed * 0x9E3779B97F4A7C15ull + step);
  std::shuffle(delivery.begin(), delivery.end(), rng);

  std::atomic<std::uint32_t> next{0};
  std::atomic<std::uint64_t> emitted{0};
  std::atomic<std::uint32_t> max_items{max_items_};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto produce = [&] {
    std::vector<std::uint32_t> items;
    std::uint64_t mine = 0;
    std::uint32_t biggest = 0;
    auto emit = [&](Request& r) {
      r.task.id = next_id_.fetch_add(1, std::memory_order_relaxed);
      r.task.parent = Task::kNoParent;
      r.items = items;
      sink.emit(r);
      ++mine;
      biggest = std::max(biggest, static_cast<std::uint32_t>(items.size()));
    };
    // Targets [from, to) of patch `t` against every particle of patch `p` (p lies (sx, sy) from t),
    // their outputs at `out`.
    auto emit_piece = [&](std::uint32_t t, std::uint32_t from, std::uint32_t to, std::uint32_t p,
                          int sx, int sy, Force2* out) {
      items.clear();
      for (std::uint32_t x = bins_.start[t] + from; x < bins_.start[t] + to; ++x)
        items.push_back(x);
      for (std::uint32_t x = bins_.start[p]; x < bins_.start[p + 1]; ++x) items.push_back(x);
      Request r;
      r.task.kind = t == p ? kSelfPiece : kPairPiece;
      r.task.payload[kCountAWord] = to - from;
      r.task.payload[kShiftWord] = encode_shift(sx, sy);
      r.ordered_items = to - from;
      r.output = std::as_writable_bytes(std::span<Force2>(out, to - from));
      r.work = std::uint64_t{to - from} * bins_.count(p) + items.size();
      emit(r);
    };
    // A side of an object in pieces of at most piece_targets, evenly sized.
    auto emit_side = [&](std::uint32_t t, std::uint32_t p, int sx, int sy, Force2* out) {
      const std::uint32_t n = bins_.count(t),
                          pieces = (n + config_.piece_targets - 1) / config_.piece_targets;
      for (std::uint32_t k = 0; k < pieces; ++k) {
        const std::uint32_t from = static_cast<std::uint32_t>(std::uint64_t{n} * k / pieces);
        const std::uint32_t to = static_cast<std::uint32_t>(std::uint64_t{n} * (k + 1) / pieces);
        emit_piece(t, from, to, p, sx, sy, out + from);
      }
    };
    auto fire = [&](std::uint32_t a, std::uint32_t k) {
      const std::uint32_t o = a * kObjectsPerPatch + k;
      const std::uint64_t outputs = output_offset_[o + 1] - output_offset_[o];
      if (outputs == 0) return;
      const ComputeObject c = compute_object(box_, a, k);
      if (config_.piece_targets != 0 && outputs > config_.piece_targets) {
        // The object's output layout stays A's then B's, so gather_step reads pieces and whole
        // objects alike.
        Force2* out = outputs_.data() + output_offset_[o];
        emit_side(a, c.b, c.sx, c.sy, out);
        if (!c.self) emit_side(c.b, a, -c.sx, -c.sy, out + bins_.count(a));
        return;
      }
      items.clear();
      for (std::uint32_t x = bins_.start[a]; x < bins_.start[a + 1]; ++x) items.push_back(x);
      if (!c.self) {
        for (std::uint32_t x = bins_.start[c.b]; x < bins_.start[c.b + 1]; ++x) items.push_back(x);
      }
      Request r;
      r.task.kind = c.self ? kSelf : kPair;
      r.task.payload[kCountAWord] = bins_.count(a);
      r.task.payload[kShiftWord] = encode_shift(c.sx, c.sy);
      // A pair's A part keeps its order (its outputs go by position); the rest may be sorted.
      r.ordered_items = c.self ? 0 : bins_.count(a);
      r.output =
          std::as_writable_bytes(std::span<Force2>(outputs_.data() + output_offset_[o], outputs));
      // Its cost: the distance tests (both directions), plus a load and a store per item.
      const std::uint64_t na = bins_.count(a), nb = c.self ? 0 : bins_.count(c.b);
      r.work = (c.self ? na * (na - 1) : 2 * na * nb) + na + nb;
      emit(r);
    };
    // acq_rel: the thread that takes an object's count to zero emits it (either may be last).
    auto deliver = [&](std::uint32_t a, std::uint32_t k) {
      if (waiting[a * kObjectsPerPatch + k].fetch_sub(1, std::memory_order_acq_rel) == 1)
        fire(a, k);
    };
    try {
      for (;;) {
        const std::uint32_t i = next.fetch_add(1, std::memory_order_relaxed);
        if (i >= patches) break;
        const std::uint32_t p = delivery[i];
        deliver(p, 0);
        for (std::uint32_t k = 1; k < kObjectsPerPatch; ++k) {
          deliver(p, k);                                                                // p as A
          deliver(box_.neighbour(p, -kHalfShell[k - 1][0], -kHalfShell[k - 1][1]), k);  // p as B
        }
      }
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(patches);
    }
    emitted.fetch_add(mine, std::memory_order_relaxed);
    std::uint32_t seen = max_items.load(std::memory_order_relaxed);
    while (biggest > seen &&
           !max_items.compare_exchange_weak(seen, biggest, std::memory_order_relaxed)) {}
  };
  const std::uint32_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::uint32_t producers =
      std::min(config_.producers != 0 ? config_.producers : hardware, patches);
  std::vector<std::thread> threads;
  for (std::uint32_t w = 0; w < producers; ++w) threads.emplace_back(produce);
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  requests_ += emitted.load();
  max_items_ = max_items.load();
}

// Sums each compute object's outputs into its particles' forces and checks that every particle
// tested each particle of its 3 x 3 patches once. Threads take whole patches: a particle's 9
// contributions (self, 4 objects as A, 4 as B) are added in the order of their object index, as a
// serial pass over the objects adds them, so the forces are the same bits whatever the threads.
// (The potential energy is summed per patch, then over patches: a different association than
// one pass over the objects, at the last bits of a double.)
double Md2dInstance::gather_step() {
  const std::uint32_t patches = box_.count();
  struct Part {
    double potential = 0;
    std::uint64_t tests = 0, wrong = 0;
    std::uint32_t first_wrong = 0xFFFFFFFFu, first_tested = 0, first_expected = 0;
  };
  auto gather = [&](std::uint32_t from, std::uint32_t to, Part& part) {
    std::vector<std::uint32_t> tested;
    std::pair<std::uint32_t, bool> objects[1 + 2 * (kObjectsPerPatch - 1)];  // (object, p is its B)
    for (std::uint32_t p = from; p < to; ++p) {
      const std::uint32_t n = bins_.count(p), first = bins_.start[p];
      if (n == 0) continue;
      std::size_t m = 0;
      objects[m++] = {p * kObjectsPerPatch, false};
      for (std::uint32_t k = 1; k < kObjectsPerPatch; ++k) {
        objects[m++] = {p * kObjectsPerPatch + k, false};
        objects[m++] = {
            box_.neighbour(p, -kHalfShell[k - 1][0], -kHalfShell[k - 1][1]) * kObjectsPerPatch + k,
            true};
      }
      std::sort(objects, objects + m);
      tested.assign(n, 0);
      for (std::size_t j = 0; j < m; ++j) {
        const auto [o, as_b] = objects[j];
        if (output_offset_[o + 1] == output_offset_[o]) continue;  // not emitted (an empty side)
        const Force2* out =
            outputs_.data() + output_offset_[o] + (as_b ? bins_.count(o / kObjectsPerPatch) : 0);
        for (std::uint32_t x = 0; x < n; ++x) {
          const Force2& f = out[x];
          Vec2& force = force_[bins_.order[first + x]];
          force.x += f.fx, force.y += f.fy;
          part.potential += f.energy;
          tested[x] += f.tested;
        }
      }
      // A particle of patch p tests every particle of p's 3 x 3 patches but itself.
      std::uint32_t expected = 0;
      for (int sy = -1; sy <= 1; ++sy) {
        for (int sx = -1; sx <= 1; ++sx) expected += bins_.count(box_.neighbour(p, sx, sy));
      }
      --expected;
      for (std::uint32_t x = 0; x < n; ++x) {
        part.tests += tested[x];
        if (tested[x] == expected) continue;
        ++part.wrong;
        const std::uint32_t id = bins_.order[first + x];
        if (id < part.first_wrong)
          part.first_wrong = id, part.first_tested = tested[x], part.first_expected = expected;
      }
    }
  };
  std::fill(force_.begin(), force_.end(), Vec2{});
  const std::uint32_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::uint32_t threads =
      std::max(1u, std::min({config_.producers != 0 ? config_.producers : hardware, patches, 64u}));
  std::vector<Part> parts(threads);
  std::vector<std::thread> pool;
  for (std::uint32_t t = 1; t < threads; ++t) {
    pool.emplace_back(
        [&, t] { gather(patches * t / threads, patches * (t + 1) / threads, parts[t]); });
  }
  gather(0, patches / threads, parts[0]);
  for (std::thread& t : pool) t.join();
  double potential = 0;
  Part worst;
  for (const Part& part : parts) {
    potential += part.potential;
    tests_ += part.tests;
    worst.wrong += part.wrong;
    if (part.first_wrong < worst.first_wrong)
      worst = {0, 0, worst.wrong, part.first_wrong, part.first_tested, part.first_expected};
  }
  if (worst.wrong != 0 && wrong_counts_ == 0) {
    const std::uint32_t i = worst.first_wrong, p = bins_.patch[i];
    first_wrong_ = "step " + std::to_string(steps_done_) + ", particle " + std::to_string(i) +
                   " of patch " + std::to_string(p) + " tested " +
                   std::to_string(worst.first_tested) + " partners, its 3 x 3 patches hold " +
                   std::to_string(worst.first_expected);
  }
  wrong_counts_ += worst.wrong;
  return potential;
}

void Md2dInstance::collect(std::vector<std::vector<NoRecord>>, const ExecPlan&, const ExecOutput&) {
  if (steps_done_ != config_.steps) return;
  const ReferenceRun ref = run_reference(config_, box_, initial_);
  max_error_ = 0;
  for (std::size_t i = 0; i < ref.pos.size(); ++i)
    max_error_ = std::max(max_error_, periodic_distance(state_.pos[i], ref.pos[i], box_.length));
  auto drift = [&](const std::vector<double>& e) {
    double worst = 0;
    for (double v : e) worst = std::max(worst, std::abs(v - e.front()));
    return worst / config_.particles;
  };
  energy_drift_ = drift(energy_);
  ref_energy_drift_ = drift(ref.energy);
  ref_interactions_ = ref.interactions;
  ref_migrated_ = ref.migrated;
}

Verification Md2dInstance::verify() const {
  // The energy bound: the leapfrog's energy error is O(dt^2) and oscillates rather than grows; the
  // float forces add their rounding to it. Twice the reference's drift plus 1e-4 a particle (the
  // two agree to ~1e-6 at the defaults, ~3e-5 a particle) still catches a wrong force.
  const double energy_bound = 2 * ref_energy_drift_ + 1e-4;
  Verification v;
  nlohmann::json j;
  j["steps"] = steps_done_;
  j["requests"] = requests_;
  // pairs within the cutoff over the steps (the reference's count)
  j["interactions"] = ref_interactions_;
  j["tests"] = tests_;  // (target, partner) distance tests the requests made
  j["migrated"] = migrated_;
  j["reference_migrated"] = ref_migrated_;
  j["max_position_error"] = max_error_;
  j["tolerance"] = config_.tolerance;
  j["energy_drift"] = energy_drift_;
  j["reference_energy_drift"] = ref_energy_drift_;
  j["wrong_counts"] = wrong_counts_;
  j["patches"] = box_.patches;
  j["box"] = box_.length;
  j["patch_particles_min"] = patch_min_;
  j["patch_particles_max"] = patch_max_;
  j["max_request_items"] = max_items_;
  // The producer's time by phase (host clock, summed over steps): binning and the item table,
  // the emits (publish and the producers' wall time), the tail until every request had run, and
  // the host's sum of the outputs and integration.
  j["bin_ns"] = bin_ns_;
  j["emit_ns"] = emit_ns_;
  j["tail_ns"] = tail_ns_;
  j["integrate_ns"] = integrate_ns_;
  v.result_json = j.dump();
  if (steps_done_ != config_.steps) {
    v.message = "the run ended after " + std::to_string(steps_done_) + " of " +
                std::to_string(config_.steps) + " steps";
    return v;
  }
  if (wrong_counts_ != 0) {
    v.message = std::to_string(wrong_counts_) +
                " particle-steps tested the wrong number of partners; first: " + first_wrong_;
    return v;
  }
  char buf[480];
  std::snprintf(buf, sizeof buf,
                "%llu requests over %u steps each ran once over its patches (%u-%u particles a "
                "patch at the start, %llu migrations); "
                "positions vs a double-precision run: max error %.2e sigma (bound %.0e); energy "
                "drift %.1e a particle (reference "
                "%.1e, bound %.1e)",
                static_cast<unsigned long long>(requests_), steps_done_, patch_min_, patch_max_,
                static_cast<unsigned long long>(migrated_), max_error_, config_.tolerance,
                energy_drift_, ref_energy_drift_, energy_bound);
  v.message = buf;
  v.ok = max_error_ <= config_.tolerance && energy_drift_ <= energy_bound;
  return v;
}

std::unique_ptr<ScenarioOf<Md2dInstance>> make_scenario() {
  return std::make_unique<Md2dScenario>();
}

}  // namespace gpulb::scenarios::md2d
