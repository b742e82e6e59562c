// The Barnes-Hut tree of the `nbody` scenario (host side): an octree over the particles, built by
// reordering them so that every node's particles are one contiguous range (tree order), with each
// node's monopole (centre of mass, mass) and bounding box. Leaves of at most `bucket` particles
// are the buckets: all particles of a bucket share one interaction list, as in ChaNGa.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nbody/nbody_body.hpp"

namespace gpulb::scenarios::nbody {

struct Vec3d {
  double x = 0, y = 0, z = 0;
};

struct TreeNode {
  Body4 monopole;                 // centre of mass and total mass
  float lo[3], hi[3];             // bounding box of its particles
  std::uint32_t begin, end;       // its particles: [begin, end) in tree order
  std::uint32_t first_child = 0;  // children are consecutive nodes; 0: a leaf
  std::uint32_t children = 0;
};

class Octree {
 public:
  // Reorders `order` (particle indices) into tree order and builds the nodes over `pos`/`mass`.
  void build(std::span<const Vec3d> pos, std::span<const double> mass, std::uint32_t bucket,
             std::vector<std::uint32_t>& order);

  const std::vector<TreeNode>& nodes() const { return nodes_; }
  const std::vector<std::uint32_t>& buckets() const { return buckets_; }  // leaf node indices

  // The interaction list of bucket leaf `b` with opening angle theta: items are particle indices
  // (tree order) below `particles`, node monopoles at particles + node index. The bucket's own
  // particles come first (they are the block's rows), then the sources; returns the prefix length.
  std::uint32_t interaction_list(std::uint32_t b, float theta, std::uint32_t particles,
                                 std::vector<std::uint32_t>& items,
                                 std::vector<std::uint32_t>& stack) const;

 private:
  void fill_node(std::uint32_t self, std::span<const Vec3d> pos, std::span<const double> mass,
                 std::uint32_t begin, std::uint32_t end, std::vector<std::uint32_t>& order,
                 std::uint32_t bucket, int depth);
  std::vector<TreeNode> nodes_;
  std::vector<std::uint32_t> buckets_;
};

}  // namespace gpulb::scenarios::nbody
