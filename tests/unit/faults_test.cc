// The tenants' side: hosts, cables and switches fail and return under tenants.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "allocator/cluster.h"
#include "check/checker.h"
#include "cluster_views.h"
#include "routing/audit.h"
#include "routing/routing.h"
#include "service/physical_ids.h"
#include "service/tenant_service.h"
#include "temp_files.h"
#include "topology/embedding.h"
#include "topology/layout.h"

using namespace laas;
using allocator::Cluster;
using allocator::Faults;
using allocator::make_placer;
using topology::FatTree;
using topology::HostId;
using topology::LinkId;

namespace {

// Cuts the cable of a model up-link in the fabric and lists it as missing, as recognition would.
void cut(topology::Fabric& fabric, topology::Embedding& emb, const FatTree& tree, LinkId l) {
  const auto lo = tree.link_lower(l);
  const auto up = tree.link_upper(l);
  auto& a = fabric.nodes[emb.switch_node[lo.level - 1][lo.index]].ports[lo.port];
  auto& b = fabric.nodes[emb.switch_node[up.level - 1][up.index]].ports[up.port];
  a.peer_node = b.peer_node = -1;
  a.peer_port = b.peer_port = 0;
  emb.missing_links.push_back(l);
  std::sort(emb.missing_links.begin(), emb.missing_links.end());
}

// A host unplugged: its leaf port is empty and the model host is absent.
void unplug(topology::Fabric& fabric, topology::Embedding& emb, const FatTree& tree, HostId h) {
  const auto peer = tree.host_peer(h);
  fabric.nodes[emb.switch_node[0][peer.index]].ports[peer.port].peer_node = -1;
  fabric.nodes[emb.host_node[h]].ports[1].peer_node = -1;
  emb.host_node[h] = -1;
  emb.host_port[h] = 0;
  emb.missing_hosts.push_back(h);
  std::sort(emb.missing_hosts.begin(), emb.missing_hosts.end());
}

using test::views;

std::vector<LinkId> faulty_links(const Cluster& c) {
  std::vector<LinkId> out;
  for (LinkId l = 0; l < c.tree().total_links(); ++l)
    if (c.state().link_faulty(l)) out.push_back(l);
  return out;
}

using test::claims;

std::vector<check::Violation> all_violations(const Cluster& c) {
  auto v = check::check_all(c.tree(), views(c), faulty_links(c));
  auto w = check::check_claims(c.tree(), views(c), claims(c));
  v.insert(v.end(), w.begin(), w.end());
  return v;
}

std::string text(const std::vector<check::Violation>& v) {
  std::string s;
  for (const auto& x : v) s += check::to_string(x) + "\n";
  return s;
}

bool reports_rule(const std::vector<check::Violation>& v, const std::string& rule) {
  return std::any_of(v.begin(), v.end(), [&](const auto& x) { return x.rule == rule; });
}

// The audit's balance figure for tenant `name`, on a model fabric with `emb`'s faults.
routing::AuditReport audit_of(const FatTree& tree, const topology::Fabric& fabric,
                              const topology::Embedding& emb, const Cluster& c) {
  routing::RoutingRequest req;
  for (const auto& [name, t] : c.tenants()) req.tenants.push_back({name, t.placement});
  req.faulty_links = emb.missing_links;
  const auto tables = routing::to_lid_tables(fabric, emb, tree, routing::compute(tree, req).tables);
  routing::AuditInput in;
  in.fabric = &fabric;
  in.embedding = &emb;
  in.tree = &tree;
  in.tables = &tables;
  for (const auto& [name, t] : c.tenants()) in.tenants.push_back({name, t.placement});
  in.faulty_links = emb.missing_links;
  in.management_nodes.push_back(emb.switch_node[1][0]);
  return routing::audit(in);
}

int worst(const routing::AuditReport& r, const std::string& tenant) {
  for (const auto& b : r.balance)
    if (b.tenant == tenant) return b.worst;
  return -1;
}

}  // namespace

