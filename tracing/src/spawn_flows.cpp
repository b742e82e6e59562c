#include "spawn_flows.hpp"

#include <algorithm>
#include <iterator>

namespace gpulb::trace::detail {

std::uint32_t SpawnFlows::announce(std::uint32_t first, std::uint32_t count) {
  const std::uint64_t end =
      std::min<std::uint64_t>(std::uint64_t{first} + count, std::uint64_t{1} << 32);
  const std::uint64_t n = end - first;
  if (n == 0 || flows_ + n > max_flows_ || ranges_.size() >= max_ranges_ || overlaps(first, end))
    return 0;
  add(first, end);
  flows_ += n;
  return static_cast<std::uint32_t>(n);
}

bool SpawnFlows::started(std::uint32_t child) const {
  auto it = ranges_.upper_bound(child);
  if (it == ranges_.begin()) return false;
  return child < std::prev(it)->second;
}

bool SpawnFlows::overlaps(std::uint64_t begin, std::uint64_t end) const {
  auto it = ranges_.lower_bound(begin);
  if (it != ranges_.end() && it->first < end) return true;
  return it != ranges_.begin() && std::prev(it)->second > begin;
}

// Inserts [begin, end), which overlaps no range, and merges it with the ranges it touches.
void SpawnFlows::add(std::uint64_t begin, std::uint64_t end) {
  auto next = ranges_.lower_bound(begin);
  if (next != ranges_.end() && next->first == end) {
    end = next->second;
    next = ranges_.erase(next);
  }
  if (next != ranges_.begin() && std::prev(next)->second == begin) {
    std::prev(next)->second = end;
    return;
  }
  ranges_.emplace_hint(next, begin, end);
}

}  // namespace gpulb::trace::detail
