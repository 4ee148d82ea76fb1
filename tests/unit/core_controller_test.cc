// Unit tests of the plugin's OpenSM-free core: configuration, tenant files, allocations,
// and the engine on model fabrics.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "core/config.h"
#include "core/controller.h"
#include "core/controller_testing.h"
#include "core/tenants.h"
#include "temp_files.h"
#include "topology/embedding.h"
#include "topology/layout.h"

using namespace laas;
using namespace laas::core;
using laas::test::TempDir;
using nlohmann::json;

namespace {

Config config_in(const TempDir& dir) {
  Config c;
  c.state_dir = dir.path;
  return c;
}

service::Logger quiet() {
  return [](service::LogLevel, const std::string&) {};
}

void disconnect(topology::Fabric& f, int node, int port) {
  auto& p = f.nodes[node].ports[port];
  auto& q = f.nodes[p.peer_node].ports[p.peer_port];
  q = {};
  q.lid = 0;
  p.peer_node = -1;
  p.peer_port = 0;
}

// The 32-host tree, the SM on a spine, tenants A (6 hosts) and B (5) in tenants.yaml.
struct TwoTenants {
  TempDir dir;
  const topology::FatTree tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  topology::Fabric fabric;
  topology::Embedding emb;
  Guid sm = 0;
  TwoTenants() {
    std::tie(fabric, emb) = topology::build_model_fabric(tree);
    sm = fabric.nodes[emb.switch_node[1][0]].port_guid;
    dir.write("tenants.yaml", "- name: A\n  hosts: 6\n- name: B\n  hosts: 5\n");
  }
};

// A one-port adapter (node GUID `guid`, port GUID guid + 1) with LID `lid`, cabled to `port` of
// switch node `sw` (a port the switch gains if it lacks it): a host outside the tree's slots.
void cable_adapter(topology::Fabric& fabric, Guid guid, const std::string& name, topology::Lid lid,
                   int sw, int port) {
  topology::FabricNode n;
  n.guid = guid;
  n.port_guid = guid + 1;
  n.name = name;
  n.ports.resize(2);
  n.ports[1].lid = lid;
  const int id = fabric.add_node(n);
  if (static_cast<int>(fabric.nodes[sw].ports.size()) <= port)
    fabric.nodes[sw].ports.resize(port + 1);
  fabric.connect(id, 1, sw, port);
}

}  // namespace

TEST(PluginConfig, DefaultsAndKeys) {
  const Config d = load_config("");
  EXPECT_EQ(d.socket, "/run/opensm/laas.sock");
  EXPECT_EQ(d.state_dir, "/var/lib/laas");
  TempDir dir;
  dir.write("laas.yaml",
            "state_dir: /x/y/\nplacer: simple\nmanagement: [0x10, '0x20']\ntenants_poll_ms: 0\n");
  const Config c = load_config(dir.path + "/laas.yaml");
  EXPECT_EQ(c.state_dir, "/x/y");
  EXPECT_EQ(c.placer, "simple");
  EXPECT_EQ(c.management, (std::vector<std::uint64_t>{0x10, 0x20}));
  EXPECT_EQ(c.tenants_poll_ms, 0);
  EXPECT_EQ(c.routing_threads, 0);  // the default
  EXPECT_EQ(c.switch_check_interval_s, 300);
  dir.write("check.yaml", "switch_check_interval: 0\n");
  EXPECT_EQ(load_config(dir.path + "/check.yaml").switch_check_interval_s, 0);
  for (const char* bad : {"switch_check_interval: -1\n", "switch_check_interval: 86401\n",
                          "switch_check_interval: soon\n"}) {
    dir.write("check_bad.yaml", bad);
    const Config b = check_config(dir.path + "/check_bad.yaml");
    ASSERT_EQ(b.problems.size(), 1u) << bad;
    EXPECT_NE(b.problems[0].find("check_bad.yaml:1: key 'switch_check_interval'"),
              std::string::npos)
        << b.problems[0];
    EXPECT_EQ(b.switch_check_interval_s, 300) << bad;
  }
  dir.write("threads.yaml", "routing_threads: 1\n");
  EXPECT_EQ(load_config(dir.path + "/threads.yaml").routing_threads, 1);
  dir.write("threads9.yaml", "routing_threads: 9\n");
  try {
    load_config(dir.path + "/threads9.yaml");
    ADD_FAILURE() << "routing_threads: 9 accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("routing_threads"), std::string::npos) << e.what();
  }
  dir.write("bad.yaml", "sokcet: /tmp/x\n");
  EXPECT_THROW(load_config(dir.path + "/bad.yaml"), std::runtime_error);
  dir.write("bad2.yaml", "management: [zz]\n");
  EXPECT_THROW(load_config(dir.path + "/bad2.yaml"), std::runtime_error);
  EXPECT_THROW(load_config(dir.path + "/absent.yaml"), std::runtime_error);
}

// Each laas.yaml text of `bad` makes check_config's first problem name what it pairs it with.
template <std::size_t N>
void expect_first_problems(TempDir& dir, const std::pair<const char*, const char*> (&bad)[N]) {
  for (const auto& [text, expected] : bad) {
    dir.write("bad.yaml", text);
    const Config b = check_config(dir.path + "/bad.yaml");
    ASSERT_FALSE(b.problems.empty()) << text;
    EXPECT_NE(b.problems[0].find(expected), std::string::npos) << b.problems[0];
    // Never the default directory instead: the state is not read from a guess.
    EXPECT_TRUE(b.state_dir_unknown) << text;
  }
}

TEST(PluginConfig, EtcdStateStoreAndItsErrorsNamingTheField) {
  EXPECT_EQ(load_config("").state_store, "dir");
  TempDir dir;
  dir.write("etcd.yaml",
            "state_store: etcd\netcd:\n  endpoints: [127.0.0.1:2379, 'https://sm-b:2379']\n"
            "  cacert: /etc/laas/ca.pem\n  timeout_ms: 800\n");
  const Config c = load_config(dir.path + "/etcd.yaml");
  EXPECT_EQ(c.state_store, "etcd");
  EXPECT_EQ(c.etcd.endpoints, (std::vector<std::string>{"127.0.0.1:2379", "https://sm-b:2379"}));
  EXPECT_EQ(c.etcd.prefix, "/laas/");  // the default
  EXPECT_EQ(c.etcd.cacert, "/etc/laas/ca.pem");
  EXPECT_EQ(c.etcd.timeout_ms, 800);
  const std::pair<const char*, const char*> bad[] = {
      {"state_store: zookeeper\n", "key 'state_store': must be 'dir' or 'etcd'"},
      {"state_store: etcd\n", "key 'state_store': 'etcd' needs 'etcd: {endpoints"},
      {"state_store: etcd\netcd:\n  endpoints: []\n", "'etcd.endpoints' (line 3)"},
      {"state_store: etcd\netcd:\n  endpoints: ['unix:///x']\n", "'etcd.endpoints' (line 3)"},
      {"state_store: etcd\netcd:\n  endpoints: [a:1]\n  prefix: laas\n",
       "'etcd.prefix' (line 4): must start and end with '/'"},
      {"state_store: etcd\netcd:\n  endpoints: [a:1]\n  timeout_ms: 5\n",
       "'etcd.timeout_ms' (line 4): must be between 100 and 60000"},
      {"state_store: etcd\netcd:\n  endpoints: [a:1]\n  cacert: ca.pem\n",
       "'etcd.cacert' (line 4): must be an absolute path"},
      {"state_store: etcd\netcd:\n  endpoints: [a:1]\n  cert: /c.pem\n",
       "'etcd.cert' and 'etcd.key' go together"},
      {"state_store: etcd\netcd:\n  endpoints: [a:1]\n  endpoint: [a:1]\n",
       "'etcd.endpoint' (line 4): unknown key"},
  };
  expect_first_problems(dir, bad);
}

// etcd.lease_ttl_s: the master's leader key's lease (service/etcd_state.h).
TEST(PluginConfig, EtcdLeaseTtlHasADefaultAndBadValuesNameTheField) {
  TempDir dir;
  dir.write("d.yaml", "state_store: etcd\netcd:\n  endpoints: [a:1]\n");
  EXPECT_EQ(load_config(dir.path + "/d.yaml").etcd.lease_ttl_s, 10);
  dir.write("g.yaml", "state_store: etcd\netcd:\n  endpoints: [a:1]\n  lease_ttl_s: 30\n");
  EXPECT_EQ(load_config(dir.path + "/g.yaml").etcd.lease_ttl_s, 30);
  // Not given with a long deadline: two deadlines, so a slow keep-alive still lands in time.
  dir.write("l.yaml", "state_store: etcd\netcd:\n  endpoints: [a:1]\n  timeout_ms: 20000\n");
  EXPECT_EQ(load_config(dir.path + "/l.yaml").etcd.lease_ttl_s, 40);
  const std::pair<const char*, const char*> bad[] = {
      {"state_store: etcd\netcd:\n  endpoints: [a:1]\n  lease_ttl_s: 1\n",
       "'etcd.lease_ttl_s' (line 4): must be between 2 and 3600"},
      {"state_store: etcd\netcd:\n  endpoints: [a:1]\n  lease_ttl_s: ten\n",
       "'etcd.lease_ttl_s' (line 4)"},
      {"state_store: etcd\netcd:\n  endpoints: [a:1]\n  lease_ttl_s: 4\n  timeout_ms: 3000\n",
       "'etcd.lease_ttl_s' (line 4): must be at least twice etcd.timeout_ms (3000 ms)"},
  };
  expect_first_problems(dir, bad);
}

TEST(PluginConfig, LinkErrorConsecutiveReadings) {
  EXPECT_EQ(load_config("").link_error_consecutive_readings, 2);
  TempDir dir;
  dir.write("k.yaml", "link_error_threshold: 10\nlink_error_consecutive_readings: 5\n");
  EXPECT_EQ(load_config(dir.path + "/k.yaml").link_error_consecutive_readings, 5);
  for (const char* bad : {"0", "1001", "-1"}) {
    dir.write("bad.yaml", std::string("link_error_consecutive_readings: ") + bad + "\n");
    EXPECT_THROW(load_config(dir.path + "/bad.yaml"), std::runtime_error) << bad;
  }
}

