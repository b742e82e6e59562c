// The `connect4` scenario: Mohan & Gopalan's four-in-a-row min-max search, every tree node a task
// (connect4_body.hpp); the best move and its value verified against a sequential minimax.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpulb/scenario.hpp"
#include "connect4/connect4_body.hpp"

namespace gpulb::scenarios::connect4 {

// The default opening: the human (MIN) plays column 3 (the centre; columns count from 0 at the
// left), the computer (MAX) answers on top of it in column 3, the human plays column 2. The
// computer is to move at the root. (The paper's Fig. 3 position was lost from its text.)
inline constexpr const char* kDefaultOpening = "332";

struct MinimaxResult {
  std::int32_t value = 0;
  int best_move = -1;
  std::uint64_t nodes = 0;  // tree nodes = tasks a run executes
};

// The position after `opening` (columns as digits, the human first; odd length so that the
// computer moves next). Throws ConfigError for a full column, a decided game or an even length.
Board opening_position(const std::string& opening);
MinimaxResult sequential_minimax(const Board& root, int lookahead);

// One NodeRecord a task id (the node table the body backs values up through); one device.
class Connect4Instance : public Workload<Connect4Body, NodeRecord> {
 public:
  Connect4Instance(std::string opening, int lookahead);

  std::vector<Task> initial_tasks() const override;
  Verification verify() const override;
  std::uint64_t expected_tasks() const override { return reference_.nodes; }
  bool spawns() const override { return true; }
  std::uint32_t spawn_id_base() const override { return kRootId + 1; }
  std::uint64_t id_capacity() const override { return id_capacity_; }
  std::size_t record_count(std::uint32_t) const override { return id_capacity_; }
  Connect4Body body(NodeRecord* nodes) const override { return {root_, lookahead_, nodes}; }
  void collect(std::vector<std::vector<NodeRecord>> per_device, const ExecPlan& plan,
               const ExecOutput& out) override;

 private:
  std::string opening_;
  int lookahead_;
  Board root_;
  MinimaxResult reference_;
  std::uint64_t id_capacity_;
  std::vector<NodeRecord> nodes_;
  std::uint64_t tasks_run_ = 0;
  std::uint64_t makespan_ns_ = 0;
  std::map<std::string, std::uint64_t> metrics_;
};

std::unique_ptr<ScenarioOf<Connect4Instance>> make_scenario();

}  // namespace gpulb::scenarios::connect4
