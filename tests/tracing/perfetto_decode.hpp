// A Perfetto export read back for tests: protoc decodes it against Perfetto's schema
// (tests/fixtures/perfetto), and the text is read packet by packet the way the trace processor
// reads a sequence: interned names looked up per sequence, incremental timestamps added up per
// sequence from its clock snapshot, an absolute BOOTTIME timestamp taken as it is.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpulb::testing {

struct DecodedEvent {
  std::uint64_t time_ns = 0;  // on the export's clock
  std::uint32_t sequence = 0;
  std::string type;              // "TYPE_SLICE_BEGIN", ...
  std::string name;              // the interned name resolved ("" where none)
  std::uint64_t track_uuid = 0;  // 0: the sequence's default track
  std::map<std::string, std::uint64_t> annotations;
  std::vector<std::int64_t> extra_counter_values;
  std::optional<std::int64_t> counter_value;
  std::vector<std::uint64_t> flow_ids, terminating_flow_ids;
};

struct DecodedTrack {
  std::uint64_t uuid = 0, parent = 0;
  std::string name, description;
  bool counter = false;
};

struct DecodedTrace {
  // The uuid of the first track of this name (0: none).
  std::uint64_t uuid_of(const std::string& name) const {
    for (const DecodedTrack& t : tracks) {
      if (t.name == name) return t.uuid;
    }
    return 0;
  }

  int exit_code = -1;
  std::size_t slice_begins = 0, slice_ends = 0, instants = 0, counters = 0, flows_out = 0,
              flows_in = 0;
  std::size_t extra_counter_values = 0;
  std::size_t names_interned_twice = 0;  // an iid interned again on its sequence
  std::size_t unresolved_names = 0;      // an iid used before its sequence interned it
  std::map<std::uint64_t, std::size_t>
      counter_values_by_track;  // TYPE_COUNTER events by track uuid
  std::vector<DecodedTrack> tracks;
  std::vector<DecodedEvent> events;  // the first `keep_events` track events, in file order
};

namespace perfetto_detail {

inline std::string value_of(const std::string& line) {
  const auto colon = line.find(':');
  std::string v = line.substr(colon + 2);
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

inline std::string key_of(const std::string& line) {
  const auto first = line.find_first_not_of(' ');
  const auto end = line.find_first_of(": {", first);
  return line.substr(first, end - first);
}

// One packet's fields as read, resolved when its closing brace is reached.
struct Packet {
  std::uint32_t sequence = 0;
  std::optional<std::uint64_t> timestamp;
  bool absolute = false, clock_snapshot = false, has_event = false, has_track = false;
  DecodedEvent event;
  std::uint64_t event_name_iid = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> annotations;  // (name iid, value)
  std::vector<std::pair<std::uint64_t, std::string>> event_names, annotation_names;
  DecodedTrack track;
};

}  // namespace perfetto_detail

class PerfettoReader {
  struct Sequence {
    std::uint64_t clock = 0;
    std::map<std::uint64_t, std::string> event_names, annotation_names;
  };

 public:
  explicit PerfettoReader(std::size_t keep_events) : keep_(keep_events) {}

