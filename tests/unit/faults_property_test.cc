// Property test: random tenant and fault operations (add, remove, host down/up, cable
// down/up, switch down/up) on 2- and 3-level trees with parallel links, for every algorithm.
// After every operation: the independent checker (LaaS conditions on the links routed over,
// exclusivity of everything held, repairs consistent and not stale), the allocation state
// against the tenants' lists (nothing reserved released, nothing phantom), an independent count
// of holders per host and link, and a save + reload through the state file's text and the
// physical identities (the reloaded cluster must equal the running one). Every `audit_every`
// operations, routes are computed on a fabric with the faulty cables cut and audited.
//
// LAAS_FAULT_OPS overrides the operations per case (the default keeps ctest short;
// scripts/fault-property.sh runs 100,000 per case and prints the figures); LAAS_FAULT_AUDIT_EVERY
// overrides the audit interval (1: after every operation, as the full-length run does).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "allocator/cluster.h"
#include "check/checker.h"
#include "cluster_views.h"
#include "routing/audit.h"
#include "routing/routing.h"
#include "service/physical_ids.h"
#include "service/state_store.h"
#include "service/tenant_service.h"
#include "temp_files.h"
#include "topology/embedding.h"

using namespace laas;
using allocator::Cluster;
using topology::FatTree;
using topology::HostId;
using topology::LinkId;

