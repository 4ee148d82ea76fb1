#include <gtest/gtest.h>

#include <string>

#include "export/names.h"
#include "export/openstack.h"
#include "export/partitions.h"
#include "export/records.h"
#include "export/routing_chains.h"
#include "export/slurm.h"

namespace laas::exports {
namespace {

TenantRecord tenant(const std::string& name, const std::vector<std::string>& hosts) {
  TenantRecord t;
  t.name = name;
  Guid g = 0x100001;
  for (const auto& h : hosts) t.hosts.push_back(records::host_endpoint(h, g += 2, 1));
  t.links.push_back({{"SW_L1_0", 0x200000, 1}, {"SW_L2_0", 0x200008, 1}});
  return t;
}

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const ExportError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(ExportNames, Hostlists) {
  EXPECT_EQ(compress_hostlist({"comp-10", "comp-2", "comp-1", "comp-3"}), "comp-[1-3,10]");
  EXPECT_EQ(compress_hostlist({"node009", "node010", "node011"}), "node[009-011]");
  EXPECT_EQ(compress_hostlist({"login", "comp-1"}), "comp-1,login");
  EXPECT_EQ(compress_hostlist({"a1", "a1", "b7"}), "a1,b7");
  EXPECT_EQ(compress_hostlist({}), "");
}

TEST(ExportNames, OneTenantNameRuleForEveryExporter) {
  auto err = [](const std::string& n) { return error_of([&] { check_tenant_name(n); }); };
  EXPECT_NE(err(std::string(30, 'a')).find("30 characters long; at most 26"), std::string::npos);
  EXPECT_NE(err(".hidden").find("starts with '.'"), std::string::npos);
  EXPECT_NE(err("-rf").find("starts with '-'"), std::string::npos);
  EXPECT_NE(err("a b").find("contains a space"), std::string::npos);
  EXPECT_NE(err("").find("empty"), std::string::npos);
  // What the rule accepts, every exporter writes.
  RoutingChainsOptions by_name;
  by_name.host_match = RoutingChainsOptions::HostMatch::kName;
  for (const std::string& n : {std::string(26, 'z'), std::string("_x.y-1"), std::string("9")}) {
    EXPECT_EQ(err(n), "<no error>") << n;
    const auto t = tenant(n, {"comp-1"});
    EXPECT_NO_THROW(generate_partitions({t}, {})) << n;
    EXPECT_NO_THROW(generate_slurm_reservations({t}, {})) << n;
    EXPECT_NO_THROW(generate_openstack_add({t}, {})) << n;
    EXPECT_NO_THROW(generate_routing_chains({t}, nullptr, by_name)) << n;
  }
}

TEST(ExportNames, HostOfDescription) {
  EXPECT_EQ(host_of_description("comp-1 mlx5_0"), "comp-1");
  EXPECT_EQ(host_of_description("comp-1"), "comp-1");
  EXPECT_EQ(host_of_description("  n01\tHCA-1"), "n01");
}

TEST(ExportNames, ShellQuoting) {
  EXPECT_EQ(shell_quote("laas-4"), "laas-4");
  EXPECT_EQ(shell_quote("Nodes=comp-[1-3]"), "'Nodes=comp-[1-3]'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(ExportSlurm, RefusesNamesThatBreakTheFormat) {
  SlurmOptions o;
  EXPECT_NE(error_of([&] { generate_slurm_reservations({tenant("a b", {"comp-1"})}, o); })
                .find("Slurm reservation: tenant 'a b': reservation name 'laas-a b' contains a "
                      "space"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              generate_slurm_reservations({tenant("t", {"comp[1]"})}, o);
            }).find("tenant 't' host 'comp[1]'"),
            std::string::npos);
  o.node_names["comp-1"] = "node,1";
  EXPECT_NE(error_of([&] {
              generate_slurm_reservations({tenant("t", {"comp-1"})}, o);
            }).find("mapped node name 'node,1' contains ','"),
            std::string::npos);
  o = {};
  o.users.clear();
  EXPECT_NE(error_of([&] {
              generate_slurm_reservations({tenant("t", {"comp-1"})}, o);
            }).find("users or accounts"),
            std::string::npos);
  // Two host ports with the same host name (a dual-port HCA under rdma-ndd's "%h %d").
  TreeRecord tree{
      {{"MF0;sw01:MQM8700/U1", 0x1, 1, {{"comp-1 mlx5_0", 0x2, 5}, {"comp-1 mlx5_1", 0x3, 6}}}}};
  EXPECT_NE(error_of([&] {
              generate_slurm_topology(tree, {});
            }).find("node name 'comp-1' is given to two host ports"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              generate_slurm_reservations({tenant(std::string(70, 'x'), {"comp-1"})}, {});
            }).find("at most 64"),
            std::string::npos);
}

TEST(ExportSlurm, TenantsOwnAccountsAndUsers) {
  SlurmOptions o;
  auto t = tenant("t", {"c1 mlx5_0", "c2 mlx5_0"});
  t.slurm_accounts = {"bank", "physics"};
  auto u = tenant("u", {"c3"});
  u.slurm_users = {"alice"};
  const auto s = generate_slurm_reservations({t, u, tenant("v", {"c4"})}, o);
  EXPECT_NE(s.find("\nreserve laas-t 'c[1-2]' Accounts=bank,physics\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\nreserve laas-u c3 Users=alice\n"), std::string::npos) << s;
  // A tenant created without accounts or users: the options' default, root only.
  EXPECT_NE(s.find("\nreserve laas-v c4 Users=root\n"), std::string::npos) << s;
  EXPECT_NE(s.find("Flags=IGNORE_JOBS \"$@\""), std::string::npos) << s;
  EXPECT_EQ(s.find("MAGNETIC"), std::string::npos);
  EXPECT_EQ(s.find("keep="), std::string::npos) << "no pruning unless asked";
  o.magnetic = true;
  o.prune = true;
  const auto m = generate_slurm_reservations({t}, o);
  EXPECT_NE(m.find("Flags=IGNORE_JOBS,MAGNETIC"), std::string::npos) << m;
  EXPECT_NE(m.find("keep=' laas-t '"), std::string::npos) << m;
  EXPECT_EQ(m.find("laas_partition"), std::string::npos) << "no partitions unless asked";
  o.partitions = true;
  const auto p = generate_slurm_reservations({t}, o);
  EXPECT_NE(p.find("\nlaas_partition laas-t 'c[1-2]' AllowAccounts=bank,physics\n"),
            std::string::npos)
      << p;
  EXPECT_NE(p.find("scontrol delete \"PartitionName=$p\""), std::string::npos) << p;
  EXPECT_NE(generate_slurm_release({t}, o).find("scontrol delete PartitionName=laas-t"),
            std::string::npos);
  t.slurm_accounts = {"bad account"};
  EXPECT_NE(error_of([&] {
              generate_slurm_reservations({t}, {});
            }).find("tenant 't': Slurm account contains a space"),
            std::string::npos);
}

TEST(ExportSlurm, ReleaseUsesTheDeleteFormAndIsIdempotent) {
  const auto s = generate_slurm_release({tenant("t", {"c1"})}, {});
  EXPECT_NE(s.find("if reservation_exists laas-t; then scontrol delete ReservationName=laas-t; fi"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("delete reservation"), std::string::npos) << s;
}

TEST(ExportSlurm, TopologyNamesSwitchesByGuidAndHostsByFirstWord) {
  TreeRecord tree{{{"MF0;sw01:MQM8700/U1",
                    0x0002c90300a1b2c3,
                    1,
                    {{"comp-1 mlx5_0", 0x2, 5}, {"comp-2 HCA-1", 0x4, 6}}},
                   {"MF0;spine:MQM8700/U1",
                    0x0002c90300ffff01,
                    2,
                    {{"MF0;sw01:MQM8700/U1", 0x0002c90300a1b2c3, 1}}}}};
  const auto s = generate_slurm_topology(tree, {});
  EXPECT_NE(s.find("SwitchName=ibsw-0002c90300a1b2c3 Nodes=comp-[1-2]\n"), std::string::npos) << s;
  EXPECT_NE(s.find("SwitchName=ibsw-0002c90300ffff01 Switches=ibsw-0002c90300a1b2c3\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("# ibsw-0002c90300a1b2c3: MF0;sw01:MQM8700/U1\n"), std::string::npos) << s;
}

TEST(ExportOpenStack, RefusesNamesThatBreakTheFormat) {
  EXPECT_NE(error_of([] {
              generate_openstack_add({tenant("t", {"comp;1 mlx5_0"})}, {});
            }).find("OpenStack: tenant 't' host 'comp;1 mlx5_0': host name contains ';'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              generate_openstack_add({tenant("t'x", {"comp-1"})}, {});
            }).find("tenant 't'x'"),
            std::string::npos);
  OpenStackOptions o;
  o.projects["t"] = "$(reboot)";
  EXPECT_NE(error_of([&] {
              generate_openstack_add({tenant("t", {"comp-1"})}, o);
            }).find("project ID '$(reboot)'"),
            std::string::npos);
  o = {};
  o.host_names["comp-1"] = "nova-compute-1.example.org";
  const auto s = generate_openstack_remove({tenant("t", {"comp-1"})}, o);
  EXPECT_NE(s.find("\nlaas_aggregate_delete laas-t\n"), std::string::npos) << s;
  auto t = tenant("t", {"comp-1 mlx5_0", "comp-2", "comp-1 mlx5_1"});
  const auto a = generate_openstack_add({t}, o);
  // No project ID given: looked up by the tenant's name when the script runs.
  EXPECT_NE(a.find("project=$(openstack project show -f value -c id t)\n"
                   "laas_aggregate laas-t \"$project\" nova-compute-1.example.org comp-2\n"),
            std::string::npos)
      << a;
  EXPECT_NE(a.find("limit_tenants_to_placement_aggregate = True"), std::string::npos);
  t.openstack_project = "8c1f0a4e6b2d4f39a1c3e5d7f9b0a2c4";
  EXPECT_NE(
      generate_openstack_add({t}, o).find("laas_aggregate laas-t 8c1f0a4e6b2d4f39a1c3e5d7f9b0a2c4 "
                                          "nova-compute-1.example.org comp-2\n"),
      std::string::npos);
}

TEST(ExportRoutingChains, RefusesWhatThePolicyParserWouldReject) {
  EXPECT_NE(error_of([] {
              generate_routing_chains({tenant("a:b", {"comp-1"})}, nullptr, {});
            }).find("routing chains: tenant 'a:b'"),
            std::string::npos);
  RoutingChainsOptions o;
  o.tenant_engine = "laas";
  EXPECT_NE(error_of([&] {
              generate_routing_chains({tenant("a", {"comp-1"})}, nullptr, o);
            }).find("minhop, ftree, updn"),
            std::string::npos);
  o = {};
  o.host_match = RoutingChainsOptions::HostMatch::kName;
  EXPECT_NE(error_of([&] {
              generate_routing_chains({tenant("a", {"comp;1"})}, nullptr, o);
            }).find("host 'comp;1'"),
            std::string::npos);
  TreeRecord tree{{{"SW_L1_0", 0x200000, 1, {{"comp-9", 0x2, 5}}}}};
  EXPECT_NE(error_of([&] {
              generate_routing_chains({tenant("a", {"comp-1"})}, &tree, {});
            }).find("host 'comp-1': is not below any leaf"),
            std::string::npos);
}

TEST(ExportRecords, ParsesTenantShowJson) {
  const char* text = R"({"name": "bank", "requested": 2, "state": "routed", "pkey": "0x0123",
    "hosts": [{"name": "comp-1", "guid": "0x0000000000100001", "lid": 9}],
    "links": [{"switch": {"name": "SW_L1_0", "guid": "0x0000000000200000", "port": 1},
               "peer": {"name": "SW_L2_0", "guid": "0x0000000000200008", "port": 1}}]})";
  const auto t = tenants_from_json_text(text);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].name, "bank");
  EXPECT_EQ(t[0].pkey, 0x123);
  EXPECT_EQ(t[0].hosts[0].guid, 0x100001u);
  EXPECT_EQ(t[0].hosts[0].lid, 9);
  EXPECT_EQ(t[0].links[0].upper.name, "SW_L2_0");
  EXPECT_EQ(tenants_from_json_text(std::string("[") + text + "," + text + "]").size(), 2u);
  EXPECT_EQ(guid_hex(0x100001), "0x0000000000100001");
}

TEST(ExportRecords, JsonErrorsNameTenantAndField) {
  EXPECT_NE(
      error_of([] {
        tenants_from_json_text(
            R"([{"name": "bank", "hosts": [{"name": "comp-1", "guid": "10000z", "lid": 1}]}])");
      }).find("tenant 'bank' host 'comp-1' field 'guid'"),
      std::string::npos);
  EXPECT_NE(error_of([] {
              tenants_from_json_text(R"({"name": "bank"})");
            }).find("tenant 'bank': missing field 'hosts'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              tenants_from_json_text(R"({"name": "b", "pkey": 32767, "hosts": []})");
            }).find("field 'pkey'"),
            std::string::npos);
  EXPECT_NE(error_of([] { tenants_from_json_text("{nope"); }).find("tenant JSON: document"),
            std::string::npos);
}

}  // namespace
}  // namespace laas::exports
