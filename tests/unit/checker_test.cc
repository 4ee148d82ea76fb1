// The checker must be able to fail: each rule is shown catching a deliberately broken state.
#include "check/checker.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "allocator/cluster.h"

using laas::check::check_all;
using laas::check::TenantView;
using laas::topology::FatTree;

namespace {

std::vector<std::string> rules(const std::vector<laas::check::Violation>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.rule);
  return out;
}

bool has_rule(const std::vector<laas::check::Violation>& v, const std::string& rule) {
  for (const auto& x : v)
    if (x.rule == rule) return true;
  return false;
}

class CheckerCatches : public ::testing::Test {
 protected:
  // The paper's walkthrough state: "4" = 4+4+2 on leaves 0-2, "1" = 2+4+4 on leaves 2-4.
  void SetUp() override {
    laas::allocator::Cluster c(tree, laas::allocator::make_placer("laas"));
    ASSERT_TRUE(c.add("4", 10).ok());
    ASSERT_TRUE(c.add("1", 10).ok());
    for (const auto& [name, t] : c.tenants())
      tenants.push_back({name, t.placement.hosts, t.placement.links, true});
    ASSERT_TRUE(check_all(tree, tenants, {}).empty());
  }
  TenantView& tenant(const std::string& name) { return tenants[name == "1" ? 0 : 1]; }

  FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  std::vector<TenantView> tenants;
};

}  // namespace

TEST_F(CheckerCatches, SharedHost) {
  tenant("1").hosts.push_back(0);  // comp-1 belongs to "4"
  EXPECT_TRUE(has_rule(check_all(tree, tenants, {}), "host-shared"));
}

TEST_F(CheckerCatches, SharedLink) {
  tenant("1").links.push_back(tree.l1_link(0, 0));
  EXPECT_TRUE(has_rule(check_all(tree, tenants, {}), "link-shared"));
}

// A tenant keeps a link that fails under it (degraded, or repaired); holding it is no
// violation -- handing it to anyone else would be.
TEST_F(CheckerCatches, FaultyLinkHeldIsNotAViolation) {
  EXPECT_TRUE(check_all(tree, tenants, {tree.l1_link(3, 1)}).empty());
}

TEST_F(CheckerCatches, Theorem1UnevenLeaves) {
  auto& t = tenant("4");  // drop comp-1: leaves hold 3, 4, 2 hosts
  t.hosts.erase(t.hosts.begin());
  EXPECT_TRUE(has_rule(check_all(tree, tenants, {}), "theorem1"))
      << rules(check_all(tree, tenants, {})).size();
}

TEST_F(CheckerCatches, Theorem2DifferentSpines) {
  auto& t = tenant("4");  // leaf 1 swaps its column 3 for nothing and leaf 0 keeps all
  t.links.erase(std::find(t.links.begin(), t.links.end(), tree.l1_link(1, 3)));
  EXPECT_TRUE(has_rule(check_all(tree, tenants, {}), "theorem2"));
}

TEST_F(CheckerCatches, RemainderNotASubset) {
  auto& t = tenant("1");  // R leaf SW_L1_2 keeps columns 2,3; give leaves 3,4 columns 0,1 only
  t.links.erase(
      std::remove_if(t.links.begin(), t.links.end(),
                     [&](int l) { return tree.link_switch(l) != 2 && tree.link_column(l) >= 2; }),
      t.links.end());
  auto v = check_all(tree, tenants, {});
  EXPECT_TRUE(has_rule(v, "theorem2") || has_rule(v, "too-few-links"));
}

TEST_F(CheckerCatches, LinkWithoutHosts) {
  tenant("4").links.push_back(tree.l1_link(7, 0));
  EXPECT_TRUE(has_rule(check_all(tree, tenants, {}), "link-off-tenant"));
}

TEST_F(CheckerCatches, WrongTotals) {
  auto v = laas::check::check_totals(tree, tenants, {20, 21, 0});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].rule, "counts");
}

TEST(CheckerAcrossPods, AsymmetricLevel2AndPartialLeaves) {
  const auto tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  laas::allocator::Cluster c(tree, laas::allocator::make_placer("laas"));
  ASSERT_TRUE(c.add("big", 24).ok());  // 6 whole leaves over pods
  const auto& p = c.find("big")->placement;
  ASSERT_GT(p.shape.pods.q, 0);
  TenantView good{"big", p.hosts, p.links, true};
  ASSERT_TRUE(check_all(tree, {good}, {}).empty());
  // One level-2 switch swaps a column: the FBG_2 are no longer identical.
  TenantView skew = good;
  for (auto& l : skew.links)
    if (tree.link_level(l) == 2 &&
        tree.link_switch(l) ==
            tree.level2_switch(tree.pod_of_leaf(tree.leaf_of_host(p.hosts[0])), 1)) {
      const int col = tree.link_column(l);
      l = tree.l2_link(tree.link_switch(l), (col + 1) % tree.up_columns(2));
      break;
    }
  std::sort(skew.links.begin(), skew.links.end());
  skew.links.erase(std::unique(skew.links.begin(), skew.links.end()), skew.links.end());
  EXPECT_FALSE(check_all(tree, {skew}, {}).empty());
  // A leaf missing one up-link no longer reaches the spines the other leaves use.
  TenantView partial = good;
  partial.links.erase(partial.links.begin());
  auto v = check_all(tree, {partial}, {});
  EXPECT_TRUE(has_rule(v, "theorem2") || has_rule(v, "too-few-links")) << v.size();
}

