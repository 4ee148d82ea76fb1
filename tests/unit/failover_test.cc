// One tenant truth for a master and a standby SM sharing a state directory. Two
// services on one directory stand for two plugins; a role provider stands for OpenSM's SMInfo.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "demo_views.h"
#include "export/partitions.h"
#include "export/records.h"
#include "service/sm_role.h"
#include "service/state_store.h"
#include "service/tenant_service.h"
#include "temp_files.h"
#include "topology/embedding.h"
#include "topology/fat_tree.h"

using namespace laas::service;
using laas::test::slurp;
using laas::test::TempDir;
using nlohmann::json;

namespace {

using laas::test::demo_view;

json failover_request(const std::string& method, json params = json::object()) {
  params["wait"] = false;
  return {{"v", 1}, {"id", "t"}, {"method", method}, {"params", std::move(params)}};
}

using laas::test::kAdmin;

SmIdentity sm(std::uint64_t guid, const std::string& name, std::uint16_t lid) {
  SmIdentity id;
  id.port_guid = guid;
  id.name = name;
  id.lid = lid;
  return id;
}

// One SM with its plugin's service: its OpenSM state is set by the test.
struct Sm {
  Sm(const std::string& dir, SmIdentity me, const std::string& partitions = "",
     bool state_must_exist = false, bool free_pool_open = false)
      : self(std::move(me)) {
    ServiceConfig c;
    c.state_dir = dir;
    c.state_must_exist = state_must_exist;
    c.free_pool_open = free_pool_open;
    c.default_wait_ms = 100;
    c.exports.managed_partitions_file = partitions;
    service = std::make_unique<TenantService>(c, [](LogLevel, const std::string&) {});
    service->set_role_provider([this] {
      SmRole r;
      r.state = state.load();
      r.self = self;
      if (r.state == SmState::kMaster)
        r.master = self;
      else if (master)
        r.master = *master;
      return r;
    });
  }
  // What the plugin does at a routing run: take over when needed, then the topology.
  std::optional<std::string> route() {
    auto line = service->take_over_if_needed(self);
    service->on_topology(view);
    return line;
  }
  std::shared_ptr<const TopologyView> view = demo_view();
  json call(const std::string& method, json params = json::object()) {
    return service->handle(failover_request(method, std::move(params)), kAdmin);
  }
  SmIdentity self;
  std::optional<SmIdentity> master;
  std::atomic<SmState> state{SmState::kStandby};
  std::unique_ptr<TenantService> service;
};

// Two SMs on one state directory: `a` (comp-1) the master, `b` (comp-2) a standby.
struct MasterAndStandby {
  TempDir dir;
  Sm a{dir.path, sm(0x11, "comp-1", 2)};
  Sm b{dir.path, sm(0x22, "comp-2", 3)};
  MasterAndStandby() { a.state = SmState::kMaster; }
};

std::vector<std::string> names(const json& list) {
  std::vector<std::string> out;
  for (const auto& t : list) out.push_back(t["name"]);
  return out;
}

}  // namespace

