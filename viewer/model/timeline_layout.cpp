#include "timeline_layout.hpp"

#include <algorithm>
#include <cmath>

namespace gpulb::viewer {
namespace {

bool folded(const Folds& folds, std::uint64_t key) {
  const auto it = folds.find(key);
  return it != folds.end() && it->second;
}

// Whether a device's groups get header rows: SMs, or several worker groups.
bool has_headers(const DeviceGroup& dev) { return dev.groups.size() > 1 || dev.has_sms; }

// Rows whose height does not depend on folding (headers, open lanes) and folded group rows.
struct RowCounts {
  float fixed_px = 0.0f;
  std::size_t folded_groups = 0;
};

// A device's rows but its header; its host lanes where they are under it (not under a rank).
void count_device(const DeviceGroup& dev, std::uint32_t d, const Folds& folds, float lane_h,
                  bool host_lanes, RowCounts& c) {
  c.fixed_px += kDeviceRowPx;
  if (folded(folds, device_fold_key(d))) return;
  if (host_lanes) c.fixed_px += lane_h * static_cast<float>(dev.host_lanes.size());
  for (int g = 0; g < static_cast<int>(dev.groups.size()); ++g) {
    if (has_headers(dev) && folded(folds, group_fold_key(d, g))) {
      ++c.folded_groups;
      continue;
    }
    c.fixed_px += (has_headers(dev) ? kGroupHeaderPx : 0.0f) +
                  lane_h * static_cast<float>(dev.groups[static_cast<std::size_t>(g)].lanes.size());
  }
}

RowCounts count_rows(const TraceModel& model, const Folds& folds, float lane_h) {
  RowCounts c;
  if (model.ranks().empty()) {
    for (std::uint32_t d = 0; d < model.devices().size(); ++d)
      count_device(model.devices()[d], d, folds, lane_h, true, c);
    return c;
  }
  for (const RankGroup& r : model.ranks()) {
    c.fixed_px += kRankRowPx;
    if (folded(folds, rank_fold_key(r.rank))) continue;
    c.fixed_px += lane_h * static_cast<float>(r.host_lanes.size());
    for (const std::uint32_t d : r.devices)
      count_device(model.devices()[d], d, folds, lane_h, false, c);
  }
  return c;
}

}  // namespace

Folds default_folds(const TraceModel& model, bool unfold) {
  Folds folds;
  for (std::uint32_t d = 0; d < model.devices().size(); ++d) {
    const DeviceGroup& dev = model.devices()[d];
    for (std::size_t g = 0; g < dev.groups.size(); ++g) {
      folds[group_fold_key(d, static_cast<int>(g))] = !unfold && dev.has_sms && dev.workers > 64;
    }
  }
  return folds;
}

void set_all_folds(const TraceModel& model, Folds& folds, bool fold) {
  for (std::uint32_t d = 0; d < model.devices().size(); ++d) {
    folds[device_fold_key(d)] = false;
    for (std::size_t g = 0; g < model.devices()[d].groups.size(); ++g)
      folds[group_fold_key(d, static_cast<int>(g))] = fold;
  }
}

bool tasks_visible_at(const TraceModel& model, double ns_per_px, double shown_ns) {
  const double run = static_cast<double>(model.stats().makespan_ns);
  return model.mean_task_ns() > 0 && ns_per_px > 0 &&
         model.mean_task_ns() / ns_per_px >= kAutoUnfoldPx && shown_ns * kAutoUnfoldZoom <= run;
}

Folds effective_folds(const TraceModel& model, const Folds& user, bool automatic, double ns_per_px,
                      double shown_ns) {
  if (!automatic || !tasks_visible_at(model, ns_per_px, shown_ns)) return user;
  Folds open = user;  // device folds stay the user's
  for (std::uint32_t d = 0; d < model.devices().size(); ++d) {
    for (std::size_t g = 0; g < model.devices()[d].groups.size(); ++g)
      open[group_fold_key(d, static_cast<int>(g))] = false;
  }
  return open;
}

int row_for_label_click(const TimelineLayout& layout, float y, float text_h) {
  const auto& rows = layout.rows;
  // The row under y: rows are in y order.
  const auto it = std::upper_bound(rows.begin(), rows.end(), y,
                                   [](float v, const TimelineRow& r) { return v < r.y; });
  if (it == rows.begin()) return -1;
  int under = static_cast<int>(it - rows.begin()) - 1;
  if (y >= rows[static_cast<std::size_t>(under)].y + rows[static_cast<std::size_t>(under)].h)
    return -1;
  // Up through thin unlabelled group rows to the label drawn over y.
  for (int i = under; i >= 0; --i) {
    const TimelineRow& r = rows[static_cast<std::size_t>(i)];
    if (r.kind != RowKind::Group || r.h >= text_h) return under;
    if (y >= r.y + text_h) break;
    if (r.label) return i;
  }
  return under;
}

TimelineLayout layout_timeline(const TraceModel& model, const Folds& folds, float view_h,
                               float text_h) {
  TimelineLayout l;
  const std::size_t lanes = model.lanes().size();
  // Few lanes get tall rows (a class reads them from the back of the room); many get thin ones.
  const std::size_t headers = model.devices().size() + model.ranks().size();
  l.lane_h = std::clamp(
      view_h / static_cast<float>(std::max<std::size_t>(lanes + headers, 1)) * 0.8f, 13.0f, 36.0f);
  const RowCounts counts = count_rows(model, folds, l.lane_h);
  l.folded_h = l.lane_h;
  if (counts.folded_groups > 0) {
    // Rounded down to 1/64 px: summing hundreds of rows must not overshoot the view by a fraction.
    const float share =
        std::floor((view_h - counts.fixed_px) / static_cast<float>(counts.folded_groups) * 64.0f) /
        64.0f;
    l.folded_h = std::clamp(share, kMinFoldedRowPx, l.lane_h);
  }
  // Thin folded rows: a label every `stride`-th (a power of two), so that labels never overlap.
  int stride = 1;
  while (static_cast<float>(stride) * l.folded_h < text_h && stride < (1 << 20)) stride *= 2;

  l.lane_center.assign(lanes, -1.0f);
  float y = 0.0f;
  auto add = [&](TimelineRow r) -> const TimelineRow& {
    r.y = y;
    y += r.h;
    l.rows.push_back(r);
    return l.rows.back();
  };
  // Every lane of a device at one height (a folded device's or rank's row).
  auto hide_device = [&](const DeviceGroup& dev, float center) {
    for (const LaneGroup& g : dev.groups)
      for (const auto i : g.lanes) l.lane_center[i] = center;
    for (const auto i : dev.host_lanes) l.lane_center[i] = center;
  };
  // A device: its header, its host lanes unless its rank's row holds them, its groups and lanes.
  auto add_device = [&](std::uint32_t d, int rank, bool host_lanes) {
    const DeviceGroup& dev = model.devices()[d];
    const TimelineRow& drow = add({RowKind::Device, 0, kDeviceRowPx, d, -1, 0,
                                   folded(folds, device_fold_key(d)), true, rank});
    if (drow.folded) {
      const float dev_center = drow.y + drow.h * 0.5f;
      for (const LaneGroup& g : dev.groups)
        for (const auto i : g.lanes) l.lane_center[i] = dev_center;
      if (host_lanes)
        for (const auto i : dev.host_lanes) l.lane_center[i] = dev_center;
      return;
    }
    for (std::size_t k = 0; host_lanes && k < dev.host_lanes.size(); ++k) {
      const std::uint32_t i = dev.host_lanes[k];
      const TimelineRow& r = add({RowKind::Lane, 0, l.lane_h, d, -1, i, false, true, rank});
      l.lane_center[i] = r.y + r.h * 0.5f;
    }
    const bool headers = has_headers(dev);
    int folded_index = 0;  // folded rows of this device so far: labels every stride-th
    int folded_total = 0;  // and in all: a thin label must end before the next device's header
    for (int g = 0; headers && g < static_cast<int>(dev.groups.size()); ++g)
      folded_total += folded(folds, group_fold_key(d, g));
    for (int g = 0; g < static_cast<int>(dev.groups.size()); ++g) {
      const LaneGroup& grp = dev.groups[static_cast<std::size_t>(g)];
      const bool fold = headers && folded(folds, group_fold_key(d, g));
      float hidden_y = 0.0f;
      if (headers) {
        const bool room_below =
            l.folded_h >= text_h ||
            static_cast<float>(folded_total - folded_index) * l.folded_h >= text_h;
        const bool label = !fold || (folded_index % stride == 0 && room_below);
        folded_index += fold;
        const TimelineRow& r = add(
            {RowKind::Group, 0, fold ? l.folded_h : kGroupHeaderPx, d, g, 0, fold, label, rank});
        hidden_y = r.y + r.h * 0.5f;
      }
      for (const auto i : grp.lanes) {
        if (fold) {
          l.lane_center[i] = hidden_y;
          continue;
        }
        const TimelineRow& r = add({RowKind::Lane, 0, l.lane_h, d, g, i, false, true, rank});
        l.lane_center[i] = r.y + r.h * 0.5f;
      }
    }
  };
  if (model.ranks().empty()) {
    for (std::uint32_t d = 0; d < model.devices().size(); ++d) add_device(d, -1, true);
  }
  for (std::size_t k = 0; k < model.ranks().size(); ++k) {
    const RankGroup& rg = model.ranks()[k];
    const int rank = static_cast<int>(k);
    const std::uint32_t first = rg.devices.empty() ? 0 : rg.devices.front();
    const TimelineRow& rrow = add({RowKind::Rank, 0, kRankRowPx, first, -1, 0,
                                   folded(folds, rank_fold_key(rg.rank)), true, rank});
    if (rrow.folded) {
      const float center = rrow.y + rrow.h * 0.5f;
      for (const std::uint32_t d : rg.devices) hide_device(model.devices()[d], center);
      continue;
    }
    for (const auto i : rg.host_lanes) {
      const TimelineRow& r =
          add({RowKind::Lane, 0, l.lane_h, model.lanes()[i].device, -1, i, false, true, rank});
      l.lane_center[i] = r.y + r.h * 0.5f;
    }
    for (const std::uint32_t d : rg.devices) add_device(d, rank, false);
  }
  l.height = y;
  return l;
}

}  // namespace gpulb::viewer
