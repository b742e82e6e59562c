// How Compare shares its height: two summaries side by side, a line of figures, two timelines,
// and nothing past the bottom (the replay bar lives there).
//
// The summaries were a fixed 36% of the height (clipping the "verified" line of a 2-GPU trace at
// 1280x760), and the timelines split what ImGui had left below them, the replay bar's room
// included, so B's lanes covered the replay bar.
#pragma once

namespace gpulb::viewer {

struct CompareLayout {
  float summary_h = 0.0f;   // each summary box
  float timeline_h = 0.0f;  // each timeline, toolbar and caption included
};

inline constexpr float kMinCompareTimelinePx = 110.0f;  // a ruler, a device row and a few lanes

// `height`: the view's; `between_h`: the figures line and spacing between the parts;
// `summary_need`: the taller summary's content. Summaries get what they need, as long as each
// timeline keeps kMinCompareTimelinePx (then they scroll).
CompareLayout compare_layout(float height, float between_h, float summary_need);

}  // namespace gpulb::viewer
