// The `nbody` force body (G-Charm section 4.1, after Jetley et al.'s ChaNGa kernel): one block per
// bucket, its 128 threads as 16 rows x 8 columns. Row i computes the force on the bucket's
// particle i; column c takes every 8th interaction from c, so the 8 threads of a row read 8
// neighbouring interactions at once, and the row's partial sums meet in the output. Written once
// for the device and the CPU.
//
// Departure from the kernel the paper describes: ChaNGa stages the bucket's particles and each
// group of 8 interactions in shared memory; gpulb's body API has no shared tile, so each thread
// reads the interaction from the item area (the L1 cache serves the 16 rows that read the same
// item) and the 8 partial sums of a row are added with atomics into the output.
#pragma once

#include <cmath>
#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/requests.hpp"
#include "gpulb/task.hpp"

namespace gpulb::scenarios::nbody {

// A data item: a particle or a tree node's monopole (centre of mass and mass).
struct Body4 {
  float x, y, z, m;
};
static_assert(sizeof(Body4) == 16);

// A bucket particle's output: its acceleration and the count of interactions it summed (each
// request's count must equal its interactions exactly: a request run twice, or cut short, shows).
struct Accel {
  float x, y, z, interactions;
};
static_assert(sizeof(Accel) == 16);

inline constexpr std::uint32_t kRows = 16;            // a bucket's particles (the block's rows)
inline constexpr std::uint32_t kColumns = 8;          // interactions read at once by a row
inline constexpr std::uint32_t kBucketWordIndex = 4;  // payload word: particles in the bucket

struct NBodyBody {
  float softening2;  // eps^2 (Plummer softening)

  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& task) const {
    const auto bucket = static_cast<std::uint32_t>(task.payload[kBucketWordIndex]);
    const std::uint32_t items = request_item_count(task);
    Accel* out = request_output<Accel>(task);
    const float eps2 = softening2;
    const std::uint32_t threads = ctx.block_size();
    ctx.for_each_thread([&](std::uint32_t t) {
      // A block of other than 128 threads plays the 16 x 8 grid's positions in turn.
      for (std::uint32_t v = t; v < kRows * kColumns; v += threads) {
        const std::uint32_t row = v / kColumns, column = v % kColumns;
        if (row >= bucket) break;
        const Body4 p = request_item<Body4>(task, row);  // the bucket's particles come first
        float ax = 0, ay = 0, az = 0, n = 0;
        for (std::uint32_t j = bucket + column; j < items; j += kColumns) {
          const Body4 s = request_item<Body4>(task, j);
          const float dx = s.x - p.x, dy = s.y - p.y, dz = s.z - p.z;
          const float r2 = dx * dx + dy * dy + dz * dz + eps2;
          const float inv = 1.0f / (r2 * sqrtf(r2));
          ax += s.m * dx * inv;
          ay += s.m * dy * inv;
          az += s.m * dz * inv;
          n += 1;
        }
        device_atomic_ref<float>(out[row].x).fetch_add(ax, mo::relaxed);
        device_atomic_ref<float>(out[row].y).fetch_add(ay, mo::relaxed);
        device_atomic_ref<float>(out[row].z).fetch_add(az, mo::relaxed);
        device_atomic_ref<float>(out[row].interactions).fetch_add(n, mo::relaxed);
      }
    });
  }
};

}  // namespace gpulb::scenarios::nbody
