// Servers with several ports (GPU servers' HCAs on rail leaves, dual-port HCAs) are
// the unit a tenant holds: the fabric is recognized, ports are grouped by server, a tenant gets
// whole servers, the same number from each rail group it uses.
#include "topology/servers.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "allocator/link_state.h"
#include "allocator/placer.h"
#include "check/checker.h"
#include "service/tenant_service.h"
#include "service/topology_view.h"
#include "temp_files.h"
#include "topology/ibnetdiscover.h"
#include "topology/netfile.h"
#include "topology/recognize.h"

using namespace laas;
using nlohmann::json;
using topology::HostId;

namespace {

topology::Fabric rail_fabric(const std::string& spec, int rails, bool dual_port) {
  const auto tree = topology::FatTree::parse(spec);
  std::ostringstream text;
  topology::write_netfile(tree, text, {rails, dual_port});
  std::istringstream in(text.str());
  return topology::read_ibnetdiscover(in, spec);
}

struct Recognized {
  topology::Fabric fabric;
  topology::Recognition rec;
  topology::Servers servers;
};

Recognized recognize_rails(const std::string& spec, int rails, bool dual_port) {
  Recognized r;
  r.fabric = rail_fabric(spec, rails, dual_port);
  r.rec = topology::recognize(r.fabric);
  if (!r.rec.ok()) return r;
  std::vector<std::string> names(r.rec.tree->num_hosts());
  std::vector<topology::Guid> cas(r.rec.tree->num_hosts());
  for (HostId h = 0; h < r.rec.tree->num_hosts(); ++h) {
    names[h] = r.fabric.nodes[r.rec.embedding.host_node[h]].name;
    cas[h] = r.fabric.nodes[r.rec.embedding.host_node[h]].ca_guid;
  }
  r.servers = topology::group_servers(*r.rec.tree, names, cas);
  return r;
}

// Servers whose ports do not all have one owner: the invariant a tenant of servers keeps.
std::vector<std::string> split_servers(const allocator::LinkState& state,
                                       const topology::Servers& servers) {
  std::vector<std::string> out;
  for (int s = 0; s < servers.count(); ++s) {
    std::set<allocator::TenantIndex> owners;
    for (HostId h : servers.ports[s]) owners.insert(state.host_owner(h));
    if (owners.size() > 1) out.push_back(servers.names[s]);
  }
  return out;
}

}  // namespace

TEST(Servers, NamesAreTheFirstWordOrTheAdministratorsMap) {
  EXPECT_EQ(topology::server_name("gpu017 mlx5_3"), "gpu017");
  EXPECT_EQ(topology::server_name("node07"), "node07");
  EXPECT_EQ(topology::server_name("  gpu1\tHCA-2"), "gpu1");
  EXPECT_EQ(topology::server_name(""), "");
  EXPECT_EQ(topology::server_name("stor-a mlx5_0", {{"stor-a", "storage"}}), "storage");
  EXPECT_EQ(topology::server_name("x mlx5_0", {{"x mlx5_0", "y"}}), "y");
}

TEST(Servers, ADualPortHcaFabricIsRecognizedAsOneServerPerHca) {
  // 8 servers, each one HCA with 2 cabled ports on two leaves (once refused whole).
  auto r = recognize_rails("xgft(2;8,2;1,4)", 2, true);
  ASSERT_TRUE(r.rec.ok()) << r.rec.error;
  EXPECT_EQ(r.rec.tree->num_hosts(), 16);
  ASSERT_EQ(r.servers.count(), 8);
  EXPECT_TRUE(r.servers.multi_port());
  std::set<topology::Guid> guids;
  for (int s = 0; s < 8; ++s) {
    ASSERT_EQ(r.servers.ports[s].size(), 2u) << r.servers.names[s];
    const auto& a = r.servers.ports[s][0];
    const auto& b = r.servers.ports[s][1];
    EXPECT_NE(r.rec.tree->leaf_of_host(a), r.rec.tree->leaf_of_host(b));
    for (HostId h : {a, b}) guids.insert(r.fabric.nodes[r.rec.embedding.host_node[h]].port_guid);
  }
  EXPECT_EQ(guids.size(), 16u);  // every port keeps its own port GUID
}

