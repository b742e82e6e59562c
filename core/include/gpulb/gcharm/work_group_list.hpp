// G-Charm's workGroupList (Rengasamy & Vadhiyar, section 3.1): the requests that have arrived and
// wait for a launch. It is also the producers' RequestSink: emit() stamps a request's arrival and
// appends it; the policy driver's host loop takes requests from the front, launches them, and
// reports them completed once their output has landed.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulb/errors.hpp"
#include "gpulb/requests.hpp"

namespace gpulb::gcharm {

// A request in the list: what the producer emitted, with its items copied and its arrival time.
struct PendingRequest {
  Task task;
  std::vector<std::uint32_t> items;
  std::uint32_t ordered_items = 0;
  std::span<std::byte> output;
  std::uint64_t arrival_ns = 0;
  std::uint64_t generation = 0;  // the item table it indexes (publish_items counts them)
  std::uint64_t work = 0;        // Request::work, or its items when the stream gave none
};

class WorkGroupList : public RequestSink {
 public:
  // now_ns: the host clock the run's trace uses.
  WorkGroupList(const RequestStream& stream, std::function<std::uint64_t()> now_ns)
      : stream_(stream), now_ns_(std::move(now_ns)) {}

  // ---- the producers' side ----
  void publish_items(std::span<const std::byte> items) override {
    if (items.size() % stream_.item_bytes != 0) {
      throw std::invalid_argument("published item table of " + std::to_string(items.size()) +
                                  " bytes is not a whole number of " +
                                  std::to_string(stream_.item_bytes) + "-byte items");
    }
    std::unique_lock lock(mutex_);
    wait_quiet(lock);
    table_ = items;
    table_items_.store(items.size() / stream_.item_bytes, std::memory_order_release);
    ++generation_;
  }

  void emit(const Request& r) override {
    // The table does not change while requests are emitted (publish_items waits for quiet, and
    // the producer that published it emits after); acquire pairs with the publish. No lock here.
    const std::uint64_t table_items = table_items_.load(std::memory_order_acquire);
    for (std::uint32_t item : r.items) {
      if (item >= table_items) {
        throw std::out_of_range("request " + std::to_string(r.task.id) + " names item " +
                                std::to_string(item) + " past the published table of " +
                                std::to_string(table_items) + " items");
      }
    }
    if (stream_.max_items_per_request != 0 && r.items.size() > stream_.max_items_per_request) {
      throw std::length_error("request " + std::to_string(r.task.id) + " reads " +
                              std::to_string(r.items.size()) +
                              " items, more than the stream's max_items_per_request " +
                              std::to_string(stream_.max_items_per_request));
    }
    PendingRequest p{
        r.task,
        {r.items.begin(), r.items.end()},
        std::min<std::uint32_t>(r.ordered_items, static_cast<std::uint32_t>(r.items.size())),
        r.output,
        0};
    std::lock_guard lock(mutex_);
    if (aborted_) throw RunError("the run was stopped while requests were being produced");
    p.arrival_ns = now_ns_();  // under the lock: arrivals are in time order
    p.generation = generation_;
    p.work = r.work != 0 ? r.work : r.items.size();
    list_.push_back(std::move(p));
    ++emitted_;
  }

  void wait_all() override {
    std::unique_lock lock(mutex_);
    wait_quiet(lock);
  }

  // ---- the driver's side ----
  // What the driver's periodic check reads, under one lock (the producers contend for it).
  struct State {
    std::uint64_t waiting = 0;  // requests in the list
    // No request will arrive until what was emitted has run: the producer waits for it
    // (wait_all, publish_items) or has returned. A launch that waits for more arrivals would
    // wait forever.
    bool arrivals_paused = false;
    bool all_done = false;  // the producer has returned and every request it emitted has run
    std::uint64_t emitted = 0, completed = 0;
  };
  // Arrival times of requests emitted since the last call, in order, and the list's state.
  State take_arrivals(std::vector<std::uint64_t>& out) {
    std::lock_guard lock(mutex_);
    const std::uint64_t in_list_new = std::min<std::uint64_t>(emitted_ - announced_, list_.size());
    for (std::size_t i = list_.size() - in_list_new; i < list_.size(); ++i)
      out.push_back(list_[i].arrival_ns);
    announced_ = emitted_;
    return {list_.size(), quiet_waiters_ > 0 || producer_done_,
            producer_done_ && completed_ == emitted_, emitted_, completed_};
  }
  std::vector<PendingRequest> take_front(std::uint64_t n) {
    std::lock_guard lock(mutex_);
    n = std::min<std::uint64_t>(n, list_.size());
    std::vector<PendingRequest> out(
        std::make_move_iterator(list_.begin()),
        std::make_move_iterator(list_.begin() + static_cast<std::ptrdiff_t>(n)));
    list_.erase(list_.begin(), list_.begin() + static_cast<std::ptrdiff_t>(n));
    return out;
  }
  // The work of the first `n` requests (hybrid's split reads it before taking any).
  void front_work(std::uint64_t n, std::vector<std::uint64_t>& out) const {
    std::lock_guard lock(mutex_);
    n = std::min<std::uint64_t>(n, list_.size());
    out.clear();
    for (std::uint64_t i = 0; i < n; ++i) out.push_back(list_[i].work);
  }
  // Requests taken but not launched (hybrid: a busy side's part) go back to the front, in order.
  void put_back_front(std::vector<PendingRequest> requests) {
    std::lock_guard lock(mutex_);
    list_.insert(list_.begin(), std::make_move_iterator(requests.begin()),
                 std::make_move_iterator(requests.end()));
  }
  // Requests whose output has landed on the host.
  void completed(std::uint64_t n) {
    bool quiet;
    {
      std::lock_guard lock(mutex_);
      completed_ += n;
      quiet = completed_ == emitted_ && quiet_waiters_ > 0;
    }
    // Only the completion that makes the list quiet can end a wait (an emit makes it busy again):
    // waking the producer at every launch's end cost it a context switch each.
    if (quiet) quiet_.notify_all();
  }
  void producer_done() {
    std::lock_guard lock(mutex_);
    producer_done_ = true;
  }
  // Stops the producers: their waits and emits throw RunError (the run failed).
  void abort() {
    {
      std::lock_guard lock(mutex_);
      aborted_ = true;
    }
    quiet_.notify_all();
  }
  std::uint64_t completed_count() const {
    std::lock_guard lock(mutex_);
    return completed_;
  }
  // The table the waiting requests index (each request carries its generation, which changes on
  // every publish_items). A publish waits until nothing is in flight, so it cannot change under a
  // launch being assembled.
  std::span<const std::byte> table() const {
    std::lock_guard lock(mutex_);
    return table_;
  }

 private:
  void wait_quiet(std::unique_lock<std::mutex>& lock) {
    ++quiet_waiters_;
    quiet_.wait(lock, [&] { return aborted_ || completed_ == emitted_; });
    --quiet_waiters_;
    if (aborted_) throw RunError("the run was stopped while requests were being produced");
  }

  const RequestStream& stream_;
  std::function<std::uint64_t()> now_ns_;
  mutable std::mutex mutex_;
  std::condition_variable quiet_;
  std::deque<PendingRequest> list_;
  std::span<const std::byte> table_;
  std::atomic<std::uint64_t> table_items_{0};
  std::uint64_t generation_ = 0;
  std::uint64_t emitted_ = 0;
  std::uint64_t announced_ = 0;
  std::uint64_t completed_ = 0;
  std::uint32_t quiet_waiters_ = 0;
  bool producer_done_ = false;
  bool aborted_ = false;
};

}  // namespace gpulb::gcharm
