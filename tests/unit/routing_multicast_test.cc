#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "allocator/cluster.h"
#include "allocator/placers.h"
#include "placements.h"
#include "routing/mft_dump.h"
#include "routing/multicast.h"

namespace laas::routing {
namespace {

using test::host_range;
using test::placement;

using allocator::Placement;
using topology::FatTree;

// The lab tree pgft(2;8,4;1,4;1,2): 4 leaves of 8 hosts, 4 spines, 2 parallel links per
// (leaf, spine); leaf up-column c goes to spine c / 2. Tenant b: hosts 8..17 (leaf 1 and two
// on leaf 2) over spine 0; tenant c: hosts 20..22 and 24..25 over spine 1; b and c share leaf
// 2. Host 31 is a management host.
class MulticastFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    std::tie(fabric, emb) = topology::build_model_fabric(tree);
    std::vector<HostId> c_hosts = host_range(20, 22);
    c_hosts.push_back(24);
    c_hosts.push_back(25);
    policy.tenants = {{"b", placement(tree, host_range(8, 17), {{1, {0, 1}}, {2, {0, 1}}})},
                      {"c", placement(tree, c_hosts, {{2, {2, 3}}, {3, {2, 3}}})}};
    policy.management_hosts = {31};
  }

  int owner(LinkId l) const {
    for (int ti = 0; ti < static_cast<int>(policy.tenants.size()); ++ti) {
      const auto& links = policy.tenants[ti].placement.links;
      if (std::find(links.begin(), links.end(), l) != links.end()) return ti;
    }
    return -1;
  }

  // The switches' MFTs holding the given groups.
  Mfts mfts(const std::vector<std::pair<std::uint16_t, McastTree>>& groups) const {
    Mfts out(fabric.nodes.size());
    for (const auto& [mlid, t] : groups)
      for (auto& [node, ports] : physical_ports(emb, t)) out[node][mlid] = ports;
    return out;
  }

  AuditInput input() const {
    AuditInput in;
    in.fabric = &fabric;
    in.embedding = &emb;
    in.tree = &tree;
    for (const auto& t : policy.tenants) in.tenants.push_back({t.key, t.placement});
    in.management_hosts = policy.management_hosts;
    return in;
  }

  int node(int level, int index) const { return emb.switch_node[level - 1][index]; }
  // Physical port of model port `port` of switch (level, index).
  int phys(int level, int index, int port) const { return emb.port_map[level - 1][index][port]; }

  FatTree tree = FatTree::parse("pgft(2;8,4;1,4;1,2)");
  topology::Fabric fabric;
  topology::Embedding emb;
  McastPolicy policy;
};

TEST_F(MulticastFixture, TenantGroupStaysOnTheTenantsLinks) {
  const McastTree t = build_multicast_tree(tree, policy, {host_range(8, 17), {}, 0xC001});
  EXPECT_EQ(t.cls, McastClass::kTenant);
  EXPECT_EQ(t.tenant, 0);
  EXPECT_TRUE(t.unreached.empty());
  ASSERT_FALSE(t.links.empty());
  for (LinkId l : t.links) EXPECT_EQ(owner(l), 0) << "link " << l;
  EXPECT_TRUE(t.exempt_links.empty());
  // Leaf 1 reaches its 8 hosts and one up-link; leaf 2 its two b hosts and one up-link only
  // (never c's hosts 20..22 beside them); the root is spine 0.
  const auto& leaf1 = t.ports.at({1, 1});
  EXPECT_EQ(leaf1.size(), 9u);
  const auto& leaf2 = t.ports.at({1, 2});
  EXPECT_EQ(leaf2.size(), 3u);
  for (HostId h : {16, 17})
    EXPECT_NE(std::find(leaf2.begin(), leaf2.end(), tree.host_peer(h).port), leaf2.end());
  EXPECT_TRUE(t.ports.count({2, 0}));
  EXPECT_EQ(t.ports.size(), 3u);
}

