#include <gtest/gtest.h>

#include <string>

#include "export/names.h"
#include "export/openstack.h"
#include "export/records.h"
#include "export/routing_chains.h"
#include "export/slurm.h"

namespace laas::exports {
namespace {

TenantRecord tenant(const std::string& name, const std::vector<std::string>& hosts) {
  TenantRecord t{name, std::nullopt, {}, {}};
  Guid g = 0x100001;
  for (const auto& h : hosts) t.hosts.push_back({h, g += 2, 1});
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
  TreeRecord tree{{{"leaf one", 0x1, 1, {{"comp-1", 0x2, 5}}}}};
  EXPECT_NE(error_of([&] { generate_slurm_topology(tree, {}); }).find("switch 'leaf one'"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              generate_slurm_reservations({tenant(std::string(70, 'x'), {"comp-1"})}, {});
            }).find("at most 64"),
            std::string::npos);
}

TEST(ExportSlurm, AccountsAndNoFlags) {
  SlurmOptions o;
  o.users.clear();
  o.accounts = {"bank", "physics"};
  o.flags.clear();
  const auto s = generate_slurm_reservations({tenant("t", {"c1", "c2"})}, o);
  EXPECT_NE(s.find("ReservationName=laas-t 'Nodes=c[1-2]' StartTime=now Duration=infinite "
                   "Accounts=bank,physics\n"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("Flags="), std::string::npos);
}

TEST(ExportOpenStack, RefusesNamesThatBreakTheFormat) {
  EXPECT_NE(error_of([] {
              generate_openstack_add({tenant("t", {"comp 1"})}, {});
            }).find("OpenStack: tenant 't' host 'comp 1': host name contains a space"),
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
  EXPECT_NE(s.find("openstack aggregate remove host laas-t nova-compute-1.example.org\n"
                   "openstack aggregate delete laas-t\n"),
            std::string::npos)
      << s;
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
              generate_routing_chains({tenant("a", {"comp 1"})}, nullptr, o);
            }).find("host 'comp 1'"),
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
            R"([{"name": "bank", "hosts": [{"name": "comp-1", "guid": "100001", "lid": 1}]}])");
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