TEST(Faults, HostDownStaysWithItsTenantAndIsNeverPlaced) {
  const auto tree = FatTree::parse("xgft(2;4,8;1,4)");
  Cluster c(tree, make_placer("laas"));
  ASSERT_TRUE(c.add("a", 3).ok());
  const HostId mine = c.find("a")->placement.hosts[0];
  const HostId free_host = 4;  // leaf 1
  ASSERT_EQ(c.state().host_owner(free_host), allocator::kFree);
  c.set_faults({{}, {mine, free_host}, {}});
  EXPECT_EQ(c.state().host_owner(mine), c.find("a")->index);
  EXPECT_EQ(c.state().free_hosts(), tree.num_hosts() - 3 - 1);
  const auto h = c.health(*c.find("a"));
  EXPECT_TRUE(h.degraded());
  EXPECT_EQ(h.down_hosts, std::vector<HostId>{mine});
  // Fill the tree: the down free host is never handed out.
  for (int i = 0; c.add("f" + std::to_string(i), 1).ok(); ++i) {
  }
  EXPECT_EQ(c.state().host_owner(free_host), allocator::kFree);
  EXPECT_TRUE(all_violations(c).empty()) << text(all_violations(c));
  c.set_faults({});
  EXPECT_FALSE(c.health(*c.find("a")).degraded());
  EXPECT_TRUE(c.add("late", 1).ok());
  EXPECT_EQ(c.state().host_owner(free_host), c.find("late")->index);
}

TEST(Faults, SwitchDownTakesItsLinksAndALeafItsHosts) {
  const auto tree = FatTree::parse("pgft(3;2,2,2;1,2,2;1,2,1)");
  Cluster c(tree, make_placer("laas"));
  c.set_faults({{}, {}, {{1, 0}, {2, 1}}});
  for (int s = 0; s < tree.hosts_per_leaf(); ++s) EXPECT_TRUE(c.state().host_down(s));
  for (int col = 0; col < tree.up_columns(1); ++col)
    EXPECT_TRUE(c.state().link_faulty(tree.l1_link(0, col)));
  // SW_L2_1 (pod 0, b 1): its up-links and the leaf links into it.
  for (int col = 0; col < tree.up_columns(2); ++col)
    EXPECT_TRUE(c.state().link_faulty(tree.l2_link(1, col)));
  EXPECT_TRUE(c.state().link_faulty(tree.l1_link(1, 2)));
  EXPECT_FALSE(c.state().link_faulty(tree.l1_link(1, 0)));
  c.set_faults({});
  EXPECT_EQ(c.state().faulty_links(), 0);
  EXPECT_EQ(c.state().down_hosts(), 0);
}

// Acceptance: a cable fault under a 2-leaf tenant with a free column is repaired online, nothing
// of the other tenant moves, the audit is clean and the balance equals a private tree's.
TEST(Faults, RepairUsesAFreeColumnAndKeepsPrivateBalance) {
  const auto tree = FatTree::parse("pgft(2;4,4;1,4;1,2)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  Cluster c(tree, make_placer("laas"));
  ASSERT_TRUE(c.add_on_hosts("a", {0, 1, 4, 5}, false, nullptr).ok());
  ASSERT_TRUE(c.add_on_hosts("b", {8, 9, 12, 13}, false, nullptr).ok());
  const auto b_before = c.find("b")->placement;
  const auto a_before = c.find("a")->placement;
  ASSERT_EQ(a_before.links, (std::vector<LinkId>{tree.l1_link(0, 0), tree.l1_link(0, 1),
                                                 tree.l1_link(1, 0), tree.l1_link(1, 1)}));
  const int private_worst = worst(audit_of(tree, fabric, emb, c), "a");
  ASSERT_GT(private_worst, 0);

  cut(fabric, emb, tree, tree.l1_link(0, 0));
  c.set_faults({emb.missing_links, {}, {}});
  const auto log = c.reconcile();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("repaired online"), std::string::npos) << log[0];
  const auto& a = *c.find("a");
  ASSERT_EQ(a.repairs.size(), 1u);
  EXPECT_EQ(a.placement.links, (std::vector<LinkId>{tree.l1_link(0, 1), tree.l1_link(0, 2),
                                                    tree.l1_link(1, 1), tree.l1_link(1, 2)}));
  EXPECT_EQ(a.placement.idle, (std::vector<LinkId>{tree.l1_link(0, 0), tree.l1_link(1, 0)}));
  EXPECT_FALSE(c.health(a).degraded());
  EXPECT_EQ(c.find("b")->placement.links, b_before.links);
  EXPECT_EQ(c.find("b")->placement.hosts, b_before.hosts);
  EXPECT_TRUE(all_violations(c).empty()) << text(all_violations(c));
  const auto report = audit_of(tree, fabric, emb, c);
  EXPECT_TRUE(report.ok()) << routing::to_json(report).dump(1);
  EXPECT_EQ(worst(report, "a"), private_worst);
  // Nobody may take the retired (idle) column while the tenant exists.
  EXPECT_EQ(c.state().link_owner(tree.l1_link(1, 0)), a.index);

  // The cable returns: the repair is undone and the routes are bit-identical to before.
  const auto tables_before = [&] {
    Cluster clean(tree, make_placer("laas"));
    EXPECT_TRUE(clean.add_explicit("a", 4, a_before).ok());
    EXPECT_TRUE(clean.add_explicit("b", 4, b_before).ok());
    routing::RoutingRequest req;
    for (const auto& [name, t] : clean.tenants()) req.tenants.push_back({name, t.placement});
    return routing::compute(tree, req).tables;
  }();
  c.set_faults({});
  const auto undo = c.reconcile();
  ASSERT_EQ(undo.size(), 1u);
  EXPECT_NE(undo[0].find("repair undone"), std::string::npos);
  EXPECT_EQ(c.find("a")->placement.links, a_before.links);
  EXPECT_TRUE(c.find("a")->placement.idle.empty());
  routing::RoutingRequest req;
  for (const auto& [name, t] : c.tenants()) req.tenants.push_back({name, t.placement});
  EXPECT_TRUE(routing::compute(tree, req).tables == tables_before);
  EXPECT_EQ(c.state().link_owner(tree.l1_link(0, 2)), allocator::kFree);
}

