#include "labels.hpp"

#include <cstdio>
#include <iterator>

#include <algorithm>

namespace gpulb::viewer {

float lane_label_indent(const TraceModel& model, const Lane& lane) {
  if (lane.device >= model.devices().size()) return 16.0f;
  const DeviceGroup& dev = model.devices()[lane.device];
  return dev.has_sms || dev.groups.size() > 1 ? 30.0f : 16.0f;
}

float label_column_width(const TraceModel& model, const TextWidth& width) {
  float widest = 0.0f;
  for (const DeviceGroup& dev : model.devices()) {
    for (const std::uint32_t i : dev.host_lanes) {
      const Lane& lane = model.lanes()[i];
      widest = std::max(widest, lane_label_indent(model, lane) + width(lane.label));
    }
    // Group headers: "  v SM 131  (16)" at 6 px.
    for (const LaneGroup& g : dev.groups) {
      widest = std::max(
          widest, 6.0f + width("  v " + g.label + "  (" + std::to_string(g.lanes.size()) + ")"));
    }
  }
  // Worker lanes: their names are alike ("block 2111"); the last one stands for them all.
  if (!model.lanes().empty()) {
    const Lane& last = model.lanes().back();
    widest = std::max(widest, lane_label_indent(model, last) + width(last.label));
  }
  return std::clamp(widest + 8.0f, kMinLabelColumnPx, kMaxLabelColumnPx);
}

std::string fit_text(const std::string& text, float max_px, const TextWidth& width) {
  if (width(text) <= max_px) return text;
  // Binary search on the prefix length; cut on a UTF-8 character boundary.
  std::size_t lo = 0, hi = text.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi + 1) / 2;
    if (width(text.substr(0, mid) + "...") <= max_px) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  while (lo > 0 && (static_cast<unsigned char>(text[lo]) & 0xC0) == 0x80) --lo;
  return text.substr(0, lo) + "...";
}

int marker_priority(trace::EventKind kind) {
  // A chunk moved between ranks is recorded once on each side and nowhere else; the HostEnqueue of
  // its tasks a few microseconds before it says less.
  return kind == trace::EventKind::RankSteal || kind == trace::EventKind::RankLend ? 1 : 0;
}

MarkerLayout layout_markers(std::span<const double> xs, double right,
                            const std::function<float(std::size_t)>& label_width,
                            const std::function<int(std::size_t)>& priority) {
  MarkerLayout out;
  double last_x = -1e300;
  for (std::size_t i = 0; i < xs.size();) {
    if (xs[i] - last_x < kMarkerMinGapPx) {
      ++i;
      continue;
    }
    // The markers within kMarkerMinGapPx of the first: one is drawn, the highest priority's (the
    // first where they tie).
    std::size_t best = i;
    if (priority) {
      int best_p = priority(i);
      for (std::size_t j = i + 1; j < xs.size() && xs[j] - xs[i] < kMarkerMinGapPx; ++j) {
        const int p = priority(j);
        if (p > best_p) best = j, best_p = p;
      }
    }
    last_x = xs[best];
    out.drawn.push_back(static_cast<std::uint32_t>(best));
    i = best + 1;
  }
  out.labelled.assign(out.drawn.size(), false);
  for (std::size_t k = 0; k < out.drawn.size(); ++k) {
    const std::size_t i = out.drawn[k];
    const float w = label_width(i);
    if (w < 0) continue;
    // The next drawn marker's line, or the edge, bounds it; a label past both would be cut.
    const double limit =
        std::min(right, k + 1 < out.drawn.size() ? xs[out.drawn[k + 1]] - 1.0 : right);
    out.labelled[k] = xs[i] + kMarkerLabelGapPx + w <= limit;
  }
  return out;
}

namespace {

// KernelLaunch/KernelEnd aux: the reason in the low byte, the hybrid side above it (0: not split).
const char* launch_side(unsigned side) { return side == 1 ? "cpu " : side == 2 ? "gpu " : ""; }

std::string bytes_text(std::uint32_t bytes) {
  char t[32];
  if (bytes >= 1'000'000)
    std::snprintf(t, sizeof t, "%.1f MB", bytes / 1e6);
  else if (bytes >= 1000)
    std::snprintf(t, sizeof t, "%.1f kB", bytes / 1e3);
  else
    std::snprintf(t, sizeof t, "%u B", bytes);
  return t;
}

}  // namespace

// gcharm::LaunchReason's names (the model reads traces, not the runtime that wrote them).
const char* launch_reason_name(unsigned reason) {
  static const char* const kNames[] = {"", "full", "timeout", "static", "eager", "drain"};
  return reason < std::size(kNames) ? kNames[reason] : "";
}

std::string marker_text(const Marker& m, bool zoomed) {
  char t[64] = "";
  switch (m.kind) {
    case trace::EventKind::Spawn:
      if (zoomed) std::snprintf(t, sizeof t, "+%u", m.arg);
      break;
    case trace::EventKind::SpawnBatch:
      if (zoomed) std::snprintf(t, sizeof t, "+%u", m.aux);
      break;
    case trace::EventKind::HostEnqueue: std::snprintf(t, sizeof t, "+%u q%u", m.arg, m.aux); break;
    case trace::EventKind::KernelLaunch:
    case trace::EventKind::KernelEnd: {
      const char* reason = launch_reason_name(m.aux & 0xFFu);
      std::snprintf(t, sizeof t, "%s%s %u%s%s", launch_side(m.aux >> 8),
                    m.kind == trace::EventKind::KernelLaunch ? "launch" : "end", m.arg,
                    *reason ? " " : "", reason);
      break;
    }
    case trace::EventKind::Transfer:
      return (m.aux == 0 ? "to device " : "to host ") + bytes_text(m.arg);
    case trace::EventKind::RequestSplit:
      std::snprintf(t, sizeof t, "split: cpu %u (%.1f%%)", m.arg, m.aux / 10.0);
      break;
    case trace::EventKind::RankSteal:
      std::snprintf(t, sizeof t, "+%u from rank %u", m.aux, m.arg);
      break;
    case trace::EventKind::RankLend:
      std::snprintf(t, sizeof t, "-%u to rank %u", m.aux, m.arg);
      break;
    default: break;
  }
  return t;
}

}  // namespace gpulb::viewer