TEST(Servers, ARailOptimizedFabricGroupsEachServersHcas) {
  // 2 groups of 4 servers, 4 rails: leaf (g, r) takes HCA r of group g's servers.
  auto r = recognize_rails("xgft(2;4,8;1,4)", 4, false);
  ASSERT_TRUE(r.rec.ok()) << r.rec.error;
  ASSERT_EQ(r.servers.count(), 8);
  for (int s = 0; s < 8; ++s) {
    ASSERT_EQ(r.servers.ports[s].size(), 4u);
    std::set<int> leaves;
    for (HostId h : r.servers.ports[s]) leaves.insert(r.rec.tree->leaf_of_host(h));
    EXPECT_EQ(leaves.size(), 4u) << r.servers.names[s];
  }
}

TEST(Servers, HostsSharingAOneWordNameStayApart) {
  // A host's root sets its node description: three "comp-1" are three hosts, not a server.
  const auto tree = topology::FatTree::parse("xgft(2;4,2;1,2)");
  std::vector<std::string> names(8, "x");
  names[0] = names[5] = names[6] = "comp-1";
  const auto s = topology::group_servers(tree, names);
  EXPECT_EQ(s.count(), 8);
  EXPECT_FALSE(s.multi_port());
  EXPECT_EQ(s.find("comp-1"), -1);  // ambiguous
  // The administrator's map groups them.
  const auto mapped = topology::group_servers(tree, names, {}, {{"comp-1", "big"}});
  EXPECT_EQ(mapped.count(), 6);
  EXPECT_EQ(mapped.ports[mapped.find("big")].size(), 3u);
}

TEST(Servers, SinglePortFabricsHaveOneServerPerHost) {
  auto r = recognize_rails("xgft(2;4,8;1,4)", 1, false);
  ASSERT_TRUE(r.rec.ok());
  EXPECT_EQ(r.servers.count(), 32);
  EXPECT_FALSE(r.servers.multi_port());
}

TEST(PlaceServers, WholeServersTheSameNumberFromEachRailGroup) {
  auto r = recognize_rails("xgft(2;4,8;1,4)", 4, false);
  ASSERT_TRUE(r.rec.ok());
  allocator::LinkState state(*r.rec.tree);
  // 3 servers: one group, 3 ports on each of its 4 rail leaves.
  auto a = allocator::place_servers(state, r.servers.ports, 3);
  ASSERT_TRUE(a.placement) << a.reason;
  EXPECT_EQ(a.placement->hosts.size(), 12u);
  state.assign(0, *a.placement);
  EXPECT_TRUE(split_servers(state, r.servers).empty());
  // 2 more: the fullest group that fits is the other one (1 server is left in the first).
  auto b = allocator::place_servers(state, r.servers.ports, 2);
  ASSERT_TRUE(b.placement) << b.reason;
  state.assign(1, *b.placement);
  EXPECT_TRUE(split_servers(state, r.servers).empty());
  // 3 servers left (1 + 2): no group holds 3 and 3 groups of 1 do not exist, but per rail
  // 2 + 1 does (the remainder leaf's columns among the full leaf's).
  auto c = allocator::place_servers(state, r.servers.ports, 3);
  ASSERT_TRUE(c.placement) << c.reason;
  const auto rails = topology::rail_of_leaf(*r.rec.tree, r.servers);
  check::TenantView view{"c", c.placement->hosts, c.placement->links, true};
  view.leaf_rail = &rails;
  EXPECT_TRUE(check::check_tenant_shape(*r.rec.tree, view).empty());
  state.assign(2, *c.placement);
  EXPECT_TRUE(split_servers(state, r.servers).empty());
  auto d = allocator::place_servers(state, r.servers.ports, 1);
  EXPECT_FALSE(d.placement);
  EXPECT_NE(d.reason.find("only 0 whole servers of 4 port(s) are free"), std::string::npos)
      << d.reason;
  // Every leaf of a tenant holds the same number of its ports (Theorem 1 on every rail).
  for (const auto* p : {&*a.placement, &*b.placement}) {
    std::map<int, int> per_leaf;
    for (HostId h : p->hosts) ++per_leaf[r.rec.tree->leaf_of_host(h)];
    std::set<int> counts;
    for (const auto& [leaf, n] : per_leaf) counts.insert(n);
    EXPECT_EQ(counts.size(), 1u);
  }
}

