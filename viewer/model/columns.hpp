// Compact columns for the trace model: what a lane holds, stored as struct-of-arrays with 32-bit
// times relative to the column's first (Tracy stores zones the same way, for the same reason: a
// 10 M-event trace held as 16-byte events, 24-byte zones and 16-byte points took 80 bytes an event;
// docs/benchmarks.md).
//
// [SECTION] TimeColumn: sorted times, 4 bytes each while they span under 2^32 ns (4.3 s)
// [SECTION] IndexIterator: a random-access iterator over a column that yields values
// [SECTION] EventColumns: a track's events, column by column
// [SECTION] IntervalList, ZoneList, MarkerList: what a lane draws
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <span>
#include <vector>

#include "gpulb/tracing/event.hpp"

namespace gpulb::viewer {

// -------------------------------------------------------------------------------------------------
// [SECTION] TimeColumn
// -------------------------------------------------------------------------------------------------

// Times pushed in order (not necessarily sorted). Each is stored as an offset from the first, in
// 32 bits; a time before the first or more than 4.3 s after it turns the column into 64-bit
// times (a CPU run of minutes), so no time is ever wrong, only wider.
class TimeColumn {
 public:
  void push_back(std::uint64_t t) {
    if (!wide_.empty()) {
      wide_.push_back(t);
      return;
    }
    if (narrow_.empty()) base_ = t;
    if (t >= base_ && t - base_ <= std::numeric_limits<std::uint32_t>::max()) {
      narrow_.push_back(static_cast<std::uint32_t>(t - base_));
      return;
    }
    widen();
    wide_.push_back(t);
  }
  std::uint64_t operator[](std::size_t i) const {
    return wide_.empty() ? base_ + narrow_[i] : wide_[i];
  }
  std::size_t size() const { return wide_.empty() ? narrow_.size() : wide_.size(); }
  bool empty() const { return size() == 0; }
  void reserve(std::size_t n) { narrow_.reserve(n); }
  void shrink_to_fit() {
    narrow_.shrink_to_fit();
    wide_.shrink_to_fit();
  }
  std::size_t bytes() const { return narrow_.capacity() * 4 + wide_.capacity() * 8; }
  // First index whose time is >= t (lower_bound) or > t (upper_bound), the column sorted. Exact
  // for every t: the times are compared as the whole numbers they are, not as doubles, which past
  // 2^53 ns are 1 ns apart no more and would move a time by up to half their spacing.
  std::size_t lower_bound(double t) const;
  std::size_t upper_bound(double t) const;

 private:
  void widen();
  std::size_t count_at_or_before(std::uint64_t t) const;  // the column sorted
  std::uint64_t base_ = 0;
  std::vector<std::uint32_t> narrow_;
  std::vector<std::uint64_t> wide_;
};

// -------------------------------------------------------------------------------------------------
// [SECTION] IndexIterator
// -------------------------------------------------------------------------------------------------

// Iterates list[0 .. size) by index, yielding list[i] by value (the columns hold no element to
// refer to). Random access, so std::partition_point and friends search it in O(log n).
template <class List, class Value>
class IndexIterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = Value;
  using difference_type = std::ptrdiff_t;
  using reference = Value;
  using pointer = void;