TEST(PluginTenants, RequestsFile) {
  TempDir dir;
  EXPECT_TRUE(load_tenant_requests(dir.path + "/none.yaml").empty());
  dir.write("t.yaml", "- name: A\n  hosts: 10\n- name: B\n  hosts: 3\n");
  const auto r = load_tenant_requests(dir.path + "/t.yaml");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].name, "B");
  EXPECT_EQ(r[1].hosts, 3);
  dir.write("dup.yaml", "- name: A\n  hosts: 1\n- name: A\n  hosts: 2\n");
  EXPECT_THROW(load_tenant_requests(dir.path + "/dup.yaml"), std::runtime_error);
  dir.write("res.yaml", "- name: _mgmt_1\n  hosts: 1\n");
  EXPECT_THROW(load_tenant_requests(dir.path + "/res.yaml"), std::runtime_error);
  dir.write("key.yaml", "- name: A\n  host: 1\n");
  EXPECT_THROW(load_tenant_requests(dir.path + "/key.yaml"), std::runtime_error);
}

TEST(PluginTenants, AllocationsJsonRoundTrip) {
  Allocations a;
  a.topology = "xgft(2;4,8;1,4)";
  a.sm_port_guid = 0x200000;
  TenantRecord t;
  t.name = "A";
  t.requested = 2;
  t.shape = "1x2";
  t.hosts = {{"comp-1", 0x100001, 0, 2}, {"comp-2", 0x100003, 0, 5}};
  t.links = {{{"SW_L1_0", 0x200004, 1, 7}, {"SW_L2_0", 0x200000, 1, 1}}};
  a.tenants["A"] = t;
  a.servers = {{"stor-a", "storage"}};  // laas.yaml's servers: map, for the audit
  const auto b = allocations_from_json(to_json(a));
  EXPECT_EQ(to_json(b), to_json(a));
  EXPECT_EQ(b.tenants.at("A").links[0].upper.port, 1);
  EXPECT_EQ(b.servers, a.servers);
  EXPECT_THROW(allocations_from_json("{\"version\": 1, \"tenants\": [{}]}"), std::runtime_error);
  EXPECT_THROW(allocations_from_json("not json"), std::runtime_error);
}

// The tenants file's changes are made by the routing run that reads them, which routes them:
// they ask OpenSM for no other run. The same change over the socket asks for one.
TEST(PluginEngine, TheTenantsFileAsksForNoRerouteASocketChangeDoes) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  const auto model = topology::build_model_fabric(tree);
  const auto& fabric = model.first;
  const Guid sm = fabric.nodes[model.second.switch_node[1][0]].port_guid;
  dir.write("tenants.yaml", "- name: A\n  hosts: 10\n");
  Controller engine(config_in(dir), quiet());
  int reroutes = 0;
  engine.set_reroute_hook([&] { ++reroutes; });
  auto out = routed(engine, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  ASSERT_EQ(engine.service().tenant_names(), std::vector<std::string>{"A"});
  dir.write("tenants.yaml", "- name: B\n  hosts: 4\n");
  out = routed(engine, fabric, sm);  // removes A, adds B
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(engine.service().tenant_names(), std::vector<std::string>{"B"});
  EXPECT_EQ(reroutes, 0);
  const service::Caller root{0, true};
  const auto r = engine.service().add_tenant("C", 4, {}, root);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(reroutes, 1);
  const auto gone = engine.service().remove_tenant("nobody", root);
  EXPECT_FALSE(gone.ok);
  EXPECT_EQ(gone.code, service::error::kNotFound);
}

