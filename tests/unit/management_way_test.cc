// The management-way rule (allocator/management_way.h): no placement leaves a leaf shared by two
// or more owners without a free up-link, where the first-hop drop would cut some owner's hosts
// off the SM and the switches.
#include "allocator/management_way.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "allocator/cluster.h"
#include "allocator/placers.h"

using namespace laas::allocator;
using laas::topology::FatTree;

namespace {

// Leaves shared by two or more owners (tenants, the free pool, holders of its up-links) with
// no free up-link: what the rule forbids, counted over the whole state.
std::vector<int> leaves_cut_off(const LinkState& st) {
  const FatTree& t = st.tree();
  std::vector<int> out;
  for (int leaf = 0; leaf < t.num_leaves(); ++leaf) {
    if (st.free_column_count(1, leaf) > 0) continue;
    std::set<TenantIndex> owners;
    for (int s = 0; s < t.hosts_per_leaf(); ++s) {
      const TenantIndex o = st.host_owner(t.host_at(leaf, s));
      if (o != kReserved) owners.insert(o);
    }
    for (int c = 0; c < t.up_columns(1); ++c)
      if (st.link_owner(t.l1_link(leaf, c)) >= 0) owners.insert(st.link_owner(t.l1_link(leaf, c)));
    if (owners.size() >= 2) out.push_back(leaf);
  }
  return out;
}

std::unique_ptr<Placer> plain_laas() { return make_placer("laas"); }

// The placer where the switches drop packets between owners (qos TRUE).
std::unique_ptr<Placer> laas_keeping_way() { return make_placer("laas", true); }

Placement on_leaf(const FatTree& t, int leaf, std::vector<int> slots, std::vector<int> cols) {
  Placement p;
  for (int s : slots) p.hosts.push_back(t.host_at(leaf, s));
  for (int c : cols) p.links.push_back(t.l1_link(leaf, c));
  return p;
}

}  // namespace

// The outage of tests/integration/mgmt_shared_leaf.sh: on the demo tree, two 6-host tenants
// each take a full leaf and 2 hosts with 2 up-links of SW_L1_1. Plain LaaS does; the rule
// places the second elsewhere.
TEST(ManagementWay, DemoTreeTwoSixHostTenants) {
  const auto tree = FatTree::parse("xgft(2;4,8;1,4)");
  Cluster plain(tree, plain_laas());
  ASSERT_TRUE(plain.add("x", 6).ok());
  ASSERT_TRUE(plain.add("y", 6).ok());
  EXPECT_EQ(leaves_cut_off(plain.state()), std::vector<int>{1}) << "the case under test changed";
  Cluster c(tree, laas_keeping_way());
  ASSERT_TRUE(c.add("x", 6).ok());
  auto y = c.add("y", 6);
  ASSERT_TRUE(y.ok()) << y.message;
  EXPECT_EQ(y.tenant->placement.hosts.size(), 6u);
  EXPECT_TRUE(leaves_cut_off(c.state()).empty());
}

TEST(ManagementWay, LeafRule) {
  const auto tree = FatTree::parse("xgft(2;4,4;1,4)");
  LinkState st(tree);
  // An empty leaf: a tenant taking every host and up-link is its only owner.
  EXPECT_TRUE(keeps_management_way(st, 0, 4, 4));
  // Every up-link but one host left free: the free pool is an owner without a way out.
  EXPECT_FALSE(keeps_management_way(st, 0, 3, 4));
  EXPECT_TRUE(keeps_management_way(st, 0, 3, 3));
  st.assign(0, on_leaf(tree, 0, {0, 1}, {0, 1}));
  EXPECT_FALSE(keeps_management_way(st, 0, 2, 2));  // the demo's SW_L1_1
  EXPECT_TRUE(keeps_management_way(st, 0, 2, 1));
  EXPECT_TRUE(keeps_management_way(st, 0, 2, 0));  // a one-leaf tenant, no links
  // Tenant 0 itself taking more of its own leaf: it stays the only owner once nothing is free.
  EXPECT_TRUE(keeps_management_way(st, 0, 2, 2, 0));
  // A management host is no owner: its ports pass the first-hop drop everywhere.
  st.assign(kReserved, on_leaf(tree, 1, {0}, {}));
  EXPECT_TRUE(keeps_management_way(st, 1, 3, 4));
  // A tenant holding every up-link of a leaf where it has no host cuts off whoever has one.
  st.assign(1, on_leaf(tree, 2, {}, {0, 1, 2, 3}));
  EXPECT_FALSE(keeps_management_way(st, 2, 1, 0));
  EXPECT_TRUE(keeps_management_way(st, 2, 4, 0, 1));
  EXPECT_EQ(leaf_without_management_way(st, on_leaf(tree, 2, {0}, {})), 2);
  EXPECT_EQ(leaf_without_management_way(st, on_leaf(tree, 3, {0, 1}, {0, 1})), -1);
  EXPECT_EQ(leaf_without_management_way(st, on_leaf(tree, 0, {2, 3}, {2, 3})), 0);
}

