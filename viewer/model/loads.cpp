#include "loads.hpp"

#include <algorithm>

namespace gpulb::viewer {
namespace {

std::string device_name(const DeviceGroup& dev) { return dev.label.substr(0, dev.label.find(':')); }

// A worker track that recorded no event (see the header).
bool silent(const TraceModel& model, std::uint32_t lane) {
  return model.events(model.lanes()[lane].track).empty();
}

// A few SM ticks inside a device's run of bars, so that a bar can be placed without hovering:
// every k-th SM with k a round number giving at most `per_device` of them.
void add_sm_ticks(Loads& l, const std::vector<std::pair<double, std::uint32_t>>& sm_starts,
                  int per_device) {
  if (sm_starts.size() < 2) return;
  std::uint32_t k = 1;
  for (const std::uint32_t m : {1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u}) {
    k = m;
    if (sm_starts.size() / m <= static_cast<std::size_t>(per_device)) break;
  }
  for (std::size_t i = k; i < sm_starts.size(); i += k) {
    if (sm_starts[i].second % k != 0) continue;
    l.axis.push_back({sm_starts[i].first, 0.0, "SM " + std::to_string(sm_starts[i].second)});
  }
}

}  // namespace

Loads worker_loads(const TraceModel& model, const ReplayState& state) {
  Loads l;
  for (const DeviceGroup& dev : model.devices()) {
    l.axis.push_back({static_cast<double>(l.busy.size()), 0.0, device_name(dev), true});
    std::vector<std::pair<double, std::uint32_t>> sm_starts;
    for (const LaneGroup& g : dev.groups) {
      bool first = true;
      for (const std::uint32_t i : g.lanes) {
        const Lane& lane = model.lanes()[i];
        if (silent(model, i)) {
          ++l.silent;
          continue;
        }
        if (first && dev.has_sms) sm_starts.push_back({static_cast<double>(l.busy.size()), g.sm});
        first = false;
        l.tasks.push_back(static_cast<double>(state.lanes[i].tasks_done));
        l.busy.push_back(static_cast<double>(state.lanes[i].busy_ns));
        const double lived = std::min(state.time_ns, static_cast<double>(lane.end_ns)) -
                             static_cast<double>(lane.start_ns);
        l.idle.push_back(std::max(0.0, lived - l.busy.back()));
        l.labels.push_back(lane.sm == trace::Track::kNoSm
                               ? lane.label
                               : lane.label + " (SM " + std::to_string(lane.sm) + ")");
      }
    }
    add_sm_ticks(l, sm_starts, 4);
  }
  // A device that ran no worker leaves its tick on the next one's: keep the later.
  std::vector<Tick> axis;
  for (Tick& t : l.axis) {
    if (!axis.empty() && axis.back().at == t.at) axis.pop_back();
    axis.push_back(std::move(t));
  }
  if (!axis.empty() && axis.back().at >= static_cast<double>(l.busy.size())) axis.pop_back();
  l.axis = std::move(axis);
  return l;
}

Loads group_loads(const TraceModel& model, const ReplayState& state, bool per_device) {
  Loads l;
  for (const DeviceGroup& dev : model.devices()) {
    l.axis.push_back({static_cast<double>(l.busy.size()), 0.0, device_name(dev), true});
    std::vector<std::pair<double, std::uint32_t>> sm_starts;
    if (per_device) {
      l.labels.push_back(dev.label);
      l.tasks.push_back(0);
      l.busy.push_back(0);
    }
    for (const LaneGroup& g : dev.groups) {
      // A group of silent tracks only (blocks that never ran have no SM) is no SM of the run.
      const bool ran = std::any_of(g.lanes.begin(), g.lanes.end(),
                                   [&](std::uint32_t i) { return !silent(model, i); });
      if (!ran) continue;
      if (!per_device) {
        if (dev.has_sms) sm_starts.push_back({static_cast<double>(l.busy.size()), g.sm});
        l.labels.push_back(g.label);
        l.tasks.push_back(0);
        l.busy.push_back(0);
      }
      for (const std::uint32_t i : g.lanes) {
        l.tasks.back() += static_cast<double>(state.lanes[i].tasks_done);
        l.busy.back() += static_cast<double>(state.lanes[i].busy_ns);
      }
    }
    add_sm_ticks(l, sm_starts, 4);
  }
  if (!l.axis.empty() && l.axis.back().at >= static_cast<double>(l.busy.size())) l.axis.pop_back();
  return l;
}

std::vector<PlacedLabel> place_axis_labels(std::span<const Tick> axis, std::size_t bars,
                                           float plot_w, float right_room, const TextWidth& width) {
  constexpr float kPad = 2.0f, kGap = 8.0f;
  std::vector<PlacedLabel> placed;
  if (bars == 0) return placed;
  auto touches = [&](float x, float w) {
    return std::any_of(placed.begin(), placed.end(), [&](const PlacedLabel& p) {
      return x < p.x + width(p.text) + kGap && p.x < x + w + kGap;
    });
  };
  for (const bool major : {true, false}) {
    for (const Tick& t : axis) {
      if (t.major != major || t.label.empty()) continue;
      const float w = width(t.label);
      float x = plot_w * static_cast<float>(t.at / static_cast<double>(bars)) + kPad;
      if (major) x = std::max(0.0f, std::min(x, plot_w + right_room - w));
      if (x + w > plot_w + right_room || touches(x, w)) continue;
      placed.push_back({t.label, x});
    }
  }
  std::sort(placed.begin(), placed.end(),
            [](const PlacedLabel& a, const PlacedLabel& b) { return a.x < b.x; });
  return placed;
}

std::vector<Bucket> bar_buckets(std::span<const double> values, int columns) {
  std::vector<Bucket> out;
  const std::size_t n = values.size();
  if (n == 0 || columns <= 0) return out;
  out.reserve(static_cast<std::size_t>(columns));
  for (int c = 0; c < columns; ++c) {
    const std::size_t a = n * static_cast<std::size_t>(c) / static_cast<std::size_t>(columns);
    const std::size_t b = std::min(n, std::max(a + 1, n * static_cast<std::size_t>(c + 1) /
                                                          static_cast<std::size_t>(columns)));
    Bucket k{values[a], 0.0, values[a]};
    double sum = 0.0;
    for (std::size_t i = a; i < b; ++i) {
      k.min = std::min(k.min, values[i]);
      k.max = std::max(k.max, values[i]);
      sum += values[i];
    }
    k.mean = sum / static_cast<double>(b - a);
    out.push_back(k);
  }
  return out;
}

}  // namespace gpulb::viewer