TEST(StateFencing, ANewerTermFencesTheOldMasterOff) {
  TempDir dir;
  StateStore a(dir.path), b(dir.path);
  PersistedState sa = a.take_over("sm-a", 0xa);
  EXPECT_EQ(sa.term, 1u);
  PersistedState sb = b.take_over("sm-b", 0xb);
  EXPECT_EQ(sb.term, 2u);
  EXPECT_EQ(sb.master, "sm-b");
  EXPECT_EQ(sb.sm_ports, (std::vector<laas::topology::Guid>{0xa, 0xb}));
  const std::string before = slurp(a.path());
  // The old master writes with its term: refused, nothing written.
  ++sa.generation;
  EXPECT_THROW(a.save(sa), FencedError);
  EXPECT_EQ(slurp(a.path()), before);
  // The holder of the term writes; a step back to an older generation is refused.
  sb.generation = 5;
  b.save(sb);
  PersistedState stale = sb;
  stale.generation = 4;
  EXPECT_THROW(b.save(stale), FencedError);
  EXPECT_EQ(b.load().generation, 5u);
  // No temporary file is left behind by either writer.
  for (const auto& e : std::filesystem::directory_iterator(dir.path))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST(StateFencing, ASingleSmFileIsWrittenAsBefore) {
  PersistedState s;
  s.topology = "xgft(2;4,8;1,4)";
  const std::string text = serialize_state(s);
  EXPECT_EQ(text.find("term"), std::string::npos);
  EXPECT_EQ(text.find("sm_ports"), std::string::npos);
  PersistedState t = s;
  t.term = 3;
  t.master = "0x2 'sm' LID 1";
  t.sm_ports = {2, 7};
  t.management = {9};
  EXPECT_EQ(parse_state(serialize_state(t), "test"), t);
}

TEST(SmRoleText, TheRefusalNamesTheMaster) {
  SmRole r;
  r.state = SmState::kStandby;
  r.self = sm(0x22, "comp-2", 3);
  r.master = sm(0x11, "comp-1", 2);
  EXPECT_FALSE(r.may_change_tenants());
  const std::string text = r.refusal();
  EXPECT_NE(text.find("standby"), std::string::npos) << text;
  EXPECT_NE(text.find("0x0000000000000011 'comp-1' LID 2"), std::string::npos) << text;
  EXPECT_EQ(r.to_json()["master"]["name"], "comp-1");
  r.master.reset();
  EXPECT_NE(r.refusal().find("no master is known"), std::string::npos);
}

TEST(Failover, TheStandbyRefusesChangesNamingTheMasterAndWritesNothing) {
  MasterAndStandby sms;
  auto& [dir, a, b] = sms;
  ASSERT_TRUE(a.route());
  ASSERT_TRUE(a.call("tenant.add", {{"name", "x"}, {"hosts", 8}})["ok"]);
  b.master = a.self;
  const std::string before = slurp(dir.path + "/state.json");
  for (const auto& r : {b.call("tenant.add", {{"name", "y"}, {"hosts", 2}}),
                        b.call("tenant.remove", {{"name", "x"}}),
                        b.call("tenant.plan", {{"name", "y"}, {"hosts", 2}}),
                        b.call("host.accept", {{"hosts", {"comp-3"}}})}) {
    ASSERT_FALSE(r["ok"]) << r.dump();
    EXPECT_EQ(r["error"]["code"], error::kNotMaster);
    EXPECT_NE(r["error"]["message"].get<std::string>().find("0x0000000000000011 'comp-1' LID 2"),
              std::string::npos)
        << r.dump();
  }
  EXPECT_EQ(slurp(dir.path + "/state.json"), before);
  // Reads come from the shared state.
  auto list = b.call("tenant.list");
  ASSERT_TRUE(list["ok"]) << list.dump();
  EXPECT_EQ(names(list["result"]), std::vector<std::string>{"x"});
  auto show = b.call("tenant.get", {{"name", "x"}});
  ASSERT_TRUE(show["ok"]) << show.dump();
  EXPECT_EQ(show["result"]["hosts"].size(), 8u);
  EXPECT_EQ(b.call("tenant.get", {{"name", "nope"}})["error"]["code"], error::kNotFound);
  auto status = b.call("status");
  EXPECT_EQ(status["result"]["sm"]["role"], "standby");
  EXPECT_EQ(status["result"]["sm"]["holds_state"], false);
  EXPECT_EQ(a.call("status")["result"]["sm"]["holds_state"], true);
}

// One tenant list and one tenant show, whichever SM answers: the same fields at the master
// (routed) and at a standby (as the shared state records them).
TEST(Failover, TheStandbyListsAndShowsTenantsWithTheMastersFields) {
  MasterAndStandby sms;
  auto& [dir, a, b] = sms;
  ASSERT_TRUE(a.route());
  ASSERT_TRUE(a.call("tenant.add", {{"name", "x"}, {"hosts", 8}})["ok"]);
  b.master = a.self;
  auto keys = [](const json& j) {
    std::vector<std::string> out;
    for (auto it = j.begin(); it != j.end(); ++it) out.push_back(it.key());
    return out;
  };
  const json at_master = a.call("tenant.list")["result"][0];
  const json at_standby = b.call("tenant.list")["result"][0];
  EXPECT_EQ(at_master["state"], "routed");
  EXPECT_EQ(at_standby["state"], "recorded");
  EXPECT_FALSE(at_master.contains("reason")) << at_master.dump();
  json routed_keys = at_standby;
  routed_keys.erase("reason");  // said only of a tenant not routed
  EXPECT_EQ(keys(routed_keys), keys(at_master)) << at_master.dump() << at_standby.dump();
  for (const char* field : {"pkey", "requested", "hosts", "links", "shape"})
    EXPECT_EQ(at_standby[field], at_master[field]) << field;
  const json shown = a.call("tenant.get", {{"name", "x"}})["result"];
  const json recorded = b.call("tenant.get", {{"name", "x"}})["result"];
  for (const char* field : {"name", "pkey", "requested", "hosts", "links", "shape", "state"}) {
    EXPECT_TRUE(shown.contains(field)) << field;
    EXPECT_TRUE(recorded.contains(field)) << field;
  }
  EXPECT_EQ(recorded["pkey"], shown["pkey"]);
  ASSERT_EQ(recorded["hosts"].size(), shown["hosts"].size());
  for (size_t i = 0; i < shown["hosts"].size(); ++i)
    EXPECT_EQ(recorded["hosts"][i]["guid"], shown["hosts"][i]["guid"]);
}

TEST(Failover, TheNewMasterRoutesEveryTenantAndFencesTheOldOne) {
  MasterAndStandby sms;
  auto& [dir, a, b] = sms;
  ASSERT_TRUE(a.route());
  ASSERT_TRUE(a.call("tenant.add", {{"name", "a"}, {"hosts", 8}})["ok"]);
  ASSERT_TRUE(a.call("tenant.add", {{"name", "b"}, {"hosts", 10}})["ok"]);
  const auto placed = a.service->snapshot();
  // b's plugin started while a was master: it read the state once, before any tenant.
  // a dies; b becomes master and routes: every tenant, the same placements.
  b.state = SmState::kMaster;
  const auto line = b.route();
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("took over as master (term 2): 2 tenant(s)"), std::string::npos) << *line;
  const auto taken = b.service->snapshot();
  ASSERT_EQ(taken.tenants.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(taken.tenants[i].first, placed.tenants[i].first);
    EXPECT_EQ(taken.tenants[i].second.hosts, placed.tenants[i].second.hosts);
    EXPECT_EQ(taken.tenants[i].second.links, placed.tenants[i].second.links);
  }
  EXPECT_FALSE(b.route());  // taken over once, not at every run
  // The old master still believes it is master (split brain): its change is fenced off.
  const std::string before = slurp(dir.path + "/state.json");
  auto r = a.call("tenant.add", {{"name", "c"}, {"hosts", 2}});
  ASSERT_FALSE(r["ok"]);
  EXPECT_EQ(r["error"]["code"], error::kNotMaster) << r.dump();
  EXPECT_EQ(slurp(dir.path + "/state.json"), before);
  // ... and stays refused: it no longer holds the state.
  EXPECT_EQ(a.call("tenant.remove", {{"name", "a"}})["error"]["code"], error::kNotMaster);
  // A tenant added at the new master; the old one returns as master and takes it back.
  ASSERT_TRUE(b.call("tenant.add", {{"name", "c"}, {"hosts", 3}})["ok"]);
  b.state = SmState::kStandby;
  b.master = a.self;
  const auto back = a.route();
  ASSERT_TRUE(back);
  EXPECT_NE(back->find("(term 3): 3 tenant(s)"), std::string::npos) << *back;
  EXPECT_EQ(a.service->tenant_names(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(a.call("tenant.remove", {{"name", "b"}})["ok"]);
  EXPECT_EQ(names(b.call("tenant.list")["result"]), (std::vector<std::string>{"a", "c"}));
}

TEST(Failover, TheStandbysPartitionsFileFollowsTheSharedState) {
  TempDir dir;
  const std::string pa = dir.path + "/partitions.a.conf", pb = dir.path + "/partitions.b.conf";
  Sm a(dir.path, sm(0x11, "comp-1", 2), pa), b(dir.path, sm(0x22, "comp-2", 3), pb);
  a.state = SmState::kMaster;
  ASSERT_TRUE(a.route());
  ASSERT_TRUE(a.call("tenant.add", {{"name", "t1"}, {"hosts", 4}})["ok"]);
  b.service->follow_shared_state();
  const std::string text = slurp(pb);
  ASSERT_NE(text.find("t1="), std::string::npos) << text;
  auto show = a.call("tenant.get", {{"name", "t1"}});
  for (const auto& h : show["result"]["hosts"])
    EXPECT_NE(text.find(h["guid"].get<std::string>() + "=full"), std::string::npos) << text;
  // The same P_Key on both SM hosts.
  const std::string pkey = show["result"]["pkey"];
  EXPECT_NE(slurp(pa).find("t1=" + pkey), std::string::npos);
  EXPECT_NE(text.find("t1=" + pkey), std::string::npos);
  ASSERT_TRUE(a.call("tenant.remove", {{"name", "t1"}})["ok"]);
  b.service->follow_shared_state();
  EXPECT_EQ(slurp(pb).find("t1="), std::string::npos);
  // The master follows nothing: it writes.
  const std::string mine = slurp(pa);
  a.service->follow_shared_state();
  EXPECT_EQ(slurp(pa), mine);
}

// A view as a cluster's: a management host in a slot, a storage port and the SM's second
// port routed outside the tree (shared_services, an SM host cabled twice).
std::shared_ptr<const TopologyView> cluster_view(const std::string& spec = "xgft(2;4,8;1,4)") {
  auto tree = laas::topology::FatTree::parse(spec);
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  auto v = std::make_shared<TopologyView>(
      tree, fabric, emb, std::vector<laas::topology::HostId>{tree.num_hosts() - 1});
  v->outside_members = {0x0002c90300a0b0c1, 0x0002c90300a0b0c2};
  return v;
}

// The master computes who else its partitions.conf names from the fabric it routes; a standby
// routes nothing and reads them from the shared state: both files are the same bytes.
TEST(Failover, TheStandbysPartitionsFileIsTheMastersByteForByte) {
  TempDir dir;
  const std::string pa = dir.path + "/partitions.a.conf", pb = dir.path + "/partitions.b.conf";
  Sm a(dir.path, sm(0x11, "comp-1", 2), pa, false, true),
      b(dir.path, sm(0x22, "comp-2", 3), pb, false, true);
  a.view = cluster_view();
  a.state = SmState::kMaster;
  ASSERT_TRUE(a.route());
  // Created out of name order: the master writes its tenants by name.
  ASSERT_TRUE(a.call("tenant.add", {{"name", "zeta"}, {"hosts", 4}})["ok"]);
  ASSERT_TRUE(a.call("tenant.add", {{"name", "alpha"}, {"hosts", 3}})["ok"]);
  b.service->follow_shared_state();
  const std::string master = slurp(pa);
  EXPECT_NE(master.find("0x0002c90300a0b0c1=full"), std::string::npos) << master;
  EXPECT_EQ(slurp(pb), master);
  ASSERT_TRUE(a.call("tenant.remove", {{"name", "zeta"}})["ok"]);
  b.service->follow_shared_state();
  EXPECT_EQ(slurp(pb), slurp(pa));
  // A routing run that finds the storage port gone: recorded, and followed.
  auto fewer = std::make_shared<TopologyView>(*a.view);
  fewer->outside_members.pop_back();
  a.view = fewer;
  a.route();
  b.service->follow_shared_state();
  EXPECT_EQ(slurp(pa).find("0x0002c90300a0b0c2"), std::string::npos);
  EXPECT_EQ(slurp(pb), slurp(pa));
}

// state.json before the members were recorded reads as before (a standby then names the
// tenants and the management hosts only), and a file without them is written as before.
TEST(StateFile, PartitionMembersAreOptional) {
  const std::string old_file =
      R"j({"format":"laas-state","version":2,"topology":"xgft(2;4,8;1,4)","generation":3,)j"
      R"j("tenants":[],"management":["0x0000000000000042"]})j";
  PersistedState s = parse_state(old_file, "state.json");
  EXPECT_EQ(s.management, (std::vector<laas::topology::Guid>{0x42}));
  EXPECT_TRUE(s.outside_members.empty() && s.free_pool_members.empty() &&
              s.unrouted_tenants.empty());
  const std::string text = serialize_state(s);
  EXPECT_EQ(text.find("outside_members"), std::string::npos) << text;
  EXPECT_EQ(text.find("unrouted"), std::string::npos) << text;
  s.outside_members = {0x7, 0x5};
  s.free_pool_members = {0x9};
  s.unrouted_tenants = {"gone"};
  EXPECT_EQ(parse_state(serialize_state(s), "state.json"), s);
}

// A number with an exponent or a fraction (found by fuzzing: a version of 1e113 read as an int
// is undefined behaviour) makes the file untrusted, never a wrong value.
TEST(StateFile, ANumberThatIsNotAnIntegerIsRefused) {
  const std::string huge =
      R"j({"format":"laas-state","version":1e113,"topology":"","generation":0,"tenants":[]})j";
  EXPECT_THROW(parse_state(huge, "state.json"), std::runtime_error);
  const std::string fraction =
      R"j({"format":"laas-state","version":2,"topology":"","generation":0,"tenants":[)j"
      R"j({"name":"a","requested":2.5,"hosts":[]}]})j";
  try {
    parse_state(fraction, "state.json");
    ADD_FAILURE() << "a requested count of 2.5 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("2.5 is not an integer"), std::string::npos) << e.what();
  }
}

// The master writes its partitions.conf from the tenants in memory: the same bytes as from
// their `tenant show` JSON (what it did before), for a few hundred tenants.
// LAAS_PARTITIONS_TENANTS=2000 prints the time for 2,000.
TEST(Failover, ManyTenantsPartitionsAsFromTheirJson) {
  const char* env = std::getenv("LAAS_PARTITIONS_TENANTS");
  const int tenants = env ? std::atoi(env) : 300;
  TempDir dir;
  const std::string pa = dir.path + "/partitions.a.conf", pb = dir.path + "/partitions.b.conf";
  const auto view = cluster_view("xgft(2;32,96;1,32)");
  {  // Created without a managed file: a change rewrites nothing but state.json.
    set_fsync_for_tests([](int, bool) { return 0; });
    Sm make(dir.path, sm(0x11, "comp-1", 2));
    make.view = view;
    make.state = SmState::kMaster;
    ASSERT_TRUE(make.route());
    for (int i = 0; i < tenants; ++i)
      ASSERT_TRUE(make.call(
          "tenant.add", {{"name", "t" + std::to_string(i)}, {"hosts", i % 3 == 0 ? 2 : 1}})["ok"])
          << i;
    set_fsync_for_tests(nullptr);
  }
  // A closed free pool: an open one names every free host on the default partition's one
  // line, too long for OpenSM on this fabric (the open pool is covered above).
  Sm a(dir.path, sm(0x11, "comp-1", 2), pa), b(dir.path, sm(0x22, "comp-2", 3), pb);
  a.view = view;
  a.state = SmState::kMaster;
  ASSERT_TRUE(a.route());
  const std::string master = slurp(pa);
  ASSERT_NE(master.find("laas_t" + std::to_string(tenants - 1) + "="), std::string::npos);
  json all = json::array();
  for (int i = 0; i < tenants; ++i)
    all.push_back(a.call("tenant.get", {{"name", "t" + std::to_string(i)}})["result"]);
  std::sort(all.begin(), all.end(),
            [](const json& x, const json& y) { return x["name"] < y["name"]; });
  laas::exports::PartitionOptions options;
  options.base_text = std::nullopt;
  options.management.push_back({guid_hex(view->host_guid(view->management_hosts.front())),
                                laas::exports::Membership::kFull});
  for (auto g : view->outside_members)
    options.management.push_back({guid_hex(g), laas::exports::Membership::kFull});
  EXPECT_EQ(master,
            laas::exports::generate_partitions(laas::exports::tenants_from_json(all), options));
  b.service->follow_shared_state();
  EXPECT_EQ(slurp(pb), master);
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int kRuns = 5;
  for (int i = 0; i < kRuns; ++i) ASSERT_TRUE(a.call("export", {{"format", "partitions"}})["ok"]);
  std::cout
      << "partitions.conf of " << tenants << " tenants: "
      << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
             kRuns
      << " ms (laasctl export partitions, mean of " << kRuns << ")\n";
}

TEST(Failover, AnUnreadableSharedStateIsNeverTakenOverOrOverwritten) {
  TempDir dir;
  Sm a(dir.path, sm(0x11, "comp-1", 2));
  a.state = SmState::kMaster;
  {
    std::ofstream out(dir.path + "/state.json");
    out << "{ not json";
  }
  const auto line = a.route();
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("cannot take the tenant state over"), std::string::npos) << *line;
  EXPECT_EQ(slurp(dir.path + "/state.json"), "{ not json");
  EXPECT_FALSE(a.call("tenant.add", {{"name", "x"}, {"hosts", 2}})["ok"]);
  std::filesystem::remove(dir.path + "/state.json");
  // Repaired (removed): taken over at the next routing run, by itself.
  const auto again = a.route();
  ASSERT_TRUE(again);
  EXPECT_NE(again->find("took over"), std::string::npos) << *again;
  EXPECT_TRUE(a.call("tenant.add", {{"name", "x"}, {"hosts", 2}})["ok"]);
}

TEST(Failover, AnUnmountedShareIsNotTakenOverAsAnEmptyState) {
  TempDir dir;
  Sm a(dir.path, sm(0x11, "comp-1", 2), "", /*state_must_exist=*/true);
  a.state = SmState::kMaster;
  const auto line = a.route();
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("is the shared state directory mounted?"), std::string::npos) << *line;
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/state.json"));
  EXPECT_FALSE(a.call("tenant.add", {{"name", "x"}, {"hosts", 2}})["ok"]);
  // The share is mounted (the file appears): taken over by itself at the next routing run.
  StateStore(dir.path).save(PersistedState{});
  const auto again = a.route();
  ASSERT_TRUE(again);
  EXPECT_NE(again->find("took over"), std::string::npos) << *again;
}