// Acceptance: with no free column the tenant is degraded, keeps its links, routes only over its
// own links, and the host pairs that lost their dedicated path are named.
TEST(Faults, NoFreeColumnDegradesAndNamesThePairs) {
  const auto tree = FatTree::parse("xgft(2;2,4;1,2)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  Cluster c(tree, make_placer("laas"));
  ASSERT_TRUE(c.add_on_hosts("a", {0, 2}, false, nullptr).ok());
  ASSERT_TRUE(c.add_on_hosts("b", {1, 3}, false, nullptr).ok());
  const LinkId a_link = c.find("a")->placement.links.front();
  ASSERT_EQ(tree.link_switch(a_link), 0);
  cut(fabric, emb, tree, a_link);
  c.set_faults({emb.missing_links, {}, {}});
  EXPECT_TRUE(c.reconcile().empty());
  const auto& a = *c.find("a");
  EXPECT_EQ(c.state().link_owner(a_link), a.index);  // kept, not given away
  const auto h = c.health(a);
  EXPECT_TRUE(h.degraded());
  EXPECT_EQ(h.faulty_links, std::vector<LinkId>{a_link});
  ASSERT_EQ(h.lost_leaf_pairs.size(), 1u);
  EXPECT_EQ(h.lost_leaf_pairs[0], (std::pair<int, int>{0, 1}));
  EXPECT_TRUE(all_violations(c).empty()) << text(all_violations(c));
  // Routes: a's pair gets no route (never over b's column), the audit sees no escape.
  const auto report = audit_of(tree, fabric, emb, c);
  EXPECT_EQ(report.count(routing::FindingKind::kTenantRouteEscapes), 0);
  EXPECT_EQ(report.count(routing::FindingKind::kCrossRoute), 0);
  // Its own links cannot carry the pair: a degraded tenant, noted by the audit, no violation.
  EXPECT_EQ(report.count(routing::FindingKind::kIntraTenantUnreachable), 0);
  EXPECT_GT(report.count(routing::FindingKind::kDegradedUnreachable), 0);
  // Removing b frees its column: the next reconcile repairs a onto it.
  ASSERT_TRUE(c.remove("b").ok());
  const auto log = c.reconcile();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_FALSE(c.health(*c.find("a")).degraded());
  EXPECT_TRUE(all_violations(c).empty()) << text(all_violations(c));
}

TEST(Faults, RestoreReplaysRepairsAndRefusesBadOnes) {
  const auto tree = FatTree::parse("pgft(2;4,4;1,4;1,2)");
  Cluster c(tree, make_placer("laas"));
  ASSERT_TRUE(c.add_on_hosts("a", {0, 1, 4, 5}, false, nullptr).ok());
  c.set_faults({{tree.l1_link(0, 0)}, {}, {}});
  ASSERT_EQ(c.reconcile().size(), 1u);
  const auto& a = *c.find("a");
  allocator::Placement intended = a.placement;
  intended.links = a.intended_links();
  intended.idle.clear();
  Cluster d(tree, make_placer("laas"));
  d.set_faults(c.faults());
  ASSERT_TRUE(d.restore("a", 4, intended, a.repairs).ok());
  EXPECT_EQ(d.find("a")->placement.links, a.placement.links);
  EXPECT_EQ(d.find("a")->placement.idle, a.placement.idle);
  EXPECT_TRUE(d.reconcile().empty());
  // A repair onto another switch's column is refused, state unchanged.
  Cluster e(tree, make_placer("laas"));
  auto bad = a.repairs;
  bad[0].added[0] = tree.l1_link(2, 5);
  EXPECT_FALSE(e.restore("a", 4, intended, bad).ok());
  EXPECT_TRUE(e.tenants().empty());
  EXPECT_EQ(e.state().allocated_links(1), 0);
}

// The checker catches each new kind of violation once, on a deliberately corrupted state.
class FaultCheckerCatches : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(c.add_on_hosts("a", {0, 1, 4, 5}, false, nullptr).ok());
    ASSERT_TRUE(c.add_on_hosts("b", {8, 9, 12, 13}, false, nullptr).ok());
    c.set_faults({{tree.l1_link(0, 0)}, {}, {}});
    ASSERT_EQ(c.reconcile().size(), 1u);
    ASSERT_TRUE(all_violations(c).empty()) << text(all_violations(c));
    v = views(c);
    s = claims(c);
    faulty = faulty_links(c);
  }
  check::TenantView& a() { return v[0]; }
  FatTree tree = FatTree::parse("pgft(2;4,4;1,4;1,2)");
  Cluster c{tree, make_placer("laas")};
  std::vector<check::TenantView> v;
  check::StateClaims s;
  std::vector<LinkId> faulty;
};