namespace {

struct Case {
  const char* spec;
  const char* algorithm;
};

std::string fault_case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string s = std::string(info.param.algorithm) + "_" + info.param.spec;
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

long operations() {
  const char* env = std::getenv("LAAS_FAULT_OPS");
  return env ? std::atol(env) : 2500;
}

using test::views;

using test::claims;

// Everything observable of a cluster's allocation, to compare a reload with the original.
std::string dump(const Cluster& c) {
  std::string s;
  for (const auto& [name, t] : c.tenants()) {
    s += name + ":" + std::to_string(t.requested) + " h";
    for (auto h : t.placement.hosts) s += " " + std::to_string(h);
    s += " l";
    for (auto l : t.placement.links) s += " " + std::to_string(l);
    s += " i";
    for (auto l : t.placement.idle) s += " " + std::to_string(l);
    s += " r" + std::to_string(t.repairs.size()) + "\n";
  }
  const auto cl = claims(c);
  for (const auto& o : cl.host_owner) s += o + ",";
  s += "\n";
  for (const auto& o : cl.link_owner) s += o + ",";
  for (LinkId l = 0; l < c.tree().total_links(); ++l) s += c.state().link_faulty(l) ? "f" : ".";
  for (HostId h = 0; h < c.tree().num_hosts(); ++h) s += c.state().host_down(h) ? "d" : ".";
  return s;
}

class FaultProperty : public ::testing::TestWithParam<Case> {};

TEST_P(FaultProperty, EveryOperationKeepsTheGuarantees) {
  const Case param = GetParam();
  const FatTree tree = FatTree::parse(param.spec);
  const auto [model_fabric, model_emb] = topology::build_model_fabric(tree);
  const service::PhysicalIds ids(tree, model_emb, model_fabric);
  Cluster c(tree, allocator::make_placer(param.algorithm));
  std::mt19937 rng(20261123);
  std::exponential_distribution<double> size(1.0 / std::max(2, tree.num_hosts() / 10));
  allocator::Faults faults;
  std::set<LinkId> cables;
  std::set<HostId> hosts_down;
  std::set<std::pair<int, int>> switches_down;
  const long ops = operations();
  const char* every = std::getenv("LAAS_FAULT_AUDIT_EVERY");
  const long audit_every = every ? std::max(1L, std::atol(every)) : std::max(50L, ops / 100);
  std::map<std::string, long> counts;
  long repairs = 0, undone = 0, degraded_seen = 0, audits = 0;
  int next = 0;
  auto apply_faults = [&] {
    faults.links.assign(cables.begin(), cables.end());
    faults.hosts.assign(hosts_down.begin(), hosts_down.end());
    faults.switches.assign(switches_down.begin(), switches_down.end());
    c.set_faults(faults);
  };
  auto reconcile = [&] {
    for (const auto& line : c.reconcile()) {
      if (line.find("repaired online") != std::string::npos) ++repairs;
      if (line.find("repair undone") != std::string::npos) ++undone;
    }
  };
  for (long op = 0; op < ops; ++op) {
    int roll = static_cast<int>(rng() % 100);
    // Keep the fabric mostly up (at most 1/8 of hosts and cables, 2 switches down): faults
    // churn under a live tree instead of accumulating until nothing can be placed.
    if (roll >= 55 && roll < 65 && static_cast<int>(hosts_down.size()) >= tree.num_hosts() / 8)
      roll = 65;
    if (roll >= 73 && roll < 84 && static_cast<int>(cables.size()) >= tree.total_links() / 8)
      roll = 84;
    if (roll >= 93 && roll < 96 && switches_down.size() >= 2) roll = 96;
    std::string kind;
    if (roll < 35 || c.tenants().empty()) {
      kind = "add";
      const int n = std::min(tree.num_hosts(), 1 + static_cast<int>(size(rng)));
      auto r = c.add("t" + std::to_string(next++), n);
      ASSERT_TRUE(r.ok() || r.status == allocator::Status::kRefused) << r.message;
      if (r.ok()) {
        for (HostId h : r.tenant->placement.hosts) ASSERT_FALSE(c.state().host_down(h));
        for (LinkId l : r.tenant->placement.links) ASSERT_FALSE(c.state().link_faulty(l));
      }
    } else if (roll < 55) {
      kind = "remove";
      auto it = c.tenants().begin();
      std::advance(it, rng() % c.tenants().size());
      ASSERT_TRUE(c.remove(std::string(it->first)).ok());
      reconcile();
    } else if (roll < 65) {
      kind = "host down";
      hosts_down.insert(static_cast<HostId>(rng() % tree.num_hosts()));
    } else if (roll < 73) {
      kind = "host up";
      if (!hosts_down.empty())
        hosts_down.erase(std::next(hosts_down.begin(), rng() % hosts_down.size()));
    } else if (roll < 84) {
      kind = "cable down";
      cables.insert(static_cast<LinkId>(rng() % tree.total_links()));
    } else if (roll < 93) {
      kind = "cable up";
      if (!cables.empty()) cables.erase(std::next(cables.begin(), rng() % cables.size()));
    } else if (roll < 96) {
      kind = "switch down";
      const int level = 1 + static_cast<int>(rng() % tree.height());
      switches_down.insert({level, static_cast<int>(rng() % tree.num_switches(level))});
    } else {
      kind = "switch up";
      if (!switches_down.empty())
        switches_down.erase(std::next(switches_down.begin(), rng() % switches_down.size()));
    }
    ++counts[kind];
    if (kind != "add" && kind != "remove") {
      apply_faults();
      reconcile();
    }
    const std::string where = "op " + std::to_string(op) + " (" + kind + ")";

    // 1. The checker, and the state against the tenants' own lists.
    const auto v = views(c);
    std::vector<LinkId> faulty;
    for (LinkId l = 0; l < tree.total_links(); ++l)
      if (c.state().link_faulty(l)) faulty.push_back(l);
    auto found = check::check_all(tree, v, faulty);
    const auto more = check::check_claims(tree, v, claims(c));
    found.insert(found.end(), more.begin(), more.end());
    ASSERT_TRUE(found.empty()) << where << ": " << check::to_string(found.front());
    // 2. No host or link held twice, counted here without the checker.
    std::vector<int> host_holders(tree.num_hosts(), 0), link_holders(tree.total_links(), 0);
    for (const auto& [name, t] : c.tenants()) {
      for (HostId h : t.placement.hosts) ASSERT_EQ(++host_holders[h], 1) << where;
      for (const auto* list : {&t.placement.links, &t.placement.idle})
        for (LinkId l : *list) ASSERT_EQ(++link_holders[l], 1) << where;
      if (c.health(t).degraded()) ++degraded_seen;
    }
    // 3. Save and reload: text, parse, physical identities, restore; equal to the original.
    service::PersistedState saved;
    saved.topology = tree.spec().text();
    saved.generation = static_cast<std::uint64_t>(op);
    for (const auto& [name, t] : c.tenants())
      saved.tenants.push_back(service::to_persisted(t, ids, nullptr));
    const auto reloaded = service::parse_state(service::serialize_state(saved), where);
    ASSERT_TRUE(reloaded == saved) << where;
    Cluster d(tree, allocator::make_placer(param.algorithm));
    d.set_faults(faults);
    for (const auto& t : reloaded.tenants) {
      std::string missing;
      const auto model = service::to_model(t, ids, &missing);
      ASSERT_TRUE(model) << where << ": " << missing;
      const auto r = d.restore(t.name, t.requested, model->intended, model->repairs);
      ASSERT_TRUE(r.ok()) << where << ": " << r.message;
    }
    ASSERT_TRUE(d.reconcile().empty()) << where << ": a reload would change the tenants";
    ASSERT_EQ(dump(d), dump(c)) << where;
    // 4. Routing on the fabric as it is, audited for isolation.
    if ((op + 1) % audit_every == 0) {
      ++audits;
      auto fabric = model_fabric;
      auto emb = model_emb;
      for (LinkId l : faulty) {
        const auto lo = tree.link_lower(l), up = tree.link_upper(l);
        fabric.nodes[emb.switch_node[lo.level - 1][lo.index]].ports[lo.port].peer_node = -1;
        fabric.nodes[emb.switch_node[up.level - 1][up.index]].ports[up.port].peer_node = -1;
      }
      emb.missing_links = faulty;
      routing::RoutingRequest req;
      for (const auto& [name, t] : c.tenants()) req.tenants.push_back({name, t.placement});
      req.faulty_links = faulty;
      const auto tables =
          routing::to_lid_tables(fabric, emb, tree, routing::compute(tree, req).tables);
      routing::AuditInput in;
      in.fabric = &fabric;
      in.embedding = &emb;
      in.tree = &tree;
      in.tables = &tables;
      for (const auto& [name, t] : c.tenants()) in.tenants.push_back({name, t.placement});
      in.faulty_links = faulty;
      routing::AuditOptions options;
      options.max_shifts = 16;
      const auto report = routing::audit(in, options);
      // Isolation never bends under faults; reachability may (degraded tenants, down switches).
      for (auto k :
           {routing::FindingKind::kTenantRouteEscapes, routing::FindingKind::kFreeRouteOnTenantLink,
            routing::FindingKind::kCrossRoute, routing::FindingKind::kLoop,
            routing::FindingKind::kOverlong})
        ASSERT_EQ(report.count(k), 0) << where << ": " << routing::to_json(report).dump(1);
    }
  }
  std::string summary;
  for (const auto& [k, n] : counts) summary += " " + k + "=" + std::to_string(n);
  std::printf(
      "[ figures  ] %s %s: %ld ops (%s), %ld repairs, %ld undone, %ld degraded "
      "tenant-steps, %ld audits, 0 violations\n",
      param.algorithm, param.spec, ops, summary.c_str() + 1, repairs, undone, degraded_seen,
      audits);
  if (std::string(param.algorithm) == "laas") {
    EXPECT_GT(repairs, 0) << "no repair ever happened";
  }
}

INSTANTIATE_TEST_SUITE_P(Trees, FaultProperty,
                         ::testing::Values(Case{"pgft(2;4,8;1,4;1,2)", "laas"},
                                           Case{"pgft(2;4,8;1,4;1,2)", "simple"},
                                           Case{"pgft(2;4,8;1,4;1,2)", "unconstrained"},
                                           Case{"pgft(3;4,4,3;1,2,2;1,2,2)", "laas"},
                                           Case{"pgft(3;4,4,3;1,2,2;1,2,2)", "simple"},
                                           Case{"pgft(3;4,4,3;1,2,2;1,2,2)", "unconstrained"}),
                         fault_case_name);

}  // namespace

