// How large the static list's two arrays are (gpulb/static_task_list.hpp), on both backends and on
// every GPU of a run across GPUs: sized from what the run can learn, grown where a generation
// outgrows them, refused only where memory cannot hold what a generation has already asked for.
//
// Before each launch the output array gets room for the generation's children as the previous
// generation's ratio (children per task) predicts, with a quarter to spare; never more than the
// scenario's widest generation where it states one (ExecPlan::widest_generation), never less than
// list_capacity where the user gave one (the first output array has exactly that many). A launch that fills its output array anyway stops early:
// each worker whose batch did not fit holds the rest (HeldChildren) and takes no more tasks. The
// host then grows the array to the generation's projected total, places the held batches and
// launches the generation's remaining tasks. Growing between launches keeps the kernels free of
// any reallocation; the prediction makes a stop rare (none on the UTS presets, whose widest
// generation is known).
//
// Each array is sized on its own: a tree's widest generation and the one before it are held at
// once, not two arrays of the widest (UTS T1XL: 1.23 G and 0.31 G tasks, 98 GB, where two arrays
// of the widest would be 157 GB).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpulb/task.hpp"

namespace gpulb {

// 32-bit slot indices, with room above for the batches that pass the capacity (one a worker).
inline constexpr std::uint64_t kMaxListSlots = std::uint64_t{1} << 31;
// An array's first size where nothing is known: 4 MiB; the ratio sizes the next ones.
inline constexpr std::uint64_t kFirstListSlots = std::uint64_t{1} << 16;

class ListSizer {
 public:
  // `list_capacity`: the user's floor (0: none); `widest`: the scenario's widest generation (0:
  // unknown); `expected`: the tasks of the whole run (0: unknown), which bound what is still to come.
  ListSizer(std::uint32_t list_capacity, std::uint64_t widest, std::uint64_t expected = 0)
      : floor_(list_capacity), widest_(widest), expected_(expected) {}

  // A generation of `tasks` created `children`: the ratio the next prediction uses.
  void generation_ended(std::uint64_t tasks, std::uint64_t children) {
    if (tasks == 0) return;
    launched_ += tasks;
    tasks_ = tasks;
    children_ = children;
  }

  // The output array's slots for a launch of `in_count` tasks. Without a list_capacity, never less
  // than kFirstListSlots: a generation of a few thousand tasks strays from the ratio by more than a
  // quarter often enough to make its launch stop, where 4 MiB would have held it.
  std::uint64_t before_launch(std::uint64_t in_count) const {
    std::uint64_t want = floor_ != 0 ? floor_ : kFirstListSlots;
    if (tasks_ != 0) want = (in_count * children_ / tasks_) * 5 / 4 + 1;
    if (floor_ == 0) want = std::max(want, kFirstListSlots);
    if (widest_ != 0) want = std::min(want, widest_);
    // The children of this generation are among the tasks not yet launched (the last level of a
    // tree has none: its ratio would ask for room it never uses).
    if (expected_ >= launched_ + in_count) want = std::min(want, expected_ - launched_ - in_count);
    return std::clamp<std::uint64_t>(std::max<std::uint64_t>(want, floor_), 1, kMaxListSlots);
  }

  // After a launch that stopped on a full output array: `asked` slots taken so far, by `done` of
  // the generation's `in_count` tasks. At least `asked`; the projected total with an eighth to
  // spare, or a quarter more than asked where that is more.
  std::uint64_t after_overflow(std::uint64_t asked, std::uint64_t done,
                               std::uint64_t in_count) const {
    const std::uint64_t projected = done == 0 ? asked : asked * in_count / done;
    std::uint64_t want = std::max(projected + projected / 8, asked + asked / 4);
    if (widest_ != 0) want = std::min(want, widest_);
    return std::min(std::max(want, asked), kMaxListSlots);
  }

  std::uint64_t widest() const { return widest_; }

 private:
  std::uint64_t floor_;
  std::uint64_t widest_;
  std::uint64_t expected_;
  std::uint64_t launched_ = 0;  // tasks of the generations that ended
  std::uint64_t tasks_ = 0, children_ = 0;
};

// Bytes of `free_bytes` an array may take: what is free less a margin for the runtime's own
// allocations (256 MiB and 1/64).
inline std::uint64_t list_budget_bytes(std::uint64_t free_bytes) {
  const std::uint64_t margin = (std::uint64_t{256} << 20) + free_bytes / 64;
  return free_bytes > margin ? free_bytes - margin : 0;
}

// The slots an array gets: `want`, cut to what `free_bytes` holds (list_budget_bytes), never
// below `need`; 0 where even `need` does not fit.
inline std::uint64_t fit_list_slots(std::uint64_t want, std::uint64_t need,
                                    std::uint64_t free_bytes) {
  const std::uint64_t fits = list_budget_bytes(free_bytes) / sizeof(Task);
  if (need > fits) return 0;
  return std::max(need, std::min(want, fits));
}

inline std::string format_gib(std::uint64_t bytes) {
  const std::uint64_t tenths = (bytes * 10 + (std::uint64_t{1} << 29)) >> 30;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " GiB";
}

// The refusal where memory cannot hold the slots a generation needs. `where`: "host memory",
// "GPU 0"...; `held`: the bytes the list's arrays hold there now; `free_source`: what said how much
// is free.
inline std::string list_memory_refusal(std::uint64_t generation, std::uint64_t need_slots,
                                       const std::string& where, std::uint64_t held,
                                       std::uint64_t free_bytes, const std::string& free_source) {
  const std::string gen = generation == 0 ? "the widest generation the scenario states"
                                          : "generation " + std::to_string(generation);
  const std::string beside =
      held == 0 ? "" : " beside the " + format_gib(held) + " its arrays hold now";
  return "static-list: " + gen + " needs an array of " + std::to_string(need_slots) +
         " task slots (" + format_gib(need_slots * sizeof(Task)) + ") in " + where +
         ", which has " + format_gib(free_bytes) + " free (" + free_source + ")" + beside +
         "; the static list holds a whole generation at once: use more GPUs (--gpus N), a smaller "
         "problem, or a "
         "policy that holds only the tasks waiting to run (work-stealing)";
}

// What a static-list run says of its arrays, on either backend: the metrics and the notes.
struct ListReport {
  std::uint64_t generations = 0;
  std::uint64_t peak_slots = 0;     // the largest generation
  std::uint64_t largest_slots = 0;  // the largest array allocated
  std::uint64_t resumes = 0;        // launches that stopped on a full array and went on
};
inline void report_list(const ListReport& r, std::map<std::string, std::uint64_t>& metrics,
                        std::vector<std::string>& notes) {
  metrics["generations"] = r.generations;
  metrics["peak_task_slots"] = r.peak_slots;
  metrics["list_slots"] = r.largest_slots;
  metrics["list_resumes"] = r.resumes;
  notes.push_back("static-list: " + std::to_string(r.generations) +
                  " generations; the largest needed " + std::to_string(r.peak_slots) +
                  " task slots (each array sized on its own, the largest " +
                  std::to_string(r.largest_slots) + " slots)");
  if (r.resumes > 0) {
    notes.push_back("static-list: " + std::to_string(r.resumes) +
                    " launches filled their output array and went on after it grew "
                    "(list_capacity sizes the first arrays)");
  }
}

}  // namespace gpulb
