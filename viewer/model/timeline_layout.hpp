// The timeline's rows, top to bottom, and where every lane is drawn: computed here, not in the
// view, so that where GPU 1 starts and which labels show are testable without a window.
//
// Compact layout: folded SM rows share what the screen has left once headers and open lanes are
// placed, down to kMinFoldedRowPx each. With a fixed 13 px a folded SM, GPU 1 of a 2xH200 trace
// (132 SMs each) started 1,716 px down; now a 4-GPU trace of 528 SMs fits one screen, each SM a
// thin utilisation strip, and labels go only on rows with room for them (every 2^k-th SM).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "trace_model.hpp"

namespace gpulb::viewer {

// Rank: a process of a distributed run, above its devices (only where the trace has several).
enum class RowKind { Device, Group, Lane, Rank };

struct TimelineRow {
  RowKind kind = RowKind::Lane;
  float y = 0.0f, h = 0.0f;  // within the scrolled content
  std::uint32_t device = 0;
  int group = -1;  // Group rows (and their lanes): index into DeviceGroup::groups; -1 otherwise
  std::uint32_t lane = 0;  // Lane rows: index into TraceModel::lanes()
  bool folded = false;     // Device, Group and Rank rows
  bool label = true;       // whether its name is drawn (thin folded rows: every 2^k-th)
  int rank = -1;  // Rank rows and every row under one: index into TraceModel::ranks(); -1 otherwise
};

struct TimelineLayout {
  std::vector<TimelineRow> rows;
  std::vector<float> lane_center;  // per lane: the y of its row, or of the folded row hiding it
  float height = 0.0f;
  float lane_h = 18.0f;    // an open lane
  float folded_h = 18.0f;  // a folded group (equal to lane_h when everything fits)
};

inline constexpr float kDeviceRowPx = 24.0f;
inline constexpr float kRankRowPx = 26.0f;
inline constexpr float kGroupHeaderPx = 18.0f;
inline constexpr float kMinFoldedRowPx = 1.0f;  // a pixel row per SM still shows its utilisation

// Fold state of device and group rows; a missing key is open.
using Folds = std::map<std::uint64_t, bool>;
inline std::uint64_t device_fold_key(std::uint32_t d) {
  return (std::uint64_t{d} << 32) | 0xFFFFFFFFu;
}
inline std::uint64_t group_fold_key(std::uint32_t d, int g) {
  return (std::uint64_t{d} << 32) | static_cast<std::uint32_t>(g);
}
inline std::uint64_t rank_fold_key(std::uint32_t r) {
  return (std::uint64_t{1} << 63) | r;
}  // devices stay under 2^31

// What a trace opens with: SM groups folded where a device has more than 64 workers (a lane each
// would not fit a screen); everything open with `unfold` (--unfold).
Folds default_folds(const TraceModel& model, bool unfold = false);
// Fold or open every group of every device (devices stay open, so the folded rows show).
void set_all_folds(const TraceModel& model, Folds& folds, bool folded);

// Automatic unfolding: zoomed in (to a quarter of the run or less) far enough that a task of the
// trace's mean duration spans kAutoUnfoldPx, a folded row's heat map says less than the tasks
// would, so every group opens (until the user folds or unfolds by hand: then their choice holds).
// Zoomed in, not merely wide tasks: P3's mean task is 20 px wide at Fit, and the overview of its
// 4,224 blocks is the heat map.
inline constexpr double kAutoUnfoldPx = 6.0;
inline constexpr double kAutoUnfoldZoom = 4.0;
bool tasks_visible_at(const TraceModel& model, double ns_per_px, double shown_ns);
// The folds to lay out: `user`'s where `automatic` is off or the tasks are too small to see, all
// groups open where they are visible.
Folds effective_folds(const TraceModel& model, const Folds& user, bool automatic, double ns_per_px,
                      double shown_ns);

// The row a click at content y in the label column means: a thin folded row's label runs down
// over the unlabelled rows below it, so a click on the label is the labelled row's; elsewhere,
// the row under y. -1 where there is none.
int row_for_label_click(const TimelineLayout& layout, float y, float text_h);

// Rows for a view `view_h` px tall whose text is `text_h` px tall. A trace of several ranks
// (TraceModel::ranks()) gets a Rank row above each rank's devices, with the rank's host lanes
// right under it (where the lends and steals between ranks are, and the arrows join them), then
// its devices; a folded rank hides all of them. A trace of one process has no Rank row.
TimelineLayout layout_timeline(const TraceModel& model, const Folds& folds, float view_h,
                               float text_h);

}  // namespace gpulb::viewer