TEST(PluginEngine, PlacesRestoresAndReleases) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  const Guid sm = fabric.nodes[emb.switch_node[1][0]].port_guid;
  dir.write("tenants.yaml", "- name: A\n  hosts: 10\n");
  Controller engine(config_in(dir), quiet());
  auto out = routed(engine, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  ASSERT_EQ(out.tables.size(), fabric.nodes.size());
  EXPECT_FALSE(out.tables[emb.switch_node[0][0]].empty());
  const auto first = load_allocations(dir.path + "/allocations.json");
  ASSERT_TRUE(first);
  ASSERT_EQ(first->tenants.count("A"), 1u);
  const std::string a_json = to_json(Allocations{"", 0, {}, {{"A", first->tenants.at("A")}}});

  // Another tenant comes; A is untouched. A fresh engine (a restart) restores both.
  sleep(0);
  dir.write("tenants.yaml.new", "- name: A\n  hosts: 10\n- name: B\n  hosts: 6\n");
  std::rename((dir.path + "/tenants.yaml.new").c_str(), (dir.path + "/tenants.yaml").c_str());
  EXPECT_TRUE(ControllerTesting::tenants_changed(engine));
  out = routed(engine, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_FALSE(ControllerTesting::tenants_changed(engine));
  for (const auto& w : out.warnings) ADD_FAILURE() << w;
  auto second = load_allocations(dir.path + "/allocations.json");
  ASSERT_EQ(second->tenants.size(), 2u);
  EXPECT_EQ(to_json(Allocations{"", 0, {}, {{"A", second->tenants.at("A")}}}), a_json);
  Controller restarted(config_in(dir), quiet());
  out = routed(restarted, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  const auto third = load_allocations(dir.path + "/allocations.json");
  EXPECT_EQ(to_json(*third), to_json(*second));

  // A cable held by A disappears: A keeps its placement (the link is reported faulty).
  const auto& link = second->tenants.at("A").links.front();
  int node = -1;
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (fabric.nodes[i].guid == link.lower.guid) node = static_cast<int>(i);
  ASSERT_GE(node, 0);
  disconnect(fabric, node, link.lower.port);
  out = routed(restarted, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  for (const auto& w : out.warnings)
    EXPECT_EQ(w.find("cannot be restored"), std::string::npos) << w;
  const auto fourth = load_allocations(dir.path + "/allocations.json");
  EXPECT_EQ(fourth->tenants.at("A").hosts.size(), 10u);
  EXPECT_EQ(fourth->tenants.at("A").links.size(), second->tenants.at("A").links.size());

  // B removed from the file: released.
  dir.write("tenants.yaml", "- name: A\n  hosts: 10\n");
  out = routed(restarted, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(load_allocations(dir.path + "/allocations.json")->tenants.count("B"), 0u);
}

TEST(PluginEngine, SmHostIsManagementAndNeverAllocated) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  const Guid sm = fabric.nodes[emb.host_node[0]].port_guid;
  dir.write("tenants.yaml", "- name: all\n  hosts: 32\n- name: most\n  hosts: 28\n");
  Controller engine(config_in(dir), quiet());
  auto out = routed(engine, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  const auto a = load_allocations(dir.path + "/allocations.json");
  EXPECT_EQ(a->tenants.count("all"), 0u);  // refused: the SM's host is not allocatable
  ASSERT_EQ(a->management.size(), 1u);
  EXPECT_EQ(a->management[0].name, "comp-1");
  ASSERT_EQ(a->tenants.count("most"), 1u);
  for (const auto& h : a->tenants.at("most").hosts) EXPECT_NE(h.name, "comp-1");
}

TEST(PluginEngine, RefusesNonFatTreesAndCorruptState) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  topology::Fabric broken = fabric;
  // A host down is an absent part of the tree, not a reason to refuse.
  disconnect(broken, emb.host_node[3], 1);
  {
    TempDir other;
    Controller engine(config_in(other), quiet());
    auto out = routed(engine, broken, 0);
    EXPECT_TRUE(out.ok) << out.error;
  }
  // A leaf cabled to itself: not a fat-tree.
  const int leaf = emb.switch_node[0][0];
  const int spare = static_cast<int>(broken.nodes[leaf].ports.size());
  broken.nodes[leaf].ports.resize(spare + 2);
  broken.connect(leaf, spare, leaf, spare + 1);
  Controller engine(config_in(dir), quiet());
  auto out = routed(engine, broken, 0);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.not_fat_tree);
  EXPECT_NE(out.error.find("loop cable"), std::string::npos) << out.error;

  dir.write("state.json", "{ truncated");
  Controller corrupt(config_in(dir), quiet());
  EXPECT_FALSE(corrupt.state_error().empty());
  // A state that exists and cannot be read may hold tenants, and nothing else records them:
  // never the next engine. At a start OpenSM knows nothing the switches hold: no tenant is
  // routed (every host free), closed.
  out = routed(corrupt, fabric, 0);
  EXPECT_TRUE(out.ok) << out.error;
  EXPECT_FALSE(out.keep_switch_tables);
  EXPECT_FALSE(out.tables.empty());
  EXPECT_FALSE(out.not_fat_tree);
  EXPECT_NE(out.fail_closed.find("tenant state cannot be read"), std::string::npos)
      << out.fail_closed;
  EXPECT_NE(out.fail_closed.find("nothing records the tenants last routed"), std::string::npos)
      << out.fail_closed;

  Config pinned = config_in(dir);
  pinned.topology = "xgft(2;4,4;1,4)";
  std::remove((dir.path + "/state.json").c_str());
  Controller expecting(pinned, quiet());
  out = routed(expecting, fabric, 0);
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.error.find("laas.yaml"), std::string::npos) << out.error;
}

// After its start OpenSM knows nothing of what the switches hold. A first run that must fail
// closed (a tenant state nobody can read, nothing recording the tenants) gives every switch
// the tables this SM last sent, kept in the state directory; without them, no tenant is routed.
TEST(PluginEngine, AStartFailingClosedGivesTheSwitchesTheTablesLastSent) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  std::vector<Guid> guids(fabric.nodes.size(), 0);
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (fabric.nodes[i].is_switch) guids[i] = fabric.nodes[i].guid;
  RouteOutcome good;
  {
    Controller first(config_in(dir), quiet());
    good = routed(first, fabric, 0);
    ASSERT_TRUE(good.ok) << good.error;
    ASSERT_FALSE(good.tables.empty());
    auto sl2vl = std::make_shared<const routing::Sl2VlTables>(good.sl2vl);
    first.keep_sent_tables({}, guids, good.tables, sl2vl);
    ASSERT_TRUE(first.service().io().idle(std::chrono::seconds(10)));
  }
  std::ifstream kept(dir.path + "/tables.bin", std::ios::binary);
  ASSERT_TRUE(kept) << "no tables.bin written";
  const std::string bytes((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  dir.write("state.json", "{ truncated");
  std::remove((dir.path + "/allocations.json").c_str());
  Controller restarted(config_in(dir), quiet());
  auto out = routed(restarted, fabric, 0);
  EXPECT_TRUE(out.ok) << out.error;
  EXPECT_TRUE(out.keep_switch_tables);
  EXPECT_NE(out.fail_closed.find("nothing records the tenants last routed"), std::string::npos)
      << out.fail_closed;
  ASSERT_TRUE(out.saved_tables);
  size_t switches = 0;
  for (size_t i = 0; i < fabric.nodes.size(); ++i) {
    if (!fabric.nodes[i].is_switch) continue;
    ++switches;
    const auto& sent = out.saved_tables->switches.at(fabric.nodes[i].guid);
    EXPECT_EQ(sent.lft, good.tables[i]) << fabric.nodes[i].name;
    EXPECT_EQ(sent.drops, good.sl2vl.drops[i]) << fabric.nodes[i].name;
  }
  EXPECT_EQ(out.saved_tables->switches.size(), switches);

  // Cut short (a crash while it was written elsewhere): refused whole, no tenant routed.
  dir.write("tables.bin", bytes.substr(0, bytes.size() / 2));
  Controller cut(config_in(dir), quiet());
  out = routed(cut, fabric, 0);
  EXPECT_TRUE(out.ok) << out.error;
  EXPECT_FALSE(out.keep_switch_tables);
  EXPECT_FALSE(out.saved_tables);
  EXPECT_FALSE(out.tables.empty());
  bool said = false;
  for (const auto& w : out.warnings) said |= w.find("tables.bin") != std::string::npos;
  EXPECT_TRUE(said) << "no warning names tables.bin";
}

namespace {

// state.json holding only a term, as an SM that took the state over leaves it.
void write_term(TempDir& dir, std::uint64_t term) {
  service::PersistedState st;
  st.term = term;
  st.master = "0x0002c90000000001 'sm-other' LID 1";
  dir.write("state.json", service::serialize_state(st));
}

struct Kept {
  topology::Fabric fabric;
  std::vector<Guid> guids;
  RouteOutcome good;
};

Kept route_once(Controller& engine) {
  Kept k;
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  k.fabric = topology::build_model_fabric(tree).first;
  k.guids.assign(k.fabric.nodes.size(), 0);
  for (size_t i = 0; i < k.fabric.nodes.size(); ++i)
    if (k.fabric.nodes[i].is_switch) k.guids[i] = k.fabric.nodes[i].guid;
  k.good = routed(engine, k.fabric, 0);
  return k;
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

json call(Controller& engine, const std::string& method);  // below

}  // namespace

// tables.bin is written under the term this SM holds; a start refuses a file written in a term
// older than the last master's (that master may have sent other tables and died before writing
// them), and takes one from the last master's term.
TEST(PluginEngine, TablesFromAnOlderTermThanTheLastMastersAreRefused) {
  TempDir dir;
  write_term(dir, 3);
  {
    Controller first(config_in(dir), quiet());
    auto k = route_once(first);
    ASSERT_TRUE(k.good.ok) << k.good.error;
    first.keep_sent_tables({{1, {0x1, 0, 0}}}, k.guids, k.good.tables, nullptr);
    ASSERT_TRUE(first.service().io().idle(std::chrono::seconds(10)));
  }
  ASSERT_TRUE(exists(dir.path + "/tables.bin"));
  // One take-over since (term 4, this SM's own without a provider): the last master's is 3.
  write_term(dir, 4);
  {
    Controller next(config_in(dir), quiet());
    route_once(next);
    std::string why;
    const auto saved = next.sent_tables(&why);
    ASSERT_TRUE(saved) << why;
    EXPECT_EQ(saved->stamp.term, 3u);
    EXPECT_EQ(saved->lids.at(1).port, 0x1u);
  }
  // Two: a master held term 4 and wrote nothing.
  write_term(dir, 5);
  Controller later(config_in(dir), quiet());
  route_once(later);
  std::string why;
  EXPECT_FALSE(later.sent_tables(&why));
  EXPECT_NE(why.find("written in term 3"), std::string::npos) << why;
}

// A deposed master writes nothing: not while OpenSM says it is not master, not once another
// SM took the state over (a newer term in state.json, checked under state.lock).
TEST(PluginEngine, ADeposedMasterDoesNotReplaceTheTablesFile) {
  TempDir dir;
  write_term(dir, 3);
  Controller engine(config_in(dir), quiet());
  auto k = route_once(engine);
  ASSERT_TRUE(k.good.ok) << k.good.error;
  write_term(dir, 4);  // another SM took over meanwhile
  engine.keep_sent_tables({}, k.guids, k.good.tables, nullptr);
  ASSERT_TRUE(engine.service().io().idle(std::chrono::seconds(10)));
  EXPECT_FALSE(exists(dir.path + "/tables.bin")) << "a deposed master's tables were written";
  EXPECT_EQ(engine.service().tables_file_health()->write_failures.load(), 0);

  TempDir standby_dir;
  Controller standby(config_in(standby_dir), quiet());
  standby.service().set_role_provider([] {
    service::SmRole r;
    r.state = service::SmState::kStandby;
    return r;
  });
  standby.keep_sent_tables({}, k.guids, k.good.tables, nullptr);
  ASSERT_TRUE(standby.service().io().idle(std::chrono::seconds(10)));
  EXPECT_FALSE(exists(standby_dir.path + "/tables.bin")) << "a standby wrote tables.bin";
}

// A write that fails is counted in the metrics and said by status; the file is 0640 once
// written.
TEST(PluginEngine, AFailedTablesWriteIsCountedAndShown) {
  TempDir dir;
  Controller engine(config_in(dir), quiet());
  auto k = route_once(engine);
  ASSERT_TRUE(k.good.ok) << k.good.error;
  // A directory where the file should be: the rename fails.
  ASSERT_EQ(std::system(("mkdir -p '" + dir.path + "/tables.bin/x'").c_str()), 0);
  engine.keep_sent_tables({}, k.guids, k.good.tables, nullptr);
  ASSERT_TRUE(engine.service().io().idle(std::chrono::seconds(10)));
  EXPECT_EQ(engine.service().tables_file_health()->write_failures.load(), 1);
  const json status = call(engine, "status");
  EXPECT_EQ(status.value("tables_file_write_failures", -1), 1) << status.dump();
  EXPECT_NE(status.value("tables_file_error", "").find("tables.bin"), std::string::npos)
      << status.dump();
  EXPECT_NE(
      call(engine, "metrics").value("text", "").find("laas_tables_file_write_failures_total 1\n"),
      std::string::npos);
  // Repaired: written, 0640, status no longer names an error (the count stays).
  ASSERT_GT(std::filesystem::remove_all(dir.path + "/tables.bin"), 0u);
  k.good.tables[0].push_back(0xFF);  // other tables: not skipped as already written
  engine.keep_sent_tables({}, k.guids, k.good.tables, nullptr);
  ASSERT_TRUE(engine.service().io().idle(std::chrono::seconds(10)));
  struct stat st;
  ASSERT_EQ(::stat((dir.path + "/tables.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_FALSE(call(engine, "status").contains("tables_file_error"));
}

// A write that fails (here: the file size limit) removes the older file, so a start failing
// closed does not give the switches tables older than those they were sent.
TEST(PluginEngine, AFailedTablesWriteRemovesTheOlderFile) {
  TempDir dir;
  Controller engine(config_in(dir), quiet());
  auto k = route_once(engine);
  ASSERT_TRUE(k.good.ok) << k.good.error;
  engine.keep_sent_tables({}, k.guids, k.good.tables, nullptr);
  ASSERT_TRUE(engine.service().io().idle(std::chrono::seconds(10)));
  ASSERT_TRUE(exists(dir.path + "/tables.bin"));
  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 64;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  k.good.tables[0].push_back(0xFF);  // other tables
  engine.keep_sent_tables({}, k.guids, k.good.tables, nullptr);
  const bool idle = engine.service().io().idle(std::chrono::seconds(10));
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_TRUE(idle);
  EXPECT_EQ(engine.service().tables_file_health()->write_failures.load(), 1);
  EXPECT_FALSE(exists(dir.path + "/tables.bin")) << "the older tables.bin was left";
}

// The configuration file the packages install loads, with its documented defaults.
TEST(PluginConfig, ShippedLaasYamlLoads) {
  const std::string path = std::string(LAAS_CONF_DIR) + "/laas.yaml";
  const auto c = laas::core::load_config(path);
  EXPECT_EQ(c.socket, "/run/opensm/laas.sock");
  EXPECT_EQ(c.state_dir, "/var/lib/laas");
  EXPECT_EQ(c.placer, "laas");
  EXPECT_TRUE(c.manage_partitions);
  EXPECT_TRUE(c.slurm_node_names.empty());
  // Two groups on the control socket: changes, and reads only.
  EXPECT_EQ(c.socket_group, "laas");
  EXPECT_EQ(c.socket_read_group, "laas-read");
}

TEST(PluginConfig, NameMapsAndTheirErrors) {
  char tmpl[] = "/tmp/laas-conf-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  ::close(fd);
  std::ofstream(tmpl) << "slurm_node_names: {comp-1: node001}\nopenstack_projects: [a]\n";
  try {
    laas::core::load_config(tmpl);
    FAIL() << "a list for openstack_projects was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("openstack_projects"), std::string::npos) << e.what();
  }
  std::ofstream(tmpl) << "slurm_node_names: {comp-1: node001}\n";
  EXPECT_EQ(laas::core::load_config(tmpl).slurm_node_names.at("comp-1"), "node001");
  ::unlink(tmpl);
}

// Faults end to end through the engine: a cable under a tenant with a free column is lost;
// the tenant is repaired, allocations.json records the idle (retired) links by physical
// identity, and the audit of the computed tables is clean. The cable returns: tables as before.
TEST(PluginEngine, RepairsATenantUnderACableFault) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("pgft(2;4,4;1,4;1,2)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  const Guid sm = fabric.nodes[emb.switch_node[1][0]].port_guid;
  dir.write("tenants.yaml", "- name: A\n  hosts: [comp-1, comp-2, comp-5, comp-6]\n");
  Controller engine(config_in(dir), quiet());
  auto clean = routed(engine, fabric, sm);
  ASSERT_TRUE(clean.ok) << clean.error;
  const auto before = load_allocations(dir.path + "/allocations.json");
  ASSERT_EQ(before->tenants.at("A").links.size(), 4u);
  const auto& link = before->tenants.at("A").links.front();
  int node = -1;
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (fabric.nodes[i].guid == link.lower.guid) node = static_cast<int>(i);
  ASSERT_GE(node, 0);
  auto broken = fabric;
  disconnect(broken, node, link.lower.port);
  const auto rec = topology::recognize(broken, sm);
  ASSERT_TRUE(rec.ok()) << rec.error;
  {
    // The contract of topology/embedding.h: the missing cable keeps its intended port. A
    // recognizer that does not keep intended ports renumbers the remaining parallel cable instead.
    ASSERT_EQ(rec.embedding.missing_links.size(), 1u);
    const auto lo = tree.link_lower(rec.embedding.missing_links[0]);
    if (rec.embedding.port_map[lo.level - 1][lo.index][lo.port] != link.lower.port)
      GTEST_SKIP() << "recognition does not keep intended ports yet (recognition half)";
  }
  auto out = routed(engine, broken, sm);
  ASSERT_TRUE(out.ok) << out.error;
  const auto after = load_allocations(dir.path + "/allocations.json");
  const auto& a = after->tenants.at("A");
  EXPECT_EQ(a.links.size(), 4u);
  ASSERT_EQ(a.idle.size(), 2u);
  EXPECT_EQ(a.idle.front().lower.guid, link.lower.guid);
  EXPECT_EQ(a.idle.front().lower.port, link.lower.port);
  for (const auto& h : a.hosts) EXPECT_NE(h.slot_switch, 0u);
  const auto report = routing::audit(audit_input(rec, broken, out.tables, *after));
  EXPECT_TRUE(report.ok()) << routing::to_json(report).dump(1);
  auto back = routed(engine, fabric, sm);
  ASSERT_TRUE(back.ok) << back.error;
  EXPECT_EQ(back.tables, clean.tables);
  EXPECT_TRUE(load_allocations(dir.path + "/allocations.json")->tenants.at("A").idle.empty());
}
namespace laas::core {
namespace {

// Every routing run carries the first-hop drop for update_sl2vl; the audit over the same
// LFTs and those SL2VL tables is clean, and without them tenants sharing a leaf leak.
TEST(PluginEngine, FirstHopDropComesWithTheTables) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  // The SM on a spine (a crowded management leaf can leave some tenants without a way to
  // off-leaf management; the audit reports it, see docs/architecture.md).
  const Guid sm = fabric.nodes[emb.switch_node[1][0]].port_guid;
  dir.write("tenants.yaml",
            "- name: A\n  hosts: 6\n- name: B\n  hosts: 5\n- name: C\n  hosts: 3\n");
  Controller engine(config_in(dir), quiet());
  const auto out = routed(engine, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  ASSERT_EQ(out.sl2vl.drops.size(), fabric.nodes.size());
  long dropped = 0;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    EXPECT_EQ(out.sl2vl.has(static_cast<int>(n)), fabric.nodes[n].is_switch);
    for (auto m : out.sl2vl.drops[n]) dropped += m == routing::kAllSls;
  }
  EXPECT_GT(dropped, 0);
  const auto j = engine.audit(fabric, out.tables, sm, &out.sl2vl);
  EXPECT_TRUE(j["ok"].get<bool>()) << j.dump(1);
  EXPECT_TRUE(j["sl2vl_checked"].get<bool>());
  EXPECT_EQ(j["figures"]["cables_with_two_owners"].get<long>(), 0);
  const routing::Sl2VlTables none(fabric.nodes.size());
  const auto open = engine.audit(fabric, out.tables, sm, &none);
  EXPECT_FALSE(open["ok"].get<bool>());
  // Without qos (with_sl2vl false) the same forwarding tables, and no SL2VL plan.
  const auto no_qos = routed(engine, fabric, sm, false);
  ASSERT_TRUE(no_qos.ok) << no_qos.error;
  EXPECT_EQ(no_qos.tables, out.tables);
  EXPECT_TRUE(no_qos.sl2vl.drops.empty());
}

// Another port GUID in tenant A's slot is routed like an absent host -- no switch
// has an entry for its LID, every other entry is unchanged -- allocations.json names the slot,
// the audit of the same tables reports it (and a route to it), and `host.accept` restores the
// tables exactly.
TEST(PluginEngine, AnUnacceptedSlotIsRoutedLikeAnAbsentHost) {
  TwoTenants lab;
  auto& [dir, tree, fabric, emb, sm] = lab;
  Controller engine(config_in(dir), quiet());
  const auto before = routed(engine, fabric, sm);
  ASSERT_TRUE(before.ok) << before.error;
  const auto alloc = load_allocations(dir.path + "/allocations.json");
  const Guid recorded = alloc->tenants.at("A").hosts[1].guid;
  int node = -1;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n)
    if (fabric.nodes[n].port_guid == recorded) node = static_cast<int>(n);
  ASSERT_GE(node, 0);
  const auto lid = fabric.lid_of(node);
  fabric.nodes[node].port_guid = fabric.nodes[node].guid = 0xdead;
  fabric.nodes[node].name = "intruder";
  const auto after = routed(engine, fabric, sm);
  ASSERT_TRUE(after.ok) << after.error;
  long entries = 0;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    if (after.tables[n].empty()) continue;
    ++entries;
    EXPECT_EQ(after.tables[n][lid], routing::kNoRoute) << fabric.nodes[n].name;
    auto expected = before.tables[n];
    expected[lid] = routing::kNoRoute;
    EXPECT_EQ(after.tables[n], expected) << fabric.nodes[n].name;
  }
  EXPECT_EQ(entries, 12);
  EXPECT_NE(before.tables[emb.switch_node[1][0]][lid], routing::kNoRoute);
  const auto q = load_allocations(dir.path + "/allocations.json");
  ASSERT_EQ(q->unaccepted.size(), 1u);
  EXPECT_EQ(q->unaccepted[0].tenant, "A");
  EXPECT_EQ(q->unaccepted[0].seen.guid, 0xdeadu);
  EXPECT_EQ(q->unaccepted[0].recorded.guid, recorded);
  EXPECT_EQ(q->tenants.at("A").hosts[1].guid, recorded);  // the slot is A's host, not the newcomer
  EXPECT_EQ(allocations_from_json(to_json(*q)).unaccepted[0].seen.lid, lid);
  // The release before wrote the slots as "quarantined" only: such a file still loads.
  json old_file = json::parse(to_json(*q));
  ASSERT_EQ(old_file["quarantined"], old_file["unaccepted"]);
  old_file.erase("unaccepted");
  EXPECT_EQ(allocations_from_json(old_file.dump()).unaccepted[0].seen.lid, lid);
  auto report = engine.audit(fabric, after.tables, sm, &after.sl2vl);
  EXPECT_EQ(report["violations"], 1) << report.dump(1);
  EXPECT_EQ(report["counts"]["unaccepted-host"], 1) << report.dump(1);
  EXPECT_EQ(report["figures"]["quarantined_lid_entries_checked"], 12) << report.dump(1);
  report = engine.audit(fabric, before.tables, sm);  // the tables that route the newcomer
  long routing = 0;  // the spines and the leaves that gate A's hosts
  for (const auto& t : before.tables) routing += !t.empty() && t[lid] != routing::kNoRoute;
  EXPECT_GE(routing, 5);
  EXPECT_EQ(report["counts"]["quarantined-host-routed"], routing) << report.dump(1);
  EXPECT_EQ(report["counts"]["unaccepted-host-routed"], routing) << report.dump(1);
  // Accepted: the tables are those of before, the audit clean.
  const json r = engine.service().handle(
      {{"v", 1}, {"method", "host.accept"}, {"params", {{"hosts", {"intruder"}}, {"wait", false}}}},
      service::Caller{0, true});
  ASSERT_TRUE(r["ok"]) << r.dump();
  const auto accepted = routed(engine, fabric, sm);
  ASSERT_TRUE(accepted.ok) << accepted.error;
  EXPECT_EQ(accepted.tables, before.tables);
  EXPECT_TRUE(load_allocations(dir.path + "/allocations.json")->unaccepted.empty());
  report = engine.audit(fabric, accepted.tables, sm, &accepted.sl2vl);
  EXPECT_TRUE(report["ok"].get<bool>()) << report.dump(1);
}

// While the tenant state cannot be read, the tenants last routed are routed by slot: a newcomer
// in one of their slots (another port GUID) is quarantined as it would be with a readable
// state -- no switch routes its LID -- never given the tenant's routes.
TEST(PluginEngine, ANewcomerIsUnacceptedWhileTheStateIsBlocked) {
  TwoTenants lab;
  auto& [dir, tree, fabric, emb, sm] = lab;
  Guid recorded = 0;
  {
    Controller engine(config_in(dir), quiet());
    ASSERT_TRUE(routed(engine, fabric, sm).ok);
    recorded = load_allocations(dir.path + "/allocations.json")->tenants.at("A").hosts[1].guid;
  }
  dir.write("state.json", "{ truncated");
  Controller blocked(config_in(dir), quiet());
  ASSERT_FALSE(blocked.state_error().empty());
  const auto first = routed(blocked, fabric, sm);  // the tenants of allocations.json, closed
  ASSERT_TRUE(first.ok) << first.error;
  int node = -1;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n)
    if (fabric.nodes[n].port_guid == recorded) node = static_cast<int>(n);
  ASSERT_GE(node, 0);
  const auto lid = fabric.lid_of(node);
  ASSERT_NE(first.tables[emb.switch_node[1][0]][lid], routing::kNoRoute);
  fabric.nodes[node].port_guid = fabric.nodes[node].guid = 0xdead;
  fabric.nodes[node].name = "intruder";
  for (int run = 0; run < 2; ++run) {
    const auto after = routed(blocked, fabric, sm);
    ASSERT_TRUE(after.ok) << after.error;
    ASSERT_FALSE(after.tables.empty());
    for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
      if (after.tables[n].empty()) continue;
      EXPECT_EQ(after.tables[n][lid], routing::kNoRoute) << fabric.nodes[n].name;
    }
    bool said = false;
    for (const auto& w : after.warnings) said |= w.find("quarantined") != std::string::npos;
    EXPECT_TRUE(said) << ::testing::PrintToString(after.warnings);
  }
  // Status shows it as with a readable state.
  const json s = blocked.service().handle(
      {{"v", 1}, {"id", "s"}, {"method", "status"}, {"params", json::object()}},
      service::Caller{0, true});
  ASSERT_EQ(s["result"]["quarantined_hosts"].size(), 1u) << s.dump();
  EXPECT_EQ(s["result"]["quarantined_hosts"][0]["tenant"], "A");
  EXPECT_EQ(s["result"]["quarantined_hosts"][0]["seen"]["guid"], "0x000000000000dead");
}

}  // namespace
}  // namespace laas::core
// Tenants dropped from tenants.yaml while OpenSM was down used to stay for ever: the file was
// compared with an in-memory list that is empty at startup.
TEST(PluginEngine, TenantsDroppedFromTheFileWhileDownAreReleasedAtStart) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  const Guid sm = fabric.nodes[emb.switch_node[1][0]].port_guid;
  dir.write("tenants.yaml", "- name: A\n  hosts: 4\n- name: B\n  hosts: 4\n");
  {
    Controller engine(config_in(dir), quiet());
    ASSERT_TRUE(routed(engine, fabric, sm).ok);
    // C comes through the socket: the file does not own it.
    const json r =
        engine.service().handle({{"v", 1},
                                 {"method", "tenant.add"},
                                 {"params", {{"name", "C"}, {"hosts", 2}, {"wait", false}}}},
                                {0, true});
    ASSERT_TRUE(r["ok"]) << r.dump();
  }
  dir.write("tenants.yaml", "- name: A\n  hosts: 4\n");  // B dropped while "down"
  Controller restarted(config_in(dir), quiet());
  auto out = routed(restarted, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  for (const auto& w : out.warnings) ADD_FAILURE() << w;
  auto names = restarted.service().tenant_names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"A", "C"}));
  // A tenant the file listed but that was removed through the socket is no warning later.
  ASSERT_TRUE(restarted.service().handle(
      {{"v", 1}, {"method", "tenant.remove"}, {"params", {{"name", "A"}, {"wait", false}}}},
      {0, true})["ok"]);
  dir.write("tenants.yaml", "[]\n");
  out = routed(restarted, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  for (const auto& w : out.warnings) ADD_FAILURE() << w;
}