TEST(PlaceServers, SpreadsOverGroupsWhenOneIsTooSmall) {
  auto r = recognize_rails("xgft(2;4,8;1,4)", 4, false);
  ASSERT_TRUE(r.rec.ok());
  allocator::LinkState state(*r.rec.tree);
  // 4 servers a group: Theorem 1 per rail, 4 + 2 (one full and one remainder leaf per rail).
  auto p = allocator::place_servers(state, r.servers.ports, 6);
  ASSERT_TRUE(p.placement) << p.reason;
  EXPECT_EQ(p.placement->hosts.size(), 24u);
  std::map<int, int> per_leaf;
  for (HostId h : p.placement->hosts) ++per_leaf[r.rec.tree->leaf_of_host(h)];
  EXPECT_EQ(per_leaf.size(), 8u);
  std::multiset<int> counts;
  for (const auto& [leaf, n] : per_leaf) counts.insert(n);
  EXPECT_EQ(counts, (std::multiset<int>{2, 2, 2, 2, 4, 4, 4, 4}));
  EXPECT_EQ(p.placement->shape.text(), "1x4+2 servers per leaf on each of 4 rails");
  // Legal rail by rail, and every port's leaf shares columns with every other's.
  const auto rails = topology::rail_of_leaf(*r.rec.tree, r.servers);
  check::TenantView view{"t", p.placement->hosts, p.placement->links, true};
  view.leaf_rail = &rails;
  EXPECT_TRUE(check::check_tenant_shape(*r.rec.tree, view).empty());
}

// What the equal-share rule could not place: 5 servers of groups of 4 (5 is prime, and no group
// holds 5). Per rail 4 + 1, and a tenant inside one group still gets up-links for its rails.
TEST(PlaceServers, RemainderPerRailAndUpLinksInsideOneGroup) {
  auto r = recognize_rails("xgft(2;4,8;1,4)", 4, false);
  ASSERT_TRUE(r.rec.ok());
  allocator::LinkState state(*r.rec.tree);
  const auto rails = topology::rail_of_leaf(*r.rec.tree, r.servers);
  auto legal = [&](const allocator::Placement& p) {
    check::TenantView view{"t", p.hosts, p.links, true};
    view.leaf_rail = &rails;
    return check::check_tenant_shape(*r.rec.tree, view);
  };
  auto five = allocator::place_servers(state, r.servers.ports, 5);
  ASSERT_TRUE(five.placement) << five.reason;
  EXPECT_EQ(five.placement->hosts.size(), 20u);
  EXPECT_TRUE(legal(*five.placement).empty());
  state.assign(0, *five.placement);
  auto two = allocator::place_servers(state, r.servers.ports, 2);
  ASSERT_TRUE(two.placement) << two.reason;
  std::set<int> leaves;
  for (HostId h : two.placement->hosts) leaves.insert(r.rec.tree->leaf_of_host(h));
  EXPECT_EQ(leaves.size(), 4u);                // one group, its 4 rails
  EXPECT_EQ(two.placement->links.size(), 8u);  // 2 columns on each rail leaf
  EXPECT_TRUE(legal(*two.placement).empty());
  EXPECT_TRUE(split_servers(state, r.servers).empty());
}