// The same operations through the service itself (requests, recognition results with absent
// parts, restarts on the same state directory): after every operation the tenants listed are
// exactly those added and not removed, none is ever "not placed", no host is listed by two
// tenants, and every few operations a restart must show exactly the same tenants and health.
namespace {

struct FpropDir : test::TempDir {
  FpropDir() : test::TempDir("laas-fprop") {}
};

nlohmann::json call_service(service::TenantService& s, const std::string& method,
                            nlohmann::json params = nlohmann::json::object()) {
  params["wait"] = false;
  return s.handle({{"v", 1}, {"id", 1}, {"method", method}, {"params", params}},
                  service::Caller{0, true});
}

}  // namespace

TEST(FaultPropertyService, RequestsFaultsAndRestarts) {
  const FatTree tree = FatTree::parse("pgft(3;4,4,3;1,2,2;1,2,2)");
  FpropDir dir;
  service::ServiceConfig config;
  config.state_dir = dir.path;
  config.default_wait_ms = 0;
  auto make = [&] {
    return std::make_unique<service::TenantService>(config,
                                                    [](service::LogLevel, const std::string&) {});
  };
  std::set<LinkId> cables;
  std::set<HostId> hosts_down;
  std::set<std::pair<int, int>> switches_down;
  auto view = [&] {
    auto [fabric, emb] = topology::build_model_fabric(tree);
    std::set<LinkId> links(cables.begin(), cables.end());
    std::set<HostId> hosts(hosts_down.begin(), hosts_down.end());
    for (const auto& [level, index] : switches_down) {
      for (LinkId l = 0; l < tree.total_links(); ++l) {
        const auto lo = tree.link_lower(l), up = tree.link_upper(l);
        if ((lo.level == level && lo.index == index) || (up.level == level && up.index == index))
          links.insert(l);
      }
      if (level == 1)
        for (int s = 0; s < tree.hosts_per_leaf(); ++s) hosts.insert(tree.host_at(index, s));
    }
    for (HostId h : hosts) emb.host_node[h] = -1;
    emb.missing_links.assign(links.begin(), links.end());
    emb.missing_hosts.assign(hosts.begin(), hosts.end());
    emb.missing_switches.assign(switches_down.begin(), switches_down.end());
    return std::make_shared<service::TopologyView>(tree, fabric, emb);
  };
  auto s = make();
  s->on_topology(view());
  std::mt19937 rng(7);
  std::set<std::string> expected;
  const long ops = std::max(200L, operations() / 5);
  int next = 0;
  for (long op = 0; op < ops; ++op) {
    const int roll = static_cast<int>(rng() % 100);
    if (roll < 35 || expected.empty()) {
      const std::string name = "t" + std::to_string(next++);
      const auto r = call_service(*s, "tenant.add", {{"name", name}, {"hosts", 1 + rng() % 10}});
      if (r["ok"].get<bool>()) {
        expected.insert(name);
        for (const auto& h : r["result"]["hosts"]) ASSERT_FALSE(h.value("down", false));
      }
    } else if (roll < 55) {
      auto it = std::next(expected.begin(), rng() % expected.size());
      ASSERT_TRUE(call_service(*s, "tenant.remove", {{"name", *it}})["ok"]);
      expected.erase(it);
    } else {
      if (roll < 65 && hosts_down.size() < 6)
        hosts_down.insert(rng() % tree.num_hosts());
      else if (roll < 72 && !hosts_down.empty())
        hosts_down.erase(std::next(hosts_down.begin(), rng() % hosts_down.size()));
      else if (roll < 84 && cables.size() < 8)
        cables.insert(rng() % tree.total_links());
      else if (roll < 93 && !cables.empty())
        cables.erase(std::next(cables.begin(), rng() % cables.size()));
      else if (roll < 96 && switches_down.empty()) {
        const int level = 1 + static_cast<int>(rng() % tree.height());
        switches_down.insert({level, static_cast<int>(rng() % tree.num_switches(level))});
      } else {
        switches_down.clear();
      }
      s->on_topology(view());
    }
    const std::string where = "op " + std::to_string(op);
    const auto list = call_service(*s, "tenant.list")["result"];
    std::set<std::string> listed;
    for (const auto& t : list) {
      listed.insert(t["name"].get<std::string>());
      ASSERT_NE(t["state"], "not placed") << where << ": " << t.dump();
    }
    ASSERT_EQ(listed, expected) << where;
    std::set<std::string> hosts_seen;
    std::string health;
    for (const auto& name : expected) {
      const auto t = call_service(*s, "tenant.get", {{"name", name}})["result"];
      for (const auto& h : t["hosts"])
        ASSERT_TRUE(hosts_seen.insert(h["leaf"].dump()).second) << where << ": host held twice";
      health += t.dump();
    }
    if (op % 25 == 24) {
      s = make();
      s->on_topology(view());
      std::string again;
      for (const auto& name : expected)
        again += call_service(*s, "tenant.get", {{"name", name}})["result"].dump();
      ASSERT_EQ(again, health) << where << ": a restart changed the tenants";
    }
  }
}
