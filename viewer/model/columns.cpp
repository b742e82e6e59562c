#include "columns.hpp"

#include <algorithm>
#include <cmath>

namespace gpulb::viewer {

void TimeColumn::widen() {
  wide_.reserve(std::max(narrow_.capacity(), narrow_.size() + 1));
  for (const std::uint32_t t : narrow_) wide_.push_back(base_ + t);
  std::vector<std::uint32_t>().swap(narrow_);
}

std::size_t TimeColumn::count_at_or_before(std::uint64_t t) const {
  if (!wide_.empty()) {
    return static_cast<std::size_t>(
        std::partition_point(wide_.begin(), wide_.end(), [t](std::uint64_t v) { return v <= t; }) -
        wide_.begin());
  }
  if (t < base_) return 0;
  // Compared as offsets: one subtraction per search, not one per step.
  const std::uint64_t rel = t - base_;
  return static_cast<std::size_t>(
      std::partition_point(narrow_.begin(), narrow_.end(),
                           [rel](std::uint32_t v) { return v <= rel; }) -
      narrow_.begin());
}

// Whole times below t are those at or before ceil(t) - 1; none below a t of 0 or less (or NaN).
std::size_t TimeColumn::lower_bound(double t) const {
  if (!(t > 0.0)) return 0;
  if (t >= 0x1p64) return size();
  return count_at_or_before(static_cast<std::uint64_t>(std::ceil(t)) - 1);
}

// Whole times at or before t are those at or before floor(t); none before a negative t (or NaN).
std::size_t TimeColumn::upper_bound(double t) const {
  if (!(t >= 0.0)) return 0;
  if (t >= 0x1p64) return size();
  return count_at_or_before(static_cast<std::uint64_t>(t));
}

EventColumns::EventColumns(std::span<const trace::Event> events) {
  const std::size_t n = events.size();
  time_.reserve(n);
  for (const trace::Event& e : events) time_.push_back(e.time_ns);
  arg_.resize(n);
  aux_.resize(n);
  kind_.resize(n);
  bool flags = false;
  for (std::size_t i = 0; i < n; ++i) {
    arg_[i] = events[i].arg;
    aux_[i] = events[i].aux;
    kind_[i] = events[i].kind;
    flags = flags || events[i].flags != 0;
  }
  if (flags) {
    flags_.resize(n);
    for (std::size_t i = 0; i < n; ++i) flags_[i] = events[i].flags;
  }
}

void EventColumns::push_back(const trace::Event& e) {
  time_.push_back(e.time_ns);
  arg_.push_back(e.arg);
  aux_.push_back(e.aux);
  kind_.push_back(e.kind);
  if (e.flags != 0 && flags_.empty()) flags_.resize(kind_.size() - 1, 0);
  if (!flags_.empty()) flags_.push_back(e.flags);
}

void EventColumns::reserve(std::size_t n) {
  time_.reserve(n);
  arg_.reserve(n);
  aux_.reserve(n);
  kind_.reserve(n);
}

void EventColumns::shrink_to_fit() {
  time_.shrink_to_fit();
  arg_.shrink_to_fit();
  aux_.shrink_to_fit();
  kind_.shrink_to_fit();
  flags_.shrink_to_fit();
}

std::vector<trace::Event> EventColumns::to_events() const {
  std::vector<trace::Event> out;
  out.reserve(size());
  for (std::size_t i = 0; i < size(); ++i) out.push_back((*this)[i]);
  return out;
}

std::size_t EventColumns::bytes() const {
  return time_.bytes() + arg_.capacity() * 4 + aux_.capacity() * 2 + kind_.capacity() +
         flags_.capacity();
}

std::size_t IntervalList::first_beginning_at_or_after(std::size_t from, double t) const {
  // Galloping from `from`: the level of detail asks for the next run a few zones on, mostly.
  const std::size_t n = size();
  std::size_t lo = from, step = 1, hi = from;
  while (hi < n && static_cast<double>(begin_[hi]) < t) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  hi = std::min(hi, n);
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (static_cast<double>(begin_[mid]) < t) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

void ZoneList::push_back(const Zone& z) {
  if (size() % kSumEvery == 0) busy_sums_.push_back(total_busy_);
  spans_.push_back(z.begin_ns, z.end_ns);
  id_.push_back(z.id);
  kind_.push_back(z.kind);
  total_busy_ += z.end_ns - z.begin_ns;
}

void ZoneList::shrink_to_fit() {
  spans_.shrink_to_fit();
  id_.shrink_to_fit();
  kind_.shrink_to_fit();
  busy_sums_.shrink_to_fit();
}

std::uint64_t ZoneList::busy_ns_before(std::size_t k) const {
  if (k >= size()) return total_busy_;
  std::uint64_t sum = busy_sums_[k / kSumEvery];
  for (std::size_t i = k / kSumEvery * kSumEvery; i < k; ++i)
    sum += spans_.end_ns(i) - spans_.begin_ns(i);
  return sum;
}

std::size_t MarkerList::first_at_or_after(double t) const {
  return static_cast<std::size_t>(
      std::partition_point(
          index_.begin(), index_.end(),
          [&](std::uint32_t e) { return static_cast<double>(events_->time_ns(e)) < t; }) -
      index_.begin());
}

std::size_t MarkerList::first_after(double t) const {
  return static_cast<std::size_t>(
      std::partition_point(
          index_.begin(), index_.end(),
          [&](std::uint32_t e) { return static_cast<double>(events_->time_ns(e)) <= t; }) -
      index_.begin());
}

std::size_t ZoneList::bytes() const {
  return spans_.bytes() + id_.capacity() * 4 + kind_.capacity() * 2 + busy_sums_.capacity() * 8;
}

}  // namespace gpulb::viewer