// A master whose state another SM wrote meanwhile takes it over again at its next routing run:
// the tenants are mapped onto the fabric only by that run's on_topology. `laasctl status` (any
// member of the read group) in between must not read the placements the take-over dropped.
TEST(Failover, StatusBetweenATakeOverAndItsRoutingRunReadsNothingFreed) {
  MasterAndStandby sms;
  auto& [dir, a, b] = sms;
  ASSERT_TRUE(a.route());
  ASSERT_TRUE(a.call("tenant.add", {{"name", "t1"}, {"hosts", 4}})["ok"]);
  ASSERT_TRUE(a.call("status")["result"]["topology"].is_string());
  // b takes the state over and writes it; a, master again, takes it back without ever having
  // answered from the shared state in between.
  b.state = SmState::kMaster;
  ASSERT_TRUE(b.route());
  b.state = SmState::kStandby;
  b.master = a.self;
  const auto line = a.service->take_over_if_needed(a.self);
  ASSERT_TRUE(line);
  ASSERT_NE(line->find("took over"), std::string::npos) << *line;
  const json during = a.call("status");
  ASSERT_TRUE(during["ok"]) << during.dump();
  EXPECT_TRUE(during["result"]["topology"].is_null()) << during.dump();
  EXPECT_NE(during["result"]["topology_error"].get<std::string>().find("took the tenant state"),
            std::string::npos)
      << during.dump();
  EXPECT_EQ(during["result"]["tenants"], 1);
  // Every other read of the fabric says it is unavailable, none crashes.
  for (const char* m : {"topology", "host.list", "metrics"}) {
    const json r = a.call(m);
    EXPECT_TRUE(r.contains("ok")) << m << ": " << r.dump();
  }
  // The routing run maps them again: status as before.
  a.service->on_topology(a.view);
  const json after = a.call("status");
  EXPECT_TRUE(after["result"]["topology"].is_string()) << after.dump();
  EXPECT_EQ(after["result"]["tenants"], 1);
}