TEST_F(FaultCheckerCatches, ReservedLinkReleased) {
  s.link_owner[tree.l1_link(1, 0)] = "";  // a's idle column shown free
  EXPECT_TRUE(reports_rule(check::check_claims(tree, v, s), "reserved-released"));
}

TEST_F(FaultCheckerCatches, DownHostGivenToAnother) {
  s.host_owner[0] = "b";
  EXPECT_TRUE(reports_rule(check::check_claims(tree, v, s), "reserved-released"));
}

TEST_F(FaultCheckerCatches, StateHoldsWhatNoTenantLists) {
  s.link_owner[tree.l1_link(3, 7)] = "a";
  EXPECT_TRUE(reports_rule(check::check_claims(tree, v, s), "state-phantom"));
}

TEST_F(FaultCheckerCatches, StaleRepair) {
  EXPECT_TRUE(reports_rule(check::check_all(tree, v, {}), "repair-stale"));
}

TEST_F(FaultCheckerCatches, RepairOntoAnotherSwitch) {
  a().repairs[0].added[0] = tree.l1_link(2, 2);
  EXPECT_TRUE(reports_rule(check::check_all(tree, v, faulty), "repair-mismatch"));
}

TEST_F(FaultCheckerCatches, IdleLinkWithoutRepair) {
  a().repairs.clear();
  EXPECT_TRUE(reports_rule(check::check_all(tree, v, faulty), "idle-mismatch"));
}

TEST_F(FaultCheckerCatches, RepairBreakingTheorem2) {
  // Only leaf 0 moved to the new column: the leaves no longer share their column set.
  auto& t = a();
  t.links.erase(std::find(t.links.begin(), t.links.end(), tree.l1_link(1, 2)));
  t.links.push_back(tree.l1_link(1, 0));
  std::sort(t.links.begin(), t.links.end());
  t.idle = {tree.l1_link(0, 0)};
  t.repairs[0] = {{tree.l1_link(0, 0)}, {tree.l1_link(0, 2)}};
  EXPECT_TRUE(reports_rule(check::check_all(tree, v, faulty), "theorem2"));
}

TEST_F(FaultCheckerCatches, IdleLinkHeldTwice) {
  v[1].idle.push_back(tree.l1_link(1, 0));
  EXPECT_TRUE(reports_rule(check::check_all(tree, v, faulty), "link-shared"));
}

// ---- the service: identities, faults, restarts --------------------------------------------

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using service::Caller;
using service::TenantService;
using service::TopologyView;

struct FaultsDir : test::TempDir {
  FaultsDir() : test::TempDir("laas-faults") {}
};

const Caller kRoot{0, true};

json call(TenantService& s, const std::string& method, json params = json::object()) {
  params["wait"] = false;
  return s.handle({{"v", 1}, {"id", 1}, {"method", method}, {"params", params}}, kRoot);
}

using test::slurp;

routing::ModelTables tables_of(const TenantService& s) {
  const auto snap = s.snapshot();
  routing::RoutingRequest req;
  for (const auto& [name, p] : snap.tenants) req.tenants.push_back({name, p});
  req.faulty_links = snap.topology->embedding.missing_links;
  return routing::compute(snap.topology->tree, req).tables;
}

