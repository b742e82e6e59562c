#include "nqueens/nqueens.hpp"

#include <algorithm>
#include <future>
#include <numeric>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpulb::scenarios::nqueens {

namespace {

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> s = {
      {"n", "board size (queens)", "11", "1..20", 1, kMaxN, {}},
      {"cutoff",
       "rows placed by tasks (BOTS's cutoff); the rest is solved sequentially in the task",
       "4",
       "0..20",
       0,
       kMaxN,
       {}},
      {"split",
       "how a task at the cutoff shares its sequential rest among its block's threads on a GPU: "
       "deal (one walk of the "
       "rest in which the placements deal_depth rows down are dealt out to the threads in turn, "
       "each completing its own) or "
       "row (a thread per column of the next row: at most n lanes busy, as first written here). "
       "The CPU backend runs a "
       "block's threads as one loop and takes the columns in turn either way",
       "deal",
       "deal|row",
       0,
       0,
       {"deal", "row"}},
      {"deal_depth",
       "split=deal: rows below the cutoff whose placements are dealt out (more: finer shares, more "
       "rows walked by "
       "every thread)",
       "3",
       "0..20",
       0,
       kMaxN,
       {}},
      {"symmetry",
       "mirror (the first queen in the left half, its solutions counted twice: half the tree; at "
       "cutoff 0 the one task "
       "walks the whole board, as none) or none (the whole "
       "tree, as BOTS)",
       "mirror",
       "mirror|none",
       0,
       0,
       {"mirror", "none"}},
  };
  return s;
}

// The tasks at each row of the tree (`rows[r]`: placements of r queens that a task holds).
void count_partial(const Placement& p, int row, int n, int cutoff, bool mirror,
                   std::vector<std::uint64_t>& rows) {
  if (rows.size() <= static_cast<std::size_t>(row))
    rows.resize(static_cast<std::size_t>(row) + 1, 0);
  ++rows[static_cast<std::size_t>(row)];
  if (row >= cutoff || row == n) return;
  const std::uint32_t full = (1u << n) - 1;
  const int columns = row == 0 ? root_columns(n, mirror) : n;
  for (int c = 0; c < columns; ++c) {
    if (p.free(c)) count_partial(p.place(c, full), row + 1, n, cutoff, mirror, rows);
  }
}

std::vector<std::uint64_t> tasks_per_row(int n, int cutoff, bool mirror) {
  std::vector<std::uint64_t> rows;
  count_partial(Placement{}, 0, n, cutoff, mirror, rows);
  return rows;
}

// The host's count of every solution, the whole tree walked (no symmetry): a thread per column of
// the first row (18 s in one thread for n = 16 on a 2-core VM; a check is not meant to outlast
// the run).
std::uint64_t reference_solutions(int n) {
  if (n == 0) return count_completions(Placement{}, 0, n);
  const std::uint32_t full = (1u << n) - 1;
  std::vector<std::future<std::uint64_t>> columns;
  for (int c = 0; c < n; ++c) {
    columns.push_back(std::async(
        std::launch::async, [=] { return count_completions(Placement{}.place(c, full), 1, n); }));
  }
  std::uint64_t total = 0;
  for (auto& f : columns) total += f.get();
  return total;
}

class NQueensScenario : public ScenarioOf<NQueensInstance> {
 public:
  std::string default_policy(const ParamMap&) const override { return "work-stealing"; }
  std::string name() const override { return "nqueens"; }
  std::string description() const override {
    return "N-Queens as in BOTS (Grossman's benchmark): a task per partial placement down to a "
           "cutoff row, each "
           "spawning a child per safe column, then sequential. Counts all solutions; by default "
           "the first queen goes in the "
           "left half and its solutions count twice (symmetry=none walks BOTS's whole tree).";
  }
  const std::vector<ParamSpec>& params() const override { return specs(); }
  // The root: a partial placement is the task itself (its payload), the counts are one record a
  // worker. Measured (CPU backend, work-stealing, 2 workers, --no-trace): 8 MiB resident at n = 11
  // and at n = 14 alike.
  DataSize data_size(const ParamMap&) const override { return {1, 0, {}}; }
  // A task's threads share the placements a few rows below the cutoff (split=deal) and one row's
  // columns above it: one warp keeps its lanes busy.
  std::uint32_t default_block_size(const ParamMap&) const override { return 32; }
  std::unique_ptr<NQueensInstance> instantiate(const ParamMap& params) const override {
    const int n = static_cast<int>(int_param(params, find_spec(specs(), "n")));
    const int cutoff = static_cast<int>(int_param(params, find_spec(specs(), "cutoff")));
    if (cutoff > n)
      throw ConfigError("parameter 'cutoff': " + std::to_string(cutoff) +
                        " is more than n=" + std::to_string(n));
    const bool deal = choice_param(params, find_spec(specs(), "split")) == "deal";
    const int deal_depth = static_cast<int>(int_param(params, find_spec(specs(), "deal_depth")));
    const bool mirror = choice_param(params, find_spec(specs(), "symmetry")) == "mirror";
    return std::make_unique<NQueensInstance>(n, cutoff, deal ? LeafSplit::Deal : LeafSplit::Row,
                                             deal_depth, mirror);
  }
};

}  // namespace

