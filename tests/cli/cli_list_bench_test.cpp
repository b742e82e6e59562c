// The gpulb command line, run as a user runs it: `gpulb list` and `gpulb bench`: the tables, and outputs checked before measuring.
#include "cli_fixture.hpp"

namespace {

using gpulb::testing::Cli;
using gpulb::testing::file_text;
using gpulb::testing::gpulb;
using gpulb::testing::Outcome;
using gpulb::testing::shell_gpulb;
using gpulb::testing::small_trace;

// `gpulb bench scale` measures GPUs against GPUs: on the CPU backend it is refused, naming why,
// before any run (and T1XL is a tree the bench and the runs know).
TEST_F(Cli, BenchScaleWithoutGpusIsABadArgument) {
  const Outcome b = gpulb("bench scale --backend cpu --tree T1XL");
  EXPECT_EQ(b.exit_code, 2) << b.out;
  EXPECT_NE(b.out.find("bench scale runs on GPUs"), std::string::npos) << b.out;
  const Outcome t = gpulb("run uts --backend cpu --param tree=T1XL --param d=3");
  EXPECT_EQ(t.exit_code, 2) << t.out;
  EXPECT_EQ(t.out.find("unknown"), std::string::npos)
      << "T1XL is a preset: only the custom parameter is refused: " << t.out;
}

// `gpulb bench uts` puts the peer's load max/min (the nodes its threads explored, from
// scripts/uts-peer.sh's thread_nodes=) beside the CPU backend's, and fails the peer's row, not the
// table, where the counts do not add up to its threads and nodes. The peer here is a script that
// prints a PEER line: one thread explored twice the nodes of each other.
TEST_F(Cli, BenchUtsReportsThePeersLoadFromItsThreadsNodes) {
  const auto script = [&](const std::string& name, const std::string& body) {
    std::ofstream(path(name)) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(path(name), std::filesystem::perms::owner_all);
    return path(name);
  };
  // A line before the PEER line (as a first run's build prints) with fields of its own: not read.
  const std::string good =
      script("peer.sh",
             "n=$1; list=20; i=1; while [ $i -lt $n ]; do list=$list,10; i=$((i+1)); done\n"
             "echo \"building: nodes=1 s=9 thread_nodes=1\"\n"
             "echo \"PEER impl=fake tree=$2 threads=$n nodes=$((10*n+10)) s=0.5 nodes_per_s=1 "
             "thread_nodes=$list\"");
  const Outcome b = gpulb("bench uts --backend cpu --tree T1 --repeats 1 --peer-uts " + good);
  ASSERT_EQ(b.exit_code, 0) << b.out;
  const std::string load =
      std::thread::hardware_concurrency() > 1 ? "| 2.00 (20 / 10) |" : "| 1.00 (20 / 20) |";
  const std::size_t row = b.out.find("| cpu peer (");
  ASSERT_NE(row, std::string::npos) << b.out;
  EXPECT_NE(b.out.substr(row, b.out.find('\n', row) - row).find(load), std::string::npos) << b.out;

  const std::string bad = script(
      "bad.sh",
      "echo \"PEER impl=fake tree=$2 threads=$1 nodes=999 s=0.5 nodes_per_s=1 thread_nodes=5\"");
  const Outcome f = gpulb("bench uts --backend cpu --tree T1 --repeats 1 --peer-uts " + bad);
  ASSERT_EQ(f.exit_code, 0) << f.out;
  EXPECT_NE(
      f.out.find("failed: thread_nodes= names 1 threads and 5 nodes, not " +
                 std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " and 999"),
      std::string::npos)
      << f.out;
  // A count with letters after its digits is refused, not read as its digits.
  const std::string letters = script(
      "letters.sh", "echo \"PEER impl=fake tree=$2 threads=$1 nodes=999x s=0.5 nodes_per_s=1\"");
  const Outcome l = gpulb("bench uts --backend cpu --tree T1 --repeats 1 --peer-uts " + letters);
  ASSERT_EQ(l.exit_code, 0) << l.out;
  EXPECT_NE(l.out.find("failed: the PEER line has no count in nodes= or no time in s="),
            std::string::npos)
      << l.out;
}

TEST_F(Cli, ListNamesScenariosPoliciesAndBackends) {
  const Outcome o = gpulb("list --json");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const auto j = nlohmann::json::parse(o.out);
  std::vector<std::string> names;
  for (const auto& s : j.at("scenarios")) names.push_back(s.at("name"));
  EXPECT_NE(std::find(names.begin(), names.end(), "patterns"), names.end()) << o.out;
  EXPECT_EQ(j.at("backends").at("cpu"), true);
  // The policy table lists what this build's backends register, each with its options.
  std::map<std::string, nlohmann::json> policies;
  for (const auto& p : j.at("policies")) policies[p.at("name")] = p;
  for (const char* name :
       {"task-queue", "hardware", "chunked", "work-stealing", "static-list", "blocking-queue"}) {
    ASSERT_TRUE(policies.count(name)) << name << " missing: " << o.out;
    EXPECT_NE(policies[name].at("backends").dump().find("cpu"), std::string::npos) << name;
  }
  auto option_names = [&](const std::string& policy) {
    std::vector<std::string> out;
    for (const auto& opt : policies[policy].at("options")) out.push_back(opt.at("name"));
    return out;
  };
  const auto ws = option_names("work-stealing"), tq = option_names("task-queue");
  EXPECT_NE(std::find(ws.begin(), ws.end(), "deque_capacity"), ws.end());
  EXPECT_NE(std::find(ws.begin(), ws.end(), "watchdog_ms"), ws.end());
  EXPECT_EQ(std::find(tq.begin(), tq.end(), "deque_capacity"), tq.end());
}

// README's tables come from `list --markdown`: a row for each policy and scenario of `list --json`,
// with a policy's own options only (the common ones are every policy's).
TEST_F(Cli, ListMarkdownHasARowForEachPolicyAndScenarioOfTheJson) {
  const auto j = nlohmann::json::parse(gpulb("list --json").out);
  const Outcome o = gpulb("list --markdown");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  for (const auto& p : j.at("policies")) {
    EXPECT_NE(o.out.find("\n| `" + p.at("name").get<std::string>() + "` | " +
                         p.at("paper").get<std::string>() + " |"),
              std::string::npos)
        << p.at("name") << ": " << o.out;
  }
  for (const auto& s : j.at("scenarios")) {
    EXPECT_NE(o.out.find("\n| `" + s.at("name").get<std::string>() + "` | "), std::string::npos)
        << s.at("name") << ": " << o.out;
  }
  const std::string ws_row = o.out.substr(o.out.find("\n| `work-stealing` |"));
  const std::string ws = ws_row.substr(0, ws_row.find('\n', 1));
  EXPECT_NE(ws.find("`deque_capacity`"), std::string::npos) << ws;
  EXPECT_EQ(ws.find("`watchdog_ms`"), std::string::npos) << ws;
  EXPECT_NE(ws.find("runs spawned tasks"), std::string::npos) << ws;
}

TEST_F(Cli, ListTakesJsonOrMarkdownNotBoth) {
  const Outcome o = gpulb("list --json --markdown");
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("excludes"), std::string::npos) << o.out;
}