TEST_F(MulticastFixture, TenantGroupDoesNotChurnWhenOthersComeAndGo) {
  const McastTree with_c = build_multicast_tree(tree, policy, {host_range(8, 17), {}, 5});
  McastPolicy alone = policy;
  alone.tenants.pop_back();  // c leaves
  const McastTree without_c = build_multicast_tree(tree, alone, {host_range(8, 17), {}, 5});
  EXPECT_EQ(with_c.ports, without_c.ports);
  alone.tenants.push_back({"d", placement(tree, host_range(0, 7), {{0, {2, 3, 4, 5}}})});
  EXPECT_EQ(build_multicast_tree(tree, alone, {host_range(8, 17), {}, 5}).ports, with_c.ports);
}

TEST_F(MulticastFixture, TenantGroupAttachesManagementOverFreeLinksOnly) {
  std::vector<HostId> members = host_range(8, 17);
  members.push_back(31);
  const McastTree t = build_multicast_tree(tree, policy, {members, {}, 7});
  EXPECT_EQ(t.cls, McastClass::kTenant);
  EXPECT_TRUE(t.unreached.empty());
  bool free_used = false;
  for (LinkId l : t.links) {
    EXPECT_NE(owner(l), 1) << "tenant b's group on c's link " << l;
    free_used |= owner(l) == -1;
  }
  EXPECT_TRUE(free_used);  // leaf 3 hangs off spine 0 by a free link
}

TEST_F(MulticastFixture, SharedGroupPrefersFreeLinks) {
  const McastTree t = build_multicast_tree(tree, policy, {{8, 9, 20, 24}, {}, 3});
  EXPECT_EQ(t.cls, McastClass::kShared);
  EXPECT_TRUE(t.unreached.empty());
  for (LinkId l : t.links) EXPECT_EQ(owner(l), -1) << "link " << l;
  EXPECT_TRUE(t.exempt_links.empty());
}

TEST_F(MulticastFixture, SharedGroupNeverUsesANonMembersLinks) {
  // Leaf 2's free up-links are faulty: a free host there can only be reached over b's or c's
  // links, and neither tenant is a member.
  for (int c : {4, 5, 6, 7}) policy.faulty_links.push_back(tree.l1_link(2, c));
  const McastTree t = build_multicast_tree(tree, policy, {{0, 18, 26}, {}, 1});
  EXPECT_EQ(t.cls, McastClass::kShared);
  EXPECT_EQ(t.unreached, std::vector<HostId>{18});
  EXPECT_FALSE(t.warnings.empty());
  for (LinkId l : t.links) EXPECT_EQ(owner(l), -1);
  // With a b member in the group, b's links may carry it (an exemption).
  const McastTree u = build_multicast_tree(tree, policy, {{0, 8, 18, 26}, {}, 1});
  EXPECT_TRUE(u.unreached.empty());
  EXPECT_FALSE(u.exempt_links.empty());
  for (LinkId l : u.exempt_links) EXPECT_EQ(owner(l), 0);
}

TEST_F(MulticastFixture, TenantMembersBeyondTheTenantsLinksAreReported) {
  for (int c : {0, 1}) policy.faulty_links.push_back(tree.l1_link(2, c));
  const McastTree t = build_multicast_tree(tree, policy, {host_range(8, 17), {}, 0});
  EXPECT_EQ(t.unreached, (std::vector<HostId>{16, 17}));
  for (LinkId l : t.links) EXPECT_EQ(owner(l), 0);
}

TEST_F(MulticastFixture, OneMemberOrOneLeafNeedsNoLinks) {
  EXPECT_TRUE(build_multicast_tree(tree, policy, {{8}, {}, 0}).ports.empty());
  const McastTree t = build_multicast_tree(tree, policy, {{8, 9, 10}, {}, 0});
  EXPECT_TRUE(t.links.empty());
  EXPECT_EQ(t.ports.at({1, 1}).size(), 3u);
}

TEST_F(MulticastFixture, InconsistentInputIsRefused) {
  EXPECT_THROW(build_multicast_tree(tree, policy, {{99}, {}, 0}), RoutingError);
  policy.tenants[1].placement.hosts.push_back(8);  // b's host held by c too
  EXPECT_THROW(build_multicast_tree(tree, policy, {{8, 9}, {}, 0}), RoutingError);
}

