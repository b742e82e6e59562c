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
#include "scenarios/nqueens/nqueens_body.hpp"

namespace gpulb::scenarios::nqueens {

// Solutions for n = 0..20 (OEIS A000170).
std::uint64_t known_solutions(int n);
// Partial placements of 0..cutoff queens with no two attacking: the tasks a run executes.
std::uint64_t task_count(int n, int cutoff);

class NQueensInstance : public ScenarioInstance {
 public:
  NQueensInstance(int n, int cutoff);
  std::vector<Task> initial_tasks() const override;
  ExecOutput execute_cpu(const ExecPlan& plan) override;
  Verification verify() const override;
  std::uint64_t expected_tasks() const override { return expected_tasks_; }

  NQueensBody body(NQueensCounts* counts) const { return {n_, cutoff_, counts}; }
  std::vector<NQueensCounts>& counts() { return counts_; }
  void set_last_run(const ExecOutput& out);

 private:
  int n_;
  int cutoff_;
  std::uint64_t expected_tasks_;
  std::vector<NQueensCounts> counts_;
  std::uint64_t tasks_run_ = 0;
  std::map<std::string, std::uint64_t> metrics_;
};

std::unique_ptr<Scenario> make_scenario();

}  // namespace gpulb::scenarios::nqueens