namespace {

json call(Controller& engine, const std::string& method) {
  const json r = engine.service().handle({{"v", 1}, {"method", method}}, {0, true});
  return r.value("result", json::object());
}

void add_loop_cable(topology::Fabric& f, int node) {
  const int spare = static_cast<int>(f.nodes[node].ports.size());
  f.nodes[node].ports.resize(spare + 2);
  f.connect(node, spare, node, spare + 1);
}

}  // namespace

// While tenants exist, a fabric that cannot be recognized keeps the last good tables
// (and says why); the state made unreadable routes the tenants last routed; both recover.
TEST(PluginEngine, FailsClosedWhileTenantsExistAndRecovers) {
  TwoTenants lab;
  auto& [dir, tree, fabric, emb, sm] = lab;
  Controller engine(config_in(dir), quiet());
  const auto good = routed(engine, fabric, sm);
  ASSERT_TRUE(good.ok) << good.error;
  EXPECT_TRUE(good.fail_closed.empty());

  topology::Fabric looped = fabric;
  add_loop_cable(looped, emb.switch_node[0][3]);
  auto out = routed(engine, looped, sm);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_NE(out.fail_closed.find("loop cable"), std::string::npos) << out.fail_closed;
  EXPECT_EQ(out.tables, good.tables);
  EXPECT_NE(call(engine, "status")["fail_closed"].get<std::string>().find("not recognized"),
            std::string::npos);
  EXPECT_NE(call(engine, "metrics")["text"].get<std::string>().find("laas_fail_closed 1"),
            std::string::npos);
  EXPECT_THROW(engine.audit(looped, out.tables, sm), std::runtime_error);

  out = routed(engine, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_TRUE(out.fail_closed.empty());
  EXPECT_EQ(out.tables, good.tables);
  EXPECT_FALSE(call(engine, "status").contains("fail_closed"));
  EXPECT_NE(call(engine, "metrics")["text"].get<std::string>().find("laas_fail_closed 0"),
            std::string::npos);
  EXPECT_EQ(engine.audit(fabric, out.tables, sm)["violations"], 0);

  // A restart on an unreadable state: the tenants of allocations.json are routed as before.
  const std::string state = dir.path + "/state.json";
  std::rename(state.c_str(), (state + ".good").c_str());
  dir.write("state.json", "{ truncated");
  Controller restarted(config_in(dir), quiet());
  out = routed(restarted, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_NE(out.fail_closed.find("tenant state cannot be read"), std::string::npos)
      << out.fail_closed;
  EXPECT_EQ(out.tables, good.tables);
  const auto report = restarted.audit(fabric, out.tables, sm);
  EXPECT_GT(report["violations"].get<long>(), 0) << report.dump();
  EXPECT_TRUE(report.contains("fail_closed"));

  // Fail open, when the administrator chose it: the next engine routes.
  Config open = config_in(dir);
  open.fail_open = true;
  Controller opened(open, quiet());
  out = routed(opened, fabric, sm);
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.error.find("fail_open"), std::string::npos) << out.error;
  // Without tenants anywhere there is nothing to keep: the next engine routes.
  TempDir empty;
  Controller nothing(config_in(empty), quiet());
  out = routed(nothing, looped, sm);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.fail_closed.empty());
  // Unless the state must exist (a shared directory, unmounted at a failover): the switches
  // keep the tables the last master gave them, never the next engine's.
  Config shared = config_in(empty);
  shared.state_must_exist = true;
  Controller unmounted(shared, quiet());
  unmounted.service().set_role_provider([] {  // the plugin's: this SM is the master
    service::SmRole r;
    r.state = service::SmState::kMaster;
    return r;
  });
  out = routed(unmounted, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_NE(out.fail_closed.find("tenant state cannot be read"), std::string::npos)
      << out.fail_closed;
  // A restart on an unreadable state with allocations.json lost as well: closed, with no
  // tenant (before, the next engine routed the fabric open); once it has routed, a run that
  // finds both lost keeps what the switches hold.
  std::remove((dir.path + "/allocations.json").c_str());
  Controller lost(config_in(dir), quiet());
  out = routed(lost, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_FALSE(out.keep_switch_tables);
  EXPECT_NE(out.fail_closed.find("nothing records the tenants last routed"), std::string::npos)
      << out.fail_closed;
  out = routed(lost, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_TRUE(out.keep_switch_tables);
}

// A storage host on a spine is reached by every host over the spine's routes, and the
// tenants' own routes do not change.
TEST(PluginEngine, AttachedHostTakesItsSwitchRoutes) {
  TwoTenants lab;
  auto& [dir, tree, fabric, emb, sm] = lab;
  Config c = config_in(dir);
  c.shared_services = {0x5107};
  Controller engine(c, quiet());
  const auto before = routed(engine, fabric, sm);
  ASSERT_TRUE(before.ok) << before.error;
  const int spine = emb.switch_node[1][2];
  cable_adapter(fabric, 0x5106, "storage1", 200, spine, 11);
  const auto after = routed(engine, fabric, sm);
  ASSERT_TRUE(after.ok) << after.error;
  const topology::Lid spine_lid = fabric.lid_of(spine);
  for (size_t n = 0; n < fabric.nodes.size(); ++n) {
    if (!fabric.nodes[n].is_switch) continue;
    const auto& t = after.tables[n];
    ASSERT_GT(t.size(), 200u);
    EXPECT_EQ(t[200], static_cast<int>(n) == spine ? 11 : t[spine_lid]) << n;
    // Every other entry is as it was.
    EXPECT_TRUE(std::equal(before.tables[n].begin(), before.tables[n].end(), t.begin()));
  }
  const auto report = engine.audit(fabric, after.tables, sm);
  EXPECT_EQ(report["violations"], 0) << report.dump();
  EXPECT_EQ(report["figures"]["attached_hosts"], 1);
  EXPECT_EQ(report["figures"]["attached_pairs"], report["figures"]["attached_pairs_delivered"]);
  // The audit catches a leaf that sends its tenants' traffic to the storage host up the link
  // another tenant holds (leaf 1 holds A and B; its link to spine 2 is B's), and a leaf with no
  // route to it.
  auto tampered = after.tables;
  const int leaf1 = emb.switch_node[0][1];
  tampered[leaf1][200] = static_cast<std::uint8_t>(emb.port_map[0][1][tree.up_port(1, 2)]);
  auto bad = engine.audit(fabric, tampered, sm);
  EXPECT_GT(bad["counts"].value("attached-host-route-crosses-tenant", 0), 0) << bad.dump();
  tampered = after.tables;
  tampered[emb.switch_node[0][0]][200] = 0xFF;
  bad = engine.audit(fabric, tampered, sm);
  EXPECT_GT(bad["counts"].value("attached-host-unreachable", 0), 0) << bad.dump();
}

// An adapter cabled to a spare port that nobody listed is a free host: only the management
// sources' way to its switch routes it (every tenant's packet to it dies at the tenant's leaf or
// at the first-hop drop), and its own packets die at its switch. Listed in shared_services, the
// same adapter is routed from everywhere.
TEST(PluginEngine, AnUnlistedAdapterOnASparePortIsAFreeHost) {
  TwoTenants lab;
  auto& [dir, tree, fabric, emb, sm] = lab;
  Controller engine(config_in(dir), quiet());
  const auto before = routed(engine, fabric, sm);
  ASSERT_TRUE(before.ok) << before.error;
  const int leaf0 = emb.switch_node[0][0], spine2 = emb.switch_node[1][2];
  const int leaf_port = static_cast<int>(fabric.nodes[leaf0].ports.size());
  cable_adapter(fabric, 0x7100, "rogue-leaf", 201, leaf0, leaf_port);
  cable_adapter(fabric, 0x7200, "rogue-spine", 202, spine2, 11);
  const auto after = routed(engine, fabric, sm);
  ASSERT_TRUE(after.ok) << after.error;
  const topology::Lid spine2_lid = fabric.lid_of(spine2);
  for (size_t n = 0; n < fabric.nodes.size(); ++n) {
    if (!fabric.nodes[n].is_switch) continue;
    const auto& t = after.tables[n];
    ASSERT_GT(t.size(), 202u);
    EXPECT_TRUE(std::equal(before.tables[n].begin(), before.tables[n].end(), t.begin())) << n;
    const bool leaf = emb.node_model[n].first == 1;
    // The SM is on spine 0: spines carry it down, leaves other than the adapter's own have none.
    const int expect201 = static_cast<int>(n) == leaf0 ? leaf_port
                          : leaf                       ? routing::kNoRoute
                                                       : t[201];
    const int expect202 = static_cast<int>(n) == spine2 ? 11 : leaf ? routing::kNoRoute : t[202];
    EXPECT_EQ(t[201], expect201) << fabric.nodes[n].name;
    EXPECT_EQ(t[202], expect202) << fabric.nodes[n].name;
    // (The SM reaches the adapter on another spine only by directed route: a leaf between
    // them would let its hosts follow the entry.)
    if (static_cast<int>(n) == emb.switch_node[1][0]) {
      EXPECT_NE(t[201], routing::kNoRoute);
    }
  }
  auto report = engine.audit(fabric, after.tables, sm, &after.sl2vl);
  EXPECT_EQ(report["violations"], 0) << report.dump();
  EXPECT_EQ(report["figures"]["unlisted_attached_hosts"], 2) << report.dump();
  EXPECT_GT(report["figures"]["unlisted_attached_pairs"], 0);
  EXPECT_EQ(report["figures"]["unlisted_attached_pairs"],
            report["figures"]["unlisted_attached_pairs_refused"]);
  // The audit catches a tenant's leaf that routes the adapter (as before this change every
  // switch did), and a first-hop drop missing at the adapter's own port.
  auto tampered = after.tables;
  const int leaf1 = emb.switch_node[0][1];
  tampered[leaf1][201] = tampered[leaf1][fabric.lid_of(leaf0)];
  auto bad = engine.audit(fabric, tampered, sm, &after.sl2vl);
  EXPECT_GT(bad["counts"].value("unlisted-attached-host-reachable", 0), 0) << bad.dump();
  auto open_sl2vl = after.sl2vl;
  for (int o = 0; o < open_sl2vl.ports[leaf0]; ++o) open_sl2vl.set(leaf0, leaf_port, o, 0);
  bad = engine.audit(fabric, after.tables, sm, &open_sl2vl);
  EXPECT_GT(bad["counts"].value("unlisted-attached-host-reachable", 0), 0) << bad.dump();
  // Listed by the administrator, the spine's adapter is routed from every switch.
  Config c = config_in(dir);
  c.shared_services = {0x7201};
  Controller listed(c, quiet());
  const auto shared = routed(listed, fabric, sm);
  ASSERT_TRUE(shared.ok) << shared.error;
  for (size_t n = 0; n < fabric.nodes.size(); ++n) {
    if (fabric.nodes[n].is_switch && static_cast<int>(n) != spine2) {
      EXPECT_EQ(shared.tables[n][202], shared.tables[n][spine2_lid]) << fabric.nodes[n].name;
    }
  }
  report = listed.audit(fabric, shared.tables, sm, &shared.sl2vl);
  EXPECT_EQ(report["violations"], 0) << report.dump();
}

// Staged build-out: a leaf (partly populated) and a spine cabled to a running fabric
// with tenants. Named to sort first, they still take the last model indices; the recorded tree
// grows, layout.json is re-recorded, and every switch of the old tree keeps its entries for
// the tenants' hosts bit for bit; the new leaf's hosts are placeable.
TEST(PluginEngine, AGrownTreeKeepsTenantsTablesBitIdentical) {
  for (const bool sm_on_host : {false, true}) {
    SCOPED_TRACE(sm_on_host ? "SM on a host" : "SM on a spine");
    TempDir dir;
    const auto big = topology::FatTree::parse("xgft(2;4,5;1,5)");
    auto [full, emb] = topology::build_model_fabric(big);
    const int new_leaf = emb.switch_node[0][4], new_spine = emb.switch_node[1][4];
    full.nodes[new_leaf].name = "A-new-leaf";
    full.nodes[new_spine].name = "A-new-spine";
    // The new leaf's last slot stays empty: a partly populated leaf is growth too.
    topology::Fabric grown = full;
    disconnect(grown, new_leaf, big.down_port(1, 3, 0));
    topology::Fabric before = grown;
    for (int node : {new_leaf, new_spine})
      for (size_t p = 1; p < before.nodes[node].ports.size(); ++p)
        if (before.nodes[node].ports[p].peer_node >= 0)
          disconnect(before, node, static_cast<int>(p));
    const Guid sm = sm_on_host ? full.nodes[emb.host_node[0]].port_guid
                               : full.nodes[emb.switch_node[1][0]].port_guid;
    dir.write("tenants.yaml",
              "- name: A\n  hosts: 6\n- name: B\n  hosts: 5\n- name: C\n  hosts: 3\n");
    Controller engine(config_in(dir), quiet());
    auto out = routed(engine, before, sm);
    ASSERT_TRUE(out.ok) << out.error;
    const auto old_layout = topology::parse_layout([&] {
      std::ifstream in(dir.path + "/layout.json");
      std::stringstream s;
      s << in.rdbuf();
      return s.str();
    }());
    EXPECT_EQ(old_layout.spec, "xgft(2;4,4;1,4)");
    const auto a0 = load_allocations(dir.path + "/allocations.json");
    ASSERT_EQ(a0->tenants.size(), 3u);
    const auto tables0 = out.tables;

    out = routed(engine, grown, sm);
    ASSERT_TRUE(out.ok) << out.error;
    bool logged = false;
    for (const auto& line : out.info)
      logged = logged || line.find(
                             "grew the intended tree from xgft(2;4,4;1,4) to "
                             "xgft(2;4,5;1,5): +1 leaf, +1 spine") == 0;
    EXPECT_TRUE(logged) << ::testing::PrintToString(out.info);
    std::ifstream in(dir.path + "/layout.json");
    std::stringstream text;
    text << in.rdbuf();
    const auto layout = topology::parse_layout(text.str());
    EXPECT_EQ(layout.spec, "xgft(2;4,5;1,5)");
    EXPECT_EQ(layout.switches[0][4].guid, full.nodes[new_leaf].guid);  // last, not first
    EXPECT_EQ(layout.switches[1][4].guid, full.nodes[new_spine].guid);
    for (int l = 0; l < 2; ++l)
      for (int i = 0; i < 4; ++i)
        EXPECT_EQ(layout.switches[l][i].guid, old_layout.switches[l][i].guid);
    const auto a1 = load_allocations(dir.path + "/allocations.json");
    for (const auto& [name, t] : a0->tenants)
      EXPECT_EQ(to_json(Allocations{"", 0, {}, {{name, a1->tenants.at(name)}}}),
                to_json(Allocations{"", 0, {}, {{name, t}}}));
    // Every switch of the old tree: its entries for every tenant host's LID.
    long compared = 0, differ = 0;
    for (const auto& [name, t] : a0->tenants)
      for (const auto& h : t.hosts)
        for (size_t n = 0; n < before.nodes.size(); ++n) {
          if (!before.nodes[n].is_switch || tables0[n].empty()) continue;
          ++compared;
          if (out.tables[n].at(h.lid) != tables0[n].at(h.lid)) {
            ++differ;
            ADD_FAILURE() << before.nodes[n].name << " LID " << h.lid << ": "
                          << int(tables0[n][h.lid]) << " -> " << int(out.tables[n][h.lid]);
          }
        }
    std::cout << "[ figures  ] " << (sm_on_host ? "SM on a host: " : "SM on a spine: ") << compared
              << " LFT entries of 8 old switches for 14 tenant hosts compared, " << differ
              << " differ\n";
    EXPECT_GT(compared, 14 * 8 - 1);
    EXPECT_EQ(differ, 0);
    for (const auto& w : out.warnings) ADD_FAILURE() << w;
    const auto audit = engine.audit(grown, out.tables, sm, &out.sl2vl);
    EXPECT_EQ(audit["violations"].get<long>(), 0) << audit.dump(1);
    EXPECT_EQ(audit["topology"], "xgft(2;4,5;1,5)");

    // The new capacity: a tenant on the new leaf's three hosts.
    std::string names;
    for (int slot = 0; slot < 3; ++slot)
      names += (slot ? ", " : "") + full.nodes[emb.host_node[big.host_at(4, slot)]].name;
    dir.write("tenants.yaml",
              "- name: A\n  hosts: 6\n- name: B\n  hosts: 5\n- name: C\n  hosts: 3\n"
              "- name: D\n  hosts: [" +
                  names + "]\n");
    out = routed(engine, grown, sm);
    ASSERT_TRUE(out.ok) << out.error;
    const auto a2 = load_allocations(dir.path + "/allocations.json");
    ASSERT_EQ(a2->tenants.count("D"), 1u) << ::testing::PrintToString(out.warnings);
    EXPECT_EQ(a2->tenants.at("D").hosts.size(), 3u);
  }
}

// An empty or cut-off tenants.yaml never removes the tenants it listed: only `[]` does.
TEST(PluginEngine, AnEmptyOrCutOffTenantsFileRemovesNobody) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  const Guid sm = fabric.nodes[emb.switch_node[1][0]].port_guid;
  dir.write("tenants.yaml", "- name: A\n  hosts: 4\n- name: B\n  hosts: 4\n");
  Controller engine(config_in(dir), quiet());
  ASSERT_TRUE(routed(engine, fabric, sm).ok);
  auto names = [&] {
    auto n = engine.service().tenant_names();
    std::sort(n.begin(), n.end());
    return n;
  };
  ASSERT_EQ(names(), (std::vector<std::string>{"A", "B"}));
  for (const char* text : {"", "\n  \n", "- name: A\n  hosts: 4"}) {
    SCOPED_TRACE(text);
    dir.write("tenants.yaml.new", text);
    std::rename((dir.path + "/tenants.yaml.new").c_str(), (dir.path + "/tenants.yaml").c_str());
    auto out = routed(engine, fabric, sm);
    ASSERT_TRUE(out.ok) << out.error;
    EXPECT_EQ(names(), (std::vector<std::string>{"A", "B"}));
    bool said = false;
    for (const auto& w : out.warnings) said |= w.find("tenants file ignored") != std::string::npos;
    EXPECT_TRUE(said) << "no warning for a suspicious tenants file";
  }
  dir.write("tenants.yaml", "[]\n");
  ASSERT_TRUE(routed(engine, fabric, sm).ok);
  EXPECT_TRUE(names().empty());
}

// A tenants.yaml that is gone (removed, an NFS server that lost it) or cannot be read (EACCES,
// EIO, ESTALE; a directory in its place stands for them, as root reads a mode-000 file) is no
// list at all: the tenants it listed stay, the run and `laasctl status` say why.
TEST(PluginEngine, AMissingOrUnreadableTenantsFileRemovesNobody) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  const Guid sm = fabric.nodes[emb.switch_node[1][0]].port_guid;
  const std::string file = dir.path + "/tenants.yaml";
  dir.write("tenants.yaml", "- name: A\n  hosts: 4\n- name: B\n  hosts: 4\n");
  Controller engine(config_in(dir), quiet());
  ASSERT_TRUE(routed(engine, fabric, sm).ok);
  auto names = [&] {
    auto n = engine.service().tenant_names();
    std::sort(n.begin(), n.end());
    return n;
  };
  ASSERT_EQ(names(), (std::vector<std::string>{"A", "B"}));
  auto status = [&] {
    return engine.service().handle(
        {{"v", 1}, {"id", "s"}, {"method", "status"}, {"params", json::object()}},
        service::Caller{0, true});
  };
  for (const char* how : {"removed", "a directory"}) {
    SCOPED_TRACE(how);
    std::filesystem::remove_all(file);
    if (std::string(how) == "a directory") std::filesystem::create_directory(file);
    auto out = routed(engine, fabric, sm);
    ASSERT_TRUE(out.ok) << out.error;
    EXPECT_EQ(names(), (std::vector<std::string>{"A", "B"}));
    std::string said;
    for (const auto& w : out.warnings)
      if (w.find("tenants file ignored") != std::string::npos) said = w;
    EXPECT_NE(said.find("2 tenant(s) it listed are kept"), std::string::npos)
        << ::testing::PrintToString(out.warnings);
    const json s = status();
    EXPECT_NE(s["result"].value("tenants_file", "").find("tenants file ignored"), std::string::npos)
        << s.dump();
  }
  // Readable again: read as written, and status no longer names it.
  std::filesystem::remove_all(file);
  dir.write("tenants.yaml", "- name: A\n  hosts: 4\n");
  ASSERT_TRUE(routed(engine, fabric, sm).ok);
  EXPECT_EQ(names(), (std::vector<std::string>{"A"}));
  EXPECT_FALSE(status()["result"].contains("tenants_file"));
  // A fabric whose file never listed a tenant has nothing to keep: no file is no warning.
  TempDir fresh;
  Controller quiet_engine(config_in(fresh), quiet());
  auto out = routed(quiet_engine, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  for (const auto& w : out.warnings) EXPECT_EQ(w.find("tenants file"), std::string::npos) << w;
}

// A host's root writes its node description: naming itself after a management host ("comp-1
// mlx5_1") must not make it part of that host's server, hence management. Only the other ports
// of the management port's own adapter (CA node GUID) are.
TEST(PluginEngine, ADescriptionNeverMakesAHostManagement) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  const Guid sm = fabric.nodes[emb.switch_node[1][0]].port_guid;
  Config config = config_in(dir);
  const int mgmt_node = emb.host_node[0];
  config.management = {fabric.nodes[mgmt_node].port_guid};
  const int impostor = emb.host_node[9];
  fabric.nodes[impostor].name = fabric.nodes[mgmt_node].name + " mlx5_1";
  Controller engine(config, quiet());
  const auto out = routed(engine, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  const auto alloc = load_allocations(config.allocations_file());
  ASSERT_TRUE(alloc);
  std::vector<Guid> mgmt;
  for (const auto& m : alloc->management) mgmt.push_back(m.guid);
  EXPECT_EQ(mgmt, std::vector<Guid>{fabric.nodes[mgmt_node].port_guid});
}

// `laasctl audit` runs Controller::audit on a control socket thread while OpenSM's sweeper routes:
// every run here re-records layout.json (another machine in a free slot) or takes the state over
// again (another SM wrote state.json) and so re-reads it, under audits and multicast trees
// built from other threads. The layout they read must never be the one being replaced
// (ThreadSanitizer's build runs this test).
TEST(PluginEngine, AuditsAndMulticastTreesWhileRoutingReRecordsTheLayout) {
  TwoTenants lab;
  // Named references, not a structured binding: the threads below capture them (C++17 lambdas
  // cannot capture a binding, and clang refuses to).
  auto& dir = lab.dir;
  auto& fabric = lab.fabric;
  auto& emb = lab.emb;
  const auto sm = lab.sm;
  Controller engine(config_in(dir), quiet());
  engine.service().set_role_provider([] {  // the plugin's: this SM is the master
    service::SmRole r;
    r.state = service::SmState::kMaster;
    return r;
  });
  const auto first = routed(engine, fabric, sm);
  ASSERT_TRUE(first.ok) << first.error;
  const std::vector<Guid> members = {fabric.nodes[emb.host_node[0]].port_guid,
                                     fabric.nodes[emb.host_node[1]].port_guid};
  std::atomic<bool> done{false};
  std::atomic<int> audits{0}, trees{0}, failures{0};
  std::thread auditor([&] {
    while (!done) {
      try {
        const auto report = engine.audit(fabric, first.tables, sm, &first.sl2vl);
        if (report["tenants"] != 2) ++failures;
      } catch (const std::exception&) {
        ++failures;
      }
      ++audits;
    }
  });
  std::thread multicast([&] {
    while (!done) {
      if (!engine.multicast_tree(members, 0xC001).ok) ++failures;
      ++trees;
      std::this_thread::yield();
    }
  });
  const std::string state = dir.path + "/state.json";
  for (int run = 0; run < 12 || audits < 3; ++run) {
    topology::Fabric renamed = fabric;
    // Another machine in a free slot (a new port GUID): its name is recorded with it. (A name
    // alone would not be: a port keeps the name it was first seen with.)
    renamed.nodes[emb.host_node[31]].name = "spare-" + std::to_string(run);
    renamed.nodes[emb.host_node[31]].port_guid = 0x5ba7e00000ULL + static_cast<Guid>(run);
    if (run % 3 == 2) {  // another SM's write: taken over again, layout.json read back
      std::ifstream in(state);
      std::stringstream text;
      text << in.rdbuf();
      dir.write("state.json.other", text.str());
      std::rename((state + ".other").c_str(), state.c_str());
    }
    const auto out = routed(engine, renamed, sm);
    if (!out.ok || out.tables != first.tables) {  // (no ASSERT: the threads must be joined)
      ADD_FAILURE() << "run " << run << ": " << out.error;
      break;
    }
    EXPECT_EQ(out.took_over, run % 3 == 2) << run;
    std::ifstream layout(dir.path + "/layout.json");
    std::stringstream recorded;
    recorded << layout.rdbuf();
    EXPECT_NE(recorded.str().find("\"spare-" + std::to_string(run) + "\""), std::string::npos)
        << run;
    if (run > 200) break;  // audits that never finish fail below
  }
  done = true;
  auditor.join();
  multicast.join();
  EXPECT_GE(audits, 3);
  EXPECT_GT(trees, 0);
  EXPECT_EQ(failures, 0);
}

// A wrong value never means defaults: every problem is listed with its line, the valid keys
// still apply, and a host name where a privilege is granted is one of the problems.
TEST(PluginConfig, EveryProblemIsListedWithItsLine) {
  TempDir dir;
  dir.write("laas.yaml",
            "placer: bogus\n"
            "routing_threads: many\n"
            "management: [comp-1, 0x1234]\n"
            "free_pool: open\n"
            "[a]: 1\n");
  const Config c = check_config(dir.path + "/laas.yaml");
  ASSERT_EQ(c.problems.size(), 4u);
  EXPECT_NE(c.problems[0].find("laas.yaml:1: key 'placer'"), std::string::npos) << c.problems[0];
  EXPECT_NE(c.problems[1].find("laas.yaml:2: key 'routing_threads'"), std::string::npos);
  EXPECT_NE(c.problems[2].find("laas.yaml:3: key 'management': 'comp-1' is not a port GUID"),
            std::string::npos)
      << c.problems[2];
  EXPECT_NE(c.problems[3].find("laas.yaml:5: a key must be a plain name"), std::string::npos);
  EXPECT_EQ(c.management, std::vector<std::uint64_t>{0x1234});
  EXPECT_TRUE(c.free_pool_open);
  EXPECT_THROW(load_config(dir.path + "/laas.yaml"), std::runtime_error);
}

// laas-api's api: section: read into Config::api; its problems are listed apart (file, line,
// api.KEY) and never among the plugin's, which would make it route closed.
TEST(PluginConfig, ApiSectionIsLaasApisAlone) {
  TempDir dir;
  dir.write("laas.yaml",
            "socket: /run/x.sock\n"
            "api:\n"
            "  listen: 0.0.0.0:8443\n"
            "  cert: /etc/laas/api/server.crt\n"
            "  key: /etc/laas/api/server.key\n"
            "  client_ca: /etc/laas/api/client-ca.crt\n"
            "  writers: [ops, provisioning]\n"
            "  readers: [monitor]\n"
            "  threads: 4\n"
            "  max_connections: 32\n");
  const Config c = load_config(dir.path + "/laas.yaml");
  EXPECT_TRUE(c.api_problems.empty());
  EXPECT_EQ(c.api.listen, "0.0.0.0:8443");
  EXPECT_EQ(c.api.key, "/etc/laas/api/server.key");
  EXPECT_EQ(c.api.writers, (std::vector<std::string>{"ops", "provisioning"}));
  EXPECT_EQ(c.api.readers, std::vector<std::string>{"monitor"});
  EXPECT_EQ(c.api.threads, 4);
  EXPECT_EQ(c.api.max_connections, 32);
  dir.write("bad.yaml",
            "state_dir: /x\n"
            "api:\n"
            "  listen: 8443\n"
            "  cert: server.crt\n"
            "  writers: ops\n"
            "  threads: 0\n"
            "  colour: red\n");
  const Config b = load_config(dir.path + "/bad.yaml");  // the plugin's part is fine
  ASSERT_EQ(b.api_problems.size(), 5u);
  EXPECT_NE(b.api_problems[0].find("bad.yaml:3: key 'api.listen'"), std::string::npos)
      << b.api_problems[0];
  EXPECT_NE(b.api_problems[1].find("bad.yaml:4: key 'api.cert': must be an absolute path"),
            std::string::npos)
      << b.api_problems[1];
  EXPECT_NE(b.api_problems[2].find("bad.yaml:5: key 'api.writers'"), std::string::npos);
  EXPECT_NE(b.api_problems[3].find("bad.yaml:6: key 'api.threads'"), std::string::npos);
  EXPECT_NE(b.api_problems[4].find("bad.yaml:7: key 'api.colour': unknown key"), std::string::npos);
  dir.write("port.yaml", "api:\n  listen: \"[::]:99999\"\n");
  const Config p = check_config(dir.path + "/port.yaml");
  ASSERT_EQ(p.api_problems.size(), 1u);
  EXPECT_NE(p.api_problems[0].find("1-65535"), std::string::npos) << p.api_problems[0];
  EXPECT_TRUE(p.problems.empty());
  dir.write("notmap.yaml", "api: [1]\n");
  EXPECT_EQ(check_config(dir.path + "/notmap.yaml").api_problems.size(), 1u);
}

// A file that cannot be read as a whole -- cut to zero by a full disk, only comments, a YAML
// syntax error, unreadable, not a mapping -- is no configuration at all: a problem, and its
// state_dir (the built-in default) is a guess. So is a wrong state_dir key; other wrong keys
// leave the state directory known.
TEST(PluginConfig, AFileThatCannotBeReadAsAWholeIsNoConfiguration) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> whole = {
      {"empty", ""},
      {"comments", "# state_dir: /srv/laas\n\n"},
      {"syntax", "state_dir: /srv/laas\nplacer: [laas\n"},
      {"list", "- state_dir\n"},
      {"bad_state_dir", "state_dir: srv/laas\nplacer: simple\n"}};
  for (const auto& [name, text] : whole) {
    SCOPED_TRACE(name);
    dir.write(name + ".yaml", text);
    const Config c = check_config(dir.path + "/" + name + ".yaml");
    EXPECT_FALSE(c.problems.empty());
    EXPECT_TRUE(c.state_dir_unknown);
    EXPECT_THROW(load_config(dir.path + "/" + name + ".yaml"), std::runtime_error);
  }
  // Unreadable: a directory in its place (root reads a mode-000 file).
  std::filesystem::create_directory(dir.path + "/dir.yaml");
  const Config unreadable = check_config(dir.path + "/dir.yaml");
  EXPECT_FALSE(unreadable.problems.empty());
  EXPECT_TRUE(unreadable.state_dir_unknown);
  EXPECT_TRUE(check_config(dir.path + "/absent.yaml").state_dir_unknown);
  const Config empty = check_config(dir.path + "/empty.yaml");
  ASSERT_EQ(empty.problems.size(), 1u);
  EXPECT_NE(empty.problems[0].find("holds no key"), std::string::npos) << empty.problems[0];
  EXPECT_NE(empty.problems[0].find("nothing is read from the default one (/var/lib/laas)"),
            std::string::npos)
      << empty.problems[0];
  // A wrong key elsewhere: a problem, the state directory as written.
  dir.write("key.yaml", "state_dir: /srv/laas\nplacer: bogus\n");
  const Config key = check_config(dir.path + "/key.yaml");
  EXPECT_EQ(key.problems.size(), 1u);
  EXPECT_FALSE(key.state_dir_unknown);
  EXPECT_EQ(key.state_dir, "/srv/laas");
  // No event_plugin_options at all: the defaults, on purpose.
  EXPECT_FALSE(check_config("").state_dir_unknown);
  EXPECT_TRUE(check_config("").problems.empty());
}

// With laas.yaml unreadable as a whole the state directory is a guess: nothing in it is read
// (state.json, allocations.json, layout.json, tables.bin, tenants.yaml) or written, every host
// is routed as a free host, and status and the metrics say why.
TEST(PluginEngine, AGuessedStateDirectoryIsNeitherReadNorWritten) {
  TwoTenants t;
  {
    Controller engine(config_in(t.dir), quiet());
    ASSERT_TRUE(routed(engine, t.fabric, t.sm).ok);
    ASSERT_EQ(engine.service().tenant_names().size(), 2u);
  }
  auto listing = [&] {
    std::map<std::string, std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(t.dir.path)) {
      std::ifstream in(e.path());
      files[e.path().filename()] = std::string(std::istreambuf_iterator<char>(in), {});
    }
    return files;
  };
  const auto before = listing();
  ASSERT_TRUE(before.count("state.json") && before.count("allocations.json"));
  Config c = config_in(t.dir);  // the "default" the guess would land on
  c.problems = {"/etc/laas/laas.yaml: holds no key"};
  c.state_dir_unknown = true;
  Controller engine(c, quiet());
  EXPECT_TRUE(engine.service().tenant_names().empty());
  for (int run = 0; run < 2; ++run) {
    auto out = routed(engine, t.fabric, t.sm);
    ASSERT_TRUE(out.ok) << out.error;
    EXPECT_FALSE(out.saved_tables);
    EXPECT_TRUE(engine.service().snapshot().tenants.empty());
  }
  std::string why;
  EXPECT_FALSE(engine.sent_tables(&why));
  EXPECT_EQ(listing(), before);
  const json s = engine.service().handle(
      {{"v", 1}, {"id", "s"}, {"method", "status"}, {"params", json::object()}},
      service::Caller{0, true});
  EXPECT_NE(s["result"].value("blocked", "").find("the state directory is not known"),
            std::string::npos)
      << s.dump();
  EXPECT_TRUE(s["result"].contains("config_error")) << s.dump();
  const json m = engine.service().handle(
      {{"v", 1}, {"id", "m"}, {"method", "metrics"}, {"params", json::object()}},
      service::Caller{0, true});
  const std::string text = m["result"]["text"];
  EXPECT_NE(text.find("laas_config_error 1"), std::string::npos);
  EXPECT_NE(text.find("laas_state_blocked 1"), std::string::npos);
  EXPECT_FALSE(engine.service()
                   .handle({{"v", 1},
                            {"id", "a"},
                            {"method", "tenant.add"},
                            {"params", {{"name", "x"}, {"hosts", 2}, {"wait", false}}}},
                           service::Caller{0, true})
                   .value("ok", true));
}