// Status from other threads while the master takes the state over and routes, again and again:
// never a freed placement (ASan) nor a crash.
TEST(Failover, StatusDuringTakeOversNeverCrashes) {
  MasterAndStandby sms;
  // Named references, not a structured binding: the reader thread's lambda captures `a`.
  auto& dir = sms.dir;
  auto& a = sms.a;
  ASSERT_TRUE(a.route());
  ASSERT_TRUE(a.call("tenant.add", {{"name", "t1"}, {"hosts", 4}})["ok"]);
  std::atomic<bool> done{false};
  std::atomic<long> answered{0};
  std::thread reader([&] {
    while (!done) {
      const json r = a.call("status");
      answered += r.value("ok", false) ? 1 : 0;
    }
  });
  for (int i = 0; i < 20; ++i) {
    // Another SM writes the state: a's next run takes it over again.
    StateStore store(dir.path);
    PersistedState s = store.load();
    ++s.generation;
    store.save(s);
    ASSERT_TRUE(a.service->take_over_if_needed(a.self));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    a.service->on_topology(a.view);
  }
  done = true;
  reader.join();
  EXPECT_GT(answered.load(), 0);
}

// A standby whose share is unmounted (the state directory empty) or gone keeps the
// partitions.conf it has: OpenSM reads that file at a failover before the plugin routes, and
// one without the tenants' partitions would cut every tenant off. Status says why.
TEST(Failover, AStandbyThatLosesTheShareKeepsItsPartitionsFile) {
  TempDir dir;
  const std::string share = dir.path + "/share";
  std::filesystem::create_directory(share);
  const std::string pa = dir.path + "/partitions.a.conf", pb = dir.path + "/partitions.b.conf";
  Sm a(share, sm(0x11, "comp-1", 2), pa), b(share, sm(0x22, "comp-2", 3), pb);
  a.state = SmState::kMaster;
  b.master = a.self;
  ASSERT_TRUE(a.route());
  ASSERT_TRUE(a.call("tenant.add", {{"name", "t1"}, {"hosts", 4}})["ok"]);
  b.service->follow_shared_state();
  const std::string followed = slurp(pb);
  ASSERT_NE(followed.find("t1="), std::string::npos) << followed;
  // The share is unmounted: the mount point is an empty directory.
  std::filesystem::rename(share, dir.path + "/mounted");
  std::filesystem::create_directory(share);
  b.service->follow_shared_state();
  EXPECT_EQ(slurp(pb), followed);
  const json status = b.call("status");
  ASSERT_TRUE(status["ok"]) << status.dump();
  EXPECT_NE(status["result"].value("blocked", "").find("does not exist"), std::string::npos)
      << status.dump();
  EXPECT_EQ(b.call("tenant.list")["error"]["code"], error::kUnavailable);
  EXPECT_NE(b.call("metrics")["result"]["text"].get<std::string>().find("laas_state_blocked 1"),
            std::string::npos);
  b.service->follow_shared_state();
  EXPECT_EQ(slurp(pb), followed);
  // A standby started while the share is unmounted writes nothing either.
  const std::string pc = dir.path + "/partitions.c.conf";
  std::filesystem::copy_file(pb, pc);
  Sm c(share, sm(0x33, "comp-3", 4), pc);
  c.master = a.self;
  c.service->follow_shared_state();
  EXPECT_EQ(slurp(pc), followed);
  // Mounted again: followed as before, and readable again.
  std::filesystem::remove(share);
  std::filesystem::rename(dir.path + "/mounted", share);
  ASSERT_TRUE(a.call("tenant.add", {{"name", "t2"}, {"hosts", 2}})["ok"]);
  b.service->follow_shared_state();
  c.service->follow_shared_state();
  EXPECT_NE(slurp(pb).find("t2="), std::string::npos);
  EXPECT_NE(slurp(pc).find("t2="), std::string::npos);
  EXPECT_FALSE(b.call("status")["result"].contains("blocked"));
}

