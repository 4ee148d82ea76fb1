// Hosts drained and returned. A drained free host is never placed (a request that
// needs it is refused, naming it); a drained tenant host leaves service when its tenant is
// removed; drains survive a restart (state.json); resume runs the administrator's check.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "demo_views.h"
#include "service/tenant_service.h"
#include "temp_files.h"
#include "topology/embedding.h"

using namespace laas::service;
using nlohmann::json;

namespace {

using laas::test::demo_view;

using laas::test::kAdmin;
using laas::test::kReader;

class HostStates : public ::testing::Test {
 protected:
  void SetUp() override { service = make(); }
  std::unique_ptr<TenantService> make() {
    ServiceConfig c;
    c.state_dir = dir.path;
    c.default_wait_ms = 100;
    c.resume_check = check;
    auto s = std::make_unique<TenantService>(
        c, [this](LogLevel, const std::string& m) { logs.push_back(m); });
    s->on_topology(demo_view());
    return s;
  }
  json call(const std::string& method, json params = json::object(), Caller c = kAdmin) {
    params["wait"] = false;
    return service->handle({{"v", 1}, {"id", "t"}, {"method", method}, {"params", params}}, c);
  }
  std::string state_of(const std::string& host) {
    return call("host.get", {{"name", host}})["result"].value("state", "?");
  }
  laas::test::TempDir dir;
  std::string check;
  std::vector<std::string> logs;
  std::unique_ptr<TenantService> service;
};

}  // namespace

TEST_F(HostStates, ADrainedFreeHostIsNeverPlaced) {
  auto r = call("host.drain", {{"hosts", {"comp-3"}}, {"reason", "DIMM errors"}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(state_of("comp-3"), "drained");
  // 31 other hosts: a tenant of 31 would need comp-3; refused, naming it.
  auto big = call("tenant.add", {{"name", "big"}, {"hosts", 32}});
  ASSERT_FALSE(big["ok"]);
  EXPECT_NE(big["error"]["message"].get<std::string>().find("comp-3"), std::string::npos)
      << big.dump();
  // An explicit host list naming it: refused with the reason.
  auto named = call("tenant.add", {{"name", "n"}, {"host_list", {"comp-3", "comp-4"}}});
  ASSERT_FALSE(named["ok"]);
  EXPECT_NE(named["error"]["message"].get<std::string>().find("DIMM errors"), std::string::npos);
  // Tenants filling the rest never get it.
  for (int i = 0; i < 7; ++i) call("tenant.add", {{"name", "t" + std::to_string(i)}, {"hosts", 4}});
  auto list = call("host.list")["result"];
  ASSERT_EQ(list.size(), 32u);
  for (const auto& h : list) {
    if (h["name"] == "comp-3") {
      EXPECT_EQ(h["state"], "drained");
    }
  }
  auto status = call("status")["result"];
  EXPECT_EQ(status["host_states"]["drained"], 1);
  // Resume: free again, placeable.
  ASSERT_TRUE(call("host.resume", {{"hosts", {"comp-3"}}})["ok"]);
  EXPECT_EQ(state_of("comp-3"), "free");
}

TEST_F(HostStates, ADrainedTenantHostLeavesServiceWithItsTenant) {
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 4}})["ok"]);
  const auto first = call("tenant.get", {{"name", "a"}})["result"]["hosts"][0]["name"];
  ASSERT_TRUE(call("host.drain", {{"hosts", {first}}, {"reason", "firmware"}})["ok"]);
  EXPECT_EQ(state_of(first), "draining");
  // A restart while it drains: the tenant keeps it (restored before drained hosts are reserved).
  service = make();
  EXPECT_EQ(state_of(first), "draining");
  EXPECT_EQ(call("tenant.list")["result"][0].value("state", ""), "routed");
  ASSERT_TRUE(call("tenant.remove", {{"name", "a"}})["ok"]);
  EXPECT_EQ(state_of(first), "drained");
  // A restart (kill -9 and a new process) keeps it drained, and out of every placement.
  service = make();
  EXPECT_EQ(state_of(first), "drained");
  ASSERT_TRUE(call("tenant.add", {{"name", "b"}, {"hosts", 31}})["ok"]);
  auto b = call("tenant.get", {{"name", "b"}})["result"]["hosts"];
  for (const auto& h : b) EXPECT_NE(h["name"], first);
}