// Everything the plugin creates in the state directory, and the directory itself, is the
// directory group's to read and nobody else's (0640, 0750) -- whatever OpenSM's umask (0 here,
// so that a wider mode shows). tables.bin has its own test.
TEST(PluginEngine, EveryFileItCreatesIs0640AndEveryDirectory0750) {
  TempDir root;
  const std::string dir = root.path + "/state";
  const mode_t old = ::umask(0);
  {
    Config c;
    c.state_dir = dir;
    c.managed_partitions_file = root.path + "/partitions.conf";
    const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
    auto [fabric, emb] = topology::build_model_fabric(tree);
    const Guid sm = fabric.nodes[emb.switch_node[1][0]].port_guid;
    Controller engine(c, quiet());
    ASSERT_TRUE(routed(engine, fabric, sm).ok);
    std::ofstream(dir + "/tenants.yaml") << "- name: A\n  hosts: 4\n";
    ASSERT_TRUE(routed(engine, fabric, sm).ok);
    std::ofstream(dir + "/tenants.yaml") << "- name: B\n  hosts: 4\n";
    ASSERT_TRUE(routed(engine, fabric, sm).ok);
    ASSERT_TRUE(engine.wait_for_writes(std::chrono::seconds(10)));
    ASSERT_TRUE(engine.service().io().idle(std::chrono::seconds(10)));
  }
  ::umask(old);
  auto mode = [](const std::string& path) {
    struct stat st;
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode(dir), 0750u);
  std::set<std::string> seen;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (name == "tenants.yaml" || name == "tables.bin") continue;  // ours, and another test's
    seen.insert(name);
    EXPECT_EQ(mode(e.path()), 0640u) << name;
  }
  for (const char* f :
       {"state.json", "state.lock", "allocations.json", "layout.json", "tenants.yaml.applied"})
    EXPECT_TRUE(seen.count(f)) << f;
  EXPECT_EQ(mode(root.path + "/partitions.conf"), 0640u);
}

