// The tables of README.md as markdown_tables renders them from a list object.
#include <gtest/gtest.h>

#include <string>

#include "gpulb/tools/markdown_tables.hpp"

namespace gpulb::tools {
namespace {

nlohmann::json traits(bool persistent) {
  return {{"persistent", persistent},
          {"host_fed", false},
          {"runs_spawned_tasks", !persistent},
          {"cpu_runs_spawned_tasks", false},
          {"host_inserts", false},
          {"runs_requests", false},
          {"distributed", false}};
}

nlohmann::json a_list() {
  nlohmann::json watchdog = {{"name", "watchdog_ms"}, {"default", "10000"}};
  return {{"common_options", {watchdog}},
          {"policies",
           {{{"name", "one"},
             {"paper", "A | B"},
             {"summary", "first line\nsecond line"},
             {"traits", traits(true)},
             {"options", {watchdog, {{"name", "depth"}, {"default", "4"}}}}},
            {{"name", "two"},
             {"paper", "C"},
             {"summary", "s"},
             {"traits", traits(false)},
             {"options", {watchdog}}}}},
          {"scenarios",
           {{{"name", "sc"},
             {"description", "does x | y"},
             {"default_policy", "one"},
             {"parameters",
              {{{"name", "n"}, {"default", "3"}}, {{"name", "mode"}, {"default", "a|b"}}}}}}}};
}

std::string row_of(const std::string& tables, const std::string& first_cell) {
  const auto at = tables.find("\n| `" + first_cell + "` |");
  if (at == std::string::npos) return {};
  return tables.substr(at + 1, tables.find('\n', at + 1) - at - 1);
}

TEST(MarkdownTables, ARowAPolicyWithItsOwnOptionsOnly) {
  const std::string t = markdown_tables(a_list());
  EXPECT_EQ(row_of(t, "one"),
            "| `one` | A \\| B | first line second line | persistent workers | `depth` |");
  EXPECT_EQ(row_of(t, "two"), "| `two` | C | s | a block per task, runs spawned tasks | none |");
}

TEST(MarkdownTables, ARowAScenarioWithItsDefaults) {
  EXPECT_EQ(row_of(markdown_tables(a_list()), "sc"),
            "| `sc` | does x \\| y | `one` | `n=3`, `mode=a\\|b` |");
}

TEST(MarkdownTables, PoliciesThenScenariosEachUnderItsHeader) {
  const std::string t = markdown_tables(a_list());
  EXPECT_EQ(t.rfind("| policy |", 0), 0u) << t;
  EXPECT_NE(t.find("\n\n| scenario |"), std::string::npos) << t;
  EXPECT_LT(t.find("| `two` |"), t.find("| scenario |"));
}

TEST(MarkdownTables, AListWithoutAFieldIsRefused) {
  nlohmann::json list = a_list();
  list["policies"][0].erase("paper");
  EXPECT_THROW(markdown_tables(list), nlohmann::json::exception);
}

}  // namespace
}  // namespace gpulb::tools
