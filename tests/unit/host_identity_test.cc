// Identity is the host, not the slot. Another port GUID in a tenant's slot (a replaced
// server, someone else's machine) is unaccepted: the slot stays the tenant's, state.json keeps
// the recorded GUID, the newcomer gets no P_Key and is routed like an absent host, until an
// administrator accepts it (`host.accept`).
#include "service/host_identity.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "demo_views.h"
#include "service/tenant_service.h"
#include "temp_files.h"
#include "topology/embedding.h"

using namespace laas::service;
using laas::topology::FatTree;
using nlohmann::json;

namespace {

using laas::test::kAdmin;
using laas::test::kReader;
constexpr laas::topology::Guid kNewcomer = 0xdead;

using laas::test::slurp;

// The demo tree with host `h`'s port replaced by another GUID and name.
std::shared_ptr<const TopologyView> swapped_view(laas::topology::HostId h) {
  auto tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  fabric.nodes[emb.host_node[h]].port_guid = kNewcomer;
  fabric.nodes[emb.host_node[h]].guid = kNewcomer;
  fabric.nodes[emb.host_node[h]].name = "intruder";
  return std::make_shared<TopologyView>(tree, fabric, emb);
}

TEST(FindUnaccepted, OnlyTenantSlotsWithAnotherPresentGuid) {
  auto tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  const PhysicalIds before(tree, emb, fabric);
  PersistedTenant a;
  a.name = "a";
  for (laas::topology::HostId h : {0, 1, 2, 3}) a.hosts.push_back(before.host(h));
  a.hosts[2].guid = 0;  // never seen: whatever is there now is first seen, not unaccepted
  EXPECT_TRUE(find_unaccepted({a}, before).empty());

  const auto recorded0 = fabric.nodes[emb.host_node[0]].port_guid;
  fabric.nodes[emb.host_node[0]].port_guid = kNewcomer;  // a's slot: unaccepted
  fabric.nodes[emb.host_node[2]].port_guid = 0xbeef;     // a's slot never seen: not
  fabric.nodes[emb.host_node[9]].port_guid = 0xcafe;     // a free slot: not
  emb.host_node[1] = -1;                                 // a's host down: not
  emb.missing_hosts.push_back(1);
  const PhysicalIds now(tree, emb, fabric);
  const auto q = find_unaccepted({a}, now);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].tenant, "a");
  EXPECT_EQ(q[0].host, 0);
  EXPECT_EQ(q[0].recorded_guid, recorded0);
  EXPECT_EQ(q[0].seen_guid, kNewcomer);
  EXPECT_EQ(q[0].leaf_guid, a.hosts[0].leaf_guid);
  EXPECT_EQ(q[0].port, a.hosts[0].port);
  EXPECT_NE(describe(q[0], "leaf0").find("holds 0x000000000000dead"), std::string::npos)
      << describe(q[0], "leaf0");
}

class HostIdentity : public ::testing::Test {
 protected:
  void SetUp() override {
    service = make(laas::test::demo_view());
    auto r = call("tenant.add", {{"name", "a"}, {"host_list", {"comp-1", "comp-2", "comp-3"}}});
    ASSERT_TRUE(r["ok"]) << r.dump();
    recorded = call("tenant.get", {{"name", "a"}})["result"]["hosts"][0]["guid"];
    ASSERT_TRUE(call("tenant.add", {{"name", "b"}, {"hosts", 4}})["ok"]);
    // comp-1 replaced: a new process sees another port GUID in a's slot.
    service = make(swapped_view(0));
  }
  std::unique_ptr<TenantService> make(std::shared_ptr<const TopologyView> view) {
    ServiceConfig c;
    c.state_dir = dir.path;
    c.default_wait_ms = 100;
    c.exports.managed_partitions_file = dir.path + "/partitions.conf";
    auto s = std::make_unique<TenantService>(
        c, [this](LogLevel, const std::string& m) { logs.push_back(m); });
    s->on_topology(std::move(view));
    return s;
  }
  json call(const std::string& method, json params = json::object(), Caller c = kAdmin) {
    params["wait"] = false;
    return service->handle({{"v", 1}, {"id", "t"}, {"method", method}, {"params", params}}, c);
  }
  laas::test::TempDir dir;
  std::vector<std::string> logs;
  std::unique_ptr<TenantService> service;
  json recorded;
};

}  // namespace

