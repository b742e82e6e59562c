#include "compare_layout.hpp"

#include <algorithm>

namespace gpulb::viewer {

CompareLayout compare_layout(float height, float between_h, float summary_need) {
  CompareLayout l;
  const float room = std::max(height - between_h, 0.0f);
  l.summary_h =
      std::clamp(summary_need, 0.0f, std::max(room - 2.0f * kMinCompareTimelinePx, room * 0.25f));
  l.timeline_h = std::max((room - l.summary_h) * 0.5f, 0.0f);
  return l;
}

}  // namespace gpulb::viewer
