// Where the timeline's texts go so that none covers another: the label column's width and the
// lane names clipped to it, and which point markers of a lane carry their text ("+1024 q1",
// "launch 2112").
//
// Host lanes showed "+1024 q1" cut by the next enqueue's line and "GPU 0 control thre" cut by
// the column edge: a label was drawn wherever it started after the previous label's end, and
// the next marker's line then crossed it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ticks.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {

inline constexpr float kMinLabelColumnPx = 150.0f;
inline constexpr float kMaxLabelColumnPx = 260.0f;
inline constexpr float kMarkerMinGapPx = 2.0f;  // closer markers than this: only the first is drawn
inline constexpr float kMarkerLabelGapPx = 3.0f;

// Where a lane's name starts in the label column: indented under its SM or group header.
float lane_label_indent(const TraceModel& model, const Lane& lane);

// Wide enough for every host lane's and group's name at its indent (worker lanes' names are
// short), within [kMinLabelColumnPx, kMaxLabelColumnPx].
float label_column_width(const TraceModel& model, const TextWidth& width);

// `text` where it fits in max_px, else its longest prefix that fits with "..." after it.
std::string fit_text(const std::string& text, float max_px, const TextWidth& width);

// Which markers of a lane are drawn and which carry their label. `xs`: the markers in view, in
// time order, as screen x. A marker is drawn where it lies kMarkerMinGapPx or more right of the
// last one drawn. A drawn marker's label starts kMarkerLabelGapPx right of it and shows only where
// it ends before the next drawn marker (whose line would cross it) and before `right`.
// `label_width(i)`: the width of marker i's label, or a negative number for a marker without one.
struct MarkerLayout {
  std::vector<std::uint32_t> drawn;  // indices into xs
  std::vector<bool> labelled;        // parallel to drawn
};
// `priority(i)` (optional): among markers closer than kMarkerMinGapPx, the one drawn.
MarkerLayout layout_markers(std::span<const double> xs, double right,
                            const std::function<float(std::size_t)>& label_width,
                            const std::function<int(std::size_t)>& priority = {});

// Which of a lane's close markers is drawn (layout_markers' priority): higher first.
int marker_priority(trace::EventKind kind);

// Why combining launched (KernelLaunch aux's low byte): "full", "timeout", "static", "eager", "drain";
// "" for 0 or a value no launcher writes.
const char* launch_reason_name(unsigned reason);

// A marker's text, where its kind has one (empty for none): spawns "+3" (only when `zoomed`, room
// for one per spawn), host enqueues "+1024 q1", launches "launch 1584 full" (the reason of a
// combining policy's launch; "cpu"/"gpu" for a hybrid run's side), their ends, transfers
// "to device 12.3 MB", and hybrid's split decisions "split: cpu 12 (4.5%)".
std::string marker_text(const Marker& m, bool zoomed);

}  // namespace gpulb::viewer