class ServiceFaults : public ::testing::Test {
 protected:
  std::unique_ptr<TenantService> make() {
    service::ServiceConfig config;
    config.state_dir = dir.path;
    config.default_wait_ms = 10;
    return std::make_unique<TenantService>(
        config, [this](service::LogLevel, const std::string& m) { logs.push_back(m); });
  }
  std::shared_ptr<TopologyView> view(const std::vector<HostId>& down = {},
                                     const std::vector<LinkId>& cables = {}) {
    auto [fabric, emb] = topology::build_model_fabric(tree);
    for (HostId h : down) unplug(fabric, emb, tree, h);
    for (LinkId l : cables) cut(fabric, emb, tree, l);
    return std::make_shared<TopologyView>(tree, fabric, emb);
  }
  // Tenant a: two hosts on each of leaves 0 and 1, so a cable under it has free columns to
  // be repaired onto.
  void add_two_leaf_tenant(TenantService& s) {
    ASSERT_TRUE(
        call(s, "tenant.add",
             {{"name", "a"}, {"host_list", {"comp-1", "comp-2", "comp-5", "comp-6"}}})["ok"]);
  }
  bool logged(const std::string& what) const {
    return std::any_of(logs.begin(), logs.end(),
                       [&](const std::string& m) { return m.find(what) != m.npos; });
  }
  FatTree tree = FatTree::parse("pgft(2;4,4;1,4;1,2)");
  FaultsDir dir;
  std::vector<std::string> logs;
};

}  // namespace

TEST_F(ServiceFaults, TenantHostDownIsDegradedAndRoutesReturnBitIdentical) {
  auto s = make();
  s->on_topology(view());
  ASSERT_TRUE(call(*s, "tenant.add", {{"name", "a"}, {"hosts", 6}})["ok"]);
  ASSERT_TRUE(call(*s, "tenant.add", {{"name", "b"}, {"hosts", 2}})["ok"]);
  const auto before = tables_of(*s);
  const auto a_hosts = call(*s, "tenant.get", {{"name", "a"}})["result"]["hosts"];
  const std::string victim = a_hosts[0]["name"];
  const HostId victim_id = 0;
  ASSERT_EQ(victim, "comp-1");

  s->on_topology(view({victim_id}));
  EXPECT_TRUE(logged("fault: host comp-1"));
  auto list = call(*s, "tenant.list")["result"];
  ASSERT_EQ(list.size(), 2u);
  for (const auto& t : list)
    if (t["name"] == "a") {
      EXPECT_EQ(t["state"], "degraded");
      EXPECT_NE(t["reason"].get<std::string>().find("host comp-1 down"), std::string::npos)
          << t.dump();
    }
  auto shown = call(*s, "tenant.get", {{"name", "a"}})["result"];
  EXPECT_EQ(shown["health"]["down_hosts"][0], "comp-1");
  EXPECT_EQ(shown["hosts"][0]["down"], true);
  EXPECT_EQ(shown["hosts"][0]["guid"], a_hosts[0]["guid"]);  // last seen, kept
  EXPECT_EQ(call(*s, "status")["result"]["down_hosts"], 1);
  // A new tenant never receives the down host (nor any of a's).
  auto big = call(*s, "tenant.add", {{"name", "c"}, {"hosts", 3}});
  ASSERT_TRUE(big["ok"]) << big.dump();
  for (const auto& h : big["result"]["hosts"]) EXPECT_NE(h["name"], "comp-1");
  ASSERT_TRUE(call(*s, "tenant.remove", {{"name", "c"}})["ok"]);
  // A restart while the host is down loads the state cleanly.
  auto restarted = make();
  restarted->on_topology(view({victim_id}));
  EXPECT_EQ(call(*restarted, "tenant.list")["result"].size(), 2u);
  EXPECT_EQ(call(*restarted, "tenant.get", {{"name", "a"}})["result"]["state"], "degraded");
  // The host returns: routed, bit-identical routes.
  restarted->on_topology(view());
  EXPECT_EQ(call(*restarted, "tenant.get", {{"name", "a"}})["result"]["state"], "routed");
  EXPECT_TRUE(tables_of(*restarted) == before);
}