std::uint64_t known_solutions(int n) {
  static const std::uint64_t a000170[] = {
      1,      1,       0,        0,        2,         10,         4,
      40,     92,      352,      724,      2680,      14200,      73712,
      365596, 2279184, 14772512, 95815104, 666090624, 4968057848, 39029188884};
  return a000170[n];
}

std::uint64_t task_count(int n, int cutoff, bool mirror) {
  const std::vector<std::uint64_t> rows = tasks_per_row(n, cutoff, mirror);
  return std::accumulate(rows.begin(), rows.end(), std::uint64_t{0});
}

std::uint64_t widest_row(int n, int cutoff, bool mirror) {
  const std::vector<std::uint64_t> rows = tasks_per_row(n, cutoff, mirror);
  return *std::max_element(rows.begin(), rows.end());
}

NQueensInstance::NQueensInstance(int n, int cutoff, LeafSplit split, int deal_depth, bool mirror)
    : n_(n),
      cutoff_(cutoff),
      split_(split),
      deal_depth_(deal_depth),
      mirror_(mirror &&
              cutoff > 0),  // at cutoff 0 the root is the one task and walks the whole board
      expected_tasks_(task_count(n, cutoff, mirror_)),
      widest_(widest_row(n, cutoff, mirror_)) {}

std::vector<Task> NQueensInstance::initial_tasks() const {
  Task root;
  root.id = 0;
  root.kind = kNQueensTaskKind;
  root.parent = Task::kNoParent;
  return {root};
}

void NQueensInstance::collect(std::vector<std::vector<NQueensCounts>> per_device, const ExecPlan&,
                              const ExecOutput& out) {
  counts_.clear();
  for (const auto& device : per_device) counts_.insert(counts_.end(), device.begin(), device.end());
  tasks_run_ = out.tasks_run;
  metrics_ = out.metrics;
}

Verification NQueensInstance::verify() const {
  std::uint64_t solutions = 0, tasks = 0;
  for (const NQueensCounts& c : counts_) {
    solutions += c.solutions;
    tasks += c.tasks;
  }
  const std::uint64_t sequential = reference_solutions(n_);
  const std::uint64_t known = known_solutions(n_);
  Verification v;
  if (solutions != sequential) {
    v.message = "the run counted " + std::to_string(solutions) +
                " solutions; the sequential solver " + std::to_string(sequential);
  } else if (solutions != known) {
    v.message = std::to_string(solutions) + " solutions, but " + std::to_string(known) +
                " are known for n=" + std::to_string(n_);
  } else if (tasks != expected_tasks_ || tasks_run_ != expected_tasks_) {
    v.message = std::to_string(tasks_run_) + " tasks ran; there are " +
                std::to_string(expected_tasks_) + " partial placements of up to " +
                std::to_string(cutoff_) + " queens";
  } else {
    v.ok = true;
    v.message =
        std::to_string(solutions) + " solutions for n=" + std::to_string(n_) +
        ": matches the sequential solver and the known count; one task per partial placement (" +
        std::to_string(tasks) + ")";
  }
  nlohmann::json r = {{"n", n_},
                      {"cutoff", cutoff_},
                      {"split", split_ == LeafSplit::Deal ? "deal" : "row"},
                      {"symmetry", mirror_ ? "mirror" : "none"},
                      {"solutions", solutions},
                      {"sequential", sequential},
                      {"known", known},
                      {"tasks", tasks_run_},
                      {"expected_tasks", expected_tasks_},
                      {"policy_metrics", metrics_}};
  if (split_ == LeafSplit::Deal) r["deal_depth"] = deal_depth_;  // split=row ignores it
  v.result_json = r.dump();
  return v;
}

std::unique_ptr<ScenarioOf<NQueensInstance>> make_scenario() {
  return std::make_unique<NQueensScenario>();
}

}  // namespace gpulb::scenarios::nqueens
