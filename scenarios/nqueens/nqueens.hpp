// The `nqueens` scenario (BOTS N-Queens; nqueens_body.hpp): solutions of the n-queens problem,
// one task per partial placement down to `cutoff` rows, verified against a sequential solver and
// the known counts (OEIS A000170).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpulb/scenario.hpp"
#include "nqueens/nqueens_body.hpp"

namespace gpulb::scenarios::nqueens {

// Solutions for n = 0..20 (OEIS A000170).
std::uint64_t known_solutions(int n);
// Partial placements of 0..cutoff queens with no two attacking (under `mirror`, those whose first
// queen is in the left half or the middle): the tasks a run executes.
std::uint64_t task_count(int n, int cutoff, bool mirror);
// The most of those tasks in one row (a generation of the static list: its widest).
std::uint64_t widest_row(int n, int cutoff, bool mirror);

// One NQueensCounts record a worker, summed by verify().
class NQueensInstance : public Workload<NQueensBody, NQueensCounts> {
 public:
  NQueensInstance(int n, int cutoff, LeafSplit split = LeafSplit::Deal, int deal_depth = 3,
                  bool mirror = true);

  std::vector<Task> initial_tasks() const override;
  Verification verify() const override;
  std::uint64_t expected_tasks() const override { return expected_tasks_; }
  std::uint64_t widest_generation() const override { return widest_; }
  bool spawns() const override { return true; }
  std::size_t record_count(std::uint32_t workers) const override { return workers; }
  NQueensBody body(NQueensCounts* counts) const override {
    return {n_, cutoff_, split_, deal_depth_, mirror_, counts};
  }
  void collect(std::vector<std::vector<NQueensCounts>> per_device, const ExecPlan& plan,
               const ExecOutput& out) override;

 private:
  int n_;
  int cutoff_;
  LeafSplit split_;
  int deal_depth_;
  bool mirror_;
  std::uint64_t expected_tasks_;
  std::uint64_t widest_;
  std::vector<NQueensCounts> counts_;
  std::uint64_t tasks_run_ = 0;
  std::map<std::string, std::uint64_t> metrics_;
};

std::unique_ptr<ScenarioOf<NQueensInstance>> make_scenario();

}  // namespace gpulb::scenarios::nqueens
