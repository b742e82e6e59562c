#include "nbody/octree.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpulb::scenarios::nbody {

void Octree::build(std::span<const Vec3d> pos, std::span<const double> mass, std::uint32_t bucket,
                   std::vector<std::uint32_t>& order) {
  nodes_.clear();
  buckets_.clear();
  nodes_.reserve(2 * order.size() / std::max<std::uint32_t>(1, bucket) + 16);
  nodes_.emplace_back();
  fill_node(0, pos, mass, 0, static_cast<std::uint32_t>(order.size()), order, bucket, 0);
}

// Fills node `self` for order[begin, end); its children are allocated together, so they are
// consecutive (first_child .. first_child + children).
void Octree::fill_node(std::uint32_t self, std::span<const Vec3d> pos, std::span<const double> mass,
                       std::uint32_t begin, std::uint32_t end, std::vector<std::uint32_t>& order,
                       std::uint32_t bucket, int depth) {
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  double m = 0, cx = 0, cy = 0, cz = 0;
  for (std::uint32_t i = begin; i < end; ++i) {
    const Vec3d& p = pos[order[i]];
    const double c[3] = {p.x, p.y, p.z};
    for (int d = 0; d < 3; ++d) lo[d] = std::min(lo[d], c[d]), hi[d] = std::max(hi[d], c[d]);
    const double mi = mass[order[i]];
    m += mi, cx += mi * p.x, cy += mi * p.y, cz += mi * p.z;
  }
  TreeNode& n = nodes_[self];
  n.begin = begin, n.end = end;
  for (int d = 0; d < 3; ++d)
    n.lo[d] = static_cast<float>(lo[d]), n.hi[d] = static_cast<float>(hi[d]);
  n.monopole = {static_cast<float>(cx / m), static_cast<float>(cy / m), static_cast<float>(cz / m),
                static_cast<float>(m)};
  if (end - begin <= bucket) {
    buckets_.push_back(self);
    return;
  }
  // Split at the box's centre into octants. Where every particle falls into one octant (points
  // closer than the box can resolve) the range is split in halves instead, so the recursion ends.
  const double mid[3] = {(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2};
  auto octant = [&](std::uint32_t i) {
    const Vec3d& p = pos[i];
    return (p.x >= mid[0] ? 1 : 0) | (p.y >= mid[1] ? 2 : 0) | (p.z >= mid[2] ? 4 : 0);
  };
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;
  std::uint32_t at = begin;
  for (int o = 0; o < 8; ++o) {
    const auto next =
        static_cast<std::uint32_t>(std::partition(order.begin() + at, order.begin() + end,
                                                  [&](std::uint32_t i) { return octant(i) == o; }) -
                                   order.begin());
    if (next > at) ranges.emplace_back(at, next);
    at = next;
  }
  if (ranges.size() == 1 || depth > 64)
    ranges = {{begin, begin + (end - begin) / 2}, {begin + (end - begin) / 2, end}};
  const auto first = static_cast<std::uint32_t>(nodes_.size());
  n.first_child = first;  // `n` is not used past the resize below (it may move the nodes)
  n.children = static_cast<std::uint32_t>(ranges.size());
  nodes_.resize(nodes_.size() + ranges.size());
  for (std::size_t c = 0; c < ranges.size(); ++c) {
    fill_node(first + static_cast<std::uint32_t>(c), pos, mass, ranges[c].first, ranges[c].second,
              order, bucket, depth + 1);
  }
}

// Opening criterion (bucket-node, as ChaNGa's walk): a node is taken whole, as its monopole, when
// its size is below theta times the distance from its centre of mass to the bucket's box;
// otherwise a leaf gives its particles and an inner node its children.
std::uint32_t Octree::interaction_list(std::uint32_t b, float theta, std::uint32_t particles,
                                       std::vector<std::uint32_t>& items,
                                       std::vector<std::uint32_t>& stack) const {
  const TreeNode& bucket = nodes_[b];
  items.clear();
  for (std::uint32_t i = bucket.begin; i < bucket.end; ++i) items.push_back(i);
  const auto prefix = static_cast<std::uint32_t>(items.size());
  stack.assign(1, 0);
  while (!stack.empty()) {
    const std::uint32_t k = stack.back();
    stack.pop_back();
    const TreeNode& n = nodes_[k];
    const float c[3] = {n.monopole.x, n.monopole.y, n.monopole.z};
    float d2 = 0, size = 0;
    for (int d = 0; d < 3; ++d) {
      const float gap = std::max({0.0f, bucket.lo[d] - c[d], c[d] - bucket.hi[d]});
      d2 += gap * gap;
      size = std::max(size, n.hi[d] - n.lo[d]);
    }
    if (size * size < theta * theta * d2) {
      items.push_back(particles + k);
    } else if (n.children == 0) {
      for (std::uint32_t i = n.begin; i < n.end; ++i) items.push_back(i);
    } else {
      for (std::uint32_t ch = 0; ch < n.children; ++ch) stack.push_back(n.first_child + ch);
    }
  }
  return prefix;
}

}  // namespace gpulb::scenarios::nbody
