// The tables of policies and scenarios that README.md holds, rendered from the object `gpulb list
// --json` prints (`gpulb list --markdown`; scripts/doc-tables.sh writes them into the file and
// checks them). Only what the descriptors and scenarios say goes in: nothing that depends on the
// build (backends, GPUs), so that every build renders the same tables.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpulb::tools {

// A policy's traits ("traits" of a policy in the list object) in words, comma-separated.
std::string traits_text(const nlohmann::json& traits);

// Two Markdown tables, policies then scenarios, a blank line between them. Throws
// nlohmann::json::exception where `list` lacks a field the tables show.
std::string markdown_tables(const nlohmann::json& list);

}  // namespace gpulb::tools
