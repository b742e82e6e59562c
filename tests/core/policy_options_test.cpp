// Policy options as --param reads them (gpulb/policy.hpp): each policy's own struct, its defaults
// written once in the struct, every choice an option offers parsed to the enum value of that name,
// and the plan's checked read of the struct.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/policies/hybrid.hpp"
#include "gpulb/policies/static_list.hpp"
#include "gpulb/policies/task_queue.hpp"
#include "gpulb/policies/work_stealing.hpp"
#include "gpulb/policy.hpp"

namespace gpulb {
namespace {

using policies::WorkStealingOptions;

const ParamSpec& option_named(const PolicyDescriptor& d, const std::string& name) {
  for (const ParamSpec* o : options_of(d)) {
    if (o->name == name) return *o;
  }
  throw std::logic_error("no option " + name);
}

const WorkStealingOptions& ws_options(const ParamMap& params) {
  static PolicyOptionsValue held;  // the reference outlives the call
  held = parse_policy_options(policies::work_stealing(), params);
  return held.get<WorkStealingOptions>();
}

TEST(PolicyOptions, EveryDefaultIsAValueItsOptionTakes) {
  for (const PolicyDescriptor* d : builtin::registry().policies()) {
    for (const ParamSpec* o : options_of(*d)) {
      SCOPED_TRACE(std::string(d->name) + " " + o->name + "=" + o->default_value);
      EXPECT_NO_THROW(parse_run_options({{o->name, o->default_value}}));
      EXPECT_NO_THROW(parse_policy_options(*d, {{o->name, o->default_value}}));
      if (!o->choices.empty()) {
        EXPECT_NE(std::find(o->choices.begin(), o->choices.end(), o->default_value),
                  o->choices.end());
      }
    }
  }
}

TEST(PolicyOptions, NoParamsParseToTheStructsOwnDefaults) {
  const WorkStealingOptions defaults;
  const WorkStealingOptions& parsed = ws_options({});
  EXPECT_EQ(parsed.deque_capacity, defaults.deque_capacity);
  EXPECT_EQ(parsed.spawn_capacity, defaults.spawn_capacity);
  EXPECT_EQ(parsed.overflow_capacity, defaults.overflow_capacity);
  EXPECT_EQ(parsed.victim, defaults.victim);
  EXPECT_EQ(parse_run_options({}).watchdog_ms, RunOptions{}.watchdog_ms);
  EXPECT_EQ(option_named(policies::work_stealing(), "spawn_capacity").default_value,
            std::to_string(SpawnOptions{}.spawn_capacity));
  EXPECT_EQ(option_named(policies::hybrid(), "cpu_share").default_value, "0.5");
}

TEST(PolicyOptions, EachChoiceSetsTheEnumOfItsName) {
  for (const char* victim : {"random", "round-robin"}) {
    EXPECT_EQ(choice_name(ws_options({{"victim", victim}}).victim), victim);
  }
  EXPECT_EQ(ws_options({{"victim", "round-robin"}}).victim, VictimChoice::RoundRobin);
  EXPECT_EQ(ws_options({{"peer", "off"}}).peer, PeerMemory::Off);
  EXPECT_EQ(ws_options({{"remote", "steal"}}).remote, RemoteMode::Steal);
  EXPECT_EQ(ws_options({{"deque_overflow", "fail"}}).deque_overflow, DequeOverflow::Fail);
  EXPECT_EQ(ws_options({{"task_per", "lane"}}).task_per, TaskPer::Lane);
  EXPECT_EQ(ws_options({{"spawn_capacity", "16"}}).spawn_capacity, 16u);
  EXPECT_EQ(ws_options({}).victim, VictimChoice::Random);
}

TEST(PolicyOptions, AChoiceAnOptionDoesNotOfferIsRefusedNamingTheOffered) {
  // hybrid's strategy offers two of RequestStrategy's three values.
  EXPECT_EQ(option_named(policies::hybrid(), "strategy").range, "adaptive|static");
  try {
    parse_policy_options(policies::hybrid(), {{"strategy", "eager"}});
    FAIL() << "strategy=eager was taken by hybrid";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("adaptive|static"), std::string::npos) << e.what();
  }
  const PolicyOptionsValue v = parse_policy_options(policies::hybrid(), {{"strategy", "static"}});
  EXPECT_EQ(v.get<policies::HybridOptions>().strategy, RequestStrategy::Static);
}

TEST(PolicyOptions, RangesAreWrittenFromTheBounds) {
  const ParamSpec& deque = option_named(policies::work_stealing(), "deque_capacity");
  EXPECT_EQ(deque.range, std::to_string(deque.min) + ".." + std::to_string(deque.max));
  EXPECT_EQ(deque.default_value, std::to_string(WorkStealingOptions{}.deque_capacity));
  EXPECT_THROW(parse_policy_options(policies::work_stealing(), {{"deque_capacity", "0"}}),
               ConfigError);
}

TEST(PolicyOptions, APlanReadAsAnotherPolicysStructThrowsNamingBoth) {
  ExecPlan plan;
  plan.options = parse_policy_options(policies::work_stealing(), {});
  try {
    (void)plan.policy_options<policies::TaskQueueOptions>();
    FAIL() << "work-stealing's options were read as task-queue's";
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("WorkStealingOptions"), std::string::npos) << what;
    EXPECT_NE(what.find("TaskQueueOptions"), std::string::npos) << what;
  }
  EXPECT_EQ(plan.spawn_options().spawn_capacity, SpawnOptions{}.spawn_capacity);
  plan.options = parse_policy_options(policies::hybrid(), {});
  EXPECT_THROW((void)plan.spawn_options(), std::logic_error);  // hybrid spawns nothing
}

TEST(PolicyOptions, APlanWithoutOptionsReadsDefaultsAndAnEditIsItsOwn) {
  ExecPlan plan;
  EXPECT_EQ(plan.policy_options<policies::StaticListOptions>().list_capacity, 0u);
  plan.options.edit<policies::StaticListOptions>().list_capacity = 64;
  const ExecPlan copy = plan;
  plan.options.edit<policies::StaticListOptions>().list_capacity = 128;
  EXPECT_EQ(copy.policy_options<policies::StaticListOptions>().list_capacity, 64u);
  EXPECT_EQ(plan.policy_options<policies::StaticListOptions>().list_capacity, 128u);
  EXPECT_EQ(plan.spawn_options().spawn_capacity, SpawnOptions{}.spawn_capacity);
}

}  // namespace
}  // namespace gpulb
