#include "connect4/connect4.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace gpulb::scenarios::connect4 {

namespace {

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> s = {
      {"lookahead",
       "moves to look ahead (levels of the min-max tree below the root)",
       "5",
       "1..8",
       1,
       kMaxLookahead,
       {}},
      {"opening",
       "the moves played before the search, as column digits 0..6, the human first (odd length: "
       "the "
       "computer moves next)",
       kDefaultOpening,
       "digits 0..6, odd length",
       0,
       0,
       {}},
  };
  return s;
}

// e(p) and wins over the whole board, as the task body computes them.
struct Eval {
  std::int32_t open = 0;
  bool max_won = false, min_won = false;
};
Eval evaluate(const Board& b) {
  Eval e;
  for (int w = 0; w < kWindowCandidates; ++w) {
    const WindowScore s = score_window(b, w);
    e.open += s.open;
    e.max_won |= (s.wins >> kMax) & 1u;
    e.min_won |= (s.wins >> kMin) & 1u;
  }
  return e;
}

std::int32_t minimax(Board& b, int level, int lookahead, int& best_move, std::uint64_t& nodes) {
  ++nodes;
  const Eval e = evaluate(b);
  if (e.max_won) return kInfinity;
  if (e.min_won) return -kInfinity;
  if (level == lookahead || b.full()) return e.open;
  const bool is_max = level % 2 == 0;
  std::int32_t best = 0;
  best_move = -1;
  for (int c = 0; c < kCols; ++c) {
    if (!b.can_play(c)) continue;
    Board child = b;
    child.play(c, is_max ? kMax : kMin);
    int unused = -1;
    const std::int32_t v = minimax(child, level + 1, lookahead, unused, nodes);
    if (best_move < 0 || (is_max ? v > best : v < best)) {  // strict: ties keep the lower column
      best = v;
      best_move = c;
    }
  }
  return best;
}

std::uint64_t tree_bound(int lookahead) {
  std::uint64_t n = 1, w = 1;
  for (int l = 0; l < lookahead; ++l) n += (w *= kCols);
  return n;
}

class Connect4Scenario : public ScenarioOf<Connect4Instance> {
 public:
  std::string default_policy(const ParamMap&) const override { return "work-stealing"; }
  std::string name() const override { return "connect4"; }
  std::string description() const override {
    return "Four-in-a-row min-max search (Mohan & Gopalan 2014, section III): every node of the "
           "game tree is a "
           "task; leaves scored by open two/three sequences; values backed up through per-node "
           "child counters.";
  }
  const std::vector<ParamSpec>& params() const override { return specs(); }
  // The node table: a record per task id the tree can have (the run's records, which collect()
  // keeps). Measured (CPU backend, 2 workers, --no-trace): lookahead 6 -> 7 added 19.4 MiB; this
  // says 19.7.
  DataSize data_size(const ParamMap& params) const override {
    const auto lookahead = static_cast<int>(int_param(params, find_spec(specs(), "lookahead")));
    return {1, tree_bound(lookahead) * sizeof(NodeRecord), "lookahead"};
  }
  // A node has at most 7 moves, one per thread: one warp covers them.
  std::uint32_t default_block_size(const ParamMap&) const override { return 32; }
  std::unique_ptr<Connect4Instance> instantiate(const ParamMap& params) const override {
    const int lookahead = static_cast<int>(int_param(params, find_spec(specs(), "lookahead")));
    auto it = params.find("opening");
    return std::make_unique<Connect4Instance>(it == params.end() ? kDefaultOpening : it->second,
                                              lookahead);
  }
};

}  // namespace

