#include "uts/uts.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <nlohmann/json.hpp>

namespace gpulb::scenarios::uts {

namespace {

TreeParams make(int t, int a, int d, double b, int r, double q = 15.0 / 64.0, int m = 4) {
  TreeParams p;
  p.t = t;
  p.a = a;
  p.d = d;
  p.b = b;
  p.r = r;
  p.q = q;
  p.m = m;
  return p;
}

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> s = [] {
    std::vector<ParamSpec> v;
    std::vector<std::string> names;
    std::string range;
    for (const Preset& p : presets()) {
      names.push_back(p.name);
      range += std::string(p.name) + "|";
    }
    names.push_back("custom");
    range += "custom";
    v.push_back(
        {"tree",
         "a sample tree of the UTS distribution, or custom (then t, a, d, b, r, q, m apply)", "T1",
         range, 0, 0, names});
    v.push_back(
        {"t", "custom: tree type, 0 binomial, 1 geometric, 2 hybrid", "1", "0..2", 0, 2, {}});
    v.push_back({"a",
                 "custom: geometric shape, 0 linear, 1 exponential, 2 cyclic, 3 fixed",
                 "0",
                 "0..3",
                 0,
                 3,
                 {}});
    v.push_back({"d", "custom: geometric depth bound (gen_mx)", "6", "1..100000", 1, 100000, {}});
    v.push_back(
        {"b", "custom: root branching factor b_0 (a real number)", "4", "0..100000", 0, 0, {}});
    v.push_back({"r", "custom: root seed", "0", "0..2147483647", 0, 2147483647, {}});
    v.push_back({"q",
                 "custom: binomial probability of a non-leaf (a real number)",
                 "0.234375",
                 "0..1",
                 0,
                 0,
                 {}});
    v.push_back({"m", "custom: binomial children of a non-leaf", "4", "0..100", 0, 100, {}});
    v.push_back({"leaves",
                 "a leaf child is a task (task: a task per node, as UTS and the papers) or is "
                 "counted by its parent's "
                 "task (inline: 5x fewer tasks on T1, T1L and T3L, 8x on T3; the exponential and "
                 "cyclic shapes, T2 and T2L, "
                 "keep their leaves as tasks; nodes/s still counts every node)",
                 "task",
                 "task|inline",
                 0,
                 0,
                 {"task", "inline"}});
    v.push_back({"reference",
                 "run the sequential host search to check the result: auto skips it for the large "
                 "presets (T1L, T2L, T3L, T1XL), which are checked against their published counts",
                 "auto",
                 "auto|on|off",
                 0,
                 0,
                 {"auto", "on", "off"}});
    return v;
  }();
  return s;
}

class UtsScenario : public ScenarioOf<UtsInstance> {
 public:
  std::string default_policy(const ParamMap&) const override { return "work-stealing"; }
  std::string name() const override { return "uts"; }
  std::string description() const override {
    return "Unbalanced Tree Search (Olivier et al., LCPC 2006): an implicit random tree, SHA-1 "
           "splittable streams, "
           "one task per node spawning its children. Presets are the UTS distribution's sample "
           "trees.";
  }
  const std::vector<ParamSpec>& params() const override { return specs(); }
  bool param_applies(const std::string& name, const ParamMap& params) const override {
    static const std::set<std::string> shape = {"t", "a", "d", "b", "r", "q", "m"};
    return !shape.count(name) ||
           find_preset(choice_param(params, find_spec(specs(), "tree"))) == nullptr;
  }
  // The root: a tree is implicit (a node is its hash state, made when its parent runs), counted
  // in one record a worker, and the host's reference search keeps only its path's siblings.
  // Measured (CPU backend, work-stealing, 2 workers, --no-trace): 8.4 MiB resident for T5 (4.1 M
  // nodes) and for a custom tree of 26.8 M nodes alike, what gpulb takes with no data.
  DataSize data_size(const ParamMap&) const override { return {1, 0, {}}; }
  // A node has a few children (4 on average in the sample trees), each hashed by one thread: one
  // warp is plenty, and smaller blocks mean more workers. Measured on an H100 (T1L,
  // work-stealing): 32 threads 499 M nodes/s, 64 threads 290 M/s, 128 threads 173 M/s.
  std::uint32_t default_block_size(const ParamMap&) const override { return 32; }
  std::unique_ptr<UtsInstance> instantiate(const ParamMap& params) const override {
    const std::string tree = choice_param(params, find_spec(specs(), "tree"));
    const std::string ref = choice_param(params, find_spec(specs(), "reference"));
    const Preset* preset = find_preset(tree);
    TreeParams p;
    if (preset) {
      for (const char* k : {"t", "a", "d", "b", "r", "q", "m"}) {
        if (params.count(k)) {
          throw ConfigError(std::string("parameter '") + k +
                            "' applies to tree=custom only (tree=" + tree +
                            " is a sample tree with fixed parameters)");
        }
      }
      p = preset->params;
    } else {
      auto i = [&](const char* k) {
        return static_cast<int>(int_param(params, find_spec(specs(), k)));
      };
      p = make(i("t"), i("a"), i("d"), real_param(params, find_spec(specs(), "b"), 0, 100000),
               i("r"), real_param(params, find_spec(specs(), "q"), 0, 1), i("m"));
    }
    const bool reference = ref == "on" || (ref == "auto" && !(preset && preset->large));
    auto instance = std::make_unique<UtsInstance>(tree, p, preset, reference);
    instance->set_inline_leaves(choice_param(params, find_spec(specs(), "leaves")) == "inline");
    return instance;
  }
};

nlohmann::json counts_json(const TreeCounts& c) {
  return {{"nodes", c.nodes}, {"leaves", c.leaves}, {"max_depth", c.max_depth}};
}

}  // namespace

