// laas-slurm's loop (laasctl/slurm_follower.h) against a fake service, disk and scontrol: the
// files follow the exports, slurmctld is reconfigured only when a file changed, a lost position
// re-reads everything, an unreachable service or a failed reconfigure is retried.
#include "laasctl/slurm_follower.h"

#include <gtest/gtest.h>

#include <map>

#include "laasctl/client.h"

using laas::ctl::ClientError;
using laas::ctl::FollowerConfig;
using laas::ctl::SlurmFollower;
using nlohmann::json;

namespace {

struct Fake {
  std::string topology = "SwitchName=s1 Nodes=comp-[1-4]\n";
  std::string partitions = "# none\n";
  std::uint64_t next = 1999;
  std::vector<json> pending;  // events the next poll returns
  bool lost = false;
  bool down = false;
  std::string reconfigure_failure;
  std::map<std::string, std::string> disk;
  std::vector<std::vector<std::string>> runs;
  std::vector<json> polls;
  std::vector<std::string> log;

  std::unique_ptr<SlurmFollower> follower() {
    FollowerConfig c;
    c.topology_file = "/t/topology.conf";
    c.partitions_file = "/t/laas-partitions.conf";
    return std::make_unique<SlurmFollower>(
        c,
        [this](const std::string& method, const json& params) {
          if (down) throw ClientError(69, "no service");
          if (method == "export") {
            const std::string f = params["format"];
            return json{{"ok", true},
                        {"result", {{"content", f == "slurm-topology" ? topology : partitions}}}};
          }
          polls.push_back(params);
          json r = {{"events", pending}, {"next", next}, {"lost", lost}};
          pending.clear();
          lost = false;
          return json{{"ok", true}, {"result", r}};
        },
        [this](const std::string& p) -> std::optional<std::string> {
          auto it = disk.find(p);
          if (it == disk.end()) return std::nullopt;
          return it->second;
        },
        [this](const std::string& p, const std::string& t) { disk[p] = t; },
        [this](const std::vector<std::string>& argv) {
          runs.push_back(argv);
          return reconfigure_failure;
        },
        [this](const std::string& l) { log.push_back(l); });
  }
};

// A fake world and a follower on it; the follower calls nothing until its first step.
class SlurmFollowerLoop : public testing::Test {
 protected:
  Fake f;
  std::unique_ptr<SlurmFollower> follower = f.follower();
};

}  // namespace

TEST_F(SlurmFollowerLoop, WritesBothFilesAtStartAndReconfiguresOnlyWhenOneChanged) {
  ASSERT_TRUE(follower->step());
  EXPECT_EQ(f.disk["/t/topology.conf"], f.topology);
  EXPECT_EQ(f.disk["/t/laas-partitions.conf"], f.partitions);
  ASSERT_EQ(f.runs.size(), 1u);
  EXPECT_EQ(f.runs[0], (std::vector<std::string>{"scontrol", "reconfigure"}));
  // The position was taken before the files were read, then long-polled from.
  ASSERT_EQ(f.polls.size(), 2u);
  EXPECT_FALSE(f.polls[0].contains("since"));
  EXPECT_EQ(f.polls[1]["since"], 1999u);
  EXPECT_EQ(f.polls[1]["wait_ms"], 25000);
  // A quiet poll: nothing read again, nothing run.
  ASSERT_TRUE(follower->step());
  EXPECT_EQ(follower->refreshes(), 1);
  EXPECT_EQ(f.runs.size(), 1u);
}

TEST_F(SlurmFollowerLoop, AnEventRewritesThePartitionsAndReconfigures) {
  ASSERT_TRUE(follower->step());
  f.partitions = "PartitionName=laas-bank Nodes=comp-[1-4] State=UP MaxTime=INFINITE\n";
  f.pending = {{{"seq", 2000}, {"type", "tenant.added"}, {"tenant", "bank"}}};
  f.next = 2999;
  ASSERT_TRUE(follower->step());  // the poll that brings the event
  ASSERT_TRUE(follower->step());  // the refresh it asks for, then the next poll
  EXPECT_EQ(f.disk["/t/laas-partitions.conf"], f.partitions);
  EXPECT_EQ(f.runs.size(), 2u);
  EXPECT_EQ(*follower->position(), 2999u);
  // An event that changes neither file (a host drained): read again, nothing run.
  f.pending = {{{"seq", 3000}, {"type", "host.drained"}, {"host", "comp-9"}}};
  ASSERT_TRUE(follower->step());
  ASSERT_TRUE(follower->step());
  EXPECT_EQ(follower->refreshes(), 3);
  EXPECT_EQ(f.runs.size(), 2u);
}

TEST_F(SlurmFollowerLoop, ALostPositionReReadsEverythingAndAFileChangedByHandIsPutBack) {
  ASSERT_TRUE(follower->step());
  f.disk["/t/topology.conf"] = "edited by hand\n";
  f.lost = true;  // the service restarted
  ASSERT_TRUE(follower->step());
  ASSERT_TRUE(follower->step());
  EXPECT_EQ(f.disk["/t/topology.conf"], f.topology);
  EXPECT_EQ(f.runs.size(), 2u);
  EXPECT_NE(f.log.end(), std::find_if(f.log.begin(), f.log.end(), [](const std::string& l) {
              return l.find("lost") != std::string::npos;
            }));
}

TEST_F(SlurmFollowerLoop, AnUnreachableServiceAndAFailedReconfigureAreRetried) {
  f.down = true;
  EXPECT_FALSE(follower->step());
  EXPECT_TRUE(f.disk.empty());
  f.down = false;
  f.reconfigure_failure = "exit 1: slurmctld not responding";
  EXPECT_FALSE(follower->step());
  EXPECT_EQ(f.runs.size(), 1u);
  // The files are written; the reconfigure is still owed, and run at the next step.
  f.reconfigure_failure.clear();
  EXPECT_TRUE(follower->step());
  EXPECT_EQ(f.runs.size(), 2u);
  EXPECT_TRUE(follower->step());
  EXPECT_EQ(f.runs.size(), 2u);
  // The service goes away mid-follow (an OpenSM restart) and comes back: resumed from the
  // position it had.
  f.down = true;
  EXPECT_FALSE(follower->step());
  f.down = false;
  ASSERT_TRUE(follower->step());
  EXPECT_EQ(f.polls.back()["since"], 1999u);
}
