// Policy options as --param reads them (gpulb/policy.hpp): each option's default is PolicyOptions'
// own, and every choice an option offers parses to the enum value of that name.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <variant>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/policies/hybrid.hpp"
#include "gpulb/policies/work_stealing.hpp"
#include "gpulb/policy.hpp"

namespace gpulb {
namespace {

const OptionSpec& option_named(const PolicyDescriptor& d, const std::string& name) {
  for (const OptionSpec* o : options_of(d)) {
    if (o->spec.name == name) return *o;
  }
  throw std::logic_error("no option " + name);
}

TEST(PolicyOptions, EveryDefaultParsesToTheStructsOwnValue) {
  const PolicyOptions defaults;
  for (const PolicyDescriptor* d : builtin::registry().policies()) {
    const PolicyOptions parsed = parse_policy_options(*d, {});
    for (const OptionSpec* o : options_of(*d)) {
      SCOPED_TRACE(std::string(d->name) + " " + o->spec.name + "=" + o->spec.default_value);
      if (auto* number = std::get_if<std::uint32_t PolicyOptions::*>(&o->field)) {
        EXPECT_EQ(parsed.**number, defaults.**number);
        EXPECT_EQ(o->spec.default_value, std::to_string(defaults.**number));
      } else if (auto* real = std::get_if<double PolicyOptions::*>(&o->field)) {
        EXPECT_EQ(parsed.**real, defaults.**real);
      } else {
        // A choice: its default is one of the choices it offers (EachChoiceSetsTheEnumOfItsName
        // checks that the names reach the enums).
        EXPECT_FALSE(o->spec.choices.empty());
        EXPECT_NE(std::find(o->spec.choices.begin(), o->spec.choices.end(), o->spec.default_value),
                  o->spec.choices.end());
      }
    }
  }
}

TEST(PolicyOptions, EachChoiceSetsTheEnumOfItsName) {
  const PolicyDescriptor& ws = policies::work_stealing();
  for (const char* victim : {"random", "round-robin"}) {
    const PolicyOptions o = parse_policy_options(ws, {{"victim", victim}});
    EXPECT_EQ(choice_name(o.victim), victim);
  }
  EXPECT_EQ(parse_policy_options(ws, {{"victim", "round-robin"}}).victim, VictimChoice::RoundRobin);
  EXPECT_EQ(parse_policy_options(ws, {{"peer", "off"}}).peer, PeerMemory::Off);
  EXPECT_EQ(parse_policy_options(ws, {{"remote", "steal"}}).remote, RemoteMode::Steal);
  EXPECT_EQ(parse_policy_options(ws, {{"deque_overflow", "fail"}}).deque_overflow,
            DequeOverflow::Fail);
  EXPECT_EQ(parse_policy_options(ws, {{"task_per", "lane"}}).task_per, TaskPer::Lane);
  EXPECT_EQ(parse_policy_options(ws, {}).victim, VictimChoice::Random);
}

TEST(PolicyOptions, AChoiceAnOptionDoesNotOfferIsRefusedNamingTheOffered) {
  // hybrid's strategy offers two of RequestStrategy's three values.
  const OptionSpec& strategy = option_named(policies::hybrid(), "strategy");
  EXPECT_EQ(strategy.spec.range, "adaptive|static");
  try {
    parse_policy_options(policies::hybrid(), {{"strategy", "eager"}});
    FAIL() << "strategy=eager was taken by hybrid";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("adaptive|static"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_policy_options(policies::hybrid(), {{"strategy", "static"}}).strategy,
            RequestStrategy::Static);
}

TEST(PolicyOptions, RangesAreWrittenFromTheBounds) {
  const OptionSpec& deque = option_named(policies::work_stealing(), "deque_capacity");
  EXPECT_EQ(deque.spec.range,
            std::to_string(deque.spec.min) + ".." + std::to_string(deque.spec.max));
  EXPECT_EQ(deque.spec.default_value, std::to_string(PolicyOptions{}.deque_capacity));
  EXPECT_THROW(parse_policy_options(policies::work_stealing(), {{"deque_capacity", "0"}}),
               ConfigError);
}

}  // namespace
}  // namespace gpulb
