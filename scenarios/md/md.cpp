#include "md/md.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <mutex>

#include <nlohmann/json.hpp>

namespace gpulb::scenarios::md {
namespace {

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> s = {
      {"atoms",
       "atoms in the system (the paper: 32K to 1M and more; under pairs=all Theta(N^2) work, keep "
       "it small on the CPU)",
       "16384",
       "128..4194304",
       128,
       1 << 22,
       {}},
      {"pairs",
       "pair search: cells, the 27 cells around each atom (a task costs its atoms' local density); "
       "all, every "
       "atom tests all N (the paper's Theta(N^2): every task costs the same)",
       "cells",
       "cells|all",
       0,
       0,
       {"cells", "all"}},
      {"solution",
       "Chen et al. section 6.2: 1 sorted + hardware; 2 permuted + hardware; 3 sorted + chunked; "
       "tq sorted + task-queue (the policy must match)",
       "tq",
       "1|2|3|tq",
       0,
       0,
       {"1", "2", "3", "tq"}},
      {"cutoff", "cutoff radius rc in sigma (a real number)", "2.5", "1.5..10", 0, 0, {}},
      {"seed",
       "seed of the positions, charges, permutation and velocities",
       "1",
       "0..2147483647",
       0,
       2147483647,
       {}},
      {"sample",
       "atoms whose forces are checked against the double-precision host reference",
       "256",
       "1..65536",
       1,
       65536,
       {}},
      {"steps",
       "velocity-Verlet steps of the host energy-drift check (0: no check)",
       "10",
       "0..1000",
       0,
       1000,
       {}},
  };
  return s;
}

Solution solution_from(const std::string& s) {
  if (s == "1") return Solution::Sorted1;
  if (s == "2") return Solution::Permuted2;
  if (s == "3") return Solution::Chunked3;
  return Solution::TaskQueue;
}

// FNV-1a over the bits of every force, by atom id: equal hashes, equal forces.
std::uint64_t forces_hash(const std::vector<MdRecord>& records, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) {
    const float f[3] = {records[i].fx, records[i].fy, records[i].fz};
    unsigned char bytes[sizeof f];
    std::memcpy(bytes, f, sizeof f);
    for (unsigned char b : bytes) h = (h ^ b) * 0x100000001b3ULL;
  }
  return h;
}

// The last system made, for the next instance of the same spec: a bench makes one system for
// every solution and GPU count, and placing 2M atoms by rejected darts takes seconds of host time
// a run (the placement is deterministic, so a copy is the same system).
std::vector<Atom> system_of(const SystemSpec& spec) {
  static std::mutex mutex;
  static SystemSpec last;
  static std::vector<Atom> atoms;
  const std::lock_guard lock(mutex);
  const bool same = spec.atoms == last.atoms && spec.cutoff == last.cutoff &&
                    spec.peak_density == last.peak_density &&
                    spec.min_distance == last.min_distance && spec.charge == last.charge &&
                    spec.seed == last.seed;
  if (!same || atoms.empty()) {
    atoms = make_system(spec);
    last = spec;
  }
  return atoms;
}

// A per-atom count summed over each task (the 128 atoms of A it owns): total, largest and smallest
// task. Over pair_tests it is each task's work: what the pair search makes a task cost.
struct TaskCosts {
  std::uint64_t total = 0, max = 0, min = 0;
  std::uint32_t tasks = 0;
  double max_over_mean() const { return total ? double(max) * tasks / double(total) : 0.0; }
  double min_over_mean() const { return total ? double(min) * tasks / double(total) : 0.0; }
};

TaskCosts task_costs(const std::vector<MdRecord>& records, const std::vector<std::uint32_t>& order,
                     std::uint32_t MdRecord::*count) {
  TaskCosts c;
  const std::uint32_t n = static_cast<std::uint32_t>(order.size());
  c.tasks = (n + kTaskAtoms - 1) / kTaskAtoms;
  c.min = ~std::uint64_t{0};
  for (std::uint32_t k = 0; k < c.tasks; ++k) {
    std::uint64_t t = 0;
    for (std::uint32_t a = k * kTaskAtoms; a < std::min(n, (k + 1) * kTaskAtoms); ++a)
      t += records[order[a]].*count;
    c.total += t;
    c.max = std::max(c.max, t);
    // A partial last task is smaller by its size, not by its atoms' density.
    if ((k + 1) * kTaskAtoms <= n || c.tasks == 1) c.min = std::min(c.min, t);
  }
  if (c.tasks == 0) c.min = 0;
  return c;
}