// A tenant that fits one rail group goes to the best-fitting group, and between groups equally
// free to the one in the fuller pod: a wholly free pod keeps its level-2 columns for tenants
// that span pods. Lowest index first would take group 0, in the emptier pod.
TEST(PlaceServers, OneGroupTenantsFillTheFullerPodFirst) {
  // 4 rails, 2 groups of 4 servers a pod, 3 pods.
  auto r = recognize_rails("xgft(3;4,8,3;1,4,8)", 4, false);
  ASSERT_TRUE(r.rec.ok());
  allocator::LinkState state(*r.rec.tree);
  const auto& tree = *r.rec.tree;
  auto place = [&](int tenant, int count) {
    auto p = allocator::place_servers(state, r.servers.ports, count);
    EXPECT_TRUE(p.placement) << p.reason;
    if (p.placement) state.assign(tenant, *p.placement);
    return p.placement.value_or(allocator::Placement{});
  };
  auto pod_of = [&](const allocator::Placement& p) {
    std::set<int> pods;
    for (HostId h : p.hosts) pods.insert(tree.pod_of_leaf(tree.leaf_of_host(h)));
    return pods;
  };
  // Groups 0-1 in pod 0, 2-3 in pod 1, 4-5 in pod 2.
  const auto first = place(0, 4);
  ASSERT_EQ(pod_of(first), std::set<int>{0});
  place(1, 2);  // group 1, pod 0
  place(2, 4);
  place(3, 4);
  place(4, 4);  // groups 2-4: pod 2 keeps one free group
  state.release(0, first);
  // Free: group 0 (4 servers, pod 0 with 6 free), group 1 (2), group 5 (4, pod 2 with 4 free).
  const auto next = place(5, 3);
  EXPECT_EQ(pod_of(next), std::set<int>{2});
  EXPECT_TRUE(split_servers(state, r.servers).empty());
}

// A mixed rail fabric: slot 3 of group 0's rail leaves holds four single-port storage hosts,
// not a GPU server. The rail placement takes only 4-port servers (the storage hosts are no
// rail group's), the partly populated group still serves tenants that fit it.
TEST(PlaceServers, MixedRailLeavesSinglePortHostsStayOutOfRailGroups) {
  auto r = recognize_rails("xgft(2;4,8;1,4)", 4, false);
  ASSERT_TRUE(r.rec.ok());
  auto& servers = r.servers;
  const int gpu3 = servers.find("srv3");
  ASSERT_GE(gpu3, 0);
  const auto ports = servers.ports[gpu3];
  ASSERT_EQ(ports.size(), 4u);
  servers.ports[gpu3] = {ports[0]};
  servers.names[gpu3] = "stor0";
  for (int i = 1; i < 4; ++i) {
    servers.names.push_back("stor" + std::to_string(i));
    servers.ports.push_back({ports[i]});
    servers.server_of[ports[i]] = servers.count() - 1;
  }
  const std::set<HostId> storage(ports.begin(), ports.end());
  const auto rails = topology::rail_of_leaf(*r.rec.tree, servers);
  allocator::LinkState state(*r.rec.tree);
  auto legal = [&](const allocator::Placement& p) {
    check::TenantView view{"t", p.hosts, p.links, true};
    view.leaf_rail = &rails;
    return check::check_tenant_shape(*r.rec.tree, view).empty();
  };
  int tenant = 0;
  for (int count : {4, 3, 1}) {
    auto p = allocator::place_servers(state, servers.ports, count);
    if (count == 1) {
      // The 7 GPU servers are held; the 4 free storage hosts are no GPU server. Refused.
      EXPECT_FALSE(p.placement);
      EXPECT_NE(p.reason.find("only 0 whole servers of 4 port(s) are free"), std::string::npos)
          << p.reason;
      continue;
    }
    ASSERT_TRUE(p.placement) << count << ": " << p.reason;
    EXPECT_EQ(p.placement->hosts.size(), 4u * count);
    for (HostId h : p.placement->hosts) EXPECT_FALSE(storage.count(h)) << "took a storage port";
    EXPECT_TRUE(legal(*p.placement));
    state.assign(tenant++, *p.placement);
  }
  EXPECT_TRUE(split_servers(state, servers).empty());
}

