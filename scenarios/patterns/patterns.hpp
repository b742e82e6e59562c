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
#include "patterns/patterns_body.hpp"

namespace gpulb::scenarios::patterns {

bool is_nullified(int pattern, std::uint32_t block, std::uint32_t blocks);

// One record a block, on every device that ran some of them (summed: a block runs on one GPU).
class PatternsInstance : public Workload<PatternsBody, PatternsRecord> {
 public:
  PatternsInstance(int pattern, std::uint32_t blocks, std::uint32_t work);

  std::vector<Task> initial_tasks() const override;
  Verification verify() const override;
  std::size_t record_count(std::uint32_t) const override { return blocks_; }
  PatternsBody body(PatternsRecord* records) const override { return {records, work_}; }
  void collect(std::vector<std::vector<PatternsRecord>> per_device, const ExecPlan& plan,
               const ExecOutput& out) override;

 private:
  int pattern_;
  std::uint32_t blocks_;
  std::uint32_t work_;
  std::uint32_t block_size_ = 0;  // of the last run: the checksum depends on it
  std::vector<PatternsRecord> records_;
};

std::unique_ptr<ScenarioOf<PatternsInstance>> make_scenario();

}  // namespace gpulb::scenarios::patterns
