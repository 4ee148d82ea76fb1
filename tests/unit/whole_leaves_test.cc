// allocator::whole_leaves: no two owners share a leaf (laas-sdn's default: its SM sets no
// SL2VL first-hop drop, so tenants sharing a leaf would be separated by P_Keys only).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "allocator/cluster.h"
#include "allocator/placer.h"
#include "check/checker.h"
#include "cluster_views.h"

using namespace laas::allocator;
using laas::topology::FatTree;

namespace {

// leaf -> the tenants holding a host on it.
std::map<int, std::set<std::string>> owners_by_leaf(const Cluster& c) {
  std::map<int, std::set<std::string>> out;
  for (const auto& [name, t] : c.tenants())
    for (int h : t.placement.hosts) out[c.tree().leaf_of_host(h)].insert(name);
  return out;
}

int shared_leaves(const Cluster& c) {
  int n = 0;
  for (const auto& [leaf, names] : owners_by_leaf(c)) n += names.size() > 1;
  return n;
}

}  // namespace

// 4 leaves of 8 hosts: tenants of 3, 3 and 2 hosts fit on one leaf without the option (LaaS
// packs them); with it each takes a leaf of its own, and a fifth tenant finds no leaf.
TEST(WholeLeaves, NoTwoOwnersShareALeaf) {
  const auto tree = FatTree::parse("xgft(2;8,4;1,4)");
  Cluster packed(tree, make_placer("laas", false, false));
  Cluster whole(tree, make_placer("laas", false, true));
  for (auto* c : {&packed, &whole})
    for (auto [name, n] : {std::pair{"a", 3}, {"b", 3}, {"c", 2}})
      ASSERT_TRUE(c->add(name, n).ok()) << name;
  EXPECT_GT(shared_leaves(packed), 0);  // the test can fail: without the option they share
  EXPECT_EQ(shared_leaves(whole), 0);
  EXPECT_EQ(owners_by_leaf(whole).size(), 3u);
  ASSERT_TRUE(whole.add("d", 8).ok());  // the last free leaf, whole
  const auto refused = whole.add("e", 1);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message.find("whole_leaves"), std::string::npos) << refused.message;
  EXPECT_EQ(shared_leaves(whole), 0);
  EXPECT_TRUE(laas::check::check_all(tree, laas::test::views(whole), {}).empty());
}

// A tenant across leaves leaves its last leaf's free hosts to nobody else; its removal returns
// the leaf. Management hosts (reserved) are no owner: a tenant may take their leaf.
TEST(WholeLeaves, ReleasedLeavesReturnAndManagementIsNoOwner) {
  const auto tree = FatTree::parse("xgft(2;8,4;1,4)");
  Cluster c(tree, make_placer("laas", false, true));
  c.reserve({0});
  ASSERT_TRUE(c.add("a", 7).ok());  // on leaf 0 beside the management host
  EXPECT_EQ(tree.leaf_of_host(c.find("a")->placement.hosts.front()), 0);
  ASSERT_TRUE(c.add("b", 10).ok());  // leaf 1 whole and two hosts of leaf 2
  ASSERT_TRUE(c.add("c", 8).ok());   // leaf 3
  EXPECT_EQ(shared_leaves(c), 0);
  EXPECT_FALSE(c.add("d", 1).ok());  // six free hosts on leaf 2, all b's leaf
  ASSERT_TRUE(c.remove("b").ok());
  ASSERT_TRUE(c.add("d", 1).ok());
  EXPECT_EQ(shared_leaves(c), 0);
}