TEST(PlaceServers, TheSplitCheckCatchesAServerSplitBetweenTenants) {
  auto r = recognize_rails("xgft(2;8,2;1,4)", 2, true);
  ASSERT_TRUE(r.rec.ok());
  allocator::LinkState state(*r.rec.tree);
  // A per-port placement of 4 hosts on one leaf: the mlx5_0 half of 4 servers.
  allocator::Placement half;
  half.hosts = {r.servers.ports[0][0], r.servers.ports[1][0]};
  state.assign(0, half);
  EXPECT_EQ(split_servers(state, r.servers).size(), 2u);
}

namespace {

json add_request(json params) {
  params["wait"] = false;
  return {{"v", 1}, {"method", "tenant.add"}, {"params", std::move(params)}};
}

// A tenant service on a recognized rail fabric, in a scratch state directory.
struct RailService {
  RailService(const std::string& spec, int rails, bool dual_port)
      : r(recognize_rails(spec, rails, dual_port)) {
    service::ServiceConfig config;
    config.state_dir = dir.path;
    svc = std::make_unique<service::TenantService>(config,
                                                   [](service::LogLevel, const std::string&) {});
    if (r.rec.ok())
      svc->on_topology(
          std::make_shared<service::TopologyView>(*r.rec.tree, r.fabric, r.rec.embedding));
  }
  laas::test::TempDir dir;
  Recognized r;
  std::unique_ptr<service::TenantService> svc;
};

}  // namespace

TEST(ServiceServers, TenantsGetWholeServersAndNameThem) {
  RailService fixture("xgft(2;8,2;1,4)", 2, true);
  ASSERT_TRUE(fixture.r.rec.ok());
  auto& svc = *fixture.svc;
  const service::Caller admin{0, true};
  auto a = svc.handle(add_request({{"name", "a"}, {"servers", 3}}), admin);
  ASSERT_TRUE(a["ok"]) << a.dump();
  EXPECT_EQ(a["result"]["hosts"].size(), 6u);
  ASSERT_EQ(a["result"]["servers"].size(), 3u);
  for (const auto& s : a["result"]["servers"]) EXPECT_EQ(s["ports"].size(), 2u) << s.dump();
  // --hosts counts servers too; a host list names servers.
  auto b = svc.handle(add_request({{"name", "b"}, {"hosts", 2}}), admin);
  ASSERT_TRUE(b["ok"]) << b.dump();
  EXPECT_EQ(b["result"]["servers"].size(), 2u);
  auto c = svc.handle(add_request({{"name", "c"}, {"host_list", {"srv7"}}}), admin);
  ASSERT_TRUE(c["ok"]) << c.dump();
  EXPECT_EQ(c["result"]["hosts"].size(), 2u);
  auto taken = svc.handle(add_request({{"name", "d"}, {"host_list", {"srv7"}}}), admin);
  EXPECT_FALSE(taken["ok"]);
  auto too_many = svc.handle(add_request({{"name", "e"}, {"servers", 3}}), admin);
  EXPECT_FALSE(too_many["ok"]);
  EXPECT_EQ(too_many["error"]["code"], service::error::kRefused) << too_many.dump();
  // No server is split: every port of each server has one owner.
  std::map<std::string, std::set<std::string>> owner_of_server;
  for (const char* t : {"a", "b", "c"}) {
    auto show = svc.handle({{"v", 1}, {"method", "tenant.get"}, {"params", {{"name", t}}}}, admin);
    for (const auto& s : show["result"]["servers"]) owner_of_server[s["name"]].insert(t);
  }
  EXPECT_EQ(owner_of_server.size(), 6u);
  for (const auto& [server, owners] : owner_of_server) EXPECT_EQ(owners.size(), 1u) << server;
}

