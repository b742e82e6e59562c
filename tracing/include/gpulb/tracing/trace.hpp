// A recorded run: metadata, the devices it ran on, and one event stream (track) per worker or
// host thread. This is what the trace file stores and what every reader (info, exports, viewer)
// works from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpulb/tracing/event.hpp"
#include "gpulb/tracing/event_kinds.hpp"

namespace gpulb::trace {

enum class DeviceKind : std::uint8_t { Cpu = 0, Gpu = 1 };

struct Device {
  DeviceKind kind = DeviceKind::Cpu;
  std::uint32_t index = 0;     // GPU ordinal; 0 for the CPU
  std::string name;            // "NVIDIA H100 80GB HBM3", "CPU (8 threads)"
  std::uint32_t sm_count = 0;  // multiprocessors (GPU) or hardware threads (CPU)
  std::uint32_t workers = 0;   // blocks / threads that ran as workers on this device
  std::uint32_t rank = 0;      // the process (MPI rank) that drove it: the level above the device
};

enum class TrackRole : std::uint8_t {
  Worker = 0,  // a persistent block or a worker thread
  Host = 1,    // a host thread feeding or launching on a device (producer, control thread)
  SmLane = 2   // hardware policy on a GPU: the blocks that one SM ran, one after another
};

struct Track {
  TrackRole role = TrackRole::Worker;
  std::uint32_t device = 0;   // index into Trace::devices
  std::uint32_t worker = 0;   // worker rank (Worker), host thread number (Host), lane (SmLane)
  std::uint32_t sm = kNoSm;   // SM the worker ran on, where known
  std::string name;           // "block 12", "worker 3", "host producer"
  std::uint64_t dropped = 0;  // events that did not fit in the segment
  std::vector<Event> events;  // sorted by time_ns

  static constexpr std::uint32_t kNoSm = 0xFFFFFFFFu;
};

struct RunMetadata {
  std::string scenario;
  std::string policy;
  std::string backend;                            // "cpu" or "cuda"
  std::map<std::string, std::string> parameters;  // scenario and policy parameters as given
  std::uint32_t workers = 0;
  std::string clock_source;  // "steady_clock", "globaltimer aligned to steady_clock"
  std::string gpulb_version;
  std::string created_utc;  // ISO 8601
  bool verified = false;
  bool checked = true;  // false: nothing compared the result with a reference (verified is false)
  std::string verification;       // what was checked, what failed, or why nothing was checked
  std::string result_json;        // the scenario's result object, JSON text
  std::uint64_t makespan_ns = 0;  // first worker start to last worker end, as the runtime measured
  std::uint32_t ranks = 1;  // processes of a distributed run (devices name theirs); 1: one process
  // The policy's own measurements (RunResult::metrics: peak_task_slots, generations, steals...),
  // which no event carries; empty in files recorded without them.
  std::map<std::string, std::uint64_t> metrics;
};

struct Trace {
  RunMetadata meta;
  std::vector<Device> devices;
  std::vector<Track> tracks;

  std::uint64_t event_count() const;
  std::uint64_t dropped_count() const;
};

bool operator==(const Device&, const Device&);
bool operator==(const Track&, const Track&);
bool operator==(const RunMetadata&, const RunMetadata&);
bool operator==(const Trace&, const Trace&);
bool operator==(const Event&, const Event&);

}  // namespace gpulb::trace
