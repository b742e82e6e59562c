// SHA-1 (FIPS 180-4), written once for the device and the host: the hash behind UTS's splittable
// random streams (the "BRG SHA-1" generator of the UTS distribution, rng/brg_sha1.c).
//
// Two entry points:
//   Sha1: a general byte-stream hasher (any length), for tests against a library SHA-1;
//   sha1_one_block: the compression of one already-padded 64-byte block given as 16 big-endian
//     words, from the standard initial value. UTS hashes 20- and 24-byte messages, which are one
//     block, so the device path never handles bytes at all.
// No standard library beyond <cstdint>: it runs in CUDA device code.
#pragma once

#include <cstdint>

#include "gpulb/hd.hpp"

namespace gpulb::scenarios::uts {

GPULB_HD inline std::uint32_t sha1_rotl(std::uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
}

// The initial hash value H(0) (a function, not an array: constexpr arrays are not usable in
// device code without --expt-relaxed-constexpr).
GPULB_HD constexpr std::uint32_t sha1_init(int i) {
  return i == 0   ? 0x67452301u
         : i == 1 ? 0xEFCDAB89u
         : i == 2 ? 0x98BADCFEu
         : i == 3 ? 0x10325476u
                  : 0xC3D2E1F0u;
}

// One compression: h <- h + F(h, w). `w` is the block as 16 big-endian words; it is overwritten
// (the message schedule is kept in those 16 words, a rolling window).
GPULB_HD inline void sha1_compress(std::uint32_t h[5], std::uint32_t w[16]) {
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  // The host compiler keeps this a loop with a branch per round and the schedule in memory
  // (136 ns a UTS hash with g++ -O3); unrolled, the round tests and the window indices fold and
  // the schedule lives in registers (about 60-80 ns). Only for host compilers: nvcc's passes
  // (device code, and the host side of .cu files, which runs no CPU backend) are left exactly as
  // they were (its front end does not know the pragma).
#if !defined(__CUDACC__)
#pragma GCC unroll 80
#endif
  for (int t = 0; t < 80; ++t) {
    std::uint32_t wt;
    if (t < 16) {
      wt = w[t];
    } else {
      wt = sha1_rotl(w[(t + 13) & 15] ^ w[(t + 8) & 15] ^ w[(t + 2) & 15] ^ w[t & 15], 1);
      w[t & 15] = wt;
    }
    std::uint32_t f, k;
    if (t < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999u;
    } else if (t < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1u;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDCu;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6u;
    }
    const std::uint32_t tmp = sha1_rotl(a, 5) + f + e + k + wt;
    e = d;
    d = c;
    c = sha1_rotl(b, 30);
    b = a;
    a = tmp;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

// The digest of one padded block, as five big-endian words (digest bytes 4i..4i+3 = out[i]).
GPULB_HD inline void sha1_one_block(std::uint32_t w[16], std::uint32_t out[5]) {
  for (int i = 0; i < 5; ++i) out[i] = sha1_init(i);
  sha1_compress(out, w);
}

// Streaming SHA-1 over bytes.
struct Sha1 {
  std::uint32_t h[5] = {sha1_init(0), sha1_init(1), sha1_init(2), sha1_init(3), sha1_init(4)};
  std::uint8_t buf[64] = {};
  std::uint32_t fill = 0;
  std::uint64_t bytes = 0;

  GPULB_HD void update(const std::uint8_t* data, std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) {
      buf[fill++] = data[i];
      if (fill == 64) block();
    }
    bytes += n;
  }

  // The 20-byte digest, big-endian as SHA-1 defines it.
  GPULB_HD void final(std::uint8_t out[20]) {
    const std::uint64_t bits = bytes * 8;
    buf[fill++] = 0x80;
    if (fill > 56) {
      while (fill < 64) buf[fill++] = 0;
      block();
    }
    while (fill < 56) buf[fill++] = 0;
    for (int i = 7; i >= 0; --i) buf[fill++] = static_cast<std::uint8_t>(bits >> (8 * i));
    block();
    for (int i = 0; i < 5; ++i) {
      for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>(h[i] >> (24 - 8 * j));
    }
  }

 private:
  GPULB_HD void block() {
    std::uint32_t w[16];
    for (int i = 0; i < 16; ++i) {
      w[i] = (std::uint32_t{buf[4 * i]} << 24) | (std::uint32_t{buf[4 * i + 1]} << 16) |
             (std::uint32_t{buf[4 * i + 2]} << 8) | std::uint32_t{buf[4 * i + 3]};
    }
    sha1_compress(h, w);
    fill = 0;
  }
};

}  // namespace gpulb::scenarios::uts