// When only a placement cutting a leaf off exists, the refusal says so and names the leaf.
TEST(ManagementWay, RefusalNamesTheLeaf) {
  const auto tree = FatTree::parse("xgft(2;4,4;1,4)");
  Cluster c(tree, laas_keeping_way());
  Placement x = on_leaf(tree, 0, {0, 1, 2, 3}, {0, 1, 2, 3});
  Placement x1 = on_leaf(tree, 1, {0, 1}, {0, 1});
  x.hosts.insert(x.hosts.end(), x1.hosts.begin(), x1.hosts.end());
  x.links.insert(x.links.end(), x1.links.begin(), x1.links.end());
  ASSERT_TRUE(c.add_explicit("x", 6, x).ok());
  auto y = c.add("y", 6);
  ASSERT_TRUE(y.ok()) << y.message;
  EXPECT_TRUE(leaves_cut_off(c.state()).empty());
  // Left: 2 hosts and up-links 2-3 on SW_L1_1 and on y's remainder leaf: a 4-host tenant as
  // 2x2 would take both leaves' last up-links.
  ASSERT_EQ(c.state().free_hosts(), 4);
  auto plain = plain_laas()->place(c.state(), 4);
  ASSERT_TRUE(plain.placement) << "the case under test changed: " << plain.reason;
  const auto before = c.state().free_hosts();
  auto z = c.add("z", 4);
  EXPECT_EQ(z.status, Status::kRefused);
  EXPECT_NE(z.message.find("leaf SW_L1_1 would be shared by two or more owners with no free "
                           "up-link"),
            std::string::npos)
      << z.message;
  EXPECT_EQ(c.state().free_hosts(), before);
  // The host list an administrator gives is refused the same way.
  auto listed = c.add_on_hosts("z", plain.placement->hosts, true, nullptr);
  EXPECT_EQ(listed.status, Status::kRefused);
  EXPECT_NE(listed.message.find("leaf SW_L1_1 would be shared"), std::string::npos)
      << listed.message;
  EXPECT_FALSE(c.check_new_placement("z", 4, *plain.placement).ok());
  EXPECT_TRUE(c.check_explicit("z", 4, *plain.placement).ok());  // a saved tenant is restored
}

// A repair is a re-placement: it never takes a shared leaf's last free up-link.
TEST(ManagementWay, RepairKeepsTheWay) {
  const auto tree = FatTree::parse("xgft(2;4,4;1,4)");
  Cluster c(tree, laas_keeping_way());
  Placement x = on_leaf(tree, 0, {0, 1}, {0, 1});
  Placement x1 = on_leaf(tree, 1, {0, 1}, {0, 1});
  x.hosts.insert(x.hosts.end(), x1.hosts.begin(), x1.hosts.end());
  x.links.insert(x.links.end(), x1.links.begin(), x1.links.end());
  ASSERT_TRUE(c.add_explicit("x", 4, x).ok());
  ASSERT_TRUE(c.add_explicit("y", 2, on_leaf(tree, 1, {2, 3}, {})).ok());
  Faults f;
  f.links = {tree.l1_link(1, 0)};
  c.set_faults(f);
  c.reconcile();
  EXPECT_EQ(c.state().free_column_count(1, 1), 1) << "column 0 replaced by 2";
  f.links.push_back(tree.l1_link(1, 1));
  c.set_faults(f);
  c.reconcile();
  EXPECT_EQ(c.state().free_column_count(1, 1), 1) << "column 1 must not take SW_L1_1's last";
  EXPECT_TRUE(leaves_cut_off(c.state()).empty());
}

// Random sequences on 2- and 3-level, slimmed and parallel-link trees: no placement the laas
// placer makes ever cuts a leaf off (faults aside: they take up-links away after placement).
TEST(ManagementWay, NeverCutOffUnderChurn) {
  for (const char* spec : {"xgft(2;4,8;1,4)", "pgft(2;8,4;1,4;1,2)", "xgft(3;4,4,4;1,4,4)",
                           "pgft(3;4,4,3;1,2,2;1,2,2)"}) {
    const auto tree = FatTree::parse(spec);
    Cluster c(tree, laas_keeping_way());
    std::mt19937 rng(7);
    int next = 0, placed = 0;
    for (int op = 0; op < 3000; ++op) {
      if (rng() % 100 < 55 || c.tenants().empty()) {
        const int n = 1 + static_cast<int>(rng() % (tree.num_hosts() / 4));
        placed += c.add("t" + std::to_string(next++), n).ok();
      } else {
        auto it = c.tenants().begin();
        std::advance(it, rng() % c.tenants().size());
        ASSERT_TRUE(c.remove(std::string(it->first)).ok());
      }
      ASSERT_TRUE(leaves_cut_off(c.state()).empty()) << spec << " op " << op;
    }
    EXPECT_GT(placed, 300) << spec;
  }
}