TEST_F(HostIdentity, ANewGuidInATenantsSlotIsUnaccepted) {
  const std::string dead = "0x000000000000dead";
  // The slot stays a's, in its placement; routed like an absent host.
  const auto snap = service->snapshot();
  ASSERT_EQ(snap.unaccepted.size(), 1u);
  EXPECT_EQ(snap.unaccepted[0].host, 0);
  EXPECT_EQ(snap.unaccepted[0].tenant, "a");
  bool held = false;
  for (const auto& [name, p] : snap.tenants)
    if (name == "a") held = std::find(p.hosts.begin(), p.hosts.end(), 0) != p.hosts.end();
  EXPECT_TRUE(held);
  // host list / show: unaccepted (its state still named "quarantined"), with the recorded GUID.
  const auto h = call("host.get", {{"name", dead}})["result"];
  EXPECT_EQ(h["state"], "quarantined") << h.dump();
  EXPECT_EQ(h["tenant"], "a");
  EXPECT_EQ(h["recorded"]["guid"], recorded);
  EXPECT_EQ(call("host.list", {{"state", "quarantined"}})["result"].size(), 1u);
  // status, tenant show, metrics.
  const auto st = call("status")["result"];
  EXPECT_EQ(st["host_states"]["quarantined"], 1);
  ASSERT_EQ(st["quarantined_hosts"].size(), 1u);
  EXPECT_EQ(st["quarantined_hosts"][0]["seen"]["guid"], dead);
  const auto a = call("tenant.get", {{"name", "a"}})["result"];
  EXPECT_EQ(a["hosts"][0]["guid"], recorded) << a.dump();
  EXPECT_EQ(a["hosts"][0]["quarantined"]["guid"], dead);
  EXPECT_EQ(a["state"], "degraded");
  EXPECT_NE(a["reason"].get<std::string>().find("quarantined"), std::string::npos) << a["reason"];
  EXPECT_NE(call("metrics")["result"]["text"].get<std::string>().find(
                "laas_hosts{state=\"quarantined\"} 1"),
            std::string::npos);
  // The glossary's word beside the old name (kept for one release) wherever both are written.
  EXPECT_EQ(call("host.list", {{"state", "unaccepted"}})["result"],
            call("host.list", {{"state", "quarantined"}})["result"]);
  EXPECT_EQ(st["host_states"]["unaccepted"], 1);
  EXPECT_EQ(st["unaccepted_hosts"], st["quarantined_hosts"]);
  EXPECT_EQ(a["hosts"][0]["unaccepted"]["guid"], dead);
  EXPECT_EQ(a["health"]["unaccepted_hosts"].size(), 1u) << a.dump();
  EXPECT_NE(a["reason"].get<std::string>().find("unaccepted"), std::string::npos) << a["reason"];
  EXPECT_NE(call("metrics")["result"]["text"].get<std::string>().find(
                "laas_hosts{state=\"unaccepted\"} 1"),
            std::string::npos);
  // No P_Key: partitions.conf names the recorded host, not the newcomer; state.json keeps it.
  EXPECT_EQ(slurp(dir.path + "/partitions.conf").find(dead), std::string::npos);
  EXPECT_NE(slurp(dir.path + "/partitions.conf").find(recorded.get<std::string>()),
            std::string::npos);
  EXPECT_EQ(slurp(dir.path + "/state.json").find(dead), std::string::npos);
  bool logged = false;
  for (const auto& m : logs) logged = logged || m.find("quarantined: tenant 'a'") != m.npos;
  EXPECT_TRUE(logged);
  // A restart with the newcomer still there: still unaccepted (never adopted silently).
  service = make(swapped_view(0));
  EXPECT_EQ(service->snapshot().unaccepted.size(), 1u);
  EXPECT_EQ(slurp(dir.path + "/state.json").find(dead), std::string::npos);
}