TEST_F(MulticastFixture, AuditPassesTheBuiltTrees) {
  const auto b = build_multicast_tree(tree, policy, {host_range(8, 17), {}, 0xC001});
  const auto c = build_multicast_tree(tree, policy, {{20, 21, 22, 24, 25}, {}, 0xC002});
  const auto shared = build_multicast_tree(tree, policy, {host_range(0, 30), {}, 0xC000});
  const auto r = audit_multicast(input(), mfts({{0xC001, b}, {0xC002, c}, {0xC000, shared}}));
  EXPECT_TRUE(r.ok()) << to_json(r).dump(1);
  ASSERT_EQ(r.groups.size(), 3u);
  EXPECT_EQ(r.groups[0].cls, "shared");
  EXPECT_EQ(r.groups[0].receivers, 31);
  EXPECT_EQ(r.groups[1].cls, "tenant");
  EXPECT_EQ(r.groups[1].tenant, "b");
  EXPECT_EQ(r.groups[1].receivers, 10);
  EXPECT_EQ(r.groups[2].tenant, "c");
}

TEST_F(MulticastFixture, AuditCatchesATenantGroupOnAnotherTenantsLink) {
  const auto b = build_multicast_tree(tree, policy, {host_range(8, 17), {}, 0xC001});
  Mfts m = mfts({{0xC001, b}});
  // Leaf 2 also forwards b's group up c's link (column 2 -> spine 1, model port 3).
  auto& row = m[node(1, 2)][0xC001];
  row.push_back(phys(1, 2, 3));
  std::sort(row.begin(), row.end());
  const auto r = audit_multicast(input(), m);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.count(McastFindingKind::kEscapes), 1) << to_json(r).dump(1);
  // ... and onto a free link: also an escape for a group without management receivers.
  row.push_back(phys(1, 2, 5));
  EXPECT_EQ(audit_multicast(input(), m).count(McastFindingKind::kEscapes), 2);
}

TEST_F(MulticastFixture, AuditCatchesLoopsAndMissedReceivers) {
  const auto b = build_multicast_tree(tree, policy, {host_range(8, 17), {}, 0xC001});
  Mfts m = mfts({{0xC001, b}});
  // Both parallel links of leaf 1 to spine 0, at both ends: a cycle.
  const int up = b.ports.at({1, 1})[0];  // the up-port leaf 1 uses (up-ports come first)
  const int other = up == 1 ? 2 : 1;
  m[node(1, 1)][0xC001].push_back(phys(1, 1, other));
  const auto down = tree.parent_of(1, 1, other - 1);
  m[node(2, 0)][0xC001].push_back(phys(2, 0, down.port));
  const auto r = audit_multicast(input(), m);
  EXPECT_EQ(r.count(McastFindingKind::kLoop), 1) << to_json(r).dump(1);

  Mfts cut = mfts({{0xC001, b}});
  auto& spine = cut[node(2, 0)][0xC001];
  spine.erase(std::remove(spine.begin(), spine.end(), phys(2, 0, tree.parent_of(1, 2, 0).port)),
              spine.end());
  spine.erase(std::remove(spine.begin(), spine.end(), phys(2, 0, tree.parent_of(1, 2, 1).port)),
              spine.end());
  const auto r2 = audit_multicast(input(), cut);
  EXPECT_GT(r2.count(McastFindingKind::kUnreachable), 0) << to_json(r2).dump(1);
}

TEST_F(MulticastFixture, AuditCatchesForeignLinksAndNonMembers) {
  const auto shared = build_multicast_tree(tree, policy, {{0, 26}, {}, 0xC003});
  Mfts m = mfts({{0xC003, shared}});
  EXPECT_TRUE(audit_multicast(input(), m).ok());
  // The management-free shared group pushed onto b's link of leaf 1.
  m[node(1, 1)][0xC003] = {phys(1, 1, 1)};
  const auto r = audit_multicast(input(), m);
  EXPECT_EQ(r.count(McastFindingKind::kForeignLink), 1) << to_json(r).dump(1);
  // Receivers that did not join: known membership says host 26 only joined with host 0.
  const McastMembership members = {{0xC003, {0}}};
  const auto r2 = audit_multicast(input(), mfts({{0xC003, shared}}), &members);
  EXPECT_EQ(r2.count(McastFindingKind::kNonMember), 1);
}

