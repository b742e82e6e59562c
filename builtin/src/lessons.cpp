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
       "With pattern P4 (75% of the blocks nullified, so 75% less work), the task queue cut the "
       "runtime by "
       "74.5% and the CUDA block scheduler (one block per task) by only 48.4%: \"CUDA cannot "
       "schedule new "
       "TBs immediately when some TBs terminate, while our task queue scheme can\".",
       {"hardware block scheduler (one block per task)",
        "patterns-P4-100k-hardware-h100.gpulb",
        "patterns",
        "hardware",
        {"pattern=P4", "blocks=8000", "work=400"}},
       {"task queue (paper scheme, persistent blocks fed by the host)",
        "patterns-P4-100k-task-queue-paper-h100.gpulb",
        "patterns",
        "task-queue",
        {"pattern=P4", "blocks=8000", "work=400", "variant=paper", "queue_capacity=4096"}},
       "The key figure is Figure 7 itself: each scheduler's time on every pattern as a share of "
       "its own P0 "
       "time, the line across each pair the work the pattern leaves, the outlines at P4 the "
       "paper's 2009 figures. "
       "In the two P4 traces (100,000 blocks): A is one launch, a nullified block ends at once and "
       "the next takes "
       "its slot, so its SM rows stay busy to a short tail. B's 2,112 persistent blocks live "
       "through the whole "
       "run, but their rows are mostly idle while the host track above them enqueues batch after "
       "batch: the "
       "blocks wait on the host-fed queue. Zoom into B to see the batches arrive.",
       "On an H100 the claim is reversed (the key figure, recorded with tracing off, 3 runs a "
       "cell): the "
       "hardware scheduler's P4 takes 26.8% of its P0 time, close to the 25% of work left, and the "
       "paper's "
       "task queue 33.6%, 1.46x the hardware's time in the traces. It retires blocks at about 1.2 "
       "ns each and "
       "backfills a finished block's slot at once; a host-fed queue is bound by how fast the host "
       "feeds it. The "
       "2009 advantage came from a block scheduler that no longer exists (docs/benchmarks.md, "
       "Figure 7).",
       {{Quantity::Makespan, Expectation::BBelowA, 0.0,
         "the task queue's P4 run shorter than the block scheduler's (74.5% against 48.4% saved on "
         "P4)"}},
       "pattern",
       // Figure 7 itself: every pattern, at the sizes of docs/benchmarks.md's Figure 7 table.
       LessonSeries{"pattern",
                    {"P0", "P1", "P2", "P3", "P4"},
                    {"blocks=100000", "work=4000"},
                    SeriesFigure::ShareOfFirst,
                    "chen-fig7-h100.json",
                    false,
                    // "runtime reduction of 74.5% and 48.4%" on P4: 25.5% and 51.6% of P0's time
                    {PaperMark{"P4", 0.516, 0.255}},
                    "P4"},
       TraceFigure::None,
       {{"A: its short tail", 0, "tail"}, {"B: the host's batches arriving", 1, "batches"}}},
      {"chen-multi-gpu",
       "Chen Figures 9 and 10: molecular dynamics over several GPUs, a static split against a task "
       "queue",
       "Chen, Villa, Krishnamoorthy & Gao, IPDPS 2010, section 6.3.2, Figures 8, 9 and 10",
       "On 4 GPUs and 512K atoms the task queue ran 2.45x faster than Solution 1 (each GPU a "
       "fixed, equal share of "
       "the blocks), achieved \"nearly linear speedup\" with more GPUs, while Solution 1 did not, "
       "and kept the GPUs' "
       "busy times nearly equal where Solution 1's load among GPUs was \"extremely unbalanced\" "
       "(Figure 10).",
       {"Solution 1: the atoms' blocks split evenly over the GPUs, a block per task",
        "md-64k-solution1-4xh100.gpulb",
        "md",
        "hardware",
        {"atoms=16384", "solution=1", "pairs=all", "sample=16", "steps=0"}},
       {"Solution TQ: a host task pool feeding each GPU's task queues",
        "md-64k-tq-4xh100.gpulb",
        "md",
        "task-queue",
        {"atoms=16384", "solution=tq", "pairs=all", "sample=16", "steps=0"}},
       "The key figure's left half is Figure 9: each solution's speedup over its own one-GPU time, "
       "against the "
       "linear line. Its right half is Figure 10: each GPU's busy time at the most GPUs. In the "
       "two shipped 4-GPU "
       "traces (64K atoms) open Compare: every GPU group ends at about the same time under both "
       "solutions.",
       "Solution 1 is not unbalanced here. Every atom tests all N atoms (the paper's Theta(N^2) "
       "force loop), so "
       "every 128-atom task costs the same within a few percent and equal contiguous shares are "
       "already an even "
       "split. On 4 H100s at 512K atoms (the key figure, 2 runs a cell) each GPU's busy time is "
       "within 0.2% of "
       "the others' under both solutions; Solution 1 scales 3.13x from 1 to 4 GPUs and the task "
       "queue 3.17x, "
       "and at 4 GPUs the task queue runs at 0.97x Solution 1's speed: there is no imbalance for "
       "it to remove. "
       "Neither is linear, since 512K atoms are one wave of blocks on 4 GPUs (docs/benchmarks.md, "
       "md Figure 9).",
       {{Quantity::DeviceBusyMaxMin, Expectation::AtMost, 1.1,
         "the GPUs' busy times nearly equal under the task queue, Solution 1's \"extremely "
         "unbalanced\" (Figure 10; read here as max/min at most 1.1)"},
        {Quantity::Makespan, Expectation::BBelowA, 0.0,
         "the task queue 2.45x faster than Solution 1 on 4 GPUs (512K atoms)"}},
       "",
       LessonSeries{"gpus",
                    {"1", "2", "4"},
                    {"atoms=524288"},
                    SeriesFigure::GpuScaling,
                    "chen-multi-gpu-4gpus.json",
                    true,
                    {},
                    "4"},
       TraceFigure::None,
       {{"A: every GPU ends together", 0, "tail"}, {"B: every GPU ends together", 1, "tail"}}},
      {"grossman-tasks-per-sm",
       "Grossman: work stealing spreads tasks evenly over the SMs",
       "Grossman, a GPU work-stealing runtime (hybrid work-sharing and work-stealing), Figure 3",
       "Although the computation trees are unbalanced (NQueens: the deepest leaf 9.8x the "
       "shallowest), the "
       "SM with the most tasks runs only 1.6x as many as the SM with the least.",
       {"work stealing (persistent blocks, a deque each, stealing when dry)",
        "nqueens-14-work-stealing-h100.gpulb",
        "nqueens",
        "work-stealing",
        {"n=14", "cutoff=5", "symmetry=none"}},
       {"static list (no stealing: a launch per generation, the block scheduler places each task)",
        "nqueens-14-static-list-h100.gpulb",
        "nqueens",
        "static-list",
        {"n=14", "cutoff=5", "symmetry=none"}},
       "Both runs solve the same board, N-Queens n=14 (BOTS's whole tree, a task per placement of "
       "the first five "
       "rows). The key figure counts the tasks each SM ran, Grossman's way: the busiest SM over "
       "the idlest. "
       "Work stealing starts from one task on one block and spreads the tree by stealing; the "
       "static list never "
       "steals, and the hardware block scheduler deals each generation's tasks out to the SMs. "
       "Open Histograms "
       "for the tasks per SM of each run (trace A, then B).",
       "On an H100 the claim does not hold for this tree: work stealing's busiest SM ran 2.04x the "
       "tasks of its "
       "idlest (724 against 355), and the static list, which never steals, 1.99x: the same spread, "
       "because "
       "tasks differ in length and an SM with long ones runs fewer. Both keep the SMs busy; "
       "counting tasks "
       "is not the measure of balance it was on 14 SMs. With many tasks a block work stealing does "
       "reach it: "
       "UTS T1L (102 M nodes) gives max/min 1.06 (docs/benchmarks.md).",
       {{Quantity::TasksPerSmMaxMin, Expectation::AAtMost, 1.6,
         "tasks per SM max/min 1.6 under work stealing"}},
       "",
       std::nullopt,
       TraceFigure::TasksPerSm,
       {{"A: stealing spreads the tree", 0, "spread"},
        {"A: steals, close up", 0, "steals"},
        {"B: one generation's launch", 1, "launches"}}},
      {"mohan-static-vs-stealing",
       "Mohan & Gopalan: a static task list against work stealing, in time and in memory",
       "Mohan & Gopalan, IJISA 2014, Figures 6 and 7 (Connect-Four)",
       "ABP work stealing outperformed the static task list (twice as fast at 7 moves of "
       "lookahead), and "
       "the static list needs room for every task of a generation: about 800,000 tasks against "
       "12,000 for "
       "the deques.",
       {"static task list (a launch per generation)",
        "connect4-4-static-list-h200.gpulb",
        "connect4",
        "static-list",
        {"lookahead=4"}},
       {"work stealing (ABP deques, one per block)",
        "connect4-4-work-stealing-h200.gpulb",
        "connect4",
        "work-stealing",
        {"lookahead=4"}},
       "A relaunches a grid per generation of the game tree: the launches on the host track, and a "
       "gap "
       "between generations while the host launches the next. B is one persistent grid: blocks "
       "push their "
       "children on their own deques and steal (arrows when zoomed in) when they run dry. Compare "
       "the "
       "makespans, and see how many of A's blocks ran at all (the histograms' note).",
       "Both halves depend on the size, and the memory half on the number of workers too. On an "
       "H100 "
       "(docs/benchmarks.md, Connect-Four, median of 3 untraced runs) work stealing takes 0.49x "
       "the static "
       "list's time at lookahead 4 (285.2 us against 580.8 us), 0.66x at 6, and ties at the "
       "paper's 7 "
       "(2842.3 us against 2914.9 us). Its deques need a slot per block per level of depth, and an "
       "H100 "
       "runs 2,640 blocks: 50,161 slots against the static list's 2,401 at lookahead 4, 89,761 "
       "against "
       "691,543 at 7 (7.7x fewer; the paper's 12,000 were 50 slots for each of its 240 blocks). On "
       "a 102 M-node UTS "
       "tree the static list is the fastest policy (696 against 559 M nodes/s) and needs 76.6 M "
       "slots "
       "(4.9 GB) against 0.58 M.",
       {{Quantity::Makespan, Expectation::BBelowA, 0.0,
         "work stealing 2x faster (7 moves of lookahead)"},
        {Quantity::PeakTaskSlots, Expectation::BBelowA, 0.0,
         "fewer task slots for the deques (the paper, with 240 blocks: 12,000 against 800,000, 67x "
         "fewer)"}},
       "lookahead",
       // Figures 6 and 7: time and task slots from lookahead 4 to the paper's 7.
       LessonSeries{"lookahead",
                    {"4", "5", "6", "7"},
                    {},
                    SeriesFigure::TimeAndSlots,
                    "mohan-static-vs-stealing-h100.json",
                    false,
                    {PaperMark{"7", 800000.0, 12000.0, true}},
                    "7"},
       TraceFigure::None,
       {{"A: the gap between generations", 0, "launches"}, {"B: steals, close up", 1, "steals"}}},
      {"gcharm-combining",
       "G-Charm: combining work requests into launches, adaptively or every K requests",
       "Rengasamy & Vadhiyar (G-Charm), section 3.1, Figure 2",
       "Combining requests into a kernel when the count reaches the GPU's occupancy bound or when "
       "arrivals "
       "pause (gap over twice the largest seen) gave 8-38% shorter runs than combining every 100 "
       "requests "
       "(the static strategy) on ChaNGa's small dataset, about 19% on the large one.",
       {"adaptive combining (up to the resident blocks, or on a pause)",
        "nbody-200k-combining-adaptive-h100.gpulb",
        "nbody",
        "combining",
        {"particles=20000", "steps=2", "strategy=adaptive", "transfer=reuse-sorted"}},
       {"static combining (every K = 100 requests)",
        "nbody-200k-combining-static-h100.gpulb",
        "nbody",
        "combining",
        {"particles=20000", "steps=2", "strategy=static", "transfer=reuse-sorted"}},
       "The key figure draws every launch of each run over time, its height the requests it "
       "combined: adaptive "
       "launches up to 1,584 requests (the resident blocks) when they are full or arrivals pause, "
       "static every "
       "100. The host track \"GPU 0 control thread\" holds each launch with its size and reason "
       "(full, "
       "timeout, static, drain) and its transfers; the request blocks lie on the SM lanes below.",
       "In the two shipped runs (200,000 particles on an H100) adaptive combining is 7.3% shorter "
       "(1.79 s "
       "against 1.93 s), just short of the paper's 8-38%; a second pair of runs the same day tied "
       "(1.735 s "
       "against 1.763 s). In both runs the GPU ran a request during under 5% of the run (the key "
       "figure): the host's "
       "tree walks set the pace, and when to launch matters little. No recording here is "
       "GPU-bound: a smaller "
       "opening angle (theta 0.3) grew the walks with the work (12.1 s adaptive against 10.1 s "
       "static). "
       "Adaptive does the same work in 53 launches instead of 802, with about 16x less time "
       "running requests on the GPU.",
       {{Quantity::Makespan, Expectation::AOverBAtMost, 0.92,
         "adaptive 8-38% shorter than static: at most 0.92 of its time"}},
       "",
       std::nullopt,
       TraceFigure::Launches,
       {{"A: adaptive launches", 0, "launches"},
        {"B: a launch every 100 requests", 1, "launches"}}},
      {"h100-block-scheduler-backfill",
       "gpulb's finding: an H100's block scheduler refills a finished block's slot at once",
       "gpulb's own measurement on an H100 (docs/benchmarks.md, the lessons' series), set against "
       "Chen et al. 2010, "
       "section 6.3.1",
       "When three blocks in four end at once (pattern P4), a block scheduler that starts the next "
       "block the moment "
       "one ends runs P4 in a quarter of the balanced pattern's time plus little: on an H100, at "
       "most 0.275 of P0's "
       "time (within 10% of the quarter of the work P4 keeps). Chen et al.'s GPU of 2009 took "
       "51.6%.",
       {"the block scheduler on P0 (every block does the work)",
        "patterns-P0-100k-hardware-h100.gpulb",
        "patterns",
        "hardware",
        {"pattern=P0", "blocks=8000", "work=400"}},
       {"the block scheduler on P4 (three blocks in four return at once)",
        "patterns-P4-100k-hardware-h100.gpulb",
        "patterns",
        "hardware",
        {"pattern=P4", "blocks=8000", "work=400"}},
       "The key figure sets P0 against P4 at several lengths of a block's work, the line across "
       "each pair the "
       "quarter of P0's time P4 would take if only its work counted. In the two traces (100,000 "
       "blocks of 4,000 "
       "steps) open Compare: in B the SM rows stay as busy as in A, with three quarters of the "
       "blocks gone; a "
       "nullified block ends at once and the next takes its slot.",
       "On an H100 the block scheduler's P4 run takes 26.8% of its P0 time at 4,000 steps a block "
       "(docs/benchmarks.md, "
       "Figure 7 series): the quarter of the work P4 keeps, plus the launch and the tail. The key "
       "figure shows "
       "where the claim ends: the shorter a block's work, the more of the run is the launch and "
       "the block "
       "scheduler's own cost, which P4 does not remove.",
       {{Quantity::Makespan, Expectation::BOverAAtMost, 0.275,
         "P4 at most 0.275 of P0's time (Chen's 2009 GPU: 0.516)"}},
       "work",
       LessonSeries{"work",
                    {"100", "400", "1000", "4000"},
                    {"blocks=100000"},
                    SeriesFigure::Time,
                    "h100-block-scheduler-backfill-h100.json",
                    false,
                    {},
                    "4000"},
       TraceFigure::None,
       {{"Both runs on one scale", 0, "run"}, {"B: P4's end", 1, "tail"}}},
      {"static-list-on-a-big-tree",
       "gpulb's finding: on a big tree the static list is fastest, and pays in memory",
       "gpulb's own measurement on an H100 (docs/papers.md, docs/benchmarks.md), after Mohan & "
       "Gopalan's memory argument",
       "On UTS T1L (102 M nodes) on an H100 the static list, a launch per generation of the tree, "
       "ran 696 M nodes/s "
       "against work stealing's 559 M, and needed 76.6 M task slots (4.9 GB) against 0.58 M: once "
       "a generation "
       "fills the GPU, relaunching costs little, and the memory grows with the widest generation.",
       {"static list (a launch per generation)",
        "uts-d7-static-list-h100.gpulb",
        "uts",
        "static-list",
        {"tree=custom", "t=1", "a=3", "d=7", "b=4", "r=19"}},
       {"work stealing (a deque per block)",
        "uts-d7-work-stealing-h100.gpulb",
        "uts",
        "work-stealing",
        {"tree=custom", "t=1", "a=3", "d=7", "b=4", "r=19"}},
       "The key figure grows the tree: a geometric tree (UTS T1's shape) of depth 7 to 10, 64 "
       "thousand to 4.1 "
       "million nodes. Watch the time bars cross as the tree grows and the slot bars part. In the "
       "two traces (depth "
       "7) the static list's launches sit on the host track, one per generation, with the SM rows "
       "idle between them.",
       "The claim is about size. On the 64-thousand-node tree of the traces the static list's "
       "launches and the "
       "gaps between them cost more than the tree's work; at T1L's 102 M nodes it is the fastest "
       "policy "
       "(docs/papers.md). The key figure shows where on the way the two meet on this H100.",
       {{Quantity::Makespan, Expectation::ABelowB, 0.0,
         "the static list faster: 696 against 559 M nodes/s on T1L"},
        {Quantity::PeakTaskSlots, Expectation::BBelowA, 0.0,
         "fewer task slots for work stealing (T1L: 0.58 M against 76.6 M)"}},
       "d",
       LessonSeries{"d",
                    {"7", "8", "9", "10"},
                    {},
                    SeriesFigure::TimeAndSlots,
                    "static-list-on-a-big-tree-h100.json",
                    false,
                    {},
                    "10"},
       TraceFigure::None,
       {{"A: launches, idle rows between", 0, "launches"}, {"B: steals, close up", 1, "steals"}}},
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
  if (!ec && exe.has_parent_path())
    dirs.push_back(exe.parent_path().parent_path() / "share" / "gpulb" / "traces");
  dirs.emplace_back(GPULB_INSTALLED_TRACES);
  dirs.emplace_back(GPULB_SOURCE_TRACES);
  return dirs;
}