TEST_F(ServiceFaults, CableFaultIsRepairedPersistedAndUndone) {
  auto s = make();
  s->on_topology(view());
  add_two_leaf_tenant(*s);
  const auto before = tables_of(*s);
  const std::string clean_state = slurp(dir.path + "/state.json");
  const LinkId broken = tree.l1_link(0, 0);
  s->on_topology(view({}, {broken}));
  EXPECT_TRUE(logged("repaired online"));
  EXPECT_TRUE(logged("fault: link SW_L1_0 port 1 is down"));
  auto shown = call(*s, "tenant.get", {{"name", "a"}})["result"];
  EXPECT_EQ(shown["state"], "routed") << shown.dump();
  ASSERT_EQ(shown["health"]["repairs"].size(), 1u);
  EXPECT_EQ(shown["health"]["idle_links"], 2);
  const std::string repaired_state = slurp(dir.path + "/state.json");
  EXPECT_NE(repaired_state.find("\"repairs\""), std::string::npos);
  // Restart under the fault: the same repair is restored, nothing re-searched or re-saved.
  auto restarted = make();
  restarted->on_topology(view({}, {broken}));
  EXPECT_EQ(slurp(dir.path + "/state.json"), repaired_state);
  EXPECT_TRUE(tables_of(*restarted) == tables_of(*s));
  // The cable returns: undone, routes and state as before the fault.
  restarted->on_topology(view());
  EXPECT_TRUE(logged("repair undone"));
  EXPECT_TRUE(tables_of(*restarted) == before);
  EXPECT_EQ(slurp(dir.path + "/state.json"), clean_state);
}

// A remove that fails to save (the state file cannot be synced) puts a repaired tenant back
// with its repair, so that the repair is still undone when the cable returns.
TEST_F(ServiceFaults, FailedRemoveKeepsTheRepairToUndo) {
  auto s = make();
  s->on_topology(view());
  add_two_leaf_tenant(*s);
  const auto before = tables_of(*s);
  const LinkId broken = tree.l1_link(0, 0);
  s->on_topology(view({}, {broken}));
  ASSERT_TRUE(logged("repaired online"));
  const std::string repaired_state = slurp(dir.path + "/state.json");
  service::set_fsync_for_tests(
      [](int, bool directory) { return directory ? 0 : (errno = EIO, -1); });
  const auto failed = call(*s, "tenant.remove", {{"name", "a"}, {"wait", false}});
  service::set_fsync_for_tests(nullptr);
  ASSERT_FALSE(failed["ok"].get<bool>()) << failed.dump();
  EXPECT_EQ(slurp(dir.path + "/state.json"), repaired_state);
  EXPECT_EQ(call(*s, "tenant.get", {{"name", "a"}})["result"]["health"]["repairs"].size(), 1u);
  s->on_topology(view());
  EXPECT_TRUE(logged("repair undone"));
  EXPECT_TRUE(tables_of(*s) == before);
}

TEST_F(ServiceFaults, DegradedTenantNamesPairsAndKeepsItsLinks) {
  tree = FatTree::parse("xgft(2;2,4;1,2)");
  auto s = make();
  s->on_topology(view());
  ASSERT_TRUE(call(*s, "tenant.add", {{"name", "a"}, {"host_list", {"comp-1", "comp-3"}}})["ok"]);
  ASSERT_TRUE(call(*s, "tenant.add", {{"name", "b"}, {"host_list", {"comp-2", "comp-4"}}})["ok"]);
  s->on_topology(view({}, {tree.l1_link(0, 0)}));
  auto shown = call(*s, "tenant.get", {{"name", "a"}})["result"];
  EXPECT_EQ(shown["state"], "degraded");
  EXPECT_EQ(shown["health"]["lost_pairs"][0], json({"comp-1", "comp-3"})) << shown.dump();
  EXPECT_NE(shown["reason"].get<std::string>().find("comp-1<->comp-3"), std::string::npos);
  EXPECT_EQ(shown["links"].size(), 2u);  // still held, the faulty one marked
  bool marked = false;
  for (const auto& l : shown["links"]) marked = marked || l.value("faulty", false);
  EXPECT_TRUE(marked);
  // A new tenant cannot get a's faulty link; nothing is free above leaf 0 anyway.
  EXPECT_FALSE(call(*s, "tenant.add", {{"name", "c"}, {"host_list", {"comp-5", "comp-1"}}})["ok"]);
  EXPECT_EQ(call(*s, "status")["result"]["tenants_degraded"], 1);
}