TEST_F(MulticastFixture, DumpRoundTripsAndRejectsBadLines) {
  const auto b = build_multicast_tree(tree, policy, {host_range(8, 17), {}, 0xC001});
  const auto s = build_multicast_tree(tree, policy, {host_range(0, 30), {}, 0xC000});
  const Mfts m = mfts({{0xC001, b}, {0xC000, s}});
  std::string text;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n)
    if (fabric.nodes[n].is_switch) text += format_ibroute_mft(fabric, static_cast<int>(n), m[n]);
  std::istringstream in(text);
  const Mfts back = mfts_by_node(fabric, parse_ibroute_mft(in, "dump"));
  EXPECT_EQ(back, m);

  // As ibroute -M prints it (from a real run under ibsim).
  std::istringstream real(
      "Multicast mlids [0xc000-0xc3ff] of switch Lid 7 guid 0x0000000000200004 (SW_L1_0):\n"
      "            0                   1             \n"
      "     Ports: 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 \n"
      " MLid\n"
      "0xc001        x               x x             \n"
      "1 valid mlids dumped \n");
  const auto d = parse_ibroute_mft(real, "real");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].lid, 7);
  EXPECT_EQ(d[0].name, "SW_L1_0");
  EXPECT_EQ(d[0].mft.at(0xC001), (std::vector<int>{1, 9, 10}));

  std::istringstream bad(
      "Multicast mlids [0xc000-0xc3ff] of switch Lid 7 guid 0x0000000000200004 (SW_L1_0):\n"
      "     Ports: 0 1 2 3\n"
      "0xc001    y\n");
  try {
    parse_ibroute_mft(bad, "bad.txt");
    FAIL() << "accepted a bad row";
  } catch (const DumpError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:3"), std::string::npos) << e.what();
  }
}

// Tenants placed by the real allocator on 2- and 3-level trees: every tenant's group (all its
// hosts) stays on its links and reaches every member, a group of everyone reaches everyone, and
// the audit of the resulting tables passes.
TEST(MulticastWithAllocator, EveryTenantsGroupStaysOnItsLinks) {
  for (const char* spec : {"pgft(2;8,4;1,4;1,2)", "xgft(3;4,4,4;1,4,4)", "xgft(3;4,4,3;1,2,2)"}) {
    const FatTree tree = FatTree::parse(spec);
    allocator::Cluster cluster(tree, allocator::make_placer("laas"));
    const int sizes[] = {8, 10, 5, 3, 6, 2};
    for (int i = 0; i < 6; ++i) cluster.add("t" + std::to_string(i), sizes[i]);
    McastPolicy policy;
    for (const auto& [name, t] : cluster.tenants()) policy.tenants.push_back({name, t.placement});
    ASSERT_GE(policy.tenants.size(), 3u) << spec;
    auto [fabric, emb] = topology::build_model_fabric(tree);
    Mfts mfts(fabric.nodes.size());
    std::uint16_t mlid = 0xC000;
    std::vector<HostId> everyone;
    for (HostId h = 0; h < tree.num_hosts(); ++h) everyone.push_back(h);
    const auto all = build_multicast_tree(tree, policy, {everyone, {}, mlid});
    EXPECT_TRUE(all.unreached.empty()) << spec;
    for (auto& [node, ports] : physical_ports(emb, all)) mfts[node][mlid] = ports;
    for (int ti = 0; ti < static_cast<int>(policy.tenants.size()); ++ti) {
      const auto& p = policy.tenants[ti].placement;
      const auto t = build_multicast_tree(tree, policy, {p.hosts, {}, ++mlid});
      EXPECT_EQ(t.tenant, ti) << spec;
      EXPECT_TRUE(t.unreached.empty()) << spec << " " << policy.tenants[ti].key;
      for (LinkId l : t.links)
        EXPECT_TRUE(std::binary_search(p.links.begin(), p.links.end(), l))
            << spec << " " << policy.tenants[ti].key << " link " << l;
      for (auto& [node, ports] : physical_ports(emb, t)) mfts[node][mlid] = ports;
    }
    AuditInput in;
    in.fabric = &fabric;
    in.embedding = &emb;
    in.tree = &tree;
    for (const auto& t : policy.tenants) in.tenants.push_back({t.key, t.placement});
    const auto r = audit_multicast(in, mfts);
    EXPECT_TRUE(r.ok()) << spec << "\n" << to_json(r).dump(1);
    EXPECT_EQ(r.groups.size(), policy.tenants.size() + 1) << spec;
  }
}

}  // namespace
}  // namespace laas::routing