TEST_F(HostIdentity, AcceptRecordsTheNewGuid) {
  const std::string dead = "0x000000000000dead";
  // Readers may not; unknown and hosts not unaccepted are refused clearly.
  auto r = call("host.accept", {{"hosts", {dead}}}, kReader);
  EXPECT_EQ(r["error"]["code"], "permission_denied");
  r = call("host.accept", {{"hosts", {"nosuch"}}});
  EXPECT_EQ(r["error"]["code"], "bad_request");
  EXPECT_NE(r["error"]["message"].get<std::string>().find("nosuch"), std::string::npos);
  r = call("host.accept", {{"hosts", {"comp-2"}}});
  EXPECT_EQ(r["error"]["code"], "refused");
  EXPECT_NE(r["error"]["message"].get<std::string>().find("not quarantined"), std::string::npos);
  // The slot as LEAF:PORT, dry run: nothing changes.
  const auto h = call("host.get", {{"name", dead}})["result"];
  const std::string slot =
      h["leaf"].get<std::string>() + ":" + std::to_string(h["port"].get<int>());
  r = call("host.accept", {{"hosts", {slot}}, {"dry_run", true}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(r["result"]["accepted"][0]["guid"], dead);
  EXPECT_EQ(service->snapshot().unaccepted.size(), 1u);
  const auto generation = service->snapshot().generation;
  // Accepted by the recorded GUID (the old host's name for the slot).
  r = call("host.accept", {{"hosts", {recorded}}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(r["result"]["accepted"][0]["was"]["guid"], recorded);
  EXPECT_TRUE(service->snapshot().unaccepted.empty());
  EXPECT_EQ(service->snapshot().generation, generation + 1);
  EXPECT_EQ(call("host.get", {{"name", dead}})["result"]["state"], "allocated");
  EXPECT_EQ(call("tenant.get", {{"name", "a"}})["result"]["state"], "routed");
  EXPECT_NE(slurp(dir.path + "/state.json").find(dead), std::string::npos);
  EXPECT_NE(slurp(dir.path + "/partitions.conf").find(dead), std::string::npos);
  bool logged = false;
  for (const auto& m : logs) logged = logged || m.find("uid 0 accepted " + dead) != m.npos;
  EXPECT_TRUE(logged);
  // Once accepted, not unaccepted any more, and survives a restart.
  r = call("host.accept", {{"hosts", {dead}}});
  EXPECT_EQ(r["error"]["code"], "refused");
  service = make(swapped_view(0));
  EXPECT_TRUE(service->snapshot().unaccepted.empty());
  EXPECT_EQ(call("host.get", {{"name", dead}})["result"]["state"], "allocated");
}

// The newcomer leaves again: the slot is down for its tenant (the recorded host may come back),
// and the newcomer's GUID, remembered in the layout, is never adopted.
TEST_F(HostIdentity, TheRecordedHostComingBackIsTheTenantsAgain) {
  service = make(laas::test::demo_view());  // the original host is back in its slot
  EXPECT_TRUE(service->snapshot().unaccepted.empty());
  EXPECT_EQ(call("tenant.get", {{"name", "a"}})["result"]["state"], "routed");
  EXPECT_EQ(slurp(dir.path + "/state.json").find("0x000000000000dead"), std::string::npos);
}

// The tenant leaves: its unaccepted slot is free, the newcomer a free host another tenant may
// get (its GUID is then recorded for that tenant).
TEST_F(HostIdentity, ATenantsRemovalFreesItsUnacceptedSlot) {
  const std::string dead = "0x000000000000dead";
  ASSERT_TRUE(call("tenant.remove", {{"name", "a"}})["ok"]);
  EXPECT_TRUE(service->snapshot().unaccepted.empty());
  EXPECT_EQ(call("host.get", {{"name", dead}})["result"]["state"], "free");
  EXPECT_EQ(call("status")["result"]["host_states"]["quarantined"], 0);
  auto r = call("tenant.add", {{"name", "c"}, {"host_list", {dead}}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(r["result"]["hosts"][0]["guid"], dead);
  EXPECT_NE(slurp(dir.path + "/state.json").find(dead), std::string::npos);
}

// The newcomer unplugged again: the layout remembers its GUID for the slot, but the slot is
// the recorded host's -- in tenant show, partitions.conf and state.json.
TEST_F(HostIdentity, ANewcomerThatLeftIsNeverNamedForTheSlot) {
  const std::string dead = "0x000000000000dead";
  auto tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  fabric.nodes[emb.host_node[0]].port_guid = kNewcomer;
  const auto seen = laas::topology::layout_of(tree, emb, fabric, nullptr);
  emb.host_node[0] = -1;
  emb.host_port[0] = 0;
  emb.missing_hosts = {0};
  service = make(std::make_shared<TopologyView>(tree, fabric, emb,
                                                std::vector<laas::topology::HostId>{}, seen));
  EXPECT_TRUE(service->snapshot().unaccepted.empty());  // nothing there is unaccepted
  const auto a = call("tenant.get", {{"name", "a"}})["result"];
  EXPECT_EQ(a["hosts"][0]["guid"], recorded) << a.dump();
  EXPECT_EQ(a["hosts"][0]["down"], true);
  EXPECT_EQ(slurp(dir.path + "/partitions.conf").find(dead), std::string::npos);
  EXPECT_EQ(slurp(dir.path + "/state.json").find(dead), std::string::npos);
}