  IndexIterator() = default;
  IndexIterator(const List* list, std::size_t i)
      : list_(list), i_(static_cast<difference_type>(i)) {}
  Value operator*() const { return (*list_)[static_cast<std::size_t>(i_)]; }
  Value operator[](difference_type n) const { return (*list_)[static_cast<std::size_t>(i_ + n)]; }
  // it->field: a value with the field, kept alive for the expression.
  struct Arrow {
    Value v;
    const Value* operator->() const { return &v; }
  };
  Arrow operator->() const { return Arrow{**this}; }
  IndexIterator& operator++() {
    ++i_;
    return *this;
  }
  IndexIterator operator++(int) {
    IndexIterator t = *this;
    ++i_;
    return t;
  }
  IndexIterator& operator--() {
    --i_;
    return *this;
  }
  IndexIterator operator--(int) {
    IndexIterator t = *this;
    --i_;
    return t;
  }
  IndexIterator& operator+=(difference_type n) {
    i_ += n;
    return *this;
  }
  IndexIterator& operator-=(difference_type n) {
    i_ -= n;
    return *this;
  }
  friend IndexIterator operator+(IndexIterator a, difference_type n) { return a += n; }
  friend IndexIterator operator+(difference_type n, IndexIterator a) { return a += n; }
  friend IndexIterator operator-(IndexIterator a, difference_type n) { return a -= n; }
  friend difference_type operator-(const IndexIterator& a, const IndexIterator& b) {
    return a.i_ - b.i_;
  }
  friend bool operator==(const IndexIterator& a, const IndexIterator& b) { return a.i_ == b.i_; }
  friend auto operator<=>(const IndexIterator& a, const IndexIterator& b) { return a.i_ <=> b.i_; }
  std::size_t index() const { return static_cast<std::size_t>(i_); }

 private:
  const List* list_ = nullptr;
  difference_type i_ = 0;
};

// -------------------------------------------------------------------------------------------------
// [SECTION] EventColumns
// -------------------------------------------------------------------------------------------------

// One track's events: 11 bytes an event (time 4, arg 4, aux 2, kind 1) where trace::Event takes
// 16; flags (reserved, 0 in every writer) take a byte only in a track where one is not 0.
class EventColumns {
 public:
  EventColumns() = default;
  explicit EventColumns(std::span<const trace::Event> events);

  void push_back(const trace::Event& e);
  void reserve(std::size_t n);
  void shrink_to_fit();

  std::size_t size() const { return kind_.size(); }
  bool empty() const { return kind_.empty(); }
  std::uint64_t time_ns(std::size_t i) const { return time_[i]; }
  trace::EventKind kind(std::size_t i) const { return kind_[i]; }
  std::uint32_t arg(std::size_t i) const { return arg_[i]; }
  std::uint16_t aux(std::size_t i) const { return aux_[i]; }
  std::uint8_t flags(std::size_t i) const { return flags_.empty() ? 0 : flags_[i]; }
  trace::Event operator[](std::size_t i) const {
    return {time_ns(i), arg(i), aux(i), kind(i), flags(i)};
  }
  const TimeColumn& times() const { return time_; }

  using iterator = IndexIterator<EventColumns, trace::Event>;
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size()}; }

  std::vector<trace::Event> to_events() const;
  std::size_t bytes() const;

 private:
  TimeColumn time_;
  std::vector<std::uint32_t> arg_;
  std::vector<std::uint16_t> aux_;
  std::vector<trace::EventKind> kind_;
  std::vector<std::uint8_t> flags_;  // empty while every flag is 0
};

// -------------------------------------------------------------------------------------------------
// [SECTION] IntervalList, ZoneList, MarkerList
// -------------------------------------------------------------------------------------------------

// A task as drawn: one TaskBegin/TaskEnd pair (trace::task_spans, the statistics' own pairing).
struct Zone {
  std::uint64_t begin_ns;
  std::uint64_t end_ns;
  std::uint32_t id;
  std::uint16_t kind;
};

// A worker's idle spell: from a failed dequeue to its next task (or its end).
struct IdleSpan {
  std::uint64_t begin_ns;
  std::uint64_t end_ns;
};

// A point event drawn as a tick: failed dequeue, steal, failed steal, spawn, halt, host events.
struct Marker {
  std::uint64_t time_ns;
  std::uint32_t arg;
  std::uint16_t aux;
  trace::EventKind kind;
};