// bench -o is checked before the first measurement and written whole or not at all: to a missing
// folder or a device it printed "wrote" with exit 0 having written nothing; on a full disk it left
// empty files with exit 0.
TEST_F(Cli, BenchOutputIsCheckedFirstAndWrittenWholeOrNotAtAll) {
  const std::string bench = "bench dispatch --backend cpu --tasks 1000 --repeats 1 ";
  const Outcome missing = gpulb(bench + "-o " + path("no-such-dir/b.md"));
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_NE(missing.out.find("does not exist"), std::string::npos) << missing.out;
  EXPECT_EQ(missing.out.find("| "), std::string::npos)
      << "refused before measuring: " << missing.out;
  const Outcome device = gpulb(bench + "-o /dev/full");
  EXPECT_EQ(device.exit_code, 2) << device.out;
  const Outcome json_named = gpulb(bench + "-o " + path("b.json"));
  EXPECT_EQ(json_named.exit_code, 2) << json_named.out;

  const Outcome full = shell_gpulb("trap '' XFSZ; ulimit -f 0; ", bench + "-o " + path("full.md"));
  EXPECT_EQ(full.exit_code, 1) << full.out;
  EXPECT_NE(full.out.find("write failed"), std::string::npos) << full.out;
  EXPECT_FALSE(std::filesystem::exists(path("full.md")));
  EXPECT_FALSE(std::filesystem::exists(path("full.json")));

  const Outcome ok = gpulb(bench + "-o " + path("b.md"));
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(file_text(path("b.md")).find("| "), std::string::npos);
  EXPECT_TRUE(nlohmann::json::accept(file_text(path("b.json")))) << file_text(path("b.json"));
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

}  // namespace
