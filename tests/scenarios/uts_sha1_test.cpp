// gpulb's device-capable SHA-1 (scenarios/uts/sha1.hpp) against OpenSSL's, on the FIPS 180
// example vectors and on messages of every length up to a few blocks. Built only where OpenSSL
// is found (the GPU machines have none): CMake skips it with a message.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "uts/sha1.hpp"

namespace gpulb::scenarios::uts {
namespace {

std::string hex(const std::uint8_t* d, std::size_t n) {
  std::string s;
  char b[3];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", d[i]);
    s += b;
  }
  return s;
}

std::string ours(const std::vector<std::uint8_t>& m) {
  Sha1 h;
  h.update(m.data(), m.size());
  std::uint8_t d[20];
  h.final(d);
  return hex(d, 20);
}

std::string openssl(const std::vector<std::uint8_t>& m) {
  std::uint8_t d[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EXPECT_EQ(EVP_Digest(m.data(), m.size(), d, &len, EVP_sha1(), nullptr), 1);
  return hex(d, len);
}

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

TEST(Sha1, MatchesOpenSslOnTheFips180Examples) {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
      {"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
      {std::string(1000000, 'a'), "34aa973cd4c4daa4f61eeb2bdbad27316534016f"},
  };
  for (const auto& [msg, digest] : vectors) {
    EXPECT_EQ(ours(bytes(msg)), digest) << "message of " << msg.size() << " bytes";
    EXPECT_EQ(openssl(bytes(msg)), digest);
  }
}

TEST(Sha1, MatchesOpenSslOnEveryLengthAcrossBlockBoundaries) {
  std::mt19937 rng(7);
  for (std::size_t n = 0; n <= 300; ++n) {
    std::vector<std::uint8_t> m(n);
    for (auto& b : m) b = static_cast<std::uint8_t>(rng());
    ASSERT_EQ(ours(m), openssl(m)) << "message of " << n << " bytes";
  }
}

}  // namespace
}  // namespace gpulb::scenarios::uts