// With the first-hop drop on (qos TRUE) the service keeps a shared leaf's last free up-link:
// the host list of the test above is refused naming the leaf, and so is a count that fits
// only there.
TEST_F(ServiceFaults, FirstHopDropKeepsAManagementWay) {
  tree = FatTree::parse("xgft(2;2,4;1,2)");
  auto s = make();
  s->set_first_hop_drop(true);
  s->on_topology(view());
  EXPECT_TRUE(logged("placements keep an open up-link on every shared leaf"));
  ASSERT_TRUE(call(*s, "tenant.add", {{"name", "a"}, {"host_list", {"comp-1", "comp-3"}}})["ok"]);
  const auto b = call(*s, "tenant.add", {{"name", "b"}, {"host_list", {"comp-2", "comp-4"}}});
  ASSERT_FALSE(b["ok"]) << b.dump();
  EXPECT_NE(b.dump().find("would be shared by two or more owners with no free up-link"),
            std::string::npos)
      << b.dump();
  // Leaves 2 and 3 whole; then the only 2-host placement is comp-2 and comp-4 again.
  ASSERT_TRUE(call(*s, "tenant.add", {{"name", "d"}, {"hosts", 4}})["ok"]);
  const auto c = call(*s, "tenant.add", {{"name", "c"}, {"hosts", 2}});
  ASSERT_FALSE(c["ok"]) << c.dump();
  EXPECT_NE(c.dump().find("the placement that exists, 2x1 hosts per leaf, is not made: leaf "),
            std::string::npos)
      << c.dump();
}

TEST_F(ServiceFaults, NoFatTreeStillListsEveryTenant) {
  auto s = make();
  s->on_topology(view());
  ASSERT_TRUE(call(*s, "tenant.add", {{"name", "a"}, {"hosts", 3}})["ok"]);
  ASSERT_TRUE(call(*s, "tenant.add", {{"name", "b"}, {"hosts", 5}})["ok"]);
  s->on_topology_error("leaf-0 has 7 hosts but leaf-1 has 8");
  auto list = call(*s, "tenant.list")["result"];
  ASSERT_EQ(list.size(), 2u);
  for (const auto& t : list) {
    EXPECT_EQ(t["state"], "not routed");
    EXPECT_EQ(t["reason"], "not routed: leaf-0 has 7 hosts but leaf-1 has 8");
  }
  EXPECT_EQ(call(*s, "tenant.get", {{"name", "b"}})["result"]["state"], "not routed");
  // A fresh process that never saw a fat-tree lists them too.
  auto fresh = make();
  fresh->on_topology_error("not a fat-tree");
  EXPECT_EQ(call(*fresh, "tenant.list")["result"].size(), 2u);
}

TEST_F(ServiceFaults, VersionOneStateIsMigrated) {
  {
    std::ofstream(dir.path + "/state.json")
        << R"J({"format":"laas-state","version":1,"topology":"pgft(2;4,4;1,4;1,2)",)J"
        << R"J("generation":3,"tenants":[{"name":"old","requested":2,"shape":"",)J"
        << R"J("hosts":["0x0000000000100001","0x0000000000100009"],)J"
        << R"J("links":[{"switch":"0x0000000000200000","port":1},)J"
        << R"J({"switch":"0x0000000000200001","port":1}]}]})J";
  }
  auto s = make();
  s->on_topology(view());
  auto t = call(*s, "tenant.get", {{"name", "old"}})["result"];
  EXPECT_EQ(t["state"], "routed") << t.dump();
  const std::string text = slurp(dir.path + "/state.json");
  EXPECT_NE(text.find("\"version\": 2"), std::string::npos) << text;
  EXPECT_NE(text.find("\"leaf\""), std::string::npos);
  // A version-1 host that is absent cannot be located: reported, kept on disk.
  {
    std::ofstream(dir.path + "/state.json")
        << R"J({"format":"laas-state","version":1,"topology":"pgft(2;4,4;1,4;1,2)",)J"
        << R"J("generation":3,"tenants":[{"name":"old","requested":1,"shape":"",)J"
        << R"J("hosts":["0x0000000000100001"],"links":[]}]})J";
  }
  auto t2 = make();
  t2->on_topology(view({0}));
  auto list = call(*t2, "tenant.list")["result"];
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["state"], "not placed");
  EXPECT_NE(list[0]["reason"].get<std::string>().find("version-1"), std::string::npos);
  EXPECT_NE(slurp(dir.path + "/state.json").find("\"old\""), std::string::npos);
  // Saved meanwhile (another tenant added): the unlocated host survives, and once it is back
  // the tenant is placed.
  ASSERT_TRUE(call(*t2, "tenant.add", {{"name", "new"}, {"hosts", 1}})["ok"]);
  auto t3 = make();
  EXPECT_EQ(call(*t3, "status")["result"].count("blocked"), 0u);
  t3->on_topology(view());
  EXPECT_EQ(call(*t3, "tenant.get", {{"name", "old"}})["result"]["state"], "routed");
}