TEST_F(HostStates, BadDrainsChangeNothing) {
  const std::string before = laas::test::slurp(dir.path + "/state.json");
  EXPECT_EQ(call("host.drain", {{"hosts", {"comp-1"}}})["error"]["code"],
            "bad_request");  // no reason
  EXPECT_EQ(call("host.drain", {{"hosts", {"nope"}}, {"reason", "x"}})["error"]["code"],
            "bad_request");
  EXPECT_EQ(call("host.drain", {{"hosts", {"comp-1"}}, {"reason", "x"}}, kReader)["error"]["code"],
            "permission_denied");
  EXPECT_EQ(call("host.resume", {{"hosts", {"comp-1"}}})["error"]["code"], "bad_request");
  EXPECT_EQ(laas::test::slurp(dir.path + "/state.json"), before);
  EXPECT_EQ(state_of("comp-1"), "free");
}

TEST_F(HostStates, ResumeRunsTheAdministratorsCheck) {
  check = dir.path + "/check.sh";
  {
    std::ofstream f(check);
    f << "#!/bin/sh\n[ \"$1\" = -- ] && [ \"$3\" = comp-5 ] && exit 0\n"
         "echo \"$3 ($2) failed burn-in\"\nexit 3\n";
  }
  chmod(check.c_str(), 0755);
  service = make();
  ASSERT_TRUE(call("host.drain", {{"hosts", {"comp-5", "comp-6"}}, {"reason", "burn-in"}})["ok"]);
  auto refused = call("host.resume", {{"hosts", {"comp-6"}}});
  ASSERT_FALSE(refused["ok"]);
  const std::string why = refused["error"]["message"];
  EXPECT_NE(why.find("failed burn-in; it stays drained"), std::string::npos) << why;
  EXPECT_NE(why.find("exit 3"), std::string::npos) << why;
  EXPECT_EQ(state_of("comp-6"), "drained");
  ASSERT_TRUE(call("host.resume", {{"hosts", {"comp-5"}}})["ok"]);
  EXPECT_EQ(state_of("comp-5"), "free");
}

// A host's root sets its node description: a name that could be read as an option or a shell
// word reaches the check as "unnamed", after the GUID that identifies the host.
TEST_F(HostStates, AHostileNameNeverReachesTheCheck) {
  check = dir.path + "/check.sh";
  {
    std::ofstream f(check);
    f << "#!/bin/sh\nprintf '%s\\n' \"$@\" >" << dir.path << "/argv\n";
  }
  chmod(check.c_str(), 0755);
  auto tree = laas::topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  for (auto& n : fabric.nodes)
    if (n.name == "comp-6") n.name = "-oProxyCommand=x";
  service = make();
  service->on_topology(std::make_shared<TopologyView>(tree, fabric, emb));
  const json host = call("host.get", {{"name", "-oProxyCommand=x"}})["result"];
  ASSERT_TRUE(host.contains("guid")) << host.dump();
  const std::string guid = host["guid"];
  ASSERT_TRUE(call("host.drain", {{"hosts", {guid}}, {"reason", "burn-in"}})["ok"]);
  auto r = call("host.resume", {{"hosts", {guid}}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(laas::test::slurp(dir.path + "/argv"), "--\n" + guid + "\nunnamed\n");
}

// A check program others may change is refused when the service starts and at every resume;
// it never runs, the hosts stay drained.
TEST_F(HostStates, ACheckOthersMayChangeIsRefused) {
  check = dir.path + "/check.sh";
  {
    std::ofstream f(check);
    f << "#!/bin/sh\ntouch " << dir.path << "/ran\n";
  }
  chmod(check.c_str(), 0775);
  logs.clear();
  service = make();
  bool logged = false;
  for (const auto& l : logs) logged = logged || l.find("is writable by group") != std::string::npos;
  EXPECT_TRUE(logged);
  ASSERT_TRUE(call("host.drain", {{"hosts", {"comp-5"}}, {"reason", "burn-in"}})["ok"]);
  auto refused = call("host.resume", {{"hosts", {"comp-5"}}});
  ASSERT_FALSE(refused["ok"]);
  EXPECT_EQ(refused["error"]["code"], "refused");
  const std::string why = refused["error"]["message"];
  EXPECT_NE(why.find("resume_check " + check + " is writable by group"), std::string::npos) << why;
  EXPECT_EQ(state_of("comp-5"), "drained");
  EXPECT_FALSE(std::ifstream(dir.path + "/ran").good()) << "the check ran";
  // Fixed: resumes work again without a restart.
  chmod(check.c_str(), 0755);
  ASSERT_TRUE(call("host.resume", {{"hosts", {"comp-5"}}})["ok"]);
  EXPECT_TRUE(std::ifstream(dir.path + "/ran").good());
}
