// The protocol buffers wire format, as much of it as the Perfetto exporter writes: varints,
// fixed64, strings and nested messages (protobuf.dev/programming-guides/encoding). A message is
// built in memory (a packet is a few dozen bytes) and appended whole, its length first; clear()
// keeps the buffer, so a writer that reuses its messages allocates nothing per packet.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpulb::trace::proto {

class Message {
 public:
  void uint(std::uint32_t field, std::uint64_t v) {
    key(field, kVarint);
    varint(v);
  }
  // int64 and int32 fields take the two's complement as a varint (10 bytes for a negative value).
  void int64(std::uint32_t field, std::int64_t v) { uint(field, static_cast<std::uint64_t>(v)); }
  void boolean(std::uint32_t field, bool v) { uint(field, v ? 1 : 0); }
  void fixed64(std::uint32_t field, std::uint64_t v) {
    key(field, kFixed64);
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  void string(std::uint32_t field, std::string_view s) {
    key(field, kLengthDelimited);
    varint(s.size());
    bytes_.append(s);
  }
  void message(std::uint32_t field, const Message& m) { string(field, m.bytes_); }
  // The message as field `field` of its parent, appended to `out`: the top-level Trace's packets.
  void append_as_field(std::string& out, std::uint32_t field) const {
    Message head;
    head.key(field, kLengthDelimited);
    head.varint(bytes_.size());
    out += head.bytes_;
    out += bytes_;
  }
  void clear() { bytes_.clear(); }
  bool empty() const { return bytes_.empty(); }
  std::size_t size() const { return bytes_.size(); }

 private:
  static constexpr std::uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2;
  void key(std::uint32_t field, std::uint32_t wire_type) {
    varint((std::uint64_t{field} << 3) | wire_type);
  }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      bytes_.push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    bytes_.push_back(static_cast<char>(v));
  }
  std::string bytes_;
};

}  // namespace gpulb::trace::proto