Board opening_position(const std::string& opening) {
  if (opening.size() % 2 == 0) {
    throw ConfigError(
        "parameter 'opening': '" + opening +
        "' has an even number of moves; the computer must be to move (the human moves first)");
  }
  Board b;
  b.clear();
  for (std::size_t i = 0; i < opening.size(); ++i) {
    const char ch = opening[i];
    if (ch < '0' || ch > '6')
      throw ConfigError("parameter 'opening': '" + opening + "' is not a list of columns 0..6");
    if (!b.can_play(ch - '0'))
      throw ConfigError("parameter 'opening': column " + std::string(1, ch) + " is full at move " +
                        std::to_string(i + 1));
    b.play(ch - '0', i % 2 == 0 ? kMin : kMax);
  }
  const Eval e = evaluate(b);
  if (e.max_won || e.min_won || b.full())
    throw ConfigError("parameter 'opening': the game is already over");
  return b;
}

MinimaxResult sequential_minimax(const Board& root, int lookahead) {
  MinimaxResult r;
  Board b = root;
  r.value = minimax(b, 0, lookahead, r.best_move, r.nodes);
  return r;
}

Connect4Instance::Connect4Instance(std::string opening, int lookahead)
    : opening_(std::move(opening)),
      lookahead_(lookahead),
      root_(opening_position(opening_)),
      reference_(sequential_minimax(root_, lookahead)),
      id_capacity_(tree_bound(lookahead)) {}

std::vector<Task> Connect4Instance::initial_tasks() const {
  Task t;
  t.id = kRootId;
  t.kind = kConnect4TaskKind;
  t.parent = Task::kNoParent;
  return {t};
}

void Connect4Instance::collect(std::vector<std::vector<NodeRecord>> per_device, const ExecPlan&,
                               const ExecOutput& out) {
  // The spawning policies run on one device; the node table of the first is the run's.
  nodes_ = per_device.empty() ? std::vector<NodeRecord>{} : std::move(per_device.front());
  tasks_run_ = out.tasks_run;
  makespan_ns_ = out.makespan_ns;
  metrics_ = out.metrics;
}

Verification Connect4Instance::verify() const {
  Verification v;
  nlohmann::json r = {{"opening", opening_},
                      {"lookahead", lookahead_},
                      {"tasks", tasks_run_},
                      {"reference",
                       {{"value", reference_.value},
                        {"best_move", reference_.best_move},
                        {"nodes", reference_.nodes}}},
                      {"policy_metrics", metrics_}};
  if (makespan_ns_ > 0)
    r["tasks_per_ms"] = static_cast<double>(tasks_run_) / (static_cast<double>(makespan_ns_) / 1e6);
  if (metrics_.count("peak_task_slots")) {
    r["peak_task_slots"] = metrics_.at("peak_task_slots");
    r["peak_task_bytes"] = metrics_.at("peak_task_slots") * sizeof(Task);
  }
  if (nodes_.empty() || nodes_[kRootId].remaining != 0) {
    v.message = "the search did not finish: the root still waits for " +
                std::to_string(nodes_.empty() ? -1 : nodes_[kRootId].remaining) + " children";
    v.result_json = r.dump();
    return v;
  }
  const std::int32_t value = key_value(nodes_[kRootId].best);
  const int move = max_key_col(nodes_[kRootId].best);
  r["value"] = value;
  r["best_move"] = move;
  if (value != reference_.value || move != reference_.best_move) {
    v.message = "the run chose column " + std::to_string(move) + " (value " +
                std::to_string(value) + "); the sequential minimax column " +
                std::to_string(reference_.best_move) + " (value " +
                std::to_string(reference_.value) + ")";
  } else if (tasks_run_ != reference_.nodes) {
    v.message = std::to_string(tasks_run_) + " tasks ran; the tree has " +
                std::to_string(reference_.nodes) + " nodes";
  } else {
    v.ok = true;
    v.message = "best move column " + std::to_string(move) + " with value " +
                std::to_string(value) +
                ": matches the sequential minimax; one task per tree node (" +
                std::to_string(tasks_run_) + ")";
  }
  v.result_json = r.dump();
  return v;
}

std::unique_ptr<ScenarioOf<Connect4Instance>> make_scenario() {
  return std::make_unique<Connect4Scenario>();
}

}  // namespace gpulb::scenarios::connect4
