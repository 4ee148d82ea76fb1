// The plugin's multicast core without OpenSM: trees from member port GUIDs under the tenants
// of the last routing run, audited; stale trees detected when the tenants change.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "core/controller.h"
#include "core/controller_testing.h"
#include "core/tenants.h"
#include "temp_files.h"
#include "topology/embedding.h"

using namespace laas;
using namespace laas::core;
using laas::test::TempDir;

TEST(PluginMulticast, TreesFromMemberGuidsFollowTheTenants) {
  TempDir dir;
  const auto tree = topology::FatTree::parse("pgft(2;8,4;1,4;1,2)");
  auto [fabric, emb] = topology::build_model_fabric(tree);
  const Guid sm = fabric.nodes[emb.switch_node[1][0]].port_guid;
  dir.write("tenants.yaml", "- name: a\n  hosts: 8\n- name: b\n  hosts: 10\n");
  Config config;
  config.state_dir = dir.path;
  Controller engine(config, [](service::LogLevel, const std::string&) {});
  EXPECT_FALSE(engine.multicast_tree({1, 2}, 0xC001).ok);  // nothing routed yet

  auto out = routed(engine, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_FALSE(out.multicast_changed);
  const auto alloc = load_allocations(dir.path + "/allocations.json");
  ASSERT_TRUE(alloc);
  std::vector<Guid> b;
  for (const auto& h : alloc->tenants.at("b").hosts) b.push_back(h.guid);
  ASSERT_EQ(b.size(), 10u);
  b.push_back(0xdeadbeef);  // not a port of the fabric: left out, with a warning
  const McastOutcome m = engine.multicast_tree(b, 0xC001);
  ASSERT_TRUE(m.ok) << m.error;
  EXPECT_EQ(m.group.rfind("tenant b", 0), 0u) << m.group;
  EXPECT_EQ(m.warnings.size(), 1u);
  ASSERT_GE(m.rows.size(), 2u);  // b spans two leaves

  // The rows, as MFTs of the fabric's switches, pass the engine's audit; b's rows pushed onto
  // one more up-link of a leaf without b fail it.
  std::map<Guid, int> node_of;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n)
    node_of[fabric.nodes[n].guid] = static_cast<int>(n);
  routing::Mfts mfts(fabric.nodes.size());
  for (const auto& [guid, ports] : m.rows) mfts.at(node_of.at(guid))[0xC001] = ports;
  auto report = engine.audit(fabric, out.tables, sm, nullptr, &mfts);
  EXPECT_EQ(report["multicast"]["violations"], 0) << report["multicast"].dump(1);
  EXPECT_EQ(report["multicast"]["groups"][0]["class"], "tenant");
  int spare = -1;
  for (int leaf = 0; leaf < tree.num_leaves() && spare < 0; ++leaf)
    if (mfts[emb.switch_node[0][leaf]].empty()) spare = emb.switch_node[0][leaf];
  ASSERT_GE(spare, 0);
  mfts[spare][0xC001] = {1};
  report = engine.audit(fabric, out.tables, sm, nullptr, &mfts);
  EXPECT_EQ(report["multicast"]["violations"], 1) << report["multicast"].dump(1);
  EXPECT_GE(report["violations"].get<long>(), 1);

  // Same tenants: trees stand. Another tenant: every tree must be rebuilt.
  out = routed(engine, fabric, sm);
  ASSERT_TRUE(out.ok);
  EXPECT_FALSE(out.multicast_changed);
  dir.write("tenants.yaml",
            "- name: a\n  hosts: 8\n- name: b\n  hosts: 10\n- name: c\n  hosts: 5\n");
  out = routed(engine, fabric, sm);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_TRUE(out.multicast_changed);
}
