// Text as the exports write it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gpulb::trace::detail {

// A JSON string literal, quotes included. Names come from the file (a track's name is raw bytes):
// invalid UTF-8 becomes U+FFFD instead of a json type_error thrown half way through an export
// (found by fuzz/export_fuzzer.cpp).
inline std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpulb::trace::detail
