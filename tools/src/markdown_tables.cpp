#include "gpulb/tools/markdown_tables.hpp"

#include <set>

namespace gpulb::tools {
namespace {

// A table cell: one line, and no '|' that would end the cell early.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string code(const std::string& text) { return "`" + text + "`"; }

std::string policy_rows(const nlohmann::json& list) {
  std::set<std::string> common;
  for (const nlohmann::json& o : list.at("common_options"))
    common.insert(o.at("name").get<std::string>());
  std::string out =
      "| policy | from | how tasks reach workers | traits | options of its own |\n"
      "|---|---|---|---|---|\n";
  for (const nlohmann::json& p : list.at("policies")) {
    std::string options;
    for (const nlohmann::json& o : p.at("options")) {
      const std::string name = o.at("name").get<std::string>();
      if (!common.count(name)) options += (options.empty() ? "" : ", ") + code(name);
    }
    out += "| " + code(p.at("name").get<std::string>()) + " | " +
           cell(p.at("paper").get<std::string>()) + " | " +
           cell(p.at("summary").get<std::string>()) + " | " + traits_text(p.at("traits")) + " | " +
           (options.empty() ? "none" : options) + " |\n";
  }
  return out;
}

std::string scenario_rows(const nlohmann::json& list) {
  std::string out =
      "| scenario | what it is | policy without --policy | parameters and their defaults |\n"
      "|---|---|---|---|\n";
  for (const nlohmann::json& s : list.at("scenarios")) {
    std::string params;
    for (const nlohmann::json& p : s.at("parameters")) {
      params +=
          (params.empty() ? "" : ", ") +
          code(cell(p.at("name").get<std::string>() + "=" + p.at("default").get<std::string>()));
    }
    out += "| " + code(s.at("name").get<std::string>()) + " | " +
           cell(s.at("description").get<std::string>()) + " | " +
           code(s.at("default_policy").get<std::string>()) + " | " +
           (params.empty() ? "none" : params) + " |\n";
  }
  return out;
}

}  // namespace

std::string traits_text(const nlohmann::json& traits) {
  std::string t;
  auto add = [&](const char* key, bool when, const char* words) {
    if (traits.at(key).get<bool>() == when) t += (t.empty() ? "" : ", ") + std::string(words);
  };
  add("persistent", true, "persistent workers");
  add("persistent", false, "a block per task");
  add("host_fed", true, "host-fed");
  add("runs_spawned_tasks", true, "runs spawned tasks");
  add("cpu_runs_spawned_tasks", true, "runs spawned tasks on the cpu backend only");
  add("host_inserts", true, "host inserts during the run");
  add("runs_requests", true, "runs work requests");
  add("distributed", true, "runs across MPI ranks (--distributed)");
  return t;
}

std::string markdown_tables(const nlohmann::json& list) {
  return policy_rows(list) + "\n" + scenario_rows(list);
}

}  // namespace gpulb::tools
