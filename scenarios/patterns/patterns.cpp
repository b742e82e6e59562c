#include "patterns/patterns.hpp"

#include <nlohmann/json.hpp>

namespace gpulb::scenarios::patterns {

namespace {

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> s = {
      {"pattern",
       "workload pattern: P0 balanced; P1 odd blocks nullified; P2 second half nullified; "
       "P3 a scattered half nullified; P4 three of every four nullified (75% less work)",
       "P0",
       "P0|P1|P2|P3|P4",
       0,
       0,
       {"P0", "P1", "P2", "P3", "P4"}},
      {"blocks", "number of blocks (tasks)", "4096", "1..16777216", 1, 1 << 24, {}},
      {"work",
       "arithmetic steps per thread of a full block",
       "1000",
       "0..100000000",
       0,
       100'000'000,
       {}},
  };
  return s;
}

// a^k and the matching increment for k steps of x -> a x + c, by squaring: O(log k).
std::uint64_t lcg_jump(std::uint64_t x, std::uint64_t k) {
  std::uint64_t acc_mul = 1, acc_add = 0, mul = kLcgMul, add = kLcgAdd;
  while (k > 0) {
    if (k & 1) {
      acc_mul *= mul;
      acc_add = acc_add * mul + add;
    }
    add = (mul + 1) * add;
    mul *= mul;
    k >>= 1;
  }
  return acc_mul * x + acc_add;
}

std::uint32_t scatter_hash(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

class PatternsScenario : public ScenarioOf<PatternsInstance> {
 public:
  std::string name() const override { return "patterns"; }
  std::string description() const override {
    return "Chen et al. 2010, section 6.3.1: blocks of equal work, some nullified (they return at "
           "once). "
           "Shows whether a scheduler's runtime falls with the work removed.";
  }
  const std::vector<ParamSpec>& params() const override { return specs(); }
  DataSize data_size(const ParamMap& params) const override {
    const auto blocks = static_cast<std::uint64_t>(int_param(params, find_spec(specs(), "blocks")));
    return {blocks, blocks * sizeof(PatternsRecord), "blocks"};
  }
  std::unique_ptr<PatternsInstance> instantiate(const ParamMap& params) const override {
    const std::string p = choice_param(params, find_spec(specs(), "pattern"));
    return std::make_unique<PatternsInstance>(
        p[1] - '0', static_cast<std::uint32_t>(int_param(params, find_spec(specs(), "blocks"))),
        static_cast<std::uint32_t>(int_param(params, find_spec(specs(), "work"))));
  }
};

}  // namespace

bool is_nullified(int pattern, std::uint32_t block, std::uint32_t blocks) {
  switch (pattern) {
    case 1: return block % 2 == 1;
    case 2: return block >= blocks - blocks / 2;
    case 3: return (scatter_hash(block) & 1) == 1;
    case 4: return block % 4 != 0;
    default: return false;
  }
}

PatternsInstance::PatternsInstance(int pattern, std::uint32_t blocks, std::uint32_t work)
    : pattern_(pattern), blocks_(blocks), work_(work), records_(blocks) {}

std::vector<Task> PatternsInstance::initial_tasks() const {
  std::vector<Task> tasks(blocks_);
  for (std::uint32_t i = 0; i < blocks_; ++i) {
    tasks[i].id = i;
    tasks[i].parent = Task::kNoParent;
    tasks[i].flags = is_nullified(pattern_, i, blocks_) ? kNullified : 0;
  }
  return tasks;
}

void PatternsInstance::collect(std::vector<std::vector<PatternsRecord>> per_device,
                               const ExecPlan& plan, const ExecOutput&) {
  records_.assign(blocks_, PatternsRecord{});
  for (const auto& device : per_device) {
    for (std::size_t i = 0; i < device.size() && i < records_.size(); ++i) {
      records_[i].run_count += device[i].run_count;
      records_[i].checksum += device[i].checksum;
    }
  }
  block_size_ = plan.block_size;
}

Verification PatternsInstance::verify() const {
  Verification v;
  std::uint32_t nullified = 0;
  std::uint64_t total = 0;
  std::string problem;
  for (std::uint32_t i = 0; i < blocks_; ++i) {
    const bool nul = is_nullified(pattern_, i, blocks_);
    nullified += nul;
    if (records_[i].run_count != 1 && problem.empty()) {
      problem = "block " + std::to_string(i) + " ran " + std::to_string(records_[i].run_count) +
                " times (expected exactly once)";
    }
    if (nul) continue;
    std::uint64_t expect = 0;
    for (std::uint32_t t = 0; t < block_size_; ++t) expect += lcg_jump(lcg_seed(i, t), work_);
    if (records_[i].checksum != expect && problem.empty()) {
      problem = "block " + std::to_string(i) + " computed a wrong result";
    }
    total += records_[i].checksum;
  }
  v.ok = problem.empty();
  v.message =
      v.ok ? "every block ran exactly once; every full block's result matches the host reference"
           : problem;
  const nlohmann::json result = {
      {"pattern", "P" + std::to_string(pattern_)},
      {"blocks", blocks_},
      {"nullified", nullified},
      {"work_fraction", blocks_ ? double(blocks_ - nullified) / blocks_ : 0.0},
      {"work_per_thread", work_},
      {"checksum", total}};
  v.result_json = result.dump();
  return v;
}

std::unique_ptr<ScenarioOf<PatternsInstance>> make_scenario() {
  return std::make_unique<PatternsScenario>();
}

}  // namespace gpulb::scenarios::patterns