// Bytes an instance holds per atom at its peak, the Verlet check of verify() where there is one.
// Cells of the cutoff's side hold about 7 atoms at rc = 2.5 (md_cells.hpp), so (2.5 / rc)^3 x 7
// cells an atom. Measured (CPU backend, 2 workers, --no-trace, the slope between 64 K and 256 K
// atoms): 394 bytes an atom at rc = 2.5 (this says 416), 734 at rc = 1.5 (this says 729).
double bytes_per_atom(PairSearch pairs, double cutoff, std::uint32_t steps) {
  const double cells = 7.0 * std::pow(2.5 / cutoff, 3.0);
  // system_of's copy and the instance's; A
  const double system = 2 * sizeof(Atom) + sizeof(std::uint32_t);
  // The cell list (the atoms in cell order, slot_of, a start per cell of at most kMaxCellsPerAtom).
  const double list = pairs == PairSearch::Cells
                          ? sizeof(Atom) + 4 + 4 * std::min(cells, double{kMaxCellsPerAtom})
                          : 0.0;
  const double input = sizeof(Atom) + 4 + list;  // input(): the atoms, A and the cell list again
  // an atom's, and a task's per 128 atoms
  const double records = sizeof(MdRecord) * (1.0 + 1.0 / kTaskAtoms);
  // verlet_energies: positions, velocities, forces and the run's forces (doubles), charges, and
  // cell_forces' copies in cell order, cell ids and order, and 12 bytes a cell of its grid.
  const double check = steps > 0 ? 4 * 24 + 8 + 24 + 8 + 2 * 4 + 12 * cells : 0.0;
  // The backend's records and the instance's copy during collect(); one copy with the check.
  return system + list + input + records + std::max(records, check);
}

class MdScenario : public ScenarioOf<MdInstance> {
 public:
  // The policy its solution requires (solution=tq, the default: task-queue).
  std::string default_policy(const ParamMap& params) const override {
    const auto it = params.find("solution");
    return policy_of(solution_from(it == params.end() ? "tq" : it->second));
  }
  std::string name() const override { return "md"; }
  std::string description() const override {
    return "Chen et al. 2010, section 6: molecular-dynamics forces (Lennard-Jones + "
           "electrostatics, cutoff), atom "
           "decomposition over a Gaussian-density system; 128 atoms a task. --param "
           "solution=1|2|3|tq picks the paper's "
           "solution (input order) and requires its policy: 1, 2 hardware; 3 chunked; tq "
           "task-queue. --param pairs=cells|all: "
           "a cell list (default; a task costs its atoms' local density) or all N atoms (the "
           "paper's Theta(N^2)).";
  }
  const std::vector<ParamSpec>& params() const override { return specs(); }
  DataSize data_size(const ParamMap& params) const override {
    const auto atoms = static_cast<std::uint64_t>(int_param(params, find_spec(specs(), "atoms")));
    const PairSearch pairs = choice_param(params, find_spec(specs(), "pairs")) == "all"
                                 ? PairSearch::All
                                 : PairSearch::Cells;
    const double cutoff = real_param(params, find_spec(specs(), "cutoff"), 1.5, 10.0);
    const auto steps = static_cast<std::uint32_t>(int_param(params, find_spec(specs(), "steps")));
    const auto bytes = static_cast<std::uint64_t>(static_cast<double>(atoms) *
                                                  bytes_per_atom(pairs, cutoff, steps));
    return {(atoms + kTaskAtoms - 1) / kTaskAtoms, bytes, "atoms"};
  }
  std::unique_ptr<MdInstance> instantiate(const ParamMap& params) const override {
    MdConfig c;
    c.system.atoms = static_cast<std::uint32_t>(int_param(params, find_spec(specs(), "atoms")));
    c.system.cutoff = real_param(params, find_spec(specs(), "cutoff"), 1.5, 10.0);
    c.system.seed = static_cast<std::uint64_t>(int_param(params, find_spec(specs(), "seed")));
    c.solution = solution_from(choice_param(params, find_spec(specs(), "solution")));
    c.pairs = choice_param(params, find_spec(specs(), "pairs")) == "all" ? PairSearch::All
                                                                         : PairSearch::Cells;
    c.sample = static_cast<std::uint32_t>(int_param(params, find_spec(specs(), "sample")));
    c.steps = static_cast<std::uint32_t>(int_param(params, find_spec(specs(), "steps")));
    return std::make_unique<MdInstance>(c);
  }
};

}  // namespace

