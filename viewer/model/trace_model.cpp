#include "trace_model.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "parallel.hpp"

namespace gpulb::viewer {

using trace::Track;
using trace::TrackRole;

namespace {

Lane build_lane(const Track& tr, std::uint32_t index) {
  Lane lane;
  lane.track = index;
  lane.role = tr.role;
  lane.device = tr.device;
  lane.sm = tr.sm;
  lane.worker = tr.worker;
  lane.label = tr.name;
  if (!tr.events.empty()) {
    lane.start_ns = tr.events.front().time_ns;
    lane.end_ns = tr.events.back().time_ns;
  }
  const std::vector<trace::TaskSpan> spans = trace::task_spans(tr);
  lane.zones.reserve(spans.size());
  lane.busy_prefix.reserve(spans.size() + 1);
  lane.busy_prefix.push_back(0);
  for (const trace::TaskSpan& s : spans) {
    lane.zones.push_back({s.begin_ns, s.end_ns, s.id, s.kind});
    lane.busy_prefix.push_back(lane.busy_prefix.back() + (s.end_ns - s.begin_ns));
  }
  // Idle spells start at a failed dequeue or steal and end at the next task or the worker's end.
  bool idle = false;
  std::uint64_t idle_from = 0;
  for (const trace::Event& e : tr.events) {
    const trace::EventTraits k = trace::event_traits(e.kind);
    if (k.marker) lane.markers.push_back({e.time_ns, e.arg, e.aux, e.kind});
    if (k.idle == trace::IdleEdge::Starts && !idle) {
      idle = true;
      idle_from = e.time_ns;
    } else if (k.idle == trace::IdleEdge::Ends && idle) {
      idle = false;
      lane.idle.push_back({idle_from, e.time_ns});
    }
  }
  if (idle) lane.idle.push_back({idle_from, lane.end_ns});
  return lane;
}

// Sorted +1/-1 keys of one lane's zones (see busy_series_from_keys).
void append_busy_keys(const Lane& lane, std::vector<std::uint64_t>& keys) {
  for (const Zone& z : lane.zones) {
    keys.push_back(z.begin_ns * 2 + 1);
    keys.push_back(z.end_ns * 2);
  }
}

std::string device_label(const trace::Device& d) {
  if (d.kind == trace::DeviceKind::Gpu) return "GPU " + std::to_string(d.index) + ": " + d.name;
  return d.name.empty() ? std::string("CPU") : d.name;
}

std::string device_short(const trace::Device& d) {
  return d.kind == trace::DeviceKind::Gpu ? "GPU " + std::to_string(d.index) : std::string("CPU");
}

}  // namespace

TraceModel::TraceModel(std::shared_ptr<const trace::Trace> trace) : trace_(std::move(trace)) {
  const trace::Trace& t = *trace_;
  stats_ = trace::compute_statistics(t);

  // Lanes in display order: device, host lanes first, then SM, then rank.
  std::vector<std::uint32_t> order(t.tracks.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto sort_key = [&t](std::uint32_t i) {
    const Track& tr = t.tracks[i];
    return std::make_tuple(tr.device, tr.role == TrackRole::Host ? 0 : 1, tr.sm, tr.worker, i);
  };
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return sort_key(a) < sort_key(b); });
  lanes_.resize(order.size());
  parallel_for(order.size(), [&](std::size_t i) { lanes_[i] = build_lane(t.tracks[order[i]], order[i]); });

  // Time range, task durations, kinds.
  begin_ns_ = std::numeric_limits<std::uint64_t>::max();
  min_task_ns_ = std::numeric_limits<std::uint64_t>::max();
  for (const Lane& lane : lanes_) {
    if (t.tracks[lane.track].events.empty()) continue;
    begin_ns_ = std::min(begin_ns_, lane.start_ns);
    end_ns_ = std::max(end_ns_, lane.end_ns);
    task_count_ += lane.zones.size();
    for (const Zone& z : lane.zones) {
      min_task_ns_ = std::min(min_task_ns_, z.end_ns - z.begin_ns);
      max_task_ns_ = std::max(max_task_ns_, z.end_ns - z.begin_ns);
      if (z.kind >= kind_present_.size()) kind_present_.resize(z.kind + 1u, false);
      kind_present_[z.kind] = true;
      max_kind_ = std::max(max_kind_, z.kind);
    }
  }
  if (begin_ns_ > end_ns_) begin_ns_ = end_ns_ = 0;
  if (task_count_ == 0) min_task_ns_ = 0;

  for (std::uint32_t i = 0; i < lanes_.size(); ++i) {
    if (lanes_[i].role == TrackRole::Worker) worker_lanes_.emplace(std::make_pair(lanes_[i].device, lanes_[i].worker), i);
  }

  // Groups: device -> (SM | all workers) -> lanes.
  for (std::uint32_t d = 0; d < t.devices.size(); ++d) {
    DeviceGroup dev;
    dev.label = device_label(t.devices[d]);
    dev.device = d;
    std::map<std::uint32_t, LaneGroup> groups;
    for (std::uint32_t i = 0; i < lanes_.size(); ++i) {
      const Lane& lane = lanes_[i];
      if (lane.device != d) continue;
      if (lane.role == TrackRole::Host) {
        dev.host_lanes.push_back(i);
        continue;
      }
      ++dev.workers;
      LaneGroup& g = groups[lane.sm];
      g.sm = lane.sm;
      g.lanes.push_back(i);
      if (lane.sm != Track::kNoSm) dev.has_sms = true;
    }
    for (auto& [sm, g] : groups) {
      g.label = sm == Track::kNoSm ? device_short(t.devices[d]) + " workers" : "SM " + std::to_string(sm);
      dev.groups.push_back(std::move(g));
    }
    devices_.push_back(std::move(dev));
  }

