#include "spawn_flows.hpp"

#include <algorithm>
#include <iterator>

namespace gpulb::trace::detail {

std::uint32_t SpawnFlows::announce(std::uint32_t first, std::uint32_t count, std::uint64_t time_ns) {
  promote(time_ns);
  const std::uint64_t end = std::min<std::uint64_t>(std::uint64_t{first} + count, std::uint64_t{1} << 32);
  if (end <= first || ranges() >= max_ranges_) return 0;
  fresh_.push_back({first, end, time_ns});
  return static_cast<std::uint32_t>(end - first);
}

bool SpawnFlows::started(std::uint32_t child, std::uint64_t time_ns) {
  promote(time_ns);
  auto it = ranges_.upper_bound(child);
  if (it == ranges_.begin()) return false;
  --it;
  return child < it->second;
}

void SpawnFlows::promote(std::uint64_t now_ns) {
  if (fresh_.empty()) return;
  const auto earlier = [&](const Fresh& f) { return f.time_ns <= now_ns; };
  for (const Fresh& f : fresh_) {
    if (earlier(f)) add(f.begin, f.end);
  }
  fresh_.erase(std::remove_if(fresh_.begin(), fresh_.end(), earlier), fresh_.end());
}

// Inserts [begin, end) and merges it with every range it overlaps or touches.
void SpawnFlows::add(std::uint64_t begin, std::uint64_t end) {
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second >= begin) {
    --it;
    begin = it->first;
    end = std::max(end, it->second);
    it = ranges_.erase(it);
  }
  while (it != ranges_.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = ranges_.erase(it);
  }
  ranges_.emplace_hint(it, begin, end);
}

}  // namespace gpulb::trace::detail