TEST(StateFile, RoundTripsRepairsAndRefusesDoubleHolding) {
  service::PersistedState st;
  st.topology = "xgft(2;4,8;1,4)";
  st.generation = 7;
  service::PersistedTenant t;
  t.name = "a";
  t.requested = 2;
  t.hosts = {{0x20, 5, 0x100001, "comp-1"}, {0x21, 5, 0, ""}};
  t.links = {{0x20, 1}, {0x21, 1}};
  t.repairs = {{{{0x20, 1}, {0x21, 1}}, {{0x20, 2}, {0x21, 2}}}};
  t.pkey = 0x10;
  st.tenants.push_back(t);
  const auto back = service::parse_state(service::serialize_state(st), "test");
  EXPECT_TRUE(back == st);
  auto twice = st;
  twice.tenants.push_back(t);
  twice.tenants.back().name = "b";
  twice.tenants.back().links.clear();
  twice.tenants.back().repairs.clear();
  try {
    service::parse_state(service::serialize_state(twice), "test");
    ADD_FAILURE() << "a host slot held twice was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("held by two tenants"), std::string::npos) << e.what();
  }
  auto link_twice = st;
  link_twice.tenants[0].repairs[0].added[0] = {0x20, 1};
  EXPECT_THROW(service::parse_state(service::serialize_state(link_twice), "test"),
               std::runtime_error);
}

// A repair of a repair: when the first fault clears, both are undone (the second stood in for a
// column the tenant no longer needs), even though the second's cable is still down.
TEST(Faults, ChainedRepairsUndoTogether) {
  const auto tree = FatTree::parse("pgft(2;4,4;1,4;1,2)");
  Cluster c(tree, make_placer("laas"));
  ASSERT_TRUE(c.add_on_hosts("a", {0, 1, 4, 5}, false, nullptr).ok());
  const auto as_placed = c.find("a")->placement.links;
  c.set_faults({{tree.l1_link(0, 0)}, {}, {}});
  ASSERT_EQ(c.reconcile().size(), 1u);
  c.set_faults({{tree.l1_link(0, 0), tree.l1_link(0, 2)}, {}, {}});
  ASSERT_EQ(c.reconcile().size(), 1u);
  ASSERT_EQ(c.find("a")->repairs.size(), 2u);
  EXPECT_TRUE(all_violations(c).empty()) << text(all_violations(c));
  c.set_faults({{tree.l1_link(0, 2)}, {}, {}});
  EXPECT_EQ(c.reconcile().size(), 2u);
  EXPECT_TRUE(c.find("a")->repairs.empty());
  EXPECT_EQ(c.find("a")->placement.links, as_placed);
  EXPECT_TRUE(c.find("a")->placement.idle.empty());
  EXPECT_EQ(c.state().link_owner(tree.l1_link(0, 2)), allocator::kFree);
  EXPECT_EQ(c.state().link_owner(tree.l1_link(1, 3)), allocator::kFree);
  EXPECT_TRUE(all_violations(c).empty()) << text(all_violations(c));
}

// Parts that are down keep the names they had when last seen: a leaf switch that lost every
// up-link (so discovery no longer reaches it) and a host unplugged are named from the recorded
// layout, in log lines and in the saved record; without a layout (or one of another tree) the
// switch falls back to its GUID and the host to nothing.
TEST(PhysicalIds, AbsentPartsAreNamedByTheRecordedLayout) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  const topology::Layout layout = topology::layout_of(tree, emb, fabric, nullptr);
  const std::string leaf_name = fabric.nodes[emb.switch_node[0][1]].name;
  const HostId gone = tree.host_at(2, 0);
  const std::string host_name = fabric.nodes[emb.host_node[gone]].name;
  const topology::Guid host_guid = fabric.nodes[emb.host_node[gone]].port_guid;
  unplug(fabric, emb, tree, gone);
  emb.switch_node[0][1] = -1;  // leaf 1 no longer discovered (its GUID stays recorded)

  const service::PhysicalIds named(tree, emb, fabric, true, &layout);
  EXPECT_EQ(named.switch_name(1, 1), leaf_name);
  EXPECT_EQ(named.host(gone).name, host_name);
  EXPECT_EQ(named.host(gone).guid, host_guid);
  EXPECT_EQ(named.host_by_port_guid(host_guid), gone);

  const service::PhysicalIds bare(tree, emb, fabric, true, nullptr);
  EXPECT_EQ(bare.switch_name(1, 1).rfind("absent switch 0x", 0), 0u) << bare.switch_name(1, 1);
  EXPECT_TRUE(bare.host(gone).name.empty());
  topology::Layout other = layout;
  other.spec = "xgft(2;4,8;1,2)";
  const service::PhysicalIds mismatched(tree, emb, fabric, true, &other);
  EXPECT_EQ(mismatched.switch_name(1, 1).rfind("absent switch 0x", 0), 0u);
}