// Partial leaves across pods: 2 hosts on each of 4 leaves in 2 pods, columns {0,1} everywhere,
// 2 level-2 up-links on switches 0 and 1 of both pods (the same columns per FBG_2).
TEST(CheckerAcrossPods, PartialLeavesFollowTheoremsPerFbg2) {
  const auto tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  TenantView t{"p", {}, {}, true};
  for (int leaf : {0, 1, 4, 5}) {
    t.hosts.push_back(tree.host_at(leaf, 0));
    t.hosts.push_back(tree.host_at(leaf, 1));
    for (int c : {0, 1}) t.links.push_back(tree.l1_link(leaf, c));
  }
  for (int pod : {0, 1})
    for (int b : {0, 1})
      for (int c : {2, 3}) t.links.push_back(tree.l2_link(tree.level2_switch(pod, b), c));
  std::sort(t.links.begin(), t.links.end());
  EXPECT_TRUE(check_all(tree, {t}, {}).empty());
  // Pod 1's switch 0 goes up on other columns than pod 0's: FBG_2 0 breaks Theorem 2.
  TenantView bad = t;
  for (auto& l : bad.links)
    if (l == tree.l2_link(tree.level2_switch(1, 0), 3))
      l = tree.l2_link(tree.level2_switch(1, 0), 1);
  std::sort(bad.links.begin(), bad.links.end());
  EXPECT_TRUE(has_rule(check_all(tree, {bad}, {}), "theorem2-l2"));
  // Three leaves in pod 0, one in pod 1, but pod 1's leaf is not the tenant's only R leaf.
  TenantView uneven = t;
  uneven.hosts.push_back(tree.host_at(2, 0));
  for (int c : {0, 1}) uneven.links.push_back(tree.l1_link(2, c));
  std::sort(uneven.hosts.begin(), uneven.hosts.end());
  std::sort(uneven.links.begin(), uneven.links.end());
  EXPECT_FALSE(check_all(tree, {uneven}, {}).empty());
}

// On a rail-optimized tree (leaf i is rail i % 2 here) a tenant's ports on each rail
// form their own placement: one remainder leaf per rail is legal, two on one rail are not, and
// rails that share no column cannot reach each other.
namespace {

struct RailCase {
  FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  std::vector<int> rail{0, 1, 0, 1, 0, 1, 0, 1};
  // Servers 4 + 2 on each rail: leaves 0 and 1 (group 0) hold 4, leaves 2 and 3 hold 2.
  TenantView tenant() const {
    TenantView t{"r", {}, {}, true};
    for (int leaf : {0, 1})
      for (int s = 0; s < 4; ++s) t.hosts.push_back(tree.host_at(leaf, s));
    for (int leaf : {2, 3})
      for (int s = 0; s < 2; ++s) t.hosts.push_back(tree.host_at(leaf, s));
    for (int leaf : {0, 1})
      for (int c = 0; c < 4; ++c) t.links.push_back(tree.l1_link(leaf, c));
    for (int leaf : {2, 3})
      for (int c = 0; c < 2; ++c) t.links.push_back(tree.l1_link(leaf, c));
    t.leaf_rail = &rail;
    return t;
  }
};

}  // namespace

TEST(CheckerRails, OneRemainderPerRailIsLegal) {
  RailCase r;
  EXPECT_TRUE(laas::check::check_tenant_shape(r.tree, r.tenant()).empty());
  // Without the rails the same tenant has two remainder leaves: refused, as on any tree.
  auto flat = r.tenant();
  flat.leaf_rail = nullptr;
  EXPECT_TRUE(has_rule(laas::check::check_tenant_shape(r.tree, flat), "theorem1"));
}

TEST(CheckerRails, CatchesTwoRemaindersOnOneRail) {
  RailCase r;
  auto t = r.tenant();
  t.hosts.push_back(r.tree.host_at(4, 0));  // a third leaf of rail 0 holding 1
  t.links.push_back(r.tree.l1_link(4, 0));
  EXPECT_TRUE(has_rule(laas::check::check_tenant_shape(r.tree, t), "theorem1"));
}

TEST(CheckerRails, CatchesRailsOnDifferentColumns) {
  RailCase r;
  auto t = r.tenant();
  t.links.clear();
  // Both rails' full leaves on columns 0-3; rail 0's remainder on 0-1, rail 1's on 2-3.
  for (int leaf : {0, 1})
    for (int c = 0; c < 4; ++c) t.links.push_back(r.tree.l1_link(leaf, c));
  t.links.push_back(r.tree.l1_link(2, 0));
  t.links.push_back(r.tree.l1_link(2, 1));
  t.links.push_back(r.tree.l1_link(3, 2));  // rail 1's remainder on columns 2-3
  t.links.push_back(r.tree.l1_link(3, 3));
  std::sort(t.links.begin(), t.links.end());
  EXPECT_TRUE(has_rule(laas::check::check_tenant_shape(r.tree, t), "rail-unreachable"));
}

TEST(CheckerRails, CatchesFullLeavesOfRailsOnDifferentColumns) {
  FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  std::vector<int> rail{0, 1, 0, 1, 0, 1, 0, 1};
  // 2 servers on each of 2 groups: rail 0 over columns {0,1}, rail 1 over {2,3}.
  TenantView t{"r", {}, {}, true};
  for (int leaf : {0, 1, 2, 3})
    for (int s = 0; s < 2; ++s) t.hosts.push_back(tree.host_at(leaf, s));
  for (int leaf : {0, 2})
    for (int c : {0, 1}) t.links.push_back(tree.l1_link(leaf, c));
  for (int leaf : {1, 3})
    for (int c : {2, 3}) t.links.push_back(tree.l1_link(leaf, c));
  std::sort(t.links.begin(), t.links.end());
  t.leaf_rail = &rail;
  EXPECT_TRUE(has_rule(laas::check::check_tenant_shape(tree, t), "theorem2-rails"));
}