TEST(ServiceServers, SchedulersSeeOneHostPerServer) {
  RailService fixture("xgft(2;4,8;1,4)", 4, false);
  ASSERT_TRUE(fixture.r.rec.ok());
  auto& svc = *fixture.svc;
  const service::Caller admin{0, true};
  ASSERT_TRUE(svc.handle(add_request({{"name", "a"},
                                      {"servers", 2},
                                      {"slurm_accounts", {"acct"}},
                                      {"openstack_project", "p1"}}),
                         admin)["ok"]);
  auto exported = [&](const char* format) {
    auto e = svc.handle({{"v", 1}, {"method", "export"}, {"params", {{"format", format}}}}, admin);
    EXPECT_TRUE(e["ok"]) << e.dump();
    return e["result"]["content"].get<std::string>();
  };
  const std::string slurm = exported("slurm");
  EXPECT_NE(slurm.find("srv[0-1]"), std::string::npos) << slurm;  // 2 nodes, not 8 ports
  const std::string openstack = exported("openstack");
  EXPECT_NE(openstack.find("srv0"), std::string::npos) << openstack;
  EXPECT_EQ(openstack.find("mlx5"), std::string::npos) << openstack;
  const std::string topo = exported("slurm-topology");
  // Each server under one leaf: the rail-0 leaves list the 8 servers, the others none.
  EXPECT_NE(topo.find("Nodes=srv[0-3]"), std::string::npos) << topo;
  EXPECT_NE(topo.find("Nodes=srv[4-7]"), std::string::npos) << topo;
  EXPECT_EQ(topo.find("mlx5"), std::string::npos) << topo;
  // Partitions keep every port.
  const std::string partitions = exported("partitions");
  size_t members = 0;
  for (size_t at = 0; (at = partitions.find("=full", at)) != std::string::npos; ++at) ++members;
  EXPECT_GE(members, 8u) << partitions;
}

// A host's root rewrites its node description to the first word of another server: the port
// stays in the server it was recorded in, and no server gains or loses a port.
TEST(ServiceServers, ARenamedPortJoinsNoOtherServer) {
  RailService fixture("xgft(2;8,2;1,4)", 2, true);
  ASSERT_TRUE(fixture.r.rec.ok());
  const auto& tree = *fixture.r.rec.tree;
  const auto& emb = fixture.r.rec.embedding;
  const topology::Layout recorded = topology::layout_of(tree, emb, fixture.r.fabric, nullptr);
  topology::Fabric renamed = fixture.r.fabric;
  const int victim = emb.host_node[0];
  const std::string before = renamed.nodes[victim].name;
  const std::string other = fixture.r.servers.names.back();
  ASSERT_NE(topology::server_name(before), other);
  renamed.nodes[victim].name = other + " mlx5_9";
  // The layout re-recorded from the renamed fabric keeps the name first seen.
  EXPECT_EQ(topology::layout_of(tree, emb, renamed, &recorded).hosts[0].name, before);
  auto& svc = *fixture.svc;
  svc.on_topology(
      std::make_shared<service::TopologyView>(tree, renamed, emb, std::vector<HostId>{}, recorded));
  const service::Caller admin{0, true};
  auto a = svc.handle(add_request({{"name", "a"}, {"host_list", {other}}}), admin);
  ASSERT_TRUE(a["ok"]) << a.dump();
  EXPECT_EQ(a["result"]["hosts"].size(), 2u) << "the renamed port joined " << other;
  for (const auto& h : a["result"]["hosts"])
    EXPECT_NE(h["guid"], service::guid_hex(renamed.nodes[victim].port_guid));
}
