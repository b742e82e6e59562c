// The lesson table. Its figures come from docs/benchmarks.md and docs/papers.md (measured), or
// from the shipped traces themselves (the viewer computes those again on load); none is invented.
#include "gpulb/builtin/lessons.hpp"

#include <algorithm>
#include <iterator>

namespace gpulb::builtin {
namespace {

const std::vector<Lesson>& table() {
  static const std::vector<Lesson> kLessons = {
      {"chen-fig7",
       "Chen Figure 7: the hardware block scheduler against a task queue, on unbalanced blocks",
       "Chen, Villa, Krishnamoorthy & Gao, IPDPS 2010, section 6.1, Figure 7",
       "With pattern P4 (75% of the blocks nullified, so 75% less work), the task queue cut the runtime by "
       "74.5% and the CUDA block scheduler (one block per task) by only 48.4%: \"CUDA cannot schedule new "
       "TBs immediately when some TBs terminate, while our task queue scheme can\".",
       {"hardware block scheduler (one block per task)", "patterns-P4-hardware-h100.gpulb", "patterns", "hardware",
        {"pattern=P4", "blocks=8000", "work=400"}},
       {"task queue (paper scheme, persistent blocks fed by the host)", "patterns-P4-task-queue-h100.gpulb", "patterns",
        "task-queue", {"pattern=P4", "blocks=8000", "work=400", "queue_capacity=1024"}},
       "A is one launch of 20,000 blocks: its SM rows stay white (busy) until a short tail, a nullified "
       "block ends at once and the next takes its slot. B's 2,112 persistent blocks live through the "
       "whole run, but their rows are mostly red (idle spells, failed dequeues) while the host track "
       "above them enqueues batch after batch, and the Findings tab shows the queues empty most of that "
       "time: each batch is claimed within a microsecond or two, and the blocks wait for the host to copy the "
       "next one in instead of computing. Compare the makespans and "
       "the efficiency rows above; then zoom into B to see the batches arrive.",
       "On an H100 the claim does not hold (docs/benchmarks.md, 100,000 blocks, tracing off): the hardware "
       "scheduler saves 73.3% on P4 (4.726 -> 1.260 ms; the ideal is 75%) and beats the task queue "
       "(1.518 ms, 68.2%). It retires blocks at about 1.2 ns each and backfills a finished block's slot at "
       "once; a host-fed queue is bound by how fast the host feeds it. The 2009 advantage came from a block "
       "scheduler that no longer exists.",
       {{Quantity::Makespan, Expectation::BBelowA, 0.0,
         "the task queue's P4 run shorter than the block scheduler's (74.5% against 48.4% saved on P4)"}},
       ""},
      {"chen-multi-gpu",
       "Chen section 6.2: a host task pool balancing two GPUs",
       "Chen, Villa, Krishnamoorthy & Gao, IPDPS 2010, section 6.2, Figures 9 and 10",
       "A host task pool with one control thread per GPU, each feeding two queues on its GPU, \"achieves "
       "nearly linear speedup, load balance\" over several GPUs (Figure 10: the busy times of the GPUs "
       "nearly equal).",
       {"task queue, the paper's scheme (copies and an event wait per batch)", "patterns-P3-task-queue-paper-2xh200.gpulb",
        "", "", {}},
       {"task queue, gpulb's modern variant (mapped-memory doorbells, device-side publish)",
        "patterns-P3-task-queue-modern-2xh200.gpulb", "", "", {}},
       "Both runs split pattern P3 (half the blocks nullified) over two H200s. Look at the two GPU groups "
       "of each timeline and the per-device busy time (Histograms, and the lesson's figures above): the "
       "pool keeps both GPUs busy until about the same time. Then compare how each variant is fed: the "
       "host tracks' enqueue batches and the queue levels under the lanes.",
       "The balance between GPUs holds on 2 x H200: the pool hands each control thread work as its GPU "
       "drains. What the feed costs changed: the paper scheme's enqueue takes 15-28 us a batch on an H100 "
       "(114.3 us in 2010), the modern variant's 0.1 us; with short tasks, though, the modern variant is "
       "slower, because its batches cross PCIe in one block's loads instead of the copy engine "
       "(docs/benchmarks.md, Figure 7 table: P3 4.403 against 2.455 ms on one H100). The multi-GPU variant "
       "has no CPU recipe: the CPU backend is one device.",
       {{Quantity::DeviceBusyMaxMin, Expectation::AtMost, 1.1, "the GPUs' busy times nearly equal (Figure 10; read here as max/min at most 1.1)"}},
       ""},
      {"grossman-tasks-per-sm",
       "Grossman: work stealing spreads tasks evenly over the SMs",
       "Grossman, a GPU work-stealing runtime (hybrid work-sharing and work-stealing), Figure 3",
       "Although the computation trees are unbalanced (NQueens: the deepest leaf 9.8x the shallowest), the "
       "SM with the most tasks runs only 1.6x as many as the SM with the least.",
       {"work stealing on UTS (63,914 nodes of a geometric tree)", "uts-geometric-d7-work-stealing-h100.gpulb", "uts",
        "work-stealing", {"tree=custom", "t=1", "a=3", "d=7", "b=4", "r=19"}},
       {"work stealing on N-Queens n=10 (few tasks a block)", "nqueens-10-work-stealing-h100.gpulb", "nqueens",
        "work-stealing", {"n=10", "cutoff=4", "symmetry=none"}},
       "Compare the rows \"tasks per SM max/min\" above, then open Histograms on each (trace A, then B in "
       "the trace chooser). UTS has about 15 tasks a block and comes out near Grossman's own figure; "
       "N-Queens n=10 has fewer tasks than blocks, so some SMs run one task and some none, and no policy "
       "could even that out. In the timeline, folded SM rows are heat maps: red where an SM's blocks idle, "
       "yellow marks where they stole; both runs spend most block-time looking for work (efficiency).",
       "Grossman's balance is reached and passed on an H100 when every block gets many tasks "
       "(docs/papers.md, docs/benchmarks.md): UTS T1L (102 M nodes) runs 558 M nodes/s with tasks per SM "
       "max/min 1.06 (T1, 4 M nodes: 1.09; Grossman saw 1.6). With few tasks per worker it is not: "
       "N-Queens n=14 (its whole tree, symmetry=none: 65 k tasks, 15 a block) shows max/min 1.80, a short run of unequal tasks rather "
       "than a throughput test.",
       {{Quantity::TasksPerSmMaxMin, Expectation::AtMost, 1.6, "tasks per SM max/min 1.6"}},
       ""},
      {"mohan-static-vs-stealing",
       "Mohan & Gopalan: a static task list against work stealing, in time and in memory",
       "Mohan & Gopalan, IJISA 2014, Figures 6 and 7 (Connect-Four)",
       "ABP work stealing outperformed the static task list (twice as fast at 7 moves of lookahead), and "
       "the static list needs room for every task of a generation: about 800,000 tasks against 12,000 for "
       "the deques.",
       {"static task list (a launch per generation)", "connect4-4-static-list-h100.gpulb", "connect4", "static-list",
        {"lookahead=4"}},
       {"work stealing (ABP deques, one per block)", "connect4-4-work-stealing-h100.gpulb", "connect4", "work-stealing",
        {"lookahead=4"}},
       "A relaunches a grid per generation of the game tree: the launches on the host track, and a gap "
       "between generations while the host launches the next. B is one persistent grid: blocks push their "
       "children on their own deques and steal (arrows when zoomed in) when they run dry. Compare the "
       "makespans, and see how many of A's blocks ran at all (the histograms' note).",
       "Both halves depend on the size, and the memory half on the number of workers too. On an H100 "
       "(docs/benchmarks.md, Connect-Four, median of 3 untraced runs) work stealing takes 0.49x the static "
       "list's time at lookahead 4 (285.2 us against 580.8 us), 0.66x at 6, and ties at the paper's 7 "
       "(2842.3 us against 2914.9 us). Its deques need a slot per block per level of depth, and an H100 "
       "runs 2,640 blocks: 50,161 slots against the static list's 2,401 at lookahead 4, 89,761 against "
       "691,543 at 7 (7.7x fewer; the paper's 12,000 were 50 slots for each of its 240 blocks). On a 102 M-node UTS "
       "tree the static list is the fastest policy (696 against 559 M nodes/s) and needs 76.6 M slots "
       "(4.9 GB) against 0.58 M.",
       {{Quantity::Makespan, Expectation::BBelowA, 0.0, "work stealing 2x faster (7 moves of lookahead)"},
        {Quantity::PeakTaskSlots, Expectation::BBelowA, 0.0, "800,000 task slots against 12,000 (67x fewer)"}},
       "lookahead"},
      {"gcharm-combining",
       "G-Charm: combining work requests into launches, adaptively or every K requests",
       "Rengasamy & Vadhiyar (G-Charm), section 3.1, Figure 2",
       "Combining requests into a kernel when the count reaches the GPU's occupancy bound or when arrivals "
       "pause (gap over twice the largest seen) gave 8-38% shorter runs than combining every 100 requests "
       "(the static strategy) on ChaNGa's small dataset, about 19% on the large one.",
       {"adaptive combining (up to the resident blocks, or on a pause)", "nbody-20k-combining-adaptive-h100.gpulb",
        "nbody", "combining", {"particles=20000", "steps=2", "strategy=adaptive", "transfer=reuse-sorted"}},
       {"static combining (every K = 100 requests)", "nbody-20k-combining-static-h100.gpulb", "nbody", "combining",
        {"particles=20000", "steps=2", "strategy=static", "transfer=reuse-sorted"}},
       "The host track \"GPU 0 control thread\" holds every combined launch with its size and reason (full, "
       "timeout, static, drain) and its transfers; the request blocks lie on the SM lanes below. Adaptive "
       "launches up to 1,584 requests (the resident blocks) at a time, static 100: count the launches in "
       "the figures above. Then look at the row \"no task running\": in both runs the GPU is idle almost "
       "all the time, waiting for the host's tree walks to emit requests.",
       "On an H100 (docs/benchmarks.md, 200,000 particles) adaptive combining ran at 0.88x to 1.04x "
       "static's speed (static's total time over its own) in three runs, not the paper's 8-38% less time, though it does the same work with 7x "
       "less GPU time (23.0 ms of kernels and copies against 161.3 ms). In these two small shipped runs the "
       "adaptive one is even "
       "the longer. With the GPU idle nearly all of both runs, the host producing requests sets the pace, "
       "and when to launch matters little; the paper's gain needs a GPU kept busy by the requests.",
       {{Quantity::Makespan, Expectation::ABelowB, 0.0, "adaptive 8-38% shorter than static"}},
       ""},
  };
  return kLessons;
}

}  // namespace

std::span<const Lesson> lessons() { return table(); }

const Lesson* find_lesson(std::string_view name) {
  for (const Lesson& l : table()) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

std::string lessons_help() {
  std::string out;
  for (const Lesson& l : table()) {
    std::string name(l.name);
    name.resize(std::max<std::size_t>(name.size() + 2, 26), ' ');
    out += "  " + name + std::string(l.title) + "\n";
  }
  return out;
}

std::vector<std::filesystem::path> shipped_trace_dirs() {
  std::vector<std::filesystem::path> dirs;
  // An installed tree moved elsewhere: bin/gpulb beside share/gpulb/traces.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.has_parent_path()) dirs.push_back(exe.parent_path().parent_path() / "share" / "gpulb" / "traces");
  dirs.emplace_back(GPULB_INSTALLED_TRACES);
  dirs.emplace_back(GPULB_SOURCE_TRACES);
  return dirs;
}

std::optional<std::filesystem::path> find_shipped_trace(std::string_view file) {
  for (const auto& dir : shipped_trace_dirs()) {
    std::error_code ec;
    const std::filesystem::path p = dir / std::string(file);
    if (std::filesystem::is_regular_file(p, ec)) return p;
  }
  return std::nullopt;
}

namespace {

ParamMap recipe_params(const LessonRun& run, const ParamMap& overrides) {
  ParamMap params;
  for (std::string_view kv : run.params) {
    const auto eq = kv.find('=');
    params[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  for (const auto& [name, value] : overrides) params[name] = value;
  return params;
}

}  // namespace

std::optional<RunConfig> lesson_recipe(const LessonRun& run, Backend backend, const ParamMap& overrides) {
  if (run.scenario.empty()) return std::nullopt;
  RunConfig cfg;
  cfg.scenario = std::string(run.scenario);
  cfg.policy = std::string(run.policy);
  cfg.backend = backend;
  cfg.params = recipe_params(run, overrides);
  return cfg;
}

std::string recipe_command(const LessonRun& run, Backend backend, const ParamMap& overrides) {
  if (run.scenario.empty()) return "";
  std::string cmd = "gpulb run " + std::string(run.scenario) + " --backend " + std::string(to_string(backend)) +
                    " --policy " + std::string(run.policy);
  for (const auto& [name, value] : recipe_params(run, overrides)) cmd += " --param " + name + "=" + value;
  return cmd;
}

}  // namespace gpulb::builtin
