// Golden files for every export format on the paper's demo fabric xgft(2;4,8;1,4): tenant "4"
// (comp-1..comp-10 over SW_L1_0/1 ports 1-4 and SW_L1_2 ports 1-2) and tenant "1"
// (comp-11..comp-20 over SW_L1_2 ports 3-4 and SW_L1_3/4 ports 1-4). GUIDs, LIDs and cabling
// come from build_model_fabric, the scheme ibsim uses.
//
// Regenerate after an intended change: LAAS_UPDATE_GOLDEN=1 ./laas_unit_tests
// --gtest_filter='ExportGolden*', then review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "export/openstack.h"
#include "export/partitions.h"
#include "export/records.h"
#include "export/routing_chains.h"
#include "export/slurm.h"
#include "topology/embedding.h"

namespace laas::exports {
namespace {

std::string golden_dir() {
#ifdef LAAS_GOLDEN_DIR
  return std::string(LAAS_GOLDEN_DIR) + "/export/";
#else
  std::string f = __FILE__;
  return f.substr(0, f.find_last_of('/')) + "/../golden/export/";
#endif
}

std::string read(const std::string& name) {
  std::ifstream in(golden_dir() + name, std::ios::binary);
  if (!in) return "<missing golden file " + golden_dir() + name + ">";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void expect_golden(const std::string& name, const std::string& actual) {
  if (const char* u = std::getenv("LAAS_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(golden_dir() + name, std::ios::binary) << actual;
    return;
  }
  EXPECT_EQ(read(name), actual) << "golden file " << name << " differs";
}

struct Demo {
  topology::FatTree tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  topology::Fabric fabric;
  topology::Embedding emb;
  std::vector<TenantRecord> tenants;

  Demo() {
    std::tie(fabric, emb) = topology::build_model_fabric(tree);
    tenants.push_back(tenant("4", 1, 10, {{0, {1, 2, 3, 4}}, {1, {1, 2, 3, 4}}, {2, {1, 2}}}));
    tenants.push_back(tenant("1", 11, 20, {{2, {3, 4}}, {3, {1, 2, 3, 4}}, {4, {1, 2, 3, 4}}}));
  }

  int node(const std::string& name) const {
    for (std::size_t i = 0; i < fabric.nodes.size(); ++i)
      if (fabric.nodes[i].name == name) return static_cast<int>(i);
    ADD_FAILURE() << "no node " << name;
    return 0;
  }

  TenantRecord tenant(const std::string& name, int first, int last,
                      const std::vector<std::pair<int, std::vector<int>>>& leaf_ports) const {
    TenantRecord t;
    t.name = name;
    for (int n = first; n <= last; ++n) {
      const int id = node("comp-" + std::to_string(n));
      t.hosts.push_back(records::host_endpoint(fabric.nodes[id].name, fabric.nodes[id].port_guid,
                                               fabric.lid_of(id)));
    }
    for (const auto& [leaf, ports] : leaf_ports) {
      const int l = node("SW_L1_" + std::to_string(leaf));
      for (int p : ports) {
        const auto& cable = fabric.nodes[l].ports[p];
        const auto& peer = fabric.nodes[cable.peer_node];
        t.links.push_back({{fabric.nodes[l].name, fabric.nodes[l].guid, p},
                           {peer.name, peer.guid, cable.peer_port}});
      }
    }
    return t;
  }
};

TEST(ExportGolden, DemoRecordsMatchTheModelFabric) {
  Demo d;
  ASSERT_EQ(d.tenants[0].hosts.size(), 10u);
  EXPECT_EQ(d.tenants[0].hosts[0].guid, 0x100001u);  // comp-1: 0x100000 + 2*0 + 1
  EXPECT_EQ(d.tenants[1].hosts[9].guid, 0x100000u + 2 * 19 + 1);
  // SW_L1_2 port 3 goes to SW_L2_2's down-port 3 (leaf 2 + 1).
  EXPECT_EQ(d.tenants[1].links[0].upper.name, "SW_L2_2");
  EXPECT_EQ(d.tenants[1].links[0].upper.port, 3);
}

TEST(ExportGolden, Partitions) {
  Demo d;
  expect_golden("partitions.conf", generate_partitions(d.tenants, {}));
}

TEST(ExportGolden, PartitionsOverAnAdministratorsBaseFile) {
  // The base file holds P_Key 0x6698, tenant "4"'s hash: "4" probes on to 0x6699.
  Demo d;
  PartitionOptions o;
  o.base_text = read("partitions_base.conf");
  o.management = {{"SELF", Membership::kFull}, {"0x0002c90300001234", Membership::kLimited}};
  const auto out = generate_partitions(d.tenants, o);
  expect_golden("partitions_with_base.conf", out);
  EXPECT_NE(out.find("laas_4=0x6699"), std::string::npos);
  // Regenerating over its own output changes nothing.
  o.base_text = out;
  EXPECT_EQ(generate_partitions(d.tenants, o), out);
}

TEST(ExportGolden, RoutingChains) {
  Demo d;
  const auto tree = tree_from_fabric(d.tree, d.fabric, d.emb);
  const auto files = generate_routing_chains(d.tenants, &tree, {});
  expect_golden("port_groups.conf", files.port_groups);
  expect_golden("topologies.conf", files.topologies);
  expect_golden("routing_chains.conf", files.chains);
}

TEST(ExportGolden, RoutingChainsByHostNameWithFallback) {
  Demo d;
  RoutingChainsOptions o;
  o.host_match = RoutingChainsOptions::HostMatch::kName;
  o.fallback_engine = "updn";
  const auto files = generate_routing_chains(d.tenants, nullptr, o);
  expect_golden("port_groups_by_name.conf", files.port_groups);
  expect_golden("routing_chains_fallback.conf", files.chains);
}

SlurmOptions slurm_options() {
  SlurmOptions o;
  for (int n = 1; n <= 10; ++n) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "node%03d", n);
    o.node_names["comp-" + std::to_string(n)] = buf;
  }
  return o;
}

TEST(ExportGolden, Slurm) {
  Demo d;
  const auto o = slurm_options();
  expect_golden("slurm_topology.conf",
                generate_slurm_topology(tree_from_fabric(d.tree, d.fabric, d.emb), o));
  expect_golden("slurm_reserve.sh", generate_slurm_reservations(d.tenants, o));
  expect_golden("slurm_release.sh", generate_slurm_release({d.tenants[1]}, o));
}

TEST(ExportGolden, OpenStack) {
  Demo d;
  OpenStackOptions o;
  o.projects["4"] = "8c1f0a4e6b2d4f39a1c3e5d7f9b0a2c4";
  expect_golden("openstack_add.sh", generate_openstack_add(d.tenants, o));
  expect_golden("openstack_remove.sh", generate_openstack_remove({d.tenants[1]}, o));
}

}  // namespace
}  // namespace laas::exports