// laas-sdn's section: every key read, each wrong one a problem naming `sdn.KEY` and its line,
// the others kept; sdn_problems says what laas-sdn cannot run without.
TEST(PluginConfig, SdnSection) {
  TempDir dir;
  EXPECT_FALSE(load_config("").sdn.present);
  EXPECT_FALSE(load_config("").whole_leaves.has_value());
  EXPECT_EQ(sdn_problems(load_config("")).size(), 1u);
  dir.write("sdn.yaml",
            "state_dir: /x\nwhole_leaves: false\nsdn:\n  lfts_file: /run/laas/lfts\n"
            "  partitions_file: /run/laas/partitions.conf\n  reload: [kill, -HUP, '42']\n"
            "  discover_interval: 30\n");
  const Config c = load_config(dir.path + "/sdn.yaml");
  EXPECT_TRUE(c.sdn.present);
  EXPECT_EQ(c.sdn.lfts_file, "/run/laas/lfts");
  EXPECT_EQ(c.sdn.partitions_file, "/run/laas/partitions.conf");
  EXPECT_EQ(c.sdn.reload, (std::vector<std::string>{"kill", "-HUP", "42"}));
  EXPECT_EQ(c.sdn.discover_interval_s, 30);
  EXPECT_EQ(c.whole_leaves, std::optional<bool>(false));
  EXPECT_TRUE(sdn_problems(c).empty());
  dir.write("bad.yaml",
            "sdn:\n  lfts_file: lfts\n  reload: kill -HUP 42\n  discover_interval: -1\n"
            "  relaod: [x]\n  partitions_file: /p\n");
  const Config b = check_config(dir.path + "/bad.yaml");
  ASSERT_EQ(b.problems.size(), 4u);
  EXPECT_NE(b.problems[0].find("bad.yaml:2: key 'sdn.lfts_file': must be an absolute path"),
            std::string::npos)
      << b.problems[0];
  EXPECT_NE(b.problems[1].find("bad.yaml:3: key 'sdn.reload': expected a non-empty list"),
            std::string::npos)
      << b.problems[1];
  EXPECT_NE(b.problems[2].find("key 'sdn.discover_interval'"), std::string::npos);
  EXPECT_NE(b.problems[3].find("key 'sdn.relaod': unknown key"), std::string::npos);
  EXPECT_EQ(b.sdn.partitions_file, "/p");  // the good key is read
  EXPECT_EQ(b.sdn.discover_interval_s, 60);
  const auto missing = sdn_problems(b);
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0].rfind("sdn.lfts_file: required", 0), 0u) << missing[0];
  EXPECT_EQ(missing[1].rfind("sdn.reload: required", 0), 0u) << missing[1];
  dir.write("notmap.yaml", "sdn: [a]\n");
  const Config n = check_config(dir.path + "/notmap.yaml");
  ASSERT_EQ(n.problems.size(), 1u);
  EXPECT_NE(n.problems[0].find("key 'sdn': expected a mapping"), std::string::npos);
}