  DecodedTrace decode(const std::filesystem::path& file, const std::string& schema_dir) {
    const std::string cmd = "protoc --proto_path=" + schema_dir +
                            " --decode=perfetto.protos.Trace perfetto_trace.proto < '" +
                            file.string() + "' 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return out_;
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p)) line(buf);
    const int status = ::pclose(p);
    out_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out_;
  }

 private:
  void line(std::string l) {
    using perfetto_detail::key_of;
    using perfetto_detail::value_of;
    while (!l.empty() && (l.back() == '\n' || l.back() == ' ')) l.pop_back();
    const std::string key = key_of(l);
    const bool field_line = l.find(':') != std::string::npos;
    if (!field_line && !l.empty() && l.back() == '{') {
      path_.push_back(key);
      if (path_.size() == 2 && key == "track_event") p_.has_event = true;
      if (path_.size() == 2 && key == "track_descriptor") p_.has_track = true;
      if (path_.size() == 2 && key == "clock_snapshot") p_.clock_snapshot = true;
      if (path_.size() == 3 && key == "counter" && path_[1] == "track_descriptor")
        p_.track.counter = true;
      if (path_.size() == 3 && key == "debug_annotations") p_.annotations.emplace_back();
      if (path_.size() == 3 && key == "event_names") p_.event_names.emplace_back();
      if (path_.size() == 3 && key == "debug_annotation_names") p_.annotation_names.emplace_back();
      return;
    }
    if (!field_line && !l.empty() && l.back() == '}') {
      if (path_.empty()) return;
      path_.pop_back();
      if (path_.empty()) finish();
      return;
    }
    if (field_line) field(path_, key, value_of(l));
  }

  void field(const std::vector<std::string>& at, const std::string& key, const std::string& v) {
    const std::string where = at.size() >= 2 ? at[1] : "";
    const std::string inner = at.size() >= 3 ? at[2] : "";
    if (at.size() == 1) {
      if (key == "timestamp") p_.timestamp = std::stoull(v);
      if (key == "trusted_packet_sequence_id")
        p_.sequence = static_cast<std::uint32_t>(std::stoul(v));
      if (key == "timestamp_clock_id") p_.absolute = v == "6";
    } else if (where == "track_event" && at.size() == 2) {
      if (key == "type") p_.event.type = v;
      if (key == "name_iid") p_.event_name_iid = std::stoull(v);
      if (key == "track_uuid") p_.event.track_uuid = std::stoull(v);
      if (key == "counter_value") p_.event.counter_value = std::stoll(v);
      if (key == "extra_counter_values") p_.event.extra_counter_values.push_back(std::stoll(v));
      if (key == "flow_ids") {
        ++out_.flows_out;
        p_.event.flow_ids.push_back(std::stoull(v));
      }
      if (key == "terminating_flow_ids") {
        ++out_.flows_in;
        p_.event.terminating_flow_ids.push_back(std::stoull(v));
      }
    } else if (where == "track_event" && inner == "debug_annotations") {
      if (key == "name_iid") p_.annotations.back().first = std::stoull(v);
      if (key == "uint_value") p_.annotations.back().second = std::stoull(v);
    } else if (where == "interned_data") {
      auto& list = inner == "event_names" ? p_.event_names : p_.annotation_names;
      if (key == "iid") list.back().first = std::stoull(v);
      if (key == "name") list.back().second = v;
    } else if (where == "track_descriptor" && at.size() == 2) {
      if (key == "uuid") p_.track.uuid = std::stoull(v);
      if (key == "parent_uuid") p_.track.parent = std::stoull(v);
      if (key == "name") p_.track.name = v;
      if (key == "description") p_.track.description = v;
    }
  }

  void intern(std::map<std::uint64_t, std::string>& names,
              const std::vector<std::pair<std::uint64_t, std::string>>& entries) {
    for (const auto& [iid, name] : entries) {
      if (!names.emplace(iid, name).second) ++out_.names_interned_twice;
    }
  }

  std::string lookup(const std::map<std::uint64_t, std::string>& names, std::uint64_t iid) {
    const auto it = names.find(iid);
    if (it != names.end()) return it->second;
    ++out_.unresolved_names;
    return "";
  }

  void finish() {
    Sequence& s = sequences_[p_.sequence];
    if (p_.clock_snapshot) s.clock = 0;
    intern(s.event_names, p_.event_names);
    intern(s.annotation_names, p_.annotation_names);
    if (p_.has_track) out_.tracks.push_back(p_.track);
    if (p_.has_event) event(s);
    p_ = {};
  }

  void event(Sequence& s) {
    DecodedEvent& e = p_.event;
    e.sequence = p_.sequence;
    if (p_.timestamp && p_.absolute) e.time_ns = *p_.timestamp;
    if (p_.timestamp && !p_.absolute) e.time_ns = s.clock += *p_.timestamp;
    if (p_.event_name_iid != 0) e.name = lookup(s.event_names, p_.event_name_iid);
    for (const auto& [iid, v] : p_.annotations) e.annotations[lookup(s.annotation_names, iid)] = v;
    out_.slice_begins += e.type == "TYPE_SLICE_BEGIN";
    out_.slice_ends += e.type == "TYPE_SLICE_END";
    out_.instants += e.type == "TYPE_INSTANT";
    out_.counters += e.type == "TYPE_COUNTER";
    if (e.type == "TYPE_COUNTER") ++out_.counter_values_by_track[e.track_uuid];
    out_.extra_counter_values += e.extra_counter_values.size();
    if (out_.events.size() < keep_) out_.events.push_back(e);
  }

  std::size_t keep_;
  DecodedTrace out_;
  std::vector<std::string> path_;
  perfetto_detail::Packet p_;
  std::map<std::uint32_t, Sequence> sequences_;
};

// What the flows of an export link: each flow id started on a spawn_batch instant and the child it
// was started for (the instant's first_child + its place in the list); each slice that ends one.
struct SpawnLinks {
  std::map<std::uint64_t, std::uint64_t> child_of_flow;
  std::multiset<std::uint64_t> started;  // every started flow id, steals' too
  std::map<std::uint64_t, std::vector<std::uint64_t>>
      ended_by_task;  // task id -> the flow ids its slice ends
  std::size_t spawn_starts = 0;
  std::size_t batches_past_their_children = 0;  // instants with more flows than their `children`
};

inline SpawnLinks spawn_links(const DecodedTrace& d) {
  SpawnLinks s;
  for (const DecodedEvent& e : d.events) {
    for (const std::uint64_t f : e.flow_ids) s.started.insert(f);
    if (e.name == "spawn_batch") {
      const auto first = e.annotations.find("first_child"),
                 children = e.annotations.find("children");
      if (first == e.annotations.end() || children == e.annotations.end() ||
          e.flow_ids.size() > children->second) {
        ++s.batches_past_their_children;
        continue;
      }
      for (std::size_t i = 0; i < e.flow_ids.size(); ++i)
        s.child_of_flow[e.flow_ids[i]] = first->second + i;
      s.spawn_starts += e.flow_ids.size();
    }
    const auto task = e.annotations.find("task_id");
    if (e.type == "TYPE_SLICE_BEGIN" && !e.terminating_flow_ids.empty() &&
        task != e.annotations.end()) {
      s.ended_by_task[task->second] = e.terminating_flow_ids;
    }
  }
  return s;
}

}  // namespace gpulb::testing