// sample_trees.sh of UTS 2.1 (T1..T5 "small", ~4 million nodes; T1L..T3L "large", ~100 million;
// T1XL "extra large", 1.6 billion). The last number is the widest level, counted by
// sequential_search (tests/scenarios check the small trees' against it).
const std::vector<Preset>& presets() {
  static const std::vector<Preset> p = {
      {"T1", "geometric, fixed", make(1, 3, 10, 4, 19), {4130071, 3305118, 10}, false, 3098802},
      {"T2", "geometric, cyclic", make(1, 2, 16, 6, 502), {4117769, 2342762, 81}, false, 373049},
      {"T3",
       "binomial",
       make(0, 0, 6, 2000, 42, 0.124875, 8),
       {4112897, 3599034, 1572},
       false,
       6896},
      {"T4", "hybrid", make(2, 0, 16, 6, 1, 0.234375, 4), {4132453, 3108986, 134}, false, 249265},
      {"T5",
       "geometric, linear decrease",
       make(1, 0, 20, 4, 34),
       {4147582, 2181318, 20},
       false,
       727387},
      {"T1L",
       "geometric, fixed (large)",
       make(1, 3, 13, 4, 29),
       {102181082, 81746377, 13},
       true,
       76635666},
      {"T2L",
       "geometric, cyclic (large)",
       make(1, 2, 23, 7, 220),
       {96793510, 53791152, 67},
       true,
       17413958},
      {"T3L",
       "binomial (large)",
       make(0, 0, 6, 2000, 7, 0.200014, 5),
       {111345631, 89076904, 17844},
       true,
       18700},
      {"T1XL",
       "geometric, fixed (extra large)",
       make(1, 3, 15, 4, 29),
       {1635119272, 1308100063, 15},
       true,
       1226334073},
  };
  return p;
}