// How laas-sdn discovers: the ibnetdiscover program and its deadline (defaults: found on PATH,
// 60 s); a deadline out of range is a problem naming the key.
TEST(PluginConfig, SdnDiscoveryKeys) {
  TempDir dir;
  EXPECT_EQ(load_config("").sdn.ibnetdiscover, "");
  EXPECT_EQ(load_config("").sdn.discover_timeout_s, 60);
  dir.write("d.yaml",
            "sdn:\n  ibnetdiscover: /opt/diags/ibnetdiscover\n  discover_timeout: 5\n"
            "  ca: mlx5_1\n  port: 2\n");
  const Config c = load_config(dir.path + "/d.yaml");
  EXPECT_EQ(c.sdn.ibnetdiscover, "/opt/diags/ibnetdiscover");
  EXPECT_EQ(c.sdn.discover_timeout_s, 5);
  EXPECT_EQ(c.sdn.ca, "mlx5_1");
  EXPECT_EQ(c.sdn.port, 2);
  dir.write("bad.yaml", "sdn:\n  discover_timeout: 0\n");
  const Config b = check_config(dir.path + "/bad.yaml");
  ASSERT_EQ(b.problems.size(), 1u);
  EXPECT_NE(b.problems[0].find("bad.yaml:2: key 'sdn.discover_timeout': "), std::string::npos)
      << b.problems[0];
  EXPECT_EQ(b.sdn.discover_timeout_s, 60);
}
