// The `uts` scenario: the Unbalanced Tree Search benchmark (uts_body.hpp) with the sample trees
// of the UTS distribution (sample_trees.sh) as presets, checked against a sequential search on
// the host and against the published counts.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpulb/scenario.hpp"
#include "uts/uts_body.hpp"

namespace gpulb::scenarios::uts {

struct TreeCounts {
  std::uint64_t nodes = 0;
  std::uint64_t leaves = 0;
  std::uint64_t max_depth = 0;
  bool operator==(const TreeCounts&) const = default;
};

// A sample tree of the UTS distribution: its parameters and its published statistics.
struct Preset {
  const char* name;
  const char* description;
  TreeParams params;
  TreeCounts published;
  bool large;
  // the most nodes at one depth (a static list's widest generation), counted here  // ~100 million nodes: for the GPU; the host reference is skipped by default
  std::uint64_t widest = 0;
};
const std::vector<Preset>& presets();
const Preset* find_preset(const std::string& name);

// Depth-first, iterative (T3L is 17,844 levels deep), one thread. `widest`, where given, receives
// the most nodes at one depth.
TreeCounts sequential_search(const TreeParams& p, std::uint64_t* widest = nullptr);

// One UtsCounts record a worker, summed by verify().
class UtsInstance : public Workload<UtsBody, UtsCounts> {
 public:
  UtsInstance(std::string tree, TreeParams params, const Preset* preset, bool reference);

  std::vector<Task> initial_tasks() const override;
  Verification verify() const override;
  // The published count of a preset; for a custom tree the sequential search's (run here, before
  // the run, when reference is on: the trace buffers are sized from it); else 0, unknown. Under
  // leaves=inline it is an upper bound (leaves counted by their parents run no task).
  std::uint64_t expected_tasks() const override;
  // A preset's counted widest level, or a searched custom tree's; 0 under leaves=inline (its
  // generations hold only the nodes with children and the leaves of exponential and cyclic shapes).
  std::uint64_t widest_generation() const override;
  bool spawns() const override { return true; }
  std::size_t record_count(std::uint32_t workers) const override { return workers; }
  UtsBody body(UtsCounts* counts) const override { return {params_, counts, inline_leaves_}; }
  void set_inline_leaves(bool on) { inline_leaves_ = on; }
  void collect(std::vector<std::vector<UtsCounts>> per_device, const ExecPlan& plan,
               const ExecOutput& out) override;

 private:
  std::string tree_;
  TreeParams params_;
  const Preset* preset_;
  bool reference_;
  bool inline_leaves_ = false;  // leaves=inline (UtsBody::inline_leaves)
  std::vector<UtsCounts> counts_;
  std::uint64_t tasks_run_ = 0;
  std::map<std::string, std::uint64_t> metrics_;
  mutable std::optional<TreeCounts> reference_counts_;
  mutable std::uint64_t reference_widest_ = 0;
};

std::unique_ptr<ScenarioOf<UtsInstance>> make_scenario();

}  // namespace gpulb::scenarios::uts