std::vector<std::filesystem::path> shipped_lesson_dirs() {
  std::vector<std::filesystem::path> dirs;
  for (const auto& traces : shipped_trace_dirs()) dirs.push_back(traces.parent_path() / "lessons");
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

ParamMap param_list(const std::vector<std::string_view>& name_values) {
  ParamMap params;
  for (std::string_view kv : name_values) {
    const auto eq = kv.find('=');
    params[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  return params;
}

namespace {

ParamMap recipe_params(const LessonRun& run, const ParamMap& overrides) {
  ParamMap params = param_list(run.params);
  for (const auto& [name, value] : overrides) params[name] = value;
  return params;
}

}  // namespace

std::optional<RunConfig> lesson_recipe(const LessonRun& run, Backend backend,
                                       const ParamMap& overrides) {
  if (run.scenario.empty()) return std::nullopt;
  RunConfig cfg;
  cfg.scenario = std::string(run.scenario);
  cfg.policy = std::string(run.policy);
  cfg.backend = backend;
  cfg.params = recipe_params(run, overrides);
  return cfg;
}

std::string recipe_value(const LessonRun& run, std::string_view name) {
  for (std::string_view kv : run.params) {
    const auto eq = kv.find('=');
    if (kv.substr(0, eq) == name) return std::string(kv.substr(eq + 1));
  }
  return "";
}

std::string recipe_command(const LessonRun& run, Backend backend, const ParamMap& overrides) {
  if (run.scenario.empty()) return "";
  std::string cmd = "gpulb run " + std::string(run.scenario) + " --backend " +
                    std::string(to_string(backend)) + " --policy " + std::string(run.policy);
  for (const auto& [name, value] : recipe_params(run, overrides))
    cmd += " --param " + name + "=" + value;
  return cmd;
}

}  // namespace gpulb::builtin