const char* policy_of(Solution s) {
  switch (s) {
    case Solution::Sorted1:
    case Solution::Permuted2: return "hardware";
    case Solution::Chunked3: return "chunked";
    default: return "task-queue";
  }
}

const char* name_of(Solution s) {
  switch (s) {
    case Solution::Sorted1: return "1";
    case Solution::Permuted2: return "2";
    case Solution::Chunked3: return "3";
    default: return "tq";
  }
}

MdInstance::MdInstance(const MdConfig& config) : config_(config) {
  atoms_ = system_of(config.system);
  order_ = config.solution == Solution::Permuted2
               ? random_order(config.system.atoms, config.system.seed)
               : decomposition_order(atoms_, config.system.cutoff);
  if (config.pairs == PairSearch::Cells) cells_ = build_cell_list(atoms_, config.system.cutoff);
  const auto align16 = [](std::size_t b) { return (b + 15) / 16 * 16; };
  const std::size_t atom_bytes = atoms_.size() * sizeof(Atom),
                    id_bytes = atoms_.size() * sizeof(std::uint32_t);
  cell_atoms_at_ = align16(atom_bytes + id_bytes);
  slot_of_at_ = cell_atoms_at_ + cells_.atoms.size() * sizeof(Atom);
  start_at_ = slot_of_at_ + cells_.slot_of.size() * sizeof(std::uint32_t);
  input_.resize(start_at_ + cells_.start.size() * sizeof(std::uint32_t));
  std::memcpy(input_.data(), atoms_.data(), atom_bytes);
  std::memcpy(input_.data() + atom_bytes, order_.data(), id_bytes);
  if (config.pairs == PairSearch::Cells) {
    std::memcpy(input_.data() + cell_atoms_at_, cells_.atoms.data(),
                cells_.atoms.size() * sizeof(Atom));
    std::memcpy(input_.data() + slot_of_at_, cells_.slot_of.data(),
                cells_.slot_of.size() * sizeof(std::uint32_t));
    std::memcpy(input_.data() + start_at_, cells_.start.data(),
                cells_.start.size() * sizeof(std::uint32_t));
  }
}

std::vector<Task> MdInstance::initial_tasks() const {
  std::vector<Task> t(tasks());
  for (std::uint32_t k = 0; k < t.size(); ++k) {
    t[k].id = k;
    t[k].parent = Task::kNoParent;
  }
  return t;
}

std::string MdInstance::unsupported_under(const PolicyDescriptor& policy) const {
  const char* wanted = policy_of(config_.solution);
  if (policy.name == wanted) return {};
  return std::string("solution=") + name_of(config_.solution) + " runs under --policy " + wanted +
         " (Chen et al. section 6.2: solutions 1 and 2 hardware, 3 chunked, tq task-queue)";
}

