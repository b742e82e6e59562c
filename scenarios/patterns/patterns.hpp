// The `patterns` scenario: Chen et al. 2010, section 6.3.1 and Figure 7.
//
// Figure 6 of the paper (the patterns themselves) was lost from the text; gpulb reads them so:
//   P0  balanced: every block does the same work
//   P1  every other block nullified (odd blocks): 50% of the work removed, interleaved
//   P2  the second half nullified: 50% removed, all at the end of the launch order
//   P3  a scattered half nullified (a fixed hash of the block id picks about 50%)
//   P4  three of every four blocks nullified (block % 4 != 0): 75% removed, as the text says
// A nullified block returns at once (Solution 1: the block exits; task-queue: the worker takes the
// next task).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpulb/scenario.hpp"
#include "scenarios/patterns/patterns_body.hpp"

namespace gpulb::scenarios::patterns {

bool is_nullified(int pattern, std::uint32_t block, std::uint32_t blocks);

class PatternsInstance : public ScenarioInstance {
 public:
  PatternsInstance(int pattern, std::uint32_t blocks, std::uint32_t work, std::uint32_t block_size_hint);

  std::vector<Task> initial_tasks() const override;
  ExecOutput execute_cpu(const ExecPlan& plan) override;
  Verification verify() const override;

  // For the CUDA executor: the arrays a body writes, copied back after a device run.
  std::vector<std::uint32_t>& run_count() { return run_count_; }
  std::vector<std::uint64_t>& checksum() { return checksum_; }
  std::uint32_t work() const { return work_; }
  std::uint32_t blocks() const { return blocks_; }
  // The block size the last execute used (the checksum depends on it).
  void set_block_size(std::uint32_t b) { block_size_ = b; }

 private:
  int pattern_;
  std::uint32_t blocks_;
  std::uint32_t work_;
  std::uint32_t block_size_;
  std::vector<std::uint32_t> run_count_;
  std::vector<std::uint64_t> checksum_;
};

std::unique_ptr<Scenario> make_scenario();

}  // namespace gpulb::scenarios::patterns
