// Work requests (G-Charm, Rengasamy & Vadhiyar, section 2): tasks that arrive while the run goes
// on and read *data items* -- entries of a table the host publishes (tree nodes, particles) --
// which the runtime moves to the device for them.
//
// A scenario that works this way hands the run a RequestStream (ScenarioInstance::request_stream):
// its `produce` runs on the host while the policy driver (combining, hybrid) combines the arrived
// requests into kernel launches of one block per request. Producing and running overlap, as in
// ChaNGa, where tree walks emit a request per bucket as they finish.
//
// On the device a request is an ordinary Task whose first four payload words the driver fills in
// before the launch (the scenario's own words are payload[4] and payload[5]); a body reads its
// items and writes its output with the accessors at the end of this file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "gpulb/hd.hpp"
#include "gpulb/task.hpp"

namespace gpulb {

// One work request, as a producer emits it.
struct Request {
  Task task;                             // id, kind, flags and payload[4..5] are the scenario's
  std::span<const std::uint32_t> items;  // indices into the published item table (copied at emit)
  // The first `ordered_items` items keep their order (e.g. a bucket's own particles); transfer
  // reuse-sorted sorts the rest by where they live on the device.
  std::uint32_t ordered_items = 0;
  // Where the body's output lands on the host once the request has run (must stay valid until
  // wait_all returns); the body finds it zeroed.
  std::span<std::byte> output;
  // What the request costs, in the stream's own units (0: its items, G-Charm's workload). Only
  // hybrid's split reads it, to weigh requests whose cost is not linear in their items (md2d's
  // pair tests grow with the product of its patches' particles).
  std::uint64_t work = 0;
};

// The producer's side of the run. Every member is safe to call from any producer thread.
class RequestSink {
 public:
  virtual ~RequestSink() = default;
  // Publishes the item table the requests emitted from now on index (`items.size()` must be a
  // multiple of the stream's item_bytes): waits until every request emitted before has run and its
  // output landed, then forgets every item the device holds (a new step's tree). The table must
  // stay unchanged until the next publish or the end of produce.
  virtual void publish_items(std::span<const std::byte> items) = 0;
  // A request arrives now.
  virtual void emit(const Request& request) = 0;
  // Waits until every request emitted so far has run and its output has landed.
  virtual void wait_all() = 0;
};

struct RequestStream {
  std::uint32_t item_bytes = 16;              // bytes of one data item (a multiple of 4)
  std::uint64_t expected_requests = 0;        // sizes the trace (0: unknown)
  std::uint32_t max_items_per_request = 0;    // the most items one request reads (sizes buffers)
  std::function<void(RequestSink&)> produce;  // emits every request of the run, then returns
};

// ---- device side: what the driver wrote into payload[0..3] ------------------------------------
// payload[0]: address of the request's slot list (uint32 per item), or 0 when its items lie
//             contiguously from payload[2] (transfer=redundant)
// payload[1]: number of items
// payload[2]: address of the item area: the device cache (slots) or the request's own copy
// payload[3]: address of the request's output (zeroed)
inline constexpr int kRequestScenarioWords = 4;  // payload[4..5] are the scenario's

GPULB_HD inline std::uint32_t request_item_count(const Task& t) {
  return static_cast<std::uint32_t>(t.payload[1]);
}

template <class Item>
GPULB_HD inline const Item& request_item(const Task& t, std::uint32_t i) {
  const auto* base = reinterpret_cast<const Item*>(t.payload[2]);
  const auto* slots = reinterpret_cast<const std::uint32_t*>(t.payload[0]);
  return slots != nullptr ? base[slots[i]] : base[i];
}

template <class Out>
GPULB_HD inline Out* request_output(const Task& t) {
  return reinterpret_cast<Out*>(t.payload[3]);
}

}  // namespace gpulb