ParamMap MdInstance::policy_defaults(const PolicyDescriptor&) const {
  // Solution 3: the chunked policy's own default, chunk=0: one wave of the device at hand (on a GPU
  // the blocks of 128 threads the occupancy API keeps resident, on the CPU one task a worker). The
  // paper's chunk of 15,360 atoms = 120 tasks was that on its GPU: 120 blocks = 4 on each of a
  // Tesla C1060's 30 SMs, and the paper found smaller chunks under-filled the GPU and larger ones
  // unbalanced the GPUs. A fixed 120 fills a tenth of a 132-SM GPU; --param chunk=120 gives it.
  // Task queue: the paper's 20 tasks a queue fed 120 blocks; an H100 keeps about 2,000
  // blocks of 128 threads resident, so a queue holds 256 tasks (two queues: 512 a GPU) -- enough
  // that blocks rarely wait for a refill, few enough that a multi-GPU pool still balances at the
  // end. The paper's setting: --workers 120 --param queue_capacity=20.
  //
  // The watchdog stops a run that shows no progress for watchdog_ms; under `hardware` a GPU shows
  // progress only when its one launch ends, which at 1M atoms (10^12 pair tests) is seconds on an
  // H100. So the watchdog waits at least for N^2 pair tests at 10^10 a second (a pessimistic GPU),
  // and never less than its usual 10 s.
  const double n = static_cast<double>(atoms_.size());
  const std::uint64_t watchdog = std::min<std::uint64_t>(
      3'600'000, std::max<std::uint64_t>(10'000, static_cast<std::uint64_t>(n * n * 1e-7)));
  ParamMap d = {{"watchdog_ms", std::to_string(watchdog)}};
  if (config_.solution == Solution::TaskQueue) d["queue_capacity"] = "256";
  return d;
}

MdBody MdInstance::body_on(MdRecord* records, const std::byte* input) const {
  const auto* atoms = reinterpret_cast<const Atom*>(input);
  const auto* order = reinterpret_cast<const std::uint32_t*>(input + atoms_.size() * sizeof(Atom));
  CellListView cells{};
  if (config_.pairs == PairSearch::Cells) {
    cells.atoms = reinterpret_cast<const Atom*>(input + cell_atoms_at_);
    cells.slot_of = reinterpret_cast<const std::uint32_t*>(input + slot_of_at_);
    cells.start = reinterpret_cast<const std::uint32_t*>(input + start_at_);
    cells.shape = cells_.shape;
  }
  return MdBody{atoms,
                order,
                records,
                static_cast<std::uint32_t>(atoms_.size()),
                make_force_field<float>(config_.system.cutoff),
                cells};
}

void MdInstance::collect(std::vector<std::vector<MdRecord>> per_device, const ExecPlan& plan,
                         const ExecOutput&) {
  // An atom's force and a task's counts come from the one GPU that ran its task; the others hold
  // zeros, so adding them is exact.
  records_.assign(record_count(0), MdRecord{});
  for (const auto& device : per_device) {
    for (std::size_t i = 0; i < device.size() && i < records_.size(); ++i) {
      MdRecord& r = records_[i];
      r.fx += device[i].fx;
      r.fy += device[i].fy;
      r.fz += device[i].fz;
      r.neighbours += device[i].neighbours;
      r.warp_active += device[i].warp_active;
      r.warp_lanes += device[i].warp_lanes;
      r.runs += device[i].runs;
      r.warp_divergent += device[i].warp_divergent;
      r.pair_tests += device[i].pair_tests;
    }
  }
  on_gpu_ = plan.backend == Backend::Cuda;
}

Verification MdInstance::verify() const {
  Verification v;
  const std::uint32_t n = static_cast<std::uint32_t>(atoms_.size());
  std::string problem;
  std::uint64_t active = 0, lanes = 0, divergent = 0;
  for (std::uint32_t k = 0; k < tasks(); ++k) {
    const MdRecord& r = records_[n + k];
    if (r.runs != 1 && problem.empty()) {
      problem = "task " + std::to_string(k) + " ran " + std::to_string(r.runs) +
                " times (expected exactly once)";
    }
    active += r.warp_active;
    lanes += r.warp_lanes;
    divergent += r.warp_divergent;
  }

  // Sampled forces against the all-pairs double reference.
  const ForceField<double> ff = make_force_field<double>(config_.system.cutoff);
  const std::uint32_t sample = std::min(config_.sample, n);
  std::vector<std::uint32_t> ids(sample);
  std::vector<Vec3> ref(sample);
  double sum_sq = 0;
  for (std::uint32_t s = 0; s < sample; ++s) {
    ids[s] = static_cast<std::uint32_t>((std::uint64_t{s} * n) / sample);
    ref[s] = reference_force(atoms_, ids[s], ff);
    sum_sq += ref[s][0] * ref[s][0] + ref[s][1] * ref[s][1] + ref[s][2] * ref[s][2];
  }
  const double rms = std::sqrt(sum_sq / sample);
  double worst = 0;  // the largest component error over the RMS force
  for (std::uint32_t s = 0; s < sample; ++s) {
    const MdRecord& r = records_[ids[s]];
    const double got[3] = {r.fx, r.fy, r.fz};
    for (int d = 0; d < 3; ++d)
      worst = std::max(worst, std::abs(got[d] - ref[s][d]) / std::max(rms, 1e-30));
  }
  if (problem.empty() && !(worst <= kForceTolerance)) {
    problem = "sampled forces differ from the double-precision reference by " +
              std::to_string(worst) + " x the RMS force (tolerance " +
              std::to_string(kForceTolerance) + ")";
  }

  // Energy drift of velocity Verlet, the run's forces driving the first half-kick.
  double drift = 0, kinetic0 = 1.5 * kTemperature * n;
  if (config_.steps > 0) {
    std::vector<Vec3> first(n);
    for (std::uint32_t i = 0; i < n; ++i)
      first[i] = {records_[i].fx, records_[i].fy, records_[i].fz};
    const std::vector<double> e = verlet_energies(atoms_, first, ff, config_.steps, kTimeStep,
                                                  kTemperature, config_.system.seed);
    for (double x : e) drift = std::max(drift, std::abs(x - e.front()));
    drift /= kinetic0;
    if (problem.empty() && !(drift <= kDriftTolerance)) {
      problem = "the energy drifted by " + std::to_string(drift) + " x the kinetic energy over " +
                std::to_string(config_.steps) + " steps (bound " + std::to_string(kDriftTolerance) +
                ")";
    }
  }

  const TaskCosts neighbours = task_costs(records_, order_, &MdRecord::neighbours);
  const TaskCosts tests = task_costs(records_, order_, &MdRecord::pair_tests);

  v.ok = problem.empty();
  v.message = v.ok ? "every task ran once; " + std::to_string(sample) + " sampled forces within " +
                         std::to_string(kForceTolerance) + " x RMS of the double reference" +
                         (config_.steps ? "; energy drift within " +
                                              std::to_string(kDriftTolerance) + " x kinetic over " +
                                              std::to_string(config_.steps) + " Verlet steps"
                                        : std::string())
                   : problem;
  const nlohmann::json result = {
      {"solution", name_of(config_.solution)},
      {"atoms", n},
      {"tasks", tasks()},
      {"cutoff", config_.system.cutoff},
      {"force_error_over_rms", worst},
      {"energy_drift_over_kinetic", drift},
      {"verlet_steps", config_.steps},
      {"forces_hash", forces_hash(records_, n)},
      {"pairs", config_.pairs == PairSearch::Cells ? "cells" : "all"},
      {"neighbours_mean", n ? double(neighbours.total) / n : 0.0},
      {"task_neighbours_max_over_mean", neighbours.max_over_mean()},
      {"pair_tests_mean", n ? double(tests.total) / n : 0.0},
      {"task_pair_tests_max_over_mean", tests.max_over_mean()},
      {"task_pair_tests_min_over_mean", tests.min_over_mean()},
      {"warp_efficiency", lanes ? double(active) / double(lanes) : 0.0},
      {"divergent_samples", divergent},
      {"warp_efficiency_source",
       config_.pairs == PairSearch::Cells
           ? "none: not sampled under pairs=cells (the lanes of a warp scan different cells)"
       : on_gpu_ ? "GPU: __ballot_sync every 32nd atom of the force loop"
                 : "CPU: 32-lane warps emulated, every 32nd atom of the force loop"}};
  v.result_json = result.dump();
  return v;
}

std::unique_ptr<ScenarioOf<MdInstance>> make_scenario() { return std::make_unique<MdScenario>(); }

}  // namespace gpulb::scenarios::md