const Preset* find_preset(const std::string& name) {
  for (const Preset& p : presets()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

TreeCounts sequential_search(const TreeParams& p, std::uint64_t* widest) {
  struct Node {
    RngState s;
    int depth;
    int type;
  };
  TreeCounts c;
  std::vector<std::uint64_t> width;
  std::vector<Node> stack;
  const Task root = root_task(p);
  stack.push_back({load_state(root), 0, root.flags});
  while (!stack.empty()) {
    const Node n = stack.back();
    stack.pop_back();
    ++c.nodes;
    c.max_depth = std::max<std::uint64_t>(c.max_depth, static_cast<std::uint64_t>(n.depth));
    if (widest != nullptr) {
      if (width.size() <= static_cast<std::size_t>(n.depth))
        width.resize(static_cast<std::size_t>(n.depth) + 1, 0);
      ++width[static_cast<std::size_t>(n.depth)];
    }
    const int k = num_children(p, n.type, n.depth, n.s);
    if (k == 0) ++c.leaves;
    const int type = child_type(p, n.depth);
    for (int i = 0; i < k; ++i) stack.push_back({rng_spawn(n.s, i), n.depth + 1, type});
  }
  if (widest != nullptr)
    *widest = width.empty() ? 0 : *std::max_element(width.begin(), width.end());
  return c;
}

UtsInstance::UtsInstance(std::string tree, TreeParams params, const Preset* preset, bool reference)
    : tree_(std::move(tree)), params_(params), preset_(preset), reference_(reference) {}

std::vector<Task> UtsInstance::initial_tasks() const { return {root_task(params_)}; }

std::uint64_t UtsInstance::expected_tasks() const {
  if (preset_) return preset_->published.nodes;
  if (!reference_) return 0;
  if (!reference_counts_) reference_counts_ = sequential_search(params_, &reference_widest_);
  return reference_counts_->nodes;
}

std::uint64_t UtsInstance::widest_generation() const {
  if (inline_leaves_) return 0;
  if (preset_) return preset_->widest;
  if (!reference_) return 0;
  expected_tasks();  // the reference search counts the levels
  return reference_widest_;
}

void UtsInstance::collect(std::vector<std::vector<UtsCounts>> per_device, const ExecPlan&,
                          const ExecOutput& out) {
  counts_.clear();
  for (const auto& device : per_device) counts_.insert(counts_.end(), device.begin(), device.end());
  tasks_run_ = out.tasks_run;
  metrics_ = out.metrics;
}

Verification UtsInstance::verify() const {
  TreeCounts got;
  std::uint64_t visited_inline = 0;
  for (const UtsCounts& c : counts_) {
    visited_inline += c.visited_inline;
    // a leaf counted by its parent (leaves=inline) ran no task
    got.nodes += c.nodes + c.visited_inline;
    got.leaves += c.leaves + c.visited_inline;
    got.max_depth = std::max<std::uint64_t>(got.max_depth, c.max_depth);
  }
  if (reference_ && !reference_counts_)
    reference_counts_ = sequential_search(params_, &reference_widest_);
  std::string problem;
  auto describe = [](const TreeCounts& c) {
    return std::to_string(c.nodes) + " nodes, " + std::to_string(c.leaves) + " leaves, depth " +
           std::to_string(c.max_depth);
  };
  if (reference_counts_ && got != *reference_counts_) {
    problem = "the run found " + describe(got) + "; the sequential search " +
              describe(*reference_counts_);
  } else if (preset_ && got != preset_->published) {
    problem = "the run found " + describe(got) + "; UTS publishes " + describe(preset_->published) +
              " for " + tree_;
  } else if (tasks_run_ + visited_inline != got.nodes) {
    problem = std::to_string(tasks_run_) + " tasks ran and " + std::to_string(visited_inline) +
              " leaves were counted by their parent's task, for " + std::to_string(got.nodes) +
              " nodes (one task a node, or a leaf counted by its parent under leaves=inline)";
  }
  Verification v;
  v.ok = problem.empty();
  std::string against;
  if (reference_counts_) against = "the sequential host search";
  if (preset_)
    against += std::string(against.empty() ? "" : " and ") + "the published " + tree_ + " counts";
  if (!v.ok) {
    v.message = problem;
  } else if (against.empty()) {
    // One task a node is all that held: the counts themselves were compared with nothing.
    v.ok = v.checked = false;
    v.message = "not checked: " + describe(got) + ", but reference=off and tree=" + tree_ +
                " has no published counts to compare with (use reference=on)";
  } else {
    v.message = describe(got) + ": matches " + against;
  }
  nlohmann::json r = counts_json(got);
  r["tree"] = tree_;
  r["t"] = params_.t;
  r["a"] = params_.a;
  r["d"] = params_.d;
  r["b"] = params_.b;
  r["r"] = params_.r;
  r["q"] = params_.q;
  r["m"] = params_.m;
  r["tasks"] = tasks_run_;
  r["inline_leaves"] = inline_leaves_;
  r["visited_inline"] = visited_inline;
  if (reference_counts_) r["reference"] = counts_json(*reference_counts_);
  if (preset_) r["published"] = counts_json(preset_->published);
  r["policy_metrics"] = metrics_;
  v.result_json = r.dump();
  return v;
}

std::unique_ptr<ScenarioOf<UtsInstance>> make_scenario() { return std::make_unique<UtsScenario>(); }

}  // namespace gpulb::scenarios::uts