// Sorted, non-overlapping intervals (so their ends are sorted too): 8 bytes each.
class IntervalList {
 public:
  void push_back(std::uint64_t begin_ns, std::uint64_t end_ns) {
    begin_.push_back(begin_ns);
    end_.push_back(end_ns);
  }
  std::size_t size() const { return begin_.size(); }
  bool empty() const { return begin_.empty(); }
  std::uint64_t begin_ns(std::size_t i) const { return begin_[i]; }
  std::uint64_t end_ns(std::size_t i) const { return end_[i]; }
  IdleSpan operator[](std::size_t i) const { return {begin_[i], end_[i]}; }
  IdleSpan front() const { return (*this)[0]; }
  IdleSpan back() const { return (*this)[size() - 1]; }
  using iterator = IndexIterator<IntervalList, IdleSpan>;
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size()}; }
  // First interval whose end is >= t; first interval from `from` on whose begin is >= t.
  std::size_t first_ending_at_or_after(double t) const { return end_.lower_bound(t); }
  std::size_t first_beginning_at_or_after(std::size_t from, double t) const;
  void reserve(std::size_t n) {
    begin_.reserve(n);
    end_.reserve(n);
  }
  void shrink_to_fit() {
    begin_.shrink_to_fit();
    end_.shrink_to_fit();
  }
  std::size_t bytes() const { return begin_.bytes() + end_.bytes(); }

 private:
  TimeColumn begin_, end_;
};

// A lane's tasks: the intervals, each task's id and kind, and its busy time summed every 16 tasks
// (busy_ns_before adds at most 15 durations to one of those sums): 14.5 bytes a task.
class ZoneList {
 public:
  void push_back(const Zone& z);
  void shrink_to_fit();
  std::size_t size() const { return spans_.size(); }
  bool empty() const { return spans_.empty(); }
  std::uint64_t begin_ns(std::size_t i) const { return spans_.begin_ns(i); }
  std::uint64_t end_ns(std::size_t i) const { return spans_.end_ns(i); }
  std::uint32_t id(std::size_t i) const { return id_[i]; }
  std::uint16_t kind(std::size_t i) const { return kind_[i]; }
  Zone operator[](std::size_t i) const {
    return {spans_.begin_ns(i), spans_.end_ns(i), id_[i], kind_[i]};
  }
  Zone front() const { return (*this)[0]; }
  Zone back() const { return (*this)[size() - 1]; }
  using iterator = IndexIterator<ZoneList, Zone>;
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size()}; }
  std::size_t first_ending_at_or_after(double t) const {
    return spans_.first_ending_at_or_after(t);
  }
  std::size_t first_beginning_at_or_after(std::size_t from, double t) const {
    return spans_.first_beginning_at_or_after(from, t);
  }
  // Busy ns of tasks [0, k); busy_ns(): of all of them.
  std::uint64_t busy_ns_before(std::size_t k) const;
  std::uint64_t busy_ns() const { return total_busy_; }
  std::size_t bytes() const;

 private:
  static constexpr std::size_t kSumEvery = 16;
  IntervalList spans_;
  std::vector<std::uint32_t> id_;
  std::vector<std::uint16_t> kind_;
  std::vector<std::uint64_t> busy_sums_;  // busy_sums_[j]: busy ns of tasks [0, j * kSumEvery)
  std::uint64_t total_busy_ = 0;
};

// A lane's point events, as indices into its track's EventColumns (4 bytes each, not a copy).
// The columns must outlive the list: the model owns both.
class MarkerList {
 public:
  MarkerList() = default;
  explicit MarkerList(const EventColumns* events) : events_(events) {}
  void push_back(std::uint32_t event_index) { index_.push_back(event_index); }
  void shrink_to_fit() { index_.shrink_to_fit(); }
  std::size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  std::uint64_t time_ns(std::size_t i) const { return events_->time_ns(index_[i]); }
  Marker operator[](std::size_t i) const {
    const std::uint32_t e = index_[i];
    return {events_->time_ns(e), events_->arg(e), events_->aux(e), events_->kind(e)};
  }
  using iterator = IndexIterator<MarkerList, Marker>;
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size()}; }
  std::size_t event_index(std::size_t i) const { return index_[i]; }
  // First marker at or after t; first after t.
  std::size_t first_at_or_after(double t) const;
  std::size_t first_after(double t) const;
  std::size_t bytes() const { return index_.capacity() * 4; }

 private:
  const EventColumns* events_ = nullptr;
  std::vector<std::uint32_t> index_;
};

}  // namespace gpulb::viewer