// The take-over decides whether state.json is missing under the directory lock, where it reads
// the file: a check before the lock lets the share be unmounted (or the file removed) between
// the check and the read, and an empty state is then taken over and written.
TEST(Failover, TheTakeOverChecksForTheFileUnderTheLock) {
  TempDir dir;
  PersistedState recorded;
  recorded.topology = "xgft(2;4,8;1,4)";
  recorded.generation = 7;
  StateStore(dir.path).save(recorded);
  Sm a(dir.path, sm(0x11, "comp-1", 2), "", /*state_must_exist=*/true);
  a.state = SmState::kMaster;
  // Another writer holds the lock; the take-over waits for it.
  const int fd = ::open((dir.path + "/state.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  std::optional<std::string> line;
  std::thread taker([&] { line = a.service->take_over_if_needed(a.self); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Meanwhile the share goes away (the file with it), and the lock is released.
  std::filesystem::rename(dir.path + "/state.json", dir.path + "/state.json.away");
  ::close(fd);
  taker.join();
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("cannot take the tenant state over"), std::string::npos) << *line;
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/state.json"));
}

// HA bootstrap: with state_must_exist no SM takes a missing state.json over, and on a new,
// empty share none ever would. Until `laasctl state init` (StateStore::init) the refusal says
// what to do; after it, the master takes the empty state over by itself.
TEST(Failover, StateInitIsTheBootstrapOfANewShare) {
  TempDir dir;
  const std::string share = dir.path + "/share";
  Sm a(share, sm(0x11, "comp-1", 2), "", /*state_must_exist=*/true);
  a.state = SmState::kMaster;
  const auto refused = a.route();
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("`laasctl state init`"), std::string::npos) << *refused;
  EXPECT_NE(a.call("status")["result"].value("blocked", "").find("laasctl state init"),
            std::string::npos);
  const mode_t old = ::umask(0);
  const std::string said = StateStore(share).init("");
  ::umask(old);
  EXPECT_NE(said.find("wrote " + share + "/state.json"), std::string::npos) << said;
  struct stat st;
  ASSERT_EQ(::stat((share + "/state.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_EQ(::stat(share.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0750u);  // made by the refused take-over; 2750 when init makes it
  const auto taken = a.route();
  ASSERT_TRUE(taken);
  EXPECT_NE(taken->find("took over as master (term 1): 0 tenant(s)"), std::string::npos) << *taken;
  ASSERT_TRUE(a.call("tenant.add", {{"name", "t"}, {"hosts", 2}})["ok"]);
  // Never over a state that is there, nor over a lost one.
  const std::string before = slurp(share + "/state.json");
  EXPECT_THROW(StateStore(share).init(""), std::runtime_error);
  EXPECT_EQ(slurp(share + "/state.json"), before);
  std::filesystem::remove(share + "/state.json");
  std::ofstream(share + "/allocations.json") << "{}\n";
  EXPECT_THROW(StateStore(share).init(""), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(share + "/state.json"));
}