  // Busy series: each lane's keys are sorted, so a group's are a merge of runs, and a device's a
  // merge of its groups'.
  struct GroupRef {
    std::uint32_t device, group;
  };
  std::vector<GroupRef> refs;
  for (std::uint32_t d = 0; d < devices_.size(); ++d) {
    for (std::uint32_t g = 0; g < devices_[d].groups.size(); ++g) refs.push_back({d, g});
  }
  std::vector<std::vector<std::uint64_t>> group_keys(refs.size());
  parallel_for(refs.size(), [&](std::size_t r) {
    LaneGroup& g = devices_[refs[r].device].groups[refs[r].group];
    std::vector<std::uint64_t>& keys = group_keys[r];
    std::vector<std::size_t> bounds{0};
    for (const std::uint32_t l : g.lanes) {
      append_busy_keys(lanes_[l], keys);
      bounds.push_back(keys.size());
    }
    merge_sorted_runs(keys, bounds, std::less<>{});
    g.busy = std::make_shared<const StepSeries>(busy_series_from_keys(keys));
  });
  std::size_t r = 0;
  for (DeviceGroup& dev : devices_) {
    if (dev.groups.size() == 1) {
      dev.busy = dev.groups[0].busy;
      ++r;
      continue;
    }
    std::vector<std::uint64_t> keys;
    std::vector<std::size_t> bounds{0};
    for (std::size_t g = 0; g < dev.groups.size(); ++g, ++r) {
      keys.insert(keys.end(), group_keys[r].begin(), group_keys[r].end());
      std::vector<std::uint64_t>().swap(group_keys[r]);
      bounds.push_back(keys.size());
    }
    merge_sorted_runs(keys, bounds, std::less<>{});
    dev.busy = std::make_shared<const StepSeries>(busy_series_from_keys(keys));
  }

  // Queue series. Each track's level events are in time order: merge them per queue.
  struct Level {
    std::uint64_t time_ns;
    std::int64_t value;
    std::uint32_t owner;  // deque owner (DequeLevel)
  };
  using Key = std::tuple<std::uint32_t, int, std::uint32_t>;  // device, source, queue
  std::map<Key, std::pair<std::vector<Level>, std::vector<std::size_t>>> levels;
  for (const Track& tr : t.tracks) {
    std::map<Key, bool> touched;
    for (const trace::Event& e : tr.events) {
      Key key;
      switch (trace::event_traits(e.kind).level) {
        case trace::LevelSource::Queue: key = {tr.device, static_cast<int>(QueueSeries::Source::Queue), e.aux}; break;
        case trace::LevelSource::Deque: key = {tr.device, static_cast<int>(QueueSeries::Source::Deques), 0}; break;
        case trace::LevelSource::Pool: key = {tr.device, static_cast<int>(QueueSeries::Source::Pool), 0}; break;
        case trace::LevelSource::None: continue;
      }
      auto& [vec, bounds] = levels[key];
      if (!touched[key]) {
        if (bounds.empty()) bounds.push_back(0);
        touched[key] = true;
      }
      vec.push_back({e.time_ns, static_cast<std::int64_t>(e.arg), e.aux});
    }
    for (auto& [key, unused] : touched) levels[key].second.push_back(levels[key].first.size());
  }
  for (auto& [key, entry] : levels) {
    auto& [vec, bounds] = entry;
    // Stable by time within a track, merged across tracks by time.
    merge_sorted_runs(vec, bounds, [](const Level& a, const Level& b) { return a.time_ns < b.time_ns; });
    QueueSeries q;
    q.device = std::get<0>(key);
    q.source = static_cast<QueueSeries::Source>(std::get<1>(key));
    q.queue = std::get<2>(key);
    const std::string dev = q.device < t.devices.size() ? device_short(t.devices[q.device]) : "device";
    std::vector<StepSeries::Point> points;
    points.reserve(vec.size());
    if (q.source == QueueSeries::Source::Deques) {
      // A device's deques summed: each event replaces its owner's contribution.
      std::map<std::uint32_t, std::int64_t> per_owner;
      std::int64_t total = 0;
      for (const Level& l : vec) {
        std::int64_t& mine = per_owner[l.owner];
        total += l.value - mine;
        mine = l.value;
        points.push_back({l.time_ns, total});
      }
      q.label = dev + " deques (sum)";
    } else {
      for (const Level& l : vec) points.push_back({l.time_ns, l.value});
      q.label = q.source == QueueSeries::Source::Pool ? dev + " host pool" : dev + " queue " + std::to_string(q.queue);
    }
    q.level = StepSeries(std::move(points));
    queues_.push_back(std::move(q));
  }
}

std::vector<std::uint16_t> TraceModel::kinds() const {
  std::vector<std::uint16_t> out;
  for (std::size_t k = 0; k < kind_present_.size(); ++k) {
    if (kind_present_[k]) out.push_back(static_cast<std::uint16_t>(k));
  }
  return out;
}

int TraceModel::worker_lane(std::uint32_t device, std::uint32_t worker) const {
  const auto it = worker_lanes_.find({device, worker});
  return it == worker_lanes_.end() ? -1 : it->second;
}

}  // namespace gpulb::viewer
